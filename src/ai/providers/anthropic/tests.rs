use super::*;
use crate::ai::auth::ApiKey;
use crate::ai::message::{ThinkingContent, ToolSpec, UserMessage};
use crate::ai::model::{Api, InputKind};

fn model(id: &str, reasoning: bool) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::AnthropicMessages,
        provider: "anthropic".into(),
        base_url: "https://api.anthropic.com".into(),
        reasoning,
        thinking_level_map: None,
        input: vec![InputKind::Text, InputKind::Image],
        cost: Default::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            ..Default::default()
        })],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

#[test]
fn budget_thinking_cache_markers_and_tools_shape_the_body() {
    let options = StreamOptions {
        thinking: ThinkingLevel::Medium,
        cache_retention: CacheRetention::Long,
        temperature: Some(0.5),
        ..StreamOptions::default()
    };
    let body = build_body(
        &model("claude-sonnet-4-5", true),
        &context(),
        &options,
        false,
    );
    let ttl = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(
        body,
        json!({
            "model": "claude-sonnet-4-5",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": ttl}]}],
            "max_tokens": 64000,
            "stream": true,
            "system": [{"type": "text", "text": "sys", "cache_control": ttl}],
            "tools": [{
                "name": "read", "description": "Read a file", "eager_input_streaming": true,
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                "cache_control": ttl,
            }],
            "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
        })
    );
}

#[test]
fn adaptive_models_send_an_effort_and_thinking_off_disables() {
    let mut options = StreamOptions {
        thinking: ThinkingLevel::Minimal,
        ..StreamOptions::default()
    };
    let body = build_body(&model("claude-opus-4-6", true), &context(), &options, false);
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "low"}));
    options.thinking = ThinkingLevel::Off;
    let body = build_body(&model("claude-opus-4-6", true), &context(), &options, false);
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert!(body.get("output_config").is_none());
}

#[test]
fn oauth_tokens_use_bearer_auth_claude_code_identity_and_tool_casing() {
    let options = StreamOptions {
        api_key: Some(ApiKey::new("sk-ant-oat01-abc")),
        ..StreamOptions::default()
    };
    let req = build_request(&model("claude-sonnet-4-5", false), &context(), &options).unwrap();
    assert_eq!(req.header("authorization"), Some("Bearer sk-ant-oat01-abc"));
    assert_eq!(req.header("x-api-key"), None);
    assert_eq!(
        req.header("anthropic-beta"),
        Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
    );
    assert_eq!(req.body["system"][0]["text"], json!(CLAUDE_CODE_IDENTITY));
    assert_eq!(req.body["tools"][0]["name"], json!("Read"));
    let plain = StreamOptions {
        api_key: Some(ApiKey::new("sk-ant-api03-xyz")),
        ..StreamOptions::default()
    };
    let req = build_request(&model("claude-sonnet-4-5", false), &context(), &plain).unwrap();
    assert_eq!(req.header("x-api-key"), Some("sk-ant-api03-xyz"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(req.url, "https://api.anthropic.com/v1/messages");
}

#[test]
fn signed_redacted_and_unsigned_thinking_round_trip() {
    let m = model("claude-sonnet-4-5", true);
    let a = crate::ai::message::AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "signed".into(),
                thinking_signature: Some("SIG".into()),
                ..Default::default()
            }),
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "[Reasoning redacted]".into(),
                thinking_signature: Some("OPAQUE".into()),
                redacted: Some(true),
                ..Default::default()
            }),
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "unsigned".into(),
                ..Default::default()
            }),
        ],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        ..Default::default()
    };
    let ctx = Context {
        messages: vec![Message::Assistant(a)],
        ..Context::default()
    };
    assert_eq!(
        Value::Array(convert_messages(&m, &ctx, false, None)),
        json!([{"role": "assistant", "content": [
            {"type": "thinking", "thinking": "signed", "signature": "SIG"},
            {"type": "redacted_thinking", "data": "OPAQUE"},
            {"type": "text", "text": "unsigned"},
        ]}])
    );
}
