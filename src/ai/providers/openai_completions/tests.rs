use super::*;
use crate::ai::message::{
    AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, ToolSpec,
};
use crate::ai::model::{Api, InputKind};
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("corpus file {} is needed by this test: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The scenario's models.json models (kept in `tests/fixtures/corpus-config/`), built
/// the way the registry would (defaults applied).
fn corpus_models(dir: &Path) -> Vec<Model> {
    let scenario = dir.file_name().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus-config")
        .join(scenario)
        .join("models.json");
    let text = std::fs::read_to_string(config).unwrap();
    let cfg: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (provider, p) in cfg["providers"].as_object().unwrap() {
        for m in p["models"].as_array().unwrap() {
            out.push(Model {
                id: m["id"].as_str().unwrap().into(),
                name: m["name"].as_str().or(m["id"].as_str()).unwrap().into(),
                api: Api::parse(p["api"].as_str().unwrap()),
                provider: provider.clone(),
                base_url: p["baseUrl"].as_str().unwrap().into(),
                reasoning: m["reasoning"].as_bool().unwrap_or(false),
                thinking_level_map: None,
                input: vec![InputKind::Text],
                cost: Default::default(),
                context_window: m["contextWindow"].as_u64().unwrap_or(128_000),
                max_tokens: m["maxTokens"].as_u64().unwrap_or(16_384),
                headers: Default::default(),
                compat: p.get("compat").cloned(),
                extras: Default::default(),
            });
        }
    }
    out
}

/// For a linear session, request n carries every message before the n-th assistant
/// message; checks our body equals pi's for each of them.
fn assert_bodies_match_corpus(scenario: &str) {
    let dir = corpus_dir().join(scenario);
    let requests = read_jsonl(&dir.join("requests.jsonl"));
    let session = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "jsonl")
                && p.file_name().unwrap() != "requests.jsonl"
        })
        .unwrap();
    let models = corpus_models(&dir);
    let mut history: Vec<Message> = Vec::new();
    let mut thinking = ThinkingLevel::Off;
    let mut checked = 0;
    for entry in read_jsonl(&session) {
        match entry["type"].as_str() {
            Some("thinking_level_change") => {
                thinking = ThinkingLevel::parse(entry["thinkingLevel"].as_str().unwrap()).unwrap();
            }
            Some("message") => {
                let msg: Message = serde_json::from_value(entry["message"].clone()).unwrap();
                if let Message::Assistant(a) = &msg {
                    let expected = &requests[checked]["body"];
                    let model = models.iter().find(|m| m.id == a.model).unwrap();
                    let system = expected["messages"][0]["content"]
                        .as_str()
                        .map(str::to_string);
                    let tools = expected["tools"]
                        .as_array()
                        .map(|tools| {
                            tools
                                .iter()
                                .map(|t| ToolSpec {
                                    name: t["function"]["name"].as_str().unwrap().into(),
                                    description: t["function"]["description"]
                                        .as_str()
                                        .unwrap()
                                        .into(),
                                    parameters: t["function"]["parameters"].clone(),
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let context = Context {
                        system_prompt: system,
                        messages: history.clone(),
                        tools,
                    };
                    let options = StreamOptions {
                        thinking,
                        ..StreamOptions::default()
                    };
                    let body = build_body(model, &context, &options, &Compat::for_model(model));
                    // pi 1.6 differs from these 0.73 bodies in two ways: no `strict` on
                    // tools (unless models.json asks for it), and thinking of another
                    // model dropped instead of glued to the reply as text.
                    let mut expected = expected.clone();
                    for tool in expected["tools"].as_array_mut().into_iter().flatten() {
                        tool["function"].as_object_mut().unwrap().remove("strict");
                    }
                    if let Some(fix) = pi16_thinking_fix(scenario, checked + 1) {
                        fix(&mut expected);
                    }
                    pretty_assertions::assert_eq!(
                        &body,
                        &expected,
                        "{scenario} request {}",
                        checked + 1
                    );
                    checked += 1;
                }
                history.push(msg);
            }
            _ => {}
        }
    }
    assert_eq!(
        checked,
        requests.len(),
        "{scenario}: every request was compared"
    );
}

/// Where pi 0.73 sent another model's thinking glued to the reply, the text pi 1.6 sends.
#[allow(clippy::type_complexity)]
fn pi16_thinking_fix(scenario: &str, request: usize) -> Option<Box<dyn Fn(&mut Value)>> {
    (scenario == "session-name-and-model-change" && request == 3).then(|| {
        Box::new(|body: &mut Value| {
            for m in body["messages"].as_array_mut().unwrap() {
                if let Some(text) = m["content"].as_str()
                    && m["role"] == "assistant"
                    && let Some((_, reply)) = text.split_once("Let me think briefly.")
                {
                    m["content"] = Value::from(reply.to_string());
                }
            }
        }) as Box<dyn Fn(&mut Value)>
    })
}

#[test]
fn bodies_for_the_basic_tools_corpus_equal_what_pi_sent() {
    assert_bodies_match_corpus("basic-tools");
}

#[test]
fn bodies_after_switching_to_a_reasoning_model_and_back_equal_what_pi_sent() {
    // Request 3: pi 0.73 replayed mock-model-2's thinking as text glued to the reply;
    // pi 1.6 drops it.
    assert_bodies_match_corpus("session-name-and-model-change");
}

fn model(provider: &str, base_url: &str, reasoning: bool, compat: Option<Value>) -> Model {
    Model {
        id: "m".into(),
        name: "m".into(),
        api: Api::OpenAiCompletions,
        provider: provider.into(),
        base_url: base_url.into(),
        reasoning,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 1000,
        max_tokens: 100,
        headers: Default::default(),
        compat,
        extras: Default::default(),
    }
}

fn simple_context() -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::User(crate::ai::message::UserMessage::text(
            "hi", 1,
        ))],
        tools: vec![],
    }
}

