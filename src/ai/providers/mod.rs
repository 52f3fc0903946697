//! One streaming client per wire API, behind a single entry point: [`stream`].
//!
//! `stream` picks the client from `model.api`, sends the request (retrying failures
//! that happen before the response starts, see `ai::retry`), parses the SSE body and
//! yields provider-neutral [`StreamEvent`]s. It never fails out of band: a bad key, a
//! refused connection, an error status, a server silent for longer than
//! `RetryPolicy::timeout_ms`, a malformed event, a dropped or stalled connection or a
//! cancellation all end the stream with one `StreamEvent::Error` whose message keeps
//! whatever content arrived, with `stop_reason` `error` or `aborted`.
//!
//! The per-API modules only build request bodies and turn SSE events into calls on
//! [`Output`]; the HTTP, retry, cancellation and event plumbing lives in `driver`.

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
pub mod budget;
mod cloudflare;
pub mod codex_websocket;
mod driver;
pub mod eventstream;
pub mod external;
pub mod google;
pub mod google_vertex;
pub mod mistral;
pub mod openai_codex_responses;
pub mod openai_completions;
pub mod openai_responses;
mod output;
pub mod sigv4;
mod wire;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::auth::ApiKey;
use super::message::Context;
use super::model::{Model, ThinkingLevel};
use super::retry::{RetryNotice, RetryPolicy};

pub use driver::{stream, stream_builtin};
pub use output::{Output, calculate_cost};
pub use wire::{HttpRequest, SseDecoder, decode_chunk};

/// How long providers should keep the prompt cache (pi's `cacheRetention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheRetention {
    /// No cache markers, no cache keys.
    None,
    /// The provider's default (Anthropic: 5 minutes).
    #[default]
    Short,
    /// Anthropic 1 h TTL, OpenAI 24 h retention (`PI_CACHE_RETENTION=long`).
    Long,
}

/// Thinking token budgets per level for APIs that take a budget (pi's `thinkingBudgets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThinkingBudgets {
    pub minimal: u64,
    pub low: u64,
    pub medium: u64,
    pub high: u64,
}

impl Default for ThinkingBudgets {
    fn default() -> Self {
        Self {
            minimal: 1024,
            low: 2048,
            medium: 8192,
            high: 16384,
        }
    }
}

impl ThinkingBudgets {
    /// The budget for a level (`xhigh` uses `high`; `off` has none).
    pub fn for_level(&self, level: ThinkingLevel) -> Option<u64> {
        match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => Some(self.minimal),
            ThinkingLevel::Low => Some(self.low),
            ThinkingLevel::Medium => Some(self.medium),
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => Some(self.high),
        }
    }
}

/// Callback told about every retry before its wait starts.
pub type RetryCallback = Arc<dyn Fn(RetryNotice) + Send + Sync>;

/// pi's `onPayload`: sees the JSON body of a request just before it is first sent and
/// returns the body to send (the same one, or a replacement).
pub type PayloadHook =
    Arc<dyn Fn(serde_json::Value) -> BoxFuture<'static, serde_json::Value> + Send + Sync>;

/// pi's `onResponse`: told the status and headers of a successful response before its
/// body is read.
pub type ResponseHook =
    Arc<dyn Fn(u16, BTreeMap<String, String>) -> BoxFuture<'static, ()> + Send + Sync>;

