//! Anthropic Messages (`anthropic-messages`).
//!
//! Requests carry the system prompt as a text block, tools with their input schema, and
//! prompt-cache breakpoints on the system prompt, the last tool and the last user
//! message (1 h TTL for long retention). Thinking is budget-based, or adaptive with an
//! effort level for the models that use it (Opus 4.6+, Sonnet 4.6). Thinking signatures
//! and redacted thinking are sent back verbatim for the same model. OAuth tokens
//! (`sk-ant-oat…`) use bearer auth and the Claude Code identity pi sends.
//! The decoder follows `content_block_*` events by index, parses `input_json_delta`
//! fragments, and reads usage from `message_start` and `message_delta`.

use serde_json::{Map, Value, json};

use super::output::Output;
use super::preview;
use super::wire::{HttpRequest, SseDecoder};
use super::{CacheRetention, StreamOptions, clamp_thinking_level, compat_bool, mapped_level};
use crate::ai::json_partial::repair_json;
use crate::ai::message::{AssistantBlock, Context, Message, StopReason, UserBlock, UserContent};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::sse::SseEvent;
use crate::ai::transform::{sanitize_tool_call_id, transform_messages};

const CLAUDE_CODE_VERSION: &str = "2.1.75";
const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
/// Claude Code's tool names; OAuth requests must use this casing.
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map(|t| t.to_string())
        .unwrap_or_else(|| name.to_string())
}

/// Whether a token is a Claude subscription OAuth token.
pub fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

/// Opus 4.6+/Sonnet 4.6 think adaptively with an effort level instead of a budget.
pub fn supports_adaptive_thinking(model_id: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|p| model_id.contains(p))
}

fn effort_for(model: &Model, level: ThinkingLevel) -> String {
    if let Some(v) = mapped_level(model, level) {
        return v;
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::Off | ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => {
            "high"
        }
    }
    .to_string()
}

fn cache_marker(model: &Model, retention: CacheRetention) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Short => Some(json!({"type": "ephemeral"})),
        CacheRetention::Long => {
            if compat_bool(model, "supportsLongCacheRetention").unwrap_or(true) {
                Some(json!({"type": "ephemeral", "ttl": "1h"}))
            } else {
                Some(json!({"type": "ephemeral"}))
            }
        }
    }
}

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let key = options.api_key.as_ref().map(|k| k.expose()).unwrap_or("");
    let oauth = is_oauth_token(key);
    let body = build_body(model, context, options, oauth);
    let eager = compat_bool(model, "supportsEagerToolInputStreaming").unwrap_or(true);
    let mut betas: Vec<&str> = Vec::new();
    if oauth {
        betas.extend(["claude-code-20250219", "oauth-2025-04-20"]);
    }
    if !context.tools.is_empty() && !eager {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    if !supports_adaptive_thinking(&model.id) {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    let mut headers = vec![
        ("accept".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), "2023-06-01".to_string()),
        (
            "anthropic-dangerous-direct-browser-access".to_string(),
            "true".to_string(),
        ),
    ];
    if !betas.is_empty() {
        headers.push(("anthropic-beta".to_string(), betas.join(",")));
    }
    if oauth {
        headers.push(("authorization".to_string(), format!("Bearer {key}")));
        headers.push((
            "user-agent".to_string(),
            format!("claude-cli/{CLAUDE_CODE_VERSION}"),
        ));
        headers.push(("x-app".to_string(), "cli".to_string()));
    } else if !key.is_empty() {
        headers.push(("x-api-key".to_string(), key.to_string()));
    }
    Ok(HttpRequest {
        url: format!("{}/v1/messages", model.base_url.trim_end_matches('/')),
        headers,
        body,
    })
}

