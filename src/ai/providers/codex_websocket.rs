//! The WebSocket transport of `openai-codex-responses`, pi's default for the ChatGPT
//! backend.
//!
//! With the `transport` setting at `auto` (the default), `websocket` or
//! `websocket-cached`, a Codex request goes over a WebSocket to the Responses URL with
//! `ws`/`wss` in place of `http`/`https`: it sends the request body as one text message
//! `{"type": "response.create", ...body}` and reads one JSON event per message — the
//! same events the SSE stream carries, fed to the same decoder — until
//! `response.completed` (or `response.done` / `response.incomplete`). The upgrade
//! carries the SSE request's headers without `accept`/`content-type`, with
//! `OpenAI-Beta: responses_websockets=2026-02-06` and the session id (a fresh UUID
//! without one) as `session_id` and `x-client-request-id`.
//!
//! As in pi, a session keeps its socket: after a completed response it stays open for
//! the session's next request and is closed after five idle minutes, when the session is
//! replaced (`/new`, `/resume`, fork) and when pi exits. A request while the session's
//! socket is busy (two at once) gets a socket of its own, closed after it; a request
//! without a session id always does. With `auto` or `websocket-cached` a request on a
//! kept socket sends only the input items after those of the previous request and its
//! response, with `previous_response_id` set to that response's id, when everything but
//! the input equals the previous request's and its input starts with the previous input
//! followed by the previous response's items; otherwise it sends the whole context.
//! `websocket` reuses the socket but always sends the whole context. Any error closes
//! the socket and forgets the previous response.
//!
//! As in pi, a WebSocket that fails before its first event (refused upgrade, no
//! connection, closed early) falls back to SSE for this request, and the session
//! keeps to SSE from then on; a failure after the first event ends the answer with
//! that error, and an error the server reports (`error`, `response.failed`) ends it
//! without the SSE fallback. Two safety nets pi lacks: a kept socket that fails before
//! its first event (the server dropped it while idle), and a delta request answered with
//! `previous_response_not_found`, are retried once on a new socket with the whole
//! context before anything else happens. Bounded: the upgrade must complete, and each
//! next message arrive, within the provider timeout (`retry.provider.timeoutMs`);
//! cancelling closes the socket at once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use futures::{FutureExt, SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use super::openai_codex_responses::response_items;
use super::output::Output;
use super::wire::{HttpRequest, SseDecoder};
use super::{StreamOptions, Transport};
use crate::ai::model::Model;
use crate::ai::sse::SseEvent;

/// The `OpenAI-Beta` value of pi's WebSocket upgrade.
pub const OPENAI_BETA_WEBSOCKETS: &str = "responses_websockets=2026-02-06";

/// How long a session's socket stays open unused (pi's `SESSION_WEBSOCKET_CACHE_TTL_MS`).
pub const IDLE_TTL: Duration = Duration::from_secs(5 * 60);

/// How long closing a socket may take before it is simply dropped.
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// Sessions whose WebSocket failed once: they use SSE from then on (pi's
/// `websocketSseFallbackSessions`, process-wide like pi's).
static SSE_FALLBACK_SESSIONS: LazyLock<Mutex<HashSet<String>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a delta request builds on: the previous request's whole body, its response's id
/// and that response as input items (pi's `continuation`).
struct Continuation {
    body: Value,
    response_id: String,
    items: Vec<Value>,
}

/// A session's kept socket. `socket` is `None` while a request uses it.
struct Entry {
    generation: u64,
    socket: Option<Socket>,
    continuation: Option<Continuation>,
    /// Bumped on each release; an idle timer only closes the socket it was set for.
    idle_ticket: u64,
}

/// The sessions' sockets, by session id (pi's `websocketSessionCache`).
static SESSIONS: LazyLock<Mutex<HashMap<String, Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static GENERATION: AtomicU64 = AtomicU64::new(1);

fn sessions() -> std::sync::MutexGuard<'static, HashMap<String, Entry>> {
    // A panic while holding the lock leaves plain data behind: keep using it.
    SESSIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a WebSocket attempt ended when it did not complete.
