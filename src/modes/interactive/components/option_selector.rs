//! A question with a few answers, drawn as pi's `ExtensionSelectorComponent`: the
//! dialogs of `/import` ("Replace current session with …?"), a session whose folder is
//! gone, the login method, and extensions' `select` and `confirm`. Every answer is listed
//! (no scrolling); ↑/↓ (or `k`/`j`) move without wrapping around. Pure state and
//! rendering.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Ui, rule, styled_text, text_block};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::theme::ThemeToken;

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionOutcome {
    /// Nothing to do (a key the dialog does not use).
    Ignored,
    /// The highlight moved.
    Moved,
    /// Enter on the answer at this index.
    Chosen(usize),
    /// Escape (or Ctrl+C).
    Cancelled,
}

/// The highlighted answer of a list of `len` answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionSelector {
    selected: usize,
    len: usize,
}

impl OptionSelector {
    pub fn new(len: usize) -> Self {
        OptionSelector { selected: 0, len }
    }

    /// A list of `len` answers with answer `selected` highlighted.
    pub fn starting_at(len: usize, selected: usize) -> Self {
        OptionSelector {
            selected: selected.min(len.saturating_sub(1)),
            len,
        }
    }

    pub fn selected(&self) -> usize {
        self.selected
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> OptionOutcome {
        if key.kind == KeyEventKind::Release {
            return OptionOutcome::Ignored;
        }
        let plain = |c: char| key.code == KeyCode::Char(c) && key.modifiers == KeyModifiers::NONE;
        let actions = [
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectConfirm,
            Action::SelectCancel,
        ];
        let last = self.len.saturating_sub(1);
        match keys.action_for(key, &actions) {
            Some(Action::SelectUp) => self.selected = self.selected.saturating_sub(1),
            Some(Action::SelectDown) => self.selected = (self.selected + 1).min(last),
            Some(Action::SelectConfirm) if self.len > 0 => {
                return OptionOutcome::Chosen(self.selected);
            }
            Some(Action::SelectConfirm) => return OptionOutcome::Ignored,
            Some(Action::SelectCancel) => return OptionOutcome::Cancelled,
            _ if plain('k') => self.selected = self.selected.saturating_sub(1),
            _ if plain('j') => self.selected = (self.selected + 1).min(last),
            _ => return OptionOutcome::Ignored,
        }
        OptionOutcome::Moved
    }

    /// A rule, the title (its lines in bold accent), the answers (`→` before the
    /// highlighted one), the key hints and a closing rule, with blank rows between.
    pub fn render(
        &self,
        title: &str,
        labels: &[&str],
        width: usize,
        ui: &Ui<'_>,
    ) -> Vec<Line<'static>> {
        let border = rule(width, ui.fg(ThemeToken::Border));
        let accent = ui.fg(ThemeToken::Accent);
        let mut out = vec![border.clone(), Line::default()];
        out.extend(styled_text(
            title,
            accent.add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        out.push(Line::default());
        out.extend(choice_lines(
            labels.iter().copied(),
            self.selected,
            width,
            ui,
        ));
        out.push(border);
        out
    }
}

/// pi's choice rows (`→` on the chosen one, in the accent colour), then a blank row, the
/// key hints and another blank row: the body of its option selectors and of the branch
/// summary question.
pub fn choice_lines<'a>(
    labels: impl IntoIterator<Item = &'a str>,
    selected: usize,
    width: usize,
    ui: &Ui<'_>,
) -> Vec<Line<'static>> {
    let accent = ui.fg(ThemeToken::Accent);
    let mut out = Vec::new();
    for (i, label) in labels.into_iter().enumerate() {
        let spans = if i == selected {
            vec![
                Span::styled("→ ", accent),
                Span::styled(label.to_string(), accent),
            ]
        } else {
            vec![
                Span::raw("  "),
                Span::styled(label.to_string(), ui.fg(ThemeToken::Text)),
            ]
        };
        out.extend(text_block(vec![spans], width, 1));
    }
    out.push(Line::default());
    let mut hint = vec![
        Span::styled("↑↓", ui.fg(ThemeToken::Dim)),
        Span::styled(" navigate", ui.fg(ThemeToken::Muted)),
        Span::raw("  "),
    ];
    hint.extend(ui.key_hint(Action::SelectConfirm, "select"));
    hint.push(Span::raw("  "));
    hint.extend(ui.key_hint(Action::SelectCancel, "cancel"));
    out.extend(text_block(vec![hint], width, 1));
    out.push(Line::default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};

    fn press(selector: &mut OptionSelector, code: KeyCode) -> OptionOutcome {
        selector.handle_key(
            &KeyEvent::new(code, KeyModifiers::NONE),
            &Keybindings::defaults(),
        )
    }

    #[test]
    fn looks_like_pis_extension_selector() {
        let t = theme();
        let keys = Keybindings::defaults();
        let selector = OptionSelector::new(2);
        let lines = selector.render(
            "Import session\nReplace current session with /tmp/a.jsonl?",
            &["Yes", "No"],
            60,
            &Ui::new(&t, &keys),
        );
        insta::assert_snapshot!(plain(&lines, 60), @r"
        ────────────────────────────────────────────────────────────

         Import session
         Replace current session with /tmp/a.jsonl?

         → Yes
           No

         ↑↓ navigate  enter select  escape/ctrl+c cancel

        ────────────────────────────────────────────────────────────
        ");
        for width in 1..30 {
            plain(
                &selector.render("A title", &["Yes", "No"], width, &Ui::new(&t, &keys)),
                width,
            );
        }
    }

    #[test]
    fn keys_move_without_wrapping_and_choose_or_cancel() {
        let mut s = OptionSelector::new(3);
        assert_eq!(press(&mut s, KeyCode::Up), OptionOutcome::Moved);
        assert_eq!(s.selected(), 0, "no wrap-around at the top");
        press(&mut s, KeyCode::Down);
        press(&mut s, KeyCode::Char('j'));
        press(&mut s, KeyCode::Down);
        assert_eq!(s.selected(), 2, "no wrap-around at the bottom");
        press(&mut s, KeyCode::Char('k'));
        assert_eq!(press(&mut s, KeyCode::Enter), OptionOutcome::Chosen(1));
        assert_eq!(press(&mut s, KeyCode::Esc), OptionOutcome::Cancelled);
        assert_eq!(press(&mut s, KeyCode::Char('x')), OptionOutcome::Ignored);
        let mut empty = OptionSelector::new(0);
        assert_eq!(press(&mut empty, KeyCode::Enter), OptionOutcome::Ignored);
    }
}
