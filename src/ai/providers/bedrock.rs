//! Amazon Bedrock's Converse API (`bedrock-converse-stream`).
//!
//! `POST {endpoint}/model/{modelId}/converse-stream` with a JSON body of `messages`,
//! `system`, `inferenceConfig`, `toolConfig` and (Claude thinking)
//! `additionalModelRequestFields`, as pi builds it for the AWS SDK: consecutive tool
//! results share one user message, prompt-cache points go after the system prompt and
//! the last user message of Claude models that support them, thinking is replayed with
//! its signature (Claude) or without (others).
//!
//! Credentials, as the AWS SDK finds them for pi: `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock
//! API key, sent as a bearer token), else SigV4 (see `sigv4`) with `AWS_ACCESS_KEY_ID` /
//! `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` (ignored when `AWS_PROFILE` is set), else
//! the profile (`AWS_PROFILE`, default `default`) of `~/.aws/credentials` and
//! `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`).
//! `AWS_BEDROCK_SKIP_AUTH=1` signs with dummy keys, for proxies. Then the rest of the
//! AWS SDK's default chain (see `chain`): SSO, `credential_process`, web identity,
//! container and instance-metadata credentials. The region is `AWS_REGION`,
//! `AWS_DEFAULT_REGION`, the region of a standard Bedrock `baseUrl`, the profile's
//! region, or `us-east-1`.
//!
//! A failed request is named by its `x-amzn-errortype` header, else the body's
//! `__type`, else its status, as the SDK names its exceptions.
//!
//! The answer is an AWS event stream (see `eventstream`); the driver hands each message
//! to [`Decoder`] as an event named by its `:event-type` (or `exception:<type>`).

pub mod chain;
pub mod credentials;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::output::Output;
use super::preview;
use super::sigv4::{self, Credentials, SigningInput};
use super::wire::{HttpRequest, SseDecoder};
use super::{CacheRetention, StreamOptions, ThinkingBudgets};
use crate::ai::message::{AssistantBlock, Context, Message, StopReason, UserBlock, UserContent};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::sse::SseEvent;
use crate::ai::transform::{sanitize_tool_call_id, transform_messages};
use credentials::{AwsAuth, AwsConfig};

/// Builds the signed request pi would send, with region from the environment and the
/// AWS config files and credentials from the SDK's default chain (which may ask STS, SSO
/// or a metadata server with `client`).
pub async fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    client: &reqwest::Client,
) -> Result<HttpRequest, String> {
    let config = AwsConfig::from_process();
    let auth = chain::resolve(&config, client).await?;
    build_request_with(model, context, options, &config, &auth, Utc::now())
}

/// [`build_request`] with explicit settings, credentials and clock (for tests).
pub fn build_request_with(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    config: &AwsConfig,
    auth: &AwsAuth,
    now: DateTime<Utc>,
) -> Result<HttpRequest, String> {
    let target = config.target(&model.base_url)?;
    let url = format!(
        "{}/model/{}/converse-stream",
        target.endpoint.trim_end_matches('/'),
        sigv4::uri_encode(&model.id, false)
    );
    let body = build_body(model, context, options, options.cache_retention);
    let mut headers = vec![("accept".to_string(), "application/json".to_string())];
    match auth {
        AwsAuth::Bearer(token) => {
            headers.push(("authorization".to_string(), format!("Bearer {token}")));
        }
        AwsAuth::SigV4(creds) => {
            headers.extend(sign(&url, &body, &target.region, creds, now)?);
        }
    }
    Ok(HttpRequest { url, headers, body })
}

/// The SigV4 headers (`x-amz-date`, `x-amz-security-token`, `authorization`) for a POST
/// of `body` (serialised exactly as the driver sends it) to `url`.
fn sign(
    url: &str,
    body: &Value,
    region: &str,
    creds: &Credentials,
    now: DateTime<Utc>,
) -> Result<Vec<(String, String)>, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("Invalid Bedrock URL {url}: {e}"))?;
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => return Err(format!("Invalid Bedrock URL {url}")),
    };
    let bytes = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
    let mut signed = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("host".to_string(), host),
        ("x-amz-date".to_string(), amz_date.clone()),
    ];
    if let Some(token) = &creds.session_token {
        signed.push(("x-amz-security-token".to_string(), token.clone()));
    }
    let authorization = sigv4::authorization(
        creds,
        &SigningInput {
            method: "POST",
            path: parsed.path(),
            query: parsed.query().unwrap_or(""),
            headers: &signed,
            body: &bytes,
            region,
            service: "bedrock",
            amz_date: &amz_date,
            double_encode_path: true,
        },
    );
    let mut out: Vec<(String, String)> = signed
        .into_iter()
        .filter(|(k, _)| k != "host" && k != "content-type")
        .collect();
    out.push(("authorization".to_string(), authorization));
    Ok(out)
}