#[derive(Debug)]
pub(crate) enum WsFailure {
    /// Failed before the first event (refused, unreachable, closed, silent): the request
    /// goes over SSE instead, so why it failed does not reach the user, as in pi.
    BeforeStart,
    /// The connection failed after events were decoded: the answer ends with this error.
    Failed(String),
    /// The server reported an error (or sent something undecodable): the answer ends
    /// with it, and the session keeps its WebSocket transport, as in pi.
    Api(String),
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

/// Where a leased socket goes back to.
enum Slot {
    /// The session's kept socket (entry `generation` under `session`).
    Kept { session: String, generation: u64 },
    /// A socket for this request only.
    Own,
}

/// A socket a request holds. Dropped without [`Lease::release`] (the request was
/// dropped half-way), it forgets the session's entry and the socket closes.
struct Lease {
    socket: Option<Socket>,
    slot: Slot,
    reused: bool,
    continuation: Option<Continuation>,
}

impl Lease {
    fn socket(&mut self) -> Result<&mut Socket, WsFailure> {
        self.socket.as_mut().ok_or(WsFailure::BeforeStart)
    }

    /// Gives the socket back: kept for the session's next request when `keep` (with
    /// `continuation`), closed otherwise.
    async fn release(mut self, keep: bool, continuation: Option<Continuation>) {
        let Some(socket) = self.socket.take() else {
            return;
        };
        let leftover = match &self.slot {
            Slot::Own => Some(socket),
            Slot::Kept {
                session,
                generation,
            } => {
                let mut map = sessions();
                let current = map
                    .get_mut(session)
                    .filter(|entry| entry.generation == *generation);
                match current {
                    Some(entry) if keep => {
                        entry.socket = Some(socket);
                        entry.continuation = continuation;
                        entry.idle_ticket += 1;
                        schedule_idle_close(session.clone(), *generation, entry.idle_ticket);
                        None
                    }
                    Some(_) => {
                        map.remove(session);
                        Some(socket)
                    }
                    None => Some(socket),
                }
            }
        };
        if let Some(socket) = leftover {
            close(socket, "done").await;
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.socket.is_none() {
            return;
        }
        if let Slot::Kept {
            session,
            generation,
        } = &self.slot
        {
            let mut map = sessions();
            if map
                .get(session)
                .is_some_and(|entry| entry.generation == *generation)
            {
                map.remove(session);
            }
        }
    }
}

/// Closes a socket with a close frame, bounded; a socket that does not take it is dropped.
async fn close(mut socket: Socket, reason: &str) {
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: reason.to_string().into(),
    };
    let _ = tokio::time::timeout(CLOSE_LIMIT, socket.close(Some(frame))).await;
}

/// After [`IDLE_TTL`], closes the session's socket if it is still the one released
/// with `ticket` and unused since.
fn schedule_idle_close(session: String, generation: u64, ticket: u64) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        tokio::time::sleep(IDLE_TTL).await;
        let socket = {
            let mut map = sessions();
            let idle = map.get(&session).is_some_and(|entry| {
                entry.generation == generation
                    && entry.idle_ticket == ticket
                    && entry.socket.is_some()
            });
            if idle {
                map.remove(&session).and_then(|entry| entry.socket)
            } else {
                None
            }
        };
        if let Some(socket) = socket {
            close(socket, "idle_timeout").await;
        }
    });
}

/// Whether an idle socket is still open: reads what arrived while it was unused (a
/// close, an error, or stray frames) without waiting.
fn still_open(socket: &mut Socket) -> bool {
    loop {
        match socket.next().now_or_never() {
            None => return true,
            Some(Some(Ok(Message::Close(_)))) | Some(Some(Err(_))) | Some(None) => return false,
            Some(Some(Ok(_))) => continue,
        }
    }
}

/// Closes the kept socket of `session` (pi's `closeOpenAICodexWebSocketSessions`); a
/// request using it at the moment closes it when done.
pub async fn close_session(session: &str) {
    let socket = sessions().remove(session).and_then(|entry| entry.socket);
    if let Some(socket) = socket {
        close(socket, "session_closed").await;
    }
}

/// Closes every kept socket (at exit).
pub async fn close_all() {
    let sockets: Vec<Socket> = sessions()
        .drain()
        .filter_map(|(_, entry)| entry.socket)
        .collect();
    futures::future::join_all(sockets.into_iter().map(|s| close(s, "session_closed"))).await;
}