#[test]
fn compat_defaults_follow_provider_and_url_detection() {
    let openai = Compat::for_model(&model("openai", "https://api.openai.com/v1", true, None));
    assert!(
        openai.supports_store && openai.supports_developer_role && !openai.use_max_tokens_field
    );
    let xai = Compat::for_model(&model("xai", "https://api.x.ai/v1", true, None));
    assert!(!xai.supports_store && !xai.supports_developer_role && !xai.supports_reasoning_effort);
    let deepseek = Compat::for_model(&model("x", "https://api.deepseek.com", true, None));
    assert_eq!(deepseek.thinking_format, ThinkingFormat::DeepSeek);
    assert!(deepseek.requires_reasoning_content_on_assistant_messages);
    let router = Compat::for_model(&model(
        "openrouter",
        "https://openrouter.ai/api/v1",
        true,
        None,
    ));
    assert_eq!(router.thinking_format, ThinkingFormat::OpenRouter);
    let chutes = Compat::for_model(&model("c", "https://llm.chutes.ai/v1", false, None));
    assert!(chutes.use_max_tokens_field);
    let overridden = Compat::for_model(&model(
        "xai",
        "https://api.x.ai/v1",
        true,
        Some(
            json!({"supportsStore": true, "maxTokensField": "max_tokens", "thinkingFormat": "qwen"}),
        ),
    ));
    assert!(overridden.supports_store && overridden.use_max_tokens_field);
    assert_eq!(overridden.thinking_format, ThinkingFormat::Qwen);
}

