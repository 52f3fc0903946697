//! OpenAI Chat Completions (`openai-completions`): OpenAI itself and the many servers
//! that copy its protocol (OpenRouter, Groq, xAI, Cerebras, DeepSeek, Mistral, Ollama,
//! llama.cpp, vLLM, LM Studio…).
//!
//! Request bodies follow pi byte for byte in meaning (tested against the bodies pi 0.73.1
//! sent in the shared corpus), including the `compat` flags that adapt them to servers
//! that deviate, with pi's provider/URL-based defaults. The response decoder handles
//! tool-call fragments keyed by `index`, reasoning in `reasoning_content` / `reasoning` /
//! `reasoning_text` (the field name becomes the thinking signature, so it is sent back
//! in the same field), encrypted `reasoning_details`, and usage in the final chunk.

use serde_json::{Map, Value, json};

use super::wire::HttpRequest;
use super::{CacheRetention, StreamOptions, clamp_thinking_level, mapped_level};
use crate::ai::message::{AssistantBlock, Context, Message, UserBlock, UserContent};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::transform::transform_messages;

/// The provider value for a reasoning level: `thinkingLevelMap`, then the older
/// `compat.reasoningEffortMap`, then the level's own name.
fn effort_value(model: &Model, level: ThinkingLevel) -> String {
    mapped_level(model, level)
        .or_else(|| {
            model
                .compat
                .as_ref()?
                .get("reasoningEffortMap")?
                .get(level.as_str())?
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| level.as_str().to_string())
}

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let compat = Compat::for_model(model);
    let body = build_body(model, context, options, &compat);
    let mut headers = Vec::new();
    if let Some(key) = &options.api_key {
        headers.push((
            "authorization".to_string(),
            format!("Bearer {}", key.expose()),
        ));
    }
    if options.cache_retention != CacheRetention::None
        && compat.send_session_affinity_headers
        && let Some(session) = &options.session_id
    {
        for name in ["session_id", "x-client-request-id", "x-session-affinity"] {
            headers.push((name.to_string(), session.clone()));
        }
    }
    Ok(HttpRequest {
        url: format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers,
        body,
    })
}

