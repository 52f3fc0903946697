//! What a compaction will do, decided before any model is called.
//!
//! [`prepare_compaction`] is pi's `prepareCompaction`: given the current path (root →
//! leaf) it finds the cut, the messages to summarize, the turn prefix of a split turn,
//! the previous summary to update, the files touched and the `tokensBefore` figure. It is
//! pure and fast (see `benches/compaction.rs`): messages are borrowed from the path, not
//! copied. The result is what extensions are shown and what
//! [`compact`](crate::compaction::compact()) sends to the model.

use std::borrow::Borrow;

use serde::Serialize;

use crate::compaction::cut::find_cut_point;
use crate::compaction::file_ops::FileOps;
use crate::compaction::message_ref::MessageRef;
use crate::compaction::settings::CompactionSettings;
use crate::compaction::tokens::estimate_context_tokens;
use crate::messages::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, iso_to_ms,
};
use crate::session::entry::{EntryId, SessionEntry};

/// Everything needed to summarize and append a compaction entry. Messages borrow from
/// the path entries; [`CompactionPreparation::into_owned`] detaches them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreparation<'a> {
    /// The entry the kept part starts at (written as `firstKeptEntryId`).
    pub first_kept_entry_id: EntryId,
    /// Messages that the summary replaces.
    pub messages_to_summarize: Vec<MessageRef<'a>>,
    /// With a split turn: the start of that turn, summarized separately.
    pub turn_prefix_messages: Vec<MessageRef<'a>>,
    pub is_split_turn: bool,
    /// Estimated context size before compacting (written as `tokensBefore`).
    pub tokens_before: u64,
    /// The summary of the previous compaction on the path, to be updated.
    pub previous_summary: Option<String>,
    pub file_ops: FileOps,
    pub settings: CompactionSettings,
}

fn owned(messages: Vec<MessageRef<'_>>) -> Vec<MessageRef<'static>> {
    messages.into_iter().map(MessageRef::into_owned).collect()
}

impl CompactionPreparation<'_> {
    /// A copy that no longer borrows the path (to keep it across a session lock or task).
    pub fn into_owned(self) -> CompactionPreparation<'static> {
        CompactionPreparation {
            first_kept_entry_id: self.first_kept_entry_id,
            messages_to_summarize: owned(self.messages_to_summarize),
            turn_prefix_messages: owned(self.turn_prefix_messages),
            is_split_turn: self.is_split_turn,
            tokens_before: self.tokens_before,
            previous_summary: self.previous_summary,
            file_ops: self.file_ops,
            settings: self.settings,
        }
    }
}

/// The message an entry contributes to a context, if any.
pub(crate) fn entry_message(entry: &SessionEntry) -> Option<MessageRef<'_>> {
    let converted = match entry {
        SessionEntry::Message(m) => return Some(MessageRef::Borrowed(&m.message)),
        SessionEntry::CustomMessage(c) => AgentMessage::Custom(CustomMessage {
            custom_type: c.custom_type.clone(),
            content: c.content.clone(),
            display: c.display,
            details: c.details.clone(),
            timestamp: iso_to_ms(&c.timestamp),
            extra: Default::default(),
        }),
        SessionEntry::BranchSummary(b) => AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: b.summary.clone(),
            from_id: b.from_id.clone(),
            timestamp: iso_to_ms(&b.timestamp),
        }),
        SessionEntry::Compaction(c) => AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: c.summary.clone(),
            tokens_before: c.tokens_before,
            timestamp: iso_to_ms(&c.timestamp),
        }),
        SessionEntry::ThinkingLevelChange(_)
        | SessionEntry::ModelChange(_)
        | SessionEntry::Custom(_)
        | SessionEntry::Label(_)
        | SessionEntry::SessionInfo(_)
        | SessionEntry::ContextEdit(_)
        | SessionEntry::Usage(_)
        | SessionEntry::Unknown(_) => return None,
    };
    Some(MessageRef::Converted(Box::new(converted)))
}

/// The index of the entry with `id`. Ids are unique on a path and a compaction's first
/// kept entry lies just before it, so the search goes back from `near` first (the whole
/// path is only read when the id is missing).
fn find_entry<E: Borrow<SessionEntry>>(path: &[E], id: &str, near: usize) -> Option<usize> {
    let near = near.min(path.len());
    path[..near]
        .iter()
        .rposition(|e| e.borrow().id() == id)
        .or_else(|| {
            path[near..]
                .iter()
                .position(|e| e.borrow().id() == id)
                .map(|i| near + i)
        })
}

