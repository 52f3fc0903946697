//! Azure OpenAI Responses (`azure-openai-responses`).
//!
//! The body is OpenAI's Responses body with a few differences, as pi sends it through
//! the `AzureOpenAI` client: `model` is the deployment name, there is no `store` field,
//! the session id always becomes `prompt_cache_key`, and the key goes in an `api-key`
//! header. The URL is `{base}/responses?api-version={version}` where the base comes from
//! `AZURE_OPENAI_BASE_URL`, else `https://{AZURE_OPENAI_RESOURCE_NAME}.openai.azure.com/openai/v1`,
//! else the model's `baseUrl` (an Azure host without a path gets `/openai/v1`), and the
//! version from `AZURE_OPENAI_API_VERSION` (default `v1`). `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`
//! (`model=deployment,…`) names deployments that differ from the model id. The stream is
//! the Responses stream.

use serde_json::{Map, Value, json};

use super::StreamOptions;
use super::openai_responses::{convert_messages_with, insert_generation_options};
use super::wire::HttpRequest;
use crate::ai::message::Context;
use crate::ai::model::Model;

/// Providers whose `call|item` tool-call ids are replayed as they are.
const AZURE_TOOL_CALL_PROVIDERS: &[&str] = &[
    "openai",
    "openai-codex",
    "opencode",
    "azure-openai-responses",
];
const DEFAULT_API_VERSION: &str = "v1";

/// The Azure settings pi reads from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AzureEnv {
    pub api_key: Option<String>,
    pub base_url: Option<String>,
    pub resource_name: Option<String>,
    pub api_version: Option<String>,
    pub deployment_name_map: Option<String>,
}

impl AzureEnv {
    /// Reads `AZURE_OPENAI_*` from the process environment (empty values count as unset).
    pub fn from_process() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads `AZURE_OPENAI_*` through `lookup` (a credential's `env`, then the process).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Self {
            api_key: var("AZURE_OPENAI_API_KEY"),
            base_url: var("AZURE_OPENAI_BASE_URL"),
            resource_name: var("AZURE_OPENAI_RESOURCE_NAME"),
            api_version: var("AZURE_OPENAI_API_VERSION"),
            deployment_name_map: var("AZURE_OPENAI_DEPLOYMENT_NAME_MAP"),
        }
    }
}

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    build_request_with(
        model,
        context,
        options,
        &AzureEnv::from_lookup(|n| options.env_var(n)),
    )
}

/// [`build_request`] with explicit settings (for tests).
pub fn build_request_with(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    env: &AzureEnv,
) -> Result<HttpRequest, String> {
    let key = match (&options.api_key, &env.api_key) {
        (Some(key), _) if !key.expose().is_empty() => key.expose().to_string(),
        (_, Some(key)) => key.clone(),
        _ => {
            return Err("Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or pass it as an argument.".into());
        }
    };
    let base = resolve_base_url(model, env)?;
    let version = env.api_version.as_deref().unwrap_or(DEFAULT_API_VERSION);
    let deployment = deployment_name(model, env.deployment_name_map.as_deref());
    Ok(HttpRequest {
        url: format!("{base}/responses?api-version={version}"),
        headers: vec![("api-key".to_string(), key)],
        body: build_body(model, context, options, &deployment),
    })
}

/// The deployment for a model: its entry in `model=deployment,…`, else the model id.
pub fn deployment_name(model: &Model, map: Option<&str>) -> String {
    map.into_iter()
        .flat_map(|m| m.split(','))
        .filter_map(|entry| {
            let (id, name) = entry.trim().split_once('=')?;
            let (id, name) = (id.trim(), name.trim());
            (!id.is_empty() && !name.is_empty()).then_some((id, name))
        })
        .find(|(id, _)| *id == model.id)
        .map_or_else(|| model.id.clone(), |(_, name)| name.to_string())
}

fn resolve_base_url(model: &Model, env: &AzureEnv) -> Result<String, String> {
    let base = env
        .base_url
        .clone()
        .or_else(|| {
            env.resource_name
                .as_ref()
                .map(|name| format!("https://{name}.openai.azure.com/openai/v1"))
        })
        .or_else(|| Some(model.base_url.clone()).filter(|b| !b.trim().is_empty()))
        .ok_or_else(|| {
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl.".to_string()
        })?;
    normalize_base_url(&base)
}

