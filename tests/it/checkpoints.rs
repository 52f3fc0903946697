//! File checkpoints (`docs/checkpoints.md`): what `write`, `edit` and `bash` change is
//! recorded per tool call, and navigating the tree with `restoreFiles` brings the files
//! of the target entry back — in process on a real temp project and through the built
//! binary's RPC mode; the reference pi still opens and continues such a session.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::support::rpc_client::RpcProject;
use crate::support::session::mock_agent_session;
use pi::core::agent_session::{AgentSession, NavigateOptions, PromptOptions};
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

/// One prompt's replies: the tool call, then a closing text.
fn turn(call: Value) -> Vec<Value> {
    vec![json!({"tool_calls": [call]}), json!({"text": "done"})]
}

fn project(turns: Vec<Vec<Value>>, settings: Option<Value>) -> RpcProject {
    let sequence: Vec<Value> = turns.into_iter().flatten().collect();
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

/// Every file under `dir` (not `.git`) with its text.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

fn tree(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
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

fn checkpoint_entries(s: &AgentSession) -> Vec<Value> {
    let file = s.with_session(|m| m.session_file().unwrap().to_path_buf());
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "custom" && v["customType"] == "pi-rs.checkpoint")
        .collect()
}

/// The id of the first user message on the current path.
fn first_user_entry(s: &AgentSession) -> String {
    s.with_session(|m| {
        m.path(None)
            .iter()
            .find(|e| matches!(e, SessionEntry::Message(x) if x.message.role() == "user"))
            .unwrap()
            .id()
            .to_string()
    })
}

fn restoring() -> NavigateOptions {
    NavigateOptions {
        restore_files: true,
        ..NavigateOptions::default()
    }
}

#[tokio::test]
async fn write_edit_and_bash_are_recorded_and_navigation_restores_the_files_both_ways() {
    let p = project(
        vec![
            turn(write("a.txt", "one\n")),
            turn(edit("a.txt", "one", "two")),
            turn(bash(
                "rm keep.txt && mkdir -p sub && echo made > sub/new.txt",
            )),
        ],
        None,
    );
    std::fs::write(p.cwd().join("keep.txt"), "user file\n").unwrap();
    let s = session(&p);
    for text in ["write", "edit", "bash"] {
        s.prompt(text, PromptOptions::default()).await.unwrap();
    }
    let after_all = files(&p.cwd());
    assert_eq!(
        after_all,
        tree(&[("a.txt", "two\n"), ("sub/new.txt", "made\n")])
    );

    let recorded = checkpoint_entries(&s);
    assert_eq!(recorded.len(), 3, "{recorded:?}");
    assert_eq!(recorded[0]["data"]["tool"], "write");
    assert_eq!(recorded[0]["data"]["changes"][0]["path"], "a.txt");
    assert_eq!(recorded[0]["data"]["changes"][0]["before"], Value::Null);
    let bash_paths: Vec<&str> = recorded[2]["data"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(bash_paths, ["sub/new.txt", "keep.txt"]);
    // Context is unchanged by the entries: only the conversation goes to the model.
    let roles: Vec<String> = s.messages().iter().map(|m| m.role().to_string()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "assistant"].repeat(3),
        "{roles:?}"
    );

    let results = tool_results(&s);
    let leaf = s.with_session(|m| m.leaf_id().unwrap().to_string());
    let entries = s.entries_with_checkpoints();
    assert!(results.iter().all(|r| entries.contains(r)));

    // Back to the write: the edit and the bash command are undone.
    let r = s.navigate_tree(&results[0], restoring()).await.unwrap();
    assert_eq!(
        files(&p.cwd()),
        tree(&[("a.txt", "one\n"), ("keep.txt", "user file\n")])
    );
    let mut restored = r.restore.unwrap().restored_files;
    restored.sort();
    assert_eq!(restored, ["a.txt", "keep.txt", "sub/new.txt"]);

    // Before the first tool call: the file the agent created is gone.
    let first_user = first_user_entry(&s);
    s.navigate_tree(&first_user, restoring()).await.unwrap();
    assert_eq!(files(&p.cwd()), tree(&[("keep.txt", "user file\n")]));

    // Forward again to the latest entry: everything comes back.
    s.navigate_tree(&leaf, restoring()).await.unwrap();
    assert_eq!(files(&p.cwd()), after_all);

    // Without restoreFiles the files stay.
    s.navigate_tree(&results[0], NavigateOptions::default())
        .await
        .unwrap();
    assert_eq!(files(&p.cwd()), after_all);
}

#[tokio::test]
async fn user_changes_refuse_a_restore_unless_forced_and_undo_restore_puts_them_back() {
    let p = project(
        vec![
            turn(write("a.txt", "agent 1\n")),
            turn(write("a.txt", "agent 2\n")),
        ],
        None,
    );
    let s = session(&p);
    s.prompt("one", PromptOptions::default()).await.unwrap();
    s.prompt("two", PromptOptions::default()).await.unwrap();
    let results = tool_results(&s);
    std::fs::write(p.cwd().join("a.txt"), "mine\n").unwrap();
    let leaf_before = s.with_session(|m| m.leaf_id().unwrap().to_string());

    let refused = s.navigate_tree(&results[0], restoring()).await.unwrap_err();
    assert!(
        refused.starts_with(pi::core::agent_session::RESTORE_CONFLICT_PREFIX)
            && refused.contains("a.txt"),
        "{refused}"
    );
    // Nothing moved, nothing was written.
    assert_eq!(
        s.with_session(|m| m.leaf_id().unwrap().to_string()),
        leaf_before
    );
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "mine\n"
    );

    let forced = s
        .navigate_tree(
            &results[0],
            NavigateOptions {
                restore_files: true,
                force: true,
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(forced.restore.unwrap().overwritten_user_changes, ["a.txt"]);
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "agent 1\n"
    );

    assert_eq!(s.undo_restore().unwrap(), ["a.txt"]);
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "mine\n"
    );
    // Undoing again redoes the restore.
    s.undo_restore().unwrap();
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("a.txt")).unwrap(),
        "agent 1\n"
    );
}

