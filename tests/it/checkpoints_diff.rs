//! File checkpoints, the diff and prune half (`docs/checkpoints.md`): how the files at
//! one entry differ from the working tree or from another branch, and pruning contents
//! no session refers to — in process on a real temp project and through the built
//! binary's RPC mode.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::rpc_client::RpcProject;
use crate::support::session::mock_agent_session;
use pi::core::agent_session::{AgentSession, NavigateOptions, PromptOptions};
use pi::core::checkpoints::{FileDiff, FileStatus};
use pi::messages::AgentMessage;
use pi::session::entry::SessionEntry;
use serde_json::{Value, json};

fn write(path: &str, content: &str) -> Value {
    json!({"name": "write", "arguments": {"path": path, "content": content}})
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old, "newText": new}]}})
}

fn bash(command: &str) -> Value {
    json!({"name": "bash", "arguments": {"command": command}})
}

fn project(calls: Vec<Value>, settings: Option<Value>) -> RpcProject {
    let sequence: Vec<Value> = calls
        .into_iter()
        .flat_map(|c| [json!({"tool_calls": [c]}), json!({"text": "done"})])
        .collect();
    RpcProject::new(&json!({ "sequence": sequence }), None, settings)
}

fn session(p: &RpcProject) -> AgentSession {
    mock_agent_session(
        &p.agent_dir(),
        &p.cwd(),
        &p.agent_dir().join("sessions/test"),
        &["read", "bash", "edit", "write"],
    )
}

/// Ids of the tool result entries on the current path, oldest first.
fn tool_results(s: &AgentSession) -> Vec<String> {
    s.with_session(|m| {
        m.path(None)
            .iter()
            .filter(|e| matches!(e, SessionEntry::Message(x) if matches!(x.message, AgentMessage::ToolResult(_))))
            .map(|e| e.id().to_string())
            .collect()
    })
}

fn summary(diffs: &[FileDiff]) -> Vec<(&str, FileStatus)> {
    diffs.iter().map(|d| (d.path.as_str(), d.status)).collect()
}

fn diff_of<'a>(diffs: &'a [FileDiff], path: &str) -> &'a str {
    &diffs.iter().find(|d| d.path == path).unwrap().diff
}

/// Sets every blob's modification time `secs` into the past (beyond the prune grace).
fn age_blobs(store_root: &Path, secs: u64) {
    let past = SystemTime::now() - Duration::from_secs(secs);
    for prefix in std::fs::read_dir(store_root.join("blobs"))
        .unwrap()
        .flatten()
    {
        for blob in std::fs::read_dir(prefix.path()).unwrap().flatten() {
            let f = std::fs::File::options()
                .append(true)
                .open(blob.path())
                .unwrap();
            f.set_modified(past).unwrap();
        }
    }
}

#[tokio::test]
async fn diffs_compare_the_working_tree_and_branches_with_an_entry() {
    let p = project(
        vec![
            write("a.txt", "one\ntwo\n"),
            edit("a.txt", "two", "2"),
            bash("echo b > b.txt"),
            write("c.txt", "branch\n"),
        ],
        None,
    );
    let s = session(&p);
    for text in ["write", "edit", "bash"] {
        s.prompt(text, PromptOptions::default()).await.unwrap();
    }
    let r = tool_results(&s);
    let first_leaf = r[2].clone();

    // At the latest entry nothing differs from the working tree.
    assert_eq!(s.checkpoint_diff(None, &r[2]).unwrap(), []);
    // The working tree → the first write: the edit and the new file are undone.
    let d = s.checkpoint_diff(None, &r[0]).unwrap();
    assert_eq!(
        summary(&d),
        [
            ("a.txt", FileStatus::Modified),
            ("b.txt", FileStatus::Deleted)
        ]
    );
    assert_eq!(
        diff_of(&d, "a.txt"),
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-2\n+two\n"
    );
    assert_eq!(
        diff_of(&d, "b.txt"),
        "--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n"
    );
    // Entry → entry, forwards.
    let d = s.checkpoint_diff(Some(&r[0]), &r[2]).unwrap();
    assert_eq!(
        summary(&d),
        [
            ("a.txt", FileStatus::Modified),
            ("b.txt", FileStatus::Added)
        ]
    );
    // A change by hand shows against the working tree, not between entries.
    std::fs::write(p.cwd().join("a.txt"), "mine\n").unwrap();
    let d = s.checkpoint_diff(None, &r[2]).unwrap();
    assert_eq!(summary(&d), [("a.txt", FileStatus::Modified)]);
    assert!(diff_of(&d, "a.txt").contains("-mine\n+one\n+2\n"), "{d:?}");
    std::fs::write(p.cwd().join("a.txt"), "one\n2\n").unwrap();

    // A second branch from the first write: it creates c.txt.
    let restoring = NavigateOptions {
        restore_files: true,
        ..NavigateOptions::default()
    };
    s.navigate_tree(&r[0], restoring).await.unwrap();
    s.prompt("branch", PromptOptions::default()).await.unwrap();
    let branch = tool_results(&s);
    let branch_leaf = branch.last().unwrap().clone();
    assert_ne!(branch_leaf, first_leaf);
    let d = s.checkpoint_diff(Some(&first_leaf), &branch_leaf).unwrap();
    assert_eq!(
        summary(&d),
        [
            ("a.txt", FileStatus::Modified),
            ("b.txt", FileStatus::Deleted),
            ("c.txt", FileStatus::Added),
        ]
    );
    assert!(diff_of(&d, "c.txt").ends_with("+branch\n"));

    let missing = s.checkpoint_diff(None, "no-such-entry").unwrap_err();
    assert!(missing.contains("not found"), "{missing}");
}

