//! The session manager, scenario by scenario: appends, branches, labels, compactions and
//! what the tree and the context look like after each step.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::session::*;
use pi::session::entry::EntryId;
use pi::session::manager::SessionManager;

#[test]
fn appends_form_a_chain_and_the_leaf_follows_the_last_append() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_model_change("mock", "mock-model").unwrap();
    s.append_thinking_level_change("off").unwrap();
    s.append_message(user("Please fix the typo in a.txt"))
        .unwrap();
    s.append_message(assistant_calls(
        "Let me read the file first.",
        "call_1",
        "read",
    ))
    .unwrap();
    s.append_message(tool_result("call_1", "read", "hello wrld\n"))
        .unwrap();
    s.append_message(assistant("Fixed.")).unwrap();
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec model_change mock/mock-model
    beeb8da1 thinking_level_change off
    f893a2ee user "Please fix the typo in a.txt"
    71c18690 assistant "Let me read the file first." → read
    71bb54d8 toolResult read "hello wrld"
    c34d0bff assistant "Fixed."  ← leaf
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model mock/mock-model, thinking off
    user: Please fix the typo in a.txt
    assistant: Let me read the file first. → read#call_1
    toolResult call_1: hello wrld

    assistant: Fixed.
    "#);
}

#[test]
fn branching_back_and_continuing_draws_a_branch_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    let hi = s.append_message(assistant("hi")).unwrap();
    s.append_message(user("try approach A")).unwrap();
    s.append_message(assistant("A is done")).unwrap();
    s.branch(&hi).unwrap();
    s.append_message(user("try approach B")).unwrap();
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec user "hello"
    beeb8da1 assistant "hi"
    ├─ f893a2ee user "try approach A"
    │  71c18690 assistant "A is done"
    └─ 71bb54d8 user "try approach B"  ← leaf
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model mock/mock-model, thinking off
    user: hello
    assistant: hi
    user: try approach B
    "#);
}

#[test]
fn compaction_context_starts_with_the_summary_then_keeps_from_the_first_kept_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("turn 1")).unwrap();
    s.append_message(assistant("reply 1")).unwrap();
    let kept = s.append_message(user("turn 2")).unwrap();
    s.append_message(assistant_calls("reading", "call_2", "read"))
        .unwrap();
    s.append_message(tool_result("call_2", "read", "contents"))
        .unwrap();
    s.append_message(assistant("reply 2")).unwrap();
    s.append_compaction(
        "Summary of turn 1",
        &kept,
        2404,
        Some(serde_json::json!({"readFiles": [], "modifiedFiles": ["a.txt"]})),
        Some(false),
    )
    .unwrap();
    s.append_message(user("turn 3")).unwrap();
    s.append_message(assistant("reply 3")).unwrap();
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec user "turn 1"
    beeb8da1 assistant "reply 1"
    f893a2ee user "turn 2"
    71c18690 assistant "reading" → read
    71bb54d8 toolResult read "contents"
    c34d0bff assistant "reply 2"
    e099ec6c compaction "Summary of turn 1" (keeps from f893a2ee, 2404 tokens before)
    85e7bb0f user "turn 3"
    491718de assistant "reply 3"  ← leaf
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model mock/mock-model, thinking off
    compactionSummary (2404 tokens): Summary of turn 1
    user: turn 2
    assistant: reading → read#call_2
    toolResult call_2: contents
    assistant: reply 2
    user: turn 3
    assistant: reply 3
    "#);
}

#[test]
fn branch_with_summary_attaches_to_the_target_and_names_it_or_root() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_thinking_level_change("off").unwrap();
    let first = s.append_message(user("first prompt")).unwrap();
    s.append_message(assistant("first reply")).unwrap();
    s.append_message(user("second prompt")).unwrap();
    s.append_message(assistant("second reply")).unwrap();
    // /tree → select the first user message → its parent becomes the leaf.
    let parent = s.head(&first).unwrap().parent.unwrap();
    s.branch_with_summary(
        Some(&parent),
        "Explored the second prompt",
        None,
        Some(false),
    )
    .unwrap();
    s.append_message(user("another way")).unwrap();
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec thinking_level_change off
    ├─ beeb8da1 user "first prompt"
    │  f893a2ee assistant "first reply"
    │  71c18690 user "second prompt"
    │  71bb54d8 assistant "second reply"
    └─ c34d0bff branch_summary from 910a2dec "Explored the second prompt"
       e099ec6c user "another way"  ← leaf
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model none, thinking off
    branchSummary from 910a2dec: Explored the second prompt
    user: another way
    "#);

    s.branch_with_summary(None, "Everything so far", None, None)
        .unwrap();
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model none, thinking off
    branchSummary from root: Everything so far
    "#);
    let leaf = s.leaf_entry().unwrap();
    assert_eq!(leaf.parent_id(), None);
    let json: serde_json::Value = serde_json::from_str(&leaf.to_json_line()).unwrap();
    assert_eq!(json["fromId"], "root");
}

#[test]
fn labels_are_set_cleared_and_shown_in_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let hello = s.append_message(user("hello")).unwrap();
    let hi = s.append_message(assistant("hi")).unwrap();
    s.append_label_change(&hello, Some("start")).unwrap();
    s.append_label_change(&hi, Some("answer")).unwrap();
    s.append_label_change(&hi, None).unwrap();
    assert_eq!(s.label(&hello), Some("start"));
    assert_eq!(s.label(&hi), None);
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec user "hello" [start]
    beeb8da1 assistant "hi"
    f893a2ee label 910a2dec "start"
    71c18690 label beeb8da1 "answer"
    71bb54d8 label beeb8da1 cleared  ← leaf
    "#);
    let tree = s.tree();
    let node = tree.nodes().iter().find(|n| n.id == hello).unwrap();
    assert_eq!(node.label.as_deref(), Some("start"));
    assert!(node.label_timestamp.is_some());
    // A cleared label has no `label` key at all, as pi writes it.
    let lines = file_lines(s.session_file().unwrap());
    assert_eq!(lines.last().unwrap().get("label"), None);
    assert_eq!(lines.last().unwrap()["targetId"], hi.as_str());
}