#[test]
fn reasoning_models_get_developer_role_and_effort() {
    let m = model(
        "openai",
        "https://api.openai.com/v1",
        true,
        Some(json!({"reasoningEffortMap": {"high": "very-high"}})),
    );
    let options = StreamOptions {
        thinking: ThinkingLevel::High,
        session_id: Some("sess-1".into()),
        ..StreamOptions::default()
    };
    let body = build_body(&m, &simple_context(), &options, &Compat::for_model(&m));
    // A 1000-token window leaves no room after the 4096-token margin: pi 1.6 asks for 1.
    assert_eq!(
        body,
        json!({
            "model": "m",
            "messages": [{"role": "developer", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "stream": true,
            "prompt_cache_key": "sess-1",
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 1,
            "reasoning_effort": "very-high",
        })
    );
}

#[test]
fn thinking_formats_of_other_servers() {
    let options = StreamOptions {
        thinking: ThinkingLevel::Medium,
        ..StreamOptions::default()
    };
    let pick = |m: &Model| {
        let body = build_body(m, &simple_context(), &options, &Compat::for_model(m));
        let mut keep = Map::new();
        for k in [
            "reasoning_effort",
            "reasoning",
            "thinking",
            "enable_thinking",
            "chat_template_kwargs",
        ] {
            if let Some(v) = body.get(k) {
                keep.insert(k.into(), v.clone());
            }
        }
        Value::Object(keep)
    };
    assert_eq!(
        pick(&model("deepseek", "https://api.deepseek.com", true, None)),
        json!({"thinking": {"type": "enabled"}, "reasoning_effort": "medium"})
    );
    assert_eq!(
        pick(&model(
            "openrouter",
            "https://openrouter.ai/api/v1",
            true,
            None
        )),
        json!({"reasoning": {"effort": "medium"}})
    );
    assert_eq!(
        pick(&model("zai", "https://api.z.ai/api/paas/v4", true, None)),
        json!({"enable_thinking": true})
    );
    assert_eq!(
        pick(&model(
            "local",
            "http://localhost:8000/v1",
            true,
            Some(json!({"thinkingFormat": "qwen-chat-template"}))
        )),
        json!({"chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}})
    );
    assert_eq!(
        pick(&model("xai", "https://api.x.ai/v1", true, None)),
        json!({})
    );
}

#[test]
fn assistant_history_conversion_handles_thinking_signatures_and_compat_flags() {
    let m = model(
        "local",
        "http://localhost/v1",
        true,
        Some(json!({"requiresToolResultName": true, "requiresAssistantAfterToolResult": true})),
    );
    let assistant = AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: Some("reasoning_content".into()),
                ..Default::default()
            }),
            AssistantBlock::Text(TextContent::new("calling")),
            AssistantBlock::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "a"}),
                ..Default::default()
            }),
        ],
        api: "openai-completions".into(),
        provider: "local".into(),
        model: "m".into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let context = Context {
        system_prompt: None,
        messages: vec![
            Message::User(crate::ai::message::UserMessage::text("hi", 1)),
            Message::Assistant(assistant),
            Message::ToolResult(crate::ai::message::ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                content: vec![UserBlock::text("data")],
                ..Default::default()
            }),
            Message::User(crate::ai::message::UserMessage::text("next", 2)),
        ],
        tools: vec![],
    };
    let msgs = convert_messages(&m, &context, &Compat::for_model(&m));
    assert_eq!(
        Value::Array(msgs),
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": "calling", "reasoning_content": "hmm",
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
            {"role": "tool", "content": "data", "tool_call_id": "c1", "name": "read"},
            {"role": "assistant", "content": "I have processed the tool results."},
            {"role": "user", "content": [{"type": "text", "text": "next"}]},
        ])
    );
}

#[test]
fn openrouter_anthropic_models_get_cache_markers() {
    let mut m = model("openrouter", "https://openrouter.ai/api/v1", false, None);
    m.id = "anthropic/claude-sonnet-4".into();
    let mut context = simple_context();
    context.tools = vec![ToolSpec {
        name: "read".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
    }];
    let options = StreamOptions {
        cache_retention: CacheRetention::Long,
        ..StreamOptions::default()
    };
    let body = build_body(&m, &context, &options, &Compat::for_model(&m));
    let marker = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], marker);
    assert_eq!(body["messages"][1]["content"][0]["cache_control"], marker);
    assert_eq!(body["tools"][0]["cache_control"], marker);
    assert_eq!(body["prompt_cache_retention"], json!("24h"));
}

