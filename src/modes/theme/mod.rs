//! Themes: pi's theme file format, the built-in `dark` and `light` themes, custom themes
//! from `<agent_dir>/themes/*.json`, and the ratatui styles the renderers use.
//!
//! A theme file is `{ "$schema"?, "name", "appearance"?, "vars"?, "colors", "export"? }`
//! (pi 1.6's `schemas/theme.schema.json`). Every [`ThemeToken`] must be present in
//! `colors` except the five pi 1.6 added, which fall back to an older token
//! ([`ThemeToken::fallback`]); a value is `#rgb`, `#rrggbb`, `oklch()`, `okhsl()`, a
//! 0–255 palette index, the name of a `vars` entry, or `""` for the terminal default.
//! A name may not contain `/` (reserved for `"light/dark"` theme settings). Loading
//! checks everything at once and reports every missing token and bad value with the
//! file name.
//! Colours are degraded to what the terminal supports ([`ColorMode`]) when the theme is
//! built, so [`Theme::style`] is a plain array lookup. Watching files for changes is the
//! app's job, not this module's.

mod catalog;
mod color;
mod oklab;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ratatui::style::{Color, Style};
use serde_json::{Map, Value};

pub use catalog::ThemeCatalog;
pub use color::{ColorMode, ColorValue, index_to_rgb, rgb_to_256};

macro_rules! tokens {
    ($($variant:ident = $name:literal, $kind:ident;)*) => {
        /// A colour slot of a theme (pi's theme schema, all required).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ThemeToken { $($variant),* }

        impl ThemeToken {
            /// Every token, in schema order.
            pub const ALL: &'static [ThemeToken] = &[$(ThemeToken::$variant),*];

            /// The key used in theme files.
            pub fn name(self) -> &'static str {
                match self { $(ThemeToken::$variant => $name),* }
            }

            /// Whether the colour is used as a background (the rest are foregrounds).
            pub fn is_background(self) -> bool {
                match self { $(ThemeToken::$variant => TokenKind::$kind == TokenKind::Bg),* }
            }
        }
    };
}

#[derive(PartialEq, Eq)]
enum TokenKind {
    Fg,
    Bg,
}

tokens! {
    Accent = "accent", Fg;
    Border = "border", Fg;
    BorderAccent = "borderAccent", Fg;
    BorderMuted = "borderMuted", Fg;
    Success = "success", Fg;
    Error = "error", Fg;
    Warning = "warning", Fg;
    Muted = "muted", Fg;
    Dim = "dim", Fg;
    Text = "text", Fg;
    ThinkingText = "thinkingText", Fg;
    ScrollbarTrack = "scrollbarTrack", Fg;
    ScrollbarThumb = "scrollbarThumb", Fg;
    SelectedBg = "selectedBg", Bg;
    SearchMatchBg = "searchMatchBg", Bg;
    SearchMatchText = "searchMatchText", Fg;
    UserMessageBg = "userMessageBg", Bg;
    UserMessageText = "userMessageText", Fg;
    CustomMessageBg = "customMessageBg", Bg;
    CustomMessageText = "customMessageText", Fg;
    CustomMessageLabel = "customMessageLabel", Fg;
    ToolPendingBg = "toolPendingBg", Bg;
    ToolSuccessBg = "toolSuccessBg", Bg;
    ToolErrorBg = "toolErrorBg", Bg;
    ToolTitle = "toolTitle", Fg;
    ToolOutput = "toolOutput", Fg;
    MdHeading = "mdHeading", Fg;
    MdLink = "mdLink", Fg;
    MdLinkUrl = "mdLinkUrl", Fg;
    MdCode = "mdCode", Fg;
    MdCodeBlock = "mdCodeBlock", Fg;
    MdCodeBlockBorder = "mdCodeBlockBorder", Fg;
    MdQuote = "mdQuote", Fg;
    MdQuoteBorder = "mdQuoteBorder", Fg;
    MdHr = "mdHr", Fg;
    MdListBullet = "mdListBullet", Fg;
    ToolDiffAdded = "toolDiffAdded", Fg;
    ToolDiffRemoved = "toolDiffRemoved", Fg;
    ToolDiffContext = "toolDiffContext", Fg;
    SyntaxComment = "syntaxComment", Fg;
    SyntaxKeyword = "syntaxKeyword", Fg;
    SyntaxFunction = "syntaxFunction", Fg;
    SyntaxVariable = "syntaxVariable", Fg;
    SyntaxString = "syntaxString", Fg;
    SyntaxNumber = "syntaxNumber", Fg;
    SyntaxType = "syntaxType", Fg;
    SyntaxOperator = "syntaxOperator", Fg;
    SyntaxPunctuation = "syntaxPunctuation", Fg;
    ThinkingOff = "thinkingOff", Fg;
    ThinkingMinimal = "thinkingMinimal", Fg;
    ThinkingLow = "thinkingLow", Fg;
    ThinkingMedium = "thinkingMedium", Fg;
    ThinkingHigh = "thinkingHigh", Fg;
    ThinkingXhigh = "thinkingXhigh", Fg;
    ThinkingMax = "thinkingMax", Fg;
    BashMode = "bashMode", Fg;
}

