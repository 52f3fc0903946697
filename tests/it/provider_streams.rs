//! Every wire API against the loopback mock model: the final assistant message, the
//! event sequence and the request body, for success and for each way a request fails.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::sync::{Arc, Mutex};

use crate::support::mock_llm::{MockLlm, Reply, Script, ScriptError, ScriptToolCall, ScriptUsage};
use futures::StreamExt;
use pi::ai::auth::ApiKey;
use pi::ai::message::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, ToolSpec, UserMessage,
};
use pi::ai::model::{Api, InputKind, Model, ModelCost, ThinkingLevel};
use pi::ai::providers::{StreamOptions, stream};
use pi::ai::retry::{RetryNotice, RetryPolicy};
use pi::ai::stream::{PartialMessage, StreamEvent, with_role};
use serde_json::{Value, json};

fn model(api: Api, server: &MockLlm) -> Model {
    let (base_url, id) = match api {
        Api::AnthropicMessages => (server.url(), "claude-sonnet-4-5"),
        Api::GoogleGenerativeAi => (format!("{}/v1beta", server.url()), "gemini-2.5-flash"),
        _ => (format!("{}/v1", server.url()), "mock-model"),
    };
    Model {
        id: id.into(),
        name: "Mock".into(),
        api,
        provider: "mock".into(),
        base_url,
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
        context_window: 200_000,
        max_tokens: 8_000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn context(with_tools: bool) -> Context {
    let tools = if with_tools {
        vec![
            ToolSpec {
                name: "read".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            },
            ToolSpec {
                name: "bash".into(),
                description: "Run a command".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
            },
        ]
    } else {
        Vec::new()
    };
    Context {
        system_prompt: Some("You are a test assistant.".into()),
        messages: vec![Message::User(UserMessage::text("Hello?", 1))],
        tools,
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(ApiKey::new("test-key")),
        retry: RetryPolicy::none(),
        ..StreamOptions::default()
    }
}

/// Runs one request; returns every event and the final message.
async fn run(
    model: &Model,
    ctx: &Context,
    opts: StreamOptions,
) -> (Vec<StreamEvent>, AssistantMessage) {
    let mut s = stream(model, ctx, opts);
    let mut events = Vec::new();
    while let Some(e) = s.next().await {
        events.push(e);
    }
    let last = match events.last() {
        Some(StreamEvent::Done { message, .. }) => message.clone(),
        Some(StreamEvent::Error { error, .. }) => error.clone(),
        other => panic!("stream did not end with done/error: {other:?}"),
    };
    // The consumer-side mirror must agree with the final message.
    let mut partial = PartialMessage::default();
    for e in &events[..events.len() - 1] {
        partial.apply(e);
    }
    if last.stop_reason != StopReason::Error && last.stop_reason != StopReason::Aborted {
        assert_eq!(
            partial.message.content, last.content,
            "partial rebuild differs"
        );
    }
    (events, last)
}

/// The message as pi would store it, minus the clock and generated Gemini call ids.
fn render(message: &AssistantMessage) -> String {
    let mut m = message.clone();
    m.timestamp = 0;
    for block in &mut m.content {
        if let AssistantBlock::ToolCall(tc) = block
            && m.api == "google-generative-ai"
        {
            assert!(tc.id.starts_with(&format!("{}_", tc.name)), "{}", tc.id);
            tc.id = format!("{}_<generated>", tc.name);
        }
    }
    serde_json::to_string_pretty(&with_role(&m)).unwrap_or_default()
}

/// Event types in order, with runs of deltas collapsed: `text_delta×3`.
fn event_summary(events: &[StreamEvent]) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for e in events {
        let name = format!(
            "{}@{}",
            e.type_name(),
            content_index(e).map(|i| i.to_string()).unwrap_or_default()
        );
        match out.last_mut() {
            Some((last, n)) if *last == name && name.contains("delta") => *n += 1,
            _ => out.push((name, 1)),
        }
    }
    out.iter()
        .map(|(n, c)| {
            let n = n.trim_end_matches('@').to_string();
            if *c > 1 { format!("{n}×{c}") } else { n }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn content_index(e: &StreamEvent) -> Option<usize> {
    match e {
        StreamEvent::TextStart { content_index }
        | StreamEvent::TextDelta { content_index, .. }
        | StreamEvent::TextEnd { content_index, .. }
        | StreamEvent::ThinkingStart { content_index }
        | StreamEvent::ThinkingDelta { content_index, .. }
        | StreamEvent::ThinkingEnd { content_index, .. }
        | StreamEvent::ToolCallStart { content_index, .. }
        | StreamEvent::ToolCallDelta { content_index, .. }
        | StreamEvent::ToolCallEnd { content_index, .. } => Some(*content_index),
        _ => None,
    }
}

fn reply(text: &str) -> Reply {
    Reply {
        text: Some(text.into()),
        ..Reply::default()
    }
}

fn auth_header(api: &Api, req: &crate::support::mock_llm::RecordedRequest) -> String {
    match api {
        Api::AnthropicMessages => format!("x-api-key: {}", req.header("x-api-key").unwrap_or("-")),
        Api::GoogleGenerativeAi => format!(
            "x-goog-api-key: {}",
            req.header("x-goog-api-key").unwrap_or("-")
        ),
        _ => format!(
            "authorization: {}",
            req.header("authorization").unwrap_or("-")
        ),
    }
}

async fn plain_text(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![reply("Hello there, friend.")]));
    let m = model(api.clone(), &server);
    let (events, msg) = run(&m, &context(false), options()).await;
    let req = &server.requests()[0];
    format!(
        "{} {}\n{}\n{}",
        req.path,
        auth_header(&api, req),
        event_summary(&events),
        render(&msg)
    )
}

async fn thinking_and_text(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        thinking: Some("The user greets me. I should greet back.".into()),
        text: Some("Hi!".into()),
        chunk_size: Some(12),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let opts = StreamOptions {
        thinking: ThinkingLevel::High,
        ..options()
    };
    let (events, msg) = run(&m, &context(false), opts).await;
    let body = serde_json::to_string_pretty(&server.requests()[0].body).unwrap_or_default();
    format!(
        "{}\n{}\nrequest body:\n{body}",
        event_summary(&events),
        render(&msg)
    )
}

async fn two_tool_calls(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        text: Some("Checking.".into()),
        tool_calls: vec![
            ScriptToolCall {
                name: "read".into(),
                arguments: json!({"path": "src/main.rs"}),
            },
            ScriptToolCall {
                name: "bash".into(),
                arguments: json!({"command": "ls -la | head -n 5"}),
            },
        ],
        chunk_size: Some(4),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let (events, msg) = run(&m, &context(true), options()).await;
    let body = &server.requests()[0].body;
    let tools = body.get("tools").cloned().unwrap_or(Value::Null);
    format!(
        "{}\n{}\ntools sent:\n{}",
        event_summary(&events),
        render(&msg),
        serde_json::to_string_pretty(&tools).unwrap_or_default()
    )
}

async fn usage_and_cost(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        text: Some("ok".into()),
        usage: Some(ScriptUsage {
            input: 1000,
            output: 500,
            cache_read: 2000,
            cache_write: 400,
        }),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let (_, msg) = run(&m, &context(false), options()).await;
    serde_json::to_string_pretty(&msg.usage).unwrap_or_default()
}

async fn error_body(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        error: Some(ScriptError {
            status: 400,
            body: json!({"error": {"type": "invalid_request_error", "message": "prompt is too long: 213462 tokens > 200000 maximum"}}),
        }),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let (events, msg) = run(&m, &context(false), options()).await;
    assert!(pi::ai::overflow::is_context_overflow(
        &msg,
        m.context_window
    ));
    format!("{}\n{}", event_summary(&events), render(&msg))
}

async fn retry_after_429(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![
        Reply {
            error: Some(ScriptError {
                status: 429,
                body: json!({"error": {"message": "Rate limited, slow down"}}),
            }),
            retry_after: Some(0.05),
            ..Reply::default()
        },
        reply("Recovered."),
    ]));
    let m = model(api, &server);
    let notices: Arc<Mutex<Vec<RetryNotice>>> = Arc::default();
    let sink = notices.clone();
    let opts = StreamOptions {
        retry: RetryPolicy::default(),
        on_retry: Some(Arc::new(move |n| {
            if let Ok(mut v) = sink.lock() {
                v.push(n);
            }
        })),
        ..options()
    };
    let (events, msg) = run(&m, &context(false), opts).await;
    let notices = notices.lock().map(|n| n.clone()).unwrap_or_default();
    format!(
        "requests: {}\nnotices: {notices:?}\n{}\ntext: {}",
        server.requests().len(),
        event_summary(&events),
        msg.text()
    )
}

