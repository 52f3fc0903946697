//! The wire APIs added after the first four, decoding their recorded formats from the
//! loopback mock: Mistral's SSE (content lists with thinking), Azure's and the Codex
//! backend's Responses SSE, Vertex's Gemini SSE and Bedrock's binary event stream —
//! text, thinking, tool calls, usage and cost, error statuses, in-stream errors, cut
//! connections and cancellation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use crate::support::mock_llm::{
    MockLlm, RecordedRequest, Reply, Script, ScriptError, ScriptToolCall, ScriptUsage,
};
use futures::StreamExt;
use pi::ai::auth::ApiKey;
use pi::ai::message::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, ToolSpec, UserMessage,
};
use pi::ai::model::{Api, InputKind, Model, ModelCost, ThinkingLevel};
use pi::ai::providers::{StreamOptions, stream};
use pi::ai::retry::RetryPolicy;
use pi::ai::stream::{PartialMessage, StreamEvent};
use serde_json::json;

/// The model of `api` served by `server`, under the base URL each API expects there.
fn model(api: Api, server: &MockLlm) -> Model {
    let (base, id, provider) = match api {
        Api::MistralConversations => (
            format!("{}/mistral", server.url()),
            "magistral-medium-latest",
            "mistral",
        ),
        Api::AzureOpenAiResponses => (
            format!("{}/openai/v1", server.url()),
            "gpt-5",
            "azure-openai-responses",
        ),
        Api::OpenAiCodexResponses => (
            format!("{}/backend-api", server.url()),
            "gpt-5.1-codex",
            "openai-codex",
        ),
        Api::GoogleVertex => (server.url(), "gemini-2.5-pro", "google-vertex"),
        Api::BedrockConverseStream => (
            server.url(),
            "anthropic.claude-sonnet-4-5",
            "amazon-bedrock",
        ),
        other => panic!("not a new API: {other}"),
    };
    Model {
        id: id.into(),
        name: id.into(),
        api,
        provider: provider.into(),
        base_url: base,
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

/// The APIs driven in-process here. Bedrock takes its credentials only from the
/// environment and AWS files (as pi), which tests leave alone: its stream is decoded
/// below from the mock's bytes, and driven end to end by the binary in `wire_parity`.
const NEW_APIS: [Api; 4] = [
    Api::MistralConversations,
    Api::AzureOpenAiResponses,
    Api::OpenAiCodexResponses,
    Api::GoogleVertex,
];

/// A Codex token (JWT with the account claim) works for every API as a plain key too.
fn key() -> ApiKey {
    use base64::Engine as _;
    let enc = |v: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    ApiKey::new(format!(
        "{}.{}.sig",
        enc(json!({"alg": "none"})),
        enc(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}}))
    ))
}