impl ThemeToken {
    /// Looks a token up by its theme-file key.
    pub fn from_name(name: &str) -> Option<ThemeToken> {
        ThemeToken::ALL.iter().copied().find(|t| t.name() == name)
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The token an optional one (new in pi 1.6) takes its colour from when a theme
    /// leaves it out; `None` for the required tokens.
    pub fn fallback(self) -> Option<ThemeToken> {
        match self {
            ThemeToken::ScrollbarTrack => Some(ThemeToken::Muted),
            ThemeToken::ScrollbarThumb | ThemeToken::SearchMatchText => Some(ThemeToken::Text),
            ThemeToken::SearchMatchBg => Some(ThemeToken::SelectedBg),
            ThemeToken::ThinkingMax => Some(ThemeToken::ThinkingXhigh),
            _ => None,
        }
    }
}

/// The optional `export` section (HTML export page colours), resolved to `#rrggbb`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportColors {
    pub page_bg: Option<String>,
    pub card_bg: Option<String>,
    pub info_bg: Option<String>,
}

/// Built-in theme files, embedded in the binary.
const BUILTIN_THEMES: &[(&str, &str)] = &[
    ("dark", include_str!("../../../themes/dark.json")),
    ("light", include_str!("../../../themes/light.json")),
];

/// Names of the built-in themes.
pub fn builtin_theme_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_THEMES.iter().map(|(name, _)| *name)
}

static GENERATION: AtomicU64 = AtomicU64::new(1);

/// A loaded theme: resolved, degraded colours for every token.
#[derive(Debug, Clone)]
pub struct Theme {
    name: String,
    /// The theme file's `appearance`, if it says.
    appearance: Option<Appearance>,
    source: Option<PathBuf>,
    mode: ColorMode,
    values: Vec<ColorValue>,
    colors: Vec<Option<Color>>,
    export: ExportColors,
    generation: u64,
}

impl Theme {
    /// A built-in theme (`dark` or `light`).
    pub fn builtin(name: &str, mode: ColorMode) -> Option<Theme> {
        let (_, json) = BUILTIN_THEMES.iter().find(|(n, _)| *n == name)?;
        Theme::from_json_str(name, json, mode).ok()
    }

    /// The dark built-in theme: the fallback when nothing else loads.
    pub fn dark(mode: ColorMode) -> Theme {
        match Theme::builtin("dark", mode) {
            Some(theme) => theme,
            // The embedded file is checked by a unit test; this keeps the UI usable
            // even if it were broken.
            None => Theme::from_values(
                "dark",
                vec![ColorValue::Default; ThemeToken::ALL.len()],
                mode,
            ),
        }
    }

    /// Parses and validates theme JSON. `label` names the source in error messages.
    pub fn from_json_str(label: &str, json: &str, mode: ColorMode) -> Result<Theme, ThemeError> {
        let value: Value = serde_json::from_str(json).map_err(|source| ThemeError::Json {
            label: label.to_string(),
            source,
        })?;
        let parsed = validate(label, &value)?;
        let mut theme = Theme::from_values(&parsed.name, parsed.values, mode);
        theme.export = parsed.export;
        theme.appearance = parsed.appearance;
        Ok(theme)
    }