/// The JSON body (public for tests).
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions, oauth: bool) -> Value {
    let marker = cache_marker(model, options.cache_retention);
    let level = clamp_thinking_level(model, options.thinking);
    let thinking_on = model.reasoning && level != ThinkingLevel::Off;
    let adaptive = supports_adaptive_thinking(&model.id);
    let mut max_tokens = options.effective_max_tokens(model, context);
    let mut budget = None;
    if thinking_on && !adaptive {
        // pi's adjustMaxTokensForThinking: room for the budget plus at least 1024 tokens.
        let mut b = options.thinking_budgets.for_level(level).unwrap_or(1024);
        max_tokens = (max_tokens + b).min(model.max_tokens);
        if max_tokens <= b {
            b = max_tokens.saturating_sub(1024);
        }
        // pi 1.6 fits the total into the window again, and the budget under it.
        max_tokens = super::budget::clamp_to_context(model, context, max_tokens);
        budget = Some(b.min(max_tokens.saturating_sub(1024)));
    }
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert(
        "messages".into(),
        Value::Array(convert_messages(model, context, oauth, marker.as_ref())),
    );
    p.insert(
        "max_tokens".into(),
        json!(if max_tokens > 0 {
            max_tokens
        } else {
            model.max_tokens / 3
        }),
    );
    p.insert("stream".into(), json!(true));
    let text_block = |text: &str| {
        let mut b = json!({"type": "text", "text": text});
        if let Some(m) = &marker {
            b["cache_control"] = m.clone();
        }
        b
    };
    let mut system = Vec::new();
    if oauth {
        system.push(text_block(CLAUDE_CODE_IDENTITY));
    }
    if let Some(prompt) = &context.system_prompt {
        system.push(text_block(prompt));
    }
    if !system.is_empty() {
        p.insert("system".into(), Value::Array(system));
    }
    if let Some(t) = options.temperature
        && !thinking_on
    {
        p.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let eager = compat_bool(model, "supportsEagerToolInputStreaming").unwrap_or(true);
        let last = context.tools.len() - 1;
        let tools: Vec<Value> = context
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = Map::new();
                let name = if oauth { to_claude_code_name(&t.name) } else { t.name.clone() };
                tool.insert("name".into(), json!(name));
                tool.insert("description".into(), json!(t.description));
                if eager {
                    tool.insert("eager_input_streaming".into(), json!(true));
                }
                tool.insert(
                    "input_schema".into(),
                    json!({
                        "type": "object",
                        "properties": t.parameters.get("properties").cloned().unwrap_or_else(|| json!({})),
                        "required": t.parameters.get("required").cloned().unwrap_or_else(|| json!([])),
                    }),
                );
                if i == last
                    && let Some(m) = &marker
                {
                    tool.insert("cache_control".into(), m.clone());
                }
                Value::Object(tool)
            })
            .collect();
        p.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        if thinking_on {
            if adaptive {
                p.insert(
                    "thinking".into(),
                    json!({"type": "adaptive", "display": "summarized"}),
                );
                p.insert(
                    "output_config".into(),
                    json!({"effort": effort_for(model, level)}),
                );
            } else {
                p.insert(
                    "thinking".into(),
                    json!({"type": "enabled", "budget_tokens": budget.unwrap_or(1024), "display": "summarized"}),
                );
            }
        } else {
            p.insert("thinking".into(), json!({"type": "disabled"}));
        }
    }
    Value::Object(p)
}

fn tool_result_content(blocks: &[UserBlock]) -> Value {
    let has_images = blocks.iter().any(|b| matches!(b, UserBlock::Image(_)));
    if !has_images {
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text(t) => Some(t.text.as_str()),
                UserBlock::Image(_) => None,
            })
            .collect();
        return json!(texts.join("\n"));
    }
    let mut out: Vec<Value> = blocks.iter().map(user_block).collect();
    if !blocks.iter().any(|b| matches!(b, UserBlock::Text(_))) {
        out.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(out)
}

fn user_block(b: &UserBlock) -> Value {
    match b {
        UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
        UserBlock::Image(img) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": img.mime_type, "data": img.data},
        }),
    }
}

