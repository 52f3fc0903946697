//! What a branch summary covers: the entries the user leaves behind when moving to another
//! point of the tree, trimmed to what the summarizer can read.
//!
//! The caller (the session layer) passes both root→leaf paths; nothing here looks at the
//! whole tree. Rules are pi's `collectEntriesForBranchSummary` and `prepareBranchEntries`.

use std::borrow::Borrow;
use std::collections::HashSet;

use crate::compaction::file_ops::FileOps;
use crate::compaction::message_ref::MessageRef;
use crate::compaction::prepare::entry_message;
use crate::compaction::tokens::estimate_tokens;
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

/// The part of the old path that a navigation abandons.
#[derive(Debug, PartialEq)]
pub struct BranchEntries<'a, E> {
    /// Old-path entries after the common ancestor, oldest first.
    pub entries: &'a [E],
    /// The deepest entry on both paths (`None` when the paths share nothing).
    pub common_ancestor_id: Option<&'a str>,
}

/// Splits the old path at the common ancestor with the target.
///
/// `old_path` is root → old leaf (empty when there was no leaf), `target_path` is root →
/// the entry navigated to; both may hold entries or references. The common ancestor is
/// the deepest entry of `target_path` that is also on `old_path`; when the target lies on
/// the old path it is the target itself. Compactions on the way are included, not stopped
/// at: their summaries are context.
pub fn collect_entries_for_branch_summary<'a, E, T>(
    old_path: &'a [E],
    target_path: &[T],
) -> BranchEntries<'a, E>
where
    E: Borrow<SessionEntry>,
    T: Borrow<SessionEntry>,
{
    let on_target_path: HashSet<&str> = target_path.iter().map(|e| e.borrow().id()).collect();
    // The old path is root-first too, so its last entry on the target path is the deepest
    // common one.
    let ancestor = old_path
        .iter()
        .rposition(|e| on_target_path.contains(e.borrow().id()));
    BranchEntries {
        entries: ancestor.map_or(old_path, |i| &old_path[i + 1..]),
        common_ancestor_id: ancestor.map(|i| old_path[i].borrow().id()),
    }
}

/// The messages a branch summary is written from, and the files the branch touched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation<'a> {
    /// Oldest first; the newest messages that fit the budget (borrowed from the entries).
    pub messages: Vec<MessageRef<'a>>,
    pub file_ops: FileOps,
    /// Estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// The message an entry contributes to a branch summary. Tool results are left out: the
/// assistant's tool call already says what was done.
fn branch_message(entry: &SessionEntry) -> Option<MessageRef<'_>> {
    match entry {
        SessionEntry::Message(m) if matches!(m.message, AgentMessage::ToolResult(_)) => None,
        other => entry_message(other),
    }
}