async fn dropped_mid_stream(api: Api) -> String {
    let full = "This answer will be cut off somewhere in the middle of it.";
    let server = MockLlm::start(Script::sequence(vec![Reply {
        text: Some(full.into()),
        chunk_size: Some(5),
        drop_after_bytes: Some(900),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let (events, msg) = run(&m, &context(false), options()).await;
    assert_eq!(msg.stop_reason, StopReason::Error);
    let text = msg.text();
    assert!(
        !text.is_empty() && full.starts_with(&text),
        "partial text is kept: {text:?}"
    );
    let err = msg.error_message.clone().unwrap_or_default();
    assert!(
        err.starts_with("Connection lost while streaming the response"),
        "{err}"
    );
    assert!(pi::ai::retry::is_retryable_error(&err));
    // The transport's own wording after the prefix is not ours to pin down.
    let mut shown = msg;
    shown.error_message = Some("Connection lost while streaming the response: …".into());
    format!("{}\n{}", event_summary(&events), render(&shown))
}

async fn malformed_line(api: Api) -> String {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        text: Some("never mind".into()),
        malformed_line: true,
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let (events, msg) = run(&m, &context(false), options()).await;
    format!(
        "{}\nstop: {:?}\nerror: {}",
        event_summary(&events),
        msg.stop_reason,
        msg.error_message.unwrap_or_default()
    )
}

async fn cancelled_mid_stream(api: Api) -> String {
    let full = "abcdefghijklmnopqrstuvwxyz";
    let server = MockLlm::start(Script::sequence(vec![Reply {
        text: Some(full.into()),
        chunk_size: Some(1),
        delay_ms: Some(40),
        ..Reply::default()
    }]));
    let m = model(api, &server);
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut s = stream(&m, &context(false), opts);
    let mut last = None;
    while let Some(e) = s.next().await {
        if matches!(e, StreamEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        last = Some(e);
    }
    let Some(StreamEvent::Error { reason, error }) = last else {
        panic!("expected an error event, got {last:?}");
    };
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    let text = error.text();
    assert!(
        !text.is_empty() && text.len() < full.len() && full.starts_with(&text),
        "{text}"
    );
    "ok".into()
}

macro_rules! api_tests {
    ($module:ident, $api:expr) => {
        mod $module {
            use super::*;

            #[tokio::test]
            async fn plain_text_reply_is_streamed_into_one_text_block() {
                insta::assert_snapshot!(plain_text($api).await);
            }

            #[tokio::test]
            async fn thinking_then_text_with_high_effort_request() {
                insta::assert_snapshot!(thinking_and_text($api).await);
            }

            #[tokio::test]
            async fn two_tool_calls_with_arguments_split_across_fragments() {
                insta::assert_snapshot!(two_tool_calls($api).await);
            }

            #[tokio::test]
            async fn usage_is_read_and_priced_per_million_tokens() {
                insta::assert_snapshot!(usage_and_cost($api).await);
            }

            #[tokio::test]
            async fn an_error_body_ends_the_stream_with_its_message() {
                insta::assert_snapshot!(error_body($api).await);
            }

            #[tokio::test]
            async fn a_429_is_retried_after_the_requested_delay_and_reported() {
                insta::assert_snapshot!(retry_after_429($api).await);
            }

            #[tokio::test]
            async fn a_connection_dropped_mid_stream_keeps_the_partial_text() {
                insta::assert_snapshot!(dropped_mid_stream($api).await);
            }

            #[tokio::test]
            async fn a_malformed_event_line_ends_the_stream_with_an_error() {
                insta::assert_snapshot!(malformed_line($api).await);
            }

            #[tokio::test]
            async fn cancelling_mid_stream_aborts_and_keeps_the_partial_text() {
                assert_eq!(cancelled_mid_stream($api).await, "ok");
            }
        }
    };
}

api_tests!(openai_completions, Api::OpenAiCompletions);
api_tests!(openai_responses, Api::OpenAiResponses);
api_tests!(anthropic, Api::AnthropicMessages);
api_tests!(google, Api::GoogleGenerativeAi);

#[tokio::test]
async fn a_server_requested_delay_above_the_cap_fails_at_once() {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        error: Some(ScriptError {
            status: 429,
            body: json!({"error": {"message": "quota exhausted"}}),
        }),
        retry_after: Some(3600.0),
        ..Reply::default()
    }]));
    let m = model(Api::OpenAiCompletions, &server);
    let opts = StreamOptions {
        retry: RetryPolicy::default(),
        ..options()
    };
    let (_, msg) = run(&m, &context(false), opts).await;
    assert_eq!(server.requests().len(), 1);
    insta::assert_snapshot!(msg.error_message.unwrap_or_default(), @"429 quota exhausted (the server asked to retry in 3600s, longer than the 60s maximum retry delay; raise retry.provider.maxRetryDelayMs to wait that long)");
}

#[tokio::test]
async fn a_zero_cap_on_server_requested_delays_means_no_cap() {
    // pi: `retry.provider.maxRetryDelayMs: 0` disables the cap, it does not refuse every wait.
    let server = MockLlm::start(Script::sequence(vec![
        Reply {
            error: Some(ScriptError {
                status: 429,
                body: json!({"error": {"message": "slow down"}}),
            }),
            retry_after: Some(0.2),
            ..Reply::default()
        },
        reply("after the wait"),
    ]));
    let m = model(Api::OpenAiCompletions, &server);
    let opts = StreamOptions {
        retry: RetryPolicy {
            max_delay_ms: 0,
            ..RetryPolicy::default()
        },
        ..options()
    };
    let (_, msg) = run(&m, &context(false), opts).await;
    assert_eq!(server.requests().len(), 2);
    assert_eq!(msg.stop_reason, StopReason::Stop, "{:?}", msg.error_message);
}

#[tokio::test]
async fn retries_stop_after_the_configured_number_of_attempts() {
    let err = || Reply {
        error: Some(ScriptError {
            status: 503,
            body: Value::String("upstream unavailable".into()),
        }),
        retry_after: Some(0.01),
        ..Reply::default()
    };
    let server = MockLlm::start(Script::sequence(vec![
        err(),
        err(),
        err(),
        reply("too late"),
    ]));
    let m = model(Api::OpenAiCompletions, &server);
    let opts = StreamOptions {
        retry: RetryPolicy {
            max_retries: 2,
            ..RetryPolicy::default()
        },
        ..options()
    };
    let (_, msg) = run(&m, &context(false), opts).await;
    assert_eq!(server.requests().len(), 3);
    assert_eq!(msg.stop_reason, StopReason::Error);
    assert_eq!(
        msg.error_message.as_deref(),
        Some("503 upstream unavailable")
    );
}

#[tokio::test]
async fn a_refused_connection_is_an_error_event_not_a_panic() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut m = model(Api::OpenAiCompletions, &MockLlm::start(Script::default()));
    m.base_url = format!("http://127.0.0.1:{port}/v1");
    let (events, msg) = run(&m, &context(false), options()).await;
    assert_eq!(event_summary(&events), "start error");
    assert_eq!(msg.stop_reason, StopReason::Error);
    let err = msg.error_message.unwrap_or_default();
    assert!(err.starts_with("Connection error:"), "{err}");
    assert!(!err.contains("test-key"));
}

