//! Mistral chat (`mistral-conversations`), as pi sends it through Mistral's SDK.
//!
//! The wire format is Mistral's `POST {baseUrl}/v1/chat/completions` with snake_case
//! fields: assistant thinking goes back as `{"type": "thinking", "thinking": [text]}`
//! content chunks, tool-call ids are 9 alphanumeric characters (others are hashed down,
//! collisions resolved), tool results carry the tool name and a `[tool error]` prefix.
//! Reasoning is `prompt_mode: "reasoning"` (Magistral) or `reasoning_effort` for the
//! models that take one; the session id goes in `x-affinity` for KV-cache reuse. The
//! stream is OpenAI-like SSE whose `delta.content` is a string or a list of text and
//! thinking chunks.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};

use super::output::Output;
use super::preview;
use super::wire::{HttpRequest, SseDecoder};
use super::{StreamOptions, clamp_thinking_level, mapped_level};
use crate::ai::message::{
    AssistantBlock, Context, Message, StopReason, ToolResultMessage, UserBlock, UserContent,
};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::sse::SseEvent;
use crate::ai::transform::{short_hash, transform_messages};

/// Mistral accepts only tool-call ids of exactly this many `[a-zA-Z0-9]` characters.
const TOOL_CALL_ID_LENGTH: usize = 9;
/// Error bodies longer than this are cut in messages.
const MAX_ERROR_BODY_CHARS: usize = 4000;

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let Some(key) = &options.api_key else {
        return Err(format!("No API key for provider: {}", model.provider));
    };
    let mut headers = vec![
        ("accept".to_string(), "text/event-stream".to_string()),
        (
            "authorization".to_string(),
            format!("Bearer {}", key.expose()),
        ),
    ];
    let explicit_affinity = model
        .headers
        .keys()
        .chain(options.headers.keys())
        .any(|k| k.eq_ignore_ascii_case("x-affinity"));
    if let Some(session) = &options.session_id
        && !explicit_affinity
    {
        headers.push(("x-affinity".to_string(), session.clone()));
    }
    Ok(HttpRequest {
        url: format!(
            "{}/v1/chat/completions",
            model.base_url.trim_end_matches('/')
        ),
        headers,
        body: build_body(model, context, options),
    })
}

/// Models that take `reasoning_effort` instead of `prompt_mode`.
fn uses_reasoning_effort(model: &Model) -> bool {
    matches!(
        model.id.as_str(),
        "mistral-small-2603" | "mistral-small-latest" | "mistral-medium-3.5"
    )
}

/// The JSON body (public for tests).
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let normalizer = IdNormalizer::default();
    let messages = transform_messages(&context.messages, model, &|id, _| normalizer.normalize(id));
    let mut chat = Vec::new();
    if let Some(system) = &context.system_prompt {
        chat.push(json!({"role": "system", "content": system}));
    }
    chat.extend(convert_messages(&messages, model.supports_images()));
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("stream".into(), json!(true));
    p.insert("messages".into(), Value::Array(chat));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": false,
                }})
            })
            .collect();
        p.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    let max_tokens = options.effective_max_tokens(model, context);
    if max_tokens > 0 {
        p.insert("max_tokens".into(), json!(max_tokens));
    }
    let level = clamp_thinking_level(model, options.thinking);
    if model.reasoning && level != ThinkingLevel::Off {
        if uses_reasoning_effort(model) {
            let effort = mapped_level(model, level).unwrap_or_else(|| "high".to_string());
            p.insert("reasoning_effort".into(), json!(effort));
        } else {
            p.insert("prompt_mode".into(), json!("reasoning"));
        }
    }
    Value::Object(p)
}

/// pi's per-request id normaliser: ids become 9 alphanumeric characters, and two
/// different ids never map to the same one.
#[derive(Default)]
struct IdNormalizer {
    ids: RefCell<HashMap<String, String>>,
    owners: RefCell<BTreeMap<String, String>>,
}

impl IdNormalizer {
    fn normalize(&self, id: &str) -> String {
        if let Some(existing) = self.ids.borrow().get(id) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            let free = self
                .owners
                .borrow()
                .get(&candidate)
                .is_none_or(|owner| owner == id);
            if free {
                self.ids.borrow_mut().insert(id.into(), candidate.clone());
                self.owners
                    .borrow_mut()
                    .insert(candidate.clone(), id.into());
                return candidate;
            }
            attempt += 1;
        }
    }
}

