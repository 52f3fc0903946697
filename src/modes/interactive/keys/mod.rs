//! Keybindings: pi's action ids (`tui.editor.cursorUp`, `app.tools.expand`, …) with
//! their default keys, `keybindings.json` loading, and matching crossterm key events
//! against key specs like `ctrl+shift+p`.
//!
//! Matching smooths over how legacy terminals encode keys (crossterm reports the raw
//! bytes): `Ctrl+-` arrives as `Ctrl+7`, `Ctrl+]` as `Ctrl+5`, Backspace sometimes as
//! `Ctrl+H`, shifted symbols with or without the Shift flag. Which action wins when
//! several share a key depends on where the focus is, so lookups take the candidate
//! actions of the current context. This module does not read the terminal.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::Value;

mod legacy;

macro_rules! actions {
    ($($variant:ident = $id:literal, $desc:literal, [$($key:expr),*];)*) => {
        /// Something a key can be bound to (pi's namespaced keybinding ids).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action { $($variant),* }

        impl Action {
            /// Every action, in pi's order.
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];

            /// The id used in `keybindings.json`.
            pub fn id(self) -> &'static str {
                match self { $(Action::$variant => $id),* }
            }

            /// What the action does, for `/hotkeys`.
            pub fn description(self) -> &'static str {
                match self { $(Action::$variant => $desc),* }
            }

            /// The keys bound when the user configures nothing.
            pub fn default_keys(self) -> &'static [&'static str] {
                match self { $(Action::$variant => &[$($key),*]),* }
            }
        }
    };
}

/// `Ctrl+Z` job control does not exist on native Windows.
const SUSPEND_KEY: &str = if cfg!(windows) { "" } else { "ctrl+z" };
/// Windows Terminal takes `Ctrl+V` for its own paste.
const PASTE_IMAGE_KEY: &str = if cfg!(windows) { "alt+v" } else { "ctrl+v" };

