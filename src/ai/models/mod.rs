//! The models pi-rs knows: the built-in catalogue plus `models.json`, and the keys and
//! headers to reach them.
//!
//! The catalogue ([`crate::ai::catalog`], generated from a pi release by
//! `scripts/gen-catalog.mjs`) is parsed once, lazily. [`ModelRegistry`] merges it with
//! `<agent_dir>/models.json` the way pi does: a built-in provider with only `baseUrl`
//! is proxied, `modelOverrides` patch built-in models, custom models are upserted by
//! provider and id. A broken models.json never stops the program: the registry keeps the
//! built-in models and [`ModelRegistry::error`] says what to fix. Pattern matching for
//! `--model`, `--models` and `/model` lives in [`resolve`].

pub mod config;
pub mod resolve;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use self::config::{
    ModelFields, ModelsConfig, ProviderConfig, parse_extension_provider, parse_models_json,
};
use super::auth::{
    ApiKey, AuthStorage, config_value_failure, missing_key_message, resolve_config_value_uncached,
};
use super::catalog::catalog;
use super::model::{Api, Model, ModelCost};

pub use super::providers::calculate_cost;

/// The built-in models, in pi's order (parsed on first use).
pub fn builtin_models() -> &'static [Model] {
    static MODELS: OnceLock<Vec<Model>> = OnceLock::new();
    MODELS.get_or_init(|| {
        catalog()
            .providers
            .iter()
            .flat_map(|p| p.models.iter().cloned())
            .collect()
    })
}

/// Provider names that have built-in models, in pi's order.
pub fn builtin_providers() -> Vec<&'static str> {
    catalog().providers.iter().map(|p| p.id.as_str()).collect()
}

/// Request settings of a models.json provider, resolved per request.
#[derive(Debug, Clone, Default)]
struct ProviderRequestConfig {
    api_key: Option<String>,
    headers: BTreeMap<String, String>,
    auth_header: bool,
}

/// Credentials and headers for one request.
#[derive(Debug, Clone, Default)]
pub struct RequestAuth {
    pub api_key: Option<ApiKey>,
    pub headers: BTreeMap<String, String>,
    /// The `env` of the provider's auth.json credential: variables that win over the
    /// process environment for this provider (pi 1.6).
    pub env: BTreeMap<String, String>,
}

/// Built-in and custom models, and the key store.
#[derive(Debug)]
pub struct ModelRegistry {
    models_json: Option<PathBuf>,
    auth: AuthStorage,
    models: Vec<Model>,
    request_configs: HashMap<String, ProviderRequestConfig>,
    model_headers: HashMap<(String, String), BTreeMap<String, String>>,
    error: Option<String>,
    /// Providers registered by extensions, in registration order (pi's
    /// `registeredProviders`), applied over models.json on every load.
    registered: Vec<(String, Value)>,
}

impl ModelRegistry {
    /// Loads `<agent_dir>/models.json` and `<agent_dir>/auth.json`.
    pub fn load(agent_dir: &Path) -> Self {
        let mut registry = Self {
            models_json: Some(agent_dir.join("models.json")),
            auth: AuthStorage::load(agent_dir),
            models: Vec::new(),
            request_configs: HashMap::new(),
            model_headers: HashMap::new(),
            error: None,
            registered: Vec::new(),
        };
        registry.load_models();
        registry
    }

    /// Only the built-in models and an in-memory key store.
    pub fn builtin_only() -> Self {
        let mut registry = Self {
            models_json: None,
            auth: AuthStorage::in_memory(),
            models: Vec::new(),
            request_configs: HashMap::new(),
            model_headers: HashMap::new(),
            error: None,
            registered: Vec::new(),
        };
        registry.load_models();
        registry
    }

    /// Re-reads models.json and auth.json (pi does this whenever `/model` opens).
    pub fn reload(&mut self) {
        self.auth.reload();
        self.load_models();
    }

