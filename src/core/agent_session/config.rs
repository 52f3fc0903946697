//! Settings, models and credentials as front ends see them. `AgentSession` owns all three;
//! the TUI, RPC, print mode and extensions read copies and change them only through these
//! methods, so every change goes one way (and a later change — an event, a lock, a
//! reload — has one place to go).

use serde_json::Value;

use super::AgentSession;
use crate::ai::auth::ApiKey;
use crate::ai::model::Model;
use crate::core::settings::Settings;

impl AgentSession {
    /// A copy of the merged settings (global and project), for reading.
    pub fn settings(&self) -> Settings {
        self.state().settings.clone()
    }

    /// Sets a global setting (`~/.pi/agent/settings.json`) by path, saving the file.
    pub fn set_global_setting(&self, path: &[&str], value: Value) -> Result<(), String> {
        self.state()
            .settings
            .set_global(path, value)
            .map_err(|e| e.to_string())
    }

    /// Removes a global setting by path, saving the file.
    pub fn remove_global_setting(&self, path: &[&str]) -> Result<(), String> {
        self.state()
            .settings
            .remove_global(path)
            .map_err(|e| e.to_string())
    }

    /// Reads `models.json` and `auth.json` again; returns the models.json problem, if any.
    pub fn reload_models(&self) -> Option<String> {
        let mut st = self.state();
        st.registry.reload();
        st.registry.error().map(str::to_string)
    }

    /// The problem with `models.json` found by the last load, if any.
    pub fn models_error(&self) -> Option<String> {
        self.state().registry.error().map(str::to_string)
    }

    /// Models with configured credentials.
    pub fn available_models(&self) -> Vec<Model> {
        self.state().registry.available()
    }

    /// A known model by provider and id (credentials or not).
    pub fn find_model(&self, provider: &str, id: &str) -> Option<Model> {
        self.state().registry.find(provider, id).cloned()
    }

    /// Stores an API key for `provider` in `auth.json` and reloads the models, so the
    /// provider's models are usable at once.
    pub fn save_api_key(&self, provider: &str, key: &ApiKey) -> Result<(), String> {
        let mut st = self.state();
        st.registry
            .auth_mut()
            .set_api_key(provider, key)
            .map_err(|e| e.to_string())?;
        st.registry.reload();
        Ok(())
    }

    /// Removes `provider`'s stored credential from `auth.json`.
    pub fn remove_credential(&self, provider: &str) -> Result<(), String> {
        self.state()
            .registry
            .auth_mut()
            .remove(provider)
            .map_err(|e| e.to_string())
    }
}