actions! {
    CursorUp = "tui.editor.cursorUp", "Move cursor up", ["up"];
    CursorDown = "tui.editor.cursorDown", "Move cursor down", ["down"];
    HistoryPrevious = "tui.editor.historyPrevious", "Select previous prompt history entry", [];
    HistoryNext = "tui.editor.historyNext", "Select next prompt history entry", [];
    CursorLeft = "tui.editor.cursorLeft", "Move cursor left", ["left", "ctrl+b"];
    CursorRight = "tui.editor.cursorRight", "Move cursor right", ["right", "ctrl+f"];
    CursorWordLeft = "tui.editor.cursorWordLeft", "Move cursor word left", ["alt+left", "ctrl+left", "alt+b"];
    CursorWordRight = "tui.editor.cursorWordRight", "Move cursor word right", ["alt+right", "ctrl+right", "alt+f"];
    CursorLineStart = "tui.editor.cursorLineStart", "Move to line start", ["home", "ctrl+a"];
    CursorLineEnd = "tui.editor.cursorLineEnd", "Move to line end", ["end", "ctrl+e"];
    JumpForward = "tui.editor.jumpForward", "Jump forward to character", ["ctrl+]"];
    JumpBackward = "tui.editor.jumpBackward", "Jump backward to character", ["ctrl+alt+]"];
    PageUp = "tui.editor.pageUp", "Page up", ["pageUp", "ctrl+pageUp"];
    PageDown = "tui.editor.pageDown", "Page down", ["pageDown", "ctrl+pageDown"];
    DeleteCharBackward = "tui.editor.deleteCharBackward", "Delete character backward", ["backspace"];
    DeleteCharForward = "tui.editor.deleteCharForward", "Delete character forward", ["delete", "ctrl+d"];
    DeleteWordBackward = "tui.editor.deleteWordBackward", "Delete word backward", ["ctrl+w", "alt+backspace"];
    DeleteWordForward = "tui.editor.deleteWordForward", "Delete word forward", ["alt+d", "alt+delete"];
    DeleteToLineStart = "tui.editor.deleteToLineStart", "Delete to line start", ["ctrl+u"];
    DeleteToLineEnd = "tui.editor.deleteToLineEnd", "Delete to line end", ["ctrl+k"];
    Yank = "tui.editor.yank", "Paste most recently deleted text", ["ctrl+y"];
    YankPop = "tui.editor.yankPop", "Cycle through deleted text after yank", ["alt+y"];
    Undo = "tui.editor.undo", "Undo last edit", ["ctrl+-"];
    NewLine = "tui.input.newLine", "Insert new line", ["shift+enter", "ctrl+j"];
    Submit = "tui.input.submit", "Submit input", ["enter"];
    Tab = "tui.input.tab", "Tab / autocomplete", ["tab"];
    Copy = "tui.input.copy", "Copy selection", ["ctrl+c"];
    SelectUp = "tui.select.up", "Move selection up", ["up"];
    SelectDown = "tui.select.down", "Move selection down", ["down"];
    SelectPageUp = "tui.select.pageUp", "Selection page up", ["pageUp"];
    SelectPageDown = "tui.select.pageDown", "Selection page down", ["pageDown"];
    SelectConfirm = "tui.select.confirm", "Confirm selection", ["enter"];
    SelectCancel = "tui.select.cancel", "Cancel selection", ["escape", "ctrl+c"];
    // pi 1.6's fullscreen transcript (not in pi-rs yet: accepted, bound to nothing here).
    AltPageUp = "tui.altScreen.pageUp", "Scroll viewport up one page", ["pageUp"];
    AltPageDown = "tui.altScreen.pageDown", "Scroll viewport down one page", ["pageDown"];
    AltHalfPageUp = "tui.altScreen.halfPageUp", "Scroll viewport up half a page", [];
    AltHalfPageDown = "tui.altScreen.halfPageDown", "Scroll viewport down half a page", [];
    AltLineUp = "tui.altScreen.lineUp", "Scroll viewport up one line", [];
    AltLineDown = "tui.altScreen.lineDown", "Scroll viewport down one line", [];
    AltPreviousPrompt = "tui.altScreen.previousPrompt", "Jump to previous semantic prompt", ["ctrl+shift+up"];
    AltNextPrompt = "tui.altScreen.nextPrompt", "Jump to next semantic prompt", ["ctrl+shift+down"];
    AltSearch = "tui.altScreen.search", "Search the primary scroll view", ["ctrl+shift+f"];
    AltSearchNext = "tui.altScreen.searchNext", "Select the next search match", ["enter", "ctrl+g"];
    AltSearchPrevious = "tui.altScreen.searchPrevious", "Select the previous search match", ["shift+enter", "ctrl+shift+g"];
    AltSearchClose = "tui.altScreen.searchClose", "Close transcript search", ["escape"];
    AltTop = "tui.altScreen.top", "Scroll viewport to top", ["ctrl+home"];
    AltBottom = "tui.altScreen.bottom", "Scroll viewport to bottom", ["ctrl+end"];
    Interrupt = "app.interrupt", "Cancel or abort", ["escape"];
    Clear = "app.clear", "Clear editor", ["ctrl+c"];
    Exit = "app.exit", "Exit when editor is empty", ["ctrl+d"];
    Suspend = "app.suspend", "Suspend to background", [SUSPEND_KEY];
    ThinkingCycle = "app.thinking.cycle", "Cycle thinking level", ["shift+tab"];
    ThinkingSave = "app.thinking.save", "Save thinking level", ["ctrl+s"];
    ModelCycleForward = "app.model.cycleForward", "Cycle to next model", ["ctrl+p"];
    ModelCycleBackward = "app.model.cycleBackward", "Cycle to previous model", ["shift+ctrl+p"];
    ModelSelect = "app.model.select", "Open model selector", ["ctrl+l"];
    ToolsExpand = "app.tools.expand", "Toggle tool output", ["ctrl+o"];
    ThinkingToggle = "app.thinking.toggle", "Toggle thinking blocks", ["ctrl+t"];
    SessionToggleNamedFilter = "app.session.toggleNamedFilter", "Toggle named session filter", ["ctrl+n"];
    EditorExternal = "app.editor.external", "Open external editor", ["ctrl+g"];
    MessageCopy = "app.message.copy", "Copy selection or last assistant message", ["ctrl+x"];
    MessageFollowUp = "app.message.followUp", "Queue follow-up message", ["alt+enter"];
    MessageDequeue = "app.message.dequeue", "Restore queued messages", ["alt+up"];
    ClipboardPasteImage = "app.clipboard.pasteImage", "Paste files on macOS, images, or text from clipboard", [PASTE_IMAGE_KEY];
    SessionNew = "app.session.new", "Start a new session", [];
    SessionTree = "app.session.tree", "Open session tree", [];
    SessionFork = "app.session.fork", "Fork current session", [];
    SessionResume = "app.session.resume", "Resume a session", [];
    TreeFoldOrUp = "app.tree.foldOrUp", "Fold tree branch or move up", ["ctrl+left", "alt+left"];
    TreeUnfoldOrDown = "app.tree.unfoldOrDown", "Unfold tree branch or move down", ["ctrl+right", "alt+right"];
    TreeEditLabel = "app.tree.editLabel", "Edit tree label", ["shift+l"];
    TreeToggleLabelTimestamp = "app.tree.toggleLabelTimestamp", "Toggle tree label timestamps", ["shift+t"];
    SessionTogglePath = "app.session.togglePath", "Toggle session path display", ["ctrl+p"];
    SessionToggleSort = "app.session.toggleSort", "Toggle session sort mode", ["ctrl+s"];
    SessionRename = "app.session.rename", "Rename session", ["ctrl+r"];
    SessionDelete = "app.session.delete", "Delete session", ["ctrl+d"];
    SessionDeleteNoninvasive = "app.session.deleteNoninvasive", "Delete session when query is empty", ["ctrl+backspace"];
    ModelsSave = "app.models.save", "Save model selection", ["ctrl+s"];
    ModelsEnableAll = "app.models.enableAll", "Enable all models", ["ctrl+a"];
    ModelsClearAll = "app.models.clearAll", "Clear all models", ["ctrl+x"];
    ModelsToggleProvider = "app.models.toggleProvider", "Toggle all models for provider", ["ctrl+p"];
    ModelsReorderUp = "app.models.reorderUp", "Move model up in order", ["alt+up"];
    ModelsReorderDown = "app.models.reorderDown", "Move model down in order", ["alt+down"];
    TreeFilterDefault = "app.tree.filter.default", "Tree filter: default view", ["ctrl+d"];
    TreeFilterNoTools = "app.tree.filter.noTools", "Tree filter: hide tool results", ["ctrl+t"];
    TreeFilterUserOnly = "app.tree.filter.userOnly", "Tree filter: user messages only", ["ctrl+u"];
    TreeFilterLabeledOnly = "app.tree.filter.labeledOnly", "Tree filter: labeled entries only", ["ctrl+l"];
    TreeFilterAll = "app.tree.filter.all", "Tree filter: show all entries", ["ctrl+a"];
    TreeFilterCycleForward = "app.tree.filter.cycleForward", "Tree filter: cycle forward", ["ctrl+o"];
    TreeFilterCycleBackward = "app.tree.filter.cycleBackward", "Tree filter: cycle backward", ["shift+ctrl+o"];
}

