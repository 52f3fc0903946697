//! Faults in session files are visible, and no turn ever runs unsaved: the built `pi`
//! binary against the loopback model server, with session files damaged on purpose.
//!
//! - Truncated and malformed lines are reported — on stderr in print and JSON mode, as
//!   `session_load_warning` events in RPC mode (also after `switch_session`), as notices
//!   that stay in the terminal UI — and the turn still runs and is saved.
//! - A session whose header `cwd` is gone is refused with pi's message (exit code 1, the
//!   file unchanged byte for byte); the terminal UI asks instead, as pi does.
//! - A session file of a newer format version is never appended to and never runs a
//!   turn; `--fork <file>` continues it in a new file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::pi_project::{Project, conversation, jsonl, succeeded};
use crate::support::rpc_client::RpcClient;
use crate::support::tmux::{self, Tmux};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

fn replies(texts: &[&str]) -> Value {
    json!({"sequence": texts.iter().map(|t| json!({"text": t})).collect::<Vec<_>>()})
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs one print-mode turn so the project has a real session file; returns it.
fn first_session(project: &Project, question: &str) -> PathBuf {
    succeeded(&project.pi().args(["-p", question]).output().unwrap());
    project.session_file()
}

/// Damages a session file the way crashes and hand edits do: a line that is not JSON
/// after the header, and a last line cut off mid-write (no newline).
fn damage(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    std::fs::write(
        file,
        format!("{header}\n{{not json\n{rest}{{\"type\":\"message\",\"id\":\"cut"),
    )
    .unwrap();
}

/// The session file with `f` applied to its header.
fn edit_header(file: &Path, f: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(file).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    f(&mut header);
    std::fs::write(file, format!("{header}\n{rest}")).unwrap();
}

/// The number of lines of a file (the last one counted even without a newline).
fn line_count(file: &Path) -> usize {
    std::fs::read_to_string(file).unwrap().lines().count()
}

fn anonymized(project: &Project, text: &str) -> String {
    project.anonymize(text).trim_end().to_string()
}

// ----- load warnings -----

#[test]
fn print_mode_names_damaged_lines_on_stderr_and_still_saves_the_turn() {
    let project = Project::new(replies(&["first answer", "second answer"]));
    let file = first_session(&project, "first question");
    damage(&file);
    let damaged = std::fs::read(&file).unwrap();
    let lines = line_count(&file);

    let arg = file.to_str().unwrap();
    let out = project
        .pi()
        .args(["-p", "--session", arg, "second question"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out).trim(), "second answer");
    assert_eq!(
        stderr(&out).replace(arg, "<file>").trim_end(),
        format!(
            "Warning: <file>: line {lines}, the last one, is incomplete (pi was probably stopped \
             while writing it). It was skipped and kept in the file; new entries start on a fresh line.\n\
             Warning: <file>: 1 line(s) are not valid JSON (first: line 2). They were skipped and \
             are kept in the file."
        )
    );

    // The damage stays as it was; the turn follows on fresh lines.
    let now = std::fs::read(&file).unwrap();
    assert!(now.starts_with(&damaged));
    let added = jsonl(
        std::str::from_utf8(&now[damaged.len()..])
            .unwrap()
            .trim_start(),
    );
    let roles: Vec<_> = added
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    // The model saw the earlier conversation.
    assert_eq!(
        conversation(&project.requests()[1]),
        "user: first question\nassistant: first answer\nuser: second question"
    );
}

#[test]
fn json_mode_writes_load_warnings_to_stderr_and_keeps_stdout_pis_stream() {
    let project = Project::new(replies(&["first answer", "second answer"]));
    let file = first_session(&project, "first question");
    damage(&file);

    let out = project
        .pi()
        .args([
            "--mode",
            "json",
            "--session",
            file.to_str().unwrap(),
            "again",
        ])
        .output()
        .unwrap();
    let stdout = succeeded(&out);
    let types: Vec<String> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string())
        .collect();
    assert_eq!(types[0], "\"session\"");
    assert!(!types.iter().any(|t| t.contains("warning")), "{types:?}");
    assert!(types.contains(&"\"agent_end\"".to_string()));
    let err = stderr(&out);
    assert!(err.contains("the last one, is incomplete"), "{err}");
    assert!(
        err.contains("1 line(s) are not valid JSON (first: line 2)"),
        "{err}"
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("second answer")
    );
}