/// Everything about one request that is not the model or the conversation.
#[derive(Clone, Default)]
pub struct StreamOptions {
    /// The resolved key or OAuth token (see `ai::auth`). `None` sends no credentials.
    pub api_key: Option<ApiKey>,
    /// Requested reasoning effort; clamped to what the model supports.
    pub thinking: ThinkingLevel,
    /// Custom budgets (pi's `thinkingBudgets` setting).
    pub thinking_budgets: ThinkingBudgets,
    /// Output token limit; default the model's maximum. Either is fitted into the
    /// context window ([`budget::clamp_to_context`]).
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    /// Extra HTTP headers, applied last (they override built-in ones).
    pub headers: BTreeMap<String, String>,
    /// The session id, used as prompt cache key where the API has one.
    pub session_id: Option<String>,
    pub cache_retention: CacheRetention,
    /// Cancels the request or the stream; the stream then ends with `aborted`.
    pub cancel: CancellationToken,
    /// Retries before the response starts, and the timeout for a silent server.
    pub retry: RetryPolicy,
    pub on_retry: Option<RetryCallback>,
    /// Sees (and may replace) the request body before it is sent. Bedrock requests are
    /// signed over their body, so there a replacement is not used.
    pub on_payload: Option<PayloadHook>,
    /// Told about the response before its body is read.
    pub on_response: Option<ResponseHook>,
    /// The HTTP client; `None` uses the process-wide [`crate::ai::http::shared_client`].
    pub client: Option<reqwest::Client>,
    /// pi's `transport` setting: how Codex responses are streamed (others use SSE).
    pub transport: Transport,
    /// Variables that win over the process environment for this provider (the `env` of
    /// an auth.json credential, pi 1.6), for settings such as `CLOUDFLARE_ACCOUNT_ID`.
    pub env: BTreeMap<String, String>,
}

impl StreamOptions {
    /// A provider setting from [`StreamOptions::env`], else the process environment.
    pub fn env_var(&self, name: &str) -> Option<String> {
        self.env
            .get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
    }
}

/// pi's `transport` setting. Only `openai-codex-responses` offers more than SSE; every
/// value but `sse` tries a WebSocket first (see [`codex_websocket`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    Sse,
    WebSocket,
    WebSocketCached,
    #[default]
    Auto,
}

impl Transport {
    /// The setting's value; anything unknown is `auto`, pi's default.
    pub fn parse(value: &str) -> Transport {
        match value {
            "sse" => Transport::Sse,
            "websocket" => Transport::WebSocket,
            "websocket-cached" => Transport::WebSocketCached,
            _ => Transport::Auto,
        }
    }
}

impl fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: BTreeMap<&str, &str> = self
            .headers
            .keys()
            .map(|k| (k.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("StreamOptions")
            .field("api_key", &self.api_key)
            .field("thinking", &self.thinking)
            .field("thinking_budgets", &self.thinking_budgets)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("headers", &headers)
            .field("session_id", &self.session_id)
            .field("cache_retention", &self.cache_retention)
            .field("retry", &self.retry)
            .field("on_retry", &self.on_retry.is_some())
            .field("on_payload", &self.on_payload.is_some())
            .field("on_response", &self.on_response.is_some())
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl StreamOptions {
    /// pi 1.6's output limit: the requested one or the model's maximum, fitted into what
    /// the context window leaves after the estimated input.
    pub(crate) fn effective_max_tokens(&self, model: &Model, context: &Context) -> u64 {
        let max = self.max_tokens.unwrap_or(model.max_tokens);
        budget::clamp_to_context(model, context, max)
    }
}

/// The thinking levels a model offers ([`Model::available_thinking_levels`]).
pub fn supported_thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    model.available_thinking_levels()
}

/// pi's `clampThinkingLevel` ([`Model::clamp_thinking`]).
pub fn clamp_thinking_level(model: &Model, level: ThinkingLevel) -> ThinkingLevel {
    model.clamp_thinking(level)
}

/// The provider-specific value for a level from `thinkingLevelMap`, if one is set.
pub(crate) fn mapped_level(model: &Model, level: ThinkingLevel) -> Option<String> {
    model
        .thinking_level_map
        .as_ref()
        .and_then(|m| m.get(level.as_str()).cloned().flatten())
}

/// A boolean `compat` flag of the model, if set.
pub(crate) fn compat_bool(model: &Model, key: &str) -> Option<bool> {
    model.compat.as_ref()?.get(key)?.as_bool()
}

/// pi 1.6's sampling parameters of a model (`samplingParams`, then the entry of the
/// clamped thinking level) merged over an OpenAI-compatible request body.
pub(crate) fn apply_sampling_params(
    body: &mut serde_json::Map<String, serde_json::Value>,
    model: &Model,
    thinking: ThinkingLevel,
) {
    if let Some(params) = model.sampling_params_for(thinking) {
        for (k, v) in params {
            body.insert(k, js_numbers(v));
        }
    }
}

/// Whole numbers written as `1.0` in a file become `1`, as JavaScript writes them (pi
/// sends these values through `JSON.stringify`).
fn js_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Value::from(f as i64)
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(js_numbers).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, js_numbers(v))).collect())
        }
        other => other,
    }
}

