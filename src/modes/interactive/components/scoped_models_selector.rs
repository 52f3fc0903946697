//! The `/scoped-models` picker: every model that has credentials, each marked enabled
//! (✓) or not (✗), to choose which models Ctrl+P cycles through. The enabled models come
//! first, in cycling order, and can be reordered; a search box narrows the list, and the
//! "all" / "clear" keys act on what the search shows. Every change is reported at once
//! ([`ScopedModelsOutcome::Changed`], for this session only); the save key reports the
//! same list as [`ScopedModelsOutcome::Saved`] so the app writes `enabledModels`.
//! Applying the scope and writing settings is the app's job, not this one's.
//!
//! As in pi, "every model enabled" is its own state (no ✓/✗ marks, no scope): the first
//! toggle from it keeps only the toggled model.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::line_input::{InputChange, LineInput};
use super::{Ui, rule, styled_text, text_block};
use crate::ai::model::Model;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize_single_line, truncate_line, truncate_to_width};
use crate::modes::interactive::theme::ThemeToken;

/// A model as `(provider, id)`.
pub type ModelRef = (String, String);

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopedModelsOutcome {
    /// The picker changed (cursor, search, or the save mark); redraw it.
    Handled,
    /// Not a key the picker uses.
    Ignored,
    /// Close the picker.
    Cancelled,
    /// The enabled models changed: apply them, in this order, to this session. Every
    /// model listed means no scope.
    Changed(Vec<ModelRef>),
    /// Save these (same meaning as [`ScopedModelsOutcome::Changed`]) as `enabledModels`.
    Saved(Vec<ModelRef>),
}

/// Model rows shown at most (pi shows 8).
const MAX_VISIBLE: usize = 8;
/// Lines below the rows besides the key hints: the position line, blanks, the model name
/// and the closing rule.
const CHROME_LINES: usize = 5;

#[derive(Debug, Clone)]
pub struct ScopedModelsSelector {
    /// Every available model, in the registry's order.
    models: Vec<Model>,
    /// Indices into `models` of the enabled ones in cycling order; `None` when every
    /// model is enabled (no scope).
    enabled: Option<Vec<usize>>,
    query: LineInput,
    /// Indices into `models`, as listed (enabled first, then search order).
    filtered: Vec<usize>,
    selected: usize,
    /// Changed since opening or the last save.
    unsaved: bool,
}

impl ScopedModelsSelector {
    /// A picker over `models` with `enabled` (in order) ticked; `None` means all of them.
    /// Enabled entries that are not among `models` (no credentials any more) are dropped.
    pub fn new(models: Vec<Model>, enabled: Option<&[ModelRef]>) -> ScopedModelsSelector {
        let mut unique: Vec<Model> = Vec::with_capacity(models.len());
        for model in models {
            if !unique.iter().any(|m| same(m, &model.provider, &model.id)) {
                unique.push(model);
            }
        }
        let enabled = enabled.map(|refs| {
            let mut indices: Vec<usize> = Vec::new();
            for (provider, id) in refs {
                if let Some(i) = unique.iter().position(|m| same(m, provider, id))
                    && !indices.contains(&i)
                {
                    indices.push(i);
                }
            }
            indices
        });
        let mut selector = ScopedModelsSelector {
            models: unique,
            enabled,
            query: LineInput::new(),
            filtered: Vec::new(),
            selected: 0,
            unsaved: false,
        };
        selector.refilter();
        selector
    }

    /// How many models are listed without a search.
    pub fn model_count(&self) -> usize {
        self.models.len()
    }

    /// The enabled models in order (all of them when there is no scope).
    pub fn enabled_models(&self) -> Vec<ModelRef> {
        let refs = |i: &usize| {
            let m = &self.models[*i];
            (m.provider.clone(), m.id.clone())
        };
        match &self.enabled {
            Some(list) => list.iter().map(refs).collect(),
            None => (0..self.models.len()).map(|i| refs(&i)).collect(),
        }
    }