fn context() -> Context {
    Context {
        system_prompt: Some("You are a test assistant.".into()),
        messages: vec![Message::User(UserMessage::text("Hello?", 1))],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

fn options(_api: &Api) -> StreamOptions {
    StreamOptions {
        api_key: Some(key()),
        thinking: ThinkingLevel::Low,
        retry: RetryPolicy::none(),
        ..StreamOptions::default()
    }
}

async fn run(model: &Model, opts: StreamOptions) -> (Vec<StreamEvent>, AssistantMessage) {
    let mut s = stream(model, &context(), opts);
    let mut events = Vec::new();
    while let Some(e) = s.next().await {
        events.push(e);
    }
    let last = match events.last() {
        Some(StreamEvent::Done { message, .. }) => message.clone(),
        Some(StreamEvent::Error { error, .. }) => error.clone(),
        other => panic!("stream did not end with done/error: {other:?}"),
    };
    let mut partial = PartialMessage::default();
    for e in &events[..events.len() - 1] {
        partial.apply(e);
    }
    if !matches!(last.stop_reason, StopReason::Error | StopReason::Aborted) {
        assert_eq!(
            partial.message.content, last.content,
            "partial rebuild differs"
        );
    }
    (events, last)
}

fn full_reply() -> Reply {
    Reply {
        thinking: Some("Let me look.".into()),
        text: Some("Reading it now.".into()),
        tool_calls: vec![ScriptToolCall {
            name: "read".into(),
            arguments: json!({"path": "notes.txt"}),
        }],
        chunk_size: Some(4),
        usage: Some(ScriptUsage {
            input: 1000,
            output: 200,
            cache_read: 0,
            cache_write: 0,
        }),
        ..Reply::default()
    }
}

fn only_request(server: &MockLlm) -> RecordedRequest {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    requests.into_iter().next().unwrap()
}

#[tokio::test]
async fn thinking_text_tool_calls_and_usage_decode_for_every_new_api() {
    for api in NEW_APIS {
        let server = MockLlm::start(Script::sequence(vec![full_reply()]));
        let m = model(api.clone(), &server);
        let (events, msg) = run(&m, options(&api)).await;
        let kinds: Vec<&str> = msg
            .content
            .iter()
            .map(|b| match b {
                AssistantBlock::Thinking(_) => "thinking",
                AssistantBlock::Text(_) => "text",
                AssistantBlock::ToolCall(_) => "toolCall",
            })
            .collect();
        assert_eq!(kinds, ["thinking", "text", "toolCall"], "{api}: {msg:?}");
        let AssistantBlock::Thinking(t) = &msg.content[0] else {
            unreachable!()
        };
        assert_eq!(t.thinking.trim_end(), "Let me look.", "{api}");
        let AssistantBlock::Text(text) = &msg.content[1] else {
            unreachable!()
        };
        assert_eq!(text.text, "Reading it now.", "{api}");
        let AssistantBlock::ToolCall(tc) = &msg.content[2] else {
            unreachable!()
        };
        assert_eq!(
            (tc.name.as_str(), &tc.arguments),
            ("read", &json!({"path": "notes.txt"})),
            "{api}"
        );
        assert!(!tc.id.is_empty(), "{api}");
        assert_eq!(msg.stop_reason, StopReason::ToolUse, "{api}");
        assert_eq!(msg.api, api.as_str());
        assert_eq!((msg.usage.input, msg.usage.output), (1000, 200), "{api}");
        let expected_cost = 1000.0 * 3.0 / 1e6 + 200.0 * 15.0 / 1e6;
        assert!(
            (msg.usage.cost.total - expected_cost).abs() < 1e-12,
            "{api}: {:?}",
            msg.usage.cost
        );
        // Deltas arrived in pieces, not as one block.
        let text_deltas = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::TextDelta { .. }))
            .count();
        assert!(text_deltas >= 3, "{api}: {text_deltas} text deltas");
        only_request(&server);
    }
}

#[tokio::test]
async fn mistral_thinking_chunks_and_tool_ids_and_affinity() {
    let server = MockLlm::start(Script::sequence(vec![full_reply()]));
    let m = model(Api::MistralConversations, &server);
    let opts = StreamOptions {
        session_id: Some("sess-1".into()),
        ..options(&m.api)
    };
    let (_, msg) = run(&m, opts).await;
    let AssistantBlock::ToolCall(tc) = &msg.content[2] else {
        panic!("{msg:?}")
    };
    assert_eq!(tc.id, "mock01c00");
    let req = only_request(&server);
    assert_eq!(req.path, "/mistral/v1/chat/completions");
    assert_eq!(req.header("x-affinity"), Some("sess-1"));
    assert_eq!(req.body["prompt_mode"], "reasoning");
    assert_eq!(req.body["max_tokens"], 8000);
}

