//! Terminal output to HTML: SGR colour and style codes in bash output become `<span>`s
//! with inline styles; every other escape sequence (cursor movement, OSC titles and
//! hyperlinks, …) is dropped, and the text itself is escaped.
//!
//! Supported: the 16 standard colours (30–37, 90–97 and their backgrounds), the
//! 256-colour palette (`38;5;n`), true colour (`38;2;r;g;b`), bold, dim, italic,
//! underline, inverse and the matching resets. Not a terminal emulator: carriage returns
//! and backspaces are removed rather than replayed.

use std::fmt::Write as _;

use super::escape::push_escaped;

/// The 16 base colours (xterm's defaults, slightly softened for dark and light pages).
const BASE_COLORS: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 49, 49),
    (13, 188, 121),
    (229, 229, 16),
    (36, 114, 200),
    (188, 63, 188),
    (17, 168, 205),
    (229, 229, 229),
    (102, 102, 102),
    (241, 76, 76),
    (35, 209, 139),
    (245, 245, 67),
    (59, 142, 234),
    (214, 112, 214),
    (41, 184, 219),
    (255, 255, 255),
];

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Style {
    fg: Option<(u8, u8, u8)>,
    bg: Option<(u8, u8, u8)>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
}

impl Style {
    fn css(&self) -> String {
        let (fg, bg) = if self.inverse {
            (
                self.bg.or(Some((24, 24, 30))),
                self.fg.or(Some((229, 229, 231))),
            )
        } else {
            (self.fg, self.bg)
        };
        let mut css = String::new();
        if let Some((r, g, b)) = fg {
            let _ = write!(css, "color:#{r:02x}{g:02x}{b:02x};");
        }
        if let Some((r, g, b)) = bg {
            let _ = write!(css, "background-color:#{r:02x}{g:02x}{b:02x};");
        }
        if self.bold {
            css.push_str("font-weight:bold;");
        }
        if self.dim {
            css.push_str("opacity:0.6;");
        }
        if self.italic {
            css.push_str("font-style:italic;");
        }
        if self.underline {
            css.push_str("text-decoration:underline;");
        }
        css
    }
}