#[test]
fn error_messages_read_like_the_openai_sdk() {
    assert_eq!(error_message(400, ""), "400 status code (no body)");
    assert_eq!(
        error_message(
            429,
            r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#
        ),
        "429 Rate limit reached"
    );
    assert_eq!(error_message(502, "Bad Gateway"), "502 Bad Gateway");
    assert_eq!(
        error_message(
            400,
            r#"{"error":{"message":"Provider returned error","metadata":{"raw":"upstream said no"}}}"#
        ),
        "400 Provider returned error\nupstream said no"
    );
}

/// Mistral's chat-completions stream for magistral models: `delta.content` is an array of
/// thinking and text parts.
#[test]
fn content_arrays_with_thinking_parts_are_decoded() {
    use crate::ai::providers::wire::{SseDecoder, decode_chunk};
    use crate::ai::sse::SseParser;
    let m = model("mistral", "https://api.mistral.ai/v1", true, None);
    let chunks = [
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant",
            "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me "}]}]}}]}),
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {
            "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "think."}]}]}}]}),
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {
            "content": [{"type": "text", "text": "The answer"}]}}]}),
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"content": " is 4."},
            "finish_reason": "stop"}]}),
    ];
    let body: String = chunks
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .chain(["data: [DONE]\n\n".to_string()])
        .collect();
    let mut out = crate::ai::providers::output::Output::new(&m);
    let mut decoder = Decoder::new(&m);
    let mut parser = SseParser::new();
    decode_chunk(&mut parser, &mut decoder, body.as_bytes(), &mut out).unwrap();
    decoder.finish(&mut out).unwrap();
    let blocks: Vec<String> = out
        .message
        .content
        .iter()
        .map(|b| match b {
            AssistantBlock::Thinking(t) => format!("thinking: {}", t.thinking),
            AssistantBlock::Text(t) => format!("text: {}", t.text),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        blocks,
        ["thinking: Let me think.", "text: The answer is 4."]
    );
    assert_eq!(out.message.stop_reason, StopReason::Stop);
}

#[test]
fn sampling_params_priority_and_prompt_cache_key_mode_shape_the_body_as_pi_16() {
    let mut m = model(
        "local",
        "http://127.0.0.1:8000/v1",
        true,
        Some(json!({"vllmPriority": -5, "promptCacheKeyMode": "enabled"})),
    );
    m.thinking_level_map = Some([("max".to_string(), Some("max".to_string()))].into());
    m.extras.sampling_params =
        serde_json::from_value(json!({"temperature": 1.0, "top_p": 0.95})).ok();
    m.extras.sampling_params_by_thinking_level =
        serde_json::from_value(json!({"max": {"top_k": 40}, "off": {"temperature": 0.7}})).ok();
    let options = |level| StreamOptions {
        thinking: level,
        temperature: Some(0.1),
        session_id: Some("sess-1".into()),
        ..StreamOptions::default()
    };
    let body = |level| {
        build_body(
            &m,
            &simple_context(),
            &options(level),
            &Compat::for_model(&m),
        )
    };
    let max = body(ThinkingLevel::Max);
    assert_eq!(
        max["prompt_cache_key"],
        json!("sess-1"),
        "enabled sends it to any server"
    );
    assert_eq!(max["priority"], json!(-5));
    assert_eq!(
        max["temperature"],
        json!(1),
        "sampling params win over named fields"
    );
    assert_eq!(max["top_p"], json!(0.95));
    assert_eq!(max["top_k"], json!(40));
    assert_eq!(max["reasoning_effort"], json!("max"));
    let off = body(ThinkingLevel::Off);
    assert_eq!(off["temperature"], json!(0.7));
    assert!(off.get("top_k").is_none());

    m.compat = Some(json!({"promptCacheKeyMode": "disabled"}));
    m.base_url = "https://api.openai.com/v1".into();
    let disabled = build_body(
        &m,
        &simple_context(),
        &options(ThinkingLevel::High),
        &Compat::for_model(&m),
    );
    assert!(disabled.get("prompt_cache_key").is_none());
    assert!(disabled.get("priority").is_none());
}