/// How many sessions have a kept socket (idle or in use).
pub fn kept_sockets() -> usize {
    sessions().len()
}

/// Opens a socket, bounded by `limit` and abortable.
async fn connect(
    upgrade: &Request,
    limit: Duration,
    cancel: &CancellationToken,
) -> Result<Socket, WsFailure> {
    let connected = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(WsFailure::Aborted),
        connected = tokio::time::timeout(limit, tokio_tungstenite::connect_async(upgrade.clone())) => connected,
    };
    match connected {
        Err(_) | Ok(Err(_)) => Err(WsFailure::BeforeStart),
        Ok(Ok((socket, _))) => Ok(socket),
    }
}

/// A socket for a request of `session`: its kept one when idle and open, a new one kept
/// for the session when there is none, or one of the request's own while the kept one
/// is busy (and always without a session). `fresh` skips an idle kept socket.
async fn acquire(
    session: Option<&str>,
    upgrade: &Request,
    limit: Duration,
    cancel: &CancellationToken,
    fresh: bool,
) -> Result<Lease, WsFailure> {
    let Some(session) = session else {
        let socket = connect(upgrade, limit, cancel).await?;
        return Ok(own(socket));
    };
    // Lives only for this lookup: the socket moves out of it at once.
    #[allow(clippy::large_enum_variant)]
    enum Found {
        Idle(u64, Socket, Option<Continuation>),
        Busy,
        Nothing,
    }
    let found = {
        let mut map = sessions();
        match map.get_mut(session) {
            Some(entry) => match entry.socket.take() {
                Some(socket) => Found::Idle(entry.generation, socket, entry.continuation.take()),
                None => Found::Busy,
            },
            None => Found::Nothing,
        }
    };
    match found {
        Found::Busy => {
            let socket = connect(upgrade, limit, cancel).await?;
            return Ok(own(socket));
        }
        Found::Idle(generation, mut socket, continuation) => {
            let slot = Slot::Kept {
                session: session.to_string(),
                generation,
            };
            if !fresh && still_open(&mut socket) {
                return Ok(Lease {
                    socket: Some(socket),
                    slot,
                    reused: true,
                    continuation,
                });
            }
            // Closed while idle (or skipped): forget it and open another.
            {
                let mut map = sessions();
                if map
                    .get(session)
                    .is_some_and(|entry| entry.generation == generation)
                {
                    map.remove(session);
                }
            }
            close(socket, "done").await;
        }
        Found::Nothing => {}
    }
    let socket = connect(upgrade, limit, cancel).await?;
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed);
    sessions().insert(
        session.to_string(),
        Entry {
            generation,
            socket: None,
            continuation: None,
            idle_ticket: 0,
        },
    );
    Ok(Lease {
        socket: Some(socket),
        slot: Slot::Kept {
            session: session.to_string(),
            generation,
        },
        reused: false,
        continuation: None,
    })
}

fn own(socket: Socket) -> Lease {
    Lease {
        socket: Some(socket),
        slot: Slot::Own,
        reused: false,
        continuation: None,
    }
}

/// The body without `input` and `previous_response_id`: what must not change for a
/// delta request.
fn without_input(body: &Value) -> Value {
    let mut rest = body.clone();
    if let Value::Object(fields) = &mut rest {
        fields.remove("input");
        fields.remove("previous_response_id");
    }
    rest
}

/// The input items after those `continuation` covers, when `body` extends it (pi's
/// `getCachedWebSocketInputDelta`).
fn input_delta(body: &Value, continuation: &Continuation) -> Option<Vec<Value>> {
    if without_input(body) != without_input(&continuation.body) {
        return None;
    }
    let items = |v: &Value| v.get("input").and_then(Value::as_array).cloned();
    let current = items(body).unwrap_or_default();
    let mut baseline = items(&continuation.body).unwrap_or_default();
    baseline.extend(continuation.items.iter().cloned());
    if current.len() < baseline.len() || current[..baseline.len()] != baseline[..] {
        return None;
    }
    Some(current[baseline.len()..].to_vec())
}

