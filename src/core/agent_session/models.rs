//! Switching models and thinking levels. Each change is recorded in the session
//! (`model_change`, `thinking_level_change`); a level the model cannot do is clamped.
//! As in pi 1.6 a switch is for the session only: the saved defaults (`defaultProvider`,
//! `defaultModel`, `defaultThinkingLevel`) change only through the `*_as_default`
//! methods (Ctrl+S in the model and thinking selectors, a login's first model). Also
//! the refresh of an expired OAuth token of the current model's provider before a
//! request.

use std::sync::atomic::Ordering;

use super::{AgentSession, State};
use crate::ai::http::shared_client;
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::resolve::ScopedModel;
use crate::ai::oauth;
use crate::core::events::SessionEvent;
use crate::extensions::ModelSelectSource;

/// Result of cycling models (RPC `cycle_model`).
#[derive(Debug, Clone, PartialEq)]
pub struct CycledModel {
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub is_scoped: bool,
}

/// Direction for Ctrl+P / Shift+Ctrl+P.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

fn same(a: &Model, b: &Model) -> bool {
    a.provider == b.provider && a.id == b.id
}

impl State {
    /// The level to use after switching to `target`, as pi 1.6 picks it: an explicit one,
    /// else the target's `modelThinkingLevels` entry, else `defaultThinkingLevel`, else
    /// the current level (then clamped to the target).
    fn level_for_switch(&self, target: &Model, explicit: Option<ThinkingLevel>) -> ThinkingLevel {
        if let Some(level) = explicit {
            return level;
        }
        self.settings
            .model_thinking_level(&target.provider, &target.id)
            .or_else(|| self.settings.default_thinking_level())
            .unwrap_or(self.thinking)
    }

    /// Applies a level (clamped), recording it only when it changes.
    fn apply_thinking(&mut self, level: ThinkingLevel) -> Result<bool, String> {
        let effective = match &self.model {
            Some(m) => m.clamp_thinking(level),
            None => level,
        };
        if effective == self.thinking {
            return Ok(false);
        }
        self.thinking = effective;
        self.session
            .append_thinking_level_change(effective.as_str())
            .map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Switches the model; `Ok(true)` when the thinking level changed with it.
    fn apply_model(
        &mut self,
        model: Model,
        explicit: Option<ThinkingLevel>,
    ) -> Result<bool, String> {
        let level = self.level_for_switch(&model, explicit);
        self.session
            .append_model_change(&model.provider, &model.id)
            .map_err(|e| e.to_string())?;
        self.tool_config
            .model_accepts_images
            .store(model.supports_images(), Ordering::Relaxed);
        self.model = Some(model);
        self.apply_thinking(level)
    }
}

impl State {
    /// Saves `model` as `defaultProvider` / `defaultModel`, as pi does on Ctrl+S; with a
    /// model scope that lacks it, the model joins the scope (and `enabledModels`, when
    /// that is set), so cycling reaches the new default.
    fn save_default_model(&mut self, model: &Model) {
        self.settings.set_default_model(&model.provider, &model.id);
        if self.scoped_models.is_empty() || self.scoped_models.iter().any(|s| same(&s.model, model))
        {
            return;
        }
        self.scoped_models.push(ScopedModel {
            model: model.clone(),
            thinking: None,
        });
        let mut patterns = self.settings.enabled_models();
        let reference = format!("{}/{}", model.provider, model.id);
        if patterns.is_empty() || patterns.iter().any(|p| p.eq_ignore_ascii_case(&reference)) {
            return;
        }
        patterns.push(reference);
        // A failed write is not fatal: the scope still has the model for this run.
        let _ = self
            .settings
            .set_global(&["enabledModels"], serde_json::json!(patterns));
    }
}

impl AgentSession {
    /// Switches to `model` for this session (error if it has no credentials).
    pub fn set_model(&self, model: Model) -> Result<(), String> {
        self.select_model(model, false)
    }

    /// Switches to `model` and saves it as the default model (the model selector's
    /// Ctrl+S).
    pub fn set_model_as_default(&self, model: Model) -> Result<(), String> {
        self.select_model(model, true)
    }

