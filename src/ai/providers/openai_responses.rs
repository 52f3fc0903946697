//! OpenAI Responses (`openai-responses`).
//!
//! History becomes input items: user messages, assistant `message` items whose ids are
//! kept in the text signature, `reasoning` items replayed verbatim from the thinking
//! signature (with `include: ["reasoning.encrypted_content"]` so they can be), and
//! `function_call` / `function_call_output` pairs. Tool-call ids are `call_id|item_id`.
//! The decoder turns reasoning summaries into thinking, output text into text, function
//! call arguments into tool calls, and reads usage from `response.completed`.

use serde_json::{Map, Value, json};

use super::output::Output;
use super::preview;
use super::wire::{HttpRequest, SseDecoder};
use super::{CacheRetention, StreamOptions, clamp_thinking_level, compat_bool, mapped_level};
use crate::ai::message::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, UserBlock, UserContent,
};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::sse::SseEvent;
use crate::ai::transform::{short_hash, transform_messages};

/// Providers whose `call|item` tool-call ids can be replayed as they are.
const OPENAI_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let mut headers = Vec::new();
    if let Some(key) = &options.api_key {
        headers.push((
            "authorization".to_string(),
            format!("Bearer {}", key.expose()),
        ));
    }
    if options.cache_retention != CacheRetention::None
        && let Some(session) = &options.session_id
    {
        if compat_bool(model, "sendSessionIdHeader").unwrap_or(true) {
            headers.push(("session_id".to_string(), session.clone()));
        }
        headers.push(("x-client-request-id".to_string(), session.clone()));
    }
    Ok(HttpRequest {
        url: format!("{}/responses", model.base_url.trim_end_matches('/')),
        headers,
        body: build_body(model, context, options),
    })
}

/// The JSON body (public for tests).
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert(
        "input".into(),
        Value::Array(convert_messages(model, context)),
    );
    p.insert("stream".into(), json!(true));
    if options.cache_retention != CacheRetention::None
        && super::compat_str(model, "promptCacheKeyMode") != Some("disabled")
        && let Some(session) = &options.session_id
    {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    if options.cache_retention == CacheRetention::Long
        && compat_bool(model, "supportsLongCacheRetention").unwrap_or(true)
    {
        p.insert("prompt_cache_retention".into(), json!("24h"));
    }
    p.insert("store".into(), json!(false));
    insert_generation_options(
        &mut p,
        model,
        context,
        options,
        model.provider != "github-copilot",
    );
    super::apply_sampling_params(&mut p, model, options.thinking);
    Value::Object(p)
}

/// The output limit, temperature, tools and reasoning of a Responses API body (shared with
/// Azure). `reasoning_when_off`: whether "thinking off" is sent as the model's off effort
/// (`none` unless its thinking map says otherwise); pi leaves it out for Copilot.
pub(crate) fn insert_generation_options(
    p: &mut Map<String, Value>,
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    reasoning_when_off: bool,
) {
    let max_tokens = options.effective_max_tokens(model, context);
    if max_tokens > 0 {
        p.insert("max_output_tokens".into(), json!(max_tokens));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        p.insert("tools".into(), tools_json(context, &json!(false)));
    }
    if model.reasoning {
        let level = clamp_thinking_level(model, options.thinking);
        if level != ThinkingLevel::Off {
            let effort = mapped_level(model, level).unwrap_or_else(|| level.as_str().to_string());
            p.insert(
                "reasoning".into(),
                json!({"effort": effort, "summary": "auto"}),
            );
            p.insert("include".into(), json!(["reasoning.encrypted_content"]));
        } else if reasoning_when_off {
            match model.thinking_level_map.as_ref().and_then(|m| m.get("off")) {
                Some(None) => {}
                Some(Some(v)) => {
                    p.insert("reasoning".into(), json!({"effort": v}));
                }
                None => {
                    p.insert("reasoning".into(), json!({"effort": "none"}));
                }
            }
        }
    }
}

/// The tools as function definitions, with `strict` as given (`false`, or `null` for
/// the Codex backend).
pub(crate) fn tools_json(context: &Context, strict: &Value) -> Value {
    let tools: Vec<Value> = context
        .tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": strict,
            })
        })
        .collect();
    Value::Array(tools)
}

fn normalize_part(part: &str) -> String {
    let s: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    s.trim_end_matches('_').to_string()
}