    /// Loads a theme file.
    pub fn load_file(path: &Path, mode: ColorMode) -> Result<Theme, ThemeError> {
        let text = std::fs::read_to_string(path).map_err(|source| ThemeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut theme = Theme::from_json_str(&path.display().to_string(), text, mode)?;
        theme.source = Some(path.to_path_buf());
        Ok(theme)
    }

    /// Loads a theme by name: a built-in one, else `<themes_dir>/<name>.json`.
    pub fn load_named(name: &str, themes_dir: &Path, mode: ColorMode) -> Result<Theme, ThemeError> {
        if let Some(theme) = Theme::builtin(name, mode) {
            return Ok(theme);
        }
        let path = themes_dir.join(format!("{name}.json"));
        if !path.is_file() {
            return Err(ThemeError::NotFound {
                name: name.to_string(),
                dir: themes_dir.to_path_buf(),
            });
        }
        Theme::load_file(&path, mode)
    }

    fn from_values(name: &str, values: Vec<ColorValue>, mode: ColorMode) -> Theme {
        let colors = values.iter().map(|v| v.to_color(mode)).collect();
        Theme {
            name: name.to_string(),
            appearance: None,
            source: None,
            mode,
            values,
            colors,
            export: ExportColors::default(),
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The same theme rebuilt for another terminal colour mode.
    pub fn with_mode(&self, mode: ColorMode) -> Theme {
        let mut theme = Theme::from_values(&self.name, self.values.clone(), mode);
        theme.source = self.source.clone();
        theme.export = self.export.clone();
        theme.appearance = self.appearance;
        theme
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it came from (`None` for built-in themes).
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    pub fn mode(&self) -> ColorMode {
        self.mode
    }

    /// Light or dark: the file's `appearance`, else judged from how light the user
    /// message background is (the terminal's default counts as dark).
    pub fn appearance(&self) -> Appearance {
        if let Some(appearance) = self.appearance {
            return appearance;
        }
        let (r, g, b) = match self.value(ThemeToken::UserMessageBg) {
            ColorValue::Rgb(r, g, b) => (r, g, b),
            ColorValue::Index(i) => index_to_rgb(i),
            ColorValue::Default => return Appearance::Dark,
        };
        let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
        if luma > 127.5 {
            Appearance::Light
        } else {
            Appearance::Dark
        }
    }

    /// Changes whenever a theme is built; renderers use it to invalidate caches.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The terminal colour of a token (`None` = terminal default).
    pub fn color(&self, token: ThemeToken) -> Option<Color> {
        self.colors.get(token.index()).copied().flatten()
    }

    /// The theme-file value of a token after variable resolution.
    pub fn value(&self, token: ThemeToken) -> ColorValue {
        self.values
            .get(token.index())
            .copied()
            .unwrap_or(ColorValue::Default)
    }

    /// The style for a token: background tokens set the background, all others the
    /// foreground. A terminal-default token is an empty style.
    pub fn style(&self, token: ThemeToken) -> Style {
        if token.is_background() {
            self.bg(token)
        } else {
            self.fg(token)
        }
    }

    /// The token's colour as a foreground, whatever its kind.
    pub fn fg(&self, token: ThemeToken) -> Style {
        match self.color(token) {
            Some(c) => Style::default().fg(c),
            None => Style::default(),
        }
    }

    /// The token's colour as a background, whatever its kind.
    pub fn bg(&self, token: ThemeToken) -> Style {
        match self.color(token) {
            Some(c) => Style::default().bg(c),
            None => Style::default(),
        }
    }

    /// HTML export colours from the `export` section.
    pub fn export_colors(&self) -> &ExportColors {
        &self.export
    }
}

/// Whether a theme (or the terminal) is light or dark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    Dark,
    Light,
}

/// The terminal's appearance as pi 1.6 decides it when the terminal does not report its
/// colours: `COLORFGBG`'s background index (its last field; 0–6 and 8 are dark, 7 and
/// 9–15 light), else dark. pi-rs does not ask the terminal for its colours (OSC 11) yet.
pub fn terminal_appearance(env: impl Fn(&str) -> Option<String>) -> Appearance {
    let background = env("COLORFGBG").and_then(|v| {
        let last = v.rsplit(';').next()?.trim().to_string();
        (!last.is_empty() && last.len() <= 2 && last.bytes().all(|b| b.is_ascii_digit()))
            .then(|| last.parse::<u8>().ok())
            .flatten()
    });
    match background {
        Some(bg @ 0..=15) if bg == 7 || bg >= 9 => Appearance::Light,
        _ => Appearance::Dark,
    }
}

/// The built-in theme for the terminal's appearance: what pi 1.6's default `system`
/// theme comes closest to in pi-rs (which does not derive colours from the terminal's
/// palette yet).
pub fn default_theme_name(env: impl Fn(&str) -> Option<String>) -> &'static str {
    match terminal_appearance(env) {
        Appearance::Light => "light",
        Appearance::Dark => "dark",
    }
}

/// The reserved name of pi 1.6's terminal-derived theme (the default).
pub const SYSTEM_THEME: &str = "system";

/// The theme a `theme` setting (or `--use-theme`) names for this terminal: unset or
/// `"system"` is [`default_theme_name`]; `"light/dark"` picks by the terminal's
/// appearance (light first, as pi stores it). `Err` carries a warning for a value with
/// a `/` that is not such a pair; the default theme is used then.
pub fn resolve_theme_setting(
    setting: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<String, (String, String)> {
    let appearance = terminal_appearance(&env);
    let system = || default_theme_name(&env).to_string();
    let Some(setting) = setting.filter(|s| !s.is_empty()) else {
        return Ok(system());
    };
    let chosen = if setting.contains('/') {
        let mut parts = setting.split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(light), Some(dark), None)
                if !light.trim().is_empty() && !dark.trim().is_empty() =>
            {
                match appearance {
                    Appearance::Light => light.trim(),
                    Appearance::Dark => dark.trim(),
                }
            }
            _ => {
                return Err((
                    format!(
                        "theme \"{setting}\" is not a theme name or a \"light/dark\" pair of names; using the {} theme",
                        system()
                    ),
                    system(),
                ));
            }
        }
    } else {
        setting
    };
    Ok(if chosen == SYSTEM_THEME {
        system()
    } else {
        chosen.to_string()
    })
}

/// A custom theme found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeFile {
    /// File name without `.json`; what users put in `settings.json`.
    pub name: String,
    pub path: PathBuf,
}

