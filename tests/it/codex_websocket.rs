//! `openai-codex-responses` over a WebSocket, through the built binary: with the default
//! `transport` (`auto`) a prompt streams over the loopback Codex WebSocket server (text,
//! a tool call and its result, usage), with the upgrade headers and the
//! `response.create` messages pi sends, on one socket for the session, later requests
//! carrying only the new input with `previous_response_id`; `websocket` keeps the socket
//! but sends the whole context; a forgotten previous response or a kept socket the
//! server dropped is sent again in full on a new socket; a refused upgrade falls back to
//! SSE and the session keeps to SSE; `transport: "sse"` never asks for an upgrade; a
//! socket closed after the first event ends the answer with pi's error and no SSE
//! request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::Command;
use std::time::Duration;

use crate::support::codex_ws::{CodexWs, Quirks};
use crate::support::mock_llm::{MockLlm, Reply, Script, ScriptToolCall, ScriptUsage};
use crate::support::reference_pi;

// The reference comparisons of this file are pinned to pi 0.73.1: pi 1.6's Codex requests (headers, body) are issue 27 (item 3).
use serde_json::{Value, json};

/// A ChatGPT access token as the OAuth flow stores it: a JWT with the account claim.
fn codex_token() -> String {
    use base64::Engine as _;
    let enc = |v: Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    format!(
        "{}.{}.signature",
        enc(json!({"alg": "RS256", "typ": "JWT"})),
        enc(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-ws-1"}}))
    )
}

/// The two replies: read a file, then answer with usage.
fn replies() -> Vec<Reply> {
    vec![
        Reply {
            tool_calls: vec![ScriptToolCall {
                name: "read".into(),
                arguments: json!({"path": "notes.txt"}),
            }],
            ..Reply::default()
        },
        Reply {
            text: Some("The notes say hello.".into()),
            usage: Some(ScriptUsage {
                input: 321,
                output: 45,
                cache_read: 0,
                cache_write: 0,
            }),
            ..Reply::default()
        },
    ]
}

/// Runs our binary (or pi's) in json mode against `base`, with `settings` in the home;
/// returns stdout. The run must succeed.
fn run(reference: bool, base: &str, settings: Value) -> String {
    run_prompts(reference, base, settings, &["What do the notes say?"])
}

/// [`run`] with these prompts, one after another in the same session.
fn run_prompts(reference: bool, base: &str, settings: Value, prompts: &[&str]) -> String {
    let (mut cmd, _dirs) = command(reference, base, &settings);
    cmd.args(&prompts[1..]);
    reference_pi::run(cmd, "", Duration::from_secs(120)).unwrap()
}

/// Runs our binary and returns its stdout whatever its exit status (within two minutes).
fn run_any(base: &str, settings: Value) -> String {
    let (mut cmd, _dirs) = command(false, base, &settings);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.stdin(std::process::Stdio::null()).output());
    });
    let output = rx.recv_timeout(Duration::from_secs(120)).unwrap().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The command of a run, with the temporary home and project it uses.
