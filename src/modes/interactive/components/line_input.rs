//! A one-line text field (pi's `Input`): the search box of the pickers and the rename
//! field of the session picker. It edits with the user's editor keys (cursor moves, word
//! and line deletes), inserts typed and pasted text on one line, and draws as `> text`
//! with the cursor as an inverted cell, scrolling sideways when the text is wider than
//! the screen. Multi-line editing is the prompt editor's job, not this one's.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize_single_line, str_width};

/// What a key did to the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputChange {
    /// The text changed.
    Edited,
    /// Only the cursor moved.
    Moved,
    /// Not an editing key.
    Ignored,
}

const EDIT_ACTIONS: &[Action] = &[
    Action::CursorLeft,
    Action::CursorRight,
    Action::CursorWordLeft,
    Action::CursorWordRight,
    Action::CursorLineStart,
    Action::CursorLineEnd,
    Action::DeleteCharBackward,
    Action::DeleteCharForward,
    Action::DeleteWordBackward,
    Action::DeleteWordForward,
    Action::DeleteToLineStart,
    Action::DeleteToLineEnd,
];

/// The prompt drawn in front of the text.
const PROMPT: &str = "> ";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineInput {
    value: String,
    /// Byte offset of the cursor, always on a grapheme boundary.
    cursor: usize,
}

impl LineInput {
    pub fn new() -> Self {
        LineInput::default()
    }

    /// A field holding `text` (made one line) with the cursor at its end.
    pub fn with_value(text: &str) -> Self {
        let mut input = LineInput::new();
        input.set_value(text);
        input
    }

    pub fn value(&self) -> &str {
        &self.value
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Replaces the text (made one line) and puts the cursor at the end.
    pub fn set_value(&mut self, text: &str) {
        self.value = sanitize_single_line(text);
        self.cursor = self.value.len();
    }

    /// Inserts text at the cursor (a paste): line breaks and control characters become
    /// spaces so the field stays one line.
    pub fn insert_str(&mut self, text: &str) {
        let clean: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        self.value.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
    }

    /// Applies an editing key. Printable characters (without Ctrl/Alt) are inserted.
    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> InputChange {
        if key.kind == KeyEventKind::Release {
            return InputChange::Ignored;
        }
        if let Some(action) = keys.action_for(key, EDIT_ACTIONS) {
            return self.apply(action);
        }
        match key.code {
            KeyCode::Char(c)
                if !key.modifiers.intersects(
                    KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER,
                ) && !c.is_control() =>
            {
                let mut buf = [0u8; 4];
                self.insert_str(c.encode_utf8(&mut buf));
                InputChange::Edited
            }
            _ => InputChange::Ignored,
        }
    }

    fn apply(&mut self, action: Action) -> InputChange {
        let before = (self.value.len(), self.cursor);
        match action {
            Action::CursorLeft => self.cursor = self.prev_boundary(self.cursor),
            Action::CursorRight => self.cursor = self.next_boundary(self.cursor),
            Action::CursorWordLeft => self.cursor = self.word_start_before(self.cursor),
            Action::CursorWordRight => self.cursor = self.word_end_after(self.cursor),
            Action::CursorLineStart => self.cursor = 0,
            Action::CursorLineEnd => self.cursor = self.value.len(),
            Action::DeleteCharBackward => {
                let start = self.prev_boundary(self.cursor);
                self.delete(start, self.cursor);
            }
            Action::DeleteCharForward => {
                let end = self.next_boundary(self.cursor);
                self.delete(self.cursor, end);
            }
            Action::DeleteWordBackward => {
                let start = self.word_start_before(self.cursor);
                self.delete(start, self.cursor);
            }
            Action::DeleteWordForward => {
                let end = self.word_end_after(self.cursor);
                self.delete(self.cursor, end);
            }
            Action::DeleteToLineStart => self.delete(0, self.cursor),
            Action::DeleteToLineEnd => self.delete(self.cursor, self.value.len()),
            _ => return InputChange::Ignored,
        }
        if self.value.len() != before.0 {
            InputChange::Edited
        } else if self.cursor != before.1 {
            InputChange::Moved
        } else {
            InputChange::Ignored
        }
    }

    fn delete(&mut self, start: usize, end: usize) {
        if start < end {
            self.value.replace_range(start..end, "");
            self.cursor = start;
        }
    }

    fn prev_boundary(&self, at: usize) -> usize {
        self.value[..at]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self, at: usize) -> usize {
        self.value[at..]
            .graphemes(true)
            .next()
            .map_or(at, |g| at + g.len())
    }

    fn word_start_before(&self, at: usize) -> usize {
        let head = &self.value[..at];
        let trimmed = head.trim_end();
        trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8())
    }

    fn word_end_after(&self, at: usize) -> usize {
        let tail = &self.value[at..];
        let skipped = tail.len() - tail.trim_start().len();
        let rest = &tail[skipped..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        at + skipped + word
    }

    /// `> text` in at most `width` columns, the cursor shown as an inverted cell when
    /// `focused`. Long text scrolls sideways (like pi's input) so the cursor stays visible.
    pub fn render(&self, width: usize, focused: bool) -> Line<'static> {
        self.render_with_cursor(width, focused).0
    }

