//! The model selector of `/model` and Ctrl+L: a fuzzy search over the models the app
//! hands in (it re-reads `models.json` before opening it), the current model first and
//! ticked, the saved default second and marked `· default` (searching "default" finds
//! it), each row with a compact note of context window, reasoning and image input. With
//! a model scope (`--models` / `enabledModels`) it opens on the scoped models and Tab
//! switches to all of them, as in pi. Enter asks the app to switch for the session,
//! Ctrl+S (`app.models.save`) to switch and save the model as the default
//! ([`ModelSelectorOutcome::Selected`]); doing it is the app's job.

use crossterm::event::KeyEvent;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::Ui;
use super::footer::format_tokens;
use super::line_input::{InputChange, LineInput};
use super::rule;
use crate::ai::model::Model;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{
    line_width, sanitize_single_line, str_width, truncate_line, truncate_to_width,
};
use crate::modes::interactive::theme::ThemeToken;

/// Which models are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelScope {
    /// Every available model.
    All,
    /// The `--models` / `enabledModels` scope.
    Scoped,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSelectorOutcome {
    /// The selector changed; redraw it.
    Handled,
    /// Not a key the selector uses.
    Ignored,
    /// Switch to this model; with `save_default`, also save it as the default model.
    Selected {
        provider: String,
        id: String,
        save_default: bool,
    },
    /// Close without switching.
    Cancelled,
}

/// Rows shown at most.
const MAX_VISIBLE: usize = 10;
/// Lines besides the rows (rules, blanks, scope lines, search box, position line, the
/// model name, the key hints).
const CHROME_LINES: usize = 15;

#[derive(Debug, Clone)]
pub struct ModelSelector {
    /// Every available model: the current one first, then by provider.
    all: Vec<Model>,
    /// The scoped models in scope order.
    scoped: Vec<Model>,
    scope: ModelScope,
    current: Option<(String, String)>,
    /// The saved `defaultProvider` / `defaultModel`.
    default: Option<(String, String)>,
    query: LineInput,
    /// Indices into the active list, best match first.
    filtered: Vec<usize>,
    selected: usize,
    error: Option<String>,
}

impl ModelSelector {
    /// A selector over `models` with `current` (provider, id) marked.
    pub fn new(models: Vec<Model>, current: Option<(&str, &str)>) -> ModelSelector {
        let current = current.map(|(p, i)| (p.to_string(), i.to_string()));
        let is_current = |m: &Model| {
            current
                .as_ref()
                .is_some_and(|(p, i)| *p == m.provider && *i == m.id)
        };
        let mut all = models;
        // Stable: within a provider the registry's order stays.
        all.sort_by(|a, b| {
            is_current(b)
                .cmp(&is_current(a))
                .then_with(|| a.provider.to_lowercase().cmp(&b.provider.to_lowercase()))
        });
        let mut selector = ModelSelector {
            all,
            scoped: Vec::new(),
            scope: ModelScope::All,
            current,
            default: None,
            query: LineInput::new(),
            filtered: Vec::new(),
            selected: 0,
            error: None,
        };
        selector.refilter();
        selector.select_current();
        selector
    }

    /// Marks the saved default model (listed second, after the current one).
    pub fn with_default(mut self, default: Option<(&str, &str)>) -> Self {
        self.default = default.map(|(p, i)| (p.to_string(), i.to_string()));
        let key = |m: &Model| {
            let is = |wanted: &Option<(String, String)>| {
                wanted
                    .as_ref()
                    .is_some_and(|(p, i)| *p == m.provider && *i == m.id)
            };
            (!is(&self.current), !is(&self.default))
        };
        // Stable: the provider order within each group stays.
        let mut all = std::mem::take(&mut self.all);
        all.sort_by_key(|m| key(m));
        self.all = all;
        self.refilter();
        self.select_current();
        self
    }

    /// The scoped models; when there are any, the selector opens on them.
    pub fn with_scoped(mut self, scoped: Vec<Model>) -> Self {
        self.scope = if scoped.is_empty() {
            ModelScope::All
        } else {
            ModelScope::Scoped
        };
        self.scoped = scoped;
        self.refilter();
        self.select_current();
        self
    }

    /// Starts with a search (`/model <text>` that matched no model exactly).
    pub fn with_query(mut self, query: &str) -> Self {
        self.query.set_value(query);
        self.refilter();
        self
    }

    /// A problem loading `models.json`, shown instead of the model name (built-in models
    /// are still listed).
    pub fn with_error(mut self, error: Option<String>) -> Self {
        self.error = error;
        self
    }

    pub fn scope(&self) -> ModelScope {
        self.scope
    }

    fn active(&self) -> &[Model] {
        match self.scope {
            ModelScope::All => &self.all,
            ModelScope::Scoped => &self.scoped,
        }
    }

    /// The highlighted model.
    pub fn selected_model(&self) -> Option<&Model> {
        self.filtered.get(self.selected).map(|&i| &self.active()[i])
    }

