//! Google Generative AI (`google-generative-ai`, Gemini API).
//!
//! POSTs to `{baseUrl}/models/{id}:streamGenerateContent?alt=sse` with the key in
//! `x-goog-api-key`. History becomes `contents` with `user` / `model` roles; parts marked
//! `thought: true` are thinking, and `thoughtSignature`s are sent back only to the same
//! model and only when they are valid base64. Function calls arrive whole (ids are
//! synthesised when the API omits them); thinking is configured per level with a budget
//! (Gemini 2.5) or a `thinkingLevel` (Gemini 3, Gemma 4).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::output::Output;
use super::preview;
use super::wire::{HttpRequest, SseDecoder};
use super::{StreamOptions, clamp_thinking_level};
use crate::ai::message::{AssistantBlock, Context, Message, StopReason, UserBlock, UserContent};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::sse::SseEvent;
use crate::ai::transform::{sanitize_tool_call_id, transform_messages};

static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Models behind Google's API that need explicit tool-call ids.
fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

fn is_gemini3_pro(id: &str) -> bool {
    gemini3_kind(id) == Some("pro")
}

fn is_gemini3_flash(id: &str) -> bool {
    gemini3_kind(id) == Some("flash")
}

/// `gemini-3-pro…`, `gemini-3.1-flash…` → "pro" / "flash".
fn gemini3_kind(id: &str) -> Option<&'static str> {
    let id = id.to_ascii_lowercase();
    let rest = id.split("gemini-3").nth(1)?;
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if rest.starts_with("-pro") {
        Some("pro")
    } else if rest.starts_with("-flash") {
        Some("flash")
    } else {
        None
    }
}

fn is_gemma4(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    id.contains("gemma-4") || id.contains("gemma4")
}

fn thinking_level_name(model: &Model, level: ThinkingLevel) -> &'static str {
    if is_gemini3_pro(&model.id) {
        return match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "LOW",
            _ => "HIGH",
        };
    }
    if is_gemma4(&model.id) {
        return match level {
            ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "MINIMAL",
            _ => "HIGH",
        };
    }
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => "MINIMAL",
        ThinkingLevel::Low => "LOW",
        ThinkingLevel::Medium => "MEDIUM",
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => "HIGH",
    }
}

/// pi's per-model default budgets (-1 = dynamic) unless the user set budgets. Vertex
/// has no separate Flash-Lite table (`vertex`).
fn thinking_budget(
    model: &Model,
    level: ThinkingLevel,
    options: &StreamOptions,
    vertex: bool,
) -> i64 {
    if options.thinking_budgets != super::ThinkingBudgets::default() {
        return options
            .thinking_budgets
            .for_level(level)
            .map_or(-1, |b| b as i64);
    }
    let table: Option<[i64; 4]> = if model.id.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if !vertex && model.id.contains("2.5-flash-lite") {
        Some([512, 2048, 8192, 24576])
    } else if model.id.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    let Some(t) = table else {
        return -1;
    };
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => t[0],
        ThinkingLevel::Low => t[1],
        ThinkingLevel::Medium => t[2],
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => t[3],
    }
}

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let mut headers = Vec::new();
    if let Some(key) = &options.api_key {
        headers.push(("x-goog-api-key".to_string(), key.expose().to_string()));
    }
    Ok(HttpRequest {
        url: format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            model.base_url.trim_end_matches('/'),
            model.id
        ),
        headers,
        body: build_body(model, context, options),
    })
}

/// The JSON body (public for tests).
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    build_body_for(model, context, options, false)
}

/// The body for the Gemini API or (`vertex`) for Vertex AI, whose thinking rules know
/// neither Gemma 4 nor the Flash-Lite budgets.
pub(crate) fn build_body_for(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    vertex: bool,
) -> Value {
    let gemma4 = !vertex && is_gemma4(&model.id);
    let mut p = Map::new();
    p.insert(
        "contents".into(),
        Value::Array(convert_messages(model, context)),
    );
    if let Some(system) = &context.system_prompt {
        p.insert(
            "systemInstruction".into(),
            json!({"role": "user", "parts": [{"text": system}]}),
        );
    }
    let mut generation = Map::new();
    if let Some(t) = options.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    let max_tokens = options.effective_max_tokens(model, context);
    if max_tokens > 0 {
        generation.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    if model.reasoning {
        let level = clamp_thinking_level(model, options.thinking);
        let config = if level != ThinkingLevel::Off {
            if is_gemini3_pro(&model.id) || is_gemini3_flash(&model.id) || gemma4 {
                json!({"includeThoughts": true, "thinkingLevel": thinking_level_name(model, level)})
            } else {
                json!({"includeThoughts": true, "thinkingBudget": thinking_budget(model, level, options, vertex)})
            }
        } else if is_gemini3_pro(&model.id) {
            // Gemini 3 Pro cannot switch thinking off; use the lowest level, hidden.
            json!({"thinkingLevel": "LOW"})
        } else if is_gemini3_flash(&model.id) || gemma4 {
            json!({"thinkingLevel": "MINIMAL"})
        } else {
            json!({"thinkingBudget": 0})
        };
        generation.insert("thinkingConfig".into(), config);
    }
    if !generation.is_empty() {
        p.insert("generationConfig".into(), Value::Object(generation));
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parametersJsonSchema": t.parameters,
                })
            })
            .collect();
        p.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    Value::Object(p)
}