/// Lower-case id and name, also with spaces, `_`, `.` and `:` turned into `-`.
fn match_candidates(model: &Model) -> Vec<String> {
    [&model.id, &model.name]
        .into_iter()
        .filter(|v| !v.is_empty())
        .flat_map(|v| {
            let lower = v.to_lowercase();
            let mut dashed = String::new();
            let mut in_run = false;
            for c in lower.chars() {
                let sep = c.is_whitespace() || matches!(c, '_' | '.' | ':');
                if sep && !in_run {
                    dashed.push('-');
                } else if !sep {
                    dashed.push(c);
                }
                in_run = sep;
            }
            [lower, dashed]
        })
        .collect()
}

fn is_claude(model: &Model) -> bool {
    let id = model.id.to_lowercase();
    let name = model.name.to_lowercase();
    id.contains("anthropic.claude")
        || id.contains("anthropic/claude")
        || name.contains("anthropic.claude")
        || name.contains("anthropic/claude")
        || name.contains("claude")
}

fn supports_adaptive_thinking(model: &Model) -> bool {
    match_candidates(model)
        .iter()
        .any(|s| s.contains("opus-4-6") || s.contains("opus-4-7") || s.contains("sonnet-4-6"))
}

fn supports_prompt_caching(model: &Model) -> bool {
    let c = match_candidates(model);
    if !c.iter().any(|s| s.contains("claude")) {
        return std::env::var("AWS_BEDROCK_FORCE_CACHE").is_ok_and(|v| v == "1");
    }
    c.iter().any(|s| {
        s.contains("-4-") || s.contains("claude-3-7-sonnet") || s.contains("claude-3-5-haiku")
    })
}

fn cache_point(retention: CacheRetention) -> Value {
    if retention == CacheRetention::Long {
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    } else {
        json!({"cachePoint": {"type": "default"}})
    }
}

/// The JSON body (public for tests).
pub fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    retention: CacheRetention,
) -> Value {
    let caching = retention != CacheRetention::None && supports_prompt_caching(model);
    let level = options.thinking;
    let mut max_tokens = options.effective_max_tokens(model, context);
    let mut budgets = options.thinking_budgets;
    if level != ThinkingLevel::Off && is_claude(model) && !supports_adaptive_thinking(model) {
        let (adjusted, budget) =
            adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, level, &budgets);
        // pi 1.6 fits the total into the window again.
        max_tokens = super::budget::clamp_to_context(model, context, adjusted);
        set_budget(&mut budgets, level, budget);
    }
    let mut p = Map::new();
    p.insert(
        "messages".into(),
        Value::Array(convert_messages(model, context, caching, retention)),
    );
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let mut blocks = vec![json!({"text": system})];
        if caching {
            blocks.push(cache_point(retention));
        }
        p.insert("system".into(), Value::Array(blocks));
    }
    let mut inference = Map::new();
    if max_tokens > 0 {
        inference.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(t) = options.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    p.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"toolSpec": {
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": {"json": t.parameters},
                }})
            })
            .collect();
        p.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if let Some(fields) = additional_fields(model, level, &budgets) {
        p.insert("additionalModelRequestFields".into(), fields);
    }
    Value::Object(p)
}

fn set_budget(budgets: &mut ThinkingBudgets, level: ThinkingLevel, budget: u64) {
    match level {
        ThinkingLevel::Off => {}
        ThinkingLevel::Minimal => budgets.minimal = budget,
        ThinkingLevel::Low => budgets.low = budget,
        ThinkingLevel::Medium => budgets.medium = budget,
        ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => budgets.high = budget,
    }
}

/// pi's `adjustMaxTokensForThinking`: room for the budget on top of the output limit.
fn adjust_max_tokens_for_thinking(
    base: u64,
    model_max: u64,
    level: ThinkingLevel,
    budgets: &ThinkingBudgets,
) -> (u64, u64) {
    let mut budget = budgets.for_level(level).unwrap_or(0);
    let max_tokens = (base + budget).min(model_max);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(1024);
    }
    (max_tokens, budget)
}

