//! Without any model or key pi runs on an "unknown" stand-in model: `pi -p` fails with
//! pi's "No API key found for the selected model." and exit code 1, `--mode json` prints
//! the session header first, and RPC mode starts, answers `get_state` with the stand-in
//! and refuses a prompt with the same words. Each checked side by side with the reference
//! pi (1.6.0) where node is available; only the docs folder differs. pi 1.6 warns that
//! no model is available first, on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::support::reference_pi;

use serde_json::{Value, json};

/// An empty `HOME` and a working folder.
fn empty_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::create_dir_all(dir.path().join("cwd")).unwrap();
    dir
}

/// `pi ARGS` (ours or the reference) with nothing in the environment but PATH and HOME.
fn command(dir: &Path, reference: bool, args: &[&str]) -> Command {
    let mut cmd = if reference {
        reference_pi::script_command()
    } else {
        Command::new(env!("CARGO_BIN_EXE_pi"))
    };
    cmd.current_dir(dir.join("cwd"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .args(args);
    cmd
}

fn run(dir: &Path, reference: bool, args: &[&str]) -> Output {
    command(dir, reference, args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The text with each absolute docs path (`  /…/providers.md`) replaced by `<docs>`,
/// after checking that ours name files that exist.
fn docs_normalized(text: &str, ours: bool) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let doc = ["providers.md", "models.md"]
            .into_iter()
            .find(|d| body.ends_with(&format!("/{d}")));
        match doc {
            Some(doc) if body.starts_with("  /") => {
                if ours {
                    assert!(Path::new(body.trim()).is_file(), "{body}");
                }
                out.push_str(&format!("  <docs>/{doc}"));
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// pi 1.6's startup warning without a model.
const NO_MODELS_WARNING: &str = "Warning: No models available. Use /login to log into a provider via OAuth or API key. See:\n  <docs>/providers.md\n  <docs>/models.md\n";

/// The warning, then the error.
fn warning_then_no_key() -> String {
    format!("{NO_MODELS_WARNING}{NO_KEY}")
}

const NO_KEY: &str = "No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key. See:\n  <docs>/providers.md\n  <docs>/models.md\n";

#[test]
fn print_mode_without_a_model_fails_with_pis_words() {
    let dir = empty_home();
    let ours = run(dir.path(), false, &["-p", "hi"]);
    assert_eq!(ours.status.code(), Some(1));
    assert!(ours.stdout.is_empty(), "{ours:?}");
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert_eq!(docs_normalized(&stderr, true), warning_then_no_key());
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    let dir = empty_home();
    let theirs = run(dir.path(), true, &["-p", "hi"]);
    assert_eq!(theirs.status.code(), Some(1));
    assert!(theirs.stdout.is_empty(), "{theirs:?}");
    assert_eq!(
        docs_normalized(&String::from_utf8_lossy(&theirs.stderr), false),
        warning_then_no_key()
    );
}

/// The `type` of each stdout line and the normalized stderr of `--mode json hi`.
fn json_mode(reference: bool) -> (Option<i32>, Vec<String>, String) {
    let dir = empty_home();
    let out = run(dir.path(), reference, &["--mode", "json", "hi"]);
    let types = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string())
        .collect();
    let stderr = docs_normalized(&String::from_utf8_lossy(&out.stderr), !reference);
    (out.status.code(), types, stderr)
}

#[test]
fn json_mode_without_a_model_prints_the_header_then_fails() {
    let ours = json_mode(false);
    assert_eq!(
        ours,
        (
            Some(1),
            vec!["\"session\"".to_string()],
            warning_then_no_key()
        )
    );
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    assert_eq!(ours, json_mode(true));
}

/// Runs RPC mode, sends `commands` one by one (each after the previous answer) and
/// returns the responses, with session paths and ids replaced.
fn rpc(reference: bool, commands: &[Value]) -> Vec<Value> {
    let dir = empty_home();
    let mut child = command(dir.path(), reference, &["--mode", "rpc"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut responses = Vec::new();
    for command in commands {
        writeln!(stdin, "{command}").unwrap();
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer to {command}: {e}"));
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["type"] == "response" && v["id"] == command["id"] {
                responses.push(v);
                break;
            }
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    for r in &mut responses {
        if let Some(data) = r.get_mut("data").and_then(Value::as_object_mut) {
            for key in ["sessionFile", "sessionId"] {
                if data.contains_key(key) {
                    data.insert(key.into(), json!("<replaced>"));
                }
            }
        }
        if let Some(error) = r.get("error").and_then(Value::as_str) {
            r["error"] = json!(docs_normalized(error, !reference));
        }
    }
    responses
}

#[test]
fn rpc_mode_without_a_model_starts_and_refuses_prompts_like_pi() {
    let commands = [
        json!({"id": "1", "type": "get_state"}),
        json!({"id": "2", "type": "prompt", "message": "hi"}),
        json!({"id": "3", "type": "get_available_models"}),
        json!({"id": "4", "type": "get_state"}),
    ];
    let ours = rpc(false, &commands);
    let stand_in = json!({
        "id": "unknown", "name": "unknown", "api": "unknown", "provider": "unknown",
        "baseUrl": "", "reasoning": false, "input": [],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 0, "maxTokens": 0
    });
    assert_eq!(ours[0]["success"], true);
    assert_eq!(ours[0]["data"]["model"], stand_in);
    assert_eq!(ours[0]["data"]["thinkingLevel"], "off");
    assert_eq!(
        ours[1],
        json!({"id": "2", "type": "response", "command": "prompt", "success": false,
               "error": NO_KEY.trim_end()})
    );
    assert_eq!(ours[2]["data"], json!({"models": []}));
    assert_eq!(ours[3]["data"]["messageCount"], 0);
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    assert_eq!(ours, rpc(true, &commands));
}