/// A colour of the 256-colour palette.
fn palette(index: u16) -> (u8, u8, u8) {
    match index {
        0..=15 => BASE_COLORS[index as usize],
        16..=231 => {
            let i = index - 16;
            let level = |n: u16| if n == 0 { 0 } else { (55 + n * 40) as u8 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let gray = (8 + (index.min(255) - 232) * 10) as u8;
            (gray, gray, gray)
        }
    }
}

/// Reads an extended colour (`5;n` or `2;r;g;b`) starting at `params[i]`; returns the
/// colour and how many parameters it used.
fn extended_color(params: &[u16], i: usize) -> (Option<(u8, u8, u8)>, usize) {
    match params.get(i) {
        Some(5) => (params.get(i + 1).map(|&n| palette(n)), 2),
        Some(2) => {
            let c = |k: usize| params.get(i + k).map(|&v| v.min(255) as u8);
            match (c(1), c(2), c(3)) {
                (Some(r), Some(g), Some(b)) => (Some((r, g, b)), 4),
                _ => (None, 4),
            }
        }
        _ => (None, 1),
    }
}

fn apply_sgr(style: &mut Style, params: &[u16]) {
    if params.is_empty() {
        *style = Style::default();
        return;
    }
    let mut i = 0;
    while i < params.len() {
        match params[i] {
            0 => *style = Style::default(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            4 => style.underline = true,
            7 => style.inverse = true,
            22 => {
                style.bold = false;
                style.dim = false;
            }
            23 => style.italic = false,
            24 => style.underline = false,
            27 => style.inverse = false,
            n @ 30..=37 => style.fg = Some(BASE_COLORS[(n - 30) as usize]),
            n @ 90..=97 => style.fg = Some(BASE_COLORS[(n - 90 + 8) as usize]),
            n @ 40..=47 => style.bg = Some(BASE_COLORS[(n - 40) as usize]),
            n @ 100..=107 => style.bg = Some(BASE_COLORS[(n - 100 + 8) as usize]),
            39 => style.fg = None,
            49 => style.bg = None,
            38 | 48 => {
                let (color, used) = extended_color(params, i + 1);
                if params[i] == 38 {
                    style.fg = color.or(style.fg);
                } else {
                    style.bg = color.or(style.bg);
                }
                i += used;
            }
            _ => {}
        }
        i += 1;
    }
}

/// Converts terminal output to escaped HTML with coloured spans.
pub fn ansi_to_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut style = Style::default();
    let mut open = false;
    let mut segment_start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;

    let flush = |out: &mut String, segment: &str, style: &Style, open: &mut bool| {
        if segment.is_empty() {
            return;
        }
        if !*open && *style != Style::default() {
            out.push_str("<span style=\"");
            out.push_str(&style.css());
            out.push_str("\">");
            *open = true;
        }
        push_escaped(out, segment);
    };

    while i < bytes.len() {
        let b = bytes[i];
        if b == 0x1b {
            flush(&mut out, &text[segment_start..i], &style, &mut open);
            let (consumed, sgr) = parse_escape(&bytes[i..]);
            if let Some(params) = sgr {
                let before = style;
                apply_sgr(&mut style, &params);
                if style != before && open {
                    out.push_str("</span>");
                    open = false;
                }
            }
            i += consumed;
            segment_start = i;
        } else if (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f {
            flush(&mut out, &text[segment_start..i], &style, &mut open);
            i += 1;
            segment_start = i;
        } else {
            i += 1;
        }
    }
    flush(&mut out, &text[segment_start..], &style, &mut open);
    if open {
        out.push_str("</span>");
    }
    out
}

/// Length of the escape sequence at the start of `bytes` (which begins with ESC), and
/// its parameters when it is an SGR (`ESC [ … m`) sequence. Stays on ASCII bytes, so the
/// caller's slicing stays on UTF-8 boundaries.
fn parse_escape(bytes: &[u8]) -> (usize, Option<Vec<u16>>) {
    match bytes.get(1) {
        Some(b'[') => {
            let mut j = 2;
            while j < bytes.len() && (0x30..=0x3f).contains(&bytes[j]) {
                j += 1;
            }
            while j < bytes.len() && (0x20..=0x2f).contains(&bytes[j]) {
                j += 1;
            }
            let Some(&final_byte) = bytes.get(j) else {
                return (bytes.len(), None);
            };
            if !(0x40..=0x7e).contains(&final_byte) {
                // Malformed: drop only the ESC and the bracket.
                return (2, None);
            }
            let params = (final_byte == b'm').then(|| {
                let raw = std::str::from_utf8(&bytes[2..j]).unwrap_or("");
                if raw.is_empty() {
                    Vec::new()
                } else {
                    raw.split([';', ':'])
                        .map(|p| p.parse::<u16>().unwrap_or(0))
                        .collect()
                }
            });
            (j + 1, params)
        }
        Some(b']') => {
            // OSC: ends at BEL or ST (ESC \).
            let mut j = 2;
            while j < bytes.len() {
                if bytes[j] == 0x07 {
                    return (j + 1, None);
                }
                if bytes[j] == 0x1b && bytes.get(j + 1) == Some(&b'\\') {
                    return (j + 2, None);
                }
                j += 1;
            }
            (bytes.len(), None)
        }
        Some(b) if b.is_ascii() => (2, None),
        _ => (1, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_styles_become_spans_and_text_is_escaped() {
        let html = ansi_to_html("\x1b[1;31merror\x1b[0m: <b> & \x1b[38;5;82mok\x1b[39m done");
        insta::assert_snapshot!(html, @r#"<span style="color:#cd3131;font-weight:bold;">error</span>: &lt;b&gt; &amp; <span style="color:#5fff00;">ok</span> done"#);
    }

    #[test]
    fn true_colour_background_and_inverse() {
        let html = ansi_to_html("\x1b[48;2;1;2;3mbg\x1b[7m inv\x1b[m");
        insta::assert_snapshot!(html, @r#"<span style="background-color:#010203;">bg</span><span style="color:#010203;background-color:#e5e5e7;"> inv</span>"#);
    }

    #[test]
    fn other_escape_sequences_and_control_characters_are_dropped() {
        let html = ansi_to_html(
            "a\x1b[2Kb\x1b]0;title\x07c\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\nd\x08e\x1b[",
        );
        assert_eq!(html, "abclink\nde");
    }

    #[test]
    fn unicode_text_next_to_escapes_is_kept_whole() {
        assert_eq!(
            ansi_to_html("ü\x1b[32mé\x1b[0mß"),
            "ü<span style=\"color:#0dbc79;\">é</span>ß"
        );
    }
}
