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

    /// Runs `f` on the model registry (built-in, models.json and extension providers).
    pub fn with_registry<T>(&self, f: impl FnOnce(&crate::ai::models::ModelRegistry) -> T) -> T {
        f(&self.state().registry)
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

    /// Stores a sign-in's credential entry for `provider` in `auth.json` and reloads the
    /// models, so the provider's models are usable at once.
    pub fn save_credential(&self, provider: &str, entry: Value) -> Result<(), String> {
        let mut st = self.state();
        st.registry
            .auth_mut()
            .set_credential(provider, entry)
            .map_err(|e| e.to_string())?;
        st.registry.reload();
        Ok(())
    }

    /// The `type` of `provider`'s auth.json entry (`api_key`, `oauth`), if it has one.
    pub fn stored_credential_type(&self, provider: &str) -> Option<String> {
        self.state().registry.auth().get(provider).map(|e| {
            e.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
    }

    /// Whether `provider` is signed in with a subscription (its auth.json entry is an
    /// OAuth credential), pi's `isUsingOAuth`: the footer marks the cost `(sub)`.
    pub fn uses_oauth(&self, provider: &str) -> bool {
        self.stored_credential_type(provider).as_deref() == Some("oauth")
    }

    /// pi's test for the Anthropic extra-usage warning: `model` is an Anthropic model and
    /// either auth.json holds an OAuth login for it or the key that requests would use is
    /// a subscription token (`sk-ant-oat…`, e.g. from `ANTHROPIC_OAUTH_TOKEN`). A key that
    /// cannot be resolved counts as no.
    pub fn anthropic_subscription_auth(&self, model: &crate::ai::model::Model) -> bool {
        if model.provider != "anthropic" {
            return false;
        }
        if self.uses_oauth(&model.provider) {
            return true;
        }
        self.state()
            .registry
            .request_auth(model)
            .ok()
            .and_then(|auth| auth.api_key)
            .is_some_and(|key| key.expose().starts_with("sk-ant-oat"))
    }

    /// Providers with an auth.json entry.
    pub fn stored_credentials(&self) -> Vec<String> {
        self.state().registry.auth().list()
    }

    /// Where `provider`'s credential comes from.
    pub fn auth_source(&self, provider: &str) -> crate::ai::auth::AuthSource {
        self.state().registry.auth_source(provider)
    }

    /// Every known model, with credentials or not.
    pub fn all_models(&self) -> Vec<Model> {
        self.state().registry.all().to_vec()
    }

    /// The auth.json path.
    pub fn auth_path(&self) -> std::path::PathBuf {
        self.state().registry.auth().path().to_path_buf()
    }
}
