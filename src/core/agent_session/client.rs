//! The bridge from the agent loop and the summarizers to the provider layer: resolved
//! credentials, thinking budgets, retry policy (with the request timeout) and the shared
//! HTTP client, captured once per run so no lock is held while a request streams.

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::agent::{ModelClient, TurnOptions};
use crate::ai::message::{AssistantMessage, Context};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::RequestAuth;
use crate::ai::providers::{
    self, CacheRetention, PayloadHook, ResponseHook, RetryCallback, StreamOptions, ThinkingBudgets,
    Transport,
};
use crate::ai::retry::RetryPolicy;
use crate::ai::stream::{EventStream, StreamEvent};
use crate::compaction::{CompactionError, SummaryBackend, SummaryRequest};
use crate::core::settings::RetrySettings;

/// Everything needed to send requests to one model.
#[derive(Clone)]
pub struct ProviderClient {
    pub model: Model,
    pub auth: RequestAuth,
    pub budgets: ThinkingBudgets,
    pub retry: RetryPolicy,
    pub session_id: Option<String>,
    pub cache_retention: CacheRetention,
    pub http: reqwest::Client,
    pub on_retry: Option<RetryCallback>,
    /// The extensions' `before_provider_request` (conversation turns only, as in pi).
    pub on_payload: Option<PayloadHook>,
    /// The extensions' `after_provider_response`.
    pub on_response: Option<ResponseHook>,
    /// The `transport` setting (Codex: WebSocket first, or SSE only).
    pub transport: Transport,
}

/// The headers pi adds to a conversation's requests to say who is calling (its
/// `getAttributionHeaders`): OpenRouter's app attribution, and a `User-Agent` for
/// Cloudflare. Off when install telemetry is (`enableInstallTelemetry: false` or
/// `PI_TELEMETRY=0`). Headers from models.json or the model override these.
pub fn attribution_headers(
    model: &Model,
    telemetry: bool,
) -> &'static [(&'static str, &'static str)] {
    if !telemetry {
        return &[];
    }
    if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") {
        return &[
            ("HTTP-Referer", "https://pi.dev"),
            ("X-OpenRouter-Title", "pi"),
            ("X-OpenRouter-Categories", "cli-agent"),
        ];
    }
    let cloudflare = matches!(
        model.provider.as_str(),
        "cloudflare-workers-ai" | "cloudflare-ai-gateway"
    ) || model.base_url.contains("api.cloudflare.com")
        || model.base_url.contains("gateway.ai.cloudflare.com");
    if cloudflare {
        return &[("User-Agent", "pi-coding-agent")];
    }
    &[]
}

/// `auth` with the attribution headers under its own (which win on a clash).
pub fn with_attribution(mut auth: RequestAuth, model: &Model, telemetry: bool) -> RequestAuth {
    for (k, v) in attribution_headers(model, telemetry) {
        if !auth.headers.keys().any(|h| h.eq_ignore_ascii_case(k)) {
            auth.headers.insert((*k).to_string(), (*v).to_string());
        }
    }
    auth
}

impl ProviderClient {
    fn options(&self, thinking: ThinkingLevel, cancel: CancellationToken) -> StreamOptions {
        StreamOptions {
            api_key: self.auth.api_key.clone(),
            env: self.auth.env.clone(),
            thinking,
            thinking_budgets: self.budgets,
            headers: self.auth.headers.clone(),
            session_id: self.session_id.clone(),
            cache_retention: self.cache_retention,
            cancel,
            retry: self.retry,
            on_retry: self.on_retry.clone(),
            on_payload: self.on_payload.clone(),
            on_response: self.on_response.clone(),
            client: Some(self.http.clone()),
            transport: self.transport,
            ..StreamOptions::default()
        }
    }
}

impl ModelClient for ProviderClient {
    fn stream(&self, model: &Model, context: Context, options: TurnOptions) -> EventStream {
        providers::stream(
            model,
            &context,
            self.options(options.thinking, options.cancel),
        )
    }
}

#[async_trait]
impl SummaryBackend for ProviderClient {
    async fn complete(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, CompactionError> {
        let context = Context {
            system_prompt: Some(request.system_prompt),
            messages: request.messages,
            tools: Vec::new(),
        };
        let mut options = self.options(request.reasoning.unwrap_or_default(), cancel);
        options.max_tokens = Some(request.max_tokens);
        let mut stream = providers::stream(&self.model, &context, options);
        while let Some(event) = stream.next().await {
            match event {
                StreamEvent::Done { message, .. } => return Ok(message),
                StreamEvent::Error { error, .. } => return Ok(error),
                _ => {}
            }
        }
        Err(CompactionError::Backend(
            "the summarization request ended without a response".into(),
        ))
    }
}

/// `PI_CACHE_RETENTION=long` asks for long prompt-cache retention, as in pi.
pub fn cache_retention_from_env() -> CacheRetention {
    match std::env::var("PI_CACHE_RETENTION").as_deref() {
        Ok("long") => CacheRetention::Long,
        Ok("none") => CacheRetention::None,
        _ => CacheRetention::Short,
    }
}

/// Thinking budgets from the `thinkingBudgets` setting over pi's defaults.
pub fn budgets_from_settings(value: Option<&serde_json::Value>) -> ThinkingBudgets {
    let mut budgets = ThinkingBudgets::default();
    if let Some(map) = value.and_then(|v| v.as_object()) {
        let get = |k: &str| map.get(k).and_then(serde_json::Value::as_u64);
        if let Some(v) = get("minimal") {
            budgets.minimal = v;
        }
        if let Some(v) = get("low") {
            budgets.low = v;
        }
        if let Some(v) = get("medium") {
            budgets.medium = v;
        }
        if let Some(v) = get("high") {
            budgets.high = v;
        }
    }
    budgets
}

/// The provider-level retry policy from the `retry.provider.*` settings: retries before
/// the response starts, the cap on server-requested waits and the request timeout. The
/// backoff itself is the SDKs' (pi has no setting for it).
pub fn provider_retry_policy(settings: &RetrySettings) -> RetryPolicy {
    RetryPolicy {
        max_retries: settings.provider_max_retries,
        max_delay_ms: settings.max_delay_ms,
        timeout_ms: settings.provider_timeout_ms,
        ..RetryPolicy::default()
    }
}

/// A retry callback that forwards notices to a closure.
pub fn retry_callback(
    f: impl Fn(crate::ai::retry::RetryNotice) + Send + Sync + 'static,
) -> RetryCallback {
    Arc::new(f)
}