    fn is_current(&self, model: &Model) -> bool {
        self.current
            .as_ref()
            .is_some_and(|(p, i)| *p == model.provider && *i == model.id)
    }

    fn is_default(&self, model: &Model) -> bool {
        self.default
            .as_ref()
            .is_some_and(|(p, i)| *p == model.provider && *i == model.id)
    }

    fn select_current(&mut self) {
        if let Some(pos) = self
            .filtered
            .iter()
            .position(|&i| self.is_current(&self.active()[i]))
        {
            self.selected = pos;
        }
    }

    fn refilter(&mut self) {
        let active = self.active();
        let texts: Vec<String> = active
            .iter()
            .map(|m| {
                let default = if self.is_default(m) { " default" } else { "" };
                format!(
                    "{id} {provider} {provider}/{id} {name}{default}",
                    id = m.id,
                    provider = m.provider,
                    name = m.name
                )
            })
            .collect();
        let indices: Vec<usize> = (0..active.len()).collect();
        let query = self.query.value();
        let mut filtered: Vec<usize> = fuzzy_filter(&indices, query, |i| texts[*i].as_str())
            .into_iter()
            .copied()
            .collect();
        // As pi: typing (the start of) "default" puts the default model first.
        let wanted = query.trim().to_lowercase();
        if !wanted.is_empty() && "default".starts_with(&wanted) {
            let defaults: Vec<usize> = (0..active.len())
                .filter(|&i| self.is_default(&active[i]))
                .collect();
            filtered.retain(|i| !defaults.contains(i));
            filtered.splice(0..0, defaults);
        }
        self.filtered = filtered;
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    /// Inserts pasted text into the search box.
    pub fn paste(&mut self, text: &str) {
        self.query.insert_str(text);
        self.refilter();
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ModelSelectorOutcome {
        let action = keys.action_for(
            key,
            &[
                Action::Tab,
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
                Action::ModelsSave,
            ],
        );
        let n = self.filtered.len();
        match action {
            Some(Action::Tab) => {
                if self.scoped.is_empty() {
                    return ModelSelectorOutcome::Ignored;
                }
                self.scope = match self.scope {
                    ModelScope::All => ModelScope::Scoped,
                    ModelScope::Scoped => ModelScope::All,
                };
                self.selected = 0;
                self.refilter();
                if self.query.is_empty() {
                    self.select_current();
                }
            }
            Some(Action::SelectUp) if n > 0 => {
                self.selected = self.selected.checked_sub(1).unwrap_or(n - 1);
            }
            Some(Action::SelectDown) if n > 0 => self.selected = (self.selected + 1) % n,
            Some(Action::SelectUp | Action::SelectDown) => return ModelSelectorOutcome::Ignored,
            Some(a @ (Action::SelectConfirm | Action::ModelsSave)) => {
                return match self.selected_model() {
                    Some(m) => ModelSelectorOutcome::Selected {
                        provider: m.provider.clone(),
                        id: m.id.clone(),
                        save_default: a == Action::ModelsSave,
                    },
                    None => ModelSelectorOutcome::Ignored,
                };
            }
            Some(Action::SelectCancel) => return ModelSelectorOutcome::Cancelled,
            _ => {
                return match self.query.handle_key(key, keys) {
                    InputChange::Edited => {
                        self.refilter();
                        ModelSelectorOutcome::Handled
                    }
                    InputChange::Moved => ModelSelectorOutcome::Handled,
                    InputChange::Ignored => ModelSelectorOutcome::Ignored,
                };
            }
        }
        ModelSelectorOutcome::Handled
    }

    /// The selector in at most `width` columns and (when `height` > 0) about `height`
    /// rows: fewer models are shown to fit, never fewer than one.
    pub fn render(&self, width: usize, height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_with_cursor(width, height, ui).0
    }

    /// [`ModelSelector::render`] plus where the terminal cursor belongs in the search box
    /// (column, row), for input methods.
    pub fn render_with_cursor(
        &self,
        width: usize,
        height: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let muted = ui.fg(ThemeToken::Muted);
        let accent = ui.fg(ThemeToken::Accent);
        let cut = |line: Line<'static>| truncate_line(line, width, Span::raw("…"));
        let mut out = vec![rule(width, ui.fg(ThemeToken::Border)), Line::default()];
        if self.scoped.is_empty() {
            out.push(cut(Line::from(Span::styled(
                "Only models of providers with credentials are listed. /login adds more.",
                ui.fg(ThemeToken::Warning),
            ))));
        } else {
            let style = |scope| if self.scope == scope { accent } else { muted };
            out.push(cut(Line::from(vec![
                Span::styled("Scope: ", muted),
                Span::styled("all", style(ModelScope::All)),
                Span::styled(" | ", muted),
                Span::styled("scoped", style(ModelScope::Scoped)),
            ])));
            let mut hint = ui.key_hint(Action::Tab, "scope");
            hint.push(Span::styled(" (all/scoped)", muted));
            out.push(cut(Line::from(hint)));
        }
        out.push(Line::default());
        let (search, column) = self.query.render_with_cursor(width, true);
        let cursor = (
            u16::try_from(column).unwrap_or(u16::MAX),
            u16::try_from(out.len()).unwrap_or(u16::MAX),
        );
        out.push(search);
        out.push(Line::default());

        let max_visible = if height == 0 {
            MAX_VISIBLE
        } else {
            height.saturating_sub(CHROME_LINES).clamp(1, MAX_VISIBLE)
        };
        let n = self.filtered.len();
        let start = self
            .selected
            .saturating_sub(max_visible / 2)
            .min(n.saturating_sub(max_visible));
        let end = (start + max_visible).min(n);
        let rows: Vec<(Line<'static>, String)> = (start..end)
            .map(|row| {
                let model = &self.active()[self.filtered[row]];
                (
                    self.row(model, row == self.selected, ui),
                    model_notes(model),
                )
            })
            .collect();
        // Notes for every row or for none, so they form one column.
        let notes_fit = rows
            .iter()
            .all(|(left, notes)| line_width(left) + 2 + str_width(notes) <= width);
        for (left, notes) in rows {
            if notes_fit {
                let gap = width - line_width(&left) - str_width(&notes);
                let mut spans = left.spans;
                spans.push(Span::raw(" ".repeat(gap)));
                spans.push(Span::styled(notes, ui.fg(ThemeToken::Dim)));
                out.push(Line::from(spans));
            } else {
                out.push(truncate_line(left, width, Span::raw("…")));
            }
        }
        if start > 0 || end < n {
            let text = format!("  ({}/{n})", self.selected + 1);
            out.push(Line::from(Span::styled(
                truncate_to_width(&text, width, "").into_owned(),
                muted,
            )));
        }
        if let Some(error) = &self.error {
            for line in error.lines() {
                out.push(cut(Line::from(Span::styled(
                    sanitize_single_line(line),
                    ui.fg(ThemeToken::Error),
                ))));
            }
        } else if let Some(model) = self.selected_model() {
            out.push(Line::default());
            out.push(cut(Line::from(Span::styled(
                format!("  Model Name: {}", sanitize_single_line(&model.name)),
                muted,
            ))));
        } else {
            out.push(cut(Line::from(Span::styled("  No matching models", muted))));
        }
        out.push(Line::default());
        let hint = format!(
            "  {} to select · {} to set as default · {} to cancel",
            ui.key_capitalized(Action::SelectConfirm),
            ui.key_capitalized(Action::ModelsSave),
            ui.key_capitalized(Action::SelectCancel)
        );
        out.push(cut(Line::from(Span::styled(hint, ui.fg(ThemeToken::Dim)))));
        out.push(rule(width, ui.fg(ThemeToken::Border)));
        (out, Some(cursor))
    }

    fn row(&self, model: &Model, selected: bool, ui: &Ui<'_>) -> Line<'static> {
        let accent = ui.fg(ThemeToken::Accent);
        let muted = ui.fg(ThemeToken::Muted);
        let (cursor, id_style) = if selected {
            (Span::styled("→ ", accent), accent)
        } else {
            (Span::raw("  "), Style::default())
        };
        // pi 1.6's row: cursor, current tick, id, the name when it says more than the
        // id, provider, default badge.
        let tick = if self.is_current(model) {
            Span::styled("✓ ", accent)
        } else {
            Span::raw("  ")
        };
        let mut spans = vec![
            cursor,
            tick,
            Span::styled(sanitize_single_line(&model.id), id_style),
        ];
        if let Some(name) = distinct_name(&model.id, &model.name) {
            spans.push(Span::styled(
                format!(" ({})", sanitize_single_line(name)),
                muted,
            ));
        }
        spans.push(Span::styled(
            format!(" [{}]", sanitize_single_line(&model.provider)),
            muted,
        ));
        if self.is_default(model) {
            spans.push(Span::styled(" · default", muted));
        }
        Line::from(spans)
    }
}

/// The model's name when it has words its id does not (a renamed model), as pi decides
/// whether to show it: "Mock Two" for `m-two` is shown, "Claude Sonnet 4.5" for
/// `claude-sonnet-4-5` is not.
fn distinct_name<'a>(id: &str, name: &'a str) -> Option<&'a str> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let words = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let id_words = words(id);
    let compact = id_words.concat();
    let covered = |w: &String| {
        id_words.contains(w) || (w.chars().count() > 1 && compact.contains(w.as_str()))
    };
    (!words(name).iter().all(covered)).then_some(name)
}

/// `200k ctx · reasoning · images`: what matters when choosing a model, in one short
/// column.
fn model_notes(model: &Model) -> String {
    let mut notes = format!("{} ctx", format_tokens(model.context_window));
    if model.reasoning {
        notes.push_str(" · reasoning");
    }
    if model.supports_images() {
        notes.push_str(" · images");
    }
    notes
}

#[cfg(test)]
mod tests;