impl Action {
    pub fn from_id(id: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.id() == id)
    }

    /// The current id for an id from before pi namespaced them (`cursorUp`,
    /// `expandTools`, …); old keybindings.json files still load.
    pub fn from_legacy_id(id: &str) -> Option<Action> {
        legacy::namespaced_id(id).and_then(Action::from_id)
    }
}

/// The key part of a key spec (without modifiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyName {
    /// A letter (lowercase), digit or symbol.
    Char(char),
    Escape,
    Enter,
    Tab,
    Space,
    Backspace,
    Delete,
    Insert,
    Clear,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    F(u8),
}

/// Symbols pi accepts as keys.
const SYMBOLS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";

/// A key with modifiers, e.g. `ctrl+shift+p`. Keeps the text it was written as, which
/// is what hints show (`ctrl+o to expand`); equality ignores that spelling.
#[derive(Debug, Clone)]
pub struct KeySpec {
    pub key: KeyName,
    pub ctrl: bool,
    pub shift: bool,
    pub alt: bool,
    pub super_key: bool,
    text: String,
}

impl PartialEq for KeySpec {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.ctrl, self.shift, self.alt, self.super_key)
            == (
                other.key,
                other.ctrl,
                other.shift,
                other.alt,
                other.super_key,
            )
    }
}

