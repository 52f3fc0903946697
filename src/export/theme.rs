//! Theme colours for the export. A theme is a map from pi's colour tokens (`accent`,
//! `userMessageBg`, `syntaxKeyword`, …) to `#rrggbb` values; the page turns each into a
//! CSS variable (`--accent`), so the stylesheet never names a colour itself.
//!
//! [`ExportTheme::dark`] is built in. Themes loaded from files (the TUI's job) are
//! passed in with [`ExportTheme::from_colors`], which only accepts token names and hex
//! colours, so a theme file cannot inject CSS. Tokens a theme does not set keep the dark
//! default. The page, card and info backgrounds come from the theme's `export` section
//! when set, else they are derived from `userMessageBg`.

use std::collections::BTreeMap;

/// The dark theme's resolved colours (pi's built-in `dark`, with the terminal's default
/// foreground written out).
const DARK: &[(&str, &str)] = &[
    ("accent", "#8abeb7"),
    ("border", "#5f87ff"),
    ("borderAccent", "#00d7ff"),
    ("borderMuted", "#505050"),
    ("success", "#b5bd68"),
    ("error", "#cc6666"),
    ("warning", "#ffff00"),
    ("muted", "#808080"),
    ("dim", "#666666"),
    ("text", "#e5e5e7"),
    ("thinkingText", "#808080"),
    ("selectedBg", "#3a3a4a"),
    ("userMessageBg", "#343541"),
    ("userMessageText", "#e5e5e7"),
    ("customMessageBg", "#2d2838"),
    ("customMessageText", "#e5e5e7"),
    ("customMessageLabel", "#9575cd"),
    ("toolPendingBg", "#282832"),
    ("toolSuccessBg", "#283228"),
    ("toolErrorBg", "#3c2828"),
    ("toolTitle", "#e5e5e7"),
    ("toolOutput", "#808080"),
    ("mdHeading", "#f0c674"),
    ("mdLink", "#81a2be"),
    ("mdLinkUrl", "#666666"),
    ("mdCode", "#8abeb7"),
    ("mdCodeBlock", "#b5bd68"),
    ("mdCodeBlockBorder", "#808080"),
    ("mdQuote", "#808080"),
    ("mdQuoteBorder", "#808080"),
    ("mdHr", "#808080"),
    ("mdListBullet", "#8abeb7"),
    ("toolDiffAdded", "#b5bd68"),
    ("toolDiffRemoved", "#cc6666"),
    ("toolDiffContext", "#808080"),
    ("syntaxComment", "#6a9955"),
    ("syntaxKeyword", "#569cd6"),
    ("syntaxFunction", "#dcdcaa"),
    ("syntaxVariable", "#9cdcfe"),
    ("syntaxString", "#ce9178"),
    ("syntaxNumber", "#b5cea8"),
    ("syntaxType", "#4ec9b0"),
    ("syntaxOperator", "#d4d4d4"),
    ("syntaxPunctuation", "#d4d4d4"),
    ("thinkingOff", "#505050"),
    ("thinkingMinimal", "#6e6e6e"),
    ("thinkingLow", "#5f87af"),
    ("thinkingMedium", "#81a2be"),
    ("thinkingHigh", "#b294bb"),
    ("thinkingXhigh", "#d183e8"),
    ("bashMode", "#b5bd68"),
];

/// Colours of the export page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportTheme {
    colors: BTreeMap<String, String>,
    page_bg: Option<String>,
    card_bg: Option<String>,
    info_bg: Option<String>,
}

impl Default for ExportTheme {
    fn default() -> Self {
        Self::dark()
    }
}

