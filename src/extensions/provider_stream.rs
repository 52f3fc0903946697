//! Model requests across the extension boundary, both ways:
//!
//! - [`ExtensionStreamer`]: an API an extension streams itself (pi's `registerProvider`
//!   with `streamSimple`). pi-rs sends `provider_stream` with the model, the pi-ai
//!   `Context` and pi's `SimpleStreamOptions`; the extension answers with one
//!   `stream_event` per pi-ai event and finally a `response`. The provider timeout applies
//!   to each event, cancellation sends `cancel`, and an extension that dies ends the reply
//!   with an error.
//! - [`context_from_json`] / [`options_from_json`]: an extension's own request through
//!   pi-rs (pi-ai's `stream`, `complete`, `streamSimpleAnthropic`, … in the Node host's
//!   `@mariozechner/pi-ai`), run by the session as the `llm_stream` call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{StreamExt, stream};
use serde_json::{Map, Value, json};

use super::connection::Connection;
use super::link::Failure;
use super::protocol::line;
use crate::ai::auth::ApiKey;
use crate::ai::message::{AssistantMessage, Context, Message, StopReason, ToolSpec, now_ms};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::providers::external::{ExternalStreamer, event_from_json};
use crate::ai::providers::{CacheRetention, StreamOptions};
use crate::ai::stream::{EventStream, StreamEvent};

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A fresh owner id for `ai::providers::external` (one per extension host).
pub(crate) fn next_owner() -> u64 {
    NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
}

/// Streams an API through the extension that registered it.
pub(crate) struct ExtensionStreamer {
    conn: Weak<Connection>,
}

impl ExtensionStreamer {
    pub(crate) fn new(conn: &Arc<Connection>) -> Self {
        Self {
            conn: Arc::downgrade(conn),
        }
    }
}

/// pi-ai's `Context` as JSON.
pub(crate) fn context_to_json(context: &Context) -> Value {
    let mut map = Map::new();
    if let Some(prompt) = &context.system_prompt {
        map.insert("systemPrompt".into(), json!(prompt));
    }
    map.insert(
        "messages".into(),
        serde_json::to_value(&context.messages).unwrap_or(Value::Array(Vec::new())),
    );
    if !context.tools.is_empty() {
        map.insert(
            "tools".into(),
            serde_json::to_value(&context.tools).unwrap_or(Value::Array(Vec::new())),
        );
    }
    Value::Object(map)
}

/// pi-ai's `Context` from JSON (`systemPrompt`, `messages`, `tools`).
pub(crate) fn context_from_json(value: &Value) -> Result<Context, String> {
    let messages = match value.get("messages") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value::<Vec<Message>>(v.clone())
            .map_err(|e| format!("invalid context.messages: {e}"))?,
    };
    let tools = match value.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(tools)) => tools
            .iter()
            .map(|t| ToolSpec {
                name: t
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into(),
                parameters: t.get("parameters").cloned().unwrap_or(json!({})),
            })
            .collect(),
        Some(_) => return Err("invalid context.tools: expected an array".into()),
    };
    Ok(Context {
        system_prompt: value
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_string),
        messages,
        tools,
    })
}

/// pi's `SimpleStreamOptions` for a request pi-rs hands to an extension.
fn options_to_json(options: &StreamOptions, model: &Model) -> Value {
    let mut map = Map::new();
    if let Some(key) = &options.api_key {
        map.insert("apiKey".into(), json!(key.expose()));
    }
    if !options.headers.is_empty() {
        map.insert("headers".into(), json!(options.headers));
    }
    if options.thinking != ThinkingLevel::Off {
        map.insert("reasoning".into(), json!(options.thinking.as_str()));
    }
    map.insert(
        "maxTokens".into(),
        json!(options.max_tokens.unwrap_or(model.max_tokens)),
    );
    if let Some(t) = options.temperature {
        map.insert("temperature".into(), json!(t));
    }
    if let Some(id) = &options.session_id {
        map.insert("sessionId".into(), json!(id));
    }
    let retention = match options.cache_retention {
        CacheRetention::None => "none",
        CacheRetention::Short => "short",
        CacheRetention::Long => "long",
    };
    map.insert("cacheRetention".into(), json!(retention));
    map.insert("timeoutMs".into(), json!(options.retry.timeout_ms));
    Value::Object(map)
}

