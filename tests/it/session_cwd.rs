//! A session file opened from another project runs in the directory its header records,
//! as in pi (`SessionManager.open` takes the header's `cwd`, and the runtime is built for
//! that directory): tools, context files and the footer are that directory's, in print,
//! JSON and RPC mode and in the terminal UI. `/import` of a file whose directory is gone
//! asks first, as `--session` and `/resume` do. The built `pi` against the loopback
//! model server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::pi_project::{Project, succeeded, text_of};
use crate::support::rpc_client::RpcClient;
use crate::support::tmux::{self, Tmux};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// A session made in the project by one print-mode turn, whose header then names
/// `<tmp>/other` (which exists, with its own AGENTS.md); the project has an AGENTS.md
/// too. Returns the file and the other directory.
fn session_of_other_project(project: &Project) -> (PathBuf, PathBuf) {
    succeeded(
        &project
            .pi()
            .args(["-p", "first question"])
            .output()
            .unwrap(),
    );
    let file = project.session_file();
    let other = project.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("AGENTS.md"), "Rules of OTHER-PROJECT.\n").unwrap();
    project.write("AGENTS.md", "Rules of STARTUP-PROJECT.\n");
    set_header_cwd(&file, &other);
    (file, other)
}

fn set_header_cwd(file: &Path, cwd: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    header["cwd"] = json!(cwd);
    std::fs::write(file, format!("{header}\n{rest}")).unwrap();
}

/// The answers: the first turn's, then `pwd` through the bash tool, then a last word.
fn script() -> Value {
    json!({"sequence": [
        {"text": "first answer"},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "all done here"},
    ]})
}

/// What the model was told by the bash tool in the last request, and that request's
/// system prompt.
fn pwd_and_system_prompt(project: &Project) -> (String, String) {
    let requests = project.requests();
    let last = requests.last().unwrap();
    let messages = last["messages"].as_array().unwrap();
    let tool = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result in {last}"));
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .unwrap_or_else(|| panic!("no system prompt in {last}"));
    (text_of(&tool["content"]), text_of(&system["content"]))
}

#[test]
fn print_and_json_mode_run_an_opened_session_in_its_headers_directory() {
    for mode in [&["-p"][..], &["--mode", "json"]] {
        let project = Project::new(script());
        let (file, other) = session_of_other_project(&project);
        let out = project
            .pi()
            .args(mode)
            .args(["--session", file.to_str().unwrap(), "where am I"])
            .output()
            .unwrap();
        succeeded(&out);
        let (pwd, system) = pwd_and_system_prompt(&project);
        assert_eq!(pwd.trim(), other.display().to_string(), "{mode:?}");
        assert!(system.contains("OTHER-PROJECT"), "{mode:?}: {system}");
        assert!(!system.contains("STARTUP-PROJECT"), "{mode:?}: {system}");
        // The turn went into the opened file.
        assert!(
            std::fs::read_to_string(&file)
                .unwrap()
                .contains("where am I")
        );
    }
}

#[test]
fn rpc_mode_runs_an_opened_session_in_its_headers_directory() {
    let project = Project::new(script());
    let (file, other) = session_of_other_project(&project);
    let mut cmd = project.pi();
    cmd.args(["--mode", "rpc", "--session", file.to_str().unwrap()]);
    let mut rpc = RpcClient::spawn(cmd);
    let result = rpc.ok(json!({"type": "bash", "command": "pwd"}));
    assert_eq!(
        result["output"].as_str().unwrap_or_default().trim(),
        other.display().to_string(),
        "{result}"
    );
    rpc.close();
}

#[test]
fn a_new_session_still_runs_where_pi_was_started() {
    let project = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "all done here"},
    ]}));
    succeeded(&project.pi().args(["-p", "where am I"]).output().unwrap());
    let (pwd, _) = pwd_and_system_prompt(&project);
    assert_eq!(pwd.trim(), project.cwd().display().to_string());
}

fn skip_without_tmux() -> bool {
    if tmux::available() {
        return false;
    }
    eprintln!("skipped: tmux is not installed");
    true
}

fn tui(project: &Project, extra: &str) -> Tmux {
    std::fs::write(
        project.agent_dir().join("settings.json"),
        r#"{"quietStartup": true}"#,
    )
    .unwrap();
    project.tui(extra)
}

#[test]
fn the_terminal_ui_runs_an_opened_session_in_its_headers_directory() {
    if skip_without_tmux() {
        return;
    }
    let project = Project::new(script());
    let (file, other) = session_of_other_project(&project);
    let t = tui(&project, &format!("--session {}", file.display()));
    t.wait_for("first answer", WAIT);
    // The footer names the session's directory.
    let other_text = other.display().to_string();
    t.wait_until("the footer in the other directory", WAIT, |s| {
        s.contains(&other_text)
    });
    t.type_text("where am I");
    t.keys(&["Enter"]);
    t.wait_for("all done here", WAIT);
    let (pwd, system) = pwd_and_system_prompt(&project);
    assert_eq!(pwd.trim(), other_text);
    assert!(system.contains("OTHER-PROJECT"), "{system}");
}

#[test]
fn import_of_a_session_whose_cwd_is_gone_asks_first() {
    if skip_without_tmux() {
        return;
    }
    let project = Project::new(json!({"sequence": [
        {"text": "first answer"},
        {"text": "imported and answered"},
    ]}));
    succeeded(
        &project
            .pi()
            .args(["-p", "first question"])
            .output()
            .unwrap(),
    );
    let made = project.session_file();
    // The file to import lives outside the session folder; its directory is gone.
    let outside = project.dir.path().join("elsewhere.jsonl");
    std::fs::rename(&made, &outside).unwrap();
    set_header_cwd(&outside, &project.dir.path().join("gone"));
    let session_dir = made.parent().unwrap().to_path_buf();
    let copied = session_dir.join("elsewhere.jsonl");

    let t = tui(&project, "");
    t.wait_until("the editor", WAIT, |s| s.contains("mock-model"));
    let import = format!("/import {}", outside.display());

    // Declined: nothing is copied and the session stays.
    t.type_text(&import);
    t.keys(&["Enter"]);
    t.wait_for("Replace current session with", WAIT);
    t.keys(&["Enter"]); // Yes
    let screen = t.wait_for("Session cwd not found", WAIT);
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("cwd from session file does not exist"),
        "{screen}"
    );
    assert!(flat.contains("continue in current cwd"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_for("Import cancelled", WAIT);
    assert!(!copied.exists());

    // Accepted: imported and continued here.
    t.type_text(&import);
    t.keys(&["Enter"]);
    t.wait_for("Replace current session with", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Session cwd not found", WAIT);
    t.keys(&["Enter"]); // Yes
    t.wait_for("Session imported from", WAIT);
    t.wait_for("first answer", WAIT);
    t.type_text("go on");
    t.keys(&["Enter"]);
    t.wait_for("imported and answered", WAIT);
    let text = std::fs::read_to_string(&copied).unwrap();
    assert!(text.contains("imported and answered"), "{text}");
}
