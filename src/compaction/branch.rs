//! What a branch summary covers: the entries the user leaves behind when moving to another
//! point of the tree, trimmed to what the summarizer can read.
//!
//! The caller (the session layer) passes both root→leaf paths; nothing here looks at the
//! whole tree. Rules are pi's `collectEntriesForBranchSummary` and `prepareBranchEntries`.

use std::collections::HashSet;

use crate::compaction::file_ops::FileOps;
use crate::compaction::prepare::entry_message;
use crate::compaction::tokens::estimate_tokens;
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

/// The part of the old path that a navigation abandons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BranchEntries<'a> {
    /// Old-path entries after the common ancestor, oldest first.
    pub entries: &'a [SessionEntry],
    /// The deepest entry on both paths (`None` when the paths share nothing).
    pub common_ancestor_id: Option<&'a str>,
}

/// Splits the old path at the common ancestor with the target.
///
/// `old_path` is root → old leaf (empty when there was no leaf), `target_path` is root →
/// the entry navigated to. The common ancestor is the deepest entry of `target_path` that
/// is also on `old_path`; when the target lies on the old path it is the target itself.
/// Compactions on the way are included, not stopped at: their summaries are context.
pub fn collect_entries_for_branch_summary<'a>(
    old_path: &'a [SessionEntry],
    target_path: &'a [SessionEntry],
) -> BranchEntries<'a> {
    let on_old_path: HashSet<&str> = old_path.iter().map(SessionEntry::id).collect();
    let common_ancestor_id = target_path
        .iter()
        .rev()
        .map(SessionEntry::id)
        .find(|id| on_old_path.contains(id));
    let after_ancestor = common_ancestor_id
        .and_then(|id| old_path.iter().position(|e| e.id() == id))
        .map_or(0, |i| i + 1);
    BranchEntries {
        entries: &old_path[after_ancestor..],
        common_ancestor_id,
    }
}

/// The messages a branch summary is written from, and the files the branch touched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation {
    /// Oldest first; the newest messages that fit the budget.
    pub messages: Vec<AgentMessage>,
    pub file_ops: FileOps,
    /// Estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// The message an entry contributes to a branch summary. Tool results are left out: the
/// assistant's tool call already says what was done.
fn branch_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match entry {
        SessionEntry::Message(m) if matches!(m.message, AgentMessage::ToolResult(_)) => None,
        other => entry_message(other).map(std::borrow::Cow::into_owned),
    }
}

/// Picks the messages of `entries` (oldest first) to summarize, newest first until
/// `token_budget` estimated tokens (0 = no limit).
///
/// A compaction or branch summary that does not fit is still taken while less than 90 %
/// of the budget is used: it condenses a lot of history. File operations come from every
/// pi-written `branch_summary` in `entries` and from the tool calls of the messages
/// looked at.
pub fn prepare_branch_entries(entries: &[SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut file_ops = FileOps::default();
    for entry in entries {
        if let SessionEntry::BranchSummary(b) = entry
            && b.from_hook != Some(true)
            && let Some(details) = &b.details
        {
            file_ops.add_details(details);
        }
    }

    let mut newest_first = Vec::new();
    let mut total_tokens = 0u64;
    for entry in entries.iter().rev() {
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
