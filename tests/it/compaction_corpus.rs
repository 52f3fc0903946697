//! Compaction and branch summaries against sessions written by real pi 0.73.1 runs: our
//! cut, token figure, serialized conversation and file lists must equal what pi computed
//! and sent (fixtures copied from the shared corpus, see `tests/fixtures/compaction/`).

// Helpers of a test file: a panic here is a test failure with its message.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::PathBuf;

use pi::ai::message::Message;
use pi::compaction::prompts::{HISTORY_SUMMARY_PROMPT, branch_request, history_request};
use pi::compaction::serialize::serialize_agent_messages;
use pi::compaction::{
    CompactionSettings, FileLists, collect_entries_for_branch_summary, find_cut_point,
    prepare_branch_entries, prepare_compaction,
};
use pi::messages::AgentMessage;
use pi::session::entry::SessionEntry;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compaction")
        .join(name)
}

/// The entries of a session file (the header line is skipped).
fn load_entries(name: &str) -> Vec<SessionEntry> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    text.lines()
        .skip(1)
        .map(|line| SessionEntry::from_json_line(line).unwrap())
        .collect()
}

/// Root → `leaf`, following `parentId` links (references, as a session store hands out).
fn path_refs<'a>(entries: &'a [SessionEntry], leaf: &str) -> Vec<&'a SessionEntry> {
    let by_id: HashMap<&str, &SessionEntry> = entries.iter().map(|e| (e.id(), e)).collect();
    let mut path = Vec::new();
    let mut current = by_id.get(leaf).copied();
    while let Some(entry) = current {
        path.push(entry);
        current = entry.parent_id().and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    path
}

/// Root → `leaf`, as owned entries.
fn path_to(entries: &[SessionEntry], leaf: &str) -> Vec<SessionEntry> {
    path_refs(entries, leaf).into_iter().cloned().collect()
}