    fn select_model(&self, model: Model, save: bool) -> Result<(), String> {
        let (changed, level_changed, previous, previous_level, level) = {
            let mut st = self.state();
            if !st.registry.has_configured_auth(&model) {
                return Err(format!("No API key for {}/{}", model.provider, model.id));
            }
            let changed = !st.model.as_ref().is_some_and(|m| same(m, &model));
            let previous = st.model.clone();
            let previous_level = st.thinking;
            let level_changed = st.apply_model(model.clone(), None)?;
            if save {
                st.save_default_model(&model);
            }
            (
                changed,
                level_changed,
                previous,
                previous_level,
                st.thinking,
            )
        };
        if level_changed {
            self.emit(SessionEvent::ThinkingLevelChanged { level });
        }
        if changed {
            self.emit(SessionEvent::ModelChanged);
        }
        self.notify_model_select(&model, previous.as_ref(), ModelSelectSource::Set);
        self.notify_thinking_level_select(level, previous_level);
        Ok(())
    }

    /// Replaces the models Ctrl+P cycles through (`/scoped-models`); empty means every
    /// model with credentials. A model already in the scope keeps the thinking level its
    /// `--models` pattern gave it (pi drops it; keeping it loses nothing).
    pub fn set_scoped_models(&self, models: Vec<Model>) {
        let mut st = self.state();
        let scoped = models
            .into_iter()
            .map(|model| {
                let thinking = st
                    .scoped_models
                    .iter()
                    .find(|s| same(&s.model, &model))
                    .and_then(|s| s.thinking);
                ScopedModel { model, thinking }
            })
            .collect();
        st.scoped_models = scoped;
    }

    /// Ctrl+P: the next (or previous) model of the scope, or of all models with keys.
    /// `None` when there is nothing to cycle to.
    pub fn cycle_model(&self, direction: Direction) -> Result<Option<CycledModel>, String> {
        let (result, level_changed, (previous_model, previous_level)) = {
            let mut st = self.state();
            let scoped: Vec<(Model, Option<ThinkingLevel>)> = st
                .scoped_models
                .iter()
                .filter(|s| st.registry.has_configured_auth(&s.model))
                .map(|s| (s.model.clone(), s.thinking))
                .collect();
            let is_scoped = !st.scoped_models.is_empty();
            let candidates: Vec<(Model, Option<ThinkingLevel>)> = if is_scoped {
                scoped
            } else {
                st.registry
                    .available()
                    .into_iter()
                    .map(|m| (m, None))
                    .collect()
            };
            if candidates.len() <= 1 {
                return Ok(None);
            }
            let current = st
                .model
                .as_ref()
                .and_then(|m| candidates.iter().position(|(c, _)| same(c, m)))
                .unwrap_or(0);
            let len = candidates.len();
            let next = match direction {
                Direction::Forward => (current + 1) % len,
                Direction::Backward => (current + len - 1) % len,
            };
            let (model, level) = candidates[next].clone();
            let previous = (st.model.clone(), st.thinking);
            let level_changed = st.apply_model(model.clone(), level)?;
            (
                CycledModel {
                    model,
                    thinking: st.thinking,
                    is_scoped,
                },
                level_changed,
                previous,
            )
        };
        if level_changed {
            self.emit(SessionEvent::ThinkingLevelChanged {
                level: result.thinking,
            });
        }
        self.emit(SessionEvent::ModelChanged);
        self.notify_model_select(
            &result.model,
            previous_model.as_ref(),
            ModelSelectSource::Cycle,
        );
        self.notify_thinking_level_select(result.thinking, previous_level);
        Ok(Some(result))
    }

    /// Sets the thinking level for this session (clamped to the model); recorded only if
    /// it changed.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<ThinkingLevel, String> {
        self.select_thinking_level(level, false)
    }

    /// Sets the thinking level and saves the level asked for (not the clamped one, as
    /// pi) as `defaultThinkingLevel`: the thinking selector's Ctrl+S.
    pub fn set_thinking_level_as_default(
        &self,
        level: ThinkingLevel,
    ) -> Result<ThinkingLevel, String> {
        self.select_thinking_level(level, true)
    }