/// A request's options from pi-ai's `StreamOptions` / `SimpleStreamOptions` JSON, over
/// `base` (the credentials and settings pi-rs would use for the model). `reasoning`
/// (simple options) sets the thinking level; provider-specific options are not read.
pub(crate) fn options_from_json(value: &Value, mut base: StreamOptions) -> StreamOptions {
    let str_field = |k: &str| value.get(k).and_then(Value::as_str);
    if let Some(key) = str_field("apiKey") {
        base.api_key = Some(ApiKey::new(key));
    }
    if let Some(headers) = value.get("headers").and_then(Value::as_object) {
        for (k, v) in headers {
            match v.as_str() {
                Some(v) => {
                    base.headers.insert(k.clone(), v.to_string());
                }
                None => {
                    base.headers.remove(k);
                }
            }
        }
    }
    base.thinking = str_field("reasoning")
        .and_then(ThinkingLevel::parse)
        .unwrap_or(ThinkingLevel::Off);
    if let Some(n) = value.get("maxTokens").and_then(Value::as_u64) {
        base.max_tokens = Some(n);
    }
    if let Some(t) = value.get("temperature").and_then(Value::as_f64) {
        base.temperature = Some(t);
    }
    if let Some(id) = str_field("sessionId") {
        base.session_id = Some(id.to_string());
    }
    match str_field("cacheRetention") {
        Some("none") => base.cache_retention = CacheRetention::None,
        Some("long") => base.cache_retention = CacheRetention::Long,
        Some("short") => base.cache_retention = CacheRetention::Short,
        _ => {}
    }
    if let Some(ms) = value.get("timeoutMs").and_then(Value::as_u64) {
        base.retry.timeout_ms = ms;
    }
    if let Some(n) = value.get("maxRetries").and_then(Value::as_u64) {
        base.retry.max_retries = u32::try_from(n).unwrap_or(u32::MAX);
    }
    base
}

/// The message of a reply that failed before (or while) the extension streamed it.
fn failed(
    model: &Model,
    partial: Option<AssistantMessage>,
    reason: StopReason,
    text: &str,
) -> StreamEvent {
    let mut error = partial.unwrap_or_else(|| AssistantMessage {
        api: model.api.as_str().to_string(),
        provider: model.provider.clone(),
        model: model.id.clone(),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    });
    error.stop_reason = reason;
    error.error_message = Some(text.to_string());
    StreamEvent::Error { reason, error }
}

impl ExternalStreamer for ExtensionStreamer {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> EventStream {
        let (tx, rx) = unbounded();
        let work = run(
            self.conn.clone(),
            model.clone(),
            context_to_json(context),
            options,
            tx,
        );
        Box::pin(stream::select(
            stream::once(work).filter_map(|()| async { None }),
            rx,
        ))
    }
}