#[tokio::test]
async fn codex_and_azure_send_their_own_headers_and_urls() {
    let server = MockLlm::start(Script::sequence(vec![full_reply(), full_reply()]));
    let codex = model(Api::OpenAiCodexResponses, &server);
    let opts = StreamOptions {
        session_id: Some("sess-2".into()),
        ..options(&codex.api)
    };
    run(&codex, opts).await;
    let azure = model(Api::AzureOpenAiResponses, &server);
    run(&azure, options(&azure.api)).await;
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/backend-api/codex/responses");
    assert_eq!(reqs[0].header("chatgpt-account-id"), Some("acct-1"));
    assert_eq!(reqs[0].header("originator"), Some("pi"));
    assert_eq!(
        reqs[0].header("openai-beta"),
        Some("responses=experimental")
    );
    assert_eq!(reqs[0].header("session_id"), Some("sess-2"));
    assert_eq!(reqs[0].body["instructions"], "You are a test assistant.");
    assert_eq!(reqs[0].body["tools"][0]["strict"], serde_json::Value::Null);
    assert!(reqs[0].body.get("max_output_tokens").is_none());
    assert_eq!(reqs[1].path, "/openai/v1/responses?api-version=v1");
    assert_eq!(reqs[1].header("api-key"), Some(key().expose()));
    assert_eq!(reqs[1].header("authorization"), None);
    assert!(reqs[1].body.get("store").is_none());
}

#[tokio::test]
async fn error_statuses_become_pis_messages() {
    let cases = [
        (
            Api::MistralConversations,
            json!({"message": "Unauthorized"}),
            "Mistral API error (401): {\"message\":\"Unauthorized\"}",
        ),
        (
            Api::AzureOpenAiResponses,
            json!({"error": {"message": "bad key"}}),
            "401 bad key",
        ),
        (
            Api::OpenAiCodexResponses,
            json!({"error": {"message": "token expired"}}),
            "token expired",
        ),
        (
            Api::GoogleVertex,
            json!({"error": {"code": 401, "message": "nope"}}),
            "{\"error\":{\"code\":401,\"message\":\"nope\"}}",
        ),
    ];
    for (api, body, expected) in cases {
        let server = MockLlm::start(Script::sequence(vec![Reply {
            error: Some(ScriptError { status: 401, body }),
            ..Reply::default()
        }]));
        let (_, msg) = run(&model(api.clone(), &server), options(&api)).await;
        assert_eq!(msg.stop_reason, StopReason::Error, "{api}");
        assert_eq!(msg.error_message.as_deref(), Some(expected), "{api}");
    }
}

#[tokio::test]
async fn a_codex_usage_limit_gets_the_friendly_message() {
    let server = MockLlm::start(Script::sequence(vec![Reply {
        error: Some(ScriptError {
            status: 429,
            body: json!({"error": {"code": "usage_limit_reached", "plan_type": "PLUS"}}),
        }),
        ..Reply::default()
    }]));
    let m = model(Api::OpenAiCodexResponses, &server);
    let (_, msg) = run(&m, options(&m.api)).await;
    assert_eq!(
        msg.error_message.as_deref(),
        Some("You have hit your ChatGPT usage limit (plus plan).")
    );
}

#[tokio::test]
async fn a_cut_connection_keeps_the_partial_answer() {
    for api in NEW_APIS {
        let server = MockLlm::start(Script::sequence(vec![Reply {
            text: Some("x".repeat(400)),
            chunk_size: Some(10),
            drop_after_bytes: Some(1200),
            ..Reply::default()
        }]));
        let (_, msg) = run(&model(api.clone(), &server), options(&api)).await;
        assert_eq!(msg.stop_reason, StopReason::Error, "{api}: {msg:?}");
        let text = msg.text();
        assert!(
            !text.is_empty() && text.len() < 400,
            "{api}: {} chars",
            text.len()
        );
    }
}

#[tokio::test]
async fn cancelling_ends_with_aborted() {
    for api in NEW_APIS {
        let server = MockLlm::start(Script::sequence(vec![Reply {
            text: Some("slow answer".into()),
            chunk_size: Some(1),
            delay_ms: Some(200),
            ..Reply::default()
        }]));
        let opts = options(&api);
        let cancel = opts.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            cancel.cancel();
        });
        let (_, msg) = run(&model(api.clone(), &server), opts).await;
        assert_eq!(msg.stop_reason, StopReason::Aborted, "{api}");
        assert_eq!(
            msg.error_message.as_deref(),
            Some("Request was aborted"),
            "{api}"
        );
    }
}

