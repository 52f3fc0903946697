//! A scripted model server on loopback, shared by every test that needs a model.
//!
//! `MockLlm` is a real HTTP/1.1 server on `127.0.0.1` (its own thread and runtime, so it
//! works from sync and async tests, benches and the `mock_llm` example). It answers each
//! request in the wire format its path asks for — `/chat/completions` (OpenAI chat
//! completions; Mistral's variant under a `/mistral/` base), `/responses` (OpenAI
//! Responses, also Azure's and the Codex backend's), `/messages` (Anthropic),
//! `:streamGenerateContent` (Gemini and Vertex) and `/converse-stream` (Bedrock, as a
//! binary AWS event stream) — and records every request (method, path, headers, JSON
//! body) for assertions. WebSocket upgrades are refused with a 404.
//!
//! Replies come from a script in the corpus format: `sequence` (one entry per request,
//! in order), `rules` (`match`: a substring of the request's system prompt or last user
//! message → `reply`, not consuming the sequence) and `default`. A reply has `text`,
//! `thinking` and `tool_calls: [{name, arguments}]`, plus test extensions: `error:
//! {status, body}` (an HTTP error instead of a stream), `retry_after` (seconds, sent as
//! `retry-after` with an error), `drop_after_bytes` (close the connection mid-stream),
//! `malformed_line` (an unparsable `data:` line after the first event), `delay_ms`
//! (between events), `chunk_size` (split text and arguments into deltas of that many
//! characters), `cut_by_max_tokens` (stop as if the output limit was hit: tool-call
//! arguments end halfway, finish reason `length` / `max_tokens`; chat completions and
//! Anthropic) and `usage: {input, output, cache_read, cache_write}`. Without scripted
//! usage, input tokens are the request body's bytes / 4, as in the corpus mock.
//!
//! Two replies misbehave by going silent, for timeout tests: `hang_before_headers`
//! (read the request, then answer nothing at all) and `stall_after_events: N` (send the
//! headers and the first N events, 0 for none, then nothing more). Either way the
//! connection stays open until the client closes it.
//!
//! `oauth_token: {status, body}` makes the server also answer OAuth token requests
//! (`POST .../token`: refreshes, Google credential exchanges) with that status and JSON
//! body; without it they get a 404.

use std::collections::VecDeque;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A scripted reply.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Reply {
    pub text: Option<String>,
    pub thinking: Option<String>,
    pub tool_calls: Vec<ScriptToolCall>,
    pub error: Option<ScriptError>,
    pub retry_after: Option<f64>,
    pub drop_after_bytes: Option<usize>,
    pub malformed_line: bool,
    pub delay_ms: Option<u64>,
    pub chunk_size: Option<usize>,
    pub cut_by_max_tokens: bool,
    pub usage: Option<ScriptUsage>,
    pub hang_before_headers: bool,
    pub stall_after_events: Option<usize>,
    /// Bedrock only: an in-stream `throttlingException` with this message.
    pub stream_exception: Option<String>,
}