/// Claude's thinking settings (`None` for other models or with thinking off).
fn additional_fields(
    model: &Model,
    level: ThinkingLevel,
    budgets: &ThinkingBudgets,
) -> Option<Value> {
    if level == ThinkingLevel::Off || !model.reasoning || !is_claude(model) {
        return None;
    }
    let gov = std::env::var("AWS_REGION")
        .ok()
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .is_some_and(|r| r.to_lowercase().starts_with("us-gov-"))
        || model.id.to_lowercase().starts_with("us-gov.")
        || model.id.to_lowercase().starts_with("arn:aws-us-gov:");
    let mut thinking = Map::new();
    let mut fields = Map::new();
    if supports_adaptive_thinking(model) {
        thinking.insert("type".into(), json!("adaptive"));
        if !gov {
            thinking.insert("display".into(), json!("summarized"));
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        fields.insert(
            "output_config".into(),
            json!({"effort": effort(model, level)}),
        );
    } else {
        thinking.insert("type".into(), json!("enabled"));
        thinking.insert(
            "budget_tokens".into(),
            json!(budgets.for_level(level).unwrap_or(0)),
        );
        if !gov {
            thinking.insert("display".into(), json!("summarized"));
        }
        fields.insert("thinking".into(), Value::Object(thinking));
        fields.insert(
            "anthropic_beta".into(),
            json!(["interleaved-thinking-2025-05-14"]),
        );
    }
    Some(Value::Object(fields))
}

/// pi's `mapThinkingLevelToEffort` for adaptive-thinking Claude models.
fn effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh
        && match_candidates(model)
            .iter()
            .any(|s| s.contains("opus-4-7"))
    {
        return "xhigh".into();
    }
    if let Some(mapped) = super::mapped_level(model, level) {
        return mapped;
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_string()
}

fn image_block(mime_type: &str, data: &str) -> Value {
    let format = match mime_type {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        // pi throws; an unknown type is sent as PNG rather than failing the turn.
        _ => "png",
    };
    json!({"image": {"source": {"bytes": data}, "format": format}})
}

fn user_block(b: &UserBlock) -> Value {
    match b {
        UserBlock::Text(t) => json!({"text": t.text}),
        UserBlock::Image(img) => image_block(&img.mime_type, &img.data),
    }
}

/// pi's `convertMessages` for Bedrock.
fn convert_messages(
    model: &Model,
    context: &Context,
    caching: bool,
    retention: CacheRetention,
) -> Vec<Value> {
    let messages = transform_messages(&context.messages, model, &|id, _| {
        sanitize_tool_call_id(id, 64)
    });
    let signatures = is_claude(model);
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(u) => {
                let content: Vec<Value> = match &u.content {
                    UserContent::Text(s) => vec![json!({"text": s})],
                    UserContent::Blocks(b) => b.iter().map(user_block).collect(),
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(a) => {
                let mut blocks = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                            blocks.push(json!({"text": t.text}));
                        }
                        AssistantBlock::ToolCall(tc) => blocks.push(json!({
                            "toolUse": {"toolUseId": tc.id, "name": tc.name, "input": tc.arguments}
                        })),
                        AssistantBlock::Thinking(t) if !t.thinking.trim().is_empty() => {
                            let signature = t
                                .thinking_signature
                                .as_deref()
                                .filter(|s| !s.trim().is_empty());
                            blocks.push(match (signatures, signature) {
                                (true, None) => json!({"text": t.thinking}),
                                (true, Some(sig)) => json!({"reasoningContent": {
                                    "reasoningText": {"text": t.thinking, "signature": sig}
                                }}),
                                (false, _) => json!({"reasoningContent": {
                                    "reasoningText": {"text": t.thinking}
                                }}),
                            });
                        }
                        _ => {}
                    }
                }
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(r)) = messages.get(i) {
                    let status = if r.is_error { "error" } else { "success" };
                    results.push(json!({"toolResult": {
                        "toolUseId": r.tool_call_id,
                        "content": r.content.iter().map(user_block).collect::<Vec<_>>(),
                        "status": status,
                    }}));
                    i += 1;
                }
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    if caching
        && let Some(last) = out.last_mut()
        && last["role"] == "user"
        && let Some(content) = last["content"].as_array_mut()
    {
        content.push(cache_point(retention));
    }
    out
}

/// The prefix pi gives each Bedrock exception type.
fn error_prefix(kind: &str) -> String {
    let name = kind.split(':').next().unwrap_or(kind).trim().to_string();
    let mut chars = name.chars();
    let pascal = match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => return "Error".into(),
    };
    match pascal.as_str() {
        "InternalServerException" => "Internal server error".into(),
        "ModelStreamErrorException" => "Model stream error".into(),
        "ValidationException" => "Validation error".into(),
        "ThrottlingException" => "Throttling error".into(),
        "ServiceUnavailableException" => "Service unavailable".into(),
        _ => pascal,
    }
}

