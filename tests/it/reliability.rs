//! Every automatic action is bounded and abortable: overflow recovery runs at most once
//! per prompt and never asks the model to continue its own answer; an abort stops a retry
//! wait, a compaction, an overflow retry, a tool and a branch summary at once. Driven
//! through the built binary against the loopback model server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::{Duration, Instant};

use crate::support::mock_llm::RecordedRequest;
use crate::support::pi_project::{Project, jsonl};
use crate::support::rpc_client::{RpcClient, RpcProject};
use serde_json::{Value, json};

/// What every summarization request carries in its system prompt.
const SUMMARY_MARK: &str = "You write summaries of working sessions";

/// How long an abort may take to end the run, as seen by a client. The bound the code
/// keeps is 200 ms; the test allows for a loaded CI machine and prints what it measured.
const ABORT_LIMIT: Duration = Duration::from_millis(1500);

fn is_summary(request: &RecordedRequest) -> bool {
    request.body.to_string().contains(SUMMARY_MARK)
}

fn counts(requests: &[RecordedRequest]) -> (usize, usize) {
    let summaries = requests.iter().filter(|r| is_summary(r)).count();
    (requests.len() - summaries, summaries)
}

fn summary_rule(reply: Value) -> Value {
    json!({"match": SUMMARY_MARK, "reply": reply})
}

/// A models.json for the mock with a given context window.
fn models(url: &str, context_window: u64) -> Value {
    json!({"providers": {"mock": {
        "baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": context_window, "maxTokens": 1000}]
    }}})
}

fn project(script: Value, context_window: u64, settings: Value) -> Project {
    let p = Project::new(script);
    let m = models(&p.server.url(), context_window);
    std::fs::write(p.agent_dir().join("models.json"), m.to_string()).unwrap();
    std::fs::write(p.agent_dir().join("settings.json"), settings.to_string()).unwrap();
    p
}

/// Every line parses and every `parentId` names an earlier entry.
fn assert_valid_session(p: &Project) -> Vec<Value> {
    let text = std::fs::read_to_string(p.session_file()).unwrap();
    let entries = jsonl(&text);
    assert_eq!(entries[0]["type"], "session");
    let mut ids = std::collections::HashSet::new();
    for e in &entries[1..] {
        if let Some(parent) = e["parentId"].as_str() {
            assert!(ids.contains(parent), "dangling parent in {e}");
        }
        assert!(ids.insert(e["id"].as_str().unwrap().to_string()), "{e}");
    }
    entries
}

