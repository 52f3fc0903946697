//! Listing sessions for `--resume` and `/resume`: what each row says, the order, and the
//! lazily loaded search text.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::fs;
use std::path::Path;

use crate::support::session::*;
use pi::session::listing::{
    SessionInfo, list, list_all, load_search_text, load_search_text_capped,
};
use pi::session::manager::SessionManager;
use pi::session::paths::default_session_dir;

fn rows(infos: &[SessionInfo]) -> String {
    infos
        .iter()
        .map(|i| {
            format!(
                "{} | {} msgs | created {} | modified {} | {}{}\n",
                i.name.as_deref().unwrap_or(&i.first_message),
                i.message_count,
                i.created.format("%H:%M:%S%.3f"),
                i.modified.format("%H:%M:%S%.3f"),
                i.id,
                i.parent_session_path
                    .as_deref()
                    .map_or(String::new(), |p| format!(" (fork of {p})")),
            )
        })
        .collect()
}

fn copy_scenario(name: &str, to: &Path) {
    fs::create_dir_all(to).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus")
        .join(name);
    for file in fs::read_dir(dir).unwrap() {
        let file = file.unwrap().path();
        if file.file_name().unwrap() != "requests.jsonl" {
            fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn lists_pi_sessions_like_the_resume_picker_newest_activity_first() {
    let dir = tempfile::tempdir().unwrap();
    copy_scenario("resume-listing", dir.path());
    fs::write(dir.path().join("notes.txt"), "not a session").unwrap();
    fs::write(dir.path().join("broken.jsonl"), "{\"type\":\"message\"}\n").unwrap();
    insta::assert_snapshot!(rows(&list(dir.path()).unwrap()), @r#"
    Session gamma: third session prompt | 4 msgs | created 03:45:27.826 | modified 03:45:29.593 | 01a2015b-df11-71be-b227-62ac91678e24
    Named beta session | 2 msgs | created 03:45:25.155 | modified 03:45:25.272 | 01a2015b-d4a2-7041-a018-463393c4024d
    Session alpha: first session prompt | 2 msgs | created 03:45:22.509 | modified 03:45:22.623 | 01a2015b-ca4c-70cf-9100-dce6dda6456a
    "#);
}

#[test]
fn list_all_covers_every_project_directory_and_shows_forks() {
    let root = tempfile::tempdir().unwrap();
    copy_scenario(
        "fork",
        &default_session_dir(root.path(), Path::new("/home/user/proj-fork")),
    );
    copy_scenario(
        "basic-tools",
        &default_session_dir(root.path(), Path::new("/home/user/proj-basic")),
    );
    insta::assert_snapshot!(rows(&list_all(root.path()).unwrap()), @r#"
    Prompt 1: read conf.txt | 8 msgs | created 03:44:58.239 | modified 03:44:58.244 | 01a2015b-6b7f-7576-8317-7bb7aea99527 (fork of /home/user/corpus-home-6/.pi/agent/sessions/--tmp-proj-fork--/2026-11-22T03-44-58-209Z_01a2015b-6b61-76a3-b0d4-68d5cd14aa6f.jsonl)
    Prompt 1: read conf.txt | 6 msgs | created 03:44:58.209 | modified 03:44:58.220 | 01a2015b-6b61-76a3-b0d4-68d5cd14aa6f (fork of /home/user/corpus-home-6/.pi/agent/sessions/--tmp-proj-fork--/2026-11-22T03-44-57-702Z_01a2015b-6965-7555-867f-3b9a3d00151e.jsonl)
    Prompt 1: read conf.txt | 11 msgs | created 03:44:57.702 | modified 03:44:58.184 | 01a2015b-6965-7555-867f-3b9a3d00151e
    Please fix the typo in a.txt | 17 msgs | created 03:39:21.546 | modified 03:39:23.133 | 01a20156-4849-716a-9ef4-cfcfd767c6ff
    "#);
    assert!(list_all(&root.path().join("missing")).unwrap().is_empty());
    assert!(list(&root.path().join("missing")).unwrap().is_empty());
}

#[test]
fn a_session_without_messages_falls_back_to_the_header_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    s.append_session_info("named").unwrap();
    s.append_session_info("  ").unwrap();
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, r#"{"type":"session","version":3,"id":"e","timestamp":"2026-01-02T03:04:05.678Z","cwd":"/p"}"#).unwrap();
    let infos = list(dir.path()).unwrap();
    let empty_info = infos.iter().find(|i| i.path == empty).unwrap();
    assert_eq!(empty_info.first_message, "(no messages)");
    assert_eq!(
        empty_info.modified.to_rfc3339(),
        "2026-01-02T03:04:05.678+00:00"
    );
    let named = infos
        .iter()
        .find(|i| i.path == s.session_file().unwrap())
        .unwrap();
    assert_eq!(named.name, None, "an empty name clears it, as in pi");
    assert_eq!(named.first_message, "hello");
}

#[test]
fn rows_of_a_session_with_lines_longer_than_the_read_buffer_count_everything() {
    // The row is read a buffer (256 KB) at a time: lines that cross buffer boundaries
    // or are longer than the buffer must count like the short ones.
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("first question")).unwrap();
    let long = "x".repeat(700_000);
    for i in 0..5 {
        s.append_message(assistant(&format!("{i} {long}"))).unwrap();
        s.append_message(user(&format!("follow-up {i}"))).unwrap();
    }
    s.append_session_info("after the long lines").unwrap();
    let infos = list(dir.path()).unwrap();
    let info = &infos[0];
    assert!(fs::metadata(&info.path).unwrap().len() > 3_000_000);
    assert_eq!(info.message_count, 11);
    assert_eq!(info.first_message, "first question");
    assert_eq!(info.name.as_deref(), Some("after the long lines"));
}

#[test]
fn search_text_holds_every_user_and_assistant_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/p", dir.path()).unwrap();
    s.append_message(user("find the needle")).unwrap();
    s.append_message(assistant_calls("looking", "c1", "grep"))
        .unwrap();
    s.append_message(tool_result("c1", "grep", "tool output is not searched"))
        .unwrap();
    s.append_message(assistant("found it")).unwrap();
    assert_eq!(
        load_search_text(s.session_file().unwrap()).unwrap(),
        "find the needle looking found it"
    );
}

#[test]
fn capped_search_text_matches_the_full_text_and_stops_early_when_asked() {
    for scenario in ["basic-tools", "fork", "resume-listing", "legacy"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus")
            .join(scenario);
        for file in fs::read_dir(dir).unwrap() {
            let path = file.unwrap().path();
            if path.file_name().unwrap() == "requests.jsonl" {
                continue;
            }
            let full = load_search_text(&path).unwrap();
            assert_eq!(
                load_search_text_capped(&path, usize::MAX).unwrap(),
                full,
                "{}",
                path.display()
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionManager::create("/p", dir.path()).unwrap();
    s.append_message(user("first prompt")).unwrap();
    s.append_message(assistant("first answer")).unwrap();
    s.append_message(user("second prompt")).unwrap();
    assert_eq!(
        load_search_text_capped(s.session_file().unwrap(), 5).unwrap(),
        "first prompt"
    );
}
