//! The thinking-level selector: the levels the current model supports, each with a short
//! note of how much reasoning it buys, the current one highlighted. Enter picks
//! ([`ThinkingOutcome::Selected`]); applying and recording the level is the app's job.

use crossterm::event::KeyEvent;
use ratatui::text::Line;

use super::select_list::{SelectLayout, SelectList, SelectOutcome};
use super::settings_selector::thinking_level_description;
use super::{Ui, rule};
use crate::ai::model::ThinkingLevel;
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::theme::ThemeToken;

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingOutcome {
    Handled,
    Ignored,
    Selected(ThinkingLevel),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct ThinkingSelector {
    list: SelectList,
}

impl ThinkingSelector {
    /// `available` in cycling order (from `Model::available_thinking_levels`).
    pub fn new(current: ThinkingLevel, available: &[ThinkingLevel]) -> ThinkingSelector {
        let items: Vec<CompletionItem> = available
            .iter()
            .map(|l| CompletionItem {
                value: l.as_str().into(),
                label: l.as_str().into(),
                description: Some(thinking_level_description(*l).into()),
            })
            .collect();
        let current = available.iter().position(|l| *l == current);
        let rows = items.len().max(1);
        let mut list = SelectList::new(items, rows).with_layout(SelectLayout::COMMANDS);
        if let Some(i) = current {
            list.set_selected(i);
        }
        ThinkingSelector { list }
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ThinkingOutcome {
        match self.list.handle_key(key, keys) {
            SelectOutcome::Moved => ThinkingOutcome::Handled,
            SelectOutcome::Confirmed(item) => ThinkingLevel::parse(&item.value)
                .map_or(ThinkingOutcome::Ignored, ThinkingOutcome::Selected),
            SelectOutcome::Cancelled => ThinkingOutcome::Cancelled,
            SelectOutcome::Ignored => ThinkingOutcome::Ignored,
        }
    }

    /// The levels between two rules, in at most `width` columns.
    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![border.clone()];
        out.extend(self.list.render(width, ui.theme));
        out.push(border);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use crossterm::event::{KeyCode, KeyModifiers};
    use pretty_assertions::assert_eq;

    #[test]
    fn lists_the_models_levels_with_the_current_one_selected() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let levels = [
            ThinkingLevel::Off,
            ThinkingLevel::Minimal,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
            ThinkingLevel::Xhigh,
        ];
        let mut selector = ThinkingSelector::new(ThinkingLevel::Medium, &levels);
        insta::assert_snapshot!(plain(&selector.render(70, &ui), 70), @r"
            ──────────────────────────────────────────────────────────────────────
              off         No reasoning
              minimal     A glance before answering (about 1k tokens)
              low         Light reasoning (about 2k tokens)
            → medium      Moderate reasoning (about 8k tokens)
              high        Deep reasoning (about 16k tokens)
              xhigh       As deep as the model goes (about 32k tokens)
            ──────────────────────────────────────────────────────────────────────
            ");
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        selector.handle_key(&key(KeyCode::Down), &keys);
        assert_eq!(
            selector.handle_key(&key(KeyCode::Enter), &keys),
            ThinkingOutcome::Selected(ThinkingLevel::High)
        );
        assert_eq!(
            selector.handle_key(&key(KeyCode::Esc), &keys),
            ThinkingOutcome::Cancelled
        );
        // A model without reasoning only has "off"; narrow screens drop the notes.
        let off_only = ThinkingSelector::new(ThinkingLevel::High, &[ThinkingLevel::Off]);
        insta::assert_snapshot!(plain(&off_only.render(30, &ui), 30), @r"
            ──────────────────────────────
            → off
            ──────────────────────────────
            ");
        for width in 1..80 {
            plain(&selector.render(width, &ui), width);
        }
    }
}