/// `#rgb` or `#rrggbb`, normalised to lowercase `#rrggbb`.
fn parse_hex(value: &str) -> Option<(u8, u8, u8)> {
    let hex = value.trim().strip_prefix('#')?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |s: &str| u8::from_str_radix(s, 16).ok();
    match hex.len() {
        6 => Some((
            channel(&hex[0..2])?,
            channel(&hex[2..4])?,
            channel(&hex[4..6])?,
        )),
        3 => {
            let d = |i: usize| channel(&hex[i..i + 1]).map(|v| v * 17);
            Some((d(0)?, d(1)?, d(2)?))
        }
        _ => None,
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn valid_token(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl ExportTheme {
    /// The built-in dark theme.
    pub fn dark() -> Self {
        ExportTheme {
            colors: DARK
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            page_bg: Some("#18181e".into()),
            card_bg: Some("#1e1e24".into()),
            info_bg: Some("#3c3728".into()),
        }
    }

    /// A theme from resolved colours (token → `#rrggbb`). Entries with an invalid token
    /// name or a value that is not a hex colour are ignored; tokens not given keep the
    /// dark theme's colour. Backgrounds are derived until [`Self::with_backgrounds`].
    pub fn from_colors<K, V>(colors: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut theme = Self::dark();
        theme.page_bg = None;
        theme.card_bg = None;
        theme.info_bg = None;
        for (name, value) in colors {
            let name = name.as_ref();
            if let (true, Some(rgb)) = (valid_token(name), parse_hex(value.as_ref())) {
                theme.colors.insert(name.to_string(), hex(rgb));
            }
        }
        theme
    }

    /// Sets the page, card and info backgrounds (a theme's `export` section); invalid or
    /// missing values are derived from `userMessageBg`.
    pub fn with_backgrounds(
        mut self,
        page: Option<&str>,
        card: Option<&str>,
        info: Option<&str>,
    ) -> Self {
        let pick = |v: Option<&str>| v.and_then(parse_hex).map(hex);
        self.page_bg = pick(page);
        self.card_bg = pick(card);
        self.info_bg = pick(info);
        self
    }

    /// The colour of a token, if the theme has it.
    pub fn color(&self, token: &str) -> Option<&str> {
        self.colors.get(token).map(String::as_str)
    }

    /// Page, card and info backgrounds: explicit ones, else derived from the user
    /// message background (darker shades on dark themes, a near-white page on light ones).
    fn backgrounds(&self) -> (String, String, String) {
        let base = self
            .color("userMessageBg")
            .and_then(parse_hex)
            .unwrap_or((0x34, 0x35, 0x41));
        let (r, g, b) = base;
        let luminance = (0.2126 * r as f64 + 0.7152 * g as f64 + 0.0722 * b as f64) / 255.0;
        let scale = |f: f64| {
            let s = |c: u8| (c as f64 * f).round().clamp(0.0, 255.0) as u8;
            hex((s(r), s(g), s(b)))
        };
        let (page, card, info) = if luminance > 0.5 {
            (
                scale(0.96),
                hex(base),
                hex((
                    r.saturating_add(10),
                    g.saturating_add(5),
                    b.saturating_sub(20),
                )),
            )
        } else {
            (
                scale(0.7),
                scale(0.85),
                hex((r.saturating_add(20), g.saturating_add(15), b)),
            )
        };
        (
            self.page_bg.clone().unwrap_or(page),
            self.card_bg.clone().unwrap_or(card),
            self.info_bg.clone().unwrap_or(info),
        )
    }

    /// The `:root { … }` rule declaring every colour as a CSS variable.
    pub fn css_variables(&self) -> String {
        let mut css = String::from(":root {\n");
        for (name, value) in &self.colors {
            css.push_str(&format!("  --{name}: {value};\n"));
        }
        let (page, card, info) = self.backgrounds();
        css.push_str(&format!(
            "  --pageBg: {page};\n  --cardBg: {card};\n  --infoBg: {info};\n}}\n"
        ));
        css
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theme_colours_become_css_variables_and_bad_values_are_ignored() {
        let theme = ExportTheme::from_colors([
            ("accent", "#ABC"),
            ("text", "red; } body { background: url(x)"),
            ("bad name;", "#000000"),
            ("userMessageBg", "#f0f0f0"),
        ]);
        let css = theme.css_variables();
        assert!(css.contains("  --accent: #aabbcc;\n"), "{css}");
        assert!(css.contains("  --text: #e5e5e7;\n"), "{css}");
        assert!(!css.contains("url("), "{css}");
        assert!(!css.contains("bad name"), "{css}");
        // A light user-message background gives a light page.
        assert!(
            css.contains("  --pageBg: #e6e6e6;\n  --cardBg: #f0f0f0;\n  --infoBg: #faf5dc;\n"),
            "{css}"
        );
    }

    #[test]
    fn dark_theme_uses_its_explicit_backgrounds() {
        let css = ExportTheme::dark().css_variables();
        assert!(
            css.ends_with("  --pageBg: #18181e;\n  --cardBg: #1e1e24;\n  --infoBg: #3c3728;\n}\n"),
            "{css}"
        );
        let derived = ExportTheme::from_colors(Vec::<(String, String)>::new()).css_variables();
        assert!(
            derived.contains("  --pageBg: #24252e;\n  --cardBg: #2c2d37;\n  --infoBg: #484441;\n"),
            "{derived}"
        );
    }
}