/// The exception a status stands for when the response does not name one.
fn exception_for_status(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// The error text for a failed status: `<kind>: <message>` as pi formats SDK errors.
/// The kind is the `x-amzn-errortype` header (`error_type`) when the answer has one.
pub fn error_message(status: u16, error_type: Option<&str>, body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body.trim()).ok();
    let field = |k: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let header = error_type
        .map(|t| t.split(':').next().unwrap_or(t).trim())
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    let kind = header
        .or_else(|| field("__type").or_else(|| field("code")))
        .map(|t| t.rsplit('#').next().unwrap_or(&t).to_string())
        .unwrap_or_else(|| exception_for_status(status).to_string());
    let message = field("message")
        .or_else(|| field("Message"))
        .unwrap_or_else(|| match body.trim() {
            "" => "UnknownError".to_string(),
            text => text.to_string(),
        });
    format!("{}: {message}", error_prefix(&kind))
}

/// Streaming state for one Converse stream.
#[derive(Debug, Default)]
pub struct Decoder {
    /// Content index per Bedrock `contentBlockIndex`, for blocks still open.
    open: Vec<(u64, usize, Kind)>,
    stopped: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    Tool,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    fn find(&self, index: u64) -> Option<(usize, Kind)> {
        self.open
            .iter()
            .find(|(i, _, _)| *i == index)
            .map(|(_, idx, kind)| (*idx, *kind))
    }
}

fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        let data: Value = if event.data.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(event.data).map_err(|e| {
                format!(
                    "Could not parse a Bedrock stream event ({e}): {}",
                    preview(event.data)
                )
            })?
        };
        if let Some(kind) = event.event.strip_prefix("exception:") {
            let message = data
                .get("message")
                .or_else(|| data.get("Message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(format!("{}: {message}", error_prefix(kind)));
        }
        let index = data
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match event.event {
            "messageStart" if data.get("role").and_then(Value::as_str) != Some("assistant") => {
                return Err(
                    "Unexpected assistant message start but got user message start instead".into(),
                );
            }
            "contentBlockStart" => {
                if let Some(tool) = data.pointer("/start/toolUse") {
                    let s = |k: &str| tool.get(k).and_then(Value::as_str).unwrap_or("");
                    let idx = out.start_tool_call(s("toolUseId"), s("name"));
                    self.open.push((index, idx, Kind::Tool));
                }
            }
            "contentBlockDelta" => {
                let delta = &data["delta"];
                let found = self.find(index);
                if let Some(text) = delta.get("text").and_then(Value::as_str) {
                    let idx = match found {
                        Some((idx, Kind::Text)) => Some(idx),
                        Some(_) => None,
                        None => {
                            let idx = out.start_text();
                            self.open.push((index, idx, Kind::Text));
                            Some(idx)
                        }
                    };
                    if let Some(idx) = idx {
                        out.text_delta(idx, text);
                    }
                } else if let Some(tool) = delta.get("toolUse") {
                    if let Some((idx, Kind::Tool)) = found {
                        let input = tool.get("input").and_then(Value::as_str).unwrap_or("");
                        out.tool_call_delta(idx, input);
                    }
                } else if let Some(reasoning) = delta.get("reasoningContent") {
                    let idx = match found {
                        Some((idx, Kind::Thinking)) => Some(idx),
                        Some(_) => None,
                        None => {
                            let idx = out.start_thinking(Some(String::new()));
                            self.open.push((index, idx, Kind::Thinking));
                            Some(idx)
                        }
                    };
                    if let Some(idx) = idx {
                        if let Some(text) = reasoning.get("text").and_then(Value::as_str) {
                            out.thinking_delta(idx, text);
                        }
                        if let Some(sig) = reasoning.get("signature").and_then(Value::as_str)
                            && let Some(t) = out.thinking_mut(idx)
                        {
                            t.thinking_signature
                                .get_or_insert_with(String::new)
                                .push_str(sig);
                        }
                    }
                }
            }
            "contentBlockStop" => {
                if let Some(pos) = self.open.iter().position(|(i, _, _)| *i == index) {
                    let (_, idx, kind) = self.open.remove(pos);
                    match kind {
                        Kind::Text => out.end_text(idx),
                        Kind::Thinking => out.end_thinking(idx),
                        Kind::Tool => out.end_tool_call(idx, None),
                    }
                }
            }
            "messageStop" => {
                self.stopped = true;
                let reason = data.get("stopReason").and_then(Value::as_str).unwrap_or("");
                out.message.stop_reason = map_stop_reason(reason);
            }
            "metadata" => {
                if let Some(u) = data.get("usage").filter(|u| u.is_object()) {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    let (input, output) = (n("inputTokens"), n("outputTokens"));
                    let total = match n("totalTokens") {
                        0 => input + output,
                        t => t,
                    };
                    out.set_usage_with_total(
                        input,
                        output,
                        n("cacheReadInputTokens"),
                        n("cacheWriteInputTokens"),
                        total,
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        if matches!(
            out.message.stop_reason,
            StopReason::Error | StopReason::Aborted
        ) {
            return Err("An unknown error occurred".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