/// Thought signatures are bytes; anything that is not base64 would be rejected.
fn valid_signature(sig: Option<&str>) -> Option<&str> {
    let s = sig?;
    let ok = !s.is_empty()
        && s.len() % 4 == 0
        && s.trim_end_matches('=').len() + 2 >= s.len()
        && s.trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    ok.then_some(s)
}

fn inline_data(b: &UserBlock) -> Value {
    match b {
        UserBlock::Text(t) => json!({"text": t.text}),
        UserBlock::Image(img) => {
            json!({"inlineData": {"mimeType": img.mime_type, "data": img.data}})
        }
    }
}

fn gemini_major(id: &str) -> Option<u32> {
    let id = id.to_ascii_lowercase();
    let rest = id
        .strip_prefix("gemini-live-")
        .or_else(|| id.strip_prefix("gemini-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// pi's `convertMessages` for Gemini.
pub fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let needs_ids = requires_tool_call_id(&model.id);
    let messages = transform_messages(&context.messages, model, &|id, _| {
        if needs_ids {
            sanitize_tool_call_id(id, 64)
        } else {
            id.to_string()
        }
    });
    let mut contents: Vec<Value> = Vec::new();
    for msg in &messages {
        match msg {
            Message::User(u) => {
                let parts: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"text": s})],
                    UserContent::Blocks(b) => b.iter().map(inline_data).collect(),
                };
                if !parts.is_empty() {
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
            Message::Assistant(a) => {
                let same = a.provider == model.provider && a.model == model.id;
                let sig = |s: Option<&str>| {
                    if same {
                        valid_signature(s).map(str::to_string)
                    } else {
                        None
                    }
                };
                let mut parts = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if t.text.trim().is_empty() {
                                continue;
                            }
                            let mut part = json!({"text": t.text});
                            if let Some(s) = sig(t.text_signature.as_deref()) {
                                part["thoughtSignature"] = json!(s);
                            }
                            parts.push(part);
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.thinking.trim().is_empty() {
                                continue;
                            }
                            if same {
                                let mut part = json!({"thought": true, "text": t.thinking});
                                if let Some(s) = sig(t.thinking_signature.as_deref()) {
                                    part["thoughtSignature"] = json!(s);
                                }
                                parts.push(part);
                            } else {
                                parts.push(json!({"text": t.thinking}));
                            }
                        }
                        AssistantBlock::ToolCall(tc) => {
                            let args = if tc.arguments.is_null() {
                                json!({})
                            } else {
                                tc.arguments.clone()
                            };
                            let mut call = json!({"name": tc.name, "args": args});
                            if needs_ids {
                                call["id"] = json!(tc.id);
                            }
                            let mut part = json!({"functionCall": call});
                            if let Some(s) = sig(tc.thought_signature.as_deref()) {
                                part["thoughtSignature"] = json!(s);
                            }
                            parts.push(part);
                        }
                    }
                }
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::ToolResult(r) => {
                let text = r.text();
                let images: Vec<Value> = if model.supports_images() {
                    r.content
                        .iter()
                        .filter(|b| matches!(b, UserBlock::Image(_)))
                        .map(inline_data)
                        .collect()
                } else {
                    Vec::new()
                };
                let value = if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_string()
                } else {
                    String::new()
                };
                let multimodal = gemini_major(&model.id).is_none_or(|v| v >= 3);
                let mut response = Map::new();
                response.insert("name".into(), json!(r.tool_name));
                response.insert(
                    "response".into(),
                    if r.is_error {
                        json!({"error": value})
                    } else {
                        json!({"output": value})
                    },
                );
                if !images.is_empty() && multimodal {
                    response.insert("parts".into(), Value::Array(images.clone()));
                }
                if needs_ids {
                    response.insert("id".into(), json!(r.tool_call_id));
                }
                let part = json!({"functionResponse": response});
                // All function responses of one turn go into a single user content.
                match contents.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["parts"].as_array().is_some_and(|p| {
                                p.iter().any(|x| x.get("functionResponse").is_some())
                            }) =>
                    {
                        if let Some(parts) = last["parts"].as_array_mut() {
                            parts.push(part);
                        }
                    }
                    _ => contents.push(json!({"role": "user", "parts": [part]})),
                }
                if !images.is_empty() && !multimodal {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    contents.push(json!({"role": "user", "parts": parts}));
                }
            }
        }
    }
    contents
}