impl Eq for KeySpec {}

impl std::hash::Hash for KeySpec {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.key, self.ctrl, self.shift, self.alt, self.super_key).hash(state);
    }
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A key spec that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{spec}\" is not a key: {reason}")]
pub struct KeySpecError {
    pub spec: String,
    pub reason: String,
}

impl FromStr for KeySpec {
    type Err = KeySpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| KeySpecError {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let lower = spec.trim().to_ascii_lowercase();
        // `+` is a key too: `ctrl++` (and a bare `+`).
        let (mods, key) = match lower.strip_suffix("++") {
            Some(mods) => (Some(mods), "+"),
            None if lower == "+" => (None, "+"),
            None => match lower.rsplit_once('+') {
                Some((mods, key)) => (Some(mods), key),
                None => (None, lower.as_str()),
            },
        };
        let parts: Vec<&str> = mods.map(|m| m.split('+').collect()).unwrap_or_default();
        if key.is_empty() {
            return Err(err("it has no key after the last '+'"));
        }
        let mut out = KeySpec {
            key: KeyName::Escape,
            ctrl: false,
            shift: false,
            alt: false,
            super_key: false,
            text: spec.trim().to_string(),
        };
        for m in parts {
            let flag = match m {
                "ctrl" => &mut out.ctrl,
                "shift" => &mut out.shift,
                "alt" => &mut out.alt,
                "super" => &mut out.super_key,
                other => {
                    return Err(err(&format!(
                        "unknown modifier \"{other}\" (use ctrl, shift, alt or super)"
                    )));
                }
            };
            if *flag {
                return Err(err(&format!("the modifier \"{m}\" is given twice")));
            }
            *flag = true;
        }
        out.key = match key {
            "escape" | "esc" => KeyName::Escape,
            "enter" | "return" => KeyName::Enter,
            "tab" => KeyName::Tab,
            "space" => KeyName::Space,
            "backspace" => KeyName::Backspace,
            "delete" => KeyName::Delete,
            "insert" => KeyName::Insert,
            "clear" => KeyName::Clear,
            "home" => KeyName::Home,
            "end" => KeyName::End,
            "pageup" => KeyName::PageUp,
            "pagedown" => KeyName::PageDown,
            "up" => KeyName::Up,
            "down" => KeyName::Down,
            "left" => KeyName::Left,
            "right" => KeyName::Right,
            f if f.starts_with('f')
                && f.len() > 1
                && f[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                match f[1..].parse::<u8>() {
                    Ok(n @ 1..=12) => KeyName::F(n),
                    _ => return Err(err("function keys go from f1 to f12")),
                }
            }
            k if k.chars().count() == 1 => {
                let c = k.chars().next().unwrap_or(' ');
                if c.is_ascii_lowercase() || c.is_ascii_digit() || SYMBOLS.contains(c) {
                    KeyName::Char(c)
                } else {
                    return Err(err(
                        "use a letter, digit, symbol or a key name like enter or pageUp",
                    ));
                }
            }
            _ => {
                return Err(err(
                    "unknown key name (see docs/keybindings.md for the list)",
                ));
            }
        };
        Ok(out)
    }
}