    /// What was wrong with models.json, if anything (the built-ins are still loaded).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn auth(&self) -> &AuthStorage {
        &self.auth
    }

    pub fn auth_mut(&mut self) -> &mut AuthStorage {
        &mut self.auth
    }

    /// `--api-key` for a provider (this process only).
    pub fn set_runtime_api_key(&mut self, provider: &str, key: ApiKey) {
        self.auth.set_runtime_api_key(provider, key);
    }

    /// Every model, with or without a key.
    pub fn all(&self) -> &[Model] {
        &self.models
    }

    /// Models whose provider has some credential configured (no command is run).
    pub fn available(&self) -> Vec<Model> {
        self.models
            .iter()
            .filter(|m| self.has_configured_auth(m))
            .cloned()
            .collect()
    }

    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        let provider = crate::ai::auth::catalog_provider_id(provider);
        self.models
            .iter()
            .find(|m| m.provider == provider && m.id == id)
    }

    /// Whether a credential is configured: auth.json, `--api-key`, the environment, or a
    /// models.json `apiKey` whose `$NAME` variables are all set (pi 1.6's check; no
    /// command is run).
    pub fn has_configured_auth(&self, model: &Model) -> bool {
        self.auth.has_auth(&model.provider)
            || self
                .request_configs
                .get(&model.provider)
                .and_then(|c| c.api_key.as_deref())
                .is_some_and(|v| {
                    crate::ai::auth::missing_config_value_env_vars(v, &BTreeMap::new()).is_empty()
                })
    }

    /// The key and extra headers for a request to `model`, in pi 1.6's order:
    /// `--api-key`, auth.json, models.json `apiKey`, then the environment. Errors name the
    /// provider, never the key.
    pub fn request_auth(&self, model: &Model) -> Result<RequestAuth, String> {
        let config = self.request_configs.get(&model.provider);
        let api_key = match self.auth.stored_api_key(&model.provider) {
            Some(k) => Some(k),
            None => match config.and_then(|c| c.api_key.as_deref()) {
                Some(value) => match resolve_config_value_uncached(value) {
                    Some(v) => Some(ApiKey::new(v)),
                    // An unset `$NAME` falls through to the provider's own variable.
                    None if !value.starts_with('!')
                        && crate::ai::auth::env_api_key(&model.provider).is_some() =>
                    {
                        crate::ai::auth::env_api_key(&model.provider).map(|(_, k)| k)
                    }
                    None => {
                        return Err(config_value_failure(
                            value,
                            &format!("API key for provider \"{}\"", model.provider),
                        ));
                    }
                },
                None => crate::ai::auth::env_api_key(&model.provider).map(|(_, k)| k),
            },
        };
        let mut headers = model.headers.clone();
        if let Some(c) = config {
            for (k, v) in &c.headers {
                headers.insert(
                    k.clone(),
                    resolve_or_explain(
                        v,
                        &format!("provider \"{}\" header \"{k}\"", model.provider),
                    )?,
                );
            }
        }
        if let Some(h) = self
            .model_headers
            .get(&(model.provider.clone(), model.id.clone()))
        {
            for (k, v) in h {
                headers.insert(
                    k.clone(),
                    resolve_or_explain(
                        v,
                        &format!("model \"{}\" header \"{k}\"", model.full_id()),
                    )?,
                );
            }
        }
        let Some(key) = api_key else {
            return Err(missing_key_message(&model.provider));
        };
        if config.is_some_and(|c| c.auth_header) {
            headers.insert("Authorization".into(), format!("Bearer {}", key.expose()));
        }
        Ok(RequestAuth {
            api_key: Some(key),
            headers,
            env: self.auth.credential_env(&model.provider),
        })
    }

    fn load_models(&mut self) {
        self.request_configs.clear();
        self.model_headers.clear();
        self.error = None;
        let config = match &self.models_json {
            Some(path) => match std::fs::read_to_string(path) {
                Ok(text) => match parse_models_json(&text, path, &builtin_providers()) {
                    Ok((c, problems)) => {
                        self.error = problems;
                        c
                    }
                    Err(e) => {
                        self.error = Some(e);
                        ModelsConfig::default()
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => ModelsConfig::default(),
                Err(e) => {
                    self.error = Some(format!(
                        "Failed to load models.json: {e}\n\nFile: {}",
                        path.display()
                    ));
                    ModelsConfig::default()
                }
            },
            None => ModelsConfig::default(),
        };
        self.models = self.merge(&config);
        for (name, value) in self.registered.clone() {
            if let Ok(provider) = parse_extension_provider(&name, &value) {
                self.apply_registered(&name, &provider);
            }
        }
        self.apply_copilot_base_url();
    }

    /// `pi.registerProvider(name, config)` from an extension, as pi: with `models`, they
    /// replace every model of the provider; with only `baseUrl`/`headers`, the provider's
    /// models keep their ids and take the new URL (headers apply per request). Registering
    /// a name again updates the fields it names. The config is checked as pi checks it
    /// (`baseUrl`, `apiKey` and an `api` are required with models); on failure nothing
    /// changes and the error says what is wrong.
    pub fn register_provider(&mut self, name: &str, config: &Value) -> Result<(), String> {
        let Value::Object(fields) = config else {
            return Err(format!("Provider {name}: the config must be an object"));
        };
        let mut merged = match self.registered.iter().find(|(n, _)| n == name) {
            Some((_, Value::Object(existing))) => existing.clone(),
            _ => serde_json::Map::new(),
        };
        for (k, v) in fields {
            if !v.is_null() {
                merged.insert(k.clone(), v.clone());
            }
        }
        let merged = Value::Object(merged);
        let provider = parse_extension_provider(name, &merged)
            .map_err(|problems| format!("Provider {name}: {problems}"))?;
        self.apply_registered(name, &provider);
        match self.registered.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = merged,
            None => self.registered.push((name.to_string(), merged)),
        }
        Ok(())
    }

    /// `pi.unregisterProvider(name)`: forgets the registration and reloads, so built-in
    /// models it replaced come back. Nothing happens for a name never registered.
    pub fn unregister_provider(&mut self, name: &str) {
        let before = self.registered.len();
        self.registered.retain(|(n, _)| n != name);
        if self.registered.len() != before {
            self.load_models();
        }
    }

    /// Names of the providers extensions registered, in order.
    pub fn registered_providers(&self) -> Vec<&str> {
        self.registered.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Puts one registered provider into the model list (pi's `applyProviderConfig`).
    fn apply_registered(&mut self, name: &str, p: &ProviderConfig) {
        if p.api_key.is_some() || !p.headers.is_empty() || p.auth_header {
            self.request_configs.insert(
                name.to_string(),
                ProviderRequestConfig {
                    api_key: p.api_key.clone(),
                    headers: p.headers.clone(),
                    auth_header: p.auth_header,
                },
            );
        }
        if !p.models.is_empty() {
            self.models.retain(|m| m.provider != name);
            self.model_headers
                .retain(|(provider, _), _| provider != name);
            for m in custom_models(name, p) {
                if let Some(def) = p.models.iter().find(|d| d.id == m.id)
                    && !def.fields.headers.is_empty()
                {
                    self.model_headers
                        .insert((name.to_string(), m.id.clone()), def.fields.headers.clone());
                }
                self.models.push(m);
            }
        } else if let Some(url) = &p.base_url {
            for m in self.models.iter_mut().filter(|m| m.provider == name) {
                m.base_url = url.clone();
            }
        }
    }

    /// A Copilot sign-in decides the API host (pi's `modifyModels`): the one named by
    /// the stored token, else the enterprise's or the individual plan's.
    fn apply_copilot_base_url(&mut self) {
        const COPILOT: &str = "github-copilot";
        let Some(entry) = self
            .auth
            .get(COPILOT)
            .filter(|e| e.get("type").and_then(serde_json::Value::as_str) == Some("oauth"))
        else {
            return;
        };
        let field = |name: &str| entry.get(name).and_then(serde_json::Value::as_str);
        let domain = field("enterpriseUrl").and_then(crate::ai::oauth::login::normalize_domain);
        let base_url = crate::ai::oauth::endpoint(&crate::ai::oauth::copilot_base_url(
            field("access"),
            domain.as_deref(),
        ));
        for model in self.models.iter_mut().filter(|m| m.provider == COPILOT) {
            model.base_url = base_url.clone();
        }
    }

    /// Where a provider's credential comes from (pi's auth status for `/login`).
    pub fn auth_source(&self, provider: &str) -> crate::ai::auth::AuthSource {
        use crate::ai::auth::AuthSource;
        match self.auth.auth_source(provider) {
            AuthSource::None => match self
                .request_configs
                .get(provider)
                .and_then(|c| c.api_key.as_deref())
            {
                Some(v) if v.starts_with('!') => AuthSource::ModelsJsonCommand,
                Some(_) => AuthSource::ModelsJsonKey,
                None => AuthSource::None,
            },
            found => found,
        }
    }

    fn merge(&mut self, config: &ModelsConfig) -> Vec<Model> {
        let find_provider = |name: &str| {
            config
                .providers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, p)| p)
        };
        let mut models: Vec<Model> = builtin_models()
            .iter()
            .map(|m| {
                let mut m = m.clone();
                if let Some(p) = find_provider(&m.provider) {
                    if p.base_url.is_some() || p.compat.is_some() {
                        if let Some(url) = &p.base_url {
                            m.base_url = url.clone();
                        }
                        m.compat = merge_compat(m.compat.take(), p.compat.as_ref());
                    }
                    if let Some((_, ov)) = p.model_overrides.iter().find(|(id, _)| *id == m.id) {
                        apply_override(&mut m, ov);
                    }
                }
                m
            })
            .collect();
        for (name, p) in &config.providers {
            if p.api_key.is_some() || !p.headers.is_empty() || p.auth_header {
                self.request_configs.insert(
                    name.clone(),
                    ProviderRequestConfig {
                        api_key: p.api_key.clone(),
                        headers: p.headers.clone(),
                        auth_header: p.auth_header,
                    },
                );
            }
            for (id, ov) in &p.model_overrides {
                if !ov.headers.is_empty() {
                    self.model_headers
                        .insert((name.clone(), id.clone()), ov.headers.clone());
                }
            }
            for m in custom_models(name, p) {
                if let Some(def) = p.models.iter().find(|d| d.id == m.id)
                    && !def.fields.headers.is_empty()
                {
                    self.model_headers
                        .insert((name.clone(), m.id.clone()), def.fields.headers.clone());
                }
                match models
                    .iter_mut()
                    .find(|x| x.provider == m.provider && x.id == m.id)
                {
                    Some(existing) => *existing = m,
                    None => models.push(m),
                }
            }
        }
        models
    }
}