    /// Whether there are unsaved changes.
    pub fn is_unsaved(&self) -> bool {
        self.unsaved
    }

    fn is_enabled(&self, index: usize) -> bool {
        self.enabled.as_ref().is_none_or(|e| e.contains(&index))
    }

    /// Enabled models first (in their order), then the others in registry order.
    fn listing_order(&self) -> Vec<usize> {
        match &self.enabled {
            None => (0..self.models.len()).collect(),
            Some(enabled) => {
                let mut order = enabled.clone();
                order.extend((0..self.models.len()).filter(|i| !enabled.contains(i)));
                order
            }
        }
    }

    fn refilter(&mut self) {
        let order = self.listing_order();
        let texts: Vec<String> = self
            .models
            .iter()
            .map(|m| format!("{} {}", m.id, m.provider))
            .collect();
        self.filtered = fuzzy_filter(&order, self.query.value(), |i| texts[*i].as_str())
            .into_iter()
            .copied()
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    /// Inserts pasted text into the search box.
    pub fn paste(&mut self, text: &str) {
        self.query.insert_str(text);
        self.refilter();
    }

    /// What the "all" / "clear" keys act on: the listed models while searching,
    /// otherwise every model.
    fn targets(&self) -> Option<Vec<usize>> {
        (!self.query.is_empty()).then(|| self.filtered.clone())
    }

    fn toggle(&mut self, index: usize) {
        self.enabled = Some(match self.enabled.take() {
            // From "all": keep only this one.
            None => vec![index],
            Some(mut list) => {
                match list.iter().position(|&i| i == index) {
                    Some(pos) => {
                        list.remove(pos);
                    }
                    None => list.push(index),
                }
                list
            }
        });
    }

    fn enable(&mut self, targets: Option<Vec<usize>>) {
        let Some(mut list) = self.enabled.take() else {
            return;
        };
        let targets = targets.unwrap_or_else(|| (0..self.models.len()).collect());
        for i in targets {
            if !list.contains(&i) {
                list.push(i);
            }
        }
        self.enabled = (list.len() != self.models.len()).then_some(list);
    }

    fn clear(&mut self, targets: Option<Vec<usize>>) {
        self.enabled = Some(match (self.enabled.take(), targets) {
            (None, None) | (Some(_), None) => Vec::new(),
            (None, Some(targets)) => (0..self.models.len())
                .filter(|i| !targets.contains(i))
                .collect(),
            (Some(list), Some(targets)) => {
                list.into_iter().filter(|i| !targets.contains(i)).collect()
            }
        });
    }

    /// Moves the highlighted enabled model one place up (`-1`) or down (`1`) in the
    /// cycling order; false when it cannot move.
    fn reorder(&mut self, up: bool) -> bool {
        let Some(&index) = self.filtered.get(self.selected) else {
            return false;
        };
        let Some(list) = self.enabled.as_mut() else {
            return false;
        };
        let Some(pos) = list.iter().position(|&i| i == index) else {
            return false;
        };
        let Some(target) = (if up {
            pos.checked_sub(1)
        } else {
            Some(pos + 1)
        })
        .filter(|t| *t < list.len()) else {
            return false;
        };
        list.swap(pos, target);
        self.refilter();
        // The cursor follows the model.
        if let Some(row) = self.filtered.iter().position(|&i| i == index) {
            self.selected = row;
        }
        true
    }

    fn changed(&mut self) -> ScopedModelsOutcome {
        self.unsaved = true;
        self.refilter();
        ScopedModelsOutcome::Changed(self.enabled_models())
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ScopedModelsOutcome {
        let action = keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::ModelsReorderUp,
                Action::ModelsReorderDown,
                Action::SelectConfirm,
                Action::ModelsEnableAll,
                Action::ModelsClearAll,
                Action::ModelsToggleProvider,
                Action::ModelsSave,
                Action::SelectCancel,
            ],
        );
        let n = self.filtered.len();
        let highlighted = self.filtered.get(self.selected).copied();
        // Space toggles too, but only while the search box is empty: a leading space
        // searches for nothing, and inside a search it separates words.
        let space_toggle = key.code == KeyCode::Char(' ')
            && (key.modifiers - KeyModifiers::SHIFT).is_empty()
            && self.query.is_empty();
        match action {
            Some(Action::SelectUp) if n > 0 => {
                self.selected = self.selected.checked_sub(1).unwrap_or(n - 1);
            }
            Some(Action::SelectDown) if n > 0 => self.selected = (self.selected + 1) % n,
            Some(Action::SelectUp | Action::SelectDown) => {}
            Some(action @ (Action::ModelsReorderUp | Action::ModelsReorderDown)) => {
                if self.reorder(action == Action::ModelsReorderUp) {
                    return self.changed();
                }
            }
            Some(Action::SelectConfirm) => {
                let Some(index) = highlighted else {
                    return ScopedModelsOutcome::Handled;
                };
                self.toggle(index);
                return self.changed();
            }
            Some(Action::ModelsEnableAll) => {
                let targets = self.targets();
                self.enable(targets);
                return self.changed();
            }
            Some(Action::ModelsClearAll) => {
                let targets = self.targets();
                self.clear(targets);
                return self.changed();
            }
            Some(Action::ModelsToggleProvider) => {
                let Some(index) = highlighted else {
                    return ScopedModelsOutcome::Handled;
                };
                let provider = self.models[index].provider.clone();
                let of_provider: Vec<usize> = (0..self.models.len())
                    .filter(|&i| self.models[i].provider == provider)
                    .collect();
                if of_provider.iter().all(|&i| self.is_enabled(i)) {
                    self.clear(Some(of_provider));
                } else {
                    self.enable(Some(of_provider));
                }
                return self.changed();
            }
            Some(Action::ModelsSave) => {
                self.unsaved = false;
                return ScopedModelsOutcome::Saved(self.enabled_models());
            }
            Some(Action::SelectCancel) => {
                // Ctrl+C first empties the search, as in pi; Escape always closes.
                let is_ctrl_c =
                    key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
                if is_ctrl_c && !self.query.is_empty() {
                    self.query.set_value("");
                    self.refilter();
                    return ScopedModelsOutcome::Handled;
                }
                return ScopedModelsOutcome::Cancelled;
            }
            _ if space_toggle => {
                if let Some(index) = highlighted {
                    self.toggle(index);
                    return self.changed();
                }
            }
            _ => {
                return match self.query.handle_key(key, keys) {
                    InputChange::Edited => {
                        self.refilter();
                        ScopedModelsOutcome::Handled
                    }
                    InputChange::Moved => ScopedModelsOutcome::Handled,
                    InputChange::Ignored => ScopedModelsOutcome::Ignored,
                };
            }
        }
        ScopedModelsOutcome::Handled
    }