/// Characters legacy terminals send for Ctrl+symbol, as crossterm decodes them
/// (the control byte 0x1c–0x1f becomes Ctrl+'4'..'7').
fn legacy_ctrl_digit(symbol: char) -> Option<char> {
    match symbol {
        '\\' => Some('4'),
        ']' => Some('5'),
        '^' => Some('6'),
        '_' | '-' => Some('7'),
        _ => None,
    }
}

impl KeySpec {
    fn mods_match(&self, ev: &KeyEvent, shift: bool) -> bool {
        let m = ev.modifiers;
        m.contains(KeyModifiers::CONTROL) == self.ctrl
            && m.contains(KeyModifiers::ALT) == self.alt
            && m.contains(KeyModifiers::SUPER) == self.super_key
            && shift == self.shift
    }

    /// Whether a key event is this key. Release events never match.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        if ev.kind == KeyEventKind::Release {
            return false;
        }
        let shift = ev.modifiers.contains(KeyModifiers::SHIFT);
        let named = |code: KeyCode| ev.code == code && self.mods_match(ev, shift);
        match self.key {
            KeyName::Escape => named(KeyCode::Esc),
            KeyName::Enter => named(KeyCode::Enter),
            KeyName::Tab => {
                if ev.code == KeyCode::BackTab {
                    self.mods_match(ev, true)
                } else {
                    named(KeyCode::Tab)
                }
            }
            KeyName::Space => ev.code == KeyCode::Char(' ') && self.mods_match(ev, shift),
            KeyName::Backspace => {
                named(KeyCode::Backspace)
                    // 0x08 from terminals that send ^H for Backspace.
                    || (!self.ctrl && !self.alt && !self.shift && !self.super_key
                        && ev.code == KeyCode::Char('h') && ev.modifiers == KeyModifiers::CONTROL)
            }
            KeyName::Delete => named(KeyCode::Delete),
            KeyName::Insert => named(KeyCode::Insert),
            KeyName::Clear => named(KeyCode::KeypadBegin),
            KeyName::Home => named(KeyCode::Home),
            KeyName::End => named(KeyCode::End),
            KeyName::PageUp => named(KeyCode::PageUp),
            KeyName::PageDown => named(KeyCode::PageDown),
            KeyName::Up => named(KeyCode::Up),
            KeyName::Down => named(KeyCode::Down),
            KeyName::Left => named(KeyCode::Left),
            KeyName::Right => named(KeyCode::Right),
            KeyName::F(n) => named(KeyCode::F(n)),
            KeyName::Char(c) => {
                let KeyCode::Char(ec) = ev.code else {
                    return false;
                };
                if c.is_ascii_lowercase() {
                    // Shift+letter arrives as the uppercase letter, with or without the
                    // Shift flag depending on the terminal.
                    let shifted = shift || ec.is_ascii_uppercase();
                    return ec.to_ascii_lowercase() == c && self.mods_match(ev, shifted);
                }
                // Symbols and digits: the Shift needed to type them is not part of the key.
                let shift_ok = self.shift && shift;
                let same = ec == c
                    || (self.ctrl && (c == '-' && ec == '_' || legacy_ctrl_digit(c) == Some(ec)));
                same && self.mods_match(ev, shift_ok)
            }
        }
    }
}

/// Rewrites `keybindings.json` with today's ids when it uses old ones (`cursorUp`,
/// `expandTools`, …), as pi does at every start: each old id becomes its namespaced id
/// (dropped when the file also has the new id, which wins), and the entries are put in
/// pi's order of the actions, unknown ids after them alphabetically. A file without old
/// ids, a missing one or one that is not a JSON object is left alone (loading it
/// reports what is wrong). Returns whether the file was rewritten.
pub fn migrate_keybindings_file(path: &Path) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Ok(Value::Object(raw)) = serde_json::from_str::<Value>(text) else {
        return Ok(false);
    };
    let Some(migrated) = migrate_keybindings(&raw) else {
        return Ok(false);
    };
    let mut out =
        serde_json::to_string_pretty(&Value::Object(migrated)).map_err(std::io::Error::other)?;
    out.push('\n');
    std::fs::write(path, out)?;
    Ok(true)
}