fn resolve_or_explain(value: &str, what: &str) -> Result<String, String> {
    resolve_config_value_uncached(value).ok_or_else(|| config_value_failure(value, what))
}

fn custom_models(provider: &str, p: &ProviderConfig) -> Vec<Model> {
    let defaults = builtin_models().iter().find(|m| m.provider == provider);
    p.models
        .iter()
        .filter_map(|def| {
            let api = def
                .api
                .clone()
                .or_else(|| p.api.clone())
                .or_else(|| defaults.map(|d| d.api.to_string()))?;
            let base_url = def
                .base_url
                .clone()
                .or_else(|| p.base_url.clone())
                .or_else(|| defaults.map(|d| d.base_url.clone()))
                // pi skips a model without a base URL (Azure's built-ins have none).
                .filter(|url| !url.is_empty())?;
            let f = &def.fields;
            let cost = f.cost.unwrap_or_default();
            Some(Model {
                id: def.id.clone(),
                name: f.name.clone().unwrap_or_else(|| def.id.clone()),
                api: Api::parse(&api),
                provider: provider.to_string(),
                base_url,
                reasoning: f.reasoning.unwrap_or(false),
                thinking_level_map: f.thinking_level_map.clone(),
                input: f
                    .input
                    .clone()
                    .unwrap_or_else(|| vec![super::model::InputKind::Text]),
                cost: ModelCost {
                    input: cost.input.unwrap_or(0.0),
                    output: cost.output.unwrap_or(0.0),
                    cache_read: cost.cache_read.unwrap_or(0.0),
                    cache_write: cost.cache_write.unwrap_or(0.0),
                },
                context_window: f.context_window.unwrap_or(128_000),
                max_tokens: f.max_tokens.unwrap_or(16_384),
                headers: BTreeMap::new(),
                compat: merge_compat(p.compat.clone(), f.compat.as_ref()),
                extras: super::model::ModelExtras {
                    sampling_params: f.sampling_params.clone(),
                    sampling_params_by_thinking_level: f.sampling_params_by_level.clone(),
                    input_limits: f.input_limits.clone(),
                    prompt_cache: f.prompt_cache.clone(),
                    cost_tiers: f.cost_tiers.clone(),
                    ..Default::default()
                },
            })
        })
        .collect()
}

