//! Colour values of theme files and how they degrade on terminals with fewer colours.
//!
//! A theme value is `#rgb` or `#rrggbb`, `oklch(L C H)`, `okhsl(H S L)` (pi 1.6; turned
//! into sRGB by [`super::oklab`]), a 0–255 palette index, or `""` (the terminal's
//! default).
//! [`ColorMode`] says what the terminal can show; [`ColorValue::to_color`] maps a value
//! to the nearest colour the terminal has (24-bit → 256-colour cube/grey ramp → the 16
//! ANSI colours). Detection looks only at environment variables; it never queries the
//! terminal.

use ratatui::style::Color;

/// What the terminal can display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColorMode {
    /// 24-bit colour.
    TrueColor,
    /// The xterm 256-colour palette.
    Ansi256,
    /// The 16 ANSI colours (Linux console, very old terminals).
    Ansi16,
}

impl ColorMode {
    /// Guesses the colour support from the environment, like pi: `COLORTERM=truecolor`
    /// or `24bit` and Windows Terminal mean 24-bit; Apple Terminal and GNU screen get
    /// 256 colours; the Linux console and `TERM=dumb` get 16; anything else is assumed
    /// to be a modern 24-bit terminal.
    pub fn detect(env: impl Fn(&str) -> Option<String>) -> ColorMode {
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorMode::TrueColor;
        }
        if env("WT_SESSION").is_some() {
            return ColorMode::TrueColor;
        }
        let term = env("TERM").unwrap_or_default();
        if term == "linux" || term == "dumb" {
            return ColorMode::Ansi16;
        }
        if term.is_empty() || env("TERM_PROGRAM").as_deref() == Some("Apple_Terminal") {
            return ColorMode::Ansi256;
        }
        if term == "screen" || term.starts_with("screen-") || term.starts_with("screen.") {
            return ColorMode::Ansi256;
        }
        ColorMode::TrueColor
    }

    /// [`ColorMode::detect`] on the real process environment.
    pub fn from_env() -> ColorMode {
        ColorMode::detect(|k| std::env::var(k).ok())
    }
}

/// A resolved theme colour (after variable references are followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColorValue {
    /// `""`: whatever the terminal uses by default.
    Default,
    /// A palette index 0–255.
    Index(u8),
    /// `#rrggbb`.
    Rgb(u8, u8, u8),
}

impl ColorValue {
    /// Parses `#rrggbb` or `#rgb` (case-insensitive). Other strings are not colours.
    pub fn parse_hex(s: &str) -> Option<ColorValue> {
        let hex = s.strip_prefix('#')?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let full: String = match hex.len() {
            6 => hex.to_string(),
            3 => hex.chars().flat_map(|c| [c, c]).collect(),
            _ => return None,
        };
        let channel = |i: usize| u8::from_str_radix(&full[i..i + 2], 16).ok();
        Some(ColorValue::Rgb(channel(0)?, channel(2)?, channel(4)?))
    }

