//! `/settings`: pi's list of the settings people change while working, each shown with
//! its current value. Enter or Space cycles a value (or opens a small list for the
//! thinking level and the theme); every change comes out as
//! [`SettingsOutcome::Changed`] with the `settings.json` key path and the new JSON value,
//! for the app to apply and persist with `Settings::set_global`. Moving through the theme
//! list previews each theme ([`SettingsOutcome::PreviewTheme`]); leaving it with Escape
//! previews the original again. Typing filters the list by name. "Warnings" opens a
//! small list of its own (one switch per warning, as pi's), whose changes come out the
//! same way.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

mod items;

pub use items::{SettingId, SettingsValues, thinking_level_description};

use super::line_input::{InputChange, LineInput};
use super::select_list::{SelectLayout, SelectList, SelectOutcome};
use super::{Ui, rule, styled_text};
use crate::ai::model::ThinkingLevel;
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{str_width, truncate_line, truncate_to_width};
use crate::modes::interactive::theme::ThemeToken;

/// What a key did.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsOutcome {
    /// The list changed; redraw it.
    Handled,
    /// Not a key the list uses.
    Ignored,
    /// Close the settings.
    Cancelled,
    /// A setting got a new value: apply it, and persist `value` at `key`.
    Changed {
        setting: SettingId,
        key: &'static [&'static str],
        value: Value,
    },
    /// Show this theme for now (not saved).
    PreviewTheme(String),
}

const MAX_VISIBLE: usize = 10;
const LABEL_MAX: usize = 30;

#[derive(Debug, Clone)]
struct Item {
    id: SettingId,
    value: String,
}

#[derive(Debug, Clone)]
struct Submenu {
    id: SettingId,
    title: &'static str,
    description: &'static str,
    list: SelectList,
    original: String,
}

#[derive(Debug, Clone)]
pub struct SettingsSelector {
    items: Vec<Item>,
    filtered: Vec<usize>,
    selected: usize,
    query: LineInput,
    submenu: Option<Submenu>,
    /// The Warnings submenu, when open.
    warnings_open: bool,
    /// The switches of the Warnings submenu (only `anthropicExtraUsage` in pi 0.73.1).
    warnings: Vec<Item>,
    thinking_levels: Vec<ThinkingLevel>,
    themes: Vec<String>,
}

impl SettingsSelector {
    pub fn new(values: &SettingsValues) -> SettingsSelector {
        let items: Vec<Item> = SettingId::ALL
            .iter()
            .filter_map(|&id| values.value(id).map(|value| Item { id, value }))
            .collect();
        SettingsSelector {
            filtered: (0..items.len()).collect(),
            items,
            selected: 0,
            query: LineInput::new(),
            submenu: None,
            warnings_open: false,
            warnings: vec![Item {
                id: SettingId::AnthropicExtraUsage,
                value: values.anthropic_extra_usage_warning.to_string(),
            }],
            thinking_levels: values.thinking_levels.clone(),
            themes: values.themes.clone(),
        }
    }

    /// The highlighted setting (in the main list).
    pub fn selected_setting(&self) -> Option<SettingId> {
        self.filtered.get(self.selected).map(|&i| self.items[i].id)
    }