#[tokio::test]
async fn an_unsupported_api_fails_with_a_clear_message() {
    let server = MockLlm::start(Script::default());
    let m = model(Api::Other("made-up-api".into()), &server);
    let (_, msg) = run(&m, &context(false), options()).await;
    insta::assert_snapshot!(msg.error_message.unwrap_or_default(), @r#"The "made-up-api" API is not supported by pi-rs (model mock/mock-model). Supported: anthropic-messages, openai-completions, openai-responses, google-generative-ai, mistral-conversations, azure-openai-responses, openai-codex-responses, google-vertex, bedrock-converse-stream."#);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_key_echoed_in_an_error_body_is_redacted() {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        error: Some(ScriptError {
            status: 401,
            body: json!({"error": {"message": "Incorrect API key provided: test-key"}}),
        }),
        ..Reply::default()
    }]));
    let m = model(Api::OpenAiCompletions, &server);
    let (_, msg) = run(&m, &context(false), options()).await;
    assert_eq!(
        msg.error_message.as_deref(),
        Some("401 Incorrect API key provided: <redacted>")
    );
}

#[tokio::test]
async fn anthropic_oauth_uses_bearer_auth_and_maps_claude_code_tool_names_back() {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        tool_calls: vec![ScriptToolCall {
            name: "Read".into(),
            arguments: json!({"path": "a.txt"}),
        }],
        ..Reply::default()
    }]));
    let m = model(Api::AnthropicMessages, &server);
    let opts = StreamOptions {
        api_key: Some(ApiKey::new("sk-ant-oat01-secret")),
        ..options()
    };
    let (_, msg) = run(&m, &context(true), opts).await;
    let names: Vec<&str> = msg.tool_calls().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["read"]);
    let req = &server.requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some("Bearer sk-ant-oat01-secret")
    );
    assert_eq!(req.header("x-api-key"), None);
    assert_eq!(req.body["tools"][0]["name"], json!("Read"));
    assert_eq!(
        req.body["system"][0]["text"],
        json!("You are Claude Code, Anthropic's official CLI for Claude.")
    );
}

