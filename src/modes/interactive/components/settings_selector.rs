//! `/settings`: pi's list of the settings people change while working, each shown with
//! its current value. Enter or Space cycles a value (or opens a small list for the
//! thinking level and the theme); every change comes out as
//! [`SettingsOutcome::Changed`] with the `settings.json` key path and the new JSON value,
//! for the app to apply and persist with `Settings::set_global`. Moving through the theme
//! list previews each theme ([`SettingsOutcome::PreviewTheme`]); leaving it with Escape
//! previews the original again. Typing filters the list by name.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::line_input::{InputChange, LineInput};
use super::select_list::{SelectLayout, SelectList, SelectOutcome};
use super::{Ui, rule, styled_text};
use crate::ai::model::ThinkingLevel;
use crate::core::settings::{QueueMode, Settings};
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{str_width, truncate_line, truncate_to_width};
use crate::modes::interactive::theme::ThemeToken;

/// One entry of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingId {
    AutoCompact,
    ShowImages,
    AutoResizeImages,
    BlockImages,
    SkillCommands,
    HardwareCursor,
    EditorPadding,
    AutocompleteMaxVisible,
    ClearOnShrink,
    SteeringMode,
    FollowUpMode,
    HideThinking,
    CollapseChangelog,
    QuietStartup,
    DoubleEscapeAction,
    TreeFilterMode,
    ThinkingLevel,
    Theme,
}

impl SettingId {
    /// Every entry, in pi's order.
    pub const ALL: [SettingId; 18] = [
        SettingId::AutoCompact,
        SettingId::ShowImages,
        SettingId::AutoResizeImages,
        SettingId::BlockImages,
        SettingId::SkillCommands,
        SettingId::HardwareCursor,
        SettingId::EditorPadding,
        SettingId::AutocompleteMaxVisible,
        SettingId::ClearOnShrink,
        SettingId::SteeringMode,
        SettingId::FollowUpMode,
        SettingId::HideThinking,
        SettingId::CollapseChangelog,
        SettingId::QuietStartup,
        SettingId::DoubleEscapeAction,
        SettingId::TreeFilterMode,
        SettingId::ThinkingLevel,
        SettingId::Theme,
    ];

