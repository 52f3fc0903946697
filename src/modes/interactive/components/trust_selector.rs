//! `/trust`, drawn as pi's `TrustSelectorComponent`: the folder, the decision saved for
//! it (or inherited from a parent) and the current session's, then the choices Trust,
//! Trust parent folder (…) and Do not trust, the saved one ticked and highlighted first.
//! Enter picks one ([`TrustOutcome::Chosen`]); saving it is the app's job. Pure state
//! and rendering.

use std::path::Path;

use crossterm::event::KeyEvent;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::option_selector::{OptionOutcome, OptionSelector};
use super::{Ui, rule, styled_text, text_block};
use crate::core::trust::{SavedDecision, TrustChoice, trust_choices};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::theme::ThemeToken;

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustOutcome {
    Handled,
    Chosen(TrustChoice),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct TrustSelector {
    cwd: String,
    choices: Vec<TrustChoice>,
    saved: Option<SavedDecision>,
    session_trusted: bool,
    selector: OptionSelector,
}

impl TrustSelector {
    /// The selector for `cwd`, with the decision saved for it (or a parent) and whether
    /// this session trusts the project.
    pub fn new(cwd: &Path, saved: Option<SavedDecision>, session_trusted: bool) -> TrustSelector {
        let choices = trust_choices(cwd, false);
        let current = choices
            .iter()
            .position(|c| is_saved(c, saved.as_ref()))
            .unwrap_or(0);
        TrustSelector {
            cwd: cwd.display().to_string(),
            selector: OptionSelector::starting_at(choices.len(), current),
            choices,
            saved,
            session_trusted,
        }
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> TrustOutcome {
        match self.selector.handle_key(key, keys) {
            OptionOutcome::Chosen(i) => self
                .choices
                .get(i)
                .cloned()
                .map_or(TrustOutcome::Handled, TrustOutcome::Chosen),
            OptionOutcome::Cancelled => TrustOutcome::Cancelled,
            OptionOutcome::Moved | OptionOutcome::Ignored => TrustOutcome::Handled,
        }
    }

    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let accent = ui.fg(ThemeToken::Accent);
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = vec![border.clone(), Line::default()];
        out.extend(styled_text(
            "Project trust",
            accent.add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        out.extend(styled_text(&self.cwd, muted, width, 1));
        out.push(Line::default());
        let here = self.choices.first().and_then(|c| c.saved_path.as_deref());
        let saved = format!("Saved decision: {}", describe(self.saved.as_ref(), here));
        out.extend(styled_text(&saved, muted, width, 1));
        let session = if self.session_trusted {
            "trusted"
        } else {
            "untrusted"
        };
        out.extend(styled_text(
            &format!("Current session: {session}"),
            muted,
            width,
            1,
        ));
        out.push(Line::default());
        for (i, choice) in self.choices.iter().enumerate() {
            let selected = i == self.selector.selected();
            let mut spans = vec![if selected {
                Span::styled("→ ", accent)
            } else {
                Span::raw("  ")
            }];
            spans.push(if is_saved(choice, self.saved.as_ref()) {
                Span::styled("✓ ", accent)
            } else {
                Span::raw("  ")
            });
            let style = if selected {
                accent
            } else {
                ui.fg(ThemeToken::Text)
            };
            spans.push(Span::styled(choice.label.clone(), style));
            out.extend(text_block(vec![spans], width, 1));
        }
        out.push(Line::default());
        let mut hint = vec![
            Span::styled("↑↓", ui.fg(ThemeToken::Dim)),
            Span::styled(" navigate", muted),
            Span::raw("  "),
        ];
        hint.extend(ui.key_hint(Action::SelectConfirm, "save"));
        hint.push(Span::raw("  "));
        hint.extend(ui.key_hint(Action::SelectCancel, "cancel"));
        out.extend(text_block(vec![hint], width, 1));
        out.push(Line::default());
        out.push(border);
        out
    }
}

/// Whether `choice` is the decision saved in trust.json.
fn is_saved(choice: &TrustChoice, saved: Option<&SavedDecision>) -> bool {
    match (saved, &choice.saved_path) {
        (Some(saved), Some(path)) => saved.trusted == choice.trusted && saved.path == *path,
        _ => false,
    }
}

/// pi's words for a saved decision: `none`, `trusted (/path)`, or `untrusted (inherited
/// from /parent)`.
fn describe(saved: Option<&SavedDecision>, here: Option<&Path>) -> String {
    let Some(saved) = saved else {
        return "none".into();
    };
    let label = if saved.trusted {
        "trusted"
    } else {
        "untrusted"
    };
    match here {
        Some(here) if saved.path != here => {
            format!("{label} (inherited from {})", saved.path.display())
        }
        _ => format!("{label} ({})", saved.path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn looks_like_pis_trust_selector_with_the_saved_choice_ticked() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let cwd = Path::new("/nowhere/proj");
        let saved = SavedDecision {
            path: cwd.to_path_buf(),
            trusted: false,
        };
        let mut selector = TrustSelector::new(cwd, Some(saved), false);
        insta::assert_snapshot!(plain(&selector.render(60, &ui), 60), @r"
        ────────────────────────────────────────────────────────────

         Project trust
         /nowhere/proj

         Saved decision: untrusted (/nowhere/proj)
         Current session: untrusted

             Trust
             Trust parent folder (/nowhere)
         → ✓ Do not trust

         ↑↓ navigate  enter save  escape/ctrl+c cancel

        ────────────────────────────────────────────────────────────
        ");
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        selector.handle_key(&key(KeyCode::Up), &keys);
        let TrustOutcome::Chosen(choice) = selector.handle_key(&key(KeyCode::Enter), &keys) else {
            panic!("Enter chooses");
        };
        assert_eq!(choice.label, "Trust parent folder (/nowhere)");
        assert_eq!(
            selector.handle_key(&key(KeyCode::Esc), &keys),
            TrustOutcome::Cancelled
        );
        let inherited = TrustSelector::new(
            cwd,
            Some(SavedDecision {
                path: "/nowhere".into(),
                trusted: true,
            }),
            true,
        );
        let text = plain(&inherited.render(60, &ui), 60);
        assert!(text.contains("Saved decision: trusted (inherited from /nowhere)"));
        assert!(text.contains("Current session: trusted"));
        assert!(text.contains("→ ✓ Trust parent folder (/nowhere)"));
        for width in 1..30 {
            plain(&inherited.render(width, &ui), width);
        }
    }
}