/// The mock's Bedrock answer to `reply`, as raw bytes.
async fn bedrock_bytes(reply: Reply) -> Vec<u8> {
    let server = MockLlm::start(Script::sequence(vec![reply]));
    let response = reqwest::Client::new()
        .post(format!(
            "{}/model/anthropic.claude-sonnet-4-5/converse-stream",
            server.url()
        ))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.amazon.eventstream"
    );
    let mut bytes = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(c) => bytes.extend_from_slice(&c),
            Err(_) => break,
        }
    }
    bytes
}

/// Decodes Bedrock bytes fed in `piece`-sized chunks, as the driver does.
fn decode_bedrock(bytes: &[u8], piece: usize) -> (AssistantMessage, Option<String>) {
    use pi::ai::providers::bedrock::Decoder;
    use pi::ai::providers::eventstream::EventStreamParser;
    use pi::ai::providers::{Output, SseDecoder};
    use pi::ai::sse::SseEvent;
    let server_model = Model {
        base_url: "http://unused".into(),
        ..model(
            Api::BedrockConverseStream,
            &MockLlm::start(Script::default()),
        )
    };
    let mut out = Output::new(&server_model);
    let mut parser = EventStreamParser::new();
    let mut decoder = Decoder::new();
    let mut step = || -> Result<(), String> {
        for chunk in bytes.chunks(piece) {
            for message in parser.feed(chunk).map_err(|e| e.to_string())? {
                let name = match message.header(":message-type") {
                    Some("exception") => {
                        format!("exception:{}", message.header(":exception-type").unwrap())
                    }
                    _ => message.header(":event-type").unwrap().to_string(),
                };
                let data = String::from_utf8(message.payload.clone()).unwrap();
                decoder.on_event(
                    SseEvent {
                        event: &name,
                        data: &data,
                    },
                    &mut out,
                )?;
            }
        }
        parser.finish().map_err(|e| e.to_string())?;
        decoder.finish(&mut out)
    };
    let result = step().err();
    (out.message, result)
}

#[tokio::test]
async fn bedrock_event_streams_decode_in_any_chunking() {
    let bytes = bedrock_bytes(full_reply()).await;
    for piece in [1, 7, 64, bytes.len()] {
        let (msg, err) = decode_bedrock(&bytes, piece);
        assert_eq!(err, None);
        assert_eq!(msg.stop_reason, StopReason::ToolUse);
        let AssistantBlock::Thinking(t) = &msg.content[0] else {
            panic!("{msg:?}")
        };
        assert_eq!(
            (t.thinking.as_str(), t.thinking_signature.as_deref()),
            ("Let me look.", Some("sig_1"))
        );
        assert_eq!(msg.text(), "Reading it now.");
        let AssistantBlock::ToolCall(tc) = &msg.content[2] else {
            panic!("{msg:?}")
        };
        assert_eq!(
            (tc.id.as_str(), &tc.arguments),
            ("tooluse_1_0", &json!({"path": "notes.txt"}))
        );
        assert_eq!(
            (msg.usage.input, msg.usage.output, msg.usage.total_tokens),
            (1000, 200, 1200)
        );
        let expected_cost = 1000.0 * 3.0 / 1e6 + 200.0 * 15.0 / 1e6;
        assert!((msg.usage.cost.total - expected_cost).abs() < 1e-12);
    }
}

#[tokio::test]
async fn bedrock_exceptions_and_cut_streams_are_errors() {
    let bytes = bedrock_bytes(Reply {
        text: Some("never".into()),
        stream_exception: Some("Too many tokens, please wait".into()),
        ..Reply::default()
    })
    .await;
    let (_, err) = decode_bedrock(&bytes, 5);
    assert_eq!(
        err.as_deref(),
        Some("Throttling error: Too many tokens, please wait")
    );
    let bytes = bedrock_bytes(Reply {
        text: Some("a long answer".into()),
        chunk_size: Some(2),
        ..Reply::default()
    })
    .await;
    let (partial, err) = decode_bedrock(&bytes[..bytes.len() - 20], 16);
    let err = err.unwrap();
    assert!(err.contains("ended inside a message"), "{err}");
    assert!(partial.text().starts_with("a long"), "{partial:?}");
}