/// The body to send: the delta form when `continuation` allows it (pi's
/// `buildCachedWebSocketRequestBody`).
fn delta_body(body: &Value, continuation: &Continuation) -> Option<Value> {
    let delta = input_delta(body, continuation)?;
    if continuation.response_id.is_empty() {
        return None;
    }
    let mut sent = body.clone();
    if let Value::Object(fields) = &mut sent {
        // pi spreads the body and then sets these two: `input` keeps its place.
        fields.insert(
            "previous_response_id".into(),
            Value::from(continuation.response_id.clone()),
        );
        fields.insert("input".into(), Value::Array(delta));
    }
    Some(sent)
}

/// Whether the first event says the server forgot the previous response.
fn previous_response_not_found(text: &str) -> bool {
    let Ok(event) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let code = match event.get("type").and_then(Value::as_str) {
        Some("error") => event
            .get("code")
            .or_else(|| event.pointer("/error/code"))
            .and_then(Value::as_str),
        Some("response.failed") => event
            .pointer("/response/error/code")
            .and_then(Value::as_str),
        _ => None,
    };
    code == Some("previous_response_not_found")
}

/// How one exchange on a socket ended.
enum Exchange {
    Completed,
    /// The delta was refused with `previous_response_not_found` before any event.
    Forgotten,
    Failed(WsFailure),
}

/// Sends `request` over a WebSocket and decodes its events into `out`, calling `send`
/// after each. `stalled` words the error of a server that went quiet.
pub(crate) async fn stream(
    model: &Model,
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
    let cached_context = matches!(
        options.transport,
        Transport::Auto | Transport::WebSocketCached
    );
    let session = options.session_id.as_deref();
    let mut retried = false;
    loop {
        let mut lease = acquire(session, &upgrade, limit, &options.cancel, retried).await?;
        let kept = matches!(lease.slot, Slot::Kept { .. });
        let continuation = lease.continuation.take();
        let delta = match (&continuation, cached_context && kept) {
            (Some(c), true) => delta_body(&request.body, c),
            _ => None,
        };
        let (body, sent_delta) = match delta {
            Some(body) => (body, true),
            None => (request.body.clone(), false),
        };
        // A delta keeps the previous continuation until the response replaces it; a full
        // request forgets it (pi clears it when the input does not extend it).
        let previous = if sent_delta { continuation } else { None };
        let may_retry = !retried && (lease.reused || sent_delta);
        let exchange = {
            let socket = lease.socket()?;
            exchange(
                socket, &body, sent_delta, options, decoder, out, send, stalled, limit,
            )
            .await
        };
        match exchange {
            Exchange::Completed => {
                if options.cancel.is_cancelled() {
                    lease.release(false, None).await;
                    return Ok(());
                }
                let next = if cached_context && kept {
                    match out.message.response_id.clone() {
                        Some(response_id) => Some(Continuation {
                            body: request.body.clone(),
                            response_id,
                            items: response_items(model, &out.message),
                        }),
                        None => previous,
                    }
                } else {
                    previous
                };
                lease.release(true, next).await;
                let finished = decoder.finish(out);
                send(out);
                return finished.map_err(WsFailure::Api);
            }
            Exchange::Forgotten if may_retry => {
                lease.release(false, None).await;
                retried = true;
            }
            Exchange::Failed(WsFailure::BeforeStart) if may_retry => {
                lease.release(false, None).await;
                retried = true;
            }
            Exchange::Forgotten => {
                lease.release(false, None).await;
                return Err(WsFailure::Api(
                    "Codex error: previous_response_not_found".into(),
                ));
            }
            Exchange::Failed(failure) => {
                lease.release(false, None).await;
                return Err(failure);
            }
        }
    }
}