fn normalize_tool_call_id(
    model: &Model,
    providers: &[&str],
    id: &str,
    source: &AssistantMessage,
) -> String {
    if !providers.contains(&model.provider.as_str()) {
        return normalize_part(id);
    }
    let Some((call_id, item_id)) = id.split_once('|') else {
        return normalize_part(id);
    };
    let item_id = item_id.split('|').next().unwrap_or("");
    let foreign = source.provider != model.provider || source.api != model.api.as_str();
    let mut item = if foreign {
        format!("fc_{}", short_hash(item_id))
            .chars()
            .take(64)
            .collect()
    } else {
        normalize_part(item_id)
    };
    // The API requires function call item ids to start with "fc".
    if !item.starts_with("fc_") {
        item = normalize_part(&format!("fc_{item}"));
    }
    format!("{}|{item}", normalize_part(call_id))
}

/// The message id and phase kept in a text block's signature.
fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
    let sig = signature?;
    if sig.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(sig)
        && v.get("v").and_then(Value::as_u64) == Some(1)
        && let Some(id) = v.get("id").and_then(Value::as_str)
    {
        let phase = v
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| matches!(*p, "commentary" | "final_answer"))
            .map(str::to_string);
        return Some((id.to_string(), phase));
    }
    Some((sig.to_string(), None))
}

fn user_part(b: &UserBlock) -> Value {
    match b {
        UserBlock::Text(t) => json!({"type": "input_text", "text": t.text}),
        UserBlock::Image(img) => json!({
            "type": "input_image",
            "detail": "auto",
            "image_url": format!("data:{};base64,{}", img.mime_type, img.data),
        }),
    }
}

/// pi's `convertResponsesMessages` for OpenAI itself.
pub fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    convert_messages_with(model, context, OPENAI_TOOL_CALL_PROVIDERS, true)
}

/// pi's `convertResponsesMessages`: `providers` are those whose `call|item` tool-call
/// ids are kept; `include_system` puts the system prompt first as a system/developer item.
pub(crate) fn convert_messages_with(
    model: &Model,
    context: &Context,
    providers: &[&str],
    include_system: bool,
) -> Vec<Value> {
    let messages = transform_messages(&context.messages, model, &|id, source| {
        normalize_tool_call_id(model, providers, id, source)
    });
    let mut out = Vec::new();
    if include_system && let Some(system) = &context.system_prompt {
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": system}));
    }
    for (msg_index, msg) in messages.iter().enumerate() {
        match msg {
            Message::User(u) => {
                let content: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"type": "input_text", "text": s})],
                    UserContent::Blocks(b) => b.iter().map(user_part).collect(),
                };
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(a) => {
                let different_model = a.model != model.id
                    && a.provider == model.provider
                    && a.api == model.api.as_str();
                for block in &a.content {
                    match block {
                        AssistantBlock::Thinking(t) => {
                            if let Some(item) = t
                                .thinking_signature
                                .as_deref()
                                .and_then(|s| serde_json::from_str::<Value>(s).ok())
                            {
                                out.push(item);
                            }
                        }
                        AssistantBlock::Text(t) => {
                            let parsed = parse_text_signature(t.text_signature.as_deref());
                            let id = match &parsed {
                                None => format!("msg_{msg_index}"),
                                Some((id, _)) if id.chars().count() > 64 => {
                                    format!("msg_{}", short_hash(id))
                                }
                                Some((id, _)) => id.clone(),
                            };
                            let mut item = json!({
                                "type": "message",
                                "role": "assistant",
                                "content": [{"type": "output_text", "text": t.text, "annotations": []}],
                                "status": "completed",
                                "id": id,
                            });
                            if let Some((_, Some(phase))) = parsed {
                                item["phase"] = json!(phase);
                            }
                            out.push(item);
                        }
                        AssistantBlock::ToolCall(tc) => {
                            let mut parts = tc.id.split('|');
                            let call_id = parts.next().unwrap_or("");
                            let mut item_id = parts.next();
                            // Pairing checks against reasoning items of another model fail.
                            if different_model && item_id.is_some_and(|i| i.starts_with("fc_")) {
                                item_id = None;
                            }
                            let mut item = Map::new();
                            item.insert("type".into(), json!("function_call"));
                            if let Some(id) = item_id {
                                item.insert("id".into(), json!(id));
                            }
                            item.insert("call_id".into(), json!(call_id));
                            item.insert("name".into(), json!(tc.name));
                            item.insert("arguments".into(), json!(tc.arguments.to_string()));
                            out.push(Value::Object(item));
                        }
                    }
                }
            }
            Message::ToolResult(r) => {
                let text = r.text();
                let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
                let call_id = r.tool_call_id.split('|').next().unwrap_or("");
                let output = if has_images && model.supports_images() {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    parts.extend(
                        r.content
                            .iter()
                            .filter(|b| matches!(b, UserBlock::Image(_)))
                            .map(user_part),
                    );
                    Value::Array(parts)
                } else if text.is_empty() {
                    json!("(see attached image)")
                } else {
                    json!(text)
                };
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
        }
    }
    out
}