/// The JSON body (public for tests and tools that show what would be sent).
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &Compat,
) -> Value {
    let mut messages = convert_messages(model, context, compat);
    let retention = options.cache_retention;
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("messages".into(), Value::Null); // placeholder keeps pi's key order
    p.insert("stream".into(), json!(true));
    // pi 1.6's `promptCacheKeyMode`: `enabled` sends the key whenever caching is on,
    // `disabled` never, `auto` (default) to api.openai.com or with long retention.
    let key_mode = super::compat_str(model, "promptCacheKeyMode");
    let send_key = retention != CacheRetention::None
        && match key_mode {
            Some("enabled") => true,
            Some("disabled") => false,
            _ => model.base_url.contains("api.openai.com") || long,
        };
    if send_key && let Some(session) = &options.session_id {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    if long {
        p.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        p.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        p.insert("store".into(), json!(false));
    }
    let max_tokens = options.effective_max_tokens(model, context);
    if max_tokens > 0 {
        let field = if compat.use_max_tokens_field {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        p.insert(field.into(), json!(max_tokens));
    }
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    let mut tools: Option<Vec<Value>> = None;
    if !context.tools.is_empty() {
        tools = Some(
            context
                .tools
                .iter()
                .map(|t| {
                    let mut function = Map::new();
                    function.insert("name".into(), json!(t.name));
                    function.insert("description".into(), json!(t.description));
                    function.insert("parameters".into(), t.parameters.clone());
                    if compat.supports_strict_mode {
                        function.insert("strict".into(), json!(false));
                    }
                    json!({"type": "function", "function": function})
                })
                .collect(),
        );
        if compat.zai_tool_stream {
            p.insert("tool_stream".into(), json!(true));
        }
    } else if compat.requires_tools_with_tool_history && has_tool_history(&context.messages) {
        // Proxies in front of Anthropic reject tool history without a tools list.
        tools = Some(Vec::new());
    }
    if compat.anthropic_cache_control && retention != CacheRetention::None {
        let mut marker = json!({"type": "ephemeral"});
        if long {
            marker["ttl"] = json!("1h");
        }
        apply_anthropic_cache_control(&mut messages, tools.as_mut(), &marker);
    }
    p.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools {
        p.insert("tools".into(), Value::Array(tools));
    }
    // pi 1.6's `compat.vllmPriority`: vLLM's scheduler priority, sent as is.
    if let Some(priority) = model.compat.as_ref().and_then(|c| c.get("vllmPriority"))
        && priority.is_number()
    {
        p.insert("priority".into(), priority.clone());
    }

    let level = clamp_thinking_level(model, options.thinking);
    let effort = (level != ThinkingLevel::Off).then_some(level);
    if model.reasoning {
        match compat.thinking_format {
            ThinkingFormat::Zai | ThinkingFormat::Qwen => {
                p.insert("enable_thinking".into(), json!(effort.is_some()));
            }
            ThinkingFormat::QwenChatTemplate => {
                p.insert(
                    "chat_template_kwargs".into(),
                    json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
                );
            }
            ThinkingFormat::DeepSeek => {
                let kind = if effort.is_some() {
                    "enabled"
                } else {
                    "disabled"
                };
                p.insert("thinking".into(), json!({"type": kind}));
                if let Some(level) = effort {
                    p.insert("reasoning_effort".into(), json!(effort_value(model, level)));
                }
            }
            ThinkingFormat::OpenRouter => {
                if let Some(level) = effort {
                    p.insert(
                        "reasoning".into(),
                        json!({"effort": effort_value(model, level)}),
                    );
                } else {
                    let off = model.thinking_level_map.as_ref().and_then(|m| m.get("off"));
                    match off {
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
            ThinkingFormat::OpenAi if compat.supports_reasoning_effort => {
                if let Some(level) = effort {
                    p.insert("reasoning_effort".into(), json!(effort_value(model, level)));
                } else if let Some(off) = mapped_level(model, ThinkingLevel::Off) {
                    p.insert("reasoning_effort".into(), json!(off));
                }
            }
            ThinkingFormat::OpenAi => {}
        }
    }
    if let Some(compat_value) = &model.compat {
        if model.base_url.contains("openrouter.ai")
            && let Some(routing) = compat_value.get("openRouterRouting")
        {
            p.insert("provider".into(), routing.clone());
        }
        if model.base_url.contains("ai-gateway.vercel.sh")
            && let Some(routing) = compat_value.get("vercelGatewayRouting")
        {
            let mut gateway = Map::new();
            for key in ["only", "order"] {
                if let Some(v) = routing.get(key) {
                    gateway.insert(key.into(), v.clone());
                }
            }
            if !gateway.is_empty() {
                p.insert("providerOptions".into(), json!({"gateway": gateway}));
            }
        }
    }
    // Last, so the model's sampling parameters win over the named fields (pi 1.6).
    super::apply_sampling_params(&mut p, model, options.thinking);
    Value::Object(p)
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if let Some((call_id, _)) = id.split_once('|') {
        let sanitized: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        return sanitized.chars().take(40).collect();
    }
    if model.provider == "openai" && id.chars().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_string()
}

fn image_url(mime: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

/// pi's `convertMessages` for chat completions.
pub fn convert_messages(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let messages = transform_messages(&context.messages, model, &|id, _| {
        normalize_tool_call_id(model, id)
    });
    let mut out = Vec::new();
    if let Some(system) = &context.system_prompt {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": system}));
    }
    let mut last_was_tool_result = false;
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_was_tool_result
            && matches!(msg, Message::User(_))
        {
            out.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
        }
        match msg {
            Message::User(u) => {
                last_was_tool_result = false;
                match &u.content {
                    UserContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                    UserContent::Blocks(blocks) => {
                        let content: Vec<Value> = blocks
                            .iter()
                            .map(|b| match b {
                                UserBlock::Text(t) => json!({"type": "text", "text": t.text}),
                                UserBlock::Image(img) => image_url(&img.mime_type, &img.data),
                            })
                            .collect();
                        if !content.is_empty() {
                            out.push(json!({"role": "user", "content": content}));
                        }
                    }
                }
            }
            Message::Assistant(a) => {
                last_was_tool_result = false;
                if let Some(m) = convert_assistant(model, compat, a) {
                    out.push(m);
                }
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let text = r.text();
                    let has_images = r.content.iter().any(|b| matches!(b, UserBlock::Image(_)));
                    let mut m = Map::new();
                    m.insert("role".into(), json!("tool"));
                    m.insert(
                        "content".into(),
                        json!(if text.is_empty() {
                            "(see attached image)"
                        } else {
                            text.as_str()
                        }),
                    );
                    m.insert("tool_call_id".into(), json!(r.tool_call_id));
                    if compat.requires_tool_result_name && !r.tool_name.is_empty() {
                        m.insert("name".into(), json!(r.tool_name));
                    }
                    out.push(Value::Object(m));
                    if has_images && model.supports_images() {
                        for b in &r.content {
                            if let UserBlock::Image(img) = b {
                                images.push(image_url(&img.mime_type, &img.data));
                            }
                        }
                    }
                    i += 1;
                }
                if images.is_empty() {
                    last_was_tool_result = true;
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                    let mut content = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    content.extend(images);
                    out.push(json!({"role": "user", "content": content}));
                    last_was_tool_result = false;
                }
                continue;
            }
        }
        i += 1;
    }
    out
}

fn convert_assistant(
    model: &Model,
    compat: &Compat,
    a: &crate::ai::message::AssistantMessage,
) -> Option<Value> {
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        },
    );
    let text_parts: Vec<&str> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let text: String = text_parts.concat();
    let thinking: Vec<&crate::ai::message::ThinkingContent> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => Some(t),
            _ => None,
        })
        .collect();
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
            let mut parts = vec![json!({"type": "text", "text": joined.join("\n\n")})];
            parts.extend(
                text_parts
                    .iter()
                    .map(|t| json!({"type": "text", "text": t})),
            );
            m.insert("content".into(), Value::Array(parts));
        } else {
            if !text.is_empty() {
                m.insert("content".into(), json!(text));
            }
            // The signature names the field the server streamed the reasoning in.
            if let Some(field) = thinking[0]
                .thinking_signature
                .as_deref()
                .filter(|s| !s.is_empty())
            {
                let joined: Vec<&str> = thinking.iter().map(|t| t.thinking.as_str()).collect();
                m.insert(field.to_string(), json!(joined.join("\n")));
            }
        }
    } else if !text.is_empty() {
        m.insert("content".into(), json!(text));
    }
    let calls: Vec<&crate::ai::message::ToolCall> = a.tool_calls().collect();
    if !calls.is_empty() {
        let list: Vec<Value> = calls
            .iter()
            .map(|tc| {
                json!({
                    "id": tc.id,
                    "type": "function",
                    "function": {"name": tc.name, "arguments": tc.arguments.to_string()},
                })
            })
            .collect();
        m.insert("tool_calls".into(), Value::Array(list));
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|tc| tc.thought_signature.as_deref())
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| !v.is_null())
            .collect();
        if !details.is_empty() {
            m.insert("reasoning_details".into(), Value::Array(details));
        }
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !m.contains_key("reasoning_content")
    {
        m.insert("reasoning_content".into(), json!(""));
    }
    let has_content = match m.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    if !has_content && !m.contains_key("tool_calls") {
        return None;
    }
    Some(Value::Object(m))
}