#[tokio::test]
async fn prune_frees_unreferenced_contents_and_honours_keep_days() {
    let p = project(
        vec![write("a.txt", "v1\n"), write("a.txt", "v2\n")],
        Some(json!({"checkpoints": {"keepDays": 7}})),
    );
    let s = session(&p);
    s.prompt("one", PromptOptions::default()).await.unwrap();
    s.prompt("two", PromptOptions::default()).await.unwrap();
    let r = tool_results(&s);
    let store = s.checkpoint_store();
    let orphan = store.put(b"orphan!").unwrap();
    // Another session of the project, on disk, refers to a content of its own.
    let theirs = store.put(b"their file\n").unwrap();
    let other = p.agent_dir().join("sessions/other/old.jsonl");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    let entry = json!({"type": "custom", "customType": "pi-rs.checkpoint", "id": "x", "parentId": null,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "data": {"tool": "write", "toolCallId": "c", "changes": [{"path": "t.txt", "before": null, "after": theirs}]}});
    std::fs::write(&other, format!("{entry}\n")).unwrap();

    // Within the grace period nothing goes.
    let report = s.prune_checkpoints().unwrap();
    assert_eq!(report.removed_files, 0, "{report:?}");

    age_blobs(store.root(), 7200);
    let (before_bytes, _) = store.disk_usage();
    let report = s.prune_checkpoints().unwrap();
    assert_eq!(
        (report.removed_files, report.freed_bytes),
        (1, 7),
        "{report:?}"
    );
    assert!(store.get(&orphan).is_err());
    assert!(
        store.get(&theirs).is_ok(),
        "a recent session keeps its contents"
    );
    assert_eq!(store.disk_usage().0, before_bytes - 7);

    // The other session was last written 30 days ago: beyond keepDays, it keeps nothing.
    let f = std::fs::File::options().append(true).open(&other).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(30 * 86_400))
        .unwrap();
    drop(f);
    let report = s.prune_checkpoints().unwrap();
    assert_eq!(report.removed_files, 1, "{report:?}");
    assert!(store.get(&theirs).is_err());

    // This session's checkpoints survived: restoring still works both ways.
    let leaf = s.with_session(|m| m.leaf_id().unwrap().to_string());
    let restoring = || NavigateOptions {
        restore_files: true,
        ..NavigateOptions::default()
    };
    s.navigate_tree(&r[0], restoring()).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "v1\n"
    );
    s.navigate_tree(&leaf, restoring()).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "v2\n"
    );
}

#[test]
fn rpc_checkpoint_diff_and_prune_checkpoints() {
    let p = project(vec![write("a.txt", "v1\n"), bash("echo v2 > a.txt")], None);
    let mut c = p.start();
    c.prompt("one");
    c.prompt("two");
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    let results: Vec<String> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "toolResult")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 2, "{tree}");

    let d = c.ok(json!({"type": "checkpoint_diff", "from": null, "to": results[0]}));
    assert_eq!(
        d["files"],
        json!([{"path": "a.txt", "status": "modified",
                "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v2\n+v1\n"}]),
        "{d}"
    );
    let d = c.ok(json!({"type": "checkpoint_diff", "from": results[0], "to": results[1]}));
    assert_eq!(
        d["files"][0]["diff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2\n"
    );
    let d = c.ok(json!({"type": "checkpoint_diff", "to": results[1]}));
    assert_eq!(d["files"], json!([]));
    let bad = c.request(json!({"type": "checkpoint_diff", "to": "nope"}));
    assert_eq!(bad["success"], false, "{bad}");

    let pruned = c.ok(json!({"type": "prune_checkpoints"}));
    assert_eq!(pruned["removedFiles"], 0, "{pruned}");
    assert!(pruned["keptFiles"].as_u64().unwrap() >= 2, "{pruned}");
    let (status, _) = c.close();
    assert!(status.success());
}
