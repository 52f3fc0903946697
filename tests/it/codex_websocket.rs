//! `openai-codex-responses` over a WebSocket, through the built binary: with the default
//! `transport` (`auto`) a prompt streams over the loopback Codex WebSocket server (text,
//! a tool call and its result, usage), with the upgrade headers and the
//! `response.create` message pi sends; a refused upgrade falls back to SSE and the
//! session keeps to SSE; `transport: "sse"` never asks for an upgrade; a socket closed
//! after the first event ends the answer with pi's error and no SSE request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::Command;
use std::time::Duration;

use crate::support::codex_ws::CodexWs;
use crate::support::mock_llm::{MockLlm, Reply, Script, ScriptToolCall, ScriptUsage};
use crate::support::reference_pi;
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
    let (cmd, _dirs) = command(reference, base, &settings);
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
        let mut cmd = Command::new(reference_pi::script());
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

    // One socket a request, each upgraded with pi's headers.
    let handshakes = server.handshakes();
    assert_eq!(handshakes.len(), 2, "{handshakes:?}");
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

    // The first message is the SSE body with `type: response.create`; the second carries
    // the tool call and its result.
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
    let input = messages[1]["input"].as_array().unwrap();
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert!(
        output["output"].as_str().unwrap().contains("hello"),
        "{output}"
    );
    assert!(
        input
            .iter()
            .any(|i| i["type"] == "function_call" && i["name"] == "read")
    );
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

/// Both binaries against the same WebSocket server: the first upgrade's headers that
/// matter and the first `response.create` message are equal (session ids replaced, the
/// prose of the system prompt and tools aside).
/// Later requests differ on purpose: pi keeps the socket and sends only the new input
/// with `previous_response_id`; pi-rs opens a new socket with the whole context.
#[test]
fn the_upgrade_and_first_message_equal_pis() {
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let capture = |reference: bool| {
        let server = CodexWs::start(replies());
        let out = run(reference, &server.url(), json!({}));
        assert_eq!(
            text_of(&last_assistant(&out)),
            "The notes say hello.",
            "{out}"
        );
        (server.handshakes(), server.messages())
    };
    let (pi_handshakes, pi_messages) = capture(true);
    let (our_handshakes, our_messages) = capture(false);
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let normal = |v: &Value| uuid.replace_all(&v.to_string(), "<uuid>").into_owned();
    // (Node's WebSocket adds `accept: */*` to pi's upgrade on its own; pi sets none.)
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
    assert_eq!(
        shape(&pi_messages[0]),
        shape(&our_messages[0]),
        "first response.create"
    );
}