    /// The picker in at most `width` columns and (when `height` > 0) about `height` rows:
    /// fewer models are shown to fit, never fewer than one.
    pub fn render(&self, width: usize, height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_with_cursor(width, height, ui).0
    }

    /// [`ScopedModelsSelector::render`] plus where the terminal cursor belongs in the
    /// search box (column, row).
    pub fn render_with_cursor(
        &self,
        width: usize,
        height: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let muted = ui.fg(ThemeToken::Muted);
        let cut = |line: Line<'static>| truncate_line(line, width, Span::raw("…"));
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![border.clone(), Line::default()];
        out.extend(styled_text(
            "Model Configuration",
            ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
            width,
            0,
        ));
        out.extend(styled_text(
            &format!(
                "Session-only. {} to save to settings.",
                ui.key(Action::ModelsSave)
            ),
            muted,
            width,
            0,
        ));
        out.push(Line::default());
        let (search, column) = self.query.render_with_cursor(width, true);
        let cursor = (
            u16::try_from(column).unwrap_or(u16::MAX),
            u16::try_from(out.len()).unwrap_or(u16::MAX),
        );
        out.push(search);
        out.push(Line::default());

        let hints = text_block(vec![self.hint_spans(ui)], width, 0);
        let max_visible = if height == 0 {
            MAX_VISIBLE
        } else {
            height
                .saturating_sub(out.len() + CHROME_LINES + hints.len())
                .clamp(1, MAX_VISIBLE)
        };
        let n = self.filtered.len();
        if n == 0 {
            out.push(cut(Line::from(Span::styled("  No matching models", muted))));
        } else {
            let start = self
                .selected
                .saturating_sub(max_visible / 2)
                .min(n.saturating_sub(max_visible));
            let end = (start + max_visible).min(n);
            for row in start..end {
                out.push(cut(self.row(self.filtered[row], row == self.selected, ui)));
            }
            if start > 0 || end < n {
                let text = format!("  ({}/{n})", self.selected + 1);
                out.push(Line::from(Span::styled(
                    truncate_to_width(&text, width, "").into_owned(),
                    muted,
                )));
            }
            let model = &self.models[self.filtered[self.selected]];
            out.push(Line::default());
            out.push(cut(Line::from(Span::styled(
                format!("  Model Name: {}", sanitize_single_line(&model.name)),
                muted,
            ))));
        }
        out.push(Line::default());
        out.extend(hints);
        out.push(border);
        (out, Some(cursor))
    }