    fn select_thinking_level(
        &self,
        level: ThinkingLevel,
        save: bool,
    ) -> Result<ThinkingLevel, String> {
        let (changed, effective, previous) = {
            let mut st = self.state();
            let previous = st.thinking;
            let changed = st.apply_thinking(level)?;
            if save {
                st.settings.set_default_thinking_level(level);
            }
            (changed, st.thinking, previous)
        };
        if changed {
            self.emit(SessionEvent::ThinkingLevelChanged { level: effective });
            self.notify_thinking_level_select(effective, previous);
        }
        Ok(effective)
    }

    /// Shift+Tab: the next thinking level. `None` for models without reasoning.
    pub fn cycle_thinking_level(&self) -> Result<Option<ThinkingLevel>, String> {
        let (levels, current) = {
            let st = self.state();
            let Some(model) = st.model.as_ref().filter(|m| m.reasoning) else {
                return Ok(None);
            };
            (model.available_thinking_levels(), st.thinking)
        };
        let index = levels.iter().position(|l| *l == current).unwrap_or(0);
        let next = levels[(index + 1) % levels.len()];
        self.set_thinking_level(next).map(Some)
    }

    /// The levels the current model supports (all of them without a model).
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        match &self.state().model {
            Some(m) => m.available_thinking_levels(),
            None => ThinkingLevel::ALL.to_vec(),
        }
    }
}

impl AgentSession {
    /// For a provider an extension registered with `oauth`: an expired stored credential
    /// is renewed with the extension's `refreshToken` (under pi's auth.json lock, read
    /// again once held, as for the built-in providers) and saved.
    async fn refresh_extension_oauth_if_due(&self) -> Result<(), String> {
        let (provider, path) = {
            let st = self.state();
            let Some(model) = &st.model else {
                return Ok(());
            };
            let expired = st.registry.auth().get(&model.provider).is_some_and(|e| {
                e.get("type").and_then(serde_json::Value::as_str) == Some("oauth")
                    && oauth::is_expired_oauth(e, crate::ai::message::now_ms())
            });
            if !expired {
                return Ok(());
            }
            (
                model.provider.clone(),
                st.registry.auth().path().to_path_buf(),
            )
        };
        let Some(flow) = oauth::external::get(&provider) else {
            return Ok(());
        };
        let guard = oauth::lock(&path, std::time::Duration::from_secs(40)).await?;
        let entry = {
            let mut st = self.state();
            st.registry.auth_mut().reload();
            match st.registry.auth().get(&provider) {
                Some(e) if oauth::is_expired_oauth(e, crate::ai::message::now_ms()) => e.clone(),
                // Another process refreshed it meanwhile.
                _ => return Ok(()),
            }
        };
        let mut credentials = entry;
        if let Some(map) = credentials.as_object_mut() {
            map.remove("type");
        }
        let renewed = flow
            .refresh(credentials)
            .await
            .map_err(|e| format!("Failed to refresh OAuth token for {provider}: {e}"))?;
        drop(guard);
        self.save_credential(&provider, renewed)
    }

    /// Refreshes the current model's stored OAuth token if it has expired (pi does this
    /// before every request), then re-reads auth.json so the request uses the new token.
    /// The registry lock is not held while the token endpoint is asked.
    pub(crate) async fn refresh_oauth_if_due(&self) -> Result<(), String> {
        self.refresh_extension_oauth_if_due().await?;
        let (path, refresher) = {
            let st = self.state();
            let Some(model) = &st.model else {
                return Ok(());
            };
            match st.registry.auth().oauth_refresh_due(&model.provider) {
                Some(r) => (st.registry.auth().path().to_path_buf(), r),
                None => return Ok(()),
            }
        };
        let result = oauth::refresh_stored(&path, refresher, &shared_client()).await;
        let mut st = self.state();
        st.registry.auth_mut().reload();
        match result {
            Ok(_) => Ok(()),
            // As pi: another process may have refreshed while ours failed.
            Err(_)
                if st
                    .registry
                    .auth()
                    .oauth_refresh_due(refresher.id())
                    .is_none() =>
            {
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    }
}
