//! Helpers for the TUI's snapshot tests: draw lines as plain text (checking the width
//! bound on the way) or into a ratatui `TestBackend` buffer.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::Line;

use super::text::{line_text, line_width};
use super::theme::{ColorMode, Theme};

/// The dark theme in 24-bit colour, as most snapshots use.
pub fn theme() -> Theme {
    Theme::dark(ColorMode::TrueColor)
}

/// Lines as text, one per row, trailing spaces trimmed. Panics if a line is wider than
/// `width`: no renderer may ever produce one.
pub fn plain(lines: &[Line<'_>], width: usize) -> String {
    for line in lines {
        let w = line_width(line);
        assert!(
            w <= width,
            "line is {w} columns, wider than {width}: {:?}",
            line_text(line)
        );
    }
    lines
        .iter()
        .map(|l| line_text(l).trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Draws lines into a `TestBackend` of exactly `width` columns and returns the
/// backend's buffer dump (every cell, so width overflows and wide glyphs show).
pub fn buffer(lines: &[Line<'static>], width: u16) -> String {
    let height = u16::try_from(lines.len().max(1)).unwrap_or(u16::MAX);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| {
            let area = frame.area();
            for (i, line) in lines.iter().enumerate() {
                let row = ratatui::layout::Rect::new(area.x, area.y + i as u16, area.width, 1);
                frame.render_widget(line.clone(), row);
            }
        })
        .unwrap();
    let buf = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut row = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let cell = &buf[(x, y)];
            row.push_str(cell.symbol());
            skip = super::text::str_width(cell.symbol()).saturating_sub(1);
        }
        out.push('|');
        out.push_str(&row);
        out.push_str("|\n");
    }
    out
}

/// Spans with their colours, for the few tests that check styling: `text⟨fg bg mods⟩`.
pub fn styled(line: &Line<'_>) -> String {
    line.spans
        .iter()
        .map(|s| {
            let mut attrs = Vec::new();
            if let Some(fg) = s.style.fg {
                attrs.push(format!("fg={fg}"));
            }
            if let Some(bg) = s.style.bg {
                attrs.push(format!("bg={bg}"));
            }
            if !s.style.add_modifier.is_empty() {
                attrs.push(format!("{:?}", s.style.add_modifier));
            }
            if attrs.is_empty() {
                s.content.to_string()
            } else {
                format!("{}⟨{}⟩", s.content, attrs.join(" "))
            }
        })
        .collect()
}
