//! The `/fork` selector ("Fork from Message"): the session's user messages, oldest
//! first, two rows each (the text on one line, then its position), the newest selected
//! when it opens. Enter picks the message the new session is forked from; the app does
//! the forking (`AgentSession::fork`). Pure state and rendering, like the other pickers.

use crossterm::event::{KeyEvent, KeyEventKind};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Ui, rule, styled_text};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize, truncate_to_width};
use crate::modes::interactive::theme::ThemeToken;
use crate::session::entry::EntryId;

/// Messages listed at once.
const MAX_VISIBLE: usize = 10;

/// A user message that can be forked from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkMessage {
    pub id: EntryId,
    pub text: String,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkOutcome {
    /// Keep the selector open (redraw).
    None,
    /// Fork from this user message.
    Selected(EntryId),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct UserMessageSelector {
    messages: Vec<ForkMessage>,
    selected: usize,
}

impl UserMessageSelector {
    /// `messages` oldest first; the cursor starts on `initial` if given and present,
    /// otherwise on the newest message.
    pub fn new(messages: Vec<ForkMessage>, initial: Option<&EntryId>) -> Self {
        let selected = initial
            .and_then(|id| messages.iter().position(|m| &m.id == id))
            .unwrap_or(messages.len().saturating_sub(1));
        UserMessageSelector { messages, selected }
    }

    /// From `(entry id, text)` pairs as `AgentSession::fork_messages` returns them.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let messages = pairs
            .into_iter()
            .map(|(id, text)| ForkMessage {
                id: EntryId(id),
                text,
            })
            .collect();
        UserMessageSelector::new(messages, None)
    }

    /// No user messages (the app says "No messages to fork from" instead of opening).
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn selected_id(&self) -> Option<&EntryId> {
        self.messages.get(self.selected).map(|m| &m.id)
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ForkOutcome {
        if key.kind == KeyEventKind::Release {
            return ForkOutcome::None;
        }
        let n = self.messages.len();
        let actions = [
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectConfirm,
            Action::SelectCancel,
        ];
        match keys.action_for(key, &actions) {
            // Both directions wrap around, as in pi.
            Some(Action::SelectUp) if n > 0 => {
                self.selected = self.selected.checked_sub(1).unwrap_or(n - 1);
            }
            Some(Action::SelectDown) if n > 0 => self.selected = (self.selected + 1) % n,
            Some(Action::SelectConfirm) => {
                if let Some(id) = self.selected_id() {
                    return ForkOutcome::Selected(id.clone());
                }
            }
            Some(Action::SelectCancel) => return ForkOutcome::Cancelled,
            _ => {}
        }
        ForkOutcome::None
    }

    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![Line::default()];
        out.extend(styled_text(
            "Fork from Message",
            ratatui::style::Style::default().add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        out.extend(styled_text(
            "Select a user message to copy the active path up to that point into a new session",
            muted,
            width,
            1,
        ));
        out.push(Line::default());
        out.push(border.clone());
        out.push(Line::default());
        out.extend(self.list(width, ui));
        out.push(Line::default());
        out.push(border);
        out
    }

    fn list(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let fit = |text: String| truncate_to_width(&text, width, "...").into_owned();
        let n = self.messages.len();
        if n == 0 {
            return vec![Line::from(Span::styled(
                fit("  No user messages found".into()),
                muted,
            ))];
        }
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        let mut out = Vec::new();
        for (i, message) in self.messages.iter().enumerate().take(end).skip(start) {
            let selected = i == self.selected;
            let flat = message.text.replace('\n', " ");
            let text = sanitize(flat.trim()).trim().to_string();
            let text = truncate_to_width(&text, width.saturating_sub(2), "...").into_owned();
            let line = if selected {
                vec![
                    Span::styled("› ", ui.fg(ThemeToken::Accent)),
                    Span::styled(
                        text,
                        ratatui::style::Style::default().add_modifier(Modifier::BOLD),
                    ),
                ]
            } else {
                vec![Span::raw("  "), Span::raw(text)]
            };
            out.push(crate::modes::interactive::text::truncate_line(
                Line::from(line),
                width,
                Span::raw(""),
            ));
            out.push(Line::from(Span::styled(
                fit(format!("  Message {} of {n}", i + 1)),
                muted,
            )));
            out.push(Line::default());
        }
        if start > 0 || end < n {
            out.push(Line::from(Span::styled(
                fit(format!("  ({}/{n})", self.selected + 1)),
                muted,
            )));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn messages(n: usize) -> Vec<(String, String)> {
        (1..=n)
            .map(|i| (format!("id{i}"), format!("Interactive prompt {i}")))
            .collect()
    }

    fn press(sel: &mut UserMessageSelector, code: KeyCode) -> ForkOutcome {
        sel.handle_key(
            &KeyEvent::new(code, KeyModifiers::NONE),
            &Keybindings::defaults(),
        )
    }

    #[test]
    fn lists_user_messages_with_the_newest_selected() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let mut sel = UserMessageSelector::from_pairs(messages(3));
        insta::assert_snapshot!(plain(&sel.render(60, &ui), 60), @r"

             Fork from Message
             Select a user message to copy the active path up to that
             point into a new session

            ────────────────────────────────────────────────────────────

              Interactive prompt 1
              Message 1 of 3

              Interactive prompt 2
              Message 2 of 3

            › Interactive prompt 3
              Message 3 of 3


            ────────────────────────────────────────────────────────────
        ");
        assert_eq!(press(&mut sel, KeyCode::Up), ForkOutcome::None);
        assert_eq!(
            press(&mut sel, KeyCode::Enter),
            ForkOutcome::Selected(EntryId::from("id2"))
        );
        assert_eq!(press(&mut sel, KeyCode::Esc), ForkOutcome::Cancelled);
    }

    #[test]
    fn long_lists_scroll_and_arrows_wrap() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let mut pairs = messages(14);
        pairs[12].1 = "a long\nmulti-line prompt with 中文 that does not fit in the width".into();
        let mut sel = UserMessageSelector::new(
            pairs
                .into_iter()
                .map(|(id, text)| ForkMessage {
                    id: EntryId(id),
                    text,
                })
                .collect(),
            Some(&EntryId::from("id13")),
        );
        insta::assert_snapshot!(plain(&sel.list(40, &ui), 40), @r"
              Interactive prompt 5
              Message 5 of 14

              Interactive prompt 6
              Message 6 of 14

              Interactive prompt 7
              Message 7 of 14

              Interactive prompt 8
              Message 8 of 14

              Interactive prompt 9
              Message 9 of 14

              Interactive prompt 10
              Message 10 of 14

              Interactive prompt 11
              Message 11 of 14

              Interactive prompt 12
              Message 12 of 14

            › a long multi-line prompt with 中文 ...
              Message 13 of 14

              Interactive prompt 14
              Message 14 of 14

              (13/14)
        ");
        press(&mut sel, KeyCode::Down);
        press(&mut sel, KeyCode::Down);
        assert_eq!(sel.selected_id(), Some(&EntryId::from("id1")));
        press(&mut sel, KeyCode::Up);
        assert_eq!(sel.selected_id(), Some(&EntryId::from("id14")));
        for width in 1..20 {
            plain(&sel.render(width, &ui), width);
        }
    }

    #[test]
    fn an_empty_list_says_so_and_enter_does_nothing() {
        let t = theme();
        let keys = Keybindings::defaults();
        let mut sel = UserMessageSelector::from_pairs(Vec::new());
        assert!(sel.is_empty());
        insta::assert_snapshot!(plain(&sel.list(40, &Ui::new(&t, &keys)), 40), @"  No user messages found");
        assert_eq!(press(&mut sel, KeyCode::Enter), ForkOutcome::None);
        assert_eq!(press(&mut sel, KeyCode::Down), ForkOutcome::None);
    }
}