/// `raw` with old ids renamed and pi's order, or `None` when it has no old ids.
fn migrate_keybindings(
    raw: &serde_json::Map<String, Value>,
) -> Option<serde_json::Map<String, Value>> {
    let mut renamed = serde_json::Map::new();
    let mut migrated = false;
    for (id, keys) in raw {
        match legacy::namespaced_id(id) {
            Some(new_id) => {
                migrated = true;
                if !raw.contains_key(new_id) {
                    renamed.insert(new_id.to_string(), keys.clone());
                }
            }
            None => {
                renamed.insert(id.clone(), keys.clone());
            }
        }
    }
    if !migrated {
        return None;
    }
    let mut ordered = serde_json::Map::new();
    for action in Action::ALL {
        if let Some(keys) = renamed.remove(action.id()) {
            ordered.insert(action.id().to_string(), keys);
        }
    }
    let mut extras: Vec<(String, Value)> = renamed.into_iter().collect();
    extras.sort_by(|a, b| a.0.cmp(&b.0));
    ordered.extend(extras);
    Some(ordered)
}

/// A problem with one entry of `keybindings.json`. The entry is skipped; the rest of the
/// file still applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeybindingIssue {
    pub entry: String,
    pub message: String,
}

impl fmt::Display for KeybindingIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\": {}", self.entry, self.message)
    }
}

/// Two or more actions the user bound to the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyConflict {
    pub key: String,
    pub actions: Vec<Action>,
}

/// Why `keybindings.json` could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum KeybindingsError {
    #[error("failed to read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "failed to parse {label}: {source} (fix the JSON or delete the file to use the defaults)"
    )]
    Json {
        label: String,
        source: serde_json::Error,
    },
    #[error("{label} must be a JSON object mapping action ids to a key or a list of keys")]
    NotObject { label: String },
}

/// The effective key for every action: defaults overridden by the user's file.
#[derive(Debug, Clone)]
pub struct Keybindings {
    keys: BTreeMap<Action, Vec<KeySpec>>,
    user: BTreeMap<Action, Vec<KeySpec>>,
    generation: u64,
}

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for Keybindings {
    fn default() -> Self {
        Keybindings::defaults()
    }
}

/// A loaded `keybindings.json`: the bindings plus what was wrong with individual entries.
#[derive(Debug, Clone)]
pub struct LoadedKeybindings {
    pub bindings: Keybindings,
    pub issues: Vec<KeybindingIssue>,
}

impl Keybindings {
    /// pi's defaults.
    pub fn defaults() -> Keybindings {
        let keys = Action::ALL
            .iter()
            .map(|a| {
                let specs = a
                    .default_keys()
                    .iter()
                    .filter(|k| !k.is_empty())
                    .filter_map(|k| k.parse().ok())
                    .collect();
                (*a, specs)
            })
            .collect();
        Keybindings {
            keys,
            user: BTreeMap::new(),
            generation: next_generation(),
        }
    }

