//! The model selector of `/model` and Ctrl+L: a fuzzy search over the models the app
//! hands in (it re-reads `models.json` before opening it), the current model first and
//! ticked, each row with a compact note of context window, reasoning and image input.
//! With a model scope (`--models` / `enabledModels`) it opens on the scoped models and
//! Tab switches to all of them, as in pi. Enter asks the app to switch
//! ([`ModelSelectorOutcome::Selected`]); saving the default and recording the change is
//! the app's job.

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
    /// Switch to this model.
    Selected { provider: String, id: String },
    /// Close without switching.
    Cancelled,
}

/// Rows shown at most.
const MAX_VISIBLE: usize = 10;
/// Lines besides the rows (rules, blanks, scope lines, search box, position line, the
/// model name).
const CHROME_LINES: usize = 13;

#[derive(Debug, Clone)]
pub struct ModelSelector {
    /// Every available model: the current one first, then by provider.
    all: Vec<Model>,
    /// The scoped models in scope order.
    scoped: Vec<Model>,
    scope: ModelScope,
    current: Option<(String, String)>,
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
            query: LineInput::new(),
            filtered: Vec::new(),
            selected: 0,
            error: None,
        };
        selector.refilter();
        selector.select_current();
        selector
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
                format!(
                    "{id} {provider} {provider}/{id} {name}",
                    id = m.id,
                    provider = m.provider,
                    name = m.name
                )
            })
            .collect();
        let indices: Vec<usize> = (0..active.len()).collect();
        self.filtered = fuzzy_filter(&indices, self.query.value(), |i| texts[*i].as_str())
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

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ModelSelectorOutcome {
        let action = keys.action_for(
            key,
            &[
                Action::Tab,
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
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
            Some(Action::SelectConfirm) => {
                return match self.selected_model() {
                    Some(m) => ModelSelectorOutcome::Selected {
                        provider: m.provider.clone(),
                        id: m.id.clone(),
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
        out.push(rule(width, ui.fg(ThemeToken::Border)));
        (out, Some(cursor))
    }

    fn row(&self, model: &Model, selected: bool, ui: &Ui<'_>) -> Line<'static> {
        let accent = ui.fg(ThemeToken::Accent);
        let (cursor, id_style) = if selected {
            (Span::styled("→ ", accent), accent)
        } else {
            (Span::raw("  "), Style::default())
        };
        let mut spans = vec![
            cursor,
            Span::styled(sanitize_single_line(&model.id), id_style),
            Span::raw(" "),
            Span::styled(
                format!("[{}]", sanitize_single_line(&model.provider)),
                ui.fg(ThemeToken::Muted),
            ),
        ];
        if self.is_current(model) {
            spans.push(Span::styled(" ✓", ui.fg(ThemeToken::Success)));
        }
        Line::from(spans)
    }
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
