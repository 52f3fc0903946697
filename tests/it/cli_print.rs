//! The built `pi` binary in print and JSON mode against the loopback model server: a
//! read → edit → bash task on a temp project, `--continue`, the JSON event stream,
//! Ctrl+C killing running commands, and the errors users see.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

struct Project {
    dir: tempfile::TempDir,
    server: MockLlm,
}

impl Project {
    fn new(script: Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        Project { dir, server }
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("home/.pi/agent")
    }

    fn pi(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.current_dir(self.cwd())
            .env("HOME", self.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .args(["--offline", "--provider", "mock", "--model", "mock-model"])
            .stdin(Stdio::null());
        cmd
    }

    fn session_files(&self) -> Vec<PathBuf> {
        let root = self.agent_dir().join("sessions");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(root).into_iter().flatten().flatten() {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                files.push(f.path());
            }
        }
        files
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn basic_tools_script() -> Value {
    json!({"sequence": [
        {"text": "Let me read the file first.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "I'll fix the greeting.", "tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt && wc -l a.txt"}}]},
        {"text": "Done: a.txt now says 'hello world'."},
        {"text": "Creating b.txt.", "tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "content": "second file\n"}}]},
        {"text": "b.txt written."}
    ]})
}

#[test]
fn print_mode_runs_a_read_edit_bash_task_and_continue_sends_the_whole_history() {
    let p = Project::new(basic_tools_script());
    std::fs::write(p.cwd().join("a.txt"), "hello wrld\nsecond line\n").unwrap();
    let out = p
        .pi()
        .args(["-p", "Please fix the typo in a.txt"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Done: a.txt now says 'hello world'.\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "hello world\nsecond line\n"
    );
    let files = p.session_files();
    assert_eq!(files.len(), 1);
    let first = lines(&files[0]);
    assert_eq!(first[0]["type"], "session");
    assert_eq!(first[0]["version"], 3);
    assert_eq!(first[1]["type"], "model_change");
    assert_eq!(first[2]["type"], "thinking_level_change");
    // 11 entries plus the edit's file checkpoint (docs/checkpoints.md).
    assert_eq!(first.len(), 12);

    let out = p
        .pi()
        .args(["--continue", "-p", "Now create b.txt"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "b.txt written.\n");
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("b.txt")).unwrap(),
        "second file\n"
    );
    // Same file, appended; no new model/thinking entries.
    assert_eq!(p.session_files().len(), 1);
    let second = lines(&files[0]);
    // Four more entries and the write's file checkpoint.
    assert_eq!(second.len(), 17);
    assert_eq!(&second[..12], &first[..]);
    // The first request of the continued run carries the whole first conversation.
    let requests = p.server.requests();
    assert_eq!(requests.len(), 6);
    let messages = requests[4].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user"
        ]
    );
    assert_eq!(messages[9]["content"][0]["text"], "Now create b.txt");
}

#[test]
fn json_mode_prints_the_header_then_pi_events() {
    let p = Project::new(json!({"sequence": [
        {"text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "It says hi."}
    ]}));
    std::fs::write(p.cwd().join("a.txt"), "hi\n").unwrap();
    let out = p
        .pi()
        .args(["--mode", "json", "what is in a.txt?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary: Vec<String> = events
        .iter()
        .filter(|e| e["type"] != "message_update")
        .map(|e| {
            let t = e["type"].as_str().unwrap();
            match (e.get("message"), e.get("toolName")) {
                (Some(m), _) => format!("{t} {}", m["role"].as_str().unwrap()),
                (None, Some(n)) => format!("{t} {}", n.as_str().unwrap()),
                _ => t.to_string(),
            }
        })
        .collect();
    insta::assert_snapshot!(summary.join("\n"), @r"
    session
    agent_start
    turn_start
    message_start user
    message_end user
    message_start assistant
    message_end assistant
    tool_execution_start read
    tool_execution_end read
    message_start toolResult
    message_end toolResult
    turn_end assistant
    turn_start
    message_start assistant
    message_end assistant
    turn_end assistant
    agent_end
    agent_settled
    ");
    // Streaming deltas carry only the delta and the answer's usage, like pi 1.6.
    let delta = events
        .iter()
        .find(|e| e["assistantMessageEvent"]["type"] == "text_delta")
        .unwrap();
    let keys: Vec<&String> = delta.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "usage", "assistantMessageEvent"]);
    assert!(delta["usage"]["totalTokens"].is_u64(), "{delta}");
    assert!(delta["assistantMessageEvent"].get("partial").is_none());
    // Tools that ran say how long they took.
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert!(end["durationMs"].is_u64(), "{end}");
    let settled = events.last().unwrap();
    assert_eq!(settled, &json!({"type": "agent_settled", "aborted": false}));
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn ctrl_c_during_a_tool_kills_the_command_and_its_children() {
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"}}]},
        {"text": "never reached"}
    ]}));
    let mut child = p.pi().args(["-p", "run it"]).spawn().unwrap();
    let start = Instant::now();
    let (shell_pid, sleep_pid) = loop {
        let s = std::fs::read_to_string(p.cwd().join("shell.pid"));
        let c = std::fs::read_to_string(p.cwd().join("child.pid"));
        if let (Ok(s), Ok(c)) = (s, c)
            && let (Ok(s), Ok(c)) = (s.trim().parse::<i32>(), c.trim().parse::<i32>())
        {
            break (s, c);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(alive(shell_pid) && alive(sleep_pid));
    // SAFETY: sending SIGINT to our own child process.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let start = Instant::now();
    while (alive(shell_pid) || alive(sleep_pid)) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(shell_pid), "the shell survived");
    assert!(!alive(sleep_pid), "the background child survived");
}

#[test]
fn unknown_model_lists_the_closest_matches() {
    let p = Project::new(json!({"sequence": []}));
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .args(["--model", "mock-modl", "-p", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mock-modl"), "{err}");
    assert!(err.contains("mock/mock-model"), "{err}");
}

#[test]
fn missing_at_file_is_named_and_nothing_is_sent() {
    let p = Project::new(json!({"sequence": [{"text": "x"}]}));
    let out = p.pi().args(["-p", "@nope.md", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("File not found: ") && err.contains("nope.md"),
        "{err}"
    );
    assert!(p.server.requests().is_empty());
}

#[test]
fn a_failed_request_prints_the_error_and_exits_1() {
    let p = Project::new(json!({"sequence": [
        {"error": {"status": 400, "body": {"error": {"message": "bad request: no"}}}}
    ]}));
    let out = p.pi().args(["-p", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad request: no"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn piped_stdin_becomes_the_prompt_in_print_mode() {
    let p = Project::new(json!({"sequence": [{"text": "got it"}]}));
    let mut child = p
        .pi()
        .arg("summarize this")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"some piped text\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got it\n");
    let body = &p.server.requests()[0].body;
    assert_eq!(
        body["messages"][1]["content"][0]["text"],
        "some piped textsummarize this"
    );
}

#[test]
fn version_is_printed_without_touching_anything() {
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        env!("CARGO_PKG_VERSION")
    );
}

#[test]
fn export_writes_a_self_contained_page_and_names_it_like_pi() {
    let p = Project::new(basic_tools_script());
    std::fs::write(p.cwd().join("a.txt"), "hello wrld\nsecond line\n").unwrap();
    let out = p
        .pi()
        .args(["-p", "Please fix the typo in a.txt"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let session = p.session_files().remove(0);
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(p.cwd())
        .arg("--export")
        .arg(&session)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let name = format!(
        "pi-session-{}.html",
        session.file_stem().unwrap().to_string_lossy()
    );
    assert_eq!(stdout.trim(), format!("Exported to: {name}"));
    let html = std::fs::read_to_string(p.cwd().join(&name)).unwrap();
    assert!(html.contains("Please fix the typo in a.txt"));
    assert!(
        !html.contains("http://") || !html.contains("<script src="),
        "no external scripts"
    );
    // An explicit output path is honoured; a missing input is an error naming it.
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(p.cwd())
        .args(["--export", "missing.jsonl", "x.html"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl"));
}