/// The messages the model currently sees for this path, as pi's `buildSessionContext`
/// builds them (the latest compaction's summary, the kept entries before it, everything
/// after it). Only used for `tokensBefore`; the session layer owns the real context.
fn context_messages<E: Borrow<SessionEntry>>(path: &[E]) -> Vec<MessageRef<'_>> {
    // Branch summaries with an empty text are left out of a context.
    fn context_message(e: &SessionEntry) -> Option<MessageRef<'_>> {
        match e {
            SessionEntry::BranchSummary(b) if b.summary.is_empty() => None,
            SessionEntry::Compaction(_) => None,
            other => entry_message(other),
        }
    }
    let Some(compaction_index) = path
        .iter()
        .rposition(|e| matches!(e.borrow(), SessionEntry::Compaction(_)))
    else {
        return path
            .iter()
            .filter_map(|e| context_message(e.borrow()))
            .collect();
    };
    let compaction_entry = path[compaction_index].borrow();
    let SessionEntry::Compaction(compaction) = compaction_entry else {
        return Vec::new();
    };
    let mut messages = Vec::with_capacity(path.len() - compaction_index + 1);
    messages.extend(entry_message(compaction_entry));
    let before = &path[..compaction_index];
    if let Some(first_kept) = find_entry(
        before,
        compaction.first_kept_entry_id.as_str(),
        before.len(),
    ) {
        messages.extend(
            before[first_kept..]
                .iter()
                .filter_map(|e| context_message(e.borrow())),
        );
    }
    messages.extend(
        path[compaction_index + 1..]
            .iter()
            .filter_map(|e| context_message(e.borrow())),
    );
    messages
}

/// Messages of `entries` for the summarizer (compaction entries contribute nothing),
/// recording their file operations on the way (one pass over the entries).
fn messages_for_summary<'a, E: Borrow<SessionEntry>>(
    entries: &'a [E],
    file_ops: &mut FileOps,
) -> Vec<MessageRef<'a>> {
    let mut messages = Vec::with_capacity(entries.len());
    for entry in entries.iter().map(Borrow::borrow) {
        if matches!(entry, SessionEntry::Compaction(_)) {
            continue;
        }
        if let Some(message) = entry_message(entry) {
            file_ops.add_tool_calls(&message);
            messages.push(message);
        }
    }
    messages
}

