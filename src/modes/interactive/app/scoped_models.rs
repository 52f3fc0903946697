//! `/scoped-models`: opens the scoped models picker on the session's current scope (or,
//! without one, on the `enabledModels` setting), applies each change to the running
//! session's Ctrl+P scope at once, and writes `enabledModels` when the user saves.

use crate::ai::models::resolve::resolve_model_scope;
use crate::modes::interactive::components::scoped_models_selector::{
    ModelRef, ScopedModelsSelector,
};

use super::overlay::Overlay;
use super::state::App;

impl App {
    pub fn open_scoped_models(&mut self) {
        self.session.reload_models();
        let models = self.session.available_models();
        if models.is_empty() {
            self.flash("No models available".into());
            return;
        }
        let session_scope = self.session.scoped_models();
        let enabled: Option<Vec<ModelRef>> = if session_scope.is_empty() {
            let patterns = self.session.settings().enabled_models();
            if patterns.is_empty() {
                None
            } else {
                let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
                let (scoped, _warnings) = resolve_model_scope(&refs, &models);
                // Patterns that match nothing any more leave every model enabled.
                (!scoped.is_empty()).then(|| {
                    scoped
                        .into_iter()
                        .map(|s| (s.model.provider, s.model.id))
                        .collect()
                })
            }
        } else {
            Some(
                session_scope
                    .into_iter()
                    .map(|m| (m.provider, m.id))
                    .collect(),
            )
        };
        let selector = ScopedModelsSelector::new(models, enabled.as_deref());
        self.overlay = Some(Overlay::ScopedModels(Box::new(selector)));
    }

    /// The number of models the open picker lists (every one enabled means no scope).
    fn scoped_models_total(&self) -> Option<usize> {
        match &self.overlay {
            Some(Overlay::ScopedModels(selector)) => Some(selector.model_count()),
            _ => None,
        }
    }

    /// A change in the picker: the session's Ctrl+P scope follows at once (not saved).
    pub fn on_scoped_models_changed(&mut self, enabled: Vec<ModelRef>) {
        let total = self.scoped_models_total().unwrap_or(usize::MAX);
        // None enabled, like all enabled, means no filter (as in pi).
        let models = if enabled.is_empty() || enabled.len() >= total {
            Vec::new()
        } else {
            enabled
                .iter()
                .filter_map(|(provider, id)| self.session.find_model(provider, id))
                .collect()
        };
        self.session.set_scoped_models(models);
        self.footer_cache = None;
        // `/model <search>` completes from the scope.
        self.refresh_autocomplete();
    }

    /// Ctrl+S in the picker: `enabledModels` becomes these models as `provider/id`
    /// patterns, or is removed when every model is enabled.
    pub fn on_scoped_models_saved(&mut self, enabled: Vec<ModelRef>) {
        let total = self.scoped_models_total().unwrap_or(usize::MAX);
        let result = if enabled.len() >= total {
            self.session.remove_global_setting(&["enabledModels"])
        } else {
            let patterns: Vec<serde_json::Value> = enabled
                .iter()
                .map(|(provider, id)| serde_json::Value::from(format!("{provider}/{id}")))
                .collect();
            self.session
                .set_global_setting(&["enabledModels"], serde_json::Value::Array(patterns))
        };
        match result {
            // A status line in the chat, as pi's (it stays after the picker closes).
            Ok(()) => self.show_status("Model selection saved to settings"),
            Err(e) => self.notice(format!("Error: Could not save the model selection: {e}")),
        }
    }
}