/// A provider that reports more input than the configured window on every reply (a
/// window set too small in models.json, or a gateway's usage) gets one answer and one
/// summary per prompt — not a loop of continuations — and the user is told why.
#[test]
fn a_window_exceeded_on_every_reply_costs_one_answer_and_one_summary_per_prompt() {
    let p = project(
        json!({
            "rules": [summary_rule(json!({"text": "## Goal\nsummary"}))],
            "default": {"text": "hello", "usage": {"input": 50000, "output": 5}}
        }),
        16000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let mut seen = 0;
    for (i, prompt) in ["one", "two", "three"].iter().enumerate() {
        let mut cmd = p.pi();
        if i > 0 {
            cmd.arg("-c");
        }
        let out = cmd.args(["-p", prompt]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hello");
        assert!(
            stderr.contains("50000 input tokens") && stderr.contains("contextWindow of 16000"),
            "{stderr}"
        );
        let requests = p.server.requests();
        let (answers, summaries) = counts(&requests[seen..]);
        seen = requests.len();
        assert_eq!(answers, 1, "prompt {prompt}: one request to the model");
        // One compaction; a cut inside a turn summarizes the turn's start separately.
        assert!(summaries <= 2, "prompt {prompt}: {summaries} summaries");
    }
    let entries = assert_valid_session(&p);
    let replies = entries
        .iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .count();
    assert_eq!(replies, 3);
    let compactions = entries.iter().filter(|e| e["type"] == "compaction").count();
    assert!(
        compactions <= 3,
        "{compactions} compactions for three prompts"
    );
}

/// A request rejected as too long is compacted and retried once; when the retry is
/// rejected too, the prompt ends with an error that names the model, its configured
/// window and what to change.
#[test]
fn an_overflow_that_survives_compaction_ends_the_prompt_with_what_to_change() {
    let overflow = json!({"error": {"status": 400, "body": {"error": {
        "message": "This model's maximum context length is 16000 tokens. However, your messages resulted in 90000 tokens.",
        "type": "invalid_request_error"}}}});
    let p = project(
        json!({
            "rules": [summary_rule(json!({"text": "## Goal\nsummary"}))],
            "sequence": [{"text": "first answer", "usage": {"input": 100, "output": 5}}],
            "default": overflow
        }),
        16000,
        json!({"compaction": {"keepRecentTokens": 1}, "retry": {"baseDelayMs": 1}}),
    );
    let out = p.pi().args(["-p", "seed the history"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let before = p.server.requests().len();
    let out = p.pi().args(["-c", "-p", "now overflow"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let (answers, summaries) = counts(&p.server.requests()[before..]);
    assert_eq!((answers, summaries), (2, 1), "one compact-and-retry");
    for needed in [
        "Context overflow recovery failed after one compact-and-retry attempt",
        "mock/mock-model",
        "16000 tokens",
        "models.json",
    ] {
        assert!(stderr.contains(needed), "missing {needed:?} in:\n{stderr}");
    }
    assert_valid_session(&p);
}

fn rpc_project(script: Value, settings: Value) -> RpcProject {
    RpcProject::new(&script, None, Some(settings))
}

/// Sends `abort` and returns how long until its response (pi answers once the run is
/// over and the aborted answer recorded).
fn abort(c: &mut RpcClient) -> Duration {
    let start = Instant::now();
    c.ok(json!({"type": "abort"}));
    let took = start.elapsed();
    eprintln!("abort answered after {took:?}");
    assert!(took < ABORT_LIMIT, "abort took {took:?}");
    took
}

fn wait_for_event(c: &mut RpcClient, kind: &str) {
    c.read_until(|v| v["type"] == kind);
}

/// The first message of `kind` seen so far, or the next one to arrive.
fn event(c: &mut RpcClient, kind: &str) -> Value {
    if let Some(v) = c.seen.iter().rev().find(|v| v["type"] == kind) {
        return v.clone();
    }
    c.read_until(|v| v["type"] == kind).pop().unwrap()
}

/// Waits until the server has seen `n` requests.
fn wait_for_requests(p: &RpcProject, n: usize) {
    let start = Instant::now();
    while p.server.requests().len() < n {
        assert!(start.elapsed() < Duration::from_secs(15), "no request {n}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn abort_stops_a_retry_wait() {
    let p = rpc_project(
        json!({"default": {"error": {"status": 400, "body": "overloaded_error: try again"}}}),
        json!({"retry": {"baseDelayMs": 60000}}),
    );
    let mut c = p.start();
    c.send(&json!({"type": "prompt", "message": "hi"}));
    wait_for_event(&mut c, "auto_retry_start");
    abort(&mut c);
    let end = event(&mut c, "auto_retry_end");
    assert_eq!(end["finalError"], "Retry cancelled", "{end}");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(p.server.requests().len(), 1, "no retry after the abort");
}

fn overflow_script(after_compaction: Value, summary: Value) -> Value {
    json!({
        "rules": [summary_rule(summary)],
        "sequence": [
            {"text": "seeded", "usage": {"input": 100, "output": 5}},
            {"error": {"status": 400, "body": {"error": {"message": "prompt is too long: 90000 tokens > 16000 maximum"}}}},
            after_compaction
        ],
        "default": {"text": "should not be asked"}
    })
}

#[test]
fn abort_stops_an_overflow_compaction_and_nothing_is_retried() {
    let p = rpc_project(
        overflow_script(
            json!({"text": "retried"}),
            json!({"text": "slow summary", "delay_ms": 30000}),
        ),
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let mut c = p.start();
    c.prompt("seed");
    c.send(&json!({"type": "prompt", "message": "overflow now"}));
    wait_for_event(&mut c, "compaction_start");
    wait_for_requests(&p, 3);
    abort(&mut c);
    let end = event(&mut c, "compaction_end");
    assert_eq!(end["aborted"], true, "{end}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(p.server.requests().len(), 3, "seed, overflow, summary");
}

#[test]
fn abort_stops_the_retry_after_an_overflow_compaction() {
    let p = rpc_project(
        overflow_script(
            json!({"text": "slow retry", "delay_ms": 30000}),
            json!({"text": "## Goal\nsummary"}),
        ),
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let mut c = p.start();
    c.prompt("seed");
    c.send(&json!({"type": "prompt", "message": "overflow now"}));
    let end = c
        .read_until(|v| v["type"] == "compaction_end")
        .pop()
        .unwrap();
    assert_eq!(end["willRetry"], true, "{end}");
    wait_for_requests(&p, 4);
    abort(&mut c);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(p.server.requests().len(), 4);
}

#[test]
fn abort_stops_a_running_tool() {
    let p = rpc_project(
        json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]},
            {"text": "should not be asked"}
        ]}),
        json!({}),
    );
    let mut c = p.start();
    c.send(&json!({"type": "prompt", "message": "run it"}));
    wait_for_event(&mut c, "tool_execution_start");
    std::thread::sleep(Duration::from_millis(100));
    abort(&mut c);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(p.server.requests().len(), 1);
}

#[test]
fn abort_stops_a_branch_summary() {
    let p = rpc_project(
        json!({
            "rules": [summary_rule(json!({"text": "slow", "delay_ms": 30000}))],
            "default": {"text": "ok"}
        }),
        json!({}),
    );
    let mut c = p.start();
    c.prompt("first");
    c.prompt("second");
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    let first_user = find_user_entry(&tree, "first").expect("first user entry");
    c.send(&json!({"type": "navigate_tree", "targetId": first_user, "summarize": "default", "id": "nav"}));
    wait_for_requests(&p, 3);
    let start = Instant::now();
    c.send(&json!({"type": "abort", "id": "ab"}));
    let nav = c
        .read_until(|v| v["type"] == "response" && v["id"] == "nav")
        .pop()
        .unwrap();
    let took = start.elapsed();
    eprintln!("branch summary aborted after {took:?}");
    assert!(took < ABORT_LIMIT, "{took:?}");
    assert_eq!(nav["data"]["cancelled"], true, "{nav}");
}

/// The id of the user message whose preview is `text` in a `get_tree` answer.
fn find_user_entry(tree: &Value, text: &str) -> Option<String> {
    tree["entries"].as_array()?.iter().find_map(|e| {
        (e["role"] == "user" && e["preview"].as_str() == Some(text))
            .then(|| e["id"].as_str().map(str::to_string))
            .flatten()
    })
}

/// A shell extension with one sequential tool, `slow`, that runs until it is cancelled
/// and then answers `stopped on request`.
fn slow_sequential_tool(dir: &std::path::Path) -> std::path::PathBuf {
    let text = r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","tools":[{"name":"slow","description":"Takes forever","parameters":{"type":"object"},"executionMode":"sequential"}]}'
while IFS= read -r line; do
    case "$line" in
    '{"type":"cancel",'*)
        id=${line#*\"id\":}; id=${id%\}}
        echo "{\"type\":\"response\",\"id\":$id,\"error\":\"stopped on request\"}" ;;
    esac
done
"#;
    crate::support::extensions::script(dir, "slow-tool", text)
}

#[test]
fn abort_during_a_tool_batch_gives_the_calls_not_started_an_aborted_result() {
    let p = rpc_project(
        json!({"sequence": [
            {"tool_calls": [
                {"name": "slow", "arguments": {}},
                {"name": "bash", "arguments": {"command": "echo ran > ran.txt"}},
                {"name": "read", "arguments": {"path": "missing.txt"}}
            ]},
            {"text": "after the abort"}
        ]}),
        json!({}),
    );
    let ext_dir = tempfile::tempdir().unwrap();
    let ext = slow_sequential_tool(ext_dir.path());
    let mut cmd = p.command();
    cmd.arg("-e").arg(&ext);
    let mut c = RpcClient::spawn(cmd);
    c.send(&json!({"type": "prompt", "message": "run them"}));
    wait_for_event(&mut c, "tool_execution_start");
    std::thread::sleep(Duration::from_millis(100));
    abort(&mut c);
    assert!(
        !p.cwd().join("ran.txt").exists(),
        "a call after the aborted one ran"
    );

    let messages = crate::support::rpc_client::messages_of(&p.session_files()[0]);
    let calls: Vec<String> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "toolCall")
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(calls.len(), 3, "{messages:?}");
    let results: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .collect();
    let result_ids: Vec<&str> = results
        .iter()
        .map(|r| r["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(
        result_ids, calls,
        "every tool call has its result, in order"
    );
    assert_eq!(results[0]["isError"], true, "{}", results[0]);
    for r in &results[1..] {
        assert_eq!(r["isError"], true, "{r}");
        assert_eq!(
            r["content"],
            json!([{"type": "text", "text": "Operation aborted"}]),
            "{r}"
        );
    }

    // The next request carries all three results.
    c.send(&json!({"type": "prompt", "message": "go on"}));
    wait_for_requests(&p, 2);
    wait_for_event(&mut c, "agent_end");
    let body = &p.server.requests()[1].body;
    let sent = body["messages"].as_array().unwrap();
    for id in &calls {
        assert!(
            sent.iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str()),
            "no result for {id} in {body}"
        );
    }
}
