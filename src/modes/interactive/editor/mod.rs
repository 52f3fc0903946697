//! The prompt editor as a pure state machine: multi-line text with a grapheme cursor,
//! emacs-style motions and kills, undo, prompt history, bracketed paste with large
//! pastes folded into `[paste #N …]` markers, and the `/` `@` Tab completion popup.
//!
//! Keys go in through [`Editor::handle_key`] (crossterm events, matched against the
//! user's [`Keybindings`]) and pastes through [`Editor::handle_paste`]; [`Editor::render`]
//! draws it for a width and says where the terminal cursor belongs. App-level keys
//! (Escape to interrupt, Ctrl+C, Ctrl+D on an empty editor, Ctrl+O …) are not handled
//! here: the editor returns [`EditorAction::Ignored`] and the app decides. Behaviour
//! follows pi's editor (`packages/tui/src/components/editor.ts`).

mod completion;
mod editing;
mod layout;
mod memory;
mod motion;
mod paste;
mod render;

use std::collections::BTreeMap;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Style;

use self::layout::{VisualLine, segments, visual_lines};
use self::memory::{KillRing, PromptHistory, Snapshot, UndoStack};
use super::autocomplete::AutocompleteProvider;
use super::components::select_list::SelectList;
use super::keys::{Action, Keybindings};
use super::theme::{Theme, ThemeToken};
use crate::ai::model::ThinkingLevel;

pub use render::EditorRender;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorAction {
    /// The editor used the key (the text, cursor or popup may have changed).
    Handled,
    /// Enter: the prompt to send (trimmed, paste markers expanded). The editor is empty.
    Submit(String),
    /// Not an editor key: the app should handle it.
    Ignored,
}

/// `!cmd` runs in the shell; `!!cmd` does too but stays out of the model's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BashMode {
    Bash,
    BashExcludedFromContext,
}

/// The editor border colour: the bash-mode colour while a `!` command is typed,
/// otherwise the colour of the current thinking level (as pi).
pub fn border_style(theme: &Theme, thinking: ThinkingLevel, bash: Option<BashMode>) -> Style {
    theme.fg(border_token(thinking, bash))
}