/// Decides what compacting `path_entries` (the current path, root → leaf; owned entries
/// or references) will do.
///
/// `None` when the path already ends in a compaction, or when it has no entry to keep
/// (an empty path, or a first kept entry without id in a file that was never migrated).
pub fn prepare_compaction<'a, E: Borrow<SessionEntry>>(
    path_entries: &'a [E],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation<'a>> {
    if matches!(
        path_entries.last().map(Borrow::borrow),
        Some(SessionEntry::Compaction(_))
    ) {
        return None;
    }
    let previous = path_entries
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| match e.borrow() {
            SessionEntry::Compaction(c) => Some((i, c)),
            _ => None,
        });

    // A repeated compaction re-summarizes what the previous one kept: the span starts at
    // its first kept entry (or right after it when that entry is not on the path).
    let boundary_start = previous.map_or(0, |(index, c)| {
        find_entry(path_entries, c.first_kept_entry_id.as_str(), index).unwrap_or(index + 1)
    });
    let boundary_end = path_entries.len();

    let tokens_before = estimate_context_tokens(&context_messages(path_entries)).tokens;

    let cut = find_cut_point(
        path_entries,
        boundary_start,
        boundary_end,
        settings.keep_recent_tokens,
    );
    let first_kept = path_entries.get(cut.first_kept_entry_index)?.borrow();
    if first_kept.id().is_empty() {
        return None;
    }
    let history_end = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => turn_start,
        _ => cut.first_kept_entry_index,
    };

    let mut file_ops = FileOps::default();
    if let Some((_, c)) = previous
        && c.from_hook != Some(true)
        && let Some(details) = &c.details
    {
        file_ops.add_details(details);
    }
    let slice = |from: usize, to: usize| path_entries.get(from..to).unwrap_or(&[]);
    let messages_to_summarize =
        messages_for_summary(slice(boundary_start, history_end), &mut file_ops);
    let turn_prefix_messages = if cut.is_split_turn {
        messages_for_summary(
            slice(history_end, cut.first_kept_entry_index),
            &mut file_ops,
        )
    } else {
        Vec::new()
    };

    Some(CompactionPreparation {
        first_kept_entry_id: EntryId(first_kept.id().to_string()),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary: previous.map(|(_, c)| c.summary.clone()),
        file_ops,
        settings: settings.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::testkit::{PathBuilder, describe_messages, read, words};
    use serde_json::json;

    fn settings(keep_recent_tokens: u64) -> CompactionSettings {
        CompactionSettings {
            keep_recent_tokens,
            ..CompactionSettings::default()
        }
    }

    fn render(p: &CompactionPreparation) -> String {
        let lists = p.file_ops.lists();
        let or_none = |s: String| {
            if s.is_empty() {
                "  (none)".to_string()
            } else {
                s
            }
        };
        format!(
            "first kept: {}\nsplit turn: {}\ntokens before: {}\nprevious summary: {:?}\nsummarize:\n{}\nturn prefix:\n{}\nread: {:?}\nmodified: {:?}",
            p.first_kept_entry_id,
            p.is_split_turn,
            p.tokens_before,
            p.previous_summary,
            or_none(describe_messages(&p.messages_to_summarize)),
            or_none(describe_messages(&p.turn_prefix_messages)),
            lists.read_files,
            lists.modified_files,
        )
    }

    #[test]
    fn a_path_ending_in_a_compaction_or_an_empty_path_has_nothing_to_prepare() {
        let path = PathBuilder::new()
            .user("a")
            .assistant("b")
            .compaction("sum", "e1", None)
            .build();
        assert_eq!(prepare_compaction(&path, &settings(1)), None);
        assert_eq!(
            prepare_compaction(&[] as &[SessionEntry], &settings(1)),
            None
        );
    }

    #[test]
    fn first_compaction_summarizes_whole_turns_before_the_cut() {
        let path = PathBuilder::new()
            .model_change()
            .user("Turn 1")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(50))
            .assistant_with_usage(&words(100), 3000)
            .user(&words(100))
            .assistant_with_usage(&words(100), 3500)
            .user("tail")
            .build();
        insta::assert_snapshot!(render(&prepare_compaction(&path, &settings(150)).unwrap()), @r#"
        first kept: e6
        split turn: false
        tokens before: 3501
        previous summary: None
        summarize:
          user "Turn 1"
          assistant "reading" [read]
          toolResult "abcdabcdabcdabcdabcd"…
          assistant "abcdabcdabcdabcdabcd"…
        turn prefix:
          (none)
        read: ["a.txt"]
        modified: []
        "#);
    }

    #[test]
    fn a_cut_inside_a_turn_summarizes_the_turn_prefix_separately() {
        let path = PathBuilder::new()
            .user("Turn 1")
            .assistant("ok")
            .user("Turn 2")
            .tool_call("writing", "write", json!({"path": "b.rs", "content": "x"}))
            .tool_result(&words(400))
            .assistant_with_usage(&words(10), 500)
            .build();
        insta::assert_snapshot!(render(&prepare_compaction(&path, &settings(100)).unwrap()), @r#"
        first kept: e6
        split turn: true
        tokens before: 500
        previous summary: None
        summarize:
          user "Turn 1"
          assistant "ok"
        turn prefix:
          user "Turn 2"
          assistant "writing" [write]
          toolResult "abcdabcdabcdabcdabcd"…
        read: []
        modified: ["b.rs"]
        "#);
    }

    #[test]
    fn repeated_compaction_updates_the_previous_summary_from_its_kept_boundary() {
        let path = PathBuilder::new()
            .user("Turn 1")
            .assistant(&words(100))
            .user("Turn 2")
            .tool_call("editing", "edit", read("src/x.rs"))
            .tool_result("done")
            .compaction(
                "OLD SUMMARY",
                "e3",
                Some(json!({"readFiles": ["old.md"], "modifiedFiles": ["z.rs"]})),
            )
            .user(&words(200))
            .assistant_with_usage(&words(10), 900)
            .build();
        // The span starts at e3 (kept by the previous compaction); the compaction entry
        // itself is not a message to summarize. tokensBefore counts only what the model
        // sees: the old summary, e3..e5, and everything after the compaction.
        insta::assert_snapshot!(render(&prepare_compaction(&path, &settings(50)).unwrap()), @r#"
        first kept: e7
        split turn: false
        tokens before: 900
        previous summary: Some("OLD SUMMARY")
        summarize:
          user "Turn 2"
          assistant "editing" [edit]
          toolResult "done"
        turn prefix:
          (none)
        read: ["old.md"]
        modified: ["src/x.rs", "z.rs"]
        "#);
    }

    #[test]
    fn files_of_an_extension_compaction_are_not_carried_forward() {
        let mut path = PathBuilder::new()
            .user("a")
            .assistant("b")
            .compaction("ext", "e9", Some(json!({"readFiles": ["ext.md"]})))
            .user(&words(50))
            .assistant(&words(50))
            .build();
        let SessionEntry::Compaction(c) = &mut path[2] else {
            panic!("not a compaction")
        };
        c.from_hook = Some(true);
        let prep = prepare_compaction(&path, &settings(10)).unwrap();
        assert_eq!(prep.file_ops, FileOps::default());
        // The first kept entry e9 is not on the path: the span starts after the compaction.
        assert_eq!(prep.first_kept_entry_id, "e5");
        assert!(prep.messages_to_summarize.is_empty() && prep.is_split_turn);
        assert_eq!(
            describe_messages(&prep.turn_prefix_messages),
            r#"  user "abcdabcdabcdabcdabcd"…"#
        );
    }

    #[test]
    fn tokens_before_estimates_everything_when_no_reply_reported_usage() {
        let path = PathBuilder::new()
            .user(&words(10))
            .assistant_with_usage("x", 9000)
            .compaction(&"s".repeat(40), "e99", None)
            .custom_message("12345678")
            .branch_summary("", None, false)
            .user("1234")
            .build();
        // Context: summary (10) + custom message (2) + user (1); the empty branch summary
        // and the pre-compaction reply are not part of it.
        let prep = prepare_compaction(&path, &settings(1000)).unwrap();
        assert_eq!(prep.tokens_before, 13);
    }
}
