//! Styled lines to terminal bytes: ratatui `Line`s become SGR escape sequences, clamped
//! to the terminal width so that no line can ever wrap (a wrapped line would shift every
//! row below it and break the renderer's idea of where things are).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
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
        if super::images::is_marker(span) {
            // An image: written as it is when the row reaches the terminal, no columns.
            out.push_str(&span.content);
            continue;
        }
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
    line.spans
        .iter()
        .filter(|s| !super::images::is_marker(s))
        .map(|s| s.content.width())
        .sum()
}

/// One line of a component's output: SGR colour and style codes become styles, other
/// escape sequences and control characters are dropped.
pub fn ansi_line(text: &str) -> Line<'static> {
    // pi-tui's `Image` (an extension's component): its last row is the image.
    if (text.contains("\x1b_G") || text.contains("\x1b]1337;File="))
        && let Some(line) = super::images::host_image_line(text)
    {
        return line;
    }
    let mut spans = Vec::new();
    let mut style = Style::default();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            if !c.is_control() {
                current.push(c);
            }
            continue;
        }
        if matches!(chars.peek(), Some(']' | '_' | 'P' | '^')) {
            // OSC, APC (pi-tui's cursor marker), DCS, PM: skipped up to BEL or ST.
            chars.next();
            while let Some(p) = chars.next() {
                if p == '\u{7}' {
                    break;
                }
                if p == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
            continue;
        }
        if chars.peek() != Some(&'[') {
            // Other sequences: leave the rest of the line's text intact.
            let rest: String = std::iter::once(c).chain(chars.by_ref()).collect();
            current.push_str(&crate::modes::interactive::text::sanitize(&rest));
            break;
        }
        chars.next();
        let mut params = String::new();
        let mut last = None;
        for p in chars.by_ref() {
            if ('\u{40}'..='\u{7e}').contains(&p) {
                last = Some(p);
                break;
            }
            params.push(p);
        }
        if last != Some('m') {
            continue;
        }
        if !current.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut current), style));
        }
        style = apply_sgr(style, &params);
    }
    if !current.is_empty() {
        spans.push(Span::styled(current, style));
    }
    Line::from(spans)
}

fn apply_sgr(mut style: Style, params: &str) -> Style {
    let codes: Vec<u16> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        match code {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style = style.fg(Color::Indexed((code - 30) as u8)),
            90..=97 => style = style.fg(Color::Indexed((code - 90 + 8) as u8)),
            40..=47 => style = style.bg(Color::Indexed((code - 40) as u8)),
            100..=107 => style = style.bg(Color::Indexed((code - 100 + 8) as u8)),
            39 => style.fg = None,
            49 => style.bg = None,
            38 | 48 => {
                let color = match codes.get(i + 1) {
                    Some(5) => {
                        let n = codes.get(i + 2).copied().unwrap_or(0);
                        i += 2;
                        Color::Indexed(n.min(255) as u8)
                    }
                    Some(2) => {
                        let get = |k: usize| codes.get(i + k).copied().unwrap_or(0).min(255) as u8;
                        let color = Color::Rgb(get(2), get(3), get(4));
                        i += 4;
                        color
                    }
                    _ => {
                        i += 2;
                        continue;
                    }
                };
                style = if code == 38 {
                    style.fg(color)
                } else {
                    style.bg(color)
                };
            }
            _ => {}
        }
        i += 1;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sgr_codes_become_styles() {
        let line = ansi_line("a\x1b[1;38;2;255;0;0mred\x1b[0m b\x1b[32mg\x1b[39m");
        let spans: Vec<(String, Style)> = line
            .spans
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("a".to_string(), Style::default()),
                (
                    "red".to_string(),
                    Style::default()
                        .add_modifier(Modifier::BOLD)
                        .fg(Color::Rgb(255, 0, 0))
                ),
                (" b".to_string(), Style::default()),
                ("g".to_string(), Style::default().fg(Color::Indexed(2))),
            ]
        );
    }

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
