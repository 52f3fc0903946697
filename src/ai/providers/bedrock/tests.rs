use super::*;
use crate::ai::auth::ApiKey;
use crate::ai::message::{TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage};
use crate::ai::model::{Api, InputKind};

fn model(id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::BedrockConverseStream,
        provider: "amazon-bedrock".into(),
        base_url: "https://bedrock-runtime.us-east-1.amazonaws.com".into(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 200_000,
        max_tokens: 64_000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

/// A turn of `model_id` (same model: its thinking is replayed as thinking).
fn conversation_of(model_id: &str) -> Context {
    let call = ToolCall {
        id: "tooluse_1".into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
        ..ToolCall::default()
    };
    let assistant = crate::ai::message::AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: Some("SIG".into()),
                ..Default::default()
            }),
            AssistantBlock::Text(TextContent::new("  ")),
            AssistantBlock::ToolCall(call.clone()),
            AssistantBlock::ToolCall(ToolCall {
                id: "tooluse_2".into(),
                ..call
            }),
        ],
        api: "bedrock-converse-stream".into(),
        provider: "amazon-bedrock".into(),
        model: model_id.into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let result = |id: &str, error: bool| {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![UserBlock::text("x")],
            is_error: error,
            ..Default::default()
        })
    };
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![
            Message::User(UserMessage::text("go", 1)),
            Message::Assistant(assistant),
            result("tooluse_1", false),
            result("tooluse_2", true),
        ],
        tools: Vec::new(),
    }
}

fn conversation() -> Context {
    conversation_of("anthropic.claude-sonnet-4-5")
}

#[test]
fn tool_results_share_a_message_and_claude_gets_cache_points_and_a_budget() {
    let m = model("anthropic.claude-sonnet-4-5");
    let options = StreamOptions {
        thinking: ThinkingLevel::Low,
        api_key: Some(ApiKey::new("x")),
        ..StreamOptions::default()
    };
    let body = build_body(&m, &conversation(), &options, CacheRetention::Short);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{body:#}");
    assert_eq!(
        messages[1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "SIG"}}})
    );
    let results = messages[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 3, "two results and a cache point: {body:#}");
    assert_eq!(results[1]["toolResult"]["status"], "error");
    assert_eq!(results[2], json!({"cachePoint": {"type": "default"}}));
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default"}})
    );
    // pi 1.6: the model's limit (the budget fits inside), within the window.
    assert_eq!(body["inferenceConfig"]["maxTokens"], 64000);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048, "display": "summarized"},
               "anthropic_beta": ["interleaved-thinking-2025-05-14"]})
    );
}

#[test]
fn adaptive_models_get_an_effort_and_others_no_signature() {
    let m = model("us.anthropic.claude-opus-4-6-v1");
    let options = StreamOptions {
        thinking: ThinkingLevel::Medium,
        ..StreamOptions::default()
    };
    let body = build_body(&m, &conversation(), &options, CacheRetention::Long);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "medium"}})
    );
    assert_eq!(
        body["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    let nova = "amazon.nova-pro-v1:0";
    let other = build_body(
        &model(nova),
        &conversation_of(nova),
        &options,
        CacheRetention::Short,
    );
    assert_eq!(
        other["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "hmm"}}})
    );
    assert!(other.get("additionalModelRequestFields").is_none());
    assert_eq!(other["system"].as_array().unwrap().len(), 1);
}

#[test]
fn requests_are_signed_for_the_region() {
    let config = AwsConfig {
        env: [
            ("AWS_ACCESS_KEY_ID".to_string(), "AKIDEXAMPLE".to_string()),
            ("AWS_SECRET_ACCESS_KEY".to_string(), "secret".to_string()),
            ("AWS_SESSION_TOKEN".to_string(), "session".to_string()),
            ("AWS_REGION".to_string(), "eu-central-1".to_string()),
        ]
        .into(),
        ..AwsConfig::default()
    };
    let now = DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
        .unwrap()
        .with_timezone(&Utc);
    let m = model("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    let auth = config.auth().unwrap();
    let r = build_request_with(
        &m,
        &conversation(),
        &StreamOptions::default(),
        &config,
        &auth,
        now,
    )
    .unwrap();
    assert_eq!(
        r.url,
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    assert_eq!(r.header("x-amz-date"), Some("20260102T030405Z"));
    assert_eq!(r.header("x-amz-security-token"), Some("session"));
    let auth = r.header("authorization").unwrap();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/eu-central-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="),
        "{auth}"
    );
}

#[test]
fn http_errors_are_named_like_the_sdk_exceptions() {
    assert_eq!(
        error_message(429, None, r#"{"message":"Too many requests, please wait"}"#),
        "Throttling error: Too many requests, please wait"
    );
    assert_eq!(
        error_message(
            400,
            None,
            r#"{"__type":"com.amazon#ValidationException","message":"bad"}"#
        ),
        "Validation error: bad"
    );
    assert_eq!(
        error_message(403, None, r#"{"Message":"denied"}"#),
        "AccessDeniedException: denied"
    );
    // The SDK reads the exception from `x-amzn-errortype` first.
    assert_eq!(
        error_message(
            400,
            Some("ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"),
            r#"{"message":"The model is not supported"}"#
        ),
        "Validation error: The model is not supported"
    );
    assert_eq!(
        error_message(
            500,
            Some("ServiceQuotaExceededException"),
            r#"{"__type":"ThrottlingException","message":"quota"}"#
        ),
        "ServiceQuotaExceededException: quota"
    );
}