    /// [`LineInput::render`] plus the column of the cursor cell, where the app puts the
    /// terminal cursor so input methods (CJK IMEs) open at the right place.
    pub fn render_with_cursor(&self, width: usize, focused: bool) -> (Line<'static>, usize) {
        let prompt_width = str_width(PROMPT);
        if width <= prompt_width {
            let prompt: String = PROMPT.chars().take(width).collect();
            return (Line::from(prompt), width.saturating_sub(1));
        }
        let available = width - prompt_width;
        let graphemes: Vec<(usize, &str)> = self.value.grapheme_indices(true).collect();
        let widths: Vec<usize> = graphemes.iter().map(|(_, g)| str_width(g)).collect();
        let cursor_index = graphemes
            .iter()
            .position(|(i, _)| *i >= self.cursor)
            .unwrap_or(graphemes.len());
        // After the last character the cursor needs a cell of its own.
        let end_cell = usize::from(focused && cursor_index == graphemes.len());
        let total: usize = widths.iter().sum();
        let cursor_col: usize = widths[..cursor_index].iter().sum();
        let scroll_width = available.saturating_sub(end_cell).max(1);
        let start_col = if total + end_cell <= available {
            0
        } else {
            let half = scroll_width / 2;
            if cursor_col < half {
                0
            } else if cursor_col > total.saturating_sub(half) {
                total.saturating_sub(scroll_width)
            } else {
                cursor_col - half
            }
        };
        let mut spans = vec![Span::raw(PROMPT)];
        let mut text = String::new();
        let mut col = 0;
        let mut used = 0;
        let mut cursor_at = None;
        for (i, (_, g)) in graphemes.iter().enumerate() {
            let w = widths[i];
            let at = col;
            col += w;
            if at < start_col {
                continue;
            }
            if used + w > scroll_width {
                break;
            }
            if i == cursor_index {
                cursor_at = Some(prompt_width + used);
            }
            used += w;
            if focused && i == cursor_index {
                spans.push(Span::raw(std::mem::take(&mut text)));
                spans.push(Span::styled((*g).to_string(), reversed()));
            } else {
                text.push_str(g);
            }
        }
        spans.push(Span::raw(text));
        if end_cell == 1 && used < available {
            spans.push(Span::styled(" ", reversed()));
        }
        let cursor = cursor_at.unwrap_or(prompt_width + used).min(width - 1);
        (Line::from(spans), cursor)
    }
}

fn reversed() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::plain;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn typed(text: &str) -> LineInput {
        let keys = Keybindings::defaults();
        let mut input = LineInput::new();
        for c in text.chars() {
            input.handle_key(&key(KeyCode::Char(c)), &keys);
        }
        input
    }

    #[test]
    fn typing_and_editing_keys_change_the_text() {
        let keys = Keybindings::defaults();
        let mut input = typed("hello wide world");
        assert_eq!(input.handle_key(&ctrl('w'), &keys), InputChange::Edited);
        assert_eq!(input.value(), "hello wide ");
        input.handle_key(&key(KeyCode::Backspace), &keys);
        assert_eq!(input.value(), "hello wide");
        assert_eq!(input.handle_key(&ctrl('a'), &keys), InputChange::Moved);
        input.handle_key(&key(KeyCode::Char('>')), &keys);
        assert_eq!(input.value(), ">hello wide");
        input.handle_key(&ctrl('k'), &keys);
        assert_eq!(input.value(), ">");
        assert_eq!(input.handle_key(&ctrl('s'), &keys), InputChange::Ignored);
        input.handle_key(&ctrl('u'), &keys);
        assert!(input.is_empty());
    }

    #[test]
    fn cursor_moves_over_whole_graphemes() {
        let keys = Keybindings::defaults();
        let mut input = LineInput::with_value("a🇺🇸b");
        input.handle_key(&key(KeyCode::Left), &keys);
        input.handle_key(&key(KeyCode::Left), &keys);
        input.handle_key(&key(KeyCode::Delete), &keys);
        assert_eq!(input.value(), "ab");
    }

    #[test]
    fn pasted_line_breaks_become_spaces() {
        let mut input = LineInput::new();
        input.insert_str("one\ntwo\tthree");
        assert_eq!(input.value(), "one two three");
    }

    #[test]
    fn long_text_scrolls_to_keep_the_cursor_visible() {
        let keys = Keybindings::defaults();
        let mut input = typed("the quick brown fox jumps over the lazy dog");
        let (line, cursor) = input.render_with_cursor(20, true);
        assert_eq!(plain(&[line], 20), "> over the lazy dog");
        assert_eq!(cursor, 19);
        for _ in 0..40 {
            input.handle_key(&key(KeyCode::Left), &keys);
        }
        let (line, cursor) = input.render_with_cursor(20, true);
        assert_eq!(plain(&[line], 20), "> the quick brown fo");
        assert_eq!(cursor, 5);
        for width in 0..30 {
            plain(&[input.render(width, true)], width);
            plain(
                &[LineInput::with_value("中文字符中文字符中文字符").render(width, true)],
                width,
            );
        }
    }
}