/// Picks the messages of `entries` (oldest first) to summarize, newest first until
/// `token_budget` estimated tokens (0 = no limit).
///
/// A compaction or branch summary that does not fit is still taken while less than 90 %
/// of the budget is used: it condenses a lot of history. File operations come from every
/// pi-written `branch_summary` in `entries` and from the tool calls of the messages
/// looked at.
pub fn prepare_branch_entries<E: Borrow<SessionEntry>>(
    entries: &[E],
    token_budget: u64,
) -> BranchPreparation<'_> {
    let mut file_ops = FileOps::default();
    for entry in entries {
        if let SessionEntry::BranchSummary(b) = entry.borrow()
            && b.from_hook != Some(true)
            && let Some(details) = &b.details
        {
            file_ops.add_details(details);
        }
    }

    let mut newest_first = Vec::new();
    let mut total_tokens = 0u64;
    for entry in entries.iter().rev().map(Borrow::borrow) {
        let Some(message) = branch_message(entry) else {
            continue;
        };
        // pi records the files of the message that overflows the budget too.
        file_ops.add_tool_calls(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(
                entry,
                SessionEntry::Compaction(_) | SessionEntry::BranchSummary(_)
            );
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                newest_first.push(message);
                total_tokens += tokens;
            }
            break;
        }
        newest_first.push(message);
        total_tokens += tokens;
    }
    newest_first.reverse();
    BranchPreparation {
        messages: newest_first,
        file_ops,
        total_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::testkit::{PathBuilder, describe, describe_messages, read, words};
    use serde_json::json;

    fn ids(entries: &[SessionEntry]) -> Vec<&str> {
        entries.iter().map(SessionEntry::id).collect()
    }

    #[test]
    fn entries_after_the_common_ancestor_are_collected_oldest_first() {
        let old = PathBuilder::new()
            .user("Turn 1")
            .assistant("a1")
            .user("Turn 2")
            .assistant("a2")
            .compaction("c", "e3", None)
            .user("Turn 3")
            .build();
        // A sibling branch forking after e2.
        let target = PathBuilder::branch_from(&old[..2], "t")
            .user("other")
            .build();
        let b = collect_entries_for_branch_summary(&old, &target);
        assert_eq!(b.common_ancestor_id, Some("e2"));
        assert_eq!(ids(b.entries), ["e3", "e4", "e5", "e6"]);

        // Navigating back to an entry of the old path: that entry is the ancestor.
        let b = collect_entries_for_branch_summary(&old, &old[..3]);
        assert_eq!(
            (b.common_ancestor_id, ids(b.entries)),
            (Some("e3"), vec!["e4", "e5", "e6"])
        );

        // Unrelated roots share nothing: the whole old path is abandoned.
        let other_root = PathBuilder::branch_from(&[], "r").user("x").build();
        let b = collect_entries_for_branch_summary(&old, &other_root);
        assert_eq!((b.common_ancestor_id, b.entries.len()), (None, 6));

        // No old leaf, nothing to summarize.
        let b = collect_entries_for_branch_summary(&[] as &[SessionEntry], &target);
        assert_eq!((b.common_ancestor_id, b.entries.len()), (None, 0));
    }

    #[test]
    fn tool_results_are_skipped_and_summaries_become_messages() {
        let entries = PathBuilder::new()
            .compaction("earlier work", "e0", None)
            .user("Turn 1")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result("file text")
            .custom_message("note")
            .branch_summary(
                "side quest",
                Some(json!({"readFiles": ["r.md"], "modifiedFiles": ["m.rs"]})),
                false,
            )
            .branch_summary("ext", Some(json!({"modifiedFiles": ["ext.rs"]})), true)
            .model_change()
            .build();
        let p = prepare_branch_entries(&entries, 0);
        insta::assert_snapshot!(describe_messages(&p.messages), @r#"
          compactionSummary "earlier work"
          user "Turn 1"
          assistant "reading" [read]
          custom "note"
          branchSummary "side quest"
          branchSummary "ext"
        "#);
        let lists = p.file_ops.lists();
        assert_eq!(lists.read_files, ["a.txt", "r.md"]);
        assert_eq!(lists.modified_files, ["m.rs"]);
    }

    #[test]
    fn the_newest_messages_within_budget_are_kept() {
        let entries = PathBuilder::new()
            .user(&words(50))
            .tool_call("old", "edit", read("old.rs"))
            .tool_call(&words(30), "write", read("over.rs"))
            .user(&words(40))
            .assistant(&words(40))
            .build();
        let p = prepare_branch_entries(&entries, 100);
        // 40 + 40 fit; the write call (35 tokens) would exceed 100 and stops the walk, but
        // its file is still recorded (as pi does); the older edit is not looked at.
        insta::assert_snapshot!(describe_messages(&p.messages), @r#"
          user "abcdabcdabcdabcdabcd"…
          assistant "abcdabcdabcdabcdabcd"…
        "#);
        assert_eq!(p.total_tokens, 80);
        assert_eq!(p.file_ops.lists().modified_files, ["over.rs"]);
    }

    #[test]
    fn an_overflowing_summary_still_fits_below_ninety_percent_of_the_budget() {
        let with_summary = |used: usize| {
            PathBuilder::new()
                .user("older")
                .branch_summary(&words(500), None, false)
                .user(&words(used))
                .build()
        };
        // 80 of 100 used (< 90 %): the big summary is taken anyway, then the walk stops.
        let entries = with_summary(80);
        let p = prepare_branch_entries(&entries, 100);
        assert_eq!(describe_messages(&p.messages).lines().count(), 2);
        assert_eq!(p.total_tokens, 580);
        // 95 of 100 used: it is not.
        let entries = with_summary(95);
        let p = prepare_branch_entries(&entries, 100);
        assert_eq!(describe_messages(&p.messages).lines().count(), 1);
        assert_eq!(describe(&entries[2]), r#"e3 user "abcdabcdabcdabcdabcd"…"#);
    }
}
