//! The WebSocket transport of `openai-codex-responses`, pi's default for the ChatGPT
//! backend.
//!
//! With the `transport` setting at `auto` (the default), `websocket` or
//! `websocket-cached`, a Codex request first opens a WebSocket to the Responses URL with
//! `ws`/`wss` in place of `http`/`https`, sends the request body as one text message
//! `{"type": "response.create", ...body}` and reads one JSON event per message — the
//! same events the SSE stream carries, fed to the same decoder — until
//! `response.completed` (or `response.done` / `response.incomplete`). The upgrade
//! carries the SSE request's headers without `accept`/`content-type`, with
//! `OpenAI-Beta: responses_websockets=2026-02-06` and the session id (a fresh UUID
//! without one) as `session_id` and `x-client-request-id`.
//!
//! As in pi, a WebSocket that fails before its first event (refused upgrade, no
//! connection, closed early) falls back to SSE for this request, and the session
//! keeps to SSE from then on; a failure after the first event ends the answer with
//! that error. `sse` never opens a WebSocket. Bounded: the upgrade must complete, and
//! each next message arrive, within the provider timeout (`retry.provider.timeoutMs`);
//! cancelling closes the socket at once. Unlike pi, pi-rs opens one socket per request
//! and always sends the whole context (pi keeps a session's socket open for five
//! minutes and, with `auto`/`websocket-cached`, sends only the new input with
//! `previous_response_id`).

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use super::output::Output;
use super::wire::{HttpRequest, SseDecoder};
use super::{StreamOptions, Transport};
use crate::ai::sse::SseEvent;

/// The `OpenAI-Beta` value of pi's WebSocket upgrade.
pub const OPENAI_BETA_WEBSOCKETS: &str = "responses_websockets=2026-02-06";

/// Sessions whose WebSocket failed once: they use SSE from then on (pi's
/// `websocketSseFallbackSessions`, process-wide like pi's).
static SSE_FALLBACK_SESSIONS: LazyLock<Mutex<HashSet<String>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

/// How a WebSocket attempt ended when it did not complete.
#[derive(Debug)]
pub(crate) enum WsFailure {
    /// Failed before the first event (refused, unreachable, closed, silent): the request
    /// goes over SSE instead, so why it failed does not reach the user, as in pi.
    BeforeStart,
    /// Failed after events were decoded: the answer ends with this error.
    Failed(String),
    /// Cancelled; the socket was closed.
    Aborted,
}

/// Whether this request tries the WebSocket first: any transport but `sse`, unless the
/// session already fell back to SSE.
pub(crate) fn wanted(options: &StreamOptions) -> bool {
    if options.transport == Transport::Sse {
        return false;
    }
    match &options.session_id {
        Some(id) => !SSE_FALLBACK_SESSIONS
            .lock()
            .map(|set| set.contains(id))
            .unwrap_or(false),
        None => true,
    }
}

/// Remembers that the session's WebSocket failed, so its next requests use SSE.
pub(crate) fn record_failure(options: &StreamOptions) {
    if let (Some(id), Ok(mut set)) = (&options.session_id, SSE_FALLBACK_SESSIONS.lock()) {
        set.insert(id.clone());
    }
}

/// The Responses URL with `ws`/`wss` for `http`/`https`.
pub fn websocket_url(http_url: &str) -> String {
    if let Some(rest) = http_url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = http_url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        http_url.to_string()
    }
}

/// The upgrade's headers from the SSE request's: no `accept`, `content-type` or SSE
/// `openai-beta`; pi's WebSocket beta flag; `request_id` as `session_id` and
/// `x-client-request-id`.
pub fn websocket_headers(
    sse_headers: &[(String, String)],
    request_id: &str,
) -> Vec<(String, String)> {
    const DROPPED: &[&str] = &[
        "accept",
        "content-type",
        "openai-beta",
        "session_id",
        "x-client-request-id",
    ];
    let mut headers: Vec<(String, String)> = sse_headers
        .iter()
        .filter(|(k, _)| !DROPPED.iter().any(|d| k.eq_ignore_ascii_case(d)))
        .cloned()
        .collect();
    headers.push(("openai-beta".into(), OPENAI_BETA_WEBSOCKETS.into()));
    headers.push(("x-client-request-id".into(), request_id.into()));
    headers.push(("session_id".into(), request_id.into()));
    headers
}

/// The first message: the request body with `"type": "response.create"` in front.
pub fn create_message(body: &Value) -> String {
    let mut message = serde_json::Map::new();
    message.insert("type".into(), Value::from("response.create"));
    if let Value::Object(fields) = body {
        for (k, v) in fields {
            message.insert(k.clone(), v.clone());
        }
    }
    Value::Object(message).to_string()
}

/// Whether an event ends the response.
fn is_completion(text: &str) -> bool {
    let kind = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
    matches!(
        kind.as_deref(),
        Some("response.completed" | "response.done" | "response.incomplete")
    )
}

/// pi's message for a socket closed before the response completed.
fn closed_message(frame: Option<&CloseFrame>) -> String {
    match frame {
        Some(frame) => {
            let code = u16::from(frame.code);
            let reason = if frame.reason.is_empty() && code == 1009 {
                "message too big".to_string()
            } else {
                frame.reason.to_string()
            };
            format!("WebSocket closed {code} {reason}")
                .trim()
                .to_string()
        }
        None => "WebSocket closed".to_string(),
    }
}

/// Describes a connect or read error, with an HTTP status when the upgrade was refused.
fn describe(error: &WsError) -> String {
    match error {
        WsError::Http(response) => {
            format!("WebSocket upgrade refused: {}", response.status().as_u16())
        }
        other => format!("WebSocket error: {other}"),
    }
}