    /// The value the list shows for a setting.
    pub fn value(&self, id: SettingId) -> Option<&str> {
        self.items
            .iter()
            .chain(&self.warnings)
            .find(|i| i.id == id)
            .map(|i| i.value.as_str())
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SettingsOutcome {
        if self.submenu.is_some() {
            return self.handle_submenu_key(key, keys);
        }
        if self.warnings_open {
            return self.handle_warnings_key(key, keys);
        }
        let n = self.filtered.len();
        let space = key.code == KeyCode::Char(' ')
            && key.kind != KeyEventKind::Release
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if space {
            return self.activate();
        }
        match keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
            ],
        ) {
            Some(Action::SelectUp) if n > 0 => {
                self.selected = self.selected.checked_sub(1).unwrap_or(n - 1);
                SettingsOutcome::Handled
            }
            Some(Action::SelectDown) if n > 0 => {
                self.selected = (self.selected + 1) % n;
                SettingsOutcome::Handled
            }
            Some(Action::SelectConfirm) => self.activate(),
            Some(Action::SelectCancel) => SettingsOutcome::Cancelled,
            Some(_) => SettingsOutcome::Ignored,
            None => match self.query.handle_key(key, keys) {
                InputChange::Edited => {
                    let indices: Vec<usize> = (0..self.items.len()).collect();
                    self.filtered =
                        fuzzy_filter(&indices, self.query.value(), |i| self.items[*i].id.label())
                            .into_iter()
                            .copied()
                            .collect();
                    self.selected = 0;
                    SettingsOutcome::Handled
                }
                InputChange::Moved => SettingsOutcome::Handled,
                InputChange::Ignored => SettingsOutcome::Ignored,
            },
        }
    }

    fn activate(&mut self) -> SettingsOutcome {
        let Some(&index) = self.filtered.get(self.selected) else {
            return SettingsOutcome::Ignored;
        };
        let item = &mut self.items[index];
        let id = item.id;
        if let Some(choices) = id.choices() {
            let next = choices
                .iter()
                .position(|c| *c == item.value)
                .map_or(0, |i| (i + 1) % choices.len());
            item.value = choices[next].to_string();
            return SettingsOutcome::Changed {
                setting: id,
                key: id.key(),
                value: id.json(&item.value),
            };
        }
        if id == SettingId::Warnings {
            self.warnings_open = true;
            return SettingsOutcome::Handled;
        }
        let (title, description, options): (_, _, Vec<CompletionItem>) = match id {
            SettingId::ThinkingLevel => (
                "Thinking Level",
                "How much a reasoning model thinks before it answers",
                self.thinking_levels
                    .iter()
                    .map(|l| CompletionItem {
                        value: l.as_str().into(),
                        label: l.as_str().into(),
                        description: Some(thinking_level_description(*l).into()),
                    })
                    .collect(),
            ),
            _ => (
                "Theme",
                "Choose a colour theme (it shows as you move)",
                self.themes
                    .iter()
                    .map(|t| CompletionItem {
                        value: t.clone(),
                        label: t.clone(),
                        description: None,
                    })
                    .collect(),
            ),
        };
        let max_visible = options.len().clamp(1, MAX_VISIBLE);
        let current = options.iter().position(|o| o.value == item.value);
        let mut list = SelectList::new(options, max_visible).with_layout(SelectLayout::COMMANDS);
        if let Some(current) = current {
            list.set_selected(current);
        }
        self.submenu = Some(Submenu {
            id,
            title,
            description,
            list,
            original: item.value.clone(),
        });
        SettingsOutcome::Handled
    }

    /// Keys in the Warnings submenu: Enter/Space flips the switch, Escape goes back.
    fn handle_warnings_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SettingsOutcome {
        let space = key.code == KeyCode::Char(' ')
            && key.kind != KeyEventKind::Release
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let action = keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
            ],
        );
        match action {
            _ if space => self.flip_warning(),
            Some(Action::SelectConfirm) => self.flip_warning(),
            Some(Action::SelectCancel) => {
                self.warnings_open = false;
                SettingsOutcome::Handled
            }
            // One entry: moving wraps onto itself.
            Some(_) => SettingsOutcome::Handled,
            None => SettingsOutcome::Ignored,
        }
    }

    fn flip_warning(&mut self) -> SettingsOutcome {
        let Some(item) = self.warnings.first_mut() else {
            return SettingsOutcome::Ignored;
        };
        let on = item.value != "true";
        item.value = on.to_string();
        SettingsOutcome::Changed {
            setting: item.id,
            key: item.id.key(),
            value: Value::Bool(on),
        }
    }

    fn handle_submenu_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SettingsOutcome {
        let Some(menu) = self.submenu.as_mut() else {
            return SettingsOutcome::Ignored;
        };
        match menu.list.handle_key(key, keys) {
            SelectOutcome::Moved if menu.id == SettingId::Theme => {
                match menu.list.selected_item() {
                    Some(item) => SettingsOutcome::PreviewTheme(item.value.clone()),
                    None => SettingsOutcome::Handled,
                }
            }
            SelectOutcome::Moved => SettingsOutcome::Handled,
            SelectOutcome::Confirmed(item) => {
                let id = menu.id;
                self.submenu = None;
                if let Some(entry) = self.items.iter_mut().find(|i| i.id == id) {
                    entry.value = item.value.clone();
                }
                SettingsOutcome::Changed {
                    setting: id,
                    key: id.key(),
                    value: id.json(&item.value),
                }
            }
            SelectOutcome::Cancelled => {
                let menu = self.submenu.take();
                match menu {
                    Some(m) if m.id == SettingId::Theme => {
                        SettingsOutcome::PreviewTheme(m.original)
                    }
                    _ => SettingsOutcome::Handled,
                }
            }
            SelectOutcome::Ignored => SettingsOutcome::Ignored,
        }
    }

    /// The list (or an open submenu) between two rules, in at most `width` columns.
    /// pi shows ten settings whatever the terminal's height (`_height` is not used): a
    /// dialog taller than the terminal pushes the chat off the screen while it is open.
    pub fn render(&self, width: usize, _height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_with_cursor(width, _height, ui).0
    }

    /// [`SettingsSelector::render`] plus where the terminal cursor belongs in the search
    /// box (column, row; none while a submenu is open), for input methods.
    pub fn render_with_cursor(
        &self,
        width: usize,
        _height: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![border.clone()];
        let cursor = match &self.submenu {
            Some(menu) => {
                out.extend(self.render_submenu(menu, width, ui));
                None
            }
            None if self.warnings_open => {
                out.extend(self.render_warnings(width, ui));
                None
            }
            None => {
                out.extend(self.render_list(width, ui));
                let (_, column) = self.query.render_with_cursor(width, true);
                Some((u16::try_from(column).unwrap_or(u16::MAX), 1))
            }
        };
        out.push(border);
        (out, cursor)
    }

    fn render_list(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let dim = ui.fg(ThemeToken::Dim);
        let mut out = vec![self.query.render(width, true), Line::default()];
        let hint = format!(
            "  Type to search · {}/space to change · {} to cancel",
            ui.key(Action::SelectConfirm),
            ui.key(Action::SelectCancel)
        );
        let hint = Line::from(Span::styled(
            truncate_to_width(&hint, width, "…").into_owned(),
            dim,
        ));
        if self.filtered.is_empty() {
            out.push(Line::from(Span::styled(
                truncate_to_width("  No matching settings", width, "…").into_owned(),
                dim,
            )));
            out.push(Line::default());
            out.push(hint);
            return out;
        }
        let description = self
            .selected_setting()
            .map(|id| styled_text(id.description(), dim, width.saturating_sub(4).max(1), 0))
            .unwrap_or_default();
        // Ten rows whatever the terminal's height, as pi.
        let max_visible = MAX_VISIBLE;
        let n = self.filtered.len();
        let start = self
            .selected
            .saturating_sub(max_visible / 2)
            .min(n.saturating_sub(max_visible));
        let end = (start + max_visible).min(n);
        let label_width = self
            .items
            .iter()
            .map(|i| str_width(i.id.label()))
            .max()
            .unwrap_or(0)
            .min(LABEL_MAX);
        for row in start..end {
            let item = &self.items[self.filtered[row]];
            let selected = row == self.selected;
            out.push(setting_row(
                item.id.label(),
                &item.value,
                label_width,
                width,
                selected,
                ui,
            ));
        }
        if start > 0 || end < n {
            let text = format!("  ({}/{n})", self.selected + 1);
            out.push(Line::from(Span::styled(
                truncate_to_width(&text, width.saturating_sub(2), "").into_owned(),
                dim,
            )));
        }
        if !description.is_empty() {
            out.push(Line::default());
            for line in description {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                out.push(truncate_line(Line::from(spans), width, Span::raw("")));
            }
        }
        out.push(Line::default());
        out.push(hint);
        out
    }

    /// The Warnings submenu: pi's nested settings list, without a search box.
    fn render_warnings(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let dim = ui.fg(ThemeToken::Dim);
        let label_width = self
            .warnings
            .iter()
            .map(|i| str_width(i.id.label()))
            .max()
            .unwrap_or(0)
            .min(LABEL_MAX);
        let mut out = Vec::new();
        for (row, item) in self.warnings.iter().enumerate() {
            out.push(setting_row(
                item.id.label(),
                &item.value,
                label_width,
                width,
                row == 0,
                ui,
            ));
        }
        if let Some(item) = self.warnings.first() {
            out.push(Line::default());
            for line in styled_text(
                item.id.description(),
                dim,
                width.saturating_sub(4).max(1),
                0,
            ) {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(line.spans);
                out.push(truncate_line(Line::from(spans), width, Span::raw("")));
            }
        }
        out.push(Line::default());
        let hint = format!(
            "  {}/space to change · {} to cancel",
            ui.key(Action::SelectConfirm),
            ui.key(Action::SelectCancel)
        );
        out.push(Line::from(Span::styled(
            truncate_to_width(&hint, width, "…").into_owned(),
            dim,
        )));
        out
    }

    fn render_submenu(&self, menu: &Submenu, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let title_style = ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD);
        let mut out = styled_text(menu.title, title_style, width, 0);
        out.push(Line::default());
        out.extend(styled_text(
            menu.description,
            ui.fg(ThemeToken::Muted),
            width,
            0,
        ));
        out.push(Line::default());
        out.extend(menu.list.render(width, ui.theme));
        out.push(Line::default());
        let hint = format!(
            "  {} to select · {} to go back",
            ui.key(Action::SelectConfirm),
            ui.key(Action::SelectCancel)
        );
        out.push(Line::from(Span::styled(
            truncate_to_width(&hint, width, "…").into_owned(),
            ui.fg(ThemeToken::Dim),
        )));
        out
    }
}

/// One setting: the cursor, the label padded to `label_width`, and its value, in the
/// accent colour when selected (pi's settings list row).
fn setting_row(
    label: &str,
    value: &str,
    label_width: usize,
    width: usize,
    selected: bool,
    ui: &Ui<'_>,
) -> Line<'static> {
    let accent = ui.fg(ThemeToken::Accent);
    let label = truncate_to_width(label, label_width, "").into_owned();
    let padding = " ".repeat(label_width - str_width(&label));
    let value_width = width.saturating_sub(2 + label_width + 2 + 2);
    let value = truncate_to_width(value, value_width, "").into_owned();
    let (cursor, label_style, value_style) = if selected {
        (Span::styled("→ ", accent), accent, accent)
    } else {
        (Span::raw("  "), Style::default(), ui.fg(ThemeToken::Muted))
    };
    truncate_line(
        Line::from(vec![
            cursor,
            Span::styled(format!("{label}{padding}"), label_style),
            Span::raw("  "),
            Span::styled(value, value_style),
        ]),
        width,
        Span::raw(""),
    )
}

#[cfg(test)]
mod tests;