#[tokio::test]
async fn a_history_from_openai_responses_replays_cleanly_to_anthropic() {
    use pi::ai::message::{TextContent, ThinkingContent, ToolCall, ToolResultMessage};
    let server = MockLlm::start(Script::sequence(vec![reply("Continuing.")]));
    let m = model(Api::AnthropicMessages, &server);
    let foreign = AssistantMessage {
        content: vec![
            AssistantBlock::Thinking(ThinkingContent {
                thinking: "I need the file.".into(),
                thinking_signature: Some(
                    r#"{"type":"reasoning","id":"rs_1","encrypted_content":"ENC"}"#.into(),
                ),
                ..Default::default()
            }),
            AssistantBlock::Text(TextContent {
                text: "Reading it.".into(),
                text_signature: Some(r#"{"v":1,"id":"msg_1"}"#.into()),
                ..Default::default()
            }),
            AssistantBlock::ToolCall(ToolCall {
                id: "call_1|fc_abc+/=".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                ..Default::default()
            }),
        ],
        api: "openai-responses".into(),
        provider: "openai".into(),
        model: "gpt-5".into(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    };
    let mut ctx = context(true);
    ctx.messages.push(Message::Assistant(foreign));
    ctx.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: "call_1|fc_abc+/=".into(),
        tool_name: "read".into(),
        content: vec![pi::ai::message::UserBlock::text("hello")],
        ..Default::default()
    }));
    let (_, msg) = run(&m, &ctx, options()).await;
    assert_eq!(msg.text(), "Continuing.");
    let messages = &server.requests()[0].body["messages"];
    assert_eq!(
        messages,
        &json!([
            {"role": "user", "content": [{"type": "text", "text": "Hello?"}]},
            // The other model's thinking is dropped (pi 1.6).
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "call_1_fc_abc___", "name": "read", "input": {"path": "a.txt"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1_fc_abc___", "content": "hello", "is_error": false,
                 "cache_control": {"type": "ephemeral"}},
            ]},
        ])
    );
}

#[tokio::test]
async fn corpus_scripts_drive_the_mock_with_rules_before_the_sequence() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus-config");
    let mut parsed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("script.json");
        if path.exists() {
            crate::support::mock_llm::Script::from_json(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            parsed += 1;
        }
    }
    assert!(parsed >= 7, "all corpus scripts parse ({parsed})");
    let text = std::fs::read_to_string(dir.join("tree-branch-summary/script.json")).unwrap();
    let server = MockLlm::start(crate::support::mock_llm::Script::from_json(&text).unwrap());
    let m = model(Api::OpenAiCompletions, &server);
    let mut summary_ctx = context(false);
    summary_ctx.messages = vec![Message::User(UserMessage::text(
        "Create a structured summary of this conversation branch: ...",
        1,
    ))];
    let (_, first) = run(&m, &summary_ctx, options()).await;
    assert!(
        first.text().starts_with("## Goal\nRead notes.txt"),
        "{}",
        first.text()
    );
    let (_, second) = run(&m, &context(true), options()).await;
    assert_eq!(second.text(), "Reading notes.txt.");
    assert_eq!(
        second
            .tool_calls()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["read"]
    );
}