/// Lists `*.json` files in a themes directory (sorted by name). A missing directory is
/// simply empty; an unreadable one is an error.
pub fn discover_themes(dir: &Path) -> Result<Vec<ThemeFile>, ThemeError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ThemeError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(name) = file_name.strip_suffix(".json")
            && path.is_file()
        {
            found.push(ThemeFile {
                name: name.to_string(),
                path: path.clone(),
            });
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// A theme file and what loading it gave.
pub type LoadedThemeFile = (ThemeFile, Result<Theme, ThemeError>);

/// Loads every custom theme of a directory. Each file gets its own result so one bad
/// file does not hide the others.
pub fn load_custom_themes(dir: &Path, mode: ColorMode) -> Result<Vec<LoadedThemeFile>, ThemeError> {
    Ok(discover_themes(dir)?
        .into_iter()
        .map(|file| {
            let theme = Theme::load_file(&file.path, mode);
            (file, theme)
        })
        .collect())
}

/// Why a theme could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("failed to read theme file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to parse theme {label}: {source} (a theme file must be valid JSON)")]
    Json {
        label: String,
        source: serde_json::Error,
    },
    #[error("theme \"{name}\" not found: it is not built in and {}/{name}.json does not exist", dir.display())]
    NotFound { name: String, dir: PathBuf },
    #[error("{0}")]
    Invalid(InvalidTheme),
}

/// Everything wrong with a theme file, reported together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTheme {
    pub label: String,
    /// Tokens absent from `colors`, sorted.
    pub missing: Vec<String>,
    /// Other problems, each naming the JSON path.
    pub problems: Vec<String>,
}

