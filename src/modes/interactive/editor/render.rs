//! Drawing the editor: a top and a bottom rule (showing `↑ N more` / `↓ N more` when the
//! text scrolls), the visible rows with a reverse-video cursor, and the completion
//! popup underneath.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::Editor;
use super::layout::{row_of, visual_lines};
use crate::modes::interactive::text::{pad_line, str_width, truncate_line, truncate_to_width};
use crate::modes::interactive::theme::{Theme, ThemeToken};

/// A rendered editor.
#[derive(Debug, Clone, PartialEq)]
pub struct EditorRender {
    /// Exactly `width` columns each: rule, text rows, rule, popup rows.
    pub lines: Vec<Line<'static>>,
    /// Where the terminal cursor goes, (column, row) within `lines`; `None` while the
    /// completion popup is open (as pi, so IMEs do not pop up over the list).
    pub cursor: Option<(u16, u16)>,
}

fn rule(label: Option<String>, width: usize, style: Style) -> Line<'static> {
    let text = match label {
        Some(label) => {
            let w = str_width(&label);
            if w <= width {
                format!("{label}{}", "─".repeat(width - w))
            } else {
                truncate_to_width(&label, width, "").into_owned()
            }
        }
        None => "─".repeat(width),
    };
    Line::from(Span::styled(text, style))
}

impl Editor {
    /// Lays the editor out for `width` columns (adjusting the scroll position so the
    /// cursor stays visible).
    pub fn render(&mut self, width: usize, theme: &Theme) -> EditorRender {
        let width = width.max(1);
        let padding = self.padding_x.min((width - 1) / 2);
        let content_width = (width - 2 * padding).max(1);
        // Without padding one column is kept free for the cursor at the end of a row.
        let layout_width = content_width
            .saturating_sub(usize::from(padding == 0))
            .max(1);
        self.layout_width = layout_width;

        let valid = |id: u32| self.pastes.contains_key(&id);
        let rows = visual_lines(&self.lines, layout_width, &valid);
        let cursor_row = row_of(&rows, self.cursor_line, self.cursor_col);
        if cursor_row < self.scroll {
            self.scroll = cursor_row;
        } else if cursor_row >= self.scroll + self.max_rows {
            self.scroll = cursor_row + 1 - self.max_rows;
        }
        self.scroll = self.scroll.min(rows.len().saturating_sub(self.max_rows));
        let end = (self.scroll + self.max_rows).min(rows.len());

        let border = self
            .border
            .unwrap_or_else(|| theme.fg(ThemeToken::BorderMuted));
        let text_style = theme.fg(ThemeToken::Text);
        let cursor_style = text_style.add_modifier(Modifier::REVERSED);
        let mut lines = Vec::with_capacity(end - self.scroll + 2);
        let up = (self.scroll > 0).then(|| format!("─── ↑ {} more ", self.scroll));
        lines.push(rule(up, width, border));

        let mut cursor = None;
        let pad = " ".repeat(padding);
        for (i, row) in rows.iter().enumerate().take(end).skip(self.scroll) {
            let text = &self.lines[row.line][row.start..row.end];
            let mut spans = vec![Span::raw(pad.clone())];
            if i == cursor_row {
                let at = self.cursor_col.clamp(row.start, row.end) - row.start;
                let (before, rest) = text.split_at(at);
                let segs = self.segs(rest);
                let cell_end = segs.first().map_or(0, |s| s.end);
                let (under, after) = rest.split_at(cell_end);
                spans.push(Span::styled(before.to_string(), text_style));
                cursor = Some((padding + str_width(before), lines.len()));
                if under.is_empty() {
                    spans.push(Span::styled(" ", cursor_style));
                } else {
                    spans.push(Span::styled(under.to_string(), cursor_style));
                    spans.push(Span::styled(after.to_string(), text_style));
                }
            } else {
                spans.push(Span::styled(text.to_string(), text_style));
            }
            // Only a glyph wider than a 1-column row can overflow; cut rather than spill.
            let line = truncate_line(Line::from(spans), width, Span::raw(""));
            lines.push(pad_line(line, width, Style::default()));
        }
        let below = rows.len() - end;
        let down = (below > 0).then(|| format!("─── ↓ {below} more "));
        lines.push(rule(down, width, border));

        if let Some(popup) = &self.popup {
            for row in popup.list.render(content_width, theme) {
                let mut spans = vec![Span::raw(pad.clone())];
                spans.extend(row.spans);
                lines.push(pad_line(Line::from(spans), width, Style::default()));
            }
            cursor = None;
        }
        let cursor =
            cursor.and_then(|(x, y)| Some((u16::try_from(x).ok()?, u16::try_from(y).ok()?)));
        EditorRender { lines, cursor }
    }
}