/// The theme colour of the editor's border (pi's `getThinkingBorderColor`, or the bash
/// mode colour).
pub fn border_token(thinking: ThinkingLevel, bash: Option<BashMode>) -> ThemeToken {
    if bash.is_some() {
        return ThemeToken::BashMode;
    }
    match thinking {
        ThinkingLevel::Off => ThemeToken::ThinkingOff,
        ThinkingLevel::Minimal => ThemeToken::ThinkingMinimal,
        ThinkingLevel::Low => ThemeToken::ThinkingLow,
        ThinkingLevel::Medium => ThemeToken::ThinkingMedium,
        ThinkingLevel::High => ThemeToken::ThinkingHigh,
        ThinkingLevel::Xhigh => ThemeToken::ThinkingXhigh,
        ThinkingLevel::Max => ThemeToken::ThinkingMax,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastAction {
    None,
    TypeWord,
    Kill,
    Yank,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Jump {
    Forward,
    Backward,
}

/// The open completion popup (driven by `completion`).
struct Popup {
    pub list: SelectList,
    pub prefix: String,
    /// Opened by Tab path completion: updates keep forcing path suggestions.
    pub forced: bool,
}

/// What a key did to the popup.
enum PopupKey {
    Done,
    Submit,
    NotPopup,
}

/// Line endings to `\n`, tabs to 4 spaces (pi's editor normalisation); other control
/// characters are dropped so they can never reach the terminal.
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect()
}

/// The prompt editor.
pub struct Editor {
    lines: Vec<String>,
    cursor_line: usize,
    /// Byte offset into `lines[cursor_line]`, always on a segment boundary.
    cursor_col: usize,
    keys: Arc<Keybindings>,
    scroll: usize,
    /// Wrap width of the last render; vertical motion uses it.
    layout_width: usize,
    max_rows: usize,
    padding_x: usize,
    /// Sticky display column for Up/Down through shorter lines.
    preferred_col: Option<usize>,
    pastes: BTreeMap<u32, String>,
    paste_counter: u32,
    history: PromptHistory,
    history_index: Option<usize>,
    kill_ring: KillRing,
    last_action: LastAction,
    jump: Option<Jump>,
    undo: UndoStack,
    provider: Option<Arc<dyn AutocompleteProvider>>,
    popup: Option<Popup>,
    popup_max_visible: usize,
    border: Option<Style>,
    disable_submit: bool,
    /// Extensions take part in completion: each popup request is kept for the app
    /// (see [`Editor::take_completion_query`]).
    extension_completion: bool,
    completion_query: Option<CompletionQuery>,
    /// Counts popup requests; an extension's late answer to an older one is dropped.
    completion_generation: u64,
}

/// A completion request the app passes on to extensions (their providers and command
/// argument completions), with the editor's own suggestions as `base`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionQuery {
    pub lines: Vec<String>,
    pub line: usize,
    /// Byte offset in `lines[line]`.
    pub col: usize,
    pub force: bool,
    pub explicit_tab: bool,
    pub base: Option<super::autocomplete::Suggestions>,
    pub generation: u64,
}

impl Editor {
    pub fn new(keys: Arc<Keybindings>) -> Self {
        Editor {
            lines: vec![String::new()],
            cursor_line: 0,
            cursor_col: 0,
            keys,
            scroll: 0,
            layout_width: 80,
            max_rows: 5,
            padding_x: 0,
            preferred_col: None,
            pastes: BTreeMap::new(),
            paste_counter: 0,
            history: PromptHistory::default(),
            history_index: None,
            kill_ring: KillRing::default(),
            last_action: LastAction::None,
            jump: None,
            undo: UndoStack::default(),
            provider: None,
            popup: None,
            popup_max_visible: 5,
            border: None,
            disable_submit: false,
            extension_completion: false,
            completion_query: None,
            completion_generation: 0,
        }
    }

    /// Whether extensions take part in completion (they added providers or complete
    /// command arguments).
    pub fn set_extension_completion(&mut self, on: bool) {
        self.extension_completion = on;
        if !on {
            self.completion_query = None;
        }
    }

    /// The last popup request since the previous call, for extensions to answer.
    pub fn take_completion_query(&mut self) -> Option<CompletionQuery> {
        self.completion_query.take()
    }

    /// The visible text rows before the editor scrolls (pi: 30% of the terminal, at
    /// least 5).
    /// The most rows the prompt editor shows on a terminal `height` rows tall before it
    /// scrolls: pi's 30 % of the terminal, at least 5.
    pub fn rows_for_terminal(height: u16) -> usize {
        (height as usize * 3 / 10).max(5)
    }

    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// Horizontal padding inside the borders (pi's `editorPaddingX`).
    pub fn set_padding_x(&mut self, padding: usize) {
        self.padding_x = padding;
    }

    /// Rows of the completion popup (pi's `autocompleteMaxVisible`, 3–20).
    pub fn set_autocomplete_max_visible(&mut self, rows: usize) {
        self.popup_max_visible = rows.clamp(3, 20);
    }

    pub fn set_autocomplete_provider(&mut self, provider: Arc<dyn AutocompleteProvider>) {
        self.popup = None;
        self.provider = Some(provider);
    }

    pub fn set_keybindings(&mut self, keys: Arc<Keybindings>) {
        self.keys = keys;
    }

    /// Border colour; `None` uses the theme's `borderMuted`.
    pub fn set_border_style(&mut self, style: Option<Style>) {
        self.border = style;
    }

    /// While set, Enter does nothing (e.g. while a dialog owns the prompt).
    pub fn set_disable_submit(&mut self, disable: bool) {
        self.disable_submit = disable;
    }

    /// The text as typed (markers not expanded).
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The text with paste markers replaced by what was pasted.
    pub fn expanded_text(&self) -> String {
        self.expand_markers(&self.text())
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// (line, byte column) of the cursor.
    pub fn cursor(&self) -> (usize, usize) {
        (self.cursor_line, self.cursor_col)
    }

    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    pub fn is_showing_autocomplete(&self) -> bool {
        self.popup.is_some()
    }

    pub fn bash_mode(&self) -> Option<BashMode> {
        let text = self.lines[0].trim_start();
        if text.starts_with("!!") {
            Some(BashMode::BashExcludedFromContext)
        } else if text.starts_with('!') {
            Some(BashMode::Bash)
        } else {
            None
        }
    }

    /// Records a submitted prompt for Up/Down recall (the app calls this after a
    /// submit it accepted).
    pub fn add_to_history(&mut self, text: &str) {
        self.history.add(text);
    }

    /// Replaces the whole text (undoable); the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.popup = None;
        self.last_action = LastAction::None;
        self.history_index = None;
        let normalized = normalize(text);
        if self.text() != normalized {
            self.push_undo();
        }
        self.replace_text(&normalized);
    }

    /// Inserts text at the cursor as one undo step (e.g. an image path).
    pub fn insert_text_at_cursor(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.popup = None;
        self.push_undo();
        self.last_action = LastAction::None;
        self.history_index = None;
        self.insert_raw(&normalize(text));
    }

    /// Hides the completion popup.
    pub fn cancel_autocomplete(&mut self) {
        self.popup = None;
        self.completion_generation += 1;
    }

    fn replace_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_string).collect();
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.cursor_line = self.lines.len() - 1;
        self.set_col(self.lines[self.cursor_line].len());
        self.scroll = 0;
    }

    fn current(&self) -> &str {
        &self.lines[self.cursor_line]
    }

    fn set_col(&mut self, col: usize) {
        self.cursor_col = col;
        self.preferred_col = None;
    }

    fn valid_paste(&self) -> impl Fn(u32) -> bool + '_ {
        move |id| self.pastes.contains_key(&id)
    }

    fn segs(&self, text: &str) -> Vec<std::ops::Range<usize>> {
        segments(text, &self.valid_paste())
    }

    fn rows(&self) -> Vec<VisualLine> {
        visual_lines(&self.lines, self.layout_width, &self.valid_paste())
    }

    fn push_undo(&mut self) {
        self.undo.push(Snapshot {
            lines: self.lines.clone(),
            cursor_line: self.cursor_line,
            cursor_col: self.cursor_col,
        });
    }

    /// Handles one key press. Release events are ignored.
    pub fn handle_key(&mut self, key: &KeyEvent) -> EditorAction {
        if key.kind == KeyEventKind::Release {
            return EditorAction::Ignored;
        }
        let keys = Arc::clone(&self.keys);
        let is = |action: Action| keys.matches(key, action);

        if let Some(direction) = self.jump.take() {
            if is(Action::JumpForward) || is(Action::JumpBackward) {
                return EditorAction::Handled;
            }
            if let Some(c) = printable(key) {
                self.jump_to(c, direction);
                return EditorAction::Handled;
            }
        }
        if is(Action::Copy) {
            return EditorAction::Ignored;
        }
        if is(Action::Undo) {
            self.undo();
            return EditorAction::Handled;
        }
        if self.popup.is_some() {
            match self.handle_popup_key(key) {
                PopupKey::Done => return EditorAction::Handled,
                PopupKey::Submit => return self.submit(),
                PopupKey::NotPopup => {}
            }
        }
        if is(Action::Tab) {
            self.tab_completion();
            return EditorAction::Handled;
        }
        let action = keys.action_for(
            key,
            &[
                Action::HistoryPrevious,
                Action::HistoryNext,
                Action::DeleteToLineEnd,
                Action::DeleteToLineStart,
                Action::DeleteWordBackward,
                Action::DeleteWordForward,
                Action::DeleteCharBackward,
                Action::DeleteCharForward,
                Action::Yank,
                Action::YankPop,
                Action::CursorLineStart,
                Action::CursorLineEnd,
                Action::CursorWordLeft,
                Action::CursorWordRight,
                Action::NewLine,
                Action::Submit,
                Action::CursorUp,
                Action::CursorDown,
                Action::CursorRight,
                Action::CursorLeft,
                Action::PageUp,
                Action::PageDown,
                Action::JumpForward,
                Action::JumpBackward,
            ],
        );
        let shift_only = key.modifiers == KeyModifiers::SHIFT;
        match action {
            Some(Action::HistoryPrevious) => self.navigate_history(true),
            Some(Action::HistoryNext) => self.navigate_history(false),
            Some(Action::DeleteToLineEnd) => self.kill_to_line_end(),
            Some(Action::DeleteToLineStart) => self.kill_to_line_start(),
            Some(Action::DeleteWordBackward) => self.kill_word_backward(),
            Some(Action::DeleteWordForward) => self.kill_word_forward(),
            Some(Action::DeleteCharBackward) => self.backspace(),
            Some(Action::DeleteCharForward) => self.delete_forward(),
            Some(Action::Yank) => self.yank(),
            Some(Action::YankPop) => self.yank_pop(),
            Some(Action::CursorLineStart) => self.move_line_start(),
            Some(Action::CursorLineEnd) => self.move_line_end(),
            Some(Action::CursorWordLeft) => self.move_word_backward(),
            Some(Action::CursorWordRight) => self.move_word_forward(),
            Some(Action::NewLine) => self.new_line(),
            Some(Action::Submit) => return self.enter(),
            Some(Action::CursorUp) => self.up(),
            Some(Action::CursorDown) => self.down(),
            Some(Action::CursorRight) => self.move_right(),
            Some(Action::CursorLeft) => self.move_left(),
            Some(Action::PageUp) => self.page(false),
            Some(Action::PageDown) => self.page(true),
            Some(Action::JumpForward) => self.jump = Some(Jump::Forward),
            Some(Action::JumpBackward) => self.jump = Some(Jump::Backward),
            Some(_) => return EditorAction::Ignored,
            None => {
                // Shift+Backspace/Delete act unshifted.
                if shift_only && key.code == KeyCode::Backspace {
                    self.backspace();
                } else if shift_only && key.code == KeyCode::Delete {
                    self.delete_forward();
                } else if let Some(c) = printable(key) {
                    self.insert_char(c);
                } else {
                    return EditorAction::Ignored;
                }
            }
        }
        EditorAction::Handled
    }

    /// Enter: submit, or a newline when the character before the cursor is `\` (a
    /// fallback for terminals that cannot send Shift+Enter).
    fn enter(&mut self) -> EditorAction {
        if self.disable_submit {
            return EditorAction::Handled;
        }
        if self.current()[..self.cursor_col].ends_with('\\') {
            self.backspace();
            self.new_line();
            return EditorAction::Handled;
        }
        self.submit()
    }

    fn submit(&mut self) -> EditorAction {
        self.popup = None;
        let result = self.expanded_text().trim().to_string();
        self.lines = vec![String::new()];
        self.cursor_line = 0;
        self.set_col(0);
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll = 0;
        self.undo.clear();
        self.last_action = LastAction::None;
        if result.is_empty() {
            EditorAction::Handled
        } else {
            EditorAction::Submit(result)
        }
    }

    fn undo(&mut self) {
        self.history_index = None;
        if let Some(s) = self.undo.pop() {
            self.lines = s.lines;
            self.cursor_line = s.cursor_line;
            self.cursor_col = s.cursor_col;
            self.last_action = LastAction::None;
            self.preferred_col = None;
        }
    }

    /// Inserts text (may contain `\n`) at the cursor without an undo step.
    fn insert_raw(&mut self, text: &str) {
        let line = std::mem::take(&mut self.lines[self.cursor_line]);
        let (before, after) = line.split_at(self.cursor_col);
        let mut parts: Vec<&str> = text.split('\n').collect();
        if parts.len() == 1 {
            self.lines[self.cursor_line] = format!("{before}{text}{after}");
            self.set_col(self.cursor_col + text.len());
            return;
        }
        let last = parts.pop().unwrap_or("");
        let first = parts.remove(0);
        let mut new_lines = vec![format!("{before}{first}")];
        new_lines.extend(parts.iter().map(|s| s.to_string()));
        new_lines.push(format!("{last}{after}"));
        let count = new_lines.len();
        self.lines
            .splice(self.cursor_line..=self.cursor_line, new_lines);
        self.cursor_line += count - 1;
        self.set_col(last.len());
    }

    fn insert_char(&mut self, c: char) {
        self.history_index = None;
        // fish-style undo: a run of word characters is one step; each space is its own.
        if c.is_whitespace() || self.last_action != LastAction::TypeWord {
            self.push_undo();
        }
        self.last_action = LastAction::TypeWord;
        let mut buf = [0u8; 4];
        self.insert_raw(c.encode_utf8(&mut buf));
        self.after_insert(c);
    }

    fn new_line(&mut self) {
        self.popup = None;
        self.history_index = None;
        self.last_action = LastAction::None;
        self.push_undo();
        self.insert_raw("\n");
    }
}

/// The character a key types, if it types one (no Ctrl/Alt/Super).
fn printable(key: &KeyEvent) -> Option<char> {
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    let typing = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
    (typing && !c.is_control()).then_some(c)
}

#[cfg(test)]
mod tests;
