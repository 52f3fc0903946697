//! Automatic compaction through the built binary against the loopback model server: the
//! threshold trigger, overflow recovery (compact, then retry the turn once) and a second
//! overflow reported instead of looping.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

struct Project {
    dir: tempfile::TempDir,
    server: MockLlm,
}

const SUMMARY: &str = "## Goal\nKeep going.\n\n## Progress\n### Done\n- [x] Earlier turns";

impl Project {
    fn new(script: Value, context_window: u64, settings: Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model", "contextWindow": context_window, "maxTokens": 4000}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
        Project { dir, server }
    }

    fn pi(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_pi"))
            .current_dir(self.dir.path().join("proj"))
            .env("HOME", self.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .args(["--provider", "mock", "--model", "mock-model"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn session_lines(&self) -> Vec<Value> {
        let root = self.dir.path().join("home/.pi/agent/sessions");
        let dir: PathBuf = std::fs::read_dir(root)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let file = std::fs::read_dir(dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn is_summary_request(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|x| x.to_string().contains("<conversation>")))
}

fn first_user_text(body: &Value) -> String {
    body["messages"][1]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn context_over_the_threshold_is_compacted_after_the_turn() {
    // Window 20000, reserve 16384: the threshold is 3616 tokens. The second answer
    // reports 5000 tokens of context, so a compaction follows it.
    let p = Project::new(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY}}],
            "sequence": [
                {"text": format!("first answer {}", "padding ".repeat(40)), "usage": {"input": 1000, "output": 10}},
                {"text": format!("second answer {}", "padding ".repeat(40)), "usage": {"input": 5000, "output": 10}},
                {"text": "third answer"}
            ]
        }),
        20_000,
        json!({"compaction": {"keepRecentTokens": 10}}),
    );
    assert!(p.pi(&["-p", "one"]).status.success());
    let out = p.pi(&["-c", "--mode", "json", "two"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let start = events
        .iter()
        .find(|e| e["type"] == "compaction_start")
        .expect("compaction_start");
    assert_eq!(start["reason"], "threshold");
    let end = events
        .iter()
        .find(|e| e["type"] == "compaction_end")
        .expect("compaction_end");
    assert_eq!(
        end["result"]["summary"].as_str().unwrap().lines().next(),
        Some("## Goal")
    );
    assert_eq!(end["willRetry"], false);
    let lines = p.session_lines();
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    assert_eq!(compaction["fromHook"], false);
    assert!(compaction["summary"].as_str().unwrap().starts_with(SUMMARY));

    // The next request starts with the summary and keeps only the recent messages.
    assert!(p.pi(&["-c", "-p", "three"]).status.success());
    let requests = p.server.requests();
    let last = &requests.last().unwrap().body;
    assert!(!is_summary_request(last));
    assert!(
        first_user_text(last)
            .starts_with("The conversation history before this point was compacted"),
        "{last}"
    );
    let texts: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.to_string())
        .collect();
    assert!(
        !texts.iter().any(|t| t.contains("first answer")),
        "old turns were summarized"
    );
    assert!(texts.last().unwrap().contains("three"));
}

#[test]
fn a_context_overflow_is_compacted_and_the_turn_retried_once() {
    let p = Project::new(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY}}],
            "sequence": [
                {"text": "first answer"},
                {"error": {"status": 400, "body": {"error": {"message": "prompt is too long: 250000 tokens > 200000 maximum"}}}},
                {"text": "answer after recovery"}
            ]
        }),
        200_000,
        json!({"compaction": {"keepRecentTokens": 10}, "retry": {"enabled": false}}),
    );
    assert!(p.pi(&["-p", "one"]).status.success());
    let out = p.pi(&["-c", "-p", "two"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "answer after recovery\n"
    );
    let lines = p.session_lines();
    // The failed answer stays in the file, then the compaction, then the retried answer.
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => format!(
                "{}{}",
                l["message"]["role"].as_str().unwrap(),
                l["message"]["stopReason"]
                    .as_str()
                    .map(|s| format!(":{s}"))
                    .unwrap_or_default()
            ),
            other => other.to_string(),
        })
        .collect();
    let tail: Vec<&str> = kinds
        .iter()
        .rev()
        .take(4)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        ["user", "assistant:error", "compaction", "assistant:stop"],
        "{kinds:?}"
    );
    // The retry was sent with the summary first.
    let requests = p.server.requests();
    let retried = &requests.last().unwrap().body;
    assert!(first_user_text(retried).starts_with("The conversation history before this point"));
}

#[test]
fn a_second_overflow_after_recovery_is_reported_not_looped() {
    let overflow = json!({"error": {"status": 400, "body": {"error": {"message": "prompt is too long: 250000 tokens > 200000 maximum"}}}});
    let p = Project::new(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": SUMMARY}}],
            "sequence": [{"text": "first answer"}, overflow.clone(), overflow.clone(), overflow]
        }),
        200_000,
        json!({"compaction": {"keepRecentTokens": 10}, "retry": {"enabled": false}}),
    );
    assert!(p.pi(&["-p", "one"]).status.success());
    let out = p.pi(&["-c", "--mode", "json", "two"]);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ends: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "compaction_end")
        .collect();
    assert_eq!(ends.len(), 2, "one recovery, then the give-up report");
    assert_eq!(ends[0]["willRetry"], true);
    assert!(
        ends[1]["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("Context overflow recovery failed after one compact-and-retry attempt"),
        "{}",
        ends[1]
    );
    // Exactly: first turn, the overflow, the summary request, the retry. No loop.
    let chat_requests = p
        .server
        .requests()
        .iter()
        .filter(|r| !is_summary_request(&r.body))
        .count();
    assert_eq!(chat_requests, 3);
}
