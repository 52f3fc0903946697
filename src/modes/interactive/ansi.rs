//! Styled lines to terminal bytes: ratatui `Line`s become SGR escape sequences, clamped
//! to the terminal width so that no line can ever wrap (a wrapped line would shift every
//! row below it and break the renderer's idea of where things are).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

fn push_color(out: &mut String, color: Color, foreground: bool) {
    let base = if foreground { 30 } else { 40 };
    let code = match color {
        Color::Reset => format!("{}", base + 9),
        Color::Black => format!("{base}"),
        Color::Red => format!("{}", base + 1),
        Color::Green => format!("{}", base + 2),
        Color::Yellow => format!("{}", base + 3),
        Color::Blue => format!("{}", base + 4),
        Color::Magenta => format!("{}", base + 5),
        Color::Cyan => format!("{}", base + 6),
        Color::Gray => format!("{}", base + 7),
        Color::DarkGray => format!("{}", base + 60),
        Color::LightRed => format!("{}", base + 61),
        Color::LightGreen => format!("{}", base + 62),
        Color::LightYellow => format!("{}", base + 63),
        Color::LightBlue => format!("{}", base + 64),
        Color::LightMagenta => format!("{}", base + 65),
        Color::LightCyan => format!("{}", base + 66),
        Color::White => format!("{}", base + 67),
        Color::Indexed(i) => format!("{};5;{i}", base + 8),
        Color::Rgb(r, g, b) => format!("{};2;{r};{g};{b}", base + 8),
    };
    out.push_str("\x1b[");
    out.push_str(&code);
    out.push('m');
}

fn push_style(out: &mut String, style: Style) {
    if let Some(fg) = style.fg {
        push_color(out, fg, true);
    }
    if let Some(bg) = style.bg {
        push_color(out, bg, false);
    }
    let m = style.add_modifier;
    for (flag, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::REVERSED, "7"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if m.contains(flag) {
            out.push_str("\x1b[");
            out.push_str(code);
            out.push('m');
        }
    }
}

/// Strips characters that would move the cursor or change terminal state (C0/C1
/// controls, ESC). Text reaching here should already be sanitised; this is the last line
/// of defence.
fn is_safe(g: &str) -> bool {
    !g.chars().any(|c| c.is_control())
}

/// Encodes one line, clamped to `width` columns, ending with an SGR reset. The line's
/// own style (if any) is applied under each span's, and a line background fills the
/// rest of the row.
pub fn encode_line(line: &Line<'_>, width: u16) -> String {
    let mut out = String::new();
    let mut used = 0usize;
    let width = width as usize;
    for span in &line.spans {
        let style = line.style.patch(span.style);
        out.push_str("\x1b[0m");
        push_style(&mut out, style);
        for g in span.content.graphemes(true) {
            if !is_safe(g) {
                continue;
            }
            let w = g.width();
            if used + w > width {
                out.push_str("\x1b[0m");
                return out;
            }
            used += w;
            out.push_str(g);
        }
    }
    if line.style.bg.is_some() && used < width {
        out.push_str("\x1b[0m");
        push_style(&mut out, line.style);
        out.push_str(&" ".repeat(width - used));
    }
    out.push_str("\x1b[0m");
    out
}

/// Display width of a line (what `encode_line` would use before clamping).
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| s.content.width()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::text::Span;

    fn strip_sgr(s: &str) -> String {
        let re = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
        re.replace_all(s, "").into_owned()
    }

    #[test]
    fn wide_characters_are_clamped_at_the_width() {
        let line = Line::from(vec![Span::raw("ab"), Span::raw("日本語")]);
        let s = strip_sgr(&encode_line(&line, 5));
        assert_eq!(s, "ab日");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let line = Line::from("a\x1b[2Jb\x07c");
        assert_eq!(strip_sgr(&encode_line(&line, 20)), "a[2Jbc");
    }
}