#[tokio::test]
async fn the_setting_turns_checkpoints_off() {
    let p = project(
        vec![turn(write("a.txt", "x\n"))],
        Some(json!({"checkpoints": {"enabled": false}})),
    );
    let s = session(&p);
    s.prompt("go", PromptOptions::default()).await.unwrap();
    assert!(checkpoint_entries(&s).is_empty());
    assert!(!p.agent_dir().join("checkpoints").exists());
}

#[test]
fn rpc_navigate_tree_restores_files_and_undo_restore_reverts() {
    let p = project(
        vec![
            turn(write("a.txt", "v1\n")),
            turn(bash("echo v2 > a.txt && echo b > b.txt")),
        ],
        None,
    );
    let mut c = p.start();
    c.prompt("one");
    c.prompt("two");
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    let entries = tree["entries"].as_array().unwrap().clone();
    let results: Vec<String> = entries
        .iter()
        .filter(|e| e["role"] == "toolResult")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 2, "{entries:?}");
    let leaf = tree["leafId"].as_str().unwrap().to_string();

    let status = c.ok(json!({"type": "get_checkpoints"}));
    assert_eq!(status["enabled"], true);
    assert!(status["diskBytes"].as_u64().unwrap() > 0);
    let marked = status["entries"].as_array().unwrap();
    assert!(
        results.iter().all(|r| marked.contains(&json!(r))),
        "{status}"
    );

    let r = c.ok(json!({"type": "navigate_tree", "targetId": results[0], "restoreFiles": true}));
    assert_eq!(r["restoredFiles"], json!(["a.txt", "b.txt"]), "{r}");
    assert_eq!(files(&p.cwd()), tree_of(&[("a.txt", "v1\n")]));

    std::fs::write(p.cwd().join("a.txt"), "edited by hand\n").unwrap();
    let refused =
        c.request(json!({"type": "navigate_tree", "targetId": leaf, "restoreFiles": true}));
    assert_eq!(refused["success"], false);
    assert!(
        refused["error"].as_str().unwrap().contains("a.txt"),
        "{refused}"
    );

    let r = c.ok(
        json!({"type": "navigate_tree", "targetId": leaf, "restoreFiles": true, "force": true}),
    );
    assert_eq!(r["overwrittenUserChanges"], json!(["a.txt"]));
    assert_eq!(
        files(&p.cwd()),
        tree_of(&[("a.txt", "v2\n"), ("b.txt", "b\n")])
    );

    let undone = c.ok(json!({"type": "undo_restore"}));
    assert_eq!(undone["restoredFiles"], json!(["a.txt", "b.txt"]));
    assert_eq!(files(&p.cwd()), tree_of(&[("a.txt", "edited by hand\n")]));
    let (status, _) = c.close();
    assert!(status.success());
}