impl fmt::Display for InvalidTheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid theme {}:", self.label)?;
        if !self.missing.is_empty() {
            write!(f, "\n\nmissing color tokens (every token is required):")?;
            for token in &self.missing {
                write!(f, "\n  - {token}")?;
            }
            write!(
                f,
                "\n\nadd them to the \"colors\" object; the built-in dark.json and light.json list them all"
            )?;
        }
        if !self.problems.is_empty() {
            write!(f, "\n\nother problems:")?;
            for problem in &self.problems {
                write!(f, "\n  - {problem}")?;
            }
        }
        Ok(())
    }
}

struct ParsedTheme {
    name: String,
    appearance: Option<Appearance>,
    values: Vec<ColorValue>,
    export: ExportColors,
}

/// Raw colour value of a theme file before variable resolution.
enum RawValue<'a> {
    Value(ColorValue),
    Var(&'a str),
}

fn raw_value<'a>(v: &'a Value) -> Result<RawValue<'a>, String> {
    match v {
        Value::String(s) if s.is_empty() => Ok(RawValue::Value(ColorValue::Default)),
        Value::String(s) => match ColorValue::parse_color(s)? {
            Some(color) => Ok(RawValue::Value(color)),
            None => Ok(RawValue::Var(s)),
        },
        Value::Number(n) => match n.as_u64().and_then(|n| u8::try_from(n).ok()) {
            Some(i) => Ok(RawValue::Value(ColorValue::Index(i))),
            None => Err(format!("{n} is not a palette index (0-255)")),
        },
        other => Err(format!(
            "{other} is not a colour (use \"#rrggbb\", 0-255, a var name or \"\")"
        )),
    }
}

fn resolve(v: &Value, vars: &Map<String, Value>) -> Result<ColorValue, String> {
    let mut current = v;
    let mut seen: Vec<&str> = Vec::new();
    loop {
        match raw_value(current)? {
            RawValue::Value(c) => return Ok(c),
            RawValue::Var(name) => {
                if seen.contains(&name) {
                    seen.push(name);
                    return Err(format!("circular variable reference {}", seen.join(" -> ")));
                }
                seen.push(name);
                current = vars.get(name).ok_or_else(|| {
                    format!("unknown variable \"{name}\" (not defined in \"vars\")")
                })?;
            }
        }
    }
}