fn rpc(project: &Project, extra: &[&str]) -> RpcClient {
    let mut cmd = project.pi();
    cmd.args(["--mode", "rpc"]).args(extra);
    RpcClient::spawn(cmd)
}

/// `type kind sessionFile-name` of a `session_load_warning` event.
fn warning_event(project: &Project, v: &Value) -> String {
    assert_eq!(v["type"], "session_load_warning", "{v}");
    let file = v["sessionFile"].as_str().unwrap();
    assert!(
        v["message"].as_str().unwrap().starts_with(file),
        "the message names the file: {v}"
    );
    format!(
        "{} {}",
        v["kind"].as_str().unwrap(),
        project.anonymize(file)
    )
}

#[test]
fn rpc_mode_announces_load_warnings_as_events_at_start_and_after_switch_session() {
    let project = Project::new(replies(&["first answer", "second answer", "third"]));
    let file = first_session(&project, "first question");
    damage(&file);
    // A second session with an id used twice.
    let other = project.dir.path().join("other.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let (header, _) = text.split_once('\n').unwrap();
    let entries: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"role\":\"user\""))
        .collect();
    std::fs::write(
        &other,
        format!("{header}\n{}\n{}\n", entries[0], entries[0]),
    )
    .unwrap();

    let mut client = rpc(&project, &["--session", file.to_str().unwrap()]);
    let first = client.next();
    let second = client.next();
    assert_eq!(
        [
            warning_event(&project, &first),
            warning_event(&project, &second)
        ],
        [
            format!(
                "truncated_last_line {}",
                project.anonymize(file.to_str().unwrap())
            ),
            format!(
                "malformed_lines {}",
                project.anonymize(file.to_str().unwrap())
            ),
        ]
    );
    // The turn runs and is saved.
    let events = client.prompt("second question");
    assert!(events.iter().any(|e| e["type"] == "agent_end"));
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("second answer")
    );

    let before = client.seen.len();
    let data = client.ok(json!({"type": "switch_session", "sessionPath": other}));
    assert_eq!(data, json!({"cancelled": false}));
    let warnings: Vec<String> = client.seen[before..]
        .iter()
        .filter(|v| v["type"] == "session_load_warning")
        .map(|v| warning_event(&project, v))
        .collect();
    assert_eq!(warnings, ["duplicate_ids <tmp>/other.jsonl"]);
    let (status, _) = client.close();
    assert!(status.success());
}

// ----- a session whose directory is gone -----

/// A session file (one finished turn) whose header names `<tmp>/gone`.
fn session_in_gone_dir(project: &Project) -> (PathBuf, Vec<u8>) {
    let file = first_session(project, "first question");
    let gone = project.dir.path().join("gone");
    edit_header(&file, |h| h["cwd"] = json!(gone));
    let bytes = std::fs::read(&file).unwrap();
    (file, bytes)
}