/// pi's `convertMessages` for the Messages API.
pub fn convert_messages(
    model: &Model,
    context: &Context,
    oauth: bool,
    marker: Option<&Value>,
) -> Vec<Value> {
    let messages = transform_messages(&context.messages, model, &|id, _| {
        sanitize_tool_call_id(id, 64)
    });
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => match &u.content {
                UserContent::Text(s) => {
                    if !s.trim().is_empty() {
                        out.push(json!({"role": "user", "content": s}));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter(|b| !matches!(b, UserBlock::Text(t) if t.text.trim().is_empty()))
                        .map(user_block)
                        .collect();
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    }
                }
            },
            Message::Assistant(a) => {
                let mut blocks = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) => {
                            if !t.text.trim().is_empty() {
                                blocks.push(json!({"type": "text", "text": t.text}));
                            }
                        }
                        AssistantBlock::Thinking(t) => {
                            if t.redacted == Some(true) {
                                blocks.push(json!({"type": "redacted_thinking", "data": t.thinking_signature.clone().unwrap_or_default()}));
                                continue;
                            }
                            if t.thinking.trim().is_empty() {
                                continue;
                            }
                            match t.thinking_signature.as_deref().filter(|s| !s.trim().is_empty()) {
                                // An unsigned block (aborted stream) would be rejected.
                                None => blocks.push(json!({"type": "text", "text": t.thinking})),
                                Some(sig) => blocks.push(json!({"type": "thinking", "thinking": t.thinking, "signature": sig})),
                            }
                        }
                        AssistantBlock::ToolCall(tc) => {
                            let name = if oauth {
                                to_claude_code_name(&tc.name)
                            } else {
                                tc.name.clone()
                            };
                            let input = if tc.arguments.is_null() {
                                json!({})
                            } else {
                                tc.arguments.clone()
                            };
                            blocks.push(json!({"type": "tool_use", "id": tc.id, "name": name, "input": input}));
                        }
                    }
                }
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": r.tool_call_id,
                        "content": tool_result_content(&r.content),
                        "is_error": r.is_error,
                    }));
                    i += 1;
                }
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    if let Some(marker) = marker
        && let Some(last) = out.last_mut()
        && last["role"] == "user"
    {
        match last.get_mut("content") {
            Some(Value::Array(blocks)) => {
                if let Some(b) = blocks.last_mut()
                    && matches!(b["type"].as_str(), Some("text" | "image" | "tool_result"))
                {
                    b["cache_control"] = marker.clone();
                }
            }
            Some(Value::String(s)) => {
                let text = std::mem::take(s);
                last["content"] = json!([{"type": "text", "text": text, "cache_control": marker}]);
            }
            _ => {}
        }
    }
    out
}

/// An HTTP error as the Anthropic SDK words it: the status and the raw error JSON, which
/// keeps the error type (`request_too_large`, `overloaded_error`) visible.
pub fn error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("{status} status code (no body)");
    }
    match serde_json::from_str::<Value>(body) {
        Ok(v) => format!("{status} {v}"),
        Err(_) => format!("{status} {body}"),
    }
}

/// Streaming state for one Messages response.
#[derive(Debug)]
pub struct Decoder {
    /// Anthropic's block index → our content index.
    blocks: Vec<(u64, usize)>,
    tool_names: Vec<String>,
    oauth_names: bool,
    saw_start: bool,
    saw_stop: bool,
}

impl Decoder {
    /// `oauth`: the request used Claude Code tool casing, which is mapped back.
    pub fn new(context: &Context, oauth: bool) -> Self {
        Self {
            blocks: Vec::new(),
            tool_names: context.tools.iter().map(|t| t.name.clone()).collect(),
            oauth_names: oauth,
            saw_start: false,
            saw_stop: false,
        }
    }

    fn block(&self, event: &Value) -> Option<usize> {
        let index = event.get("index")?.as_u64()?;
        self.blocks
            .iter()
            .find(|(k, _)| *k == index)
            .map(|(_, v)| *v)
    }

    /// Maps Claude Code tool casing back to our tool names (case-insensitive).
    fn tool_name(&self, name: &str) -> String {
        if self.oauth_names
            && let Some(t) = self
                .tool_names
                .iter()
                .find(|t| t.eq_ignore_ascii_case(name))
        {
            return t.clone();
        }
        name.to_string()
    }
}

