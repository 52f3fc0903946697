//! Markdown tables laid out to fit a width: columns shrink towards their longest word,
//! cells wrap, and the box never grows past the width. Too narrow for even one column
//! per cell, the table falls back to `a | b | c` text lines.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use unicode_segmentation::UnicodeSegmentation;

use crate::modes::interactive::text::{
    WrapOptions, grapheme_width, line_width, str_width, wrap_spans,
};

/// Inline content of one cell.
pub type Cell = Vec<Span<'static>>;

/// Words longer than this may be broken when columns compete for space.
const MAX_UNBROKEN_WORD: usize = 30;

/// A table collected from markdown events.
#[derive(Debug, Default)]
pub struct Table {
    pub alignments: Vec<Alignment>,
    pub header: Vec<Cell>,
    pub rows: Vec<Vec<Cell>>,
}

fn cell_text(cell: &Cell) -> String {
    cell.iter().map(|s| s.content.as_ref()).collect()
}

/// The widest single character of a cell: no column can be narrower than that.
fn widest_glyph(cell: &Cell) -> usize {
    cell.iter()
        .flat_map(|s| {
            s.content
                .graphemes(true)
                .map(grapheme_width)
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(1)
        .max(1)
}

fn longest_word(cell: &Cell) -> usize {
    cell_text(cell)
        .split_whitespace()
        .map(str_width)
        .max()
        .unwrap_or(0)
        .min(MAX_UNBROKEN_WORD)
}

impl Table {
    fn columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.header.len()))
            .max()
            .unwrap_or(0)
    }

    /// Renders the table in at most `width` columns.
    pub fn render(&self, width: usize, border: Style) -> Vec<Line<'static>> {
        let n = self.columns();
        if n == 0 {
            return Vec::new();
        }
        let overhead = 3 * n + 1;
        let glyphs = self.widest_glyphs();
        if width < overhead + glyphs.iter().sum::<usize>() {
            return self.render_as_text(width);
        }
        let widths = self.column_widths(width - overhead, &glyphs);
        let mut out = Vec::new();
        out.push(border_line('┌', '┬', '┐', &widths, border));
        out.extend(self.render_row(&self.header, &widths, border, true));
        if !self.rows.is_empty() {
            out.push(border_line('├', '┼', '┤', &widths, border));
        }
        for (i, row) in self.rows.iter().enumerate() {
            out.extend(self.render_row(row, &widths, border, false));
            if i + 1 < self.rows.len() {
                out.push(border_line('├', '┼', '┤', &widths, border));
            }
        }
        out.push(border_line('└', '┴', '┘', &widths, border));
        out
    }

    fn widest_glyphs(&self) -> Vec<usize> {
        let mut glyphs = vec![1usize; self.columns()];
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            for (i, cell) in row.iter().enumerate() {
                glyphs[i] = glyphs[i].max(widest_glyph(cell));
            }
        }
        glyphs
    }

    /// Column widths summing to at most `available`, each at least its widest glyph
    /// (the caller checked that those fit).
    fn column_widths(&self, available: usize, glyphs: &[usize]) -> Vec<usize> {
        let n = self.columns();
        let mut natural = vec![0usize; n];
        let mut min_word = glyphs.to_vec();
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            for (i, cell) in row.iter().enumerate() {
                natural[i] = natural[i].max(cell.iter().map(|s| str_width(&s.content)).sum());
                min_word[i] = min_word[i].max(longest_word(cell));
            }
        }
        for w in &mut natural {
            *w = (*w).max(1);
        }
        let mut mins = min_word.clone();
        if mins.iter().sum::<usize>() > available {
            // Not even the longest words fit: start everyone at their widest glyph and
            // share the rest in proportion to how much more each column wanted.
            let spare = available - glyphs.iter().sum::<usize>();
            let weights: Vec<usize> = min_word.iter().zip(glyphs).map(|(w, g)| w - g).collect();
            let total: usize = weights.iter().sum();
            mins = weights
                .iter()
                .zip(glyphs)
                .map(|(w, g)| g + (w * spare).checked_div(total).unwrap_or(0))
                .collect();
            distribute(&mut mins, available, &vec![usize::MAX; n]);
        }
        if natural.iter().sum::<usize>() <= available {
            return natural.iter().zip(&mins).map(|(a, b)| *a.max(b)).collect();
        }
        let min_sum: usize = mins.iter().sum();
        let extra = available.saturating_sub(min_sum);
        let wants: Vec<usize> = natural
            .iter()
            .zip(&mins)
            .map(|(a, b)| a.saturating_sub(*b))
            .collect();
        let total_want: usize = wants.iter().sum();
        let mut widths: Vec<usize> = mins
            .iter()
            .zip(&wants)
            .map(|(m, w)| m + (w * extra).checked_div(total_want).unwrap_or(0))
            .collect();
        distribute(&mut widths, available, &natural);
        widths
    }

    fn render_row(
        &self,
        row: &[Cell],
        widths: &[usize],
        border: Style,
        header: bool,
    ) -> Vec<Line<'static>> {
        let empty = Cell::new();
        let wrapped: Vec<Vec<Line<'static>>> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let cell = row.get(i).unwrap_or(&empty);
                let mut lines = wrap_spans(cell, *w, &WrapOptions::default());
                if header {
                    for line in &mut lines {
                        for span in &mut line.spans {
                            span.style = span.style.add_modifier(Modifier::BOLD);
                        }
                    }
                }
                lines
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        (0..height)
            .map(|line_idx| {
                let mut spans = vec![Span::styled("│ ", border)];
                for (col, w) in widths.iter().enumerate() {
                    if col > 0 {
                        spans.push(Span::styled(" │ ", border));
                    }
                    let line = wrapped[col].get(line_idx).cloned().unwrap_or_default();
                    let pad = w.saturating_sub(line_width(&line));
                    let (before, after) = match self.alignments.get(col) {
                        Some(Alignment::Right) => (pad, 0),
                        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                        _ => (0, pad),
                    };
                    if before > 0 {
                        spans.push(Span::raw(" ".repeat(before)));
                    }
                    spans.extend(line.spans);
                    if after > 0 {
                        spans.push(Span::raw(" ".repeat(after)));
                    }
                }
                spans.push(Span::styled(" │", border));
                Line::from(spans)
            })
            .collect()
    }

    /// The table as plain `a | b` lines, for widths too small for a grid.
    fn render_as_text(&self, width: usize) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::raw(" | "));
                }
                spans.extend(cell.iter().cloned());
            }
            out.extend(wrap_spans(&spans, width, &WrapOptions::default()));
        }
        out
    }
}

/// Hands out leftover columns one at a time to columns still below `caps`.
fn distribute(widths: &mut [usize], available: usize, caps: &[usize]) {
    let mut remaining = available.saturating_sub(widths.iter().sum());
    while remaining > 0 {
        let mut grew = false;
        for (w, cap) in widths.iter_mut().zip(caps) {
            if remaining > 0 && *w < *cap {
                *w += 1;
                remaining -= 1;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
}

fn border_line(
    left: char,
    mid: char,
    right: char,
    widths: &[usize],
    style: Style,
) -> Line<'static> {
    let mut s = String::new();
    s.push(left);
    s.push('─');
    for (i, w) in widths.iter().enumerate() {
        if i > 0 {
            s.push('─');
            s.push(mid);
            s.push('─');
        }
        s.push_str(&"─".repeat(*w));
    }
    s.push('─');
    s.push(right);
    Line::from(Span::styled(s, style))
}
