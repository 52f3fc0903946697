//! The thinking-level selector of `/thinking`, as pi 1.6 draws it: a title, how to cycle
//! in the session, a search box, the levels the current model supports (the current one
//! ticked, the saved default marked) and the key hints. Enter picks the level for the
//! session, Ctrl+S (`app.thinking.save`) also saves it as the default
//! ([`ThinkingOutcome::Selected`]); applying and recording the level is the app's job.

use crossterm::event::KeyEvent;
use ratatui::text::{Line, Span};

use super::line_input::{InputChange, LineInput};
use super::select_list::{SelectLayout, SelectList, SelectOutcome};
use super::settings_selector::thinking_level_description;
use super::{Ui, rule};
use crate::ai::model::ThinkingLevel;
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::theme::ThemeToken;

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingOutcome {
    Handled,
    Ignored,
    /// Use this level; with `save_default`, save it as `defaultThinkingLevel` too.
    Selected {
        level: ThinkingLevel,
        save_default: bool,
    },
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct ThinkingSelector {
    list: SelectList,
    query: LineInput,
}

impl ThinkingSelector {
    /// `available` in cycling order (from `Model::available_thinking_levels`); `default`
    /// is the saved `defaultThinkingLevel` (pi's `medium` when unset).
    pub fn new(
        current: ThinkingLevel,
        available: &[ThinkingLevel],
        default: ThinkingLevel,
    ) -> ThinkingSelector {
        let items: Vec<CompletionItem> = available
            .iter()
            .map(|l| {
                let mut description = thinking_level_description(*l).to_string();
                if *l == default {
                    description.push_str(" · default");
                }
                CompletionItem {
                    value: l.as_str().into(),
                    label: l.as_str().into(),
                    description: Some(description),
                }
            })
            .collect();
        let current = available.iter().position(|l| *l == current);
        let rows = items.len().max(1);
        let mut list = SelectList::new(items, rows)
            .with_layout(SelectLayout::COMMANDS)
            .with_empty_text("No matching levels")
            .with_tick(current);
        if let Some(i) = current {
            list.set_selected(i);
        }
        ThinkingSelector {
            list,
            query: LineInput::new(),
        }
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ThinkingOutcome {
        if keys.matches(key, Action::ThinkingSave) {
            return match self
                .list
                .selected_item()
                .and_then(|item| ThinkingLevel::parse(&item.value))
            {
                Some(level) => ThinkingOutcome::Selected {
                    level,
                    save_default: true,
                },
                None => ThinkingOutcome::Handled,
            };
        }
        let nav = keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
            ],
        );
        if nav.is_some() {
            return match self.list.handle_key(key, keys) {
                SelectOutcome::Moved => ThinkingOutcome::Handled,
                SelectOutcome::Confirmed(item) => {
                    ThinkingLevel::parse(&item.value).map_or(ThinkingOutcome::Ignored, |level| {
                        ThinkingOutcome::Selected {
                            level,
                            save_default: false,
                        }
                    })
                }
                SelectOutcome::Cancelled => ThinkingOutcome::Cancelled,
                SelectOutcome::Ignored => ThinkingOutcome::Ignored,
            };
        }
        match self.query.handle_key(key, keys) {
            InputChange::Edited => {
                self.list.set_fuzzy_filter(self.query.value().trim());
                ThinkingOutcome::Handled
            }
            InputChange::Moved => ThinkingOutcome::Handled,
            InputChange::Ignored => ThinkingOutcome::Ignored,
        }
    }

    /// Inserts pasted text into the search box.
    pub fn paste(&mut self, text: &str) {
        self.query.insert_str(text);
        self.list.set_fuzzy_filter(self.query.value().trim());
    }

    /// The selector between two rules, in at most `width` columns.
    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_with_cursor(width, ui).0
    }

    /// [`ThinkingSelector::render`] plus where the cursor belongs in the search box.
    pub fn render_with_cursor(
        &self,
        width: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let cut = |text: String, style| {
            let text = crate::modes::interactive::text::truncate_to_width(&text, width, "");
            Line::from(Span::styled(text.into_owned(), style))
        };
        let mut out = vec![
            border.clone(),
            Line::default(),
            cut("Thinking Level".into(), ratatui::style::Style::default()),
            Line::default(),
            cut(
                format!(
                    "{} cycles thinking levels in-session",
                    ui.key_capitalized(Action::ThinkingCycle)
                ),
                ratatui::style::Style::default(),
            ),
            Line::default(),
        ];
        let (search, column) = self.query.render_with_cursor(width, true);
        let cursor = (
            u16::try_from(column).unwrap_or(u16::MAX),
            u16::try_from(out.len()).unwrap_or(u16::MAX),
        );
        out.push(search);
        out.push(Line::default());
        out.extend(self.list.render(width, ui.theme));
        out.push(Line::default());
        out.push(cut(
            format!(
                "  {} to select · {} to set as default · {} to cancel",
                ui.key_capitalized(Action::SelectConfirm),
                ui.key_capitalized(Action::ThinkingSave),
                ui.key_capitalized(Action::SelectCancel)
            ),
            ui.fg(ThemeToken::Dim),
        ));
        out.push(border);
        (out, Some(cursor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use crossterm::event::{KeyCode, KeyModifiers};
    use pretty_assertions::assert_eq;

    #[test]
    fn lists_the_models_levels_ticks_the_current_one_and_marks_the_default() {
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
        let mut selector =
            ThinkingSelector::new(ThinkingLevel::Low, &levels, ThinkingLevel::Medium);
        insta::assert_snapshot!(plain(&selector.render(70, &ui), 70), @r"
            ──────────────────────────────────────────────────────────────────────

            Thinking Level

            Shift+Tab cycles thinking levels in-session

            >

                off       No reasoning
                minimal   A glance before answering (about 1k tokens)
            → ✓ low       Light reasoning (about 2k tokens)
                medium    Moderate reasoning (about 8k tokens) · default
                high      Deep reasoning (about 16k tokens)
                xhigh     As deep as the model goes (about 32k tokens)

              Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel
            ──────────────────────────────────────────────────────────────────────
            ");
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        selector.handle_key(&key(KeyCode::Down), &keys);
        assert_eq!(
            selector.handle_key(&key(KeyCode::Enter), &keys),
            ThinkingOutcome::Selected {
                level: ThinkingLevel::Medium,
                save_default: false
            }
        );
        selector.handle_key(&key(KeyCode::Down), &keys);
        assert_eq!(
            selector.handle_key(
                &KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
                &keys
            ),
            ThinkingOutcome::Selected {
                level: ThinkingLevel::High,
                save_default: true
            }
        );
        assert_eq!(
            selector.handle_key(&key(KeyCode::Esc), &keys),
            ThinkingOutcome::Cancelled
        );
        for width in 1..80 {
            plain(&selector.render(width, &ui), width);
        }
    }

    #[test]
    fn typing_filters_the_levels() {
        let keys = Keybindings::defaults();
        let mut selector = ThinkingSelector::new(
            ThinkingLevel::Off,
            &[
                ThinkingLevel::Off,
                ThinkingLevel::High,
                ThinkingLevel::Xhigh,
            ],
            ThinkingLevel::Medium,
        );
        for c in "xh".chars() {
            selector.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), &keys);
        }
        assert_eq!(
            selector.handle_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &keys),
            ThinkingOutcome::Selected {
                level: ThinkingLevel::Xhigh,
                save_default: false
            }
        );
    }
}