    /// Parses a colour string of a theme file: `#rgb`, `#rrggbb`, `oklch(L C H)` (L as
    /// 0–1 or a percentage, H in degrees, optionally `deg`) or `okhsl(H S L)` (S and L as
    /// 0–1 or percentages). `Err` says what is wrong with a value that looks like one of
    /// them; `Ok(None)` is any other string (a variable name).
    pub fn parse_color(s: &str) -> Result<Option<ColorValue>, String> {
        if s.starts_with('#') {
            return ColorValue::parse_hex(s)
                .map(Some)
                .ok_or_else(|| format!("\"{s}\" is not a #rgb or #rrggbb colour"));
        }
        let lower = s.to_ascii_lowercase();
        let function = |name: &str| {
            lower
                .strip_prefix(name)
                .and_then(|rest| rest.trim_start().strip_prefix('('))
                .and_then(|rest| rest.trim_end().strip_suffix(')'))
                .map(|inner| inner.split_whitespace().collect::<Vec<_>>())
        };
        if let Some(parts) = function("oklch") {
            let bad = || format!("\"{s}\" is not an oklch(L C H) colour");
            let [l, c, h] = parts.as_slice() else {
                return Err(bad());
            };
            let l = number_or_percent(l).ok_or_else(bad)?;
            let c = number(c).ok_or_else(bad)?;
            let h = number(h.strip_suffix("deg").unwrap_or(h)).ok_or_else(bad)?;
            if !(0.0..=1.0).contains(&l) || c < 0.0 {
                return Err(format!(
                    "\"{s}\": lightness must be 0-1 (or 0%-100%) and chroma 0 or more"
                ));
            }
            let (r, g, b) = super::oklab::oklch_to_rgb(l, c, h.rem_euclid(360.0));
            return Ok(Some(ColorValue::Rgb(r, g, b)));
        }
        if let Some(parts) = function("okhsl") {
            let bad = || format!("\"{s}\" is not an okhsl(H S L) colour");
            let [h, sat, l] = parts.as_slice() else {
                return Err(bad());
            };
            let h = number(h.strip_suffix("deg").unwrap_or(h)).ok_or_else(bad)?;
            let sat = number_or_percent(sat).ok_or_else(bad)?;
            let l = number_or_percent(l).ok_or_else(bad)?;
            if !(0.0..=1.0).contains(&sat) || !(0.0..=1.0).contains(&l) {
                return Err(format!(
                    "\"{s}\": saturation and lightness must be 0-1 (or 0%-100%)"
                ));
            }
            let (r, g, b) = super::oklab::okhsl_to_rgb(h, sat, l);
            return Ok(Some(ColorValue::Rgb(r, g, b)));
        }
        Ok(None)
    }

    /// The terminal colour for this value in `mode`; `None` means "leave the terminal
    /// default" (so an outer style shows through).
    pub fn to_color(self, mode: ColorMode) -> Option<Color> {
        match (self, mode) {
            (ColorValue::Default, _) => None,
            (ColorValue::Rgb(r, g, b), ColorMode::TrueColor) => Some(Color::Rgb(r, g, b)),
            (ColorValue::Rgb(r, g, b), ColorMode::Ansi256) => {
                Some(Color::Indexed(rgb_to_256(r, g, b)))
            }
            (ColorValue::Rgb(r, g, b), ColorMode::Ansi16) => Some(ansi16(nearest_16(r, g, b))),
            (ColorValue::Index(i), ColorMode::TrueColor | ColorMode::Ansi256) => {
                Some(Color::Indexed(i))
            }
            (ColorValue::Index(i), ColorMode::Ansi16) if i < 16 => Some(ansi16(i)),
            (ColorValue::Index(i), ColorMode::Ansi16) => {
                let (r, g, b) = index_to_rgb(i);
                Some(ansi16(nearest_16(r, g, b)))
            }
        }
    }

    /// `#rrggbb` for HTML export (palette indices are converted, `""` has none).
    pub fn to_hex(self) -> Option<String> {
        let (r, g, b) = match self {
            ColorValue::Default => return None,
            ColorValue::Rgb(r, g, b) => (r, g, b),
            ColorValue::Index(i) => index_to_rgb(i),
        };
        Some(format!("#{r:02x}{g:02x}{b:02x}"))
    }
}

/// A finite number as CSS writes it (`0.5`, `.5`, `1e-3`, `+2`).
fn number(text: &str) -> Option<f64> {
    let valid = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E'));
    valid
        .then(|| text.parse::<f64>().ok())
        .flatten()
        .filter(|n| n.is_finite())
}

/// A number, or a percentage as a fraction (`55%` is 0.55).
fn number_or_percent(text: &str) -> Option<f64> {
    match text.strip_suffix('%') {
        Some(percent) => number(percent).map(|n| n / 100.0),
        None => number(text),
    }
}

