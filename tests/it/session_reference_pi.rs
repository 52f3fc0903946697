//! The reference pi (TypeScript, 0.73.1) opens a session file we wrote and sees the same
//! conversation; when it appends to our file, we still read it.
//!
//! Needs `node` and `npm` (pi is installed from the npm registry on first use by
//! `tests/support/reference-pi.sh`); without them the test prints why and passes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::time::Duration;

use crate::support::reference_pi::{available, rpc_command, run};
use crate::support::session::*;
use pi::ai::message::UserContent;
use pi::messages::{AgentMessage, BashExecutionMessage};
use pi::session::manager::SessionManager;
use serde_json::Value;

/// A session using every kind of entry pi knows, written by us.
fn write_session(sessions: &Path, cwd: &Path) -> SessionManager {
    let mut s = SessionManager::create(cwd, sessions).unwrap();
    s.append_model_change("mock", "mock-model").unwrap();
    s.append_thinking_level_change("off").unwrap();
    s.append_message(user("Read a.txt")).unwrap();
    s.append_message(assistant_calls("Reading it.", "call_1", "read"))
        .unwrap();
    s.append_message(tool_result("call_1", "read", "hello\n"))
        .unwrap();
    let answered = s.append_message(assistant("It says hello.")).unwrap();
    s.append_message(user("Now something else")).unwrap();
    s.append_message(assistant("Abandoned reply")).unwrap();
    s.branch_with_summary(
        Some(&answered),
        "The user tried something else.",
        None,
        Some(false),
    )
    .unwrap();
    let kept = s.append_message(user("Second try")).unwrap();
    s.append_message(assistant("Second answer")).unwrap();
    s.append_label_change(&kept, Some("second")).unwrap();
    s.append_compaction("Earlier: read a.txt.", &kept, 1234, None, Some(false))
        .unwrap();
    s.append_custom_message_entry(
        "my-ext",
        UserContent::Text("Injected note".into()),
        true,
        None,
    )
    .unwrap();
    s.append_message(AgentMessage::BashExecution(BashExecutionMessage {
        command: "ls".into(),
        output: "a.txt\n".into(),
        exit_code: Some(0),
        timestamp: 1_700_000_000_010,
        ..Default::default()
    }))
    .unwrap();
    s.append_message(user("And now?")).unwrap();
    s.append_message(assistant("Done.")).unwrap();
    s.append_custom_entry("my-ext", Some(serde_json::json!({"state": 1})))
        .unwrap();
    s
}

#[test]
fn reference_pi_reads_our_session_and_we_read_what_it_appends() {
    if let Err(why) = available() {
        eprintln!("skipped: {why}");
        return;
    }

    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let agent = home.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    // A provider pi can resolve; nothing is ever sent to it.
    std::fs::write(
        agent.join("models.json"),
        r#"{"providers":{"mock":{"baseUrl":"http://127.0.0.1:9/v1","api":"openai-completions","apiKey":"mock","models":[{"id":"mock-model","contextWindow":200000,"maxTokens":4000}]}}}"#,
    )
    .unwrap();
    let s = write_session(&agent.join("sessions/ours"), &project);
    let file = s.session_file().unwrap().to_path_buf();

    let mut pi = rpc_command(home.path(), &project);
    pi.arg("--session").arg(&file);
    let commands = concat!(
        r#"{"id":"m","type":"get_messages"}"#,
        "\n",
        r#"{"id":"s","type":"get_state"}"#,
        "\n",
        r#"{"id":"n","type":"set_session_name","name":"Renamed by pi"}"#,
        "\n",
    );
    let out = run(pi, commands, Duration::from_secs(60)).unwrap();
    let responses: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "response")
        .collect();
    let response = |command: &str| {
        responses
            .iter()
            .find(|r| r["command"] == command)
            .unwrap_or_else(|| panic!("no {command} response in: {out}"))
            .clone()
    };

    let theirs = response("get_messages")["data"]["messages"].clone();
    let ours = serde_json::to_value(&s.build_session_context().messages).unwrap();
    assert_eq!(theirs, ours, "pi's conversation equals ours");
    assert_eq!(ours.as_array().unwrap().len(), 7);

    let state = response("get_state")["data"].clone();
    assert_eq!(state["sessionFile"], file.to_str().unwrap());
    assert_eq!(state["sessionId"], s.session_id().as_str());
    assert_eq!(state["thinkingLevel"], "off");
    assert_eq!(state["messageCount"], 7);
    assert_eq!(response("set_session_name")["success"], true);

    let reopened = SessionManager::open(&file, None).unwrap();
    assert!(
        reopened.load_warnings().is_empty(),
        "{:?}",
        reopened.load_warnings()
    );
    assert_eq!(reopened.entry_count(), s.entry_count() + 1);
    assert_eq!(reopened.session_name(), Some("Renamed by pi"));
    assert_eq!(
        reopened.leaf_entry().unwrap().parent_id(),
        s.leaf_id().map(|l| l.as_str())
    );
    assert_eq!(reopened.build_session_context(), s.build_session_context());
}