fn map_stop_reason(reason: &str) -> Result<StopReason, String> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        "refusal" | "sensitive" => StopReason::Error,
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        if event.event == "error" {
            return Err(event.data.to_string());
        }
        if !matches!(
            event.event,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
        ) {
            return Ok(());
        }
        let data: Value = serde_json::from_str(event.data)
            .or_else(|_| serde_json::from_str(&repair_json(event.data)))
            .map_err(|e| {
                format!(
                    "Could not parse Anthropic SSE event {}: {e}; data={}",
                    event.event,
                    preview(event.data)
                )
            })?;
        let n = |v: Option<&Value>| v.and_then(Value::as_u64);
        match data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event)
        {
            "message_start" => {
                self.saw_start = true;
                let msg = &data["message"];
                if let Some(id) = msg.get("id").and_then(Value::as_str) {
                    out.message.response_id = Some(id.to_string());
                }
                let u = &msg["usage"];
                out.set_usage(
                    n(u.get("input_tokens")).unwrap_or(0),
                    n(u.get("output_tokens")).unwrap_or(0),
                    n(u.get("cache_read_input_tokens")).unwrap_or(0),
                    n(u.get("cache_creation_input_tokens")).unwrap_or(0),
                );
            }
            "content_block_start" => {
                let index = n(data.get("index")).unwrap_or(0);
                let block = &data["content_block"];
                let idx = match block.get("type").and_then(Value::as_str) {
                    Some("text") => out.start_text(),
                    Some("thinking") => out.start_thinking(Some(String::new())),
                    Some("redacted_thinking") => {
                        let sig = block.get("data").and_then(Value::as_str).unwrap_or("");
                        let idx = out.start_thinking(Some(sig.to_string()));
                        if let Some(t) = out.thinking_mut(idx) {
                            t.thinking = "[Reasoning redacted]".into();
                            t.redacted = Some(true);
                        }
                        idx
                    }
                    Some("tool_use") => {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                        let name =
                            self.tool_name(block.get("name").and_then(Value::as_str).unwrap_or(""));
                        out.start_tool_call(id, &name)
                    }
                    _ => return Ok(()),
                };
                self.blocks.push((index, idx));
            }
            "content_block_delta" => {
                let Some(idx) = self.block(&data) else {
                    return Ok(());
                };
                let delta = &data["delta"];
                let text = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => out.text_delta(idx, text("text")),
                    Some("thinking_delta") => out.thinking_delta(idx, text("thinking")),
                    Some("input_json_delta") => out.tool_call_delta(idx, text("partial_json")),
                    Some("signature_delta") => {
                        if let Some(t) = out.thinking_mut(idx) {
                            t.thinking_signature
                                .get_or_insert_with(String::new)
                                .push_str(text("signature"));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let Some(idx) = self.block(&data) else {
                    return Ok(());
                };
                if let Some(index) = n(data.get("index")) {
                    self.blocks.retain(|(k, _)| *k != index);
                }
                match out.message.content.get(idx) {
                    Some(AssistantBlock::Text(_)) => out.end_text(idx),
                    Some(AssistantBlock::Thinking(_)) => out.end_thinking(idx),
                    Some(AssistantBlock::ToolCall(_)) => out.end_tool_call(idx, None),
                    None => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    out.message.stop_reason = map_stop_reason(reason)?;
                }
                let u = &data["usage"];
                let old = out.message.usage.clone();
                out.set_usage(
                    n(u.get("input_tokens")).unwrap_or(old.input),
                    n(u.get("output_tokens")).unwrap_or(old.output),
                    n(u.get("cache_read_input_tokens")).unwrap_or(old.cache_read),
                    n(u.get("cache_creation_input_tokens")).unwrap_or(old.cache_write),
                );
            }
            "message_stop" => self.saw_stop = true,
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        if self.saw_start && !self.saw_stop {
            return Err("Anthropic stream ended before message_stop".into());
        }
        if !self.saw_start {
            return Err("Anthropic stream ended without a message_start event".into());
        }
        if out.message.stop_reason == StopReason::Error {
            return Err("An unknown error occurred".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