/// An HTTP error: the status and Google's error message.
pub fn error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("{status} status code (no body)");
    }
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let parsed = parsed.as_ref().map(|v| match v {
        // Errors on the streaming endpoint may come wrapped in an array.
        Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
        other => other.clone(),
    });
    match parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(Value::as_str)
    {
        Some(msg) => format!("{status} {msg}"),
        None => format!("{status} {body}"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Current {
    Text(usize),
    Thinking(usize),
}

/// Streaming state for one Gemini response.
#[derive(Debug, Default)]
pub struct Decoder {
    current: Option<Current>,
    saw_finish: bool,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn close_current(&mut self, out: &mut Output) {
        match self.current.take() {
            Some(Current::Text(i)) => out.end_text(i),
            Some(Current::Thinking(i)) => out.end_thinking(i),
            None => {}
        }
    }
}

fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "Could not parse a Gemini stream event ({e}): {}",
                preview(data)
            )
        })?;
        if let Some(err) = chunk.get("error") {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(msg.to_string());
        }
        if out.message.response_id.is_none()
            && let Some(id) = chunk.get("responseId").and_then(Value::as_str)
        {
            out.message.response_id = Some(id.to_string());
        }
        let candidate = chunk.pointer("/candidates/0");
        if let Some(parts) = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array)
        {
            for part in parts {
                let signature = part
                    .get("thoughtSignature")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    let thinking = part.get("thought").and_then(Value::as_bool) == Some(true);
                    let idx = match (self.current, thinking) {
                        (Some(Current::Thinking(i)), true) | (Some(Current::Text(i)), false) => i,
                        _ => {
                            self.close_current(out);
                            if thinking {
                                let i = out.start_thinking(None);
                                self.current = Some(Current::Thinking(i));
                                i
                            } else {
                                let i = out.start_text();
                                self.current = Some(Current::Text(i));
                                i
                            }
                        }
                    };
                    if thinking {
                        out.thinking_delta(idx, text);
                        if let (Some(s), Some(t)) = (signature, out.thinking_mut(idx)) {
                            t.thinking_signature = Some(s.to_string());
                        }
                    } else {
                        out.text_delta(idx, text);
                        if let (Some(s), Some(t)) = (signature, out.text_mut(idx)) {
                            t.text_signature = Some(s.to_string());
                        }
                    }
                }
                if let Some(call) = part.get("functionCall") {
                    self.close_current(out);
                    let name = call.get("name").and_then(Value::as_str).unwrap_or("");
                    let provided = call
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty());
                    let duplicate =
                        provided.is_some_and(|id| out.message.tool_calls().any(|tc| tc.id == id));
                    let id = match provided {
                        Some(id) if !duplicate => id.to_string(),
                        _ => format!(
                            "{name}_{}_{}",
                            crate::ai::message::now_ms(),
                            TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1
                        ),
                    };
                    let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
                    let idx = out.start_tool_call(&id, name);
                    if let (Some(s), Some(tc)) = (signature, out.tool_call_mut(idx)) {
                        tc.thought_signature = Some(s.to_string());
                    }
                    out.tool_call_delta(idx, &args.to_string());
                    out.end_tool_call(idx, Some(args));
                }
            }
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .and_then(Value::as_str)
        {
            self.saw_finish = true;
            out.message.stop_reason = map_finish_reason(reason);
            if out.message.tool_calls().next().is_some() {
                out.message.stop_reason = StopReason::ToolUse;
            }
        }
        if let Some(u) = chunk.get("usageMetadata") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let cached = n("cachedContentTokenCount");
            out.set_usage_with_total(
                n("promptTokenCount").saturating_sub(cached),
                n("candidatesTokenCount") + n("thoughtsTokenCount"),
                cached,
                0,
                n("totalTokenCount"),
            );
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        self.close_current(out);
        if !self.saw_finish {
            return Err("The response ended before a finishReason was received".into());
        }
        if out.message.stop_reason == StopReason::Error {
            return Err("An unknown error occurred".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
