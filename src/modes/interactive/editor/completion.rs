//! The completion popup: when it opens (typing `/` at the start, `@` at a word start,
//! Tab), how it follows typing, and how keys drive it while it is open.

use crossterm::event::KeyEvent;

use super::{Editor, LastAction, Popup, PopupKey};
use crate::modes::interactive::autocomplete::{CompletionItem, Suggestions};
use crate::modes::interactive::components::select_list::{SelectLayout, SelectList};
use crate::modes::interactive::keys::Action;

/// `@…` being typed: a word starting with `@` right before the cursor.
fn in_at_context(before: &str) -> bool {
    let token_start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    before[token_start..].starts_with('@')
}

/// `#…` being typed: pi's editor also opens completion there (extension providers, e.g.
/// issue numbers, answer it).
fn in_hash_context(before: &str) -> bool {
    let token_start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    before[token_start..].starts_with('#')
}

impl Editor {
    fn slash_context(&self, before: &str) -> bool {
        self.cursor_line == 0 && before.trim_start().starts_with('/')
    }

    pub(super) fn handle_popup_key(&mut self, key: &KeyEvent) -> PopupKey {
        let keys = std::sync::Arc::clone(&self.keys);
        let Some(popup) = self.popup.as_mut() else {
            return PopupKey::NotPopup;
        };
        if keys.matches(key, Action::SelectCancel) {
            self.popup = None;
            // An extension's answer still on its way must not reopen it.
            self.completion_generation += 1;
            return PopupKey::Done;
        }
        if keys.matches(key, Action::SelectUp) {
            popup.list.select_previous();
            return PopupKey::Done;
        }
        if keys.matches(key, Action::SelectDown) {
            popup.list.select_next();
            return PopupKey::Done;
        }
        let tab = keys.matches(key, Action::Tab);
        let confirm = keys.matches(key, Action::SelectConfirm);
        if !tab && !confirm {
            return PopupKey::NotPopup;
        }
        let Some(item) = popup.list.selected_item().cloned() else {
            return PopupKey::NotPopup;
        };
        let prefix = popup.prefix.clone();
        self.apply_completion(&item, &prefix);
        self.popup = None;
        if confirm && prefix.starts_with('/') {
            // Enter on a command completes it and sends it.
            return PopupKey::Submit;
        }
        PopupKey::Done
    }

    fn apply_completion(&mut self, item: &CompletionItem, prefix: &str) {
        let Some(provider) = self.provider.clone() else {
            return;
        };
        self.push_undo();
        self.last_action = LastAction::None;
        let done = provider.apply(&self.lines, self.cursor_line, self.cursor_col, item, prefix);
        self.lines = done.lines;
        self.cursor_line = done.cursor_line.min(self.lines.len().saturating_sub(1));
        let len = self.lines[self.cursor_line].len();
        let mut col = done.cursor_col.min(len);
        while !self.lines[self.cursor_line].is_char_boundary(col) {
            col -= 1;
        }
        self.set_col(col);
    }

    /// Asks the provider and shows (or hides) the popup.
    fn request(&mut self, force: bool, explicit_tab: bool) {
        let Some(provider) = self.provider.clone() else {
            return;
        };
        if force
            && !provider.should_trigger_file_completion(
                &self.lines,
                self.cursor_line,
                self.cursor_col,
            )
        {
            return;
        }
        let suggestions =
            provider.suggestions(&self.lines, self.cursor_line, self.cursor_col, force);
        self.completion_generation += 1;
        if self.extension_completion {
            self.completion_query = Some(super::CompletionQuery {
                lines: self.lines.clone(),
                line: self.cursor_line,
                col: self.cursor_col,
                force,
                explicit_tab,
                base: suggestions.clone(),
                generation: self.completion_generation,
            });
        }
        let Some(Suggestions { items, prefix }) = suggestions.filter(|s| !s.items.is_empty())
        else {
            self.popup = None;
            return;
        };
        if force && explicit_tab && items.len() == 1 {
            self.apply_completion(&items[0], &prefix);
            self.popup = None;
            return;
        }
        self.show_suggestions(items, prefix, force);
    }

    /// The extensions' answer to completion request `query`: shown when the editor is
    /// as it was then (pi drops a stale answer); no suggestions close the popup.
    pub fn extension_suggestions(
        &mut self,
        query: &super::CompletionQuery,
        suggestions: Option<Suggestions>,
    ) {
        if query.generation != self.completion_generation
            || self.lines != query.lines
            || (self.cursor_line, self.cursor_col) != (query.line, query.col)
        {
            return;
        }
        if suggestions == query.base {
            return;
        }
        let Some(Suggestions { items, prefix }) = suggestions.filter(|s| !s.items.is_empty())
        else {
            self.popup = None;
            return;
        };
        if query.force && query.explicit_tab && items.len() == 1 {
            self.apply_completion(&items[0], &prefix);
            self.popup = None;
            return;
        }
        self.show_suggestions(items, prefix, query.force);
    }

    fn show_suggestions(&mut self, items: Vec<CompletionItem>, prefix: String, force: bool) {
        // Highlight an exact match, else the first item starting with what was typed.
        let best = items.iter().position(|i| i.value == prefix).or_else(|| {
            items
                .iter()
                .position(|i| !prefix.is_empty() && i.value.starts_with(&prefix))
        });
        let mut list = SelectList::new(items, self.popup_max_visible);
        if prefix.starts_with('/') {
            list = list.with_layout(SelectLayout::COMMANDS);
        }
        if let Some(best) = best {
            list.set_selected(best);
        }
        self.popup = Some(super::completion::Popup {
            list,
            prefix,
            forced: force,
        });
    }

    pub(super) fn tab_completion(&mut self) {
        if self.provider.is_none() {
            return;
        }
        let before = self.current()[..self.cursor_col].to_string();
        if self.slash_context(&before) && !before.trim_start().contains(' ') {
            self.request(false, true);
        } else {
            self.request(true, true);
        }
    }

    /// After typing `c`: open or refresh the popup where pi would.
    pub(super) fn after_insert(&mut self, c: char) {
        if let Some(popup) = &self.popup {
            let forced = popup.forced;
            self.request(forced, false);
            return;
        }
        let before = self.current()[..self.cursor_col].to_string();
        let at_message_start = self.cursor_line == 0 && {
            let t = before.trim();
            t.is_empty() || t == "/"
        };
        if c == '/' && at_message_start {
            self.request(false, false);
        } else if c == '@' || (c == '#' && self.extension_completion) {
            let prev = before[..before.len() - 1].chars().next_back();
            if prev.is_none_or(|p| p == ' ' || p == '\t') {
                self.request(false, false);
            }
        } else if (c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            && (self.slash_context(&before)
                || in_at_context(&before)
                || (self.extension_completion && in_hash_context(&before)))
        {
            self.request(false, false);
        }
    }

    /// After a deletion: refresh the popup, or reopen it in a completion context.
    pub(super) fn after_delete(&mut self) {
        if let Some(popup) = &self.popup {
            let forced = popup.forced;
            self.request(forced, false);
            return;
        }
        let before = self.current()[..self.cursor_col].to_string();
        if self.slash_context(&before)
            || in_at_context(&before)
            || (self.extension_completion && in_hash_context(&before))
        {
            self.request(false, false);
        }
    }
}