#[test]
fn unknown_ids_are_errors_with_pi_wording() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    let missing = EntryId::from("deadbeef");
    insta::assert_snapshot!(s.branch(&missing).unwrap_err(), @r#"Entry deadbeef not found"#);
    insta::assert_snapshot!(s.append_label_change(&missing, Some("x")).unwrap_err(), @r#"Entry deadbeef not found"#);
    insta::assert_snapshot!(s.branch_with_summary(Some(&missing), "s", None, None).unwrap_err(), @r#"Entry deadbeef not found"#);
    insta::assert_snapshot!(s.create_branched_session(&missing).unwrap_err(), @r#"Entry deadbeef not found"#);
    assert_eq!(s.entry_count(), 1, "failed calls change nothing");
}

#[test]
fn reset_leaf_makes_the_next_append_a_new_root() {
    let mut s = SessionManager::in_memory("/work/project");
    s.use_seeded_ids(3);
    s.append_message(user("first")).unwrap();
    s.append_message(assistant("reply")).unwrap();
    s.reset_leaf();
    assert_eq!(
        render_context(&s.build_session_context()),
        "model none, thinking off\n"
    );
    s.append_message(user("edited first")).unwrap();
    insta::assert_snapshot!(s.render_tree(), @r#"
    ├─ 1d0b14e4 user "first"
    │  b3466f8a assistant "reply"
    └─ 9cebe8a6 user "edited first"  ← leaf
    "#);
}

#[test]
fn nothing_is_written_until_the_first_user_message_then_everything_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let file = s.session_file().unwrap().to_path_buf();
    assert_eq!(file.parent().unwrap(), dir.path());
    s.append_model_change("mock", "mock-model").unwrap();
    assert!(!file.exists());
    // pi 1.6 creates the file at the first user message (0.73: the first reply).
    s.append_message(user("hello")).unwrap();
    assert_eq!(file_lines(&file).len(), 3);
    s.append_message(assistant("hi")).unwrap();
    s.append_message(user("more")).unwrap();
    let types: Vec<String> = file_lines(&file)
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l["type"].as_str().unwrap(),
                l["message"]["role"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            "session ",
            "model_change ",
            "message user",
            "message assistant",
            "message user"
        ]
    );
}

#[test]
fn in_memory_sessions_never_touch_the_disk() {
    let mut s = SessionManager::in_memory("/work/project");
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    assert!(!s.is_persisted());
    assert_eq!(s.session_file(), None);
    assert_eq!(s.session_dir(), None);
    assert_eq!(
        s.create_branched_session(&s.leaf_id().unwrap().clone())
            .unwrap(),
        None
    );
    assert_eq!(s.entry_count(), 2);
}

#[test]
fn reopening_gives_the_same_tree_context_name_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    let hi = s.append_message(assistant("hi")).unwrap();
    s.append_session_info("  My session  ").unwrap();
    s.append_message(user("A")).unwrap();
    s.branch(&hi).unwrap();
    s.append_label_change(&hi, Some("fork point")).unwrap();
    s.append_message(user("B")).unwrap();
    s.append_custom_entry("ext", Some(serde_json::json!({"n": 1})))
        .unwrap();
    s.append_custom_message_entry(
        "ext",
        pi::ai::message::UserContent::Text("injected".into()),
        true,
        None,
    )
    .unwrap();
    let reopened = SessionManager::open(s.session_file().unwrap(), None).unwrap();
    assert_eq!(reopened.render_tree(), s.render_tree());
    assert_eq!(reopened.build_session_context(), s.build_session_context());
    assert_eq!(reopened.session_name(), Some("My session"));
    assert_eq!(reopened.label(&hi), Some("fork point"));
    assert_eq!(reopened.session_id(), s.session_id());
    assert_eq!(reopened.cwd(), std::path::Path::new("/work/project"));
    assert!(reopened.load_warnings().is_empty());
}

#[test]
fn custom_entries_are_written_with_pi_field_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    s.append_custom_entry("ext", Some(serde_json::json!({"n": 1})))
        .unwrap();
    s.append_custom_message_entry(
        "ext",
        pi::ai::message::UserContent::Text("injected".into()),
        false,
        None,
    )
    .unwrap();
    let keys: Vec<Vec<String>> = file_lines(s.session_file().unwrap())[3..]
        .iter()
        .map(|l| l.as_object().unwrap().keys().cloned().collect())
        .collect();
    assert_eq!(
        keys,
        [
            vec!["type", "customType", "data", "id", "parentId", "timestamp"],
            vec![
                "type",
                "customType",
                "content",
                "display",
                "id",
                "parentId",
                "timestamp"
            ],
        ]
    );
}

#[test]
fn new_session_can_take_an_id_and_a_parent() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    s.append_message(user("hello")).unwrap();
    let file = s
        .new_session(Some("my-session-id".into()), Some("/old/file.jsonl".into()))
        .unwrap();
    assert!(file.to_string_lossy().ends_with("_my-session-id.jsonl"));
    assert_eq!(s.entry_count(), 0);
    assert_eq!(s.leaf_id(), None);
    assert_eq!(
        s.header().parent_session.as_deref(),
        Some("/old/file.jsonl")
    );
    assert_eq!(s.session_id().as_str(), "my-session-id");
}

#[test]
fn a_session_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SessionManager>();
    assert_send_sync::<pi::session::tree::SessionTree>();
}