/// A string `compat` field of the model, if set.
pub(crate) fn compat_str<'a>(model: &'a Model, key: &str) -> Option<&'a str> {
    model.compat.as_ref()?.get(key)?.as_str()
}

/// The first 200 characters of an event's data, for error messages.
pub(crate) fn preview(data: &str) -> String {
    let mut s: String = data.chars().take(200).collect();
    if s.len() < data.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::model::{Api, InputKind};

    fn reasoning_model(id: &str, map: Option<&[(&str, Option<&str>)]>) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: Api::OpenAiCompletions,
            provider: "p".into(),
            base_url: String::new(),
            reasoning: true,
            thinking_level_map: map.map(|m| {
                m.iter()
                    .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
                    .collect()
            }),
            input: vec![InputKind::Text],
            cost: Default::default(),
            context_window: 1,
            max_tokens: 1,
            headers: Default::default(),
            compat: None,
            extras: Default::default(),
        }
    }

    #[test]
    fn clamping_follows_the_thinking_level_map() {
        let deepseek = reasoning_model(
            "deepseek-v4-pro",
            Some(&[
                ("minimal", None),
                ("low", None),
                ("medium", None),
                ("high", Some("high")),
                ("xhigh", Some("max")),
            ]),
        );
        assert_eq!(
            supported_thinking_levels(&deepseek),
            vec![
                ThinkingLevel::Off,
                ThinkingLevel::High,
                ThinkingLevel::Xhigh
            ]
        );
        assert_eq!(
            clamp_thinking_level(&deepseek, ThinkingLevel::Low),
            ThinkingLevel::High
        );
        let plain = reasoning_model("m", None);
        assert_eq!(
            clamp_thinking_level(&plain, ThinkingLevel::Xhigh),
            ThinkingLevel::High
        );
        let always_on = reasoning_model("m", Some(&[("off", None)]));
        assert_eq!(
            clamp_thinking_level(&always_on, ThinkingLevel::Off),
            ThinkingLevel::Minimal
        );
    }

    #[test]
    fn max_needs_a_map_entry_and_clamps_down_to_the_deepest_supported_level() {
        let plain = reasoning_model("m", None);
        assert!(!supported_thinking_levels(&plain).contains(&ThinkingLevel::Max));
        assert_eq!(
            clamp_thinking_level(&plain, ThinkingLevel::Max),
            ThinkingLevel::High
        );
        let xhigh_only = reasoning_model("m", Some(&[("xhigh", Some("xhigh"))]));
        assert_eq!(
            clamp_thinking_level(&xhigh_only, ThinkingLevel::Max),
            ThinkingLevel::Xhigh
        );
        let with_max = reasoning_model("m", Some(&[("max", Some("max"))]));
        assert_eq!(
            supported_thinking_levels(&with_max).last(),
            Some(&ThinkingLevel::Max)
        );
        assert_eq!(
            clamp_thinking_level(&with_max, ThinkingLevel::Xhigh),
            ThinkingLevel::Max,
            "an unsupported level goes up first, as pi 1.6"
        );
        assert_eq!(ThinkingLevel::parse("max"), Some(ThinkingLevel::Max));
    }

    #[test]
    fn debug_output_never_shows_the_key_or_header_values() {
        let options = StreamOptions {
            api_key: Some(ApiKey::new("sk-secret-123")),
            headers: [("x-secret".to_string(), "hunter2".to_string())].into(),
            ..StreamOptions::default()
        };
        let text = format!("{options:?}");
        assert!(!text.contains("sk-secret-123"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("x-secret"), "{text}");
    }
}