impl Reply {
    /// The arguments as streamed: cut halfway with `cut_by_max_tokens`.
    fn streamed_arguments(&self, tc: &ScriptToolCall) -> String {
        let full = tc.arguments.to_string();
        if !self.cut_by_max_tokens {
            return full;
        }
        let mut half = full.len() / 2;
        while !full.is_char_boundary(half) {
            half -= 1;
        }
        full[..half].to_string()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ScriptToolCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ScriptError {
    pub status: u16,
    /// A JSON value is sent as JSON; a string as it is.
    #[serde(default)]
    pub body: Value,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct ScriptUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Rule {
    #[serde(rename = "match")]
    pub pattern: String,
    pub reply: Reply,
}

/// A whole script.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Script {
    pub sequence: Vec<Reply>,
    pub rules: Vec<Rule>,
    pub default: Option<Reply>,
    /// The answer to every `.../oauth/token` request.
    pub oauth_token: Option<ScriptError>,
}

impl Script {
    pub fn from_json(text: &str) -> Result<Script, String> {
        serde_json::from_str(text).map_err(|e| format!("invalid mock script: {e}"))
    }

    /// A script that answers every request with the given replies, in order.
    pub fn sequence(replies: Vec<Reply>) -> Script {
        Script {
            sequence: replies,
            ..Script::default()
        }
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as received (for bodies that are not JSON, such as token requests).
    pub raw_body: String,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    sequence: Mutex<VecDeque<Reply>>,
    rules: Vec<Rule>,
    default: Option<Reply>,
    oauth_token: Option<ScriptError>,
    requests: Mutex<Vec<RecordedRequest>>,
    log: Option<PathBuf>,
    /// WebSocket upgrade requests seen (and refused).
    upgrades: std::sync::atomic::AtomicUsize,
}

/// The running server; stops when dropped.
pub struct MockLlm {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockLlm {
    /// Starts on a free port.
    pub fn start(script: Script) -> MockLlm {
        match Self::start_on(0, script, None) {
            Ok(m) => m,
            Err(e) => panic!("mock LLM server failed to start: {e}"),
        }
    }

    /// Starts on `port` (0 = any), appending every request to `log` as JSONL
    /// (`{"n", "t", "body"}`, the corpus `requests.jsonl` format, plus `path` and `headers`) when given.
    pub fn start_on(port: u16, script: Script, log: Option<PathBuf>) -> std::io::Result<MockLlm> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let state = Arc::new(State {
            sequence: Mutex::new(script.sequence.into()),
            rules: script.rules,
            default: script.default,
            oauth_token: script.oauth_token,
            requests: Mutex::new(Vec::new()),
            log,
            upgrades: std::sync::atomic::AtomicUsize::new(0),
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread_state = state.clone();
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else {
                    return;
                };
                let serve = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            continue;
                        };
                        let st = thread_state.clone();
                        tokio::spawn(async move {
                            let _ = handle(socket, st).await;
                        });
                    }
                };
                tokio::select! {
                    _ = rx => {}
                    _ = serve => {}
                }
            });
        });
        Ok(MockLlm {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` (append `/v1` for OpenAI-style base URLs).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// How many WebSocket upgrades were asked for (each refused with a 404).
    pub fn websocket_upgrades(&self) -> usize {
        self.state
            .upgrades
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Blocks until the server thread ends (it does not by itself: for the example).
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Completions,
    Responses,
    Anthropic,
    Google,
    Mistral,
    Bedrock,
}

fn wire_for(path: &str) -> Option<Wire> {
    if path.contains("/mistral/") && path.contains("/chat/completions") {
        Some(Wire::Mistral)
    } else if path.contains("/converse-stream") {
        Some(Wire::Bedrock)
    } else if path.contains(":streamGenerateContent") {
        Some(Wire::Google)
    } else if path.contains("/chat/completions") {
        Some(Wire::Completions)
    } else if path.contains("/responses") {
        Some(Wire::Responses)
    } else if path.contains("/messages") {
        Some(Wire::Anthropic)
    } else {
        None
    }
}

async fn handle(mut socket: TcpStream, state: Arc<State>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body_bytes = buf[head_end..].to_vec();
    while body_bytes.len() < length {
        let n = socket.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body_bytes.extend_from_slice(&tmp[..n]);
    }
    let body: Value = serde_json::from_slice(&body_bytes).unwrap_or(Value::Null);
    // WebSocket upgrades (pi's Codex client tries one first) are refused, so the client
    // falls back to SSE; they are not recorded and use up no reply.
    if headers
        .iter()
        .any(|(k, v)| k == "upgrade" && v.eq_ignore_ascii_case("websocket"))
    {
        state
            .upgrades
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        return write_plain(&mut socket, 404, &[], "no WebSocket endpoint").await;
    }
    // The standalone example's log also carries the path and headers (lower-cased names),
    // for side-by-side comparisons of what two clients sent.
    let logged_headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let n = {
        let mut reqs = state
            .requests
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        reqs.push(RecordedRequest {
            method,
            path: path.clone(),
            headers,
            body: body.clone(),
            raw_body: String::from_utf8_lossy(&body_bytes).into_owned(),
        });
        reqs.len()
    };
    if let Some(log) = &state.log {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let line = json!({"n": n, "t": t, "path": path, "headers": logged_headers, "body": body});
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(f, "{line}");
        }
    }
    if path.ends_with("/token") {
        return match &state.oauth_token {
            Some(t) => write_plain(&mut socket, t.status, &[], &t.body.to_string()).await,
            None => write_plain(&mut socket, 404, &[], "no oauth_token in the mock script").await,
        };
    }
    let Some(wire) = wire_for(&path) else {
        let msg = format!("no mock endpoint for {path}");
        return write_plain(&mut socket, 404, &[], &msg).await;
    };
    let reply = pick_reply(&state, &body);
    if reply.hang_before_headers {
        return wait_for_close(&mut socket).await;
    }
    if let Some(err) = &reply.error {
        let text = match &err.body {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let mut extra = Vec::new();
        if let Some(secs) = reply.retry_after {
            extra.push(("retry-after".to_string(), format!("{secs}")));
        }
        return write_plain(&mut socket, err.status, &extra, &text).await;
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            path.split("/models/")
                .nth(1)
                .and_then(|r| r.split(':').next())
                .unwrap_or("mock")
                .to_string()
        });
    let events = render(wire, &reply, n, &model, body_bytes.len());
    write_stream(&mut socket, &reply, &events, wire == Wire::Bedrock).await
}

fn pick_reply(state: &State, body: &Value) -> Reply {
    let haystack = request_text(body);
    if let Some(rule) = state.rules.iter().find(|r| haystack.contains(&r.pattern)) {
        return rule.reply.clone();
    }
    if let Some(next) = state.sequence.lock().ok().and_then(|mut s| s.pop_front()) {
        return next;
    }
    state.default.clone().unwrap_or(Reply {
        text: Some("(default reply)".into()),
        ..Reply::default()
    })
}

/// The system prompt and the last user message's text, whatever the wire format.
fn request_text(body: &Value) -> String {
    let mut out = String::new();
    for key in ["system", "systemInstruction", "instructions"] {
        if let Some(v) = body.get(key) {
            collect_text(v, &mut out);
        }
    }
    let list = ["messages", "input", "contents"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_array));
    if let Some(list) = list {
        for m in list {
            if matches!(
                m.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            ) {
                collect_text(m, &mut out);
            }
        }
        if let Some(last_user) = list
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        {
            collect_text(last_user, &mut out);
        }
    }
    out
}

fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                if matches!(k.as_str(), "text" | "content" | "parts" | "output") {
                    collect_text(v, out);
                }
            }
        }
        _ => {}
    }
}

fn split(text: &str, size: Option<usize>) -> Vec<String> {
    let size = size.unwrap_or(usize::MAX).max(1);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn usage_of(reply: &Reply, body_len: usize) -> ScriptUsage {
    if let Some(u) = reply.usage {
        return u;
    }
    let mut out_chars =
        reply.text.as_deref().map_or(0, str::len) + reply.thinking.as_deref().map_or(0, str::len);
    for tc in &reply.tool_calls {
        out_chars += tc.arguments.to_string().len();
    }
    ScriptUsage {
        input: (body_len / 4) as u64,
        output: out_chars.div_ceil(4).max(1) as u64,
        cache_read: 0,
        cache_write: 0,
    }
}

/// One SSE event: optional name and data.
type Event = (Option<&'static str>, String);

fn render(wire: Wire, reply: &Reply, n: usize, model: &str, body_len: usize) -> Vec<Event> {
    let usage = usage_of(reply, body_len);
    let mut events = match wire {
        Wire::Completions => render_completions(reply, n, model, usage),
        Wire::Responses => render_responses(reply, n, model, usage),
        Wire::Anthropic => render_anthropic(reply, n, model, usage),
        Wire::Google => render_google(reply, n, usage),
        Wire::Mistral => render_mistral(reply, n, model, usage),
        Wire::Bedrock => render_bedrock(reply, n, usage),
    };
    if reply.malformed_line {
        // Named like a real event of the wire format, so the client does parse it.
        let name = match wire {
            Wire::Anthropic => Some("content_block_delta"),
            Wire::Responses => Some("response.output_text.delta"),
            Wire::Completions | Wire::Google | Wire::Mistral | Wire::Bedrock => None,
        };
        events.insert(
            1.min(events.len()),
            (name, "{\"this is\": not json".to_string()),
        );
    }
    events
}

fn render_completions(reply: &Reply, n: usize, model: &str, usage: ScriptUsage) -> Vec<Event> {
    let id = format!("chatcmpl-mock{n}");
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string(),
        )
    };
    let mut ev = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if let Some(t) = &reply.thinking {
        for piece in split(t, reply.chunk_size) {
            ev.push(chunk(json!({"reasoning_content": piece}), Value::Null));
        }
    }
    if let Some(t) = &reply.text {
        for piece in split(t, reply.chunk_size) {
            ev.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        ev.push(chunk(
            json!({"tool_calls": [{"index": i, "id": format!("call_{n}_{i}"), "type": "function", "function": {"name": tc.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in split(&reply.streamed_arguments(tc), reply.chunk_size) {
            ev.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if reply.cut_by_max_tokens {
        "length"
    } else if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ev.push(chunk(json!({}), json!(finish)));
    ev.push((
        None,
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model, "choices": [],
               "usage": {"prompt_tokens": usage.input + usage.cache_read + usage.cache_write,
                         "completion_tokens": usage.output,
                         "total_tokens": usage.input + usage.cache_read + usage.cache_write + usage.output,
                         "prompt_tokens_details": {"cached_tokens": usage.cache_read + usage.cache_write, "cache_write_tokens": usage.cache_write}}})
        .to_string(),
    ));
    ev.push((None, "[DONE]".to_string()));
    ev
}

/// Mistral's chat stream: OpenAI-like chunks whose `content` may be a list of text and
/// thinking chunks, 9-character tool-call ids sent whole, usage on the last chunk.
fn render_mistral(reply: &Reply, n: usize, model: &str, usage: ScriptUsage) -> Vec<Event> {
    let id = format!("mistral-mock{n}");
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
        let mut c = json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(u) = usage {
            c["usage"] = u;
        }
        (None, c.to_string())
    };
    // Mistral opens with `content: ""`; pi turns that into an empty text block, so the
    // mock leaves it out to keep answers readable.
    let mut ev = vec![chunk(json!({"role": "assistant"}), Value::Null, None)];
    if let Some(t) = &reply.thinking {
        for piece in split(t, reply.chunk_size) {
            ev.push(chunk(
                json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}),
                Value::Null,
                None,
            ));
        }
    }
    if let Some(t) = &reply.text {
        for piece in split(t, reply.chunk_size) {
            ev.push(chunk(json!({"content": piece}), Value::Null, None));
        }
    }
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        let call_id = format!("mock{n:02}c{i:03}")
            .chars()
            .take(9)
            .collect::<String>();
        ev.push(chunk(
            json!({"tool_calls": [{"id": call_id, "index": i, "function": {"name": tc.name, "arguments": reply.streamed_arguments(tc)}}]}),
            Value::Null,
            None,
        ));
    }
    let finish = if reply.cut_by_max_tokens {
        "length"
    } else if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let input = usage.input + usage.cache_read + usage.cache_write;
    ev.push(chunk(
        json!({}),
        json!(finish),
        Some(json!({"prompt_tokens": input, "completion_tokens": usage.output, "total_tokens": input + usage.output})),
    ));
    ev.push((None, "[DONE]".to_string()));
    ev
}

/// Bedrock's ConverseStream events (sent as event-stream messages): text blocks have
/// no start event, tool arguments come as `toolUse.input` fragments, the thinking
/// signature after the thinking text, usage in a final `metadata` event. A reply's
/// `stream_exception` is sent as an in-stream `throttlingException` after the first event.
fn render_bedrock(reply: &Reply, n: usize, usage: ScriptUsage) -> Vec<Event> {
    let ev = |name: &'static str, data: Value| (Some(name), data.to_string());
    let mut out = vec![ev("messageStart", json!({"role": "assistant"}))];
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        for piece in split(t, reply.chunk_size) {
            out.push(ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}}),
            ));
        }
        out.push(ev("contentBlockDelta", json!({"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": format!("sig_{n}")}}})));
        out.push(ev("contentBlockStop", json!({"contentBlockIndex": index})));
        index += 1;
    }
    if let Some(t) = &reply.text {
        for piece in split(t, reply.chunk_size) {
            out.push(ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"text": piece}}),
            ));
        }
        out.push(ev("contentBlockStop", json!({"contentBlockIndex": index})));
        index += 1;
    }
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        out.push(ev("contentBlockStart", json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": format!("tooluse_{n}_{i}"), "name": tc.name}}})));
        for piece in split(&reply.streamed_arguments(tc), reply.chunk_size) {
            out.push(ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        out.push(ev("contentBlockStop", json!({"contentBlockIndex": index})));
        index += 1;
    }
    let stop = if reply.cut_by_max_tokens {
        "max_tokens"
    } else if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    out.push(ev("messageStop", json!({"stopReason": stop})));
    out.push(ev(
        "metadata",
        json!({"usage": {"inputTokens": usage.input, "outputTokens": usage.output,
        "totalTokens": usage.input + usage.output + usage.cache_read + usage.cache_write,
        "cacheReadInputTokens": usage.cache_read, "cacheWriteInputTokens": usage.cache_write},
        "metrics": {"latencyMs": 1}}),
    ));
    if let Some(message) = reply.stream_exception.as_deref() {
        out.insert(
            1,
            (
                Some("exception:throttlingException"),
                json!({"message": message}).to_string(),
            ),
        );
    }
    out
}

/// The JSON events of a Responses-API answer to `reply` (the `n`th), as the SSE mock
/// streams them: for servers of other transports (the Codex WebSocket one).
pub fn responses_events(reply: &Reply, n: usize, model: &str, body_len: usize) -> Vec<String> {
    render_responses(reply, n, model, usage_of(reply, body_len))
        .into_iter()
        .map(|(_, data)| data)
        .collect()
}

fn render_responses(reply: &Reply, n: usize, model: &str, usage: ScriptUsage) -> Vec<Event> {
    let named = |name: &'static str, mut data: Value| {
        data["type"] = json!(name);
        (Some(name), data.to_string())
    };
    let resp_id = format!("resp_mock{n}");
    let mut ev = vec![named(
        "response.created",
        json!({"response": {"id": resp_id, "model": model, "status": "in_progress"}}),
    )];
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        let id = format!("rs_mock{n}");
        ev.push(named(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
        ));
        ev.push(named(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "part": {"type": "summary_text", "text": ""}}),
        ));
        for piece in split(t, reply.chunk_size) {
            ev.push(named(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "delta": piece}),
            ));
        }
        ev.push(named(
            "response.reasoning_summary_part.done",
            json!({"item_id": id, "part": {"type": "summary_text", "text": t}}),
        ));
        ev.push(named(
            "response.output_item.done",
            json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": t}], "encrypted_content": format!("enc_{n}")}}),
        ));
        index += 1;
    }
    if let Some(t) = &reply.text {
        let id = format!("msg_mock{n}");
        ev.push(named("response.output_item.added", json!({"output_index": index, "item": {"type": "message", "id": id, "role": "assistant", "content": [], "status": "in_progress"}})));
        ev.push(named(
            "response.content_part.added",
            json!({"item_id": id, "part": {"type": "output_text", "text": "", "annotations": []}}),
        ));
        for piece in split(t, reply.chunk_size) {
            ev.push(named(
                "response.output_text.delta",
                json!({"item_id": id, "delta": piece}),
            ));
        }
        ev.push(named(
            "response.output_item.done",
            json!({"output_index": index, "item": {"type": "message", "id": id, "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": t, "annotations": []}]}}),
        ));
        index += 1;
    }
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        let item_id = format!("fc_mock{n}_{i}");
        let call_id = format!("call_{n}_{i}");
        let args = tc.arguments.to_string();
        ev.push(named("response.output_item.added", json!({"output_index": index, "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": tc.name, "arguments": ""}})));
        for piece in split(&args, reply.chunk_size) {
            ev.push(named(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "delta": piece}),
            ));
        }
        ev.push(named(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "arguments": args}),
        ));
        ev.push(named(
            "response.output_item.done",
            json!({"output_index": index, "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": tc.name, "arguments": args, "status": "completed"}}),
        ));
        index += 1;
    }
    let input = usage.input + usage.cache_read;
    ev.push(named(
        "response.completed",
        json!({"response": {"id": resp_id, "model": model, "status": "completed",
               "usage": {"input_tokens": input, "output_tokens": usage.output, "total_tokens": input + usage.output,
                         "input_tokens_details": {"cached_tokens": usage.cache_read}}}}),
    ));
    ev
}

fn render_anthropic(reply: &Reply, n: usize, model: &str, usage: ScriptUsage) -> Vec<Event> {
    let named = |name: &'static str, mut data: Value| {
        data["type"] = json!(name);
        (Some(name), data.to_string())
    };
    let mut ev = vec![named(
        "message_start",
        json!({"message": {"id": format!("msg_mock{n}"), "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null,
                           "usage": {"input_tokens": usage.input, "output_tokens": 1, "cache_read_input_tokens": usage.cache_read, "cache_creation_input_tokens": usage.cache_write}}}),
    )];
    ev.push((Some("ping"), json!({"type": "ping"}).to_string()));
    let mut index = 0;
    if let Some(t) = &reply.thinking {
        ev.push(named(
            "content_block_start",
            json!({"index": index, "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for piece in split(t, reply.chunk_size) {
            ev.push(named(
                "content_block_delta",
                json!({"index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
            ));
        }
        ev.push(named("content_block_delta", json!({"index": index, "delta": {"type": "signature_delta", "signature": format!("sig_{n}")}})));
        ev.push(named("content_block_stop", json!({"index": index})));
        index += 1;
    }
    if let Some(t) = &reply.text {
        ev.push(named(
            "content_block_start",
            json!({"index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in split(t, reply.chunk_size) {
            ev.push(named(
                "content_block_delta",
                json!({"index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        ev.push(named("content_block_stop", json!({"index": index})));
        index += 1;
    }
    for (i, tc) in reply.tool_calls.iter().enumerate() {
        ev.push(named("content_block_start", json!({"index": index, "content_block": {"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": tc.name, "input": {}}})));
        for piece in split(&reply.streamed_arguments(tc), reply.chunk_size) {
            ev.push(named("content_block_delta", json!({"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        ev.push(named("content_block_stop", json!({"index": index})));
        index += 1;
    }
    let stop = if reply.cut_by_max_tokens {
        "max_tokens"
    } else if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev.push(named("message_delta", json!({"delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": usage.output}})));
    ev.push(named("message_stop", json!({})));
    ev
}

fn render_google(reply: &Reply, n: usize, usage: ScriptUsage) -> Vec<Event> {
    let chunk = |parts: Value| {
        (
            None,
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}], "responseId": format!("gresp_mock{n}")}).to_string(),
        )
    };
    let mut ev = Vec::new();
    if let Some(t) = &reply.thinking {
        for (i, piece) in split(t, reply.chunk_size).into_iter().enumerate() {
            let mut part = json!({"text": piece, "thought": true});
            if i == 0 {
                part["thoughtSignature"] = json!("c2lnbmF0dXJl");
            }
            ev.push(chunk(json!([part])));
        }
    }
    if let Some(t) = &reply.text {
        for piece in split(t, reply.chunk_size) {
            ev.push(chunk(json!([{"text": piece}])));
        }
    }
    for tc in &reply.tool_calls {
        ev.push(chunk(
            json!([{"functionCall": {"name": tc.name, "args": tc.arguments}}]),
        ));
    }
    ev.push((
        None,
        json!({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP", "index": 0}],
               "usageMetadata": {"promptTokenCount": usage.input + usage.cache_read, "candidatesTokenCount": usage.output,
                                 "cachedContentTokenCount": usage.cache_read,
                                 "totalTokenCount": usage.input + usage.cache_read + usage.output},
               "responseId": format!("gresp_mock{n}")})
        .to_string(),
    ));
    ev
}

async fn write_plain(
    socket: &mut TcpStream,
    status: u16,
    extra: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reason(status),
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body.as_bytes()).await?;
    socket.shutdown().await
}

/// Writes the events as SSE, or (`binary`) as AWS event-stream messages.
async fn write_stream(
    socket: &mut TcpStream,
    reply: &Reply,
    events: &[Event],
    binary: bool,
) -> std::io::Result<()> {
    let content_type = if binary {
        "application/vnd.amazon.eventstream"
    } else {
        "text/event-stream"
    };
    socket
        .write_all(
            format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n").as_bytes(),
        )
        .await?;
    let mut sent = 0usize;
    for (i, (name, data)) in events.iter().enumerate() {
        if reply.stall_after_events == Some(i) {
            return wait_for_close(socket).await;
        }
        if i > 0
            && let Some(ms) = reply.delay_ms
        {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        let encoded = if binary {
            event_stream_message(name.unwrap_or(""), data)
        } else {
            let mut text = String::new();
            if let Some(name) = name {
                text.push_str(&format!("event: {name}\n"));
            }
            text.push_str(&format!("data: {data}\n\n"));
            text.into_bytes()
        };
        let mut bytes = encoded.as_slice();
        let mut cut = false;
        if let Some(limit) = reply.drop_after_bytes
            && sent + bytes.len() > limit
        {
            bytes = &bytes[..limit.saturating_sub(sent)];
            cut = true;
        }
        if !bytes.is_empty() {
            socket
                .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
                .await?;
            socket.write_all(bytes).await?;
            socket.write_all(b"\r\n").await?;
            socket.flush().await?;
        }
        sent += bytes.len();
        if cut {
            // Abrupt close: no terminating chunk, so the client sees a broken body.
            return socket.shutdown().await;
        }
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await
}

/// One AWS event-stream message: an event named `name`, or for `exception:<type>` an
/// exception of that type, with `data` as its JSON payload. The layout (big-endian
/// lengths, CRC-32 of the prelude and of the whole message, string headers of type 7)
/// is written from AWS's format description.
fn event_stream_message(name: &str, data: &str) -> Vec<u8> {
    let headers: Vec<(&str, &str)> = match name.strip_prefix("exception:") {
        Some(kind) => vec![
            (":message-type", "exception"),
            (":exception-type", kind),
            (":content-type", "application/json"),
        ],
        None => vec![
            (":message-type", "event"),
            (":event-type", name),
            (":content-type", "application/json"),
        ],
    };
    let mut head = Vec::new();
    for (k, v) in headers {
        head.push(k.len() as u8);
        head.extend_from_slice(k.as_bytes());
        head.push(7);
        head.extend_from_slice(&(v.len() as u16).to_be_bytes());
        head.extend_from_slice(v.as_bytes());
    }
    let total = 12 + head.len() + data.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(data.as_bytes());
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Stays silent until the client closes the connection (or the server stops).
async fn wait_for_close(socket: &mut TcpStream) -> std::io::Result<()> {
    let mut sink = [0u8; 1024];
    while socket.read(&mut sink).await? > 0 {}
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Error",
    }
}
