//! A property test of the agent loop with a provider that misbehaves in every way it can:
//! errors (transient and not), context overflows (rejected and silent), empty replies,
//! tool calls cut by the output limit, dropped streams. Whatever the sequence, a prompt
//! makes a bounded number of requests, always finishes, and the session file stays a
//! valid tree. Runs `AgentSession` in-process against the loopback model server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::session::mock_agent_session;
use pi::core::agent_session::{AgentSession, PromptOptions};
use pi::session::SessionManager;
use proptest::prelude::*;
use serde_json::{Value, json};

/// `retry.maxRetries` in the test's settings.
const MAX_RETRIES: usize = 2;
/// Requests a prompt may make once the script is used up and the provider repeats its
/// last behaviour for ever: every retry, plus one compact-and-retry.
const TAIL_BOUND: usize = MAX_RETRIES + 2;
/// Summary requests a prompt may make: a compaction before it, an overflow recovery and a
/// threshold compaction after it, each with at most two summaries (history and the start
/// of a split turn).
const SUMMARY_BOUND: usize = 6;
const SUMMARY_MARK: &str = "You write summaries of working sessions";

#[derive(Debug, Clone, Copy)]
enum Outcome {
    Text,
    Empty,
    ToolCall,
    CutToolCall,
    OverflowError,
    SilentOverflow,
    Overloaded,
    Dropped,
}

impl Outcome {
    fn reply(self) -> Value {
        let usage = json!({"input": 100, "output": 5});
        let read = json!([{"name": "read", "arguments": {"path": "missing.txt"}}]);
        match self {
            Outcome::Text => json!({"text": "done", "usage": usage}),
            Outcome::Empty => json!({"usage": usage}),
            Outcome::ToolCall => json!({"tool_calls": read, "usage": usage}),
            Outcome::CutToolCall => {
                json!({"tool_calls": read, "cut_by_max_tokens": true, "usage": usage})
            }
            Outcome::OverflowError => json!({"error": {"status": 400, "body": {"error": {
                "message": "prompt is too long: 90000 tokens > 16000 maximum"}}}}),
            Outcome::SilentOverflow => {
                json!({"text": "big", "usage": {"input": 50000, "output": 5}})
            }
            Outcome::Overloaded => {
                json!({"error": {"status": 400, "body": "overloaded_error: try again"}})
            }
            Outcome::Dropped => json!({
                "text": "a reply long enough to be cut off in the middle of its stream",
                "chunk_size": 8, "drop_after_bytes": 300
            }),
        }
    }

    /// Whether the loop goes on by design after this reply (the model asked for tools).
    fn calls_tools(self) -> bool {
        matches!(self, Outcome::ToolCall | Outcome::CutToolCall)
    }
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Text),
        Just(Outcome::Empty),
        Just(Outcome::ToolCall),
        Just(Outcome::CutToolCall),
        Just(Outcome::OverflowError),
        Just(Outcome::SilentOverflow),
        Just(Outcome::Overloaded),
        Just(Outcome::Dropped),
    ]
}

/// A provider that keeps misbehaving: never asks for tools (that would go on by design).
fn tail_outcome() -> impl Strategy<Value = Outcome> {
    outcome().prop_filter("tool calls go on by design", |o| !o.calls_tools())
}

struct Env {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
    sessions: PathBuf,
    server: MockLlm,
}

fn env(script: &[Outcome], tail: Outcome, summary_fails: bool) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let summary = if summary_fails {
        json!({"error": {"status": 400, "body": "invalid request"}})
    } else {
        json!({"text": "## Goal\nsummary"})
    };
    let script = json!({
        "rules": [{"match": SUMMARY_MARK, "reply": summary}],
        "sequence": script.iter().map(|o| o.reply()).collect::<Vec<_>>(),
        "default": tail.reply(),
    });
    let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": 16000, "maxTokens": 1000}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let settings = json!({
        "retry": {"baseDelayMs": 1, "maxRetries": MAX_RETRIES},
        "compaction": {"keepRecentTokens": 1}
    });
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    let sessions = dir.path().join("sessions");
    Env {
        _dir: dir,
        agent,
        cwd,
        sessions,
        server,
    }
}

fn session(env: &Env) -> AgentSession {
    mock_agent_session(&env.agent, &env.cwd, &env.sessions, &["read"])
}

fn is_summary(body: &Value) -> bool {
    body.to_string().contains(SUMMARY_MARK)
}

/// Reopens the file: no warnings, and every entry's parent is an earlier entry.
fn assert_valid_file(path: &std::path::Path) {
    let reopened = SessionManager::open(path, None).unwrap();
    assert!(
        reopened.load_warnings().is_empty(),
        "{:?}",
        reopened.load_warnings()
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut ids = std::collections::HashSet::new();
    for line in text.lines().skip(1) {
        let entry: Value = serde_json::from_str(line).unwrap();
        if let Some(parent) = entry["parentId"].as_str() {
            assert!(ids.contains(parent), "dangling parent: {line}");
        }
        ids.insert(entry["id"].as_str().unwrap().to_string());
    }
}

fn check(script: Vec<Outcome>, tail: Outcome, summary_fails: bool) {
    let env = env(&script, tail, summary_fails);
    let session = session(&env);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut agent_requests = 0;
    let mut seen = 0;
    for prompt in ["first prompt", "second prompt"] {
        let finished = rt.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(30),
                session.prompt(prompt, PromptOptions::default()),
            )
            .await
        });
        let finished = finished.expect("the prompt never finished");
        assert!(finished.is_ok(), "{finished:?}");
        let requests = env.server.requests();
        let new: Vec<_> = requests[seen..].iter().map(|r| r.body.clone()).collect();
        seen = requests.len();
        let summaries = new.iter().filter(|b| is_summary(b)).count();
        assert!(
            summaries <= SUMMARY_BOUND,
            "{prompt}: {summaries} summary requests"
        );
        agent_requests += new.len() - summaries;
    }
    let bound = script.len() + 2 * TAIL_BOUND;
    assert!(
        agent_requests <= bound,
        "{agent_requests} model requests for a script of {} (bound {bound})",
        script.len()
    );
    let file = session
        .with_session(|m| m.session_file().map(|p| p.to_path_buf()))
        .expect("a session file");
    assert_valid_file(&file);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_prompt_ends_with_bounded_requests_and_a_valid_file(
        script in prop::collection::vec(outcome(), 0..8),
        tail in tail_outcome(),
        summary_fails in any::<bool>(),
    ) {
        check(script, tail, summary_fails);
    }
}

/// The provider of the issue: every reply reports more input than the window. Before
/// the fix one prompt made over a thousand requests.
#[test]
fn a_provider_that_always_overflows_silently_is_asked_once_per_prompt() {
    let env = env(&[], Outcome::SilentOverflow, false);
    let session = session(&env);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        for prompt in ["one", "two"] {
            tokio::time::timeout(
                Duration::from_secs(30),
                session.prompt(prompt, PromptOptions::default()),
            )
            .await
            .unwrap()
            .unwrap();
        }
    });
    let agent: Vec<_> = env
        .server
        .requests()
        .into_iter()
        .filter(|r| !is_summary(&r.body))
        .collect();
    assert_eq!(agent.len(), 2);
}