/// A 9-character id for `id`: itself when it already is one, else a hash.
fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        base.to_string()
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

fn image_part(mime_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": format!("data:{mime_type};base64,{data}")})
}

/// pi's `toChatMessages`.
fn convert_messages(messages: &[Message], images: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for msg in messages {
        match msg {
            Message::User(u) => match &u.content {
                UserContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                UserContent::Blocks(blocks) => {
                    let had_images = blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            UserBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
                            UserBlock::Image(img) if images => {
                                Some(image_part(&img.mime_type, &img.data))
                            }
                            UserBlock::Image(_) => None,
                        })
                        .collect();
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    } else if had_images && !images {
                        out.push(json!({"role": "user", "content": "(image omitted: model does not support images)"}));
                    }
                }
            },
            Message::Assistant(a) => {
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                            parts.push(json!({"type": "text", "text": t.text}));
                        }
                        AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                            parts.push(json!({
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": t.thinking}],
                            }));
                        }
                        // `index: 0` and `prefix: false` are the SDK's defaults, always sent.
                        AssistantBlock::ToolCall(tc) => calls.push(json!({
                            "id": tc.id,
                            "type": "function",
                            "function": {"name": tc.name, "arguments": arguments_text(&tc.arguments)},
                            "index": 0,
                        })),
                        _ => {}
                    }
                }
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                if !parts.is_empty() {
                    m.insert("content".into(), Value::Array(parts));
                }
                if !calls.is_empty() {
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                if m.len() > 1 {
                    m.insert("prefix".into(), json!(false));
                    out.push(Value::Object(m));
                }
            }
            Message::ToolResult(r) => out.push(tool_result(r, images)),
        }
    }
    out
}

/// `JSON.stringify(arguments || {})`.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::Null => "{}".to_string(),
        other => other.to_string(),
    }
}

fn tool_result(r: &ToolResultMessage, images: bool) -> Value {
    let text = r
        .content
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
    let mut content = vec![
        json!({"type": "text", "text": tool_result_text(&text, has_images, images, r.is_error)}),
    ];
    if images {
        content.extend(r.content.iter().filter_map(|b| match b {
            UserBlock::Image(img) => Some(image_part(&img.mime_type, &img.data)),
            UserBlock::Text(_) => None,
        }));
    }
    json!({
        "role": "tool",
        "tool_call_id": r.tool_call_id,
        "name": r.tool_name,
        "content": content,
    })
}

/// pi's `buildToolResultText`.
fn tool_result_text(text: &str, has_images: bool, images: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let body = match (has_images, images) {
        (true, true) => "(see attached image)",
        (true, false) => "(image omitted: model does not support images)",
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{body}")
}

/// Error text for a failed status, as pi formats the SDK's error.
pub fn error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("Mistral API error ({status}): API error occurred");
    }
    let count = body.chars().count();
    if count <= MAX_ERROR_BODY_CHARS {
        return format!("Mistral API error ({status}): {body}");
    }
    let head: String = body.chars().take(MAX_ERROR_BODY_CHARS).collect();
    format!(
        "Mistral API error ({status}): {head}... [truncated {} chars]",
        count - MAX_ERROR_BODY_CHARS
    )
}

/// The open text or thinking block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    Text(usize),
    Thinking(usize),
}

/// Streaming state for one Mistral stream.
#[derive(Debug, Default)]
pub struct Decoder {
    current: Option<Current>,
    /// Tool-call blocks by `id:index`, in order of appearance.
    tool_calls: Vec<(String, usize)>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn close_current(&mut self, out: &mut Output) {
        match self.current.take() {
            Some(Current::Text(idx)) => out.end_text(idx),
            Some(Current::Thinking(idx)) => out.end_thinking(idx),
            None => {}
        }
    }

    fn text(&mut self, out: &mut Output, delta: &str) {
        let idx = match self.current {
            Some(Current::Text(idx)) => idx,
            _ => {
                self.close_current(out);
                let idx = out.start_text();
                self.current = Some(Current::Text(idx));
                idx
            }
        };
        out.text_delta(idx, delta);
    }

