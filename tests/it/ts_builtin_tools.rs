//! pi's built-in tool factories (`createReadTool(cwd)` & co.) in TypeScript extensions,
//! with pi's examples from the reference install run through the binary against the
//! loopback model: without options they run pi-rs's tools (`run_tool`); with a
//! `spawnHook` or custom `operations` the host runs the tool logic through them — `ssh`
//! is driven with a stand-in `ssh` program that runs the "remote" commands in another
//! folder, so every file the tools touch shows where they ran.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;

use crate::support::pi_project::{Project, conversation};
use crate::ts_extensions::examples_dir;
use serde_json::json;

/// The path of one of pi's examples; skips the test (saying why) when they are not
/// installed and cannot be (no node/npm).
macro_rules! pi_example {
    ($name:expr) => {
        match examples_dir() {
            Ok(dir) => dir.join($name),
            Err(why) => {
                eprintln!("skipped: pi's example extensions are not available: {why}");
                return;
            }
        }
    };
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run(p: &Project, extension: &Path, args: &[&str]) -> std::process::Output {
    p.pi().arg("-e").arg(extension).args(args).output().unwrap()
}

#[test]
fn built_in_tool_renderer_delegates_read_and_bash_to_pi_rs_tools() {
    let renderer = pi_example!("built-in-tool-renderer.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo from-bash; exit 4"}}]},
        {"tool_calls": [{"name": "edit", "arguments": {"path": "notes.txt", "edits": [{"oldText": "first", "newText": "edited"}]}}]},
        {"text": "Done."}
    ]}));
    p.write("notes.txt", "first line\n");
    let out = run(&p, &renderer, &["-p", "look"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = p.requests();
    let seen = conversation(&requests[3]);
    assert!(seen.contains("first line"), "{seen}");
    assert!(seen.contains("from-bash"), "{seen}");
    assert!(seen.contains("Command exited with code 4"), "{seen}");
    assert!(
        seen.contains("Successfully replaced 1 block(s) in notes.txt."),
        "{seen}"
    );
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("notes.txt")).unwrap(),
        "edited line\n"
    );
}

#[test]
fn minimal_mode_loads_and_its_seven_tools_run() {
    let minimal = pi_example!("minimal-mode.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "ls", "arguments": {}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "new.txt", "content": "made\n"}}]},
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "made"}}]},
        {"text": "Done."}
    ]}));
    p.write("present.txt", "here\n");
    let out = run(&p, &minimal, &["-p", "work"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = conversation(&p.requests()[3]);
    assert!(seen.contains("present.txt"), "{seen}");
    assert!(seen.contains("Successfully wrote to new.txt"), "{seen}");
    assert!(seen.contains("new.txt:1: made"), "{seen}");
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("new.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn bash_spawn_hook_changes_the_environment_of_the_command() {
    let hook = pi_example!("bash-spawn-hook.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hook=$PI_SPAWN_HOOK profile=$FROM_PROFILE"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo out; exit 2"}}]},
        {"text": "Done."}
    ]}));
    // The hook sources ~/.profile first: give the test home one.
    let home = p
        .agent_dir()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".profile"), "export FROM_PROFILE=yes\n").unwrap();
    let out = run(&p, &hook, &["-p", "run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = p.requests();
    let seen = conversation(&requests[2]);
    assert!(seen.contains("hook=1 profile=yes"), "{seen}");
    assert!(seen.contains("Command exited with code 2"), "{seen}");
}

/// A stand-in `ssh`: `ssh <remote> <command>` runs the command with `sh -c` here.
const FAKE_SSH: &str = "#!/bin/sh\nshift\nexec sh -c \"$1\"\n";

#[test]
fn ssh_runs_read_write_edit_and_bash_through_its_remote_operations() {
    let ssh = pi_example!("ssh.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "write", "arguments": {"path": "sub/r.txt", "content": "one\ntwo\n"}}]},
        {"tool_calls": [{"name": "edit", "arguments": {"path": "sub/r.txt", "edits": [{"oldText": "two", "newText": "2"}]}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "sub/r.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "pwd; ls sub"}}]},
        {"text": "Done."}
    ]}));
    let bin = p.cwd().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    crate::support::extensions::script(&bin, "ssh", FAKE_SSH);
    let remote = tempfile::tempdir().unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = p
        .pi()
        .env("PATH", path)
        .arg("-e")
        .arg(&ssh)
        .arg("--ssh")
        .arg(format!("box:{}", remote_dir.display()))
        .args(["-p", "edit remotely"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Everything happened in the "remote" folder, nothing locally.
    assert_eq!(
        std::fs::read_to_string(remote_dir.join("sub/r.txt")).unwrap(),
        "one\n2\n"
    );
    assert!(!p.cwd().join("sub").exists());
    let requests = p.requests();
    let seen = conversation(&requests[4]);
    assert!(seen.contains("Successfully wrote to sub/r.txt"), "{seen}");
    assert!(
        seen.contains("Successfully replaced 1 block(s) in sub/r.txt."),
        "{seen}"
    );
    assert!(seen.contains("one\n2"), "{seen}");
    assert!(seen.contains(&remote_dir.display().to_string()), "{seen}");
    // The system prompt names the remote folder.
    let prompt = crate::support::pi_project::system_prompt(&requests[0]);
    assert!(prompt.contains("(via SSH: box)"), "{prompt}");
}