fn tree_of(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    tree(pairs)
}

#[tokio::test]
async fn reference_pi_opens_and_continues_a_session_with_checkpoints() {
    use crate::support::reference_pi::{available, run};
    if let Err(why) = available() {
        eprintln!("skipped: {why}");
        return;
    }
    let p = project(
        vec![
            turn(write("a.txt", "one\n")),
            turn(bash("echo two > b.txt")),
            vec![json!({"text": "pi continues"})],
        ],
        None,
    );
    let s = session(&p);
    s.prompt("write", PromptOptions::default()).await.unwrap();
    s.prompt("bash", PromptOptions::default()).await.unwrap();
    assert_eq!(checkpoint_entries(&s).len(), 2);
    let file = s.with_session(|m| m.session_file().unwrap().to_path_buf());
    let ours =
        serde_json::to_value(s.with_session(|m| m.build_session_context().messages)).unwrap();

    let home = p.dir.path().join("home");
    let theirs = crate::support::reference_pi::messages_of(&home, &p.cwd(), &file);
    assert_eq!(theirs, ours, "pi's conversation equals ours");

    // pi continues the session in print mode on the same loopback model.
    let mut pi = std::process::Command::new(crate::support::reference_pi::script());
    pi.current_dir(p.cwd())
        .env("HOME", &home)
        .env_remove("PI_CODING_AGENT_DIR")
        .args(["--offline", "--provider", "mock", "--model", "mock-model"])
        .arg("--session")
        .arg(&file)
        .args(["-p", "and now?"]);
    let out = run(pi, "", Duration::from_secs(90)).unwrap();
    assert!(out.contains("pi continues"), "{out}");

    // pi's request carried the same conversation plus the new prompt, no checkpoint data.
    let last = p.server.requests().last().unwrap().body.clone();
    let text = last.to_string();
    assert!(text.contains("and now?"), "{text}");
    assert!(!text.contains("pi-rs.checkpoint"), "{text}");

    // pi appended to the file; we still read it, checkpoints and all.
    let reopened = pi::session::SessionManager::open(&file, None).unwrap();
    assert!(
        reopened.load_warnings().is_empty(),
        "{:?}",
        reopened.load_warnings()
    );
    let messages = reopened.build_session_context().messages;
    assert!(
        matches!(messages.last(), Some(AgentMessage::Assistant(a)) if a.text() == "pi continues")
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
}

#[tokio::test]
async fn in_a_git_repository_bash_changes_to_tracked_files_come_back_without_copying_the_rest() {
    let p = project(
        vec![turn(bash(
            "echo edited > tracked.txt && rm kept.txt && echo mine > new.txt",
        ))],
        None,
    );
    let cwd = p.cwd();
    std::fs::write(cwd.join("tracked.txt"), "tracked\n").unwrap();
    std::fs::write(cwd.join("kept.txt"), "kept\n").unwrap();
    std::fs::write(cwd.join("untouched.txt"), "untouched\n").unwrap();
    git(&cwd, &["init", "-q"]);
    // The index is written after the files' clock tick: not racily clean.
    std::thread::sleep(Duration::from_millis(20));
    git(&cwd, &["add", "-A"]);
    git(&cwd, &["commit", "-qm", "start"]);
    std::fs::write(cwd.join("untracked.txt"), "user's\n").unwrap();
    let before = files(&cwd);
    let s = session(&p);
    s.prompt("bash", PromptOptions::default()).await.unwrap();
    let recorded = checkpoint_entries(&s);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    let changes = recorded[0]["data"]["changes"].as_array().unwrap();
    let paths: Vec<&str> = changes
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["new.txt", "tracked.txt", "kept.txt"]);
    // Contents are named by the store's hashes, as outside git.
    for c in changes {
        for side in ["before", "after"] {
            if let Some(h) = c[side].as_str() {
                assert_eq!(h.len(), 64, "{c}");
            }
        }
    }
    let first_user = first_user_entry(&s);
    s.navigate_tree(&first_user, restoring()).await.unwrap();
    assert_eq!(files(&cwd), before);
    // The tracked files nobody changed were never copied into the store.
    let store = s.checkpoint_store();
    let untouched = pi::core::checkpoints::hash_bytes(b"untouched\n");
    assert!(store.get(&untouched).is_err());
    let tracked = pi::core::checkpoints::hash_bytes(b"tracked\n");
    assert_eq!(store.get(&tracked).unwrap(), b"tracked\n");
}