fn command(
    reference: bool,
    base: &str,
    settings: &Value,
) -> (Command, (tempfile::TempDir, tempfile::TempDir)) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "hello\n").unwrap();
    let agent = home.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let models = json!({"providers": {"openai-codex": {
        "baseUrl": format!("{base}/backend-api"), "api": "openai-codex-responses",
        "apiKey": codex_token(),
        "models": [{"id": "gpt-5.1-codex", "reasoning": true}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    let mut cmd = if reference {
        // Node 20 has a WebSocket global only behind this flag (pi otherwise goes
        // straight to SSE).
        let mut cmd = reference_pi::command_073();
        cmd.env("NODE_OPTIONS", "--experimental-websocket");
        cmd
    } else {
        Command::new(env!("CARGO_BIN_EXE_pi"))
    };
    cmd.current_dir(project.path())
        .env("HOME", home.path())
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("OPENAI_API_KEY")
        .args([
            "--offline",
            "--provider",
            "openai-codex",
            "--model",
            "gpt-5.1-codex",
            "--mode",
            "json",
            "-p",
            "What do the notes say?",
        ]);
    (cmd, (home, project))
}

/// The last assistant message of a json-mode run.
fn last_assistant(out: &str) -> Value {
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
        .map(|e| e["message"].clone())
        .next_back()
        .unwrap_or_else(|| panic!("no assistant message in:\n{out}"))
}

fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect()
}

#[test]
fn auto_streams_text_tool_calls_and_usage_over_the_websocket() {
    let server = CodexWs::start(replies());
    let out = run(false, &server.url(), json!({}));
    let answer = last_assistant(&out);
    assert_eq!(text_of(&answer), "The notes say hello.", "{out}");
    assert_eq!(answer["stopReason"], "stop");
    assert_eq!(answer["usage"]["input"], 321);
    assert_eq!(answer["usage"]["output"], 45);
    assert_eq!(answer["api"], "openai-codex-responses");

    // One socket for the session, upgraded with pi's headers.
    let handshakes = server.handshakes();
    assert_eq!(handshakes.len(), 1, "{handshakes:?}");
    for h in &handshakes {
        assert_eq!(h.path, "/backend-api/codex/responses");
        assert_eq!(
            h.header("openai-beta"),
            Some("responses_websockets=2026-02-06")
        );
        assert_eq!(
            h.header("authorization"),
            Some(format!("Bearer {}", codex_token()).as_str())
        );
        assert_eq!(h.header("chatgpt-account-id"), Some("acct-ws-1"));
        assert_eq!(h.header("originator"), Some("pi"));
        assert!(h.header("user-agent").unwrap().starts_with("pi ("), "{h:?}");
        let session = h.header("session_id").unwrap();
        assert_eq!(h.header("x-client-request-id"), Some(session));
        assert_eq!(session.len(), 36, "a session UUID: {session}");
        assert_eq!(h.header("accept"), None);
        assert_eq!(h.header("content-type"), None);
    }

    // The first message is the SSE body with `type: response.create`; the second only
    // the tool result, after the first response.
    let messages = server.messages();
    assert_eq!(messages.len(), 2);
    let first = &messages[0];
    assert_eq!(first["type"], "response.create");
    assert_eq!(first["model"], "gpt-5.1-codex");
    assert_eq!(first["stream"], true);
    assert_eq!(first["store"], false);
    assert!(first["instructions"].is_string());
    assert_eq!(
        first["prompt_cache_key"],
        handshakes[0].header("session_id").unwrap()
    );
    assert_eq!(first.get("previous_response_id"), None);
    assert_eq!(messages[1]["previous_response_id"], "resp_mock1");
    let input = messages[1]["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "{input:?}");
    assert_eq!(input[0]["type"], "function_call_output");
    assert!(
        input[0]["output"].as_str().unwrap().contains("hello"),
        "{input:?}"
    );
    // Everything else is the first request's.
    let rest = |m: &Value| {
        let mut m = m.clone();
        let fields = m.as_object_mut().unwrap();
        fields.remove("input");
        fields.remove("previous_response_id");
        m
    };
    assert_eq!(rest(first), rest(&messages[1]));
}

/// Three replies: read a file, answer, then answer the second prompt.
fn two_turns() -> Vec<Reply> {
    let mut replies = replies();
    replies.push(Reply {
        text: Some("Still hello.".into()),
        ..Reply::default()
    });
    replies
}

const PROMPTS: &[&str] = &["What do the notes say?", "And now?"];

#[test]
fn a_session_keeps_its_socket_and_sends_only_the_new_input() {
    let server = CodexWs::start(two_turns());
    let out = run_prompts(false, &server.url(), json!({}), PROMPTS);
    assert_eq!(text_of(&last_assistant(&out)), "Still hello.", "{out}");
    assert_eq!(server.handshakes().len(), 1);
    let messages = server.messages();
    assert_eq!(messages.len(), 3);
    let full = messages[0]["input"].as_array().unwrap().len();
    assert_eq!(messages[1]["previous_response_id"], "resp_mock1");
    assert_eq!(messages[2]["previous_response_id"], "resp_mock2");
    // The second turn sends the new user message alone.
    let input = messages[2]["input"].as_array().unwrap();
    assert_eq!(input.len(), 1, "{input:?}");
    assert_eq!(input[0]["role"], "user");
    assert_eq!(input[0]["content"][0]["text"], "And now?");
    assert!(full >= 1);
}

#[test]
fn websocket_keeps_the_socket_but_sends_the_whole_context() {
    let server = CodexWs::start(two_turns());
    let out = run_prompts(
        false,
        &server.url(),
        json!({"transport": "websocket"}),
        PROMPTS,
    );
    assert_eq!(text_of(&last_assistant(&out)), "Still hello.", "{out}");
    assert_eq!(server.handshakes().len(), 1);
    let messages = server.messages();
    assert_eq!(messages.len(), 3);
    let lengths: Vec<usize> = messages
        .iter()
        .map(|m| m["input"].as_array().unwrap().len())
        .collect();
    assert!(
        lengths[0] < lengths[1] && lengths[1] < lengths[2],
        "{lengths:?}"
    );
    assert!(
        messages
            .iter()
            .all(|m| m.get("previous_response_id").is_none())
    );
}

#[test]
fn a_forgotten_previous_response_is_sent_again_in_full_on_a_new_socket() {
    let quirks = Quirks {
        forget_previous: true,
        ..Quirks::default()
    };
    let server = CodexWs::start_with(two_turns(), quirks);
    let out = run_prompts(false, &server.url(), json!({}), PROMPTS);
    assert_eq!(text_of(&last_assistant(&out)), "Still hello.", "{out}");
    // Each later request: a delta (refused), then the whole context on a new socket.
    let messages = server.messages();
    let deltas: Vec<bool> = messages
        .iter()
        .map(|m| m.get("previous_response_id").is_some())
        .collect();
    assert_eq!(deltas, [false, true, false, true, false], "{messages:?}");
    assert_eq!(server.handshakes().len(), 3);
    assert!(!out.contains("previous_response_not_found"), "{out}");
}

#[test]
fn a_kept_socket_the_server_dropped_is_replaced_and_sent_the_whole_context() {
    let quirks = Quirks {
        drop_second_message: true,
        ..Quirks::default()
    };
    let server = CodexWs::start_with(two_turns(), quirks);
    let out = run_prompts(false, &server.url(), json!({}), PROMPTS);
    assert_eq!(text_of(&last_assistant(&out)), "Still hello.", "{out}");
    let messages = server.messages();
    let deltas: Vec<bool> = messages
        .iter()
        .map(|m| m.get("previous_response_id").is_some())
        .collect();
    assert_eq!(deltas, [false, true, false, true, false], "{messages:?}");
    assert_eq!(server.handshakes().len(), 3);
}

#[test]
fn auto_falls_back_to_sse_when_the_upgrade_is_refused_and_keeps_to_it() {
    let server = MockLlm::start(Script::sequence(replies()));
    let out = run(false, &server.url(), json!({"transport": "auto"}));
    assert_eq!(
        text_of(&last_assistant(&out)),
        "The notes say hello.",
        "{out}"
    );
    // The first request tried the WebSocket (refused with a 404) and went over SSE; the
    // session's second request went straight to SSE, as pi's does.
    assert_eq!(server.websocket_upgrades(), 1);
    let posts: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 2);
    assert_eq!(
        posts[0].header("openai-beta"),
        Some("responses=experimental")
    );
    assert_eq!(posts[0].header("accept"), Some("text/event-stream"));
}

#[test]
fn sse_never_opens_a_websocket() {
    let server = MockLlm::start(Script::sequence(replies()));
    let out = run(false, &server.url(), json!({"transport": "sse"}));
    assert_eq!(
        text_of(&last_assistant(&out)),
        "The notes say hello.",
        "{out}"
    );
    assert_eq!(server.websocket_upgrades(), 0);
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .count(),
        2
    );
}

#[test]
fn a_socket_closed_after_the_first_event_ends_the_answer_without_sse() {
    let cut = Reply {
        text: Some("Half an answer".into()),
        drop_after_bytes: Some(3),
        ..Reply::default()
    };
    let server = CodexWs::start(vec![cut]);
    let out = run_any(&server.url(), json!({"retry": {"enabled": false}}));
    let answer = last_assistant(&out);
    assert_eq!(answer["stopReason"], "error", "{out}");
    assert_eq!(
        answer["errorMessage"],
        "WebSocket closed 1011 server went away"
    );
    assert_eq!(server.handshakes().len(), 1);
}

/// Both binaries against the same WebSocket server, a conversation of two prompts and a
/// tool call: the upgrades (one each) and their headers that matter, and every
/// `response.create` message — the whole first, the deltas after it — are equal
/// (session ids replaced, the prose of the system prompt and tools aside).
#[test]
fn the_upgrade_and_every_message_equal_pis() {
    if let Err(why) = reference_pi::available_073() {
        eprintln!("skipped: {why}");
        return;
    }
    let capture = |reference: bool| {
        let server = CodexWs::start(two_turns());
        let out = run_prompts(reference, &server.url(), json!({}), PROMPTS);
        assert_eq!(text_of(&last_assistant(&out)), "Still hello.", "{out}");
        (server.handshakes(), server.messages())
    };
    let (pi_handshakes, pi_messages) = capture(true);
    let (our_handshakes, our_messages) = capture(false);
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let normal = |v: &Value| uuid.replace_all(&v.to_string(), "<uuid>").into_owned();
    // (Node's WebSocket adds `accept: */*` to pi's upgrade on its own; pi sets none.)
    assert_eq!(pi_handshakes.len(), 1);
    assert_eq!(our_handshakes.len(), 1);
    {
        let (theirs, ours) = (&pi_handshakes[0], &our_handshakes[0]);
        assert_eq!(theirs.path, ours.path);
        for name in [
            "authorization",
            "chatgpt-account-id",
            "originator",
            "openai-beta",
            "content-type",
        ] {
            assert_eq!(theirs.header(name), ours.header(name), "{name}");
        }
        for name in ["session_id", "x-client-request-id"] {
            let (a, b) = (theirs.header(name), ours.header(name));
            assert_eq!(
                a.map(|v| uuid.is_match(v)),
                b.map(|v| uuid.is_match(v)),
                "{name}"
            );
        }
    }
    // The system prompt and tool descriptions are pi-rs's own prose (and name the run's
    // directory): compared apart from those.
    let shape = |message: &Value| {
        let mut m = message.clone();
        m["instructions"] = json!(m["instructions"].is_string());
        for tool in m["tools"].as_array_mut().unwrap() {
            tool["description"] = Value::Null;
            tool["parameters"] = tool["parameters"]["required"].clone();
        }
        normal(&m)
    };
    assert_eq!(pi_messages.len(), 3);
    assert_eq!(our_messages.len(), 3);
    for (i, (theirs, ours)) in pi_messages.iter().zip(&our_messages).enumerate() {
        assert_eq!(shape(theirs), shape(ours), "response.create {i}");
    }
}