    /// Loads `<agent_dir>/keybindings.json`. A missing file means the defaults.
    pub fn load(path: &Path) -> Result<LoadedKeybindings, KeybindingsError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Keybindings::from_json_str(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(LoadedKeybindings {
                bindings: Keybindings::defaults(),
                issues: Vec::new(),
            }),
            Err(source) => Err(KeybindingsError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses keybindings.json content: `{ "<action id>": "key" | ["key", …] }`. Old
    /// un-namespaced ids are accepted; a namespaced id wins over its old name.
    pub fn from_json_str(label: &str, text: &str) -> Result<LoadedKeybindings, KeybindingsError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|source| KeybindingsError::Json {
            label: label.to_string(),
            source,
        })?;
        let Value::Object(map) = value else {
            return Err(KeybindingsError::NotObject {
                label: label.to_string(),
            });
        };
        let mut bindings = Keybindings::defaults();
        let mut issues = Vec::new();
        let issue = |entry: &str, message: String| KeybindingIssue {
            entry: entry.to_string(),
            message,
        };
        for (id, keys) in &map {
            // The editor's schema hint (pi 1.6 writes one).
            if id == "$schema" {
                if !keys.is_string() {
                    issues.push(issue(
                        id,
                        format!("expected a string (a schema URL), got {keys}"),
                    ));
                }
                continue;
            }
            let action = match Action::from_id(id) {
                Some(a) => a,
                None => match Action::from_legacy_id(id) {
                    Some(a) if map.contains_key(a.id()) => continue,
                    Some(a) => a,
                    None => {
                        issues.push(issue(
                            id,
                            "unknown action id (see docs/keybindings.md for the list)".into(),
                        ));
                        continue;
                    }
                },
            };
            let list: Vec<&str> = match keys {
                Value::String(s) => vec![s.as_str()],
                Value::Array(items) if items.iter().all(Value::is_string) => {
                    items.iter().filter_map(Value::as_str).collect()
                }
                other => {
                    issues.push(issue(
                        id,
                        format!("expected a key string or a list of key strings, got {other}"),
                    ));
                    continue;
                }
            };
            let mut specs: Vec<KeySpec> = Vec::new();
            for key in &list {
                match key.parse::<KeySpec>() {
                    Ok(spec) if !specs.contains(&spec) => specs.push(spec),
                    Ok(_) => {}
                    Err(e) => issues.push(issue(id, e.to_string())),
                }
            }
            // Nothing usable in a non-empty entry: the default keys stay (as pi, which
            // skips an entry it cannot use), rather than leaving the action unbound.
            if specs.is_empty() && !list.is_empty() {
                continue;
            }
            bindings.user.insert(action, specs.clone());
            bindings.keys.insert(action, specs);
        }
        Ok(LoadedKeybindings { bindings, issues })
    }

    /// Changes whenever bindings are built or loaded; renderers key caches on it
    /// because hints show the user's keys.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The keys bound to an action (possibly none).
    pub fn keys(&self, action: Action) -> &[KeySpec] {
        self.keys.get(&action).map(Vec::as_slice).unwrap_or(&[])
    }

    /// How hints show an action's keys: `ctrl+o`, or `escape/ctrl+c` for several.
    pub fn key_text(&self, action: Action) -> String {
        self.keys(action)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Whether `ev` is one of the action's keys.
    pub fn matches(&self, ev: &KeyEvent, action: Action) -> bool {
        self.keys(action).iter().any(|k| k.matches(ev))
    }

    /// The first of `candidates` (in order) bound to `ev`; an action the user's file
    /// bound to the key goes before one that has it by default (a key pi 1.6 gave a new
    /// default, such as `ctrl+x`, stays with the action the user chose for it).
    pub fn action_for(&self, ev: &KeyEvent, candidates: &[Action]) -> Option<Action> {
        candidates
            .iter()
            .copied()
            .find(|a| self.user.contains_key(a) && self.matches(ev, *a))
            .or_else(|| candidates.iter().copied().find(|a| self.matches(ev, *a)))
    }

    /// Keys the user's file bound to more than one action (pi reports these too).
    pub fn conflicts(&self) -> Vec<KeyConflict> {
        let mut by_key: BTreeMap<String, Vec<Action>> = BTreeMap::new();
        for (action, specs) in &self.user {
            for spec in specs {
                by_key
                    .entry(spec.text.to_ascii_lowercase())
                    .or_default()
                    .push(*action);
            }
        }
        by_key
            .into_iter()
            .filter(|(_, actions)| actions.len() > 1)
            .map(|(key, actions)| KeyConflict { key, actions })
            .collect()
    }
}

#[cfg(test)]
mod tests;
