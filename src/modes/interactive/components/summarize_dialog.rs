//! The "Summarize branch?" question `/tree` asks before leaving a branch: no summary,
//! a summary with the default prompt, or one with the user's own instructions (the app
//! then asks for them in an editor; cancelling that editor comes back here). Escape goes
//! back to the tree with the same entry selected. Pure state and rendering.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Ui, rule, text_block};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::theme::ThemeToken;

/// The dialog's title.
pub const TITLE: &str = "Summarize branch?";

/// The answers, in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryChoice {
    NoSummary,
    Summarize,
    /// Summarize with instructions the user types next.
    Custom,
}

impl SummaryChoice {
    pub const ALL: [SummaryChoice; 3] = [
        SummaryChoice::NoSummary,
        SummaryChoice::Summarize,
        SummaryChoice::Custom,
    ];

    pub fn label(self) -> &'static str {
        match self {
            SummaryChoice::NoSummary => "No summary",
            SummaryChoice::Summarize => "Summarize",
            SummaryChoice::Custom => "Summarize with custom prompt",
        }
    }
}

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarizeOutcome {
    /// Keep asking (redraw).
    None,
    /// Navigate without a summary.
    NoSummary,
    /// Navigate and summarize the branch left behind.
    Summarize,
    /// Ask for custom summary instructions in an editor, then summarize with them.
    Custom,
    /// Escape: reopen the tree on the entry that was chosen.
    BackToTree,
}

#[derive(Debug, Clone, Default)]
pub struct SummarizeBranchDialog {
    selected: usize,
}

impl SummarizeBranchDialog {
    /// Opens with "No summary" selected.
    pub fn new() -> Self {
        SummarizeBranchDialog::default()
    }

    pub fn selected(&self) -> SummaryChoice {
        SummaryChoice::ALL[self.selected.min(SummaryChoice::ALL.len() - 1)]
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SummarizeOutcome {
        if key.kind == KeyEventKind::Release {
            return SummarizeOutcome::None;
        }
        let plain = |c: char| key.code == KeyCode::Char(c) && key.modifiers == KeyModifiers::NONE;
        let actions = [
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectConfirm,
            Action::SelectCancel,
        ];
        // pi's option selector also takes vi's j/k; the list does not wrap around.
        match keys.action_for(key, &actions) {
            Some(Action::SelectUp) => self.selected = self.selected.saturating_sub(1),
            Some(Action::SelectDown) => {
                self.selected = (self.selected + 1).min(SummaryChoice::ALL.len() - 1);
            }
            Some(Action::SelectConfirm) => {
                return match self.selected() {
                    SummaryChoice::NoSummary => SummarizeOutcome::NoSummary,
                    SummaryChoice::Summarize => SummarizeOutcome::Summarize,
                    SummaryChoice::Custom => SummarizeOutcome::Custom,
                };
            }
            Some(Action::SelectCancel) => return SummarizeOutcome::BackToTree,
            _ if plain('k') => self.selected = self.selected.saturating_sub(1),
            _ if plain('j') => {
                self.selected = (self.selected + 1).min(SummaryChoice::ALL.len() - 1);
            }
            _ => {}
        }
        SummarizeOutcome::None
    }

    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let border = rule(width, ui.fg(ThemeToken::Border));
        let accent = ui.fg(ThemeToken::Accent);
        let mut logical: Vec<Vec<Span<'static>>> = vec![vec![Span::styled(
            TITLE,
            accent.add_modifier(Modifier::BOLD),
        )]];
        let mut out = vec![border.clone(), Line::default()];
        out.extend(text_block(std::mem::take(&mut logical), width, 1));
        out.push(Line::default());
        out.extend(super::option_selector::choice_lines(
            SummaryChoice::ALL.iter().map(|c| c.label()),
            self.selected,
            width,
            ui,
        ));
        out.push(border);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};

    fn press(dialog: &mut SummarizeBranchDialog, code: KeyCode) -> SummarizeOutcome {
        dialog.handle_key(
            &KeyEvent::new(code, KeyModifiers::NONE),
            &Keybindings::defaults(),
        )
    }

    #[test]
    fn looks_like_pis_summarize_prompt() {
        let t = theme();
        let keys = Keybindings::defaults();
        let dialog = SummarizeBranchDialog::new();
        // pi's summarize-prompt-view.txt (at 120 columns).
        insta::assert_snapshot!(plain(&dialog.render(120, &Ui::new(&t, &keys)), 120), @r"
            ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────

             Summarize branch?

             → No summary
               Summarize
               Summarize with custom prompt

             ↑↓ navigate  enter select  escape/ctrl+c cancel

            ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
        ");
        for width in 1..30 {
            plain(&dialog.render(width, &Ui::new(&t, &keys)), width);
        }
    }

    #[test]
    fn keys_choose_an_answer_or_go_back_to_the_tree() {
        let mut dialog = SummarizeBranchDialog::new();
        assert_eq!(press(&mut dialog, KeyCode::Up), SummarizeOutcome::None);
        assert_eq!(
            dialog.selected(),
            SummaryChoice::NoSummary,
            "no wrap-around"
        );
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            SummarizeOutcome::NoSummary
        );
        press(&mut dialog, KeyCode::Down);
        assert_eq!(
            press(&mut dialog, KeyCode::Enter),
            SummarizeOutcome::Summarize
        );
        press(&mut dialog, KeyCode::Char('j'));
        press(&mut dialog, KeyCode::Char('j'));
        assert_eq!(dialog.selected(), SummaryChoice::Custom);
        assert_eq!(press(&mut dialog, KeyCode::Enter), SummarizeOutcome::Custom);
        press(&mut dialog, KeyCode::Char('k'));
        assert_eq!(dialog.selected(), SummaryChoice::Summarize);
        assert_eq!(
            press(&mut dialog, KeyCode::Esc),
            SummarizeOutcome::BackToTree
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            dialog.handle_key(&ctrl_c, &Keybindings::defaults()),
            SummarizeOutcome::BackToTree
        );
    }
}