/// Channel values of the 6×6×6 cube (indices 16–231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// Typical xterm values of the 16 base colours.
const BASE16: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// Perceptually weighted squared distance (the eye is most sensitive to green).
fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let d = |x: u8, y: u8| f64::from(x) - f64::from(y);
    let (dr, dg, db) = (d(a.0, b.0), d(a.1, b.1), d(a.2, b.2));
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

fn nearest_cube_level(v: u8) -> usize {
    let mut best = 0;
    for (i, c) in CUBE.iter().enumerate() {
        if v.abs_diff(*c) < v.abs_diff(CUBE[best]) {
            best = i;
        }
    }
    best
}

/// Nearest xterm-256 index: the colour cube, or the grey ramp for near-neutral colours
/// (a tinted colour keeps its tint even when a grey would be slightly closer).
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let (ri, gi, bi) = (
        nearest_cube_level(r),
        nearest_cube_level(g),
        nearest_cube_level(b),
    );
    let cube_rgb = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let cube_dist = distance((r, g, b), cube_rgb);

    let luma = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round();
    let gray_step = ((luma - 8.0) / 10.0).round().clamp(0.0, 23.0) as u8;
    let gray_value = 8 + gray_step * 10;
    let gray_dist = distance((r, g, b), (gray_value, gray_value, gray_value));

    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10 && gray_dist < cube_dist {
        232 + gray_step
    } else {
        // cube_index is at most 16 + 36*5 + 6*5 + 5 = 231.
        u8::try_from(cube_index).unwrap_or(231)
    }
}