    fn thinking(&mut self, out: &mut Output, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let idx = match self.current {
            Some(Current::Thinking(idx)) => idx,
            _ => {
                self.close_current(out);
                let idx = out.start_thinking(None);
                self.current = Some(Current::Thinking(idx));
                idx
            }
        };
        out.thinking_delta(idx, delta);
    }

    fn tool_call(&mut self, out: &mut Output, call: &Value) {
        self.close_current(out);
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if id != "null" && !id.is_empty() => id.to_string(),
            _ => derive_tool_call_id(&format!("toolcall:{index}"), 0),
        };
        let key = format!("{id}:{index}");
        let function = &call["function"];
        let idx = match self.tool_calls.iter().find(|(k, _)| *k == key) {
            Some((_, idx)) => *idx,
            None => {
                let name = function.get("name").and_then(Value::as_str).unwrap_or("");
                let idx = out.start_tool_call(&id, name);
                self.tool_calls.push((key, idx));
                idx
            }
        };
        let delta = match function.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => "{}".to_string(),
            Some(other) => other.to_string(),
        };
        out.tool_call_delta(idx, &delta);
    }
}

fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "length" | "model_length" => StopReason::Length,
        "tool_calls" => StopReason::ToolUse,
        "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "Could not parse a Mistral stream event ({e}): {}",
                preview(data)
            )
        })?;
        if out.message.response_id.is_none()
            && let Some(id) = chunk.get("id").and_then(Value::as_str)
            && !id.is_empty()
        {
            out.message.response_id = Some(id.to_string());
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let (input, output) = (n("prompt_tokens"), n("completion_tokens"));
            let total = match n("total_tokens") {
                0 => input + output,
                t => t,
            };
            out.set_usage_with_total(input, output, 0, 0, total);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            out.message.stop_reason = map_stop_reason(reason);
        }
        let delta = &choice["delta"];
        match delta.get("content") {
            Some(Value::String(s)) => self.text(out, s),
            Some(Value::Array(items)) => {
                for item in items {
                    match (item.as_str(), item.get("type").and_then(Value::as_str)) {
                        (Some(s), _) => self.text(out, s),
                        (None, Some("thinking")) => {
                            let text: String = item
                                .get("thinking")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter_map(|p| p.get("text").and_then(Value::as_str))
                                .collect();
                            self.thinking(out, &text);
                        }
                        (None, Some("text")) => {
                            let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                            self.text(out, text);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call(out, call);
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        self.close_current(out);
        for (_, idx) in std::mem::take(&mut self.tool_calls) {
            out.end_tool_call(idx, None);
        }
        if out.message.stop_reason == StopReason::Error {
            return Err("An unknown error occurred".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_ids_become_nine_alphanumerics_without_collisions() {
        assert_eq!(derive_tool_call_id("abcDEF123", 0), "abcDEF123");
        assert_eq!(derive_tool_call_id("abc-DEF-123", 0), "abcDEF123");
        let long = derive_tool_call_id("call_0123456789|fc_abc", 0);
        assert_eq!(long.len(), 9);
        assert!(long.chars().all(|c| c.is_ascii_alphanumeric()));
        let n = IdNormalizer::default();
        let a = n.normalize("abc-DEF-123");
        let b = n.normalize("abcDEF123");
        assert_eq!(a, "abcDEF123");
        assert_ne!(a, b, "a second id with the same normal form is rehashed");
        assert_eq!(n.normalize("abc-DEF-123"), a);
    }

    #[test]
    fn tool_result_text_marks_errors_and_empty_output() {
        assert_eq!(tool_result_text(" hi ", false, false, false), "hi");
        assert_eq!(
            tool_result_text("", false, false, true),
            "[tool error] (no tool output)"
        );
        assert_eq!(
            tool_result_text("x", true, false, false),
            "x\n[tool image omitted: model does not support images]"
        );
    }

    #[test]
    fn long_error_bodies_are_cut() {
        let body = "e".repeat(4005);
        let text = error_message(429, &body);
        assert!(text.starts_with("Mistral API error (429): eee"), "{text}");
        assert!(text.ends_with("... [truncated 5 chars]"), "{text}");
    }
}