    /// The name in the list (pi's labels).
    pub fn label(self) -> &'static str {
        match self {
            SettingId::AutoCompact => "Auto-compact",
            SettingId::ShowImages => "Show images",
            SettingId::AutoResizeImages => "Auto-resize images",
            SettingId::BlockImages => "Block images",
            SettingId::SkillCommands => "Skill commands",
            SettingId::HardwareCursor => "Show hardware cursor",
            SettingId::EditorPadding => "Editor padding",
            SettingId::AutocompleteMaxVisible => "Autocomplete max items",
            SettingId::ClearOnShrink => "Clear on shrink",
            SettingId::SteeringMode => "Steering mode",
            SettingId::FollowUpMode => "Follow-up mode",
            SettingId::HideThinking => "Hide thinking",
            SettingId::CollapseChangelog => "Collapse changelog",
            SettingId::QuietStartup => "Quiet startup",
            SettingId::DoubleEscapeAction => "Double-escape action",
            SettingId::TreeFilterMode => "Tree filter mode",
            SettingId::ThinkingLevel => "Thinking level",
            SettingId::Theme => "Theme",
        }
    }

    /// What the setting does, shown under the list.
    pub fn description(self) -> &'static str {
        match self {
            SettingId::AutoCompact => {
                "Summarize older messages automatically when the context window fills up"
            }
            SettingId::ShowImages => "Draw images inline, in terminals that can",
            SettingId::AutoResizeImages => {
                "Scale images down to at most 2000×2000 before they are sent to the model"
            }
            SettingId::BlockImages => "Never send images to the model",
            SettingId::SkillCommands => "Offer every skill as a /skill:name command",
            SettingId::HardwareCursor => {
                "Show the terminal's own cursor in the editor (it is placed for IME input either way)"
            }
            SettingId::EditorPadding => "Empty columns left and right of the prompt editor (0-3)",
            SettingId::AutocompleteMaxVisible => "Rows in the autocomplete list (3-20)",
            SettingId::ClearOnShrink => {
                "Clear rows left behind when the screen content gets shorter (may flicker)"
            }
            SettingId::SteeringMode => {
                "Messages sent with Enter while the agent works: 'one-at-a-time' delivers one and waits for the reply, 'all' delivers them together"
            }
            SettingId::FollowUpMode => {
                "Follow-up messages queued with Alt+Enter, delivered when the agent stops: 'one-at-a-time' or 'all' together"
            }
            SettingId::HideThinking => "Hide the model's thinking blocks in replies",
            SettingId::CollapseChangelog => "Show a shorter changelog after an update",
            SettingId::QuietStartup => "Print less when starting",
            SettingId::DoubleEscapeAction => "What Escape twice on an empty editor opens",
            SettingId::TreeFilterMode => "Which entries /tree shows when it opens",
            SettingId::ThinkingLevel => "How much a reasoning model thinks before answering",
            SettingId::Theme => "Colours of the interface",
        }
    }

    /// The key path in `settings.json`.
    pub fn key(self) -> &'static [&'static str] {
        match self {
            SettingId::AutoCompact => &["compaction", "enabled"],
            SettingId::ShowImages => &["terminal", "showImages"],
            SettingId::AutoResizeImages => &["images", "autoResize"],
            SettingId::BlockImages => &["images", "blockImages"],
            SettingId::SkillCommands => &["enableSkillCommands"],
            SettingId::HardwareCursor => &["showHardwareCursor"],
            SettingId::EditorPadding => &["editorPaddingX"],
            SettingId::AutocompleteMaxVisible => &["autocompleteMaxVisible"],
            SettingId::ClearOnShrink => &["terminal", "clearOnShrink"],
            SettingId::SteeringMode => &["steeringMode"],
            SettingId::FollowUpMode => &["followUpMode"],
            SettingId::HideThinking => &["hideThinkingBlock"],
            SettingId::CollapseChangelog => &["collapseChangelog"],
            SettingId::QuietStartup => &["quietStartup"],
            SettingId::DoubleEscapeAction => &["doubleEscapeAction"],
            SettingId::TreeFilterMode => &["treeFilterMode"],
            SettingId::ThinkingLevel => &["defaultThinkingLevel"],
            SettingId::Theme => &["theme"],
        }
    }

    /// The values Enter/Space cycles through (`None`: chosen from a list).
    fn choices(self) -> Option<&'static [&'static str]> {
        const BOOL: &[&str] = &["true", "false"];
        match self {
            SettingId::AutoCompact
            | SettingId::ShowImages
            | SettingId::AutoResizeImages
            | SettingId::BlockImages
            | SettingId::SkillCommands
            | SettingId::HardwareCursor
            | SettingId::ClearOnShrink
            | SettingId::HideThinking
            | SettingId::CollapseChangelog
            | SettingId::QuietStartup => Some(BOOL),
            SettingId::EditorPadding => Some(&["0", "1", "2", "3"]),
            SettingId::AutocompleteMaxVisible => Some(&["3", "5", "7", "10", "15", "20"]),
            SettingId::SteeringMode | SettingId::FollowUpMode => Some(&["one-at-a-time", "all"]),
            SettingId::DoubleEscapeAction => Some(&["tree", "fork", "none"]),
            SettingId::TreeFilterMode => {
                Some(&["default", "no-tools", "user-only", "labeled-only", "all"])
            }
            SettingId::ThinkingLevel | SettingId::Theme => None,
        }
    }

    /// The value as it goes into `settings.json`.
    fn json(self, value: &str) -> Value {
        match self.choices() {
            Some(["true", "false"]) => Value::Bool(value == "true"),
            _ if matches!(
                self,
                SettingId::EditorPadding | SettingId::AutocompleteMaxVisible
            ) =>
            {
                value
                    .parse::<u64>()
                    .map_or_else(|_| value.into(), Value::from)
            }
            _ => value.into(),
        }
    }
}

/// The current values the list starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsValues {
    pub auto_compact: bool,
    /// `None` when the terminal cannot show images (the entry is left out, as in pi).
    pub show_images: Option<bool>,
    pub auto_resize_images: bool,
    pub block_images: bool,
    pub skill_commands: bool,
    pub hardware_cursor: bool,
    pub editor_padding: u64,
    pub autocomplete_max_visible: u64,
    pub clear_on_shrink: bool,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub hide_thinking: bool,
    pub collapse_changelog: bool,
    pub quiet_startup: bool,
    pub double_escape_action: String,
    pub tree_filter_mode: String,
    pub thinking_level: ThinkingLevel,
    /// Levels the current model supports.
    pub thinking_levels: Vec<ThinkingLevel>,
    pub theme: String,
    /// Built-in and custom theme names.
    pub themes: Vec<String>,
}