/// RGB of an xterm-256 palette entry.
pub fn index_to_rgb(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => BASE16[usize::from(i)],
        16..=231 => {
            let c = usize::from(i - 16);
            (CUBE[c / 36], CUBE[(c % 36) / 6], CUBE[c % 6])
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

fn nearest_16(r: u8, g: u8, b: u8) -> u8 {
    let mut best = 0u8;
    let mut best_dist = f64::MAX;
    for (i, c) in BASE16.iter().enumerate() {
        let d = distance((r, g, b), *c);
        if d < best_dist {
            best_dist = d;
            best = u8::try_from(i).unwrap_or(0);
        }
    }
    best
}

fn ansi16(i: u8) -> Color {
    match i {
        0 => Color::Black,
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        7 => Color::Gray,
        8 => Color::DarkGray,
        9 => Color::LightRed,
        10 => Color::LightGreen,
        11 => Color::LightYellow,
        12 => Color::LightBlue,
        13 => Color::LightMagenta,
        14 => Color::LightCyan,
        _ => Color::White,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn colour_mode_follows_colorterm_and_term() {
        let cases = [
            (
                vec![("COLORTERM", "truecolor"), ("TERM", "xterm")],
                ColorMode::TrueColor,
            ),
            (vec![("COLORTERM", "24bit")], ColorMode::TrueColor),
            (vec![("TERM", "xterm-256color")], ColorMode::TrueColor),
            (vec![("TERM", "screen-256color")], ColorMode::Ansi256),
            (
                vec![
                    ("TERM", "xterm-256color"),
                    ("TERM_PROGRAM", "Apple_Terminal"),
                ],
                ColorMode::Ansi256,
            ),
            (vec![], ColorMode::Ansi256),
            (vec![("TERM", "linux")], ColorMode::Ansi16),
            (vec![("TERM", "dumb")], ColorMode::Ansi16),
            (
                vec![("TERM", "linux"), ("COLORTERM", "truecolor")],
                ColorMode::TrueColor,
            ),
        ];
        for (vars, want) in cases {
            assert_eq!(ColorMode::detect(env(&vars)), want, "{vars:?}");
        }
    }

    #[test]
    fn rgb_degrades_to_nearest_palette_entries() {
        let c = |hex: &str, mode| ColorValue::parse_hex(hex).and_then(|v| v.to_color(mode));
        assert_eq!(c("#ff0000", ColorMode::Ansi256), Some(Color::Indexed(196)));
        assert_eq!(c("#808080", ColorMode::Ansi256), Some(Color::Indexed(244)));
        assert_eq!(c("#5f87af", ColorMode::Ansi256), Some(Color::Indexed(67)));
        assert_eq!(c("#ff0000", ColorMode::Ansi16), Some(Color::LightRed));
        assert_eq!(c("#1a1a1a", ColorMode::Ansi16), Some(Color::Black));
        assert_eq!(
            c("#12ab34", ColorMode::TrueColor),
            Some(Color::Rgb(0x12, 0xab, 0x34))
        );
        assert_eq!(
            ColorValue::Index(196).to_color(ColorMode::Ansi16),
            Some(Color::LightRed)
        );
        assert_eq!(
            ColorValue::Index(3).to_color(ColorMode::Ansi16),
            Some(Color::Yellow)
        );
        assert_eq!(ColorValue::Default.to_color(ColorMode::TrueColor), None);
    }

    #[test]
    fn hex_parsing_rejects_short_and_non_hex_values() {
        assert_eq!(
            ColorValue::parse_hex("#AbCdEf"),
            Some(ColorValue::Rgb(0xab, 0xcd, 0xef))
        );
        assert_eq!(
            ColorValue::parse_hex("#0aF"),
            Some(ColorValue::Rgb(0x00, 0xaa, 0xff))
        );
        assert_eq!(ColorValue::parse_hex("#abcd"), None);
        assert_eq!(ColorValue::parse_hex("#gggggg"), None);
        assert_eq!(ColorValue::parse_hex("abcdef"), None);
    }

    /// Values pi 1.6 itself computes for these strings (its pi-tui `parseColor` and
    /// `colorToHex`), among them colours of its built-in dark theme.
    #[test]
    fn oklch_and_okhsl_give_pis_colours() {
        let cases = [
            ("okhsl(234 3% 89%)", "#dee0e1"),
            ("okhsl(295 50% 67%)", "#a798d7"),
            ("okhsl(20 72% 67%)", "#ea7f81"),
            ("okhsl(83 88% 67%)", "#cd9a22"),
            ("okhsl(233 41% 24%)", "#213b49"),
            ("okhsl(159 59% 67%)", "#68b78d"),
            ("okhsl(0 100% 50%)", "#d70071"),
            ("okhsl(140 95% 40%)", "#2e6f1e"),
            ("okhsl(250 60% 55%)", "#4e88c2"),
            ("okhsl(53 51% 24%)", "#4e2f1b"),
            ("okhsl(300 100% 95%)", "#f3eeff"),
            ("okhsl(10 90% 5%)", "#180105"),
            ("oklch(62% 0.1 200)", "#1c989e"),
            ("oklch(0.7 0.4 30)", "#ff6551"),
            ("oklch(50% 0.05 300deg)", "#675d7c"),
            ("oklch(0.9 0.25 120)", "#cdf100"),
            ("#0af", "#00aaff"),
        ];
        for (text, hex) in cases {
            let value = ColorValue::parse_color(text).unwrap().unwrap();
            assert_eq!(value.to_hex().as_deref(), Some(hex), "{text}");
        }
        assert_eq!(ColorValue::parse_color("primary"), Ok(None));
        assert!(ColorValue::parse_color("oklch(1 2)").is_err());
        assert!(ColorValue::parse_color("okhsl(10 120% 50%)").is_err());
        assert!(ColorValue::parse_color("#12345").is_err());
    }

    #[test]
    fn palette_indices_convert_to_hex_for_export() {
        assert_eq!(ColorValue::Index(16).to_hex().as_deref(), Some("#000000"));
        assert_eq!(ColorValue::Index(231).to_hex().as_deref(), Some("#ffffff"));
        assert_eq!(ColorValue::Index(244).to_hex().as_deref(), Some("#808080"));
    }
}