/// The request pi sent: its one user message text and its body.
fn pi_request(name: &str) -> (String, Value) {
    let body: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    let text = body["messages"][1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    (text, body)
}

/// The `<conversation>` block of a summarization request.
fn conversation_of(request_text: &str) -> &str {
    let start = request_text.find("<conversation>\n").unwrap() + "<conversation>\n".len();
    let end = request_text.find("\n</conversation>\n\n").unwrap();
    &request_text[start..end]
}

fn user_text(message: &Message) -> String {
    match message {
        Message::User(u) => u.content.text(),
        other => panic!("not a user message: {other:?}"),
    }
}

fn compaction_entry(entries: &[SessionEntry]) -> &pi::session::entry::CompactionEntry {
    entries
        .iter()
        .find_map(|e| match e {
            SessionEntry::Compaction(c) => Some(c),
            _ => None,
        })
        .unwrap()
}

#[test]
fn manual_compaction_matches_pi_cut_tokens_conversation_and_files() {
    let entries = load_entries("compaction-manual.jsonl");
    let stored = compaction_entry(&entries);
    let path = path_to(&entries, stored.parent_id.as_ref().unwrap().as_str());
    let settings = CompactionSettings {
        keep_recent_tokens: 100,
        ..CompactionSettings::default()
    };

    let prep = prepare_compaction(&path, &settings).unwrap();
    // A store that keeps its entries in `Arc`s can pass its path as it is.
    let shared: Vec<std::sync::Arc<SessionEntry>> =
        path.iter().cloned().map(std::sync::Arc::new).collect();
    assert_eq!(prepare_compaction(&shared, &settings).as_ref(), Some(&prep));
    assert_eq!(prep.first_kept_entry_id, stored.first_kept_entry_id);
    assert_eq!(
        prep.first_kept_entry_id, "90279f84",
        "the Turn 4 user message"
    );
    assert!(!prep.is_split_turn);
    assert_eq!(prep.tokens_before, stored.tokens_before);
    assert_eq!(prep.tokens_before, 2404);

    let (pi_text, body) = pi_request("compaction-manual.request-8.json");
    let ours = serialize_agent_messages(&prep.messages_to_summarize);
    pretty_assertions::assert_eq!(ours, conversation_of(&pi_text));

    // Same request shape: conversation block, instructions, the /compact focus; same limit.
    let request = history_request(
        &prep.messages_to_summarize,
        prep.previous_summary.as_deref(),
        Some("Focus on the file edits"),
        settings.reserve_tokens,
        None,
    );
    assert_eq!(body["max_completion_tokens"], request.max_tokens);
    let [message] = request.messages.as_slice() else {
        panic!("one user message expected")
    };
    assert_eq!(
        user_text(message),
        format!(
            "<conversation>\n{}\n</conversation>\n\n{HISTORY_SUMMARY_PROMPT}\n\nAdditional focus: Focus on the file edits",
            conversation_of(&pi_text)
        )
    );

    // File lists: list.txt was read and edited, so it is only "modified".
    let lists = prep.file_ops.lists();
    assert_eq!(Some(lists.to_details()), stored.details);
    assert!(stored.summary.ends_with(&lists.to_summary_suffix()));
    assert!(
        stored
            .summary
            .ends_with("\n\n<modified-files>\nlist.txt\n</modified-files>")
    );
}

#[test]
fn compacting_again_after_the_corpus_compaction_updates_its_summary() {
    let entries = load_entries("compaction-manual.jsonl");
    let leaf = entries.last().unwrap().id().to_string();
    let path = path_to(&entries, &leaf);
    let stored = compaction_entry(&entries);
    let prep = prepare_compaction(
        &path,
        &CompactionSettings {
            keep_recent_tokens: 10,
            ..CompactionSettings::default()
        },
    )
    .unwrap();
    assert_eq!(
        prep.previous_summary.as_deref(),
        Some(stored.summary.as_str())
    );
    // The span restarts at the entry the first compaction kept (Turn 4). The new cut keeps
    // only the last reply, which splits Turn 5: its prompt is the turn prefix.
    let conversation = serialize_agent_messages(&prep.messages_to_summarize);
    assert!(conversation.starts_with("[User]: Turn 4: how many lines now?"));
    assert!(conversation.ends_with("\n\n[Assistant]: Four lines: alpha, BETA, gamma, delta."));
    assert_eq!(prep.first_kept_entry_id, "886322e8");
    assert!(prep.is_split_turn);
    assert_eq!(
        serialize_agent_messages(&prep.turn_prefix_messages),
        "[User]: Turn 5: what is in list.txt?"
    );
    // Files carried over from the stored details.
    assert_eq!(prep.file_ops.lists().modified_files, ["list.txt"]);
    // tokensBefore comes from the newest reply's usage.
    assert_eq!(prep.tokens_before, 1749);
}

#[test]
fn branch_summary_covers_what_pi_summarized_with_the_same_text_and_files() {
    let entries = load_entries("tree-branch-summary.jsonl");
    let old_path = path_refs(&entries, "9bc9881d");
    // The user selected the first user message in /tree.
    let target_path = path_refs(&entries, "1a73f3c8");
    let branch = collect_entries_for_branch_summary(&old_path, &target_path);
    assert_eq!(branch.common_ancestor_id, Some("1a73f3c8"));
    let ids: Vec<&str> = branch.entries.iter().map(|e| e.id()).collect();
    assert_eq!(
        ids,
        [
            "d5f338a3", "ea59b5de", "9df2ed5e", "a13c725e", "a66a6420", "a0445cb0", "630f732a",
            "59794941", "9bc9881d"
        ]
    );

    let prep = prepare_branch_entries(branch.entries, 200_000 - 16384);
    let (pi_text, body) = pi_request("tree-branch-summary.request-6.json");
    let ours = serialize_agent_messages(&prep.messages);
    pretty_assertions::assert_eq!(ours, conversation_of(&pi_text));
    let request = branch_request(&prep.messages, None, false);
    assert_eq!(body["max_completion_tokens"], request.max_tokens);
    assert!(
        prep.messages
            .iter()
            .all(|m| !matches!(&**m, AgentMessage::ToolResult(_)))
    );

    let stored = entries
        .iter()
        .find_map(|e| match e {
            SessionEntry::BranchSummary(b) => Some(b),
            _ => None,
        })
        .unwrap();
    let lists: FileLists = prep.file_ops.lists();
    assert_eq!(Some(lists.to_details()), stored.details);
    assert!(stored.summary.ends_with(&lists.to_summary_suffix()));
    assert!(
        stored
            .summary
            .ends_with("\n\n<modified-files>\nnotes.txt\n</modified-files>")
    );
}

/// pi-mono's v1 fixture, migrated the way pi does: every entry gets an id and the
/// previous entry as parent.
fn large_v1_session() -> Vec<SessionEntry> {
    let text = std::fs::read_to_string(fixture("large-session.v1.jsonl")).unwrap();
    let mut previous: Option<String> = None;
    text.lines()
        .skip(1)
        .enumerate()
        .map(|(i, line)| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            let id = format!("{i:08x}");
            let object = value.as_object_mut().unwrap();
            object.insert("id".into(), Value::String(id.clone()));
            object.insert(
                "parentId".into(),
                previous.replace(id).map_or(Value::Null, Value::String),
            );
            let entry: SessionEntry = serde_json::from_value(value).unwrap();
            assert!(
                !matches!(entry, SessionEntry::Unknown(_)),
                "unreadable line {i}"
            );
            entry
        })
        .collect()
}

fn is_tool_result(entry: &SessionEntry) -> bool {
    matches!(entry, SessionEntry::Message(m) if matches!(m.message, AgentMessage::ToolResult(_)))
}

#[test]
fn cut_point_of_a_real_large_session_is_never_a_tool_result() {
    let path = large_v1_session();
    assert_eq!(path.len(), 1018);
    let mut keeps = vec![0u64, 1, 2, 3, 5, 8];
    while *keeps.last().unwrap() < 2_000_000 {
        let next = keeps.last().unwrap() * 3 / 2 + 7;
        keeps.push(next);
    }
    let mut distinct_cuts = std::collections::BTreeSet::new();
    for end in (1..=path.len()).step_by(17).chain([path.len()]) {
        for &keep in &keeps {
            let cut = find_cut_point(&path, 0, end, keep);
            let entry = &path[cut.first_kept_entry_index];
            assert!(
                !is_tool_result(entry),
                "end {end}, keep {keep}: cut at tool result {}",
                entry.id()
            );
            assert!(cut.first_kept_entry_index < end);
            if let Some(turn_start) = cut.turn_start_index {
                assert!(turn_start <= cut.first_kept_entry_index);
            }
            distinct_cuts.insert(cut.first_kept_entry_index);
        }
        let prep = prepare_compaction(&path[..end], &CompactionSettings::default()).unwrap();
        let kept = path
            .iter()
            .position(|e| e.id() == prep.first_kept_entry_id.as_str())
            .unwrap();
        assert!(!is_tool_result(&path[kept]));
    }
    assert!(
        distinct_cuts.len() > 100,
        "the loop should exercise many different cuts"
    );
}
