//! Escape stops automatic work in the terminal UI: a retry wait and an overflow
//! compaction end at once, nothing more is sent, and the editor takes the next prompt.

use std::time::{Duration, Instant};

use serde_json::json;

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux;

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

/// What a user may wait after Escape (the code's bound is 200 ms; tmux polling and a
/// loaded machine add to what the test sees).
const ESCAPE_LIMIT: Duration = Duration::from_secs(2);

#[test]
fn escape_stops_a_retry_wait() {
    require_tmux!();
    let env = Env::new(json!({
        "sequence": [{"error": {"status": 400, "body": "overloaded_error: try again"}}],
        "default": {"text": "fine now"}
    }));
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "retry": {"baseDelayMs": 60000}}"#,
    )
    .unwrap();
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "hello");
    t.wait_for("Retrying (1/3)", WAIT);
    let start = Instant::now();
    t.keys(&["Escape"]);
    t.wait_for("Retry cancelled", WAIT);
    let took = start.elapsed();
    eprintln!("retry wait cancelled after {took:?}");
    assert!(took < ESCAPE_LIMIT, "{took:?}");
    assert_eq!(env.server.requests().len(), 1, "nothing retried");
    submit(&t, "again");
    t.wait_for("fine now", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

#[test]
fn escape_stops_an_overflow_compaction() {
    require_tmux!();
    let env = Env::new(json!({
        "rules": [{"match": "You write summaries of working sessions",
                   "reply": {"text": "slow", "delay_ms": 30000}}],
        "sequence": [
            {"text": "seeded", "usage": {"input": 100, "output": 5}},
            {"error": {"status": 400, "body": {"error": {"message": "prompt is too long: 90000 tokens > 16000 maximum"}}}}
        ],
        "default": {"text": "after the cancel"}
    }));
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "compaction": {"keepRecentTokens": 1}}"#,
    )
    .unwrap();
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "seed");
    t.wait_for("seeded", WAIT);
    submit(&t, "overflow now");
    t.wait_for("Context overflow detected", WAIT);
    let start = Instant::now();
    t.keys(&["Escape"]);
    // pi's words for an automatic compaction (a `/compact` says "Error: Compaction
    // cancelled").
    t.wait_for("Auto-compaction cancelled", WAIT);
    let took = start.elapsed();
    eprintln!("overflow compaction cancelled after {took:?}");
    assert!(took < ESCAPE_LIMIT, "{took:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(env.server.requests().len(), 3, "seed, overflow, summary");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