fn apply_anthropic_cache_control(
    messages: &mut [Value],
    tools: Option<&mut Vec<Value>>,
    marker: &Value,
) {
    if let Some(system) = messages
        .iter_mut()
        .find(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
    {
        mark_text(system, marker);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut())
        && let Some(obj) = last.as_object_mut()
    {
        obj.insert("cache_control".into(), marker.clone());
    }
    for m in messages.iter_mut().rev() {
        if matches!(m["role"].as_str(), Some("user" | "assistant")) && mark_text(m, marker) {
            break;
        }
    }
}

fn mark_text(message: &mut Value, marker: &Value) -> bool {
    match message.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            let text = std::mem::take(s);
            message["content"] = json!([{"type": "text", "text": text, "cache_control": marker}]);
            true
        }
        Some(Value::Array(parts)) => {
            for part in parts.iter_mut().rev() {
                if part["type"] == "text"
                    && let Some(obj) = part.as_object_mut()
                {
                    obj.insert("cache_control".into(), marker.clone());
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// An HTTP error the way the OpenAI SDK words it: `"{status} {error.message}"`.
pub fn error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("{status} status code (no body)");
    }
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let detail = parsed.as_ref().and_then(|v| {
        let err = v.get("error").unwrap_or(v);
        match err.get("message") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
            None => v.get("error").map(Value::to_string),
        }
    });
    let mut text = format!("{status} {}", detail.unwrap_or_else(|| body.to_string()));
    // OpenRouter forwards the upstream provider's error here.
    if let Some(raw) = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/metadata/raw"))
        .and_then(Value::as_str)
    {
        text.push('\n');
        text.push_str(raw);
    }
    text
}

mod compat;
mod decoder;

pub use compat::{Compat, ThinkingFormat};
pub use decoder::Decoder;

#[cfg(test)]
mod tests;