/// What the current output item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    Reasoning(usize),
    Message(usize),
    FunctionCall(usize),
}

/// Streaming state for one Responses stream.
#[derive(Debug, Default)]
pub struct Decoder {
    current: Option<Current>,
    /// Summary parts of the current reasoning item (rebuilt into its signature).
    summary_parts: usize,
    /// Text parts of the current message item.
    message_parts: usize,
    completed: bool,
    /// The ChatGPT (Codex) backend's variant: its own error texts, unknown statuses ignored.
    codex: bool,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for `openai-codex-responses` streams.
    pub fn codex() -> Self {
        Self {
            codex: true,
            ..Self::default()
        }
    }
}

/// Statuses the Codex backend may report; others are ignored there.
const CODEX_STATUSES: &[&str] = &[
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "queued",
    "in_progress",
];

fn map_status(status: Option<&str>) -> Result<StopReason, String> {
    Ok(match status {
        None | Some("completed" | "in_progress" | "queued") => StopReason::Stop,
        Some("incomplete") => StopReason::Length,
        Some("failed" | "cancelled") => StopReason::Error,
        Some(other) => return Err(format!("Unhandled stop reason: {other}")),
    })
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let ev: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "Could not parse a Responses stream event ({e}): {}",
                preview(data)
            )
        })?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let kind = ev
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event);
        match kind {
            "response.created" => {
                if let Some(id) = ev.pointer("/response/id").and_then(Value::as_str) {
                    out.message.response_id = Some(id.to_string());
                }
            }
            "response.output_item.added" => {
                let item = &ev["item"];
                self.current = match item.get("type").and_then(Value::as_str) {
                    Some("reasoning") => {
                        self.summary_parts = 0;
                        Some(Current::Reasoning(out.start_thinking(None)))
                    }
                    Some("message") => {
                        self.message_parts = 0;
                        Some(Current::Message(out.start_text()))
                    }
                    Some("function_call") => {
                        let id = format!("{}|{}", s(item, "call_id"), s(item, "id"));
                        let idx = out.start_tool_call(&id, &s(item, "name"));
                        let initial = s(item, "arguments");
                        if !initial.is_empty() {
                            out.set_tool_call_args(idx, &initial);
                        }
                        Some(Current::FunctionCall(idx))
                    }
                    _ => self.current,
                };
            }
            "response.reasoning_summary_part.added" => {
                if let Some(Current::Reasoning(_)) = self.current {
                    self.summary_parts += 1;
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(Current::Reasoning(idx)) = self.current
                    && self.summary_parts > 0
                {
                    out.thinking_delta(idx, &s(&ev, "delta"));
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(Current::Reasoning(idx)) = self.current
                    && self.summary_parts > 0
                {
                    out.thinking_delta(idx, "\n\n");
                }
            }
            "response.reasoning_text.delta" => {
                if let Some(Current::Reasoning(idx)) = self.current {
                    out.thinking_delta(idx, &s(&ev, "delta"));
                }
            }
            "response.content_part.added" => {
                if let Some(Current::Message(_)) = self.current
                    && matches!(
                        ev.pointer("/part/type").and_then(Value::as_str),
                        Some("output_text" | "refusal")
                    )
                {
                    self.message_parts += 1;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(Current::Message(idx)) = self.current
                    && self.message_parts > 0
                {
                    out.text_delta(idx, &s(&ev, "delta"));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(Current::FunctionCall(idx)) = self.current {
                    out.tool_call_delta(idx, &s(&ev, "delta"));
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(Current::FunctionCall(idx)) = self.current {
                    let full = s(&ev, "arguments");
                    let previous = out.tool_call_args(idx).to_string();
                    if let Some(rest) = full.strip_prefix(previous.as_str()) {
                        if !rest.is_empty() {
                            out.tool_call_delta(idx, rest);
                        }
                    } else {
                        out.set_tool_call_args(idx, &full);
                    }
                }
            }
            "response.output_item.done" => {
                let item = &ev["item"];
                match (item.get("type").and_then(Value::as_str), self.current) {
                    (Some("reasoning"), Some(Current::Reasoning(idx))) => {
                        let join = |key: &str| -> String {
                            item.get(key)
                                .and_then(Value::as_array)
                                .map(|parts| {
                                    parts
                                        .iter()
                                        .map(|p| {
                                            p.get("text").and_then(Value::as_str).unwrap_or("")
                                        })
                                        .collect::<Vec<_>>()
                                        .join("\n\n")
                                })
                                .unwrap_or_default()
                        };
                        let summary = join("summary");
                        let content = join("content");
                        if let Some(t) = out.thinking_mut(idx) {
                            if !summary.is_empty() {
                                t.thinking = summary;
                            } else if !content.is_empty() {
                                t.thinking = content;
                            }
                            t.thinking_signature = Some(item.to_string());
                        }
                        out.end_thinking(idx);
                        self.current = None;
                    }
                    (Some("message"), Some(Current::Message(idx))) => {
                        let text: String = item
                            .get("content")
                            .and_then(Value::as_array)
                            .map(|parts| {
                                parts
                                    .iter()
                                    .map(|p| {
                                        let key = if p["type"] == "output_text" {
                                            "text"
                                        } else {
                                            "refusal"
                                        };
                                        p.get(key).and_then(Value::as_str).unwrap_or("")
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        let mut sig = json!({"v": 1, "id": s(item, "id")});
                        if let Some(phase) = item.get("phase").and_then(Value::as_str) {
                            sig["phase"] = json!(phase);
                        }
                        if let Some(t) = out.text_mut(idx) {
                            t.text = text;
                            t.text_signature = Some(sig.to_string());
                        }
                        out.end_text(idx);
                        self.current = None;
                    }
                    (Some("function_call"), current) => {
                        let idx = match current {
                            Some(Current::FunctionCall(idx)) => idx,
                            _ => {
                                let id = format!("{}|{}", s(item, "call_id"), s(item, "id"));
                                out.start_tool_call(&id, &s(item, "name"))
                            }
                        };
                        if out.tool_call_args(idx).is_empty() {
                            let args = item
                                .get("arguments")
                                .and_then(Value::as_str)
                                .unwrap_or("{}");
                            out.set_tool_call_args(idx, args);
                        }
                        out.end_tool_call(idx, None);
                        self.current = None;
                    }
                    _ => {}
                }
            }
            "response.completed" | "response.done" | "response.incomplete" => {
                self.completed = true;
                let response = &ev["response"];
                if let Some(id) = response.get("id").and_then(Value::as_str) {
                    out.message.response_id = Some(id.to_string());
                }
                if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
                    let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                    let cached = n("/input_tokens_details/cached_tokens");
                    out.set_usage_with_total(
                        n("/input_tokens").saturating_sub(cached),
                        n("/output_tokens"),
                        cached,
                        0,
                        n("/total_tokens"),
                    );
                }
                let status = response
                    .get("status")
                    .and_then(Value::as_str)
                    .filter(|s| !self.codex || CODEX_STATUSES.contains(s));
                out.message.stop_reason = map_status(status)?;
                if out.message.stop_reason == StopReason::Stop
                    && out.message.tool_calls().next().is_some()
                {
                    out.message.stop_reason = StopReason::ToolUse;
                }
            }
            "error" if self.codex => {
                let text = [s(&ev, "message"), s(&ev, "code")]
                    .into_iter()
                    .find(|t| !t.is_empty())
                    .unwrap_or_else(|| ev.to_string());
                return Err(format!("Codex error: {text}"));
            }
            "response.failed" if self.codex => {
                let message = ev
                    .pointer("/response/error/message")
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty())
                    .unwrap_or("Codex response failed");
                return Err(message.to_string());
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    s(&ev, "code"),
                    s(&ev, "message")
                ));
            }
            "response.failed" => {
                let response = &ev["response"];
                let msg = if let Some(err) = response.get("error").filter(|e| !e.is_null()) {
                    let code = err.get("code").and_then(Value::as_str).unwrap_or("unknown");
                    let message = err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message");
                    format!("{code}: {message}")
                } else if let Some(reason) = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str)
                {
                    format!("incomplete: {reason}")
                } else {
                    "Unknown error (no error details in response)".to_string()
                };
                return Err(msg);
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        if !self.completed {
            return Err("The response ended before response.completed".into());
        }
        if out.message.stop_reason == StopReason::Error {
            return Err("An unknown error occurred".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
