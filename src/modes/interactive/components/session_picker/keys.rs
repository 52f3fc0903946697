//! What keys do in the session picker: pi's key order (scope, sort, name filter, path,
//! delete, rename, moves, confirm, cancel, then the search box), the delete confirmation
//! that waits for Enter or Escape, and the rename field.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{ERROR_MS, MAX_VISIBLE, Mode, PickerOutcome, Scope, SessionPicker};
use crate::modes::interactive::components::line_input::{InputChange, LineInput};
use crate::modes::interactive::keys::{Action, Keybindings};

impl SessionPicker {
    /// Inserts pasted text into the search box (or the rename field).
    pub fn paste(&mut self, text: &str) -> PickerOutcome {
        match &mut self.mode {
            Mode::List => {
                self.query.insert_str(text);
                self.set_query_changed();
            }
            Mode::Rename { input, .. } => input.insert_str(text),
            Mode::ConfirmDelete(_) => return PickerOutcome::Ignored,
        }
        PickerOutcome::Handled
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> PickerOutcome {
        match &mut self.mode {
            Mode::ConfirmDelete(path) => {
                match keys.action_for(key, &[Action::SelectConfirm, Action::SelectCancel]) {
                    Some(Action::SelectConfirm) => {
                        let path = path.clone();
                        self.mode = Mode::List;
                        PickerOutcome::Delete { path }
                    }
                    Some(_) => {
                        self.mode = Mode::List;
                        PickerOutcome::Handled
                    }
                    // Everything else waits for an answer.
                    None => PickerOutcome::Ignored,
                }
            }
            Mode::Rename { path, input } => {
                match keys.action_for(key, &[Action::SelectCancel, Action::SelectConfirm]) {
                    Some(Action::SelectCancel) => {
                        self.mode = Mode::List;
                        PickerOutcome::Handled
                    }
                    Some(_) => {
                        let name = input.value().trim().to_string();
                        if name.is_empty() {
                            return PickerOutcome::Ignored;
                        }
                        let path = path.clone();
                        self.mode = Mode::List;
                        PickerOutcome::Rename { path, name }
                    }
                    None => match input.handle_key(key, keys) {
                        InputChange::Ignored => PickerOutcome::Ignored,
                        _ => PickerOutcome::Handled,
                    },
                }
            }
            Mode::List => self.handle_list_key(key, keys),
        }
    }

    fn handle_list_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> PickerOutcome {
        const LIST_ACTIONS: &[Action] = &[
            Action::Tab,
            Action::SessionToggleSort,
            Action::SessionToggleNamedFilter,
            Action::SessionTogglePath,
            Action::SessionDelete,
            Action::SessionRename,
            Action::SessionDeleteNoninvasive,
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectPageUp,
            Action::SelectPageDown,
            Action::SelectConfirm,
            Action::SelectCancel,
        ];
        let last = self.rows.len().saturating_sub(1);
        match keys.action_for(key, LIST_ACTIONS) {
            Some(Action::Tab) => {
                self.scope = match self.scope {
                    Scope::Current => Scope::All,
                    Scope::All => Scope::Current,
                };
                self.refilter(None);
            }
            Some(Action::SessionToggleSort) => {
                self.sort = self.sort.next();
                self.refilter(None);
            }
            Some(Action::SessionToggleNamedFilter) => {
                self.named_only = !self.named_only;
                self.refilter(None);
            }
            Some(Action::SessionTogglePath) => self.show_path = !self.show_path,
            Some(Action::SessionDelete) => self.start_delete(),
            Some(Action::SessionRename) => {
                if !self.can_rename {
                    return PickerOutcome::Ignored;
                }
                let Some(session) = self.selected_session() else {
                    return PickerOutcome::Ignored;
                };
                self.mode = Mode::Rename {
                    path: session.path.clone(),
                    input: LineInput::with_value(session.name.as_deref().unwrap_or("")),
                };
            }
            Some(Action::SessionDeleteNoninvasive) => {
                if self.query.is_empty() {
                    self.start_delete();
                } else {
                    // With text in the box it is an ordinary Backspace.
                    let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
                    if self.query.handle_key(&backspace, keys) == InputChange::Edited {
                        self.set_query_changed();
                    }
                }
            }
            Some(Action::SelectUp) => self.selected = self.selected.saturating_sub(1),
            Some(Action::SelectDown) => self.selected = (self.selected + 1).min(last),
            Some(Action::SelectPageUp) => self.selected = self.selected.saturating_sub(MAX_VISIBLE),
            Some(Action::SelectPageDown) => self.selected = (self.selected + MAX_VISIBLE).min(last),
            Some(Action::SelectConfirm) => {
                return match self.selected_session() {
                    Some(s) => PickerOutcome::Selected(s.path.clone()),
                    None => PickerOutcome::Ignored,
                };
            }
            Some(Action::SelectCancel) => return PickerOutcome::Cancelled,
            _ => {
                return match self.query.handle_key(key, keys) {
                    InputChange::Edited => {
                        self.set_query_changed();
                        PickerOutcome::Handled
                    }
                    InputChange::Moved => PickerOutcome::Handled,
                    InputChange::Ignored => PickerOutcome::Ignored,
                };
            }
        }
        PickerOutcome::Handled
    }

    fn start_delete(&mut self) {
        let Some(session) = self.selected_session() else {
            return;
        };
        let path = session.path.clone();
        if self.is_current(&path) {
            self.set_status(
                "Cannot delete the currently active session".into(),
                true,
                ERROR_MS,
            );
            return;
        }
        self.mode = Mode::ConfirmDelete(path);
    }
}