/// One `response.create` and its events on `socket`.
#[allow(clippy::too_many_arguments)]
async fn exchange(
    socket: &mut Socket,
    body: &Value,
    sent_delta: bool,
    options: &StreamOptions,
    decoder: &mut dyn SseDecoder,
    out: &mut Output,
    send: &(dyn Fn(&mut Output) + Sync),
    stalled: &(dyn Fn() -> String + Sync),
    limit: Duration,
) -> Exchange {
    let first = Message::text(create_message(body));
    let sent = tokio::select! {
        biased;
        _ = options.cancel.cancelled() => return Exchange::Failed(WsFailure::Aborted),
        sent = tokio::time::timeout(limit, socket.send(first)) => sent,
    };
    if !matches!(sent, Ok(Ok(()))) {
        return Exchange::Failed(WsFailure::BeforeStart);
    }
    let mut started = false;
    let fail = |started: bool, text: String| {
        Exchange::Failed(if started {
            WsFailure::Failed(text)
        } else {
            WsFailure::BeforeStart
        })
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
            let _ = tokio::time::timeout(CLOSE_LIMIT, socket.close(Some(frame))).await;
            return Exchange::Failed(WsFailure::Aborted);
        };
        let message = match next {
            Err(_) => return fail(started, stalled()),
            Ok(None) => return fail(started, closed_message(None)),
            Ok(Some(Err(e))) => return fail(started, describe(&e)),
            Ok(Some(Ok(message))) => message,
        };
        let text = match message {
            Message::Text(text) => text.as_str().to_string(),
            Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Message::Close(frame) => return fail(started, closed_message(frame.as_ref())),
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
        };
        if text.is_empty() {
            continue;
        }
        if !started && sent_delta && previous_response_not_found(&text) {
            return Exchange::Forgotten;
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
        if let Err(text) = step {
            return Exchange::Failed(WsFailure::Api(text));
        }
        if is_completion(&text) {
            return Exchange::Completed;
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

    fn continuation() -> Continuation {
        Continuation {
            body: json!({"model": "m", "instructions": "i", "input": [{"role": "user", "content": "a"}]}),
            response_id: "resp_1".into(),
            items: vec![json!({"type": "message", "role": "assistant", "content": "b"})],
        }
    }

    #[test]
    fn a_request_extending_the_last_one_sends_only_its_new_input() {
        let body = json!({"model": "m", "instructions": "i", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}
        ], "tool_choice": "auto"});
        let mut earlier = continuation();
        earlier.body["tool_choice"] = json!("auto");
        let sent = delta_body(&body, &earlier).unwrap_or_default();
        assert_eq!(
            sent,
            json!({"model": "m", "instructions": "i", "input": [{"role": "user", "content": "c"}],
                "tool_choice": "auto", "previous_response_id": "resp_1"})
        );
        // Nothing new is still a delta (empty input), as in pi.
        let same = json!({"model": "m", "instructions": "i", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant", "content": "b"}
        ], "tool_choice": "auto"});
        assert_eq!(
            delta_body(&same, &earlier).unwrap_or_default()["input"],
            json!([])
        );
    }

    #[test]
    fn anything_else_changed_or_a_rewritten_history_sends_the_whole_context() {
        let base = continuation();
        let other_instructions = json!({"model": "m", "instructions": "j", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}
        ]});
        assert_eq!(delta_body(&other_instructions, &base), None);
        let rewritten = json!({"model": "m", "instructions": "i", "input": [
            {"role": "user", "content": "x"},
            {"type": "message", "role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}
        ]});
        assert_eq!(delta_body(&rewritten, &base), None);
        let shorter = json!({"model": "m", "instructions": "i", "input": [
            {"role": "user", "content": "a"}
        ]});
        assert_eq!(delta_body(&shorter, &base), None);
        let no_id = Continuation {
            response_id: String::new(),
            ..continuation()
        };
        let extended = json!({"model": "m", "instructions": "i", "input": [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "assistant", "content": "b"}
        ]});
        assert_eq!(delta_body(&extended, &no_id), None);
    }

    #[test]
    fn previous_response_not_found_is_recognised_in_both_error_shapes() {
        assert!(previous_response_not_found(
            r#"{"type":"error","code":"previous_response_not_found","message":"gone"}"#
        ));
        assert!(previous_response_not_found(
            r#"{"type":"error","error":{"code":"previous_response_not_found"}}"#
        ));
        assert!(previous_response_not_found(
            r#"{"type":"response.failed","response":{"error":{"code":"previous_response_not_found"}}}"#
        ));
        assert!(!previous_response_not_found(
            r#"{"type":"error","code":"rate_limit_exceeded"}"#
        ));
        assert!(!previous_response_not_found("not json"));
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
