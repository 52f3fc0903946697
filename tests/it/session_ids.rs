//! Entry ids of every shape survive the compact session index: pi's 8-hex-digit ids are
//! kept as numbers, anything else (full UUIDs, upper case, hand-written ids) as text, and
//! both must come back spelled exactly as in the file — in lookups, heads, the leaf, the
//! parent written by the next append and the tree.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::session::*;
use pi::session::entry::EntryId;
use pi::session::manager::SessionManager;

const UUID: &str = "a1b2c3d4-0000-4000-8000-00000000beef";

fn message(id: &str, parent: Option<&str>, second: u32, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let content = if role == "user" {
        format!("\"{text}\"")
    } else {
        format!("[{{\"type\":\"text\",\"text\":\"{text}\"}}]")
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:{second:02}.000Z","message":{{"role":"{role}","content":{content},"timestamp":1}}}}"#
    )
}

fn write_session(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("mixed.jsonl");
    let lines = [
        format!(
            r#"{{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{}"}}"#,
            dir.display()
        ),
        message("0000abcd", None, 1, "user", "first"),
        message("ABCDEF01", Some("0000abcd"), 2, "assistant", "upper"),
        message(UUID, Some("ABCDEF01"), 3, "user", "uuid"),
        message("7", Some(UUID), 4, "assistant", "short"),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn ids_of_any_shape_read_back_exactly_and_parent_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path());
    let mut s = SessionManager::open(&path, None).unwrap();
    assert_eq!(s.leaf_id().map(EntryId::as_str), Some("7"));
    let ids: Vec<String> = s.heads().map(|h| h.id.0).collect();
    assert_eq!(ids, ["0000abcd", "ABCDEF01", UUID, "7"]);
    let head = s.head(&EntryId::from(UUID)).unwrap();
    assert_eq!(head.parent, Some(EntryId::from("ABCDEF01")));
    // The upper-case spelling of a hex id is a different id.
    assert!(s.head(&EntryId::from("abcdef01")).is_none());
    assert!(s.head(&EntryId::from("0000ABCD")).is_none());

    let appended = s.append_message(assistant("after the short id")).unwrap();
    s.branch(&EntryId::from("ABCDEF01")).unwrap();
    assert_eq!(s.leaf_id().map(EntryId::as_str), Some("ABCDEF01"));
    let branched = s
        .append_message(user("a branch off the upper-case id"))
        .unwrap();

    let lines = file_lines(&path);
    let parent_of = |id: &EntryId| {
        lines
            .iter()
            .find(|l| l["id"] == id.as_str())
            .map(|l| l["parentId"].clone())
            .unwrap()
    };
    assert_eq!(parent_of(&appended), "7");
    assert_eq!(parent_of(&branched), "ABCDEF01");

    let reopened = SessionManager::open(&path, None).unwrap();
    let path_ids: Vec<String> = reopened
        .path_ids(Some(&appended))
        .into_iter()
        .map(|id| id.0)
        .collect();
    assert_eq!(
        path_ids,
        ["0000abcd", "ABCDEF01", UUID, "7", appended.as_str()]
    );
    let tree = reopened.tree();
    let upper = tree
        .nodes()
        .iter()
        .position(|n| n.id.as_str() == "ABCDEF01")
        .unwrap();
    let children: Vec<&str> = tree
        .children(upper)
        .iter()
        .map(|&c| tree.node(c).id.as_str())
        .collect();
    assert_eq!(children, [UUID, branched.as_str()]);
}