impl SettingsValues {
    /// Values from the merged settings files. The app then sets what the session knows
    /// better: the thinking level and the levels the model supports, the theme list, and
    /// whether the terminal shows images.
    pub fn from_settings(settings: &Settings) -> SettingsValues {
        SettingsValues {
            auto_compact: settings.compaction_enabled(),
            show_images: Some(settings.show_images()),
            auto_resize_images: settings.image_auto_resize(),
            block_images: settings.block_images(),
            skill_commands: settings.enable_skill_commands(),
            hardware_cursor: settings.show_hardware_cursor(),
            editor_padding: settings.editor_padding_x(),
            autocomplete_max_visible: settings.autocomplete_max_visible(),
            clear_on_shrink: settings.clear_on_shrink(),
            steering_mode: settings.steering_mode(),
            follow_up_mode: settings.follow_up_mode(),
            hide_thinking: settings.hide_thinking_block(),
            collapse_changelog: settings.collapse_changelog(),
            quiet_startup: settings.quiet_startup(),
            double_escape_action: settings.double_escape_action().to_string(),
            tree_filter_mode: settings.tree_filter_mode().to_string(),
            thinking_level: settings.default_thinking_level().unwrap_or_default(),
            thinking_levels: ThinkingLevel::ALL.to_vec(),
            theme: settings.theme().unwrap_or("dark").to_string(),
            themes: crate::modes::interactive::theme::builtin_theme_names()
                .map(str::to_string)
                .collect(),
        }
    }

    fn value(&self, id: SettingId) -> Option<String> {
        let flag = |b: bool| b.to_string();
        Some(match id {
            SettingId::AutoCompact => flag(self.auto_compact),
            SettingId::ShowImages => flag(self.show_images?),
            SettingId::AutoResizeImages => flag(self.auto_resize_images),
            SettingId::BlockImages => flag(self.block_images),
            SettingId::SkillCommands => flag(self.skill_commands),
            SettingId::HardwareCursor => flag(self.hardware_cursor),
            SettingId::EditorPadding => self.editor_padding.to_string(),
            SettingId::AutocompleteMaxVisible => self.autocomplete_max_visible.to_string(),
            SettingId::ClearOnShrink => flag(self.clear_on_shrink),
            SettingId::SteeringMode => self.steering_mode.as_str().to_string(),
            SettingId::FollowUpMode => self.follow_up_mode.as_str().to_string(),
            SettingId::HideThinking => flag(self.hide_thinking),
            SettingId::CollapseChangelog => flag(self.collapse_changelog),
            SettingId::QuietStartup => flag(self.quiet_startup),
            SettingId::DoubleEscapeAction => self.double_escape_action.clone(),
            SettingId::TreeFilterMode => self.tree_filter_mode.clone(),
            SettingId::ThinkingLevel => self.thinking_level.as_str().to_string(),
            SettingId::Theme => self.theme.clone(),
        })
    }
}

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