fn validate(label: &str, root: &Value) -> Result<ParsedTheme, ThemeError> {
    let invalid = |missing: Vec<String>, problems: Vec<String>| {
        ThemeError::Invalid(InvalidTheme {
            label: label.to_string(),
            missing,
            problems,
        })
    };
    let Some(obj) = root.as_object() else {
        return Err(invalid(
            vec![],
            vec!["/: a theme must be a JSON object".into()],
        ));
    };
    let mut problems = Vec::new();
    for key in obj.keys() {
        if !matches!(
            key.as_str(),
            "$schema" | "name" | "appearance" | "vars" | "colors" | "export"
        ) {
            problems.push(format!("/{key}: unknown field"));
        }
    }
    let name = match obj.get("name") {
        Some(Value::String(s)) if s.contains('/') => {
            problems.push(format!(
                "/name: \"{s}\" contains \"/\", which is reserved for \"light/dark\" theme settings"
            ));
            s.clone()
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            problems.push("/name: must be a string".into());
            String::new()
        }
        None => {
            problems.push("/name: missing (every theme needs a name)".into());
            String::new()
        }
    };
    let appearance = match obj.get("appearance") {
        None => None,
        Some(Value::String(s)) if s == "dark" => Some(Appearance::Dark),
        Some(Value::String(s)) if s == "light" => Some(Appearance::Light),
        Some(other) => {
            problems.push(format!(
                "/appearance: must be \"dark\" or \"light\", got {other}"
            ));
            None
        }
    };
    let empty = Map::new();
    let vars = match obj.get("vars") {
        None => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => {
            problems.push("/vars: must be an object".into());
            &empty
        }
    };
    let mut values = vec![ColorValue::Default; ThemeToken::ALL.len()];
    let mut missing = Vec::new();
    match obj.get("colors") {
        Some(Value::Object(colors)) => {
            for key in colors.keys() {
                if ThemeToken::from_name(key).is_none() {
                    problems.push(format!("/colors/{key}: unknown color token"));
                }
            }
            for token in ThemeToken::ALL {
                match colors.get(token.name()) {
                    None if token.fallback().is_some() => {}
                    None => missing.push(token.name().to_string()),
                    Some(v) => match resolve(v, vars) {
                        Ok(c) => values[token.index()] = c,
                        Err(e) => problems.push(format!("/colors/{}: {e}", token.name())),
                    },
                }
            }
            // The optional tokens a theme left out take their fallback's colour.
            for token in ThemeToken::ALL {
                if let Some(from) = token.fallback()
                    && !colors.contains_key(token.name())
                {
                    values[token.index()] = values[from.index()];
                }
            }
        }
        Some(_) => problems.push("/colors: must be an object".into()),
        None => problems.push("/colors: missing (all color tokens are required)".into()),
    }
    let mut export = ExportColors::default();
    match obj.get("export") {
        None => {}
        Some(Value::Object(m)) => {
            for (key, v) in m {
                let slot = match key.as_str() {
                    "pageBg" => &mut export.page_bg,
                    "cardBg" => &mut export.card_bg,
                    "infoBg" => &mut export.info_bg,
                    _ => {
                        problems.push(format!("/export/{key}: unknown field"));
                        continue;
                    }
                };
                match resolve(v, vars) {
                    Ok(c) => *slot = c.to_hex(),
                    Err(e) => problems.push(format!("/export/{key}: {e}")),
                }
            }
        }
        Some(_) => problems.push("/export: must be an object".into()),
    }
    missing.sort();
    if !missing.is_empty() || !problems.is_empty() {
        return Err(invalid(missing, problems));
    }
    Ok(ParsedTheme {
        name,
        appearance,
        values,
        export,
    })
}

/// Resolved colours of a theme as `#rrggbb` (terminal-default tokens left out), for
/// HTML export.
pub fn resolved_hex_colors(theme: &Theme) -> HashMap<&'static str, String> {
    ThemeToken::ALL
        .iter()
        .filter_map(|t| theme.value(*t).to_hex().map(|hex| (t.name(), hex)))
        .collect()
}

/// The escape sequence pi's `Theme` uses for a colour value (`fgAnsi` / `bgAnsi`):
/// 24-bit in a true-colour terminal, else the nearest xterm-256 colour; `""` resets to
/// the terminal default.
pub fn ansi_sequence(value: ColorValue, mode: ColorMode, background: bool) -> String {
    let (set, reset) = if background { (48, 49) } else { (38, 39) };
    match (value, mode) {
        (ColorValue::Default, _) => format!("\x1b[{reset}m"),
        (ColorValue::Index(i), _) => format!("\x1b[{set};5;{i}m"),
        (ColorValue::Rgb(r, g, b), ColorMode::TrueColor) => format!("\x1b[{set};2;{r};{g};{b}m"),
        (ColorValue::Rgb(r, g, b), _) => format!("\x1b[{set};5;{}m", rgb_to_256(r, g, b)),
    }
}

/// The theme as pi's extensions see it (`ctx.ui.theme`): its name, pi's colour mode
/// name, and each token's escape sequence, foreground tokens under `fg` and the six
/// background tokens under `bg`, as pi's `Theme` splits them.
pub fn extension_theme_spec(theme: &Theme) -> serde_json::Value {
    let mut fg = Map::new();
    let mut bg = Map::new();
    for token in ThemeToken::ALL {
        let background = token.is_background();
        let target = if background { &mut bg } else { &mut fg };
        target.insert(
            token.name().to_string(),
            Value::String(ansi_sequence(theme.value(*token), theme.mode(), background)),
        );
    }
    let mode = match theme.mode() {
        ColorMode::TrueColor => "truecolor",
        ColorMode::Ansi256 | ColorMode::Ansi16 => "256color",
    };
    serde_json::json!({"name": theme.name(), "mode": mode, "fg": fg, "bg": bg})
}

#[cfg(test)]
mod tests;