#[test]
fn a_session_whose_cwd_is_gone_is_refused_with_pis_message_and_left_unchanged() {
    let project = Project::new(replies(&["first answer", "forked answer"]));
    let (file, bytes) = session_in_gone_dir(&project);
    let arg = file.to_str().unwrap();
    let expected = "Stored session working directory does not exist: <tmp>/gone\n\
                    Session file: <file>\n\
                    Current working directory: <tmp>/proj\n\
                    To continue this conversation in the current directory, fork it into a \
                    new session: pi --fork <file>";
    for mode in [&["-p"][..], &["--mode", "json"], &["--mode", "rpc"]] {
        let out = project
            .pi()
            .args(mode)
            .args(["--session", arg, "go on"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{mode:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{mode:?}");
        let err = stderr(&out).replace(arg, "<file>");
        assert_eq!(
            anonymized(&project, &err),
            format!("Error: {expected}"),
            "{mode:?}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "{mode:?}");
    }
    assert_eq!(project.requests().len(), 1, "no turn ran");

    // RPC `switch_session` refuses it too (pi's error), and the session in use goes on.
    let mut client = rpc(&project, &["--no-session"]);
    let response = client.request(json!({"type": "switch_session", "sessionPath": file}));
    assert_eq!(response["success"], false);
    let error = response["error"].as_str().unwrap().replace(arg, "<file>");
    assert!(
        anonymized(&project, &error).starts_with(
            "Stored session working directory does not exist: <tmp>/gone\nSession file: <file>\n"
        ),
        "{error}"
    );
    drop(client);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // What the message suggests works: a fork in the current directory.
    let out = project
        .pi()
        .args(["-p", "--fork", arg, "go on"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out).trim(), "forked answer");
    assert_eq!(
        conversation(&project.requests()[1]),
        "user: first question\nassistant: first answer\nuser: go on"
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

// ----- a newer format version -----

#[test]
fn a_newer_format_session_is_never_appended_to_and_fork_continues_it() {
    let project = Project::new(replies(&["first answer", "forked answer"]));
    let file = first_session(&project, "first question");
    edit_header(&file, |h| h["version"] = json!(99));
    let bytes = std::fs::read(&file).unwrap();
    let arg = file.to_str().unwrap();
    let expected = "Error: Cannot continue session <file>: it uses session format version 99, \
                    newer than the version 3 this pi understands. Nothing in it was changed. \
                    Upgrade pi, or fork it into a new session to continue.\n\
                    To continue this conversation in a new session file: pi --fork <file>";

    // `--session` in each mode, and `--continue` (it is the newest session here).
    let runs: [&[&str]; 4] = [
        &["-p", "--session", arg, "go on"],
        &["--mode", "json", "--session", arg, "go on"],
        &["--mode", "rpc", "--session", arg],
        &["-p", "-c", "go on"],
    ];
    for args in runs {
        let out = project.pi().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out).replace(arg, "<file>").trim_end(),
            expected,
            "{args:?}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), bytes, "{args:?}");
    }
    assert_eq!(project.requests().len(), 1, "no turn ran");

    // RPC `switch_session` refuses it and the session in use stays.
    let mut client = rpc(&project, &["--no-session"]);
    let response = client.request(json!({"type": "switch_session", "sessionPath": file}));
    assert_eq!(response["success"], false);
    assert_eq!(
        format!("Error: {}", response["error"].as_str().unwrap()).replace(arg, "<file>"),
        expected
    );
    let state = client.ok(json!({"type": "get_state"}));
    assert!(state.get("sessionFile").is_none(), "{state}");
    drop(client);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // `--fork` copies the conversation into a new, current-format file and goes on there.
    let out = project
        .pi()
        .args(["-p", "--fork", arg, "go on"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out).trim(), "forked answer");
    assert_eq!(
        conversation(&project.requests()[1]),
        "user: first question\nassistant: first answer\nuser: go on"
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let dir = file.parent().unwrap();
    let fork: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| *p != file)
        .collect();
    assert_eq!(fork.len(), 1, "{fork:?}");
    let entries = jsonl(&std::fs::read_to_string(&fork[0]).unwrap());
    assert_eq!(entries[0]["version"], 3);
    assert_eq!(entries[0]["parentSession"], json!(file));
    assert!(
        entries
            .iter()
            .any(|e| e["message"]["content"][0]["text"] == "forked answer")
    );
}

/// The library refuses too: an `AgentSession` on a session that accepts no appends never
/// sends a prompt (what the modes refuse at startup cannot slip through another way).
#[tokio::test]
async fn a_read_only_session_never_runs_a_turn_through_the_library() {
    use pi::core::agent_session::{AgentSession, AgentSessionOptions, PromptOptions};

    let project = Project::new(replies(&["first answer", "never sent"]));
    let file = first_session(&project, "first question");
    edit_header(&file, |h| h["version"] = json!(99));
    let bytes = std::fs::read(&file).unwrap();
    let registry = pi::ai::models::ModelRegistry::load(&project.agent_dir());
    let model = registry.find("mock", "mock-model").cloned();
    let session = AgentSession::new(AgentSessionOptions {
        cwd: project.cwd(),
        paths: pi::core::paths::AgentPaths::new(project.agent_dir()),
        settings: pi::core::settings::Settings::load(
            &project.agent_dir(),
            &project.cwd(),
            pi::core::trust::ProjectTrust::Trusted,
        ),
        registry,
        session: pi::session::SessionManager::open(&file, None).unwrap(),
        model,
        thinking: pi::ai::model::ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tool_names: Vec::new(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    });
    let err = session
        .prompt("go on", PromptOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.starts_with(&format!(
            "Cannot continue session {}: it uses session format version 99",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(session.continue_run().await.unwrap_err(), err);
    assert_eq!(project.requests().len(), 1, "no request was sent");
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

// ----- the terminal UI -----

fn skip_without_tmux() -> bool {
    if tmux::available() {
        return false;
    }
    eprintln!("skipped: tmux is not installed");
    true
}

/// `pi --provider mock --model mock-model <extra>` in tmux, 110×40.
fn tui(project: &Project, extra: &str) -> Tmux {
    project.tui(extra)
}

/// The screen without line wrapping getting in the way of `contains`.
fn flat(screen: &str) -> String {
    screen.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn tui_keeps_load_theme_and_keybinding_warnings_after_the_first_frame_and_a_prompt() {
    if skip_without_tmux() {
        return;
    }
    let project = Project::new(replies(&["first answer", "second answer"]));
    let file = first_session(&project, "first question");
    damage(&file);
    std::fs::write(
        project.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "theme": "no-such-theme"}"#,
    )
    .unwrap();
    std::fs::write(
        project.agent_dir().join("keybindings.json"),
        r#"{"app.no.such": "ctrl+q"}"#,
    )
    .unwrap();

    let t = tui(&project, &format!("--session {}", file.display()));
    let expected = [
        "theme \"no-such-theme\" not found",
        "\"app.no.such\": unknown action id",
        "the last one, is incomplete",
        "1 line(s) are not valid JSON (first: line 2)",
    ];
    let shown = |screen: &str| {
        let screen = flat(screen);
        screen.contains("first answer") && expected.iter().all(|w| screen.contains(w))
    };
    t.wait_until("the session and every warning", WAIT, shown);
    // Still there a moment later (no later frame wipes them) and after a prompt.
    std::thread::sleep(Duration::from_millis(300));
    assert!(shown(&t.screen()), "{}", t.screen());
    t.type_text("second question");
    t.keys(&["Enter"]);
    t.wait_for("second answer", WAIT);
    let history = flat(&t.history());
    for w in expected {
        assert!(history.contains(w), "{w} is gone:\n{}", t.history());
    }
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("second answer")
    );
}

#[test]
fn tui_asks_before_continuing_a_session_whose_cwd_is_gone() {
    if skip_without_tmux() {
        return;
    }
    let project = Project::new(replies(&["first answer", "answer here", "resumed"]));
    let (file, _) = session_in_gone_dir(&project);
    std::fs::write(
        project.agent_dir().join("settings.json"),
        r#"{"quietStartup": true}"#,
    )
    .unwrap();

    // Startup: pi's question on the terminal, before the UI.
    let t = tui(&project, &format!("--session {}", file.display()));
    let screen = t.wait_for("[y/N]", WAIT);
    assert!(
        flat(&screen).contains("cwd from session file does not exist"),
        "{screen}"
    );
    t.type_text("y");
    t.keys(&["Enter"]);
    t.wait_for("first answer", WAIT);
    t.type_text("go on");
    t.keys(&["Enter"]);
    t.wait_for("answer here", WAIT);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("answer here")
    );
    drop(t);

    // `--resume` at startup: the question as a dialog; Escape declines and pi quits.
    let before = std::fs::read(&file).unwrap();
    let t = tui(&project, "--resume");
    t.wait_for("first question", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Session cwd not found", WAIT);
    t.keys(&["Escape"]);
    t.wait_until("pi to quit", WAIT, |_| t.exited());
    assert_eq!(std::fs::read(&file).unwrap(), before);
    drop(t);

    // `/resume` of such a session: the same dialog, Yes continues here.
    let t = tui(&project, "");
    t.wait_until("the editor", WAIT, |s| s.contains("mock-model"));
    t.type_text("/resume");
    t.keys(&["Enter"]);
    t.wait_for("first question", WAIT);
    t.keys(&["Enter"]);
    let screen = t.wait_for("Session cwd not found", WAIT);
    assert!(
        flat(&screen).contains("continue in current cwd"),
        "{screen}"
    );
    t.keys(&["Enter"]); // Yes
    t.wait_for("Resumed session in current cwd", WAIT);
    t.type_text("and now");
    t.keys(&["Enter"]);
    t.wait_for("resumed", WAIT);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("and now") && text.contains("\"resumed\""),
        "{text}"
    );
}
