//! A model server that goes silent cannot hang pi-rs: `retry.provider.timeoutMs` bounds
//! the wait for a response to start and every pause inside a streaming answer. A silent
//! start is retried by the provider layer (`retry.provider.maxRetries`), a stalled stream
//! ends the answer with a "Request timed out" error that the agent-level auto-retry
//! (`retry.maxRetries`) runs again; a slow but steady stream is left alone, and an abort
//! still stops every wait at once.
//!
//! The built binary runs in print, JSON and RPC mode against the loopback mock server,
//! whose `hang_before_headers` and `stall_after_events` replies misbehave on purpose.
//! Timeouts are a few hundred milliseconds so the whole file runs in seconds.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::mock_llm::{MockLlm, Reply, Script};
use crate::support::pi_project::{Project, jsonl, succeeded};
use crate::support::rpc_client::RpcProject;
use futures::StreamExt;
use pi::ai::auth::ApiKey;
use pi::ai::message::{Context, Message, StopReason, UserMessage};
use pi::ai::model::{Api, InputKind, Model};
use pi::ai::providers::{StreamOptions, stream};
use pi::ai::retry::RetryPolicy;
use pi::ai::stream::StreamEvent;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TIMEOUT_MS: u64 = 300;

fn no_response_error() -> String {
    format!(
        "Request timed out: no response within {TIMEOUT_MS} ms (raise retry.provider.timeoutMs to wait longer)"
    )
}

fn stalled_error() -> String {
    format!(
        "Request timed out: the response stalled, nothing received for {TIMEOUT_MS} ms (raise retry.provider.timeoutMs to wait longer)"
    )
}

/// `settings.json` with the short timeout, the given retry counts of both layers and a
/// tiny agent-level backoff (the provider-level backoff is the SDKs' 0.5 s, doubling).
fn settings(provider_retries: u32, agent_retries: u32) -> Value {
    json!({"retry": {
        "enabled": agent_retries > 0,
        "maxRetries": agent_retries,
        "baseDelayMs": 20,
        "provider": {"timeoutMs": TIMEOUT_MS, "maxRetries": provider_retries}
    }})
}

fn print(p: &Project) -> Command {
    let mut cmd = p.pi();
    cmd.args(["-p", "hello?"]);
    cmd
}