async fn run(
    conn: Weak<Connection>,
    model: Model,
    context: Value,
    options: StreamOptions,
    tx: UnboundedSender<StreamEvent>,
) {
    let send = |event: StreamEvent| {
        let _ = tx.unbounded_send(event);
    };
    let Some(conn) = conn.upgrade() else {
        send(failed(
            &model,
            None,
            StopReason::Error,
            "The extension that streams this provider is no longer running",
        ));
        return;
    };
    let request = json!({
        "type": "provider_stream",
        "api": model.api.as_str(),
        "model": model,
        "context": context,
        "options": options_to_json(&options, &model),
    });
    let started = conn.begin_stream("provider_stream", |id| {
        let mut message = request;
        if let Some(map) = message.as_object_mut() {
            map.insert("id".into(), json!(id));
        }
        line(&message)
    });
    let (id, mut reply, mut events) = match started {
        Ok(s) => s,
        Err(_) => {
            send(failed(
                &model,
                None,
                StopReason::Error,
                "The extension that streams this provider is not running",
            ));
            return;
        }
    };
    let timeout = Duration::from_millis(options.retry.timeout_ms.max(1));
    // The message so far, so a failure keeps what arrived.
    let mut partial = crate::ai::stream::PartialMessage::default();
    let mut started_message = false;
    let mut handle =
        |value: Value, partial: &mut crate::ai::stream::PartialMessage| -> Result<bool, String> {
            let event = event_from_json(&value)
                .map_err(|e| format!("The extension sent an invalid stream event: {e}"))?;
            if matches!(event, StreamEvent::Start) {
                started_message = true;
            }
            partial.apply(&event);
            let terminal = event.is_terminal();
            send(event);
            Ok(terminal)
        };
    let end = loop {
        tokio::select! {
            biased;
            _ = options.cancel.cancelled() => {
                conn.forget(id);
                conn.send_cancel(id);
                break Some((StopReason::Aborted, "Request was aborted".to_string()));
            }
            event = events.recv() => match event {
                Some(value) => match handle(value, &mut partial) {
                    Ok(true) => {
                        conn.forget(id);
                        break None;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        conn.forget(id);
                        conn.send_cancel(id);
                        break Some((StopReason::Error, e));
                    }
                },
                // The request is gone (answered or failed): its answer tells.
                None => {
                    let outcome = (&mut reply).await;
                    break Some((StopReason::Error, ended_without_reply(outcome)));
                }
            },
            outcome = &mut reply => {
                // Events sent before the answer are still queued.
                let mut finished = false;
                while let Ok(value) = events.try_recv() {
                    match handle(value, &mut partial) {
                        Ok(true) => { finished = true; break; }
                        Ok(false) => {}
                        Err(e) => { finished = true; send(failed(&model, Some(partial.message.clone()), StopReason::Error, &e)); break; }
                    }
                }
                if finished {
                    break None;
                }
                break Some((StopReason::Error, ended_without_reply(outcome)));
            }
            _ = tokio::time::sleep(timeout) => {
                conn.forget(id);
                conn.send_cancel(id);
                break Some((StopReason::Error, format!("Request timed out: the extension sent nothing for {} s", timeout.as_secs_f64())));
            }
        }
    };
    if let Some((reason, text)) = end {
        let partial = (started_message || !partial.message.content.is_empty())
            .then(|| partial.message.clone())
            .filter(|m| !m.api.is_empty() || !m.content.is_empty());
        send(failed(&model, partial, reason, &text));
    }
}

/// Why a `provider_stream` request ended without its `done`/`error` event.
fn ended_without_reply(
    outcome: Result<Result<Option<Value>, Failure>, tokio::sync::oneshot::error::RecvError>,
) -> String {
    match outcome {
        Ok(Ok(_)) => "The extension's stream ended without a done or error event".into(),
        Ok(Err(Failure::Handler(e))) => e,
        Ok(Err(Failure::Gone(reason))) => {
            format!("The extension that streams this provider stopped: {reason}")
        }
        Ok(Err(Failure::TimedOut(_))) => "Request timed out".into(),
        Ok(Err(Failure::Cancelled)) => "Request was aborted".into(),
        Ok(Err(Failure::NotRunning)) | Err(_) => {
            "The extension that streams this provider stopped".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_round_trip_through_pi_ai_json() {
        let value = json!({
            "systemPrompt": "be brief",
            "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
            "tools": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
        });
        let context = context_from_json(&value).expect("context");
        assert_eq!(context.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(context.messages.len(), 1);
        assert_eq!(context.tools[0].name, "read");
        assert_eq!(context_to_json(&context), value);
        assert!(context_from_json(&json!({"messages": [{"role": "robot"}]})).is_err());
    }

    #[test]
    fn simple_options_override_the_defaults() {
        let base = StreamOptions {
            api_key: Some(ApiKey::new("from-registry")),
            ..StreamOptions::default()
        };
        let options = options_from_json(
            &json!({"apiKey": "gitlab-duo", "headers": {"Authorization": "Bearer t"},
                    "reasoning": "high", "maxTokens": 100}),
            base,
        );
        assert_eq!(
            options.api_key.map(|k| k.expose().to_string()).as_deref(),
            Some("gitlab-duo")
        );
        assert_eq!(
            options.headers.get("Authorization").map(String::as_str),
            Some("Bearer t")
        );
        assert_eq!(options.thinking, ThinkingLevel::High);
        assert_eq!(options.max_tokens, Some(100));
    }
}
