//! Two real processes appending to the same session file at once: every line must stay
//! whole (each batch of lines is one `write` on an `O_APPEND` descriptor).
//!
//! The test re-runs its own binary as the child processes; an environment variable tells
//! a child which file to append to.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::Command;

use crate::support::session::*;
use pi::session::manager::SessionManager;

const CHILD_FILE: &str = "PI_SESSION_TEST_APPEND_TO";
const CHILD_TAG: &str = "PI_SESSION_TEST_APPEND_TAG";
const TEST_NAME: &str = "two_processes_appending_to_one_file_never_interleave_lines";
const APPENDS: usize = 150;

/// The test's name as the test harness knows it (module path without the crate name), for
/// `--exact`: the child processes run only this test.
fn harness_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{TEST_NAME}"),
        None => TEST_NAME.to_string(),
    }
}

/// Long enough that a torn write would be visible (lines of ~64 KiB).
fn big_text(tag: &str, i: usize) -> String {
    format!("{tag}{i:04} ") + &tag.repeat(64 * 1024)
}

#[test]
fn two_processes_appending_to_one_file_never_interleave_lines() {
    if let (Ok(file), Ok(tag)) = (std::env::var(CHILD_FILE), std::env::var(CHILD_TAG)) {
        let mut s = SessionManager::open(&file, None).unwrap();
        for i in 0..APPENDS {
            s.append_message(assistant(&big_text(&tag, i))).unwrap();
        }
        return;
    }

    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("start")).unwrap();
    s.append_message(assistant("ready")).unwrap();
    let file = s.session_file().unwrap().to_path_buf();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["A", "B"]
        .iter()
        .map(|tag| {
            Command::new(&exe)
                .args(["--exact", &harness_name(), "--test-threads=1"])
                .env(CHILD_FILE, &file)
                .env(CHILD_TAG, tag)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }

    let text = std::fs::read_to_string(&file).unwrap();
    let mut per_tag = [0usize; 2];
    let mut last_of_tag: [Option<String>; 2] = [None, None];
    for (n, line) in text.lines().enumerate().skip(3) {
        // A process that opens the file while the other is mid-write sees a cut-off last
        // line and starts its first write with a newline: an empty line, which is harmless.
        if line.is_empty() {
            continue;
        }
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {} is torn: {e}", n + 1));
        let body = value["message"]["content"][0]["text"].as_str().unwrap();
        let tag = &body[..1];
        assert_eq!(
            body,
            big_text(tag, body[1..5].parse().unwrap()),
            "line {} is whole",
            n + 1
        );
        let t = usize::from(tag == "B");
        per_tag[t] += 1;
        // Each process extends its own chain (where it starts depends on who opened first).
        if let Some(previous) = &last_of_tag[t] {
            assert_eq!(value["parentId"].as_str(), Some(previous.as_str()));
        }
        last_of_tag[t] = value["id"].as_str().map(str::to_string);
    }
    assert_eq!(per_tag, [APPENDS, APPENDS]);
    let reopened = SessionManager::open(&file, None).unwrap();
    assert!(reopened.load_warnings().is_empty());
    assert_eq!(reopened.entry_count(), 2 + 2 * APPENDS);
}
