use super::*;
use crate::ai::message::{TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage};
use crate::ai::model::{Api, InputKind};

fn model(reasoning: bool) -> Model {
    Model {
        id: "gpt-5".into(),
        name: "GPT-5".into(),
        api: Api::OpenAiResponses,
        provider: "openai".into(),
        base_url: "https://api.openai.com/v1".into(),
        reasoning,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 400_000,
        max_tokens: 128_000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

#[test]
fn history_becomes_input_items_with_reasoning_replayed_verbatim() {
    let m = model(true);
    let reasoning_item =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"});
    let a = AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "".into(),
                thinking_signature: Some(reasoning_item.to_string()),
                ..Default::default()
            }),
            AssistantBlock::Text(TextContent {
                text: "Reading.".into(),
                text_signature: Some(r#"{"v":1,"id":"msg_abc","phase":"commentary"}"#.into()),
                ..Default::default()
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "call_1|fc_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                ..Default::default()
            }),
        ],
        api: "openai-responses".into(),
        provider: "openai".into(),
        model: "gpt-5".into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let ctx = Context {
        system_prompt: Some("sys".into()),
        messages: vec![
            Message::User(UserMessage::text("hi", 0)),
            Message::Assistant(a),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_1|fc_1".into(),
                tool_name: "read".into(),
                content: vec![UserBlock::text("data")],
                ..Default::default()
            }),
        ],
        tools: vec![],
    };
    let options = StreamOptions {
        thinking: ThinkingLevel::High,
        session_id: Some("s1".into()),
        ..StreamOptions::default()
    };
    assert_eq!(
        build_body(&m, &ctx, &options),
        json!({
            "model": "gpt-5",
            "input": [
                {"role": "developer", "content": "sys"},
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                reasoning_item,
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading.", "annotations": []}], "status": "completed", "id": "msg_abc", "phase": "commentary"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "data"},
            ],
            "stream": true,
            "prompt_cache_key": "s1",
            "store": false,
            "max_output_tokens": 128000,
            "reasoning": {"effort": "high", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        })
    );
}

#[test]
fn foreign_tool_call_ids_get_hashed_fc_item_ids() {
    let m = model(false);
    let foreign = AssistantMessage {
        provider: "github-copilot".into(),
        api: "openai-responses".into(),
        model: "x".into(),
        ..Default::default()
    };
    assert_eq!(
        normalize_tool_call_id(&m, OPENAI_TOOL_CALL_PROVIDERS, "call_9|item+/=", &foreign),
        format!("call_9|fc_{}", short_hash("item+/="))
    );
    let same = AssistantMessage {
        provider: "openai".into(),
        api: "openai-responses".into(),
        model: "gpt-4".into(),
        ..Default::default()
    };
    assert_eq!(
        normalize_tool_call_id(&m, OPENAI_TOOL_CALL_PROVIDERS, "call_9|rs_x", &same),
        "call_9|fc_rs_x"
    );
    assert_eq!(
        normalize_tool_call_id(&m, OPENAI_TOOL_CALL_PROVIDERS, "toolu_01!", &same),
        "toolu_01"
    );
}

#[test]
fn thinking_off_asks_for_no_reasoning() {
    let body = build_body(&model(true), &Context::default(), &StreamOptions::default());
    assert_eq!(body["reasoning"], json!({"effort": "none"}));
    assert!(body.get("include").is_none());
}
