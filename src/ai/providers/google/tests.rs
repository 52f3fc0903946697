use super::*;
use crate::ai::message::{
    AssistantMessage, ThinkingContent, ToolCall, ToolResultMessage, UserMessage,
};
use crate::ai::model::{Api, InputKind};

fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::GoogleGenerativeAi,
        provider: "google".into(),
        base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 1_000_000,
        max_tokens: 65_536,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

#[test]
fn thinking_config_per_model_family_and_level() {
    let cfg = |id: &str, level| {
        let o = StreamOptions {
            thinking: level,
            ..StreamOptions::default()
        };
        build_body(&model(id), &Context::default(), &o)["generationConfig"]["thinkingConfig"]
            .clone()
    };
    assert_eq!(
        cfg("gemini-2.5-pro", ThinkingLevel::High),
        json!({"includeThoughts": true, "thinkingBudget": 32768})
    );
    assert_eq!(
        cfg("gemini-2.5-flash", ThinkingLevel::Minimal),
        json!({"includeThoughts": true, "thinkingBudget": 128})
    );
    assert_eq!(
        cfg("gemini-2.5-flash", ThinkingLevel::Off),
        json!({"thinkingBudget": 0})
    );
    assert_eq!(
        cfg("gemini-3-pro-preview", ThinkingLevel::Medium),
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
    assert_eq!(
        cfg("gemini-3.1-pro-preview", ThinkingLevel::Off),
        json!({"thinkingLevel": "LOW"})
    );
    assert_eq!(
        cfg("gemini-3-flash-preview", ThinkingLevel::Low),
        json!({"includeThoughts": true, "thinkingLevel": "LOW"})
    );
}

#[test]
fn history_keeps_valid_signatures_for_the_same_model_only_and_groups_function_responses() {
    let m = model("gemini-2.5-flash");
    let a = AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "plan".into(),
                thinking_signature: Some("c2ln".into()),
                ..Default::default()
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "a_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                thought_signature: Some("not base64!".into()),
                ..Default::default()
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "b_2".into(),
                name: "ls".into(),
                arguments: json!({}),
                ..Default::default()
            }),
        ],
        api: "google-generative-ai".into(),
        provider: "google".into(),
        model: "gemini-2.5-flash".into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let result = |id: &str, name: &str, err| {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: name.into(),
            content: vec![UserBlock::text("out")],
            is_error: err,
            ..Default::default()
        })
    };
    let ctx = Context {
        messages: vec![
            Message::User(UserMessage::text("go", 0)),
            Message::Assistant(a),
            result("a_1", "read", false),
            result("b_2", "ls", true),
        ],
        ..Context::default()
    };
    assert_eq!(
        Value::Array(convert_messages(&m, &ctx)),
        json!([
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [
                {"thought": true, "text": "plan", "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "read", "args": {"path": "a"}}},
                {"functionCall": {"name": "ls", "args": {}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "out"}}},
                {"functionResponse": {"name": "ls", "response": {"error": "out"}}},
            ]},
        ])
    );
}

#[test]
fn request_goes_to_stream_generate_content_with_the_key_header() {
    let o = StreamOptions {
        api_key: Some(crate::ai::auth::ApiKey::new("AIza-key")),
        ..StreamOptions::default()
    };
    let ctx = Context {
        system_prompt: Some("sys".into()),
        ..Context::default()
    };
    let req = build_request(&model("gemini-2.5-pro"), &ctx, &o).unwrap();
    assert_eq!(
        req.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(req.header("x-goog-api-key"), Some("AIza-key"));
    assert_eq!(
        req.body["systemInstruction"],
        json!({"role": "user", "parts": [{"text": "sys"}]})
    );
}