/// Short descriptions of the thinking levels.
pub fn thinking_level_description(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "No reasoning",
        ThinkingLevel::Minimal => "A glance before answering (about 1k tokens)",
        ThinkingLevel::Low => "Light reasoning (about 2k tokens)",
        ThinkingLevel::Medium => "Moderate reasoning (about 8k tokens)",
        ThinkingLevel::High => "Deep reasoning (about 16k tokens)",
        ThinkingLevel::Xhigh => "As deep as the model goes (about 32k tokens)",
    }
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
            .find(|i| i.id == id)
            .map(|i| i.value.as_str())
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SettingsOutcome {
        if self.submenu.is_some() {
            return self.handle_submenu_key(key, keys);
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
    /// With `height` > 0, fewer settings are shown to fit.
    pub fn render(&self, width: usize, height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![border.clone()];
        match &self.submenu {
            Some(menu) => out.extend(self.render_submenu(menu, width, ui)),
            None => out.extend(self.render_list(width, height, ui)),
        }
        out.push(border);
        out
    }

    fn render_list(&self, width: usize, height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let dim = ui.fg(ThemeToken::Dim);
        let accent = ui.fg(ThemeToken::Accent);
        let mut out = vec![self.query.render(width, true), Line::default()];
        let hint = format!(
            "  Type to search · {}/space to change · {} to close",
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
        // Rules, search box, blanks, position line, hint, description.
        let chrome = 8 + description.len();
        let max_visible = if height == 0 {
            MAX_VISIBLE
        } else {
            height.saturating_sub(chrome).clamp(1, MAX_VISIBLE)
        };
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
            let label = truncate_to_width(item.id.label(), label_width, "").into_owned();
            let padding = " ".repeat(label_width - str_width(&label));
            let value_width = width.saturating_sub(2 + label_width + 2 + 2);
            let value = truncate_to_width(&item.value, value_width, "").into_owned();
            let (cursor, label_style, value_style) = if selected {
                (Span::styled("→ ", accent), accent, accent)
            } else {
                (Span::raw("  "), Style::default(), ui.fg(ThemeToken::Muted))
            };
            out.push(truncate_line(
                Line::from(vec![
                    cursor,
                    Span::styled(format!("{label}{padding}"), label_style),
                    Span::raw("  "),
                    Span::styled(value, value_style),
                ]),
                width,
                Span::raw(""),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn values() -> SettingsValues {
        let mut values = SettingsValues::from_settings(&Settings::in_memory(json!({
            "compaction": {"enabled": false},
            "steeringMode": "all",
            "editorPaddingX": 1,
            "theme": "light",
        })));
        values.thinking_level = ThinkingLevel::Medium;
        values.thinking_levels = vec![
            ThinkingLevel::Off,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
        ];
        values.themes = vec!["dark".into(), "light".into(), "solarized".into()];
        values
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn press(selector: &mut SettingsSelector, codes: &[KeyCode]) -> Vec<SettingsOutcome> {
        let keys = Keybindings::defaults();
        codes
            .iter()
            .map(|c| selector.handle_key(&key(*c), &keys))
            .collect()
    }

    fn view(selector: &SettingsSelector, width: usize, height: usize) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        plain(&selector.render(width, height, &Ui::new(&t, &keys)), width)
    }

    #[test]
    fn the_list_shows_current_values_and_the_selected_description() {
        let selector = SettingsSelector::new(&values());
        insta::assert_snapshot!(view(&selector, 80, 0), @r"
            ────────────────────────────────────────────────────────────────────────────────
            >

            → Auto-compact            false
              Show images             true
              Auto-resize images      true
              Block images            false
              Skill commands          true
              Show hardware cursor    false
              Editor padding          1
              Autocomplete max items  5
              Clear on shrink         false
              Steering mode           all
              (1/18)

              Summarize older messages automatically when the context window fills up

              Type to search · enter/space to change · escape/ctrl+c to close
            ────────────────────────────────────────────────────────────────────────────────
            ");
    }

    #[test]
    fn every_change_names_its_settings_json_key_and_value() {
        let mut selector = SettingsSelector::new(&values());
        let mut changes = Vec::new();
        for id in SettingId::ALL {
            let Some(pos) = SettingId::ALL.iter().position(|s| *s == id) else {
                continue;
            };
            let mut s = selector.clone();
            for _ in 0..pos {
                press(&mut s, &[KeyCode::Down]);
            }
            assert_eq!(s.selected_setting(), Some(id));
            for outcome in press(&mut s, &[KeyCode::Char(' ')]) {
                if let SettingsOutcome::Changed {
                    setting,
                    key,
                    value,
                } = outcome
                {
                    changes.push(format!(
                        "{:<22} {:<28} {value}",
                        setting.label(),
                        key.join(".")
                    ));
                }
            }
        }
        insta::assert_snapshot!(changes.join("\n"), @r#"
            Auto-compact           compaction.enabled           true
            Show images            terminal.showImages          false
            Auto-resize images     images.autoResize            false
            Block images           images.blockImages           true
            Skill commands         enableSkillCommands          false
            Show hardware cursor   showHardwareCursor           true
            Editor padding         editorPaddingX               2
            Autocomplete max items autocompleteMaxVisible       7
            Clear on shrink        terminal.clearOnShrink       true
            Steering mode          steeringMode                 "one-at-a-time"
            Follow-up mode         followUpMode                 "all"
            Hide thinking          hideThinkingBlock            true
            Collapse changelog     collapseChangelog            true
            Quiet startup          quietStartup                 true
            Double-escape action   doubleEscapeAction           "fork"
            Tree filter mode       treeFilterMode               "no-tools"
            "#);
        // Enter cycles too, and the list shows the new value.
        press(&mut selector, &[KeyCode::Enter]);
        assert_eq!(selector.value(SettingId::AutoCompact), Some("true"));
    }

    #[test]
    fn typing_filters_by_name() {
        let mut selector = SettingsSelector::new(&values());
        press(
            &mut selector,
            &[KeyCode::Char('i'), KeyCode::Char('m'), KeyCode::Char('g')],
        );
        insta::assert_snapshot!(view(&selector, 70, 0), @r"
            ──────────────────────────────────────────────────────────────────────
            > img

            → Show images             true
              Block images            false
              Auto-resize images      true

              Draw images inline, in terminals that can

              Type to search · enter/space to change · escape/ctrl+c to close
            ──────────────────────────────────────────────────────────────────────
            ");
        press(&mut selector, &[KeyCode::Char('z'), KeyCode::Char('z')]);
        insta::assert_snapshot!(view(&selector, 70, 0), @r"
            ──────────────────────────────────────────────────────────────────────
            > imgzz

              No matching settings

              Type to search · enter/space to change · escape/ctrl+c to close
            ──────────────────────────────────────────────────────────────────────
            ");
    }

    #[test]
    fn the_thinking_level_is_chosen_from_the_models_levels() {
        let mut selector = SettingsSelector::new(&values());
        let to_thinking = SettingId::ALL
            .iter()
            .position(|s| *s == SettingId::ThinkingLevel)
            .unwrap();
        for _ in 0..to_thinking {
            press(&mut selector, &[KeyCode::Down]);
        }
        press(&mut selector, &[KeyCode::Enter]);
        insta::assert_snapshot!(view(&selector, 70, 0), @r"
            ──────────────────────────────────────────────────────────────────────
            Thinking Level

            How much a reasoning model thinks before it answers

              off         No reasoning
              low         Light reasoning (about 2k tokens)
            → medium      Moderate reasoning (about 8k tokens)
              high        Deep reasoning (about 16k tokens)

              enter to select · escape/ctrl+c to go back
            ──────────────────────────────────────────────────────────────────────
            ");
        let outcome = press(&mut selector, &[KeyCode::Down, KeyCode::Enter]);
        assert_eq!(
            outcome[1],
            SettingsOutcome::Changed {
                setting: SettingId::ThinkingLevel,
                key: &["defaultThinkingLevel"],
                value: json!("high")
            }
        );
        assert_eq!(selector.value(SettingId::ThinkingLevel), Some("high"));
        assert_eq!(selector.selected_setting(), Some(SettingId::ThinkingLevel));
    }

    #[test]
    fn moving_through_themes_previews_them_and_escape_restores_the_original() {
        let mut selector = SettingsSelector::new(&values());
        press(&mut selector, &[KeyCode::Up, KeyCode::Enter]);
        insta::assert_snapshot!(view(&selector, 60, 0), @r"
            ────────────────────────────────────────────────────────────
            Theme

            Choose a colour theme (it shows as you move)

              dark
            → light
              solarized

              enter to select · escape/ctrl+c to go back
            ────────────────────────────────────────────────────────────
            ");
        assert_eq!(
            press(&mut selector, &[KeyCode::Down, KeyCode::Up, KeyCode::Esc]),
            [
                SettingsOutcome::PreviewTheme("solarized".into()),
                SettingsOutcome::PreviewTheme("light".into()),
                SettingsOutcome::PreviewTheme("light".into()),
            ]
        );
        assert_eq!(selector.value(SettingId::Theme), Some("light"));
        let outcome = press(
            &mut selector,
            &[KeyCode::Enter, KeyCode::Up, KeyCode::Enter],
        );
        assert_eq!(
            outcome[2],
            SettingsOutcome::Changed {
                setting: SettingId::Theme,
                key: &["theme"],
                value: json!("dark")
            }
        );
        assert_eq!(
            press(&mut selector, &[KeyCode::Esc]),
            [SettingsOutcome::Cancelled]
        );
    }

    #[test]
    fn terminals_without_images_do_not_offer_show_images_and_narrow_widths_fit() {
        let mut v = values();
        v.show_images = None;
        let selector = SettingsSelector::new(&v);
        assert_eq!(selector.value(SettingId::ShowImages), None);
        insta::assert_snapshot!(view(&selector, 30, 14), @r"
            ──────────────────────────────
            >

            → Auto-compact            fa
              Auto-resize images      tr
              Block images            fa
              (1/17)

              Summarize older messages
              automatically when the
              context window fills up

              Type to search · enter/spac…
            ──────────────────────────────
            ");
        for width in 1..90 {
            for height in [0, 5, 30] {
                view(&selector, width, height);
            }
        }
    }
}