fn apply_override(m: &mut Model, ov: &ModelFields) {
    if let Some(n) = &ov.name {
        m.name = n.clone();
    }
    if let Some(r) = ov.reasoning {
        m.reasoning = r;
    }
    if let Some(map) = &ov.thinking_level_map {
        let mut merged = m.thinking_level_map.clone().unwrap_or_default();
        merged.extend(map.clone());
        m.thinking_level_map = Some(merged);
    }
    if let Some(i) = &ov.input {
        m.input = i.clone();
    }
    if let Some(c) = ov.context_window {
        m.context_window = c;
    }
    if let Some(t) = ov.max_tokens {
        m.max_tokens = t;
    }
    if let Some(c) = ov.cost {
        m.cost = ModelCost {
            input: c.input.unwrap_or(m.cost.input),
            output: c.output.unwrap_or(m.cost.output),
            cache_read: c.cache_read.unwrap_or(m.cost.cache_read),
            cache_write: c.cache_write.unwrap_or(m.cost.cache_write),
        };
    }
    m.compat = merge_compat(m.compat.take(), ov.compat.as_ref());
    // pi 1.6: object fields merge field by field with the model's, per level for
    // `samplingParamsByThinkingLevel`; arrays (`cost.tiers`) replace.
    let x = &mut m.extras;
    if let Some(params) = &ov.sampling_params {
        x.sampling_params
            .get_or_insert_with(Default::default)
            .extend(params.clone());
    }
    if let Some(by_level) = &ov.sampling_params_by_level {
        let merged = x
            .sampling_params_by_thinking_level
            .get_or_insert_with(Default::default);
        for (level, params) in by_level {
            merged
                .entry(level.clone())
                .or_default()
                .extend(params.clone());
        }
    }
    if let Some(v) = &ov.input_limits {
        x.input_limits = Some(merge_objects(x.input_limits.take(), v));
    }
    if let Some(v) = &ov.prompt_cache {
        x.prompt_cache = Some(merge_objects(x.prompt_cache.take(), v));
    }
    if let Some(t) = &ov.cost_tiers {
        x.cost_tiers = Some(t.clone());
    }
}

/// `over` merged into `base` key by key, nested objects too.
fn merge_objects(base: Option<Value>, over: &Value) -> Value {
    match (base, over) {
        (Some(Value::Object(mut b)), Value::Object(o)) => {
            for (k, v) in o {
                let merged = merge_objects(b.remove(k), v);
                b.insert(k.clone(), merged);
            }
            Value::Object(b)
        }
        _ => over.clone(),
    }
}

/// Shallow merge of compat objects; the routing objects merge one level deeper.
fn merge_compat(base: Option<Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over else {
        return base;
    };
    let mut merged = match base {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    if let Value::Object(o) = over {
        for (k, v) in o {
            let deep = matches!(k.as_str(), "openRouterRouting" | "vercelGatewayRouting");
            match (deep, merged.get_mut(k), v) {
                (true, Some(Value::Object(existing)), Value::Object(add)) => {
                    for (ik, iv) in add {
                        existing.insert(ik.clone(), iv.clone());
                    }
                }
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Some(Value::Object(merged))
}

#[cfg(test)]
mod tests;
