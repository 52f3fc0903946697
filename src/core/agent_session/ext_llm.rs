//! What extensions ask of the model layer: providers registered or removed after loading
//! (pi's `pi.registerProvider` / `unregisterProvider` from a command or an event handler),
//! and model requests an extension makes itself (pi-ai's `stream`, `complete`,
//! `streamSimpleAnthropic`, … in the Node host), streamed back as `llm_event` lines.

use std::path::Path;

use futures::StreamExt;
use serde_json::{Value, json};

use super::AgentSession;
use super::client::{budgets_from_settings, cache_retention_from_env, provider_retry_policy};
use crate::ai::http::shared_client;
use crate::ai::model::{Api, Model};
use crate::ai::providers::{self, StreamOptions, Transport};
use crate::ai::stream::{PartialMessage, StreamEvent, with_role};
use crate::extensions::provider_stream::{context_from_json, options_from_json};

impl AgentSession {
    /// `register_provider` `{name, config}`: into the model registry at once (checked as
    /// pi checks it), the current model refreshed from it, the extensions told.
    pub(crate) fn register_provider_call(
        &self,
        path: &Path,
        params: &Value,
    ) -> Result<Value, String> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or("missing \"name\"")?;
        let config = params.get("config").cloned().unwrap_or(json!({}));
        {
            let mut st = self.state();
            st.registry.register_provider(name, &config)?;
            refresh_current_model(&mut st);
        }
        if let Some(host) = self.extension_host() {
            host.register_js_provider(path, name, &config);
        }
        self.refresh_extension_state();
        Ok(Value::Null)
    }

    /// `unregister_provider` `{name, api?}`: pi's `unregisterProvider`; built-in models it
    /// replaced come back. `api` (the API its `streamSimple` served) stops being streamed
    /// by the extension.
    pub(crate) fn unregister_provider_call(&self, params: &Value) -> Result<Value, String> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or("missing \"name\"")?;
        {
            let mut st = self.state();
            st.registry.unregister_provider(name);
            refresh_current_model(&mut st);
        }
        if let Some(host) = self.extension_host() {
            host.unregister_js_provider(name, params.get("api").and_then(Value::as_str));
        }
        self.refresh_extension_state();
        Ok(Value::Null)
    }

    /// The providers a freshly loaded host's extensions registered while loading, into
    /// the registry (`/reload`: pi keeps earlier registrations and applies the new ones
    /// over them). Returns the problems, naming the extension.
    pub fn apply_extension_providers(
        &self,
        host: &crate::extensions::ExtensionHost,
    ) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut st = self.state();
        for (path, provider) in host.providers() {
            if let Err(e) = st
                .registry
                .register_provider(&provider.name, &provider.config)
            {
                warnings.push(format!("Extension \"{}\": {e}", path.display()));
            }
        }
        refresh_current_model(&mut st);
        warnings
    }

    fn refresh_extension_state(&self) {
        if let Some(host) = self.extension_host() {
            host.refresh_state();
        }
    }

    /// `llm_stream` `{model, context, options, api?}`: one model request for an
    /// extension. Each pi-ai event goes to it as `{"type":"llm_event","id","event"}`; the
    /// answer is the final message (its `stopReason` says how it ended: failures are
    /// messages, as in pi-ai). `api` forces pi-rs's own client for that API
    /// (`streamAnthropic` & co.), else the model's API decides (an extension's
    /// `streamSimple` included). The extension's `cancel_call` aborts it.
    pub(crate) async fn llm_stream_call(
        &self,
        path: &Path,
        id: &Value,
        params: &Value,
    ) -> Result<Value, String> {
        let host = self.extension_host().ok_or("no extensions")?;
        let mut model: Model =
            serde_json::from_value(params.get("model").cloned().unwrap_or_default())
                .map_err(|e| format!("invalid model: {e}"))?;
        let forced = params.get("api").and_then(Value::as_str).map(Api::parse);
        if let Some(api) = &forced {
            model.api = api.clone();
        }
        let context = context_from_json(params.get("context").unwrap_or(&Value::Null))?;
        let cancel = host.call_cancels().token(path, id);
        let base = {
            let st = self.state();
            let auth = st
                .registry
                .find(&model.provider, &model.id)
                .cloned()
                .or_else(|| Some(model.clone()))
                .and_then(|m| st.registry.request_auth(&m).ok())
                .unwrap_or_default();
            let mut headers = auth.headers;
            for (k, v) in &model.headers {
                headers.insert(k.clone(), v.clone());
            }
            StreamOptions {
                api_key: auth.api_key,
                env: auth.env,
                headers,
                thinking_budgets: budgets_from_settings(st.settings.thinking_budgets()),
                retry: provider_retry_policy(&st.settings.retry()),
                cache_retention: cache_retention_from_env(),
                client: Some(shared_client()),
                transport: Transport::parse(st.settings.transport()),
                cancel: cancel.clone(),
                ..StreamOptions::default()
            }
        };
        let options = options_from_json(params.get("options").unwrap_or(&Value::Null), base);
        let mut events = if forced.is_some() {
            providers::stream_builtin(&model, &context, options)
        } else {
            providers::stream(&model, &context, options)
        };
        let mut partial = PartialMessage::default();
        let mut result = Value::Null;
        while let Some(event) = events.next().await {
            partial.apply(&event);
            let json = event.to_json(&partial.message);
            match &event {
                StreamEvent::Done { message, .. } => {
                    result = serde_json::to_value(with_role(message)).unwrap_or_default();
                }
                StreamEvent::Error { error, .. } => {
                    result = serde_json::to_value(with_role(error)).unwrap_or_default();
                }
                _ => {}
            }
            if !host.send_to(path, &json!({"type": "llm_event", "id": id, "event": json})) {
                cancel.cancel();
                break;
            }
            if event.is_terminal() {
                break;
            }
        }
        host.call_cancels().finish(path, id);
        Ok(result)
    }
}

/// pi's `_refreshCurrentModelFromRegistry`: the current model takes its registry entry's
/// new fields (base URL, headers) when the registry still has it.
fn refresh_current_model(st: &mut super::State) {
    let Some(current) = st.model.as_ref() else {
        return;
    };
    if let Some(fresh) = st.registry.find(&current.provider, &current.id).cloned() {
        st.model = Some(fresh);
    }
}