/// An Azure host with no path (or just `/openai`) gets `/openai/v1`; trailing slashes go.
fn normalize_base_url(base: &str) -> Result<String, String> {
    let trimmed = base.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed)
        .map_err(|_| format!("Invalid Azure OpenAI base URL: {base}"))?;
    let host = url.host_str().unwrap_or("");
    let azure =
        host.ends_with(".openai.azure.com") || host.ends_with(".cognitiveservices.azure.com");
    let path = url.path().trim_end_matches('/').to_string();
    if azure && (path.is_empty() || path == "/openai") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.to_string().trim_end_matches('/').to_string())
}

/// The JSON body (public for tests).
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    deployment: &str,
) -> Value {
    let mut p = Map::new();
    p.insert("model".into(), json!(deployment));
    p.insert(
        "input".into(),
        Value::Array(convert_messages_with(
            model,
            context,
            AZURE_TOOL_CALL_PROVIDERS,
            true,
        )),
    );
    p.insert("stream".into(), json!(true));
    if super::compat_str(model, "promptCacheKeyMode") != Some("disabled")
        && let Some(session) = &options.session_id
    {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    insert_generation_options(&mut p, model, context, options, true);
    super::apply_sampling_params(&mut p, model, options.thinking);
    Value::Object(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::auth::ApiKey;
    use crate::ai::model::{Api, InputKind};

    fn model(base_url: &str) -> Model {
        Model {
            id: "gpt-5".into(),
            name: "GPT-5".into(),
            api: Api::AzureOpenAiResponses,
            provider: "azure-openai-responses".into(),
            base_url: base_url.into(),
            reasoning: true,
            thinking_level_map: None,
            input: vec![InputKind::Text],
            cost: Default::default(),
            context_window: 1,
            max_tokens: 100,
            headers: Default::default(),
            compat: None,
            extras: Default::default(),
        }
    }

    fn url_for(base_url: &str, env: &AzureEnv) -> Result<String, String> {
        let options = StreamOptions {
            api_key: Some(ApiKey::new("k")),
            ..StreamOptions::default()
        };
        build_request_with(&model(base_url), &Context::default(), &options, env).map(|r| r.url)
    }

    #[test]
    fn the_base_url_comes_from_env_then_resource_then_model() {
        let none = AzureEnv::default();
        assert_eq!(
            url_for("https://res.openai.azure.com", &none).unwrap(),
            "https://res.openai.azure.com/openai/v1/responses?api-version=v1"
        );
        assert_eq!(
            url_for("https://res.cognitiveservices.azure.com/openai/", &none).unwrap(),
            "https://res.cognitiveservices.azure.com/openai/v1/responses?api-version=v1"
        );
        assert_eq!(
            url_for("http://127.0.0.1:9/custom/", &none).unwrap(),
            "http://127.0.0.1:9/custom/responses?api-version=v1"
        );
        let resource = AzureEnv {
            resource_name: Some("myres".into()),
            api_version: Some("2025-04-01-preview".into()),
            ..AzureEnv::default()
        };
        assert_eq!(
            url_for("http://ignored", &resource).unwrap(),
            "https://myres.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview"
        );
        let base = AzureEnv {
            base_url: Some("https://proxy.example/openai/v1".into()),
            ..resource
        };
        assert!(
            url_for("", &base)
                .unwrap()
                .starts_with("https://proxy.example/openai/v1/responses")
        );
        assert!(
            url_for("", &none)
                .unwrap_err()
                .contains("base URL is required")
        );
    }

    #[test]
    fn deployments_are_mapped_by_model_id() {
        let m = model("https://x");
        assert_eq!(deployment_name(&m, None), "gpt-5");
        assert_eq!(
            deployment_name(&m, Some(" gpt-4o=dep4o , gpt-5 = my-gpt5 ")),
            "my-gpt5"
        );
        assert_eq!(deployment_name(&m, Some("gpt-5=")), "gpt-5");
    }

    #[test]
    fn the_key_goes_in_api_key_and_falls_back_to_the_env() {
        let env = AzureEnv {
            api_key: Some("env-key".into()),
            ..AzureEnv::default()
        };
        let r = build_request_with(
            &model("https://x.openai.azure.com"),
            &Context::default(),
            &StreamOptions::default(),
            &env,
        )
        .unwrap();
        assert_eq!(r.header("api-key"), Some("env-key"));
        assert_eq!(r.header("authorization"), None);
        let err = build_request_with(
            &model("https://x.openai.azure.com"),
            &Context::default(),
            &StreamOptions::default(),
            &AzureEnv::default(),
        )
        .unwrap_err();
        assert!(err.contains("AZURE_OPENAI_API_KEY"), "{err}");
    }
}