/// Sends `request` over a WebSocket and decodes its events into `out`, calling `send`
/// after each. `stalled` words the error of a server that went quiet.
pub(crate) async fn stream(
    request: &HttpRequest,
    options: &StreamOptions,
    decoder: &mut dyn SseDecoder,
    out: &mut Output,
    send: &(dyn Fn(&mut Output) + Sync),
    stalled: &(dyn Fn() -> String + Sync),
) -> Result<(), WsFailure> {
    let request_id = options
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut upgrade = websocket_url(&request.url)
        .into_client_request()
        .map_err(|_| WsFailure::BeforeStart)?;
    for (k, v) in websocket_headers(&request.headers, &request_id) {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| WsFailure::BeforeStart)?;
        let value = HeaderValue::from_str(&v).map_err(|_| WsFailure::BeforeStart)?;
        upgrade.headers_mut().insert(name, value);
    }
    let limit = Duration::from_millis(options.retry.timeout_ms);
    let connected = tokio::select! {
        biased;
        _ = options.cancel.cancelled() => return Err(WsFailure::Aborted),
        connected = tokio::time::timeout(limit, tokio_tungstenite::connect_async(upgrade)) => connected,
    };
    let mut socket = match connected {
        Err(_) | Ok(Err(_)) => return Err(WsFailure::BeforeStart),
        Ok(Ok((socket, _))) => socket,
    };
    let first = Message::text(create_message(&request.body));
    if socket.send(first).await.is_err() {
        return Err(WsFailure::BeforeStart);
    }
    let mut started = false;
    let fail = |started: bool, text: String| {
        if started {
            WsFailure::Failed(text)
        } else {
            WsFailure::BeforeStart
        }
    };
    loop {
        let next = tokio::select! {
            biased;
            _ = options.cancel.cancelled() => None,
            next = tokio::time::timeout(limit, socket.next()) => Some(next),
        };
        let Some(next) = next else {
            let frame = CloseFrame {
                code: CloseCode::Normal,
                reason: "aborted".into(),
            };
            let _ = socket.close(Some(frame)).await;
            return Err(WsFailure::Aborted);
        };
        let message = match next {
            Err(_) => return Err(fail(started, stalled())),
            Ok(None) => return Err(fail(started, closed_message(None))),
            Ok(Some(Err(e))) => return Err(fail(started, describe(&e))),
            Ok(Some(Ok(message))) => message,
        };
        let text = match message {
            Message::Text(text) => text.as_str().to_string(),
            Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Message::Close(frame) => return Err(fail(started, closed_message(frame.as_ref()))),
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        if text.is_empty() {
            continue;
        }
        // From the first event on, a failure is the answer's (pi's `websocketStarted`).
        started = true;
        let step = decoder.on_event(
            SseEvent {
                event: "",
                data: &text,
            },
            out,
        );
        send(out);
        step.map_err(WsFailure::Failed)?;
        if is_completion(&text) {
            let _ = socket
                .close(Some(CloseFrame {
                    code: CloseCode::Normal,
                    reason: "done".into(),
                }))
                .await;
            let finished = decoder.finish(out);
            send(out);
            return finished.map_err(WsFailure::Failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_url_swaps_the_scheme() {
        assert_eq!(
            websocket_url("https://chatgpt.com/backend-api/codex/responses"),
            "wss://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(
            websocket_url("http://127.0.0.1:9/codex/responses"),
            "ws://127.0.0.1:9/codex/responses"
        );
    }

    #[test]
    fn the_upgrade_headers_trade_the_sse_ones_for_the_websocket_beta() {
        let sse = vec![
            ("authorization".to_string(), "Bearer t".to_string()),
            (
                "OpenAI-Beta".to_string(),
                "responses=experimental".to_string(),
            ),
            ("accept".to_string(), "text/event-stream".to_string()),
            ("session_id".to_string(), "s-1".to_string()),
            ("x-client-request-id".to_string(), "s-1".to_string()),
        ];
        let ws = websocket_headers(&sse, "s-1");
        assert_eq!(
            ws,
            vec![
                ("authorization".to_string(), "Bearer t".to_string()),
                (
                    "openai-beta".to_string(),
                    OPENAI_BETA_WEBSOCKETS.to_string()
                ),
                ("x-client-request-id".to_string(), "s-1".to_string()),
                ("session_id".to_string(), "s-1".to_string()),
            ]
        );
    }

    #[test]
    fn the_first_message_is_the_body_as_response_create() {
        let text = create_message(&json!({"model": "gpt-5.1-codex", "stream": true}));
        let v: Value = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(
            v,
            json!({"type": "response.create", "model": "gpt-5.1-codex", "stream": true})
        );
        assert!(text.starts_with(r#"{"type":"response.create""#), "{text}");
    }

    #[test]
    fn completion_events_end_the_stream() {
        assert!(is_completion(
            r#"{"type":"response.completed","response":{}}"#
        ));
        assert!(is_completion(r#"{"type":"response.done"}"#));
        assert!(is_completion(r#"{"type":"response.incomplete"}"#));
        assert!(!is_completion(r#"{"type":"response.output_text.delta"}"#));
    }

    #[test]
    fn a_failed_session_keeps_to_sse_and_sse_never_tries() {
        let options = StreamOptions {
            session_id: Some(format!("unit-{}", uuid::Uuid::new_v4())),
            ..StreamOptions::default()
        };
        assert!(wanted(&options));
        record_failure(&options);
        assert!(!wanted(&options));
        let sse = StreamOptions {
            transport: Transport::Sse,
            ..StreamOptions::default()
        };
        assert!(!wanted(&sse));
    }
}