    fn row(&self, index: usize, selected: bool, ui: &Ui<'_>) -> Line<'static> {
        let model = &self.models[index];
        let accent = ui.fg(ThemeToken::Accent);
        let (cursor, id_style) = if selected {
            (Span::styled("→ ", accent), accent)
        } else {
            (Span::raw("  "), Style::default())
        };
        let mut spans = vec![
            cursor,
            Span::styled(sanitize_single_line(&model.id), id_style),
            Span::styled(
                format!(" [{}]", sanitize_single_line(&model.provider)),
                ui.fg(ThemeToken::Muted),
            ),
        ];
        // No marks while every model is enabled (no scope), as in pi.
        if self.enabled.is_some() {
            spans.push(if self.is_enabled(index) {
                Span::styled(" ✓", ui.fg(ThemeToken::Success))
            } else {
                Span::styled(" ✗", ui.fg(ThemeToken::Dim))
            });
        }
        Line::from(spans)
    }

    /// `enter toggle · ctrl+a all · … · 2/5 enabled`, then `(unsaved)` after changes.
    fn hint_spans(&self, ui: &Ui<'_>) -> Vec<Span<'static>> {
        let count = match &self.enabled {
            None => "all enabled".to_string(),
            Some(list) => format!("{}/{} enabled", list.len(), self.models.len()),
        };
        let parts = [
            format!("{} toggle", ui.key(Action::SelectConfirm)),
            format!("{} all", ui.key(Action::ModelsEnableAll)),
            format!("{} clear", ui.key(Action::ModelsClearAll)),
            format!("{} provider", ui.key(Action::ModelsToggleProvider)),
            format!(
                "{}/{} reorder",
                ui.key(Action::ModelsReorderUp),
                ui.key(Action::ModelsReorderDown)
            ),
            format!("{} save", ui.key(Action::ModelsSave)),
            count,
        ];
        let dim = ui.fg(ThemeToken::Dim);
        let mut spans = vec![Span::styled(format!("  {}", parts.join(" · ")), dim)];
        if self.unsaved {
            spans.push(Span::styled(" ", dim));
            spans.push(Span::styled("(unsaved)", ui.fg(ThemeToken::Warning)));
        }
        spans
    }
}

fn same(model: &Model, provider: &str, id: &str) -> bool {
    model.provider == provider && model.id == id
}

#[cfg(test)]
mod tests;