fn project(script: Value, settings: Value) -> Project {
    let p = Project::new(script);
    std::fs::write(p.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    p
}

/// The JSON-mode events without the streaming deltas, one line each, with the fields
/// that matter here.
fn brief(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| !matches!(e["type"].as_str(), Some("message_update" | "session")))
        .map(|e| {
            let kind = e["type"].as_str().unwrap();
            match kind {
                "auto_retry_start" => format!(
                    "{kind} {}/{}: {}",
                    e["attempt"], e["maxAttempts"], e["errorMessage"]
                ),
                "auto_retry_end" => format!(
                    "{kind} success={} attempt={} {}",
                    e["success"], e["attempt"], e["finalError"]
                ),
                "agent_end" => format!("{kind} willRetry={}", e["willRetry"]),
                "agent_settled" => format!("{kind} aborted={}", e["aborted"]),
                "message_end" if e["message"]["role"] == "assistant" => format!(
                    "{kind} assistant {} {:?} {}",
                    e["message"]["stopReason"],
                    text(&e["message"]),
                    e["message"]["errorMessage"]
                ),
                _ => kind.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn text(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect()
}

/// Runs `cmd` to the end; a run that outlives [`LIMIT`] is killed and fails the test, so
/// a request that hangs shows up as a failure rather than a stuck test.
fn run(mut cmd: Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("pi was still running after {LIMIT:?}: the request hung");
        }
    }
}

/// Far above what any test here needs, far below the 600 s default timeout.
const LIMIT: Duration = Duration::from_secs(20);

fn run_json(p: &Project, prompt: &str) -> (Vec<Value>, Duration) {
    let start = Instant::now();
    let mut cmd = p.pi();
    cmd.args(["--mode", "json", prompt]);
    let out = run(cmd);
    let elapsed = start.elapsed();
    (jsonl(&succeeded(&out)), elapsed)
}

#[test]
fn a_server_that_never_answers_times_out_and_is_retried_by_both_layers() {
    let p = project(
        json!({"default": {"hang_before_headers": true}}),
        settings(1, 1),
    );
    let (events, elapsed) = run_json(&p, "hello?");
    let silent = format!("{:?}", no_response_error());
    assert_eq!(
        brief(&events),
        format!(
            "agent_start\nturn_start\nmessage_start\nmessage_end\nmessage_start\n\
             message_end assistant \"error\" \"\" {silent}\nturn_end\nagent_end willRetry=true\n\
             auto_retry_start 1/1: {silent}\n\
             agent_start\nturn_start\nmessage_start\n\
             message_end assistant \"error\" \"\" {silent}\nturn_end\nagent_end willRetry=false\n\
             auto_retry_end success=false attempt=1 {silent}\nagent_settled aborted=false"
        )
    );
    // Two agent runs, each an attempt plus one provider-level retry.
    assert_eq!(p.server.requests().len(), 4);
    // Four silent attempts of 300 ms and two provider backoffs of at least 450 ms; far
    // below the 600 s default, which proves the setting was used.
    assert!(
        elapsed >= Duration::from_millis(4 * TIMEOUT_MS + 2 * 450),
        "{elapsed:?}"
    );
}

#[test]
fn headers_without_a_body_count_as_no_response_and_a_provider_retry_recovers() {
    let p = project(
        json!({"sequence": [
            {"text": "never sent", "stall_after_events": 0},
            {"text": "second attempt answered"}
        ]}),
        settings(1, 0),
    );
    let start = Instant::now();
    let out = run(print(&p));
    assert_eq!(succeeded(&out), "second attempt answered\n");
    assert!(
        start.elapsed() >= Duration::from_millis(TIMEOUT_MS),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(p.server.requests().len(), 2);
    // The silent attempt is invisible in the session: one answer, no error.
    let assistants: Vec<Value> = p
        .entries()
        .into_iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(assistants.len(), 1);
    assert_eq!(assistants[0]["message"]["stopReason"], "stop");
}

#[test]
fn a_stream_that_stalls_ends_with_a_timeout_error_that_the_agent_retries() {
    // Events: role, "part", "ial " — then silence.
    let p = project(
        json!({"sequence": [
            {"text": "partial answer", "chunk_size": 4, "stall_after_events": 3},
            {"text": "complete answer"}
        ]}),
        settings(2, 1),
    );
    let (events, _) = run_json(&p, "hello?");
    let stalled = format!("{:?}", stalled_error());
    assert_eq!(
        brief(&events),
        format!(
            "agent_start\nturn_start\nmessage_start\nmessage_end\nmessage_start\n\
             message_end assistant \"error\" \"partial \" {stalled}\nturn_end\nagent_end willRetry=true\n\
             auto_retry_start 1/1: {stalled}\n\
             agent_start\nturn_start\nmessage_start\n\
             message_end assistant \"stop\" \"complete answer\" null\n\
             auto_retry_end success=true attempt=1 null\nturn_end\nagent_end willRetry=false\n\
             agent_settled aborted=false"
        )
    );
    // The provider layer does not retry once the answer streams (2 retries were allowed).
    assert_eq!(p.server.requests().len(), 2);
    // The failed partial answer stays in the session file, as pi keeps it.
    let failed = p
        .entries()
        .into_iter()
        .find(|e| e["message"]["stopReason"] == "error")
        .unwrap();
    assert_eq!(text(&failed["message"]), "partial ");
    assert_eq!(failed["message"]["errorMessage"], stalled_error());
}

#[test]
fn print_mode_reports_the_timeout_on_stderr_and_exits_1() {
    let p = project(
        json!({"default": {"text": "partial answer", "chunk_size": 4, "stall_after_events": 3}}),
        settings(2, 0),
    );
    let out = run(print(&p));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("{}\n", stalled_error())
    );
    assert!(out.stdout.is_empty());
    assert_eq!(p.server.requests().len(), 1);
}

#[test]
fn a_slow_but_steady_stream_is_not_cut() {
    // 17 events 100 ms apart: 1.6 s in all, more than five times the timeout, but no
    // pause reaches it.
    let answer = "slow and steady wins the race";
    let p = project(
        json!({"sequence": [{"text": answer, "chunk_size": 2, "delay_ms": 100}]}),
        settings(2, 1),
    );
    let start = Instant::now();
    let out = run(print(&p));
    assert_eq!(succeeded(&out), format!("{answer}\n"));
    assert!(
        start.elapsed() > Duration::from_millis(5 * TIMEOUT_MS),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(p.server.requests().len(), 1);
}

#[test]
fn rpc_mode_honours_the_timeout_setting() {
    let p = RpcProject::new(
        &json!({"default": {"hang_before_headers": true}}),
        None,
        Some(settings(0, 0)),
    );
    let mut rpc = p.start();
    let start = Instant::now();
    let events = rpc.prompt("hello?");
    let elapsed = start.elapsed();
    let end = events.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    let last = end["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["stopReason"], "error");
    assert_eq!(last["errorMessage"], no_response_error());
    assert!(
        elapsed >= Duration::from_millis(TIMEOUT_MS) && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
    assert_eq!(p.server.requests().len(), 1);
}

fn model(server: &MockLlm) -> Model {
    Model {
        id: "mock-model".into(),
        name: "Mock".into(),
        api: Api::OpenAiCompletions,
        provider: "mock".into(),
        base_url: format!("{}/v1", server.url()),
        reasoning: false,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 200_000,
        max_tokens: 4_000,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

/// Streams one request with a long timeout and cancels it after 100 ms; returns the final
/// event's stop reason and error text, and how long the stream took to end.
async fn cancel_during_silence(reply: Reply) -> (StopReason, String, Duration) {
    let server = MockLlm::start(Script::sequence(vec![reply]));
    let cancel = CancellationToken::new();
    let options = StreamOptions {
        api_key: Some(ApiKey::new("test-key")),
        retry: RetryPolicy {
            timeout_ms: 60_000,
            ..RetryPolicy::none()
        },
        cancel: cancel.clone(),
        ..StreamOptions::default()
    };
    let context = Context {
        system_prompt: None,
        messages: vec![Message::User(UserMessage::text("hello?", 1))],
        tools: Vec::new(),
    };
    let start = Instant::now();
    let mut events = stream(&model(&server), &context, options);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let mut last = None;
    let drained = tokio::time::timeout(LIMIT, async {
        while let Some(event) = events.next().await {
            last = Some(event);
        }
    })
    .await;
    assert!(drained.is_ok(), "the stream hung after the abort");
    let Some(StreamEvent::Error { reason, error }) = last else {
        panic!("the stream did not end with an error: {last:?}");
    };
    (
        reason,
        error.error_message.unwrap_or_default(),
        start.elapsed(),
    )
}

#[tokio::test]
async fn an_abort_ends_the_wait_for_a_silent_server_at_once() {
    let silent_start = Reply {
        hang_before_headers: true,
        ..Reply::default()
    };
    let stalled = Reply {
        text: Some("partial answer".into()),
        chunk_size: Some(4),
        stall_after_events: Some(3),
        ..Reply::default()
    };
    for reply in [silent_start, stalled] {
        let (reason, message, elapsed) = cancel_during_silence(reply).await;
        assert_eq!(reason, StopReason::Aborted);
        assert_eq!(message, "Request was aborted");
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }
}
