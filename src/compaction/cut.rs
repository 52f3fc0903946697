//! Where to cut a path for compaction: everything before the cut is summarized, the cut
//! entry and everything after it is kept verbatim.
//!
//! This is pi's `findCutPoint`, rule for rule, because the cut decides which
//! `firstKeptEntryId` is written to the session file. Indices are positions in the
//! root→leaf entry list the caller passes in.

use std::borrow::Borrow;

use crate::compaction::tokens::estimate_tokens;
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

/// The result of [`find_cut_point`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry that is kept.
    pub first_kept_entry_index: usize,
    /// When the cut entry is not a user message: the start of the turn it belongs to.
    pub turn_start_index: Option<usize>,
    /// The cut lands inside a turn (pi: the cut entry is not a user message and a turn
    /// start was found).
    pub is_split_turn: bool,
}

/// Whether the kept part may start at this entry. Tool results never start it: they must
/// follow the assistant message that called the tool.
fn is_valid_cut_point(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_) => true,
            AgentMessage::ToolResult(_) | AgentMessage::System(_) | AgentMessage::Unknown(_) => {
                false
            }
        },
        // These become user messages in the context.
        SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
        SessionEntry::ThinkingLevelChange(_)
        | SessionEntry::ModelChange(_)
        | SessionEntry::Compaction(_)
        | SessionEntry::Custom(_)
        | SessionEntry::Label(_)
        | SessionEntry::SessionInfo(_)
        | SessionEntry::ContextEdit(_)
        | SessionEntry::Usage(_)
        | SessionEntry::Unknown(_) => false,
    }
}

/// Whether a turn can start at this entry: user messages, `!cmd` runs, and the entries
/// that enter the context as user messages.
fn starts_turn(entry: &SessionEntry) -> bool {
    match entry {
        SessionEntry::BranchSummary(_) | SessionEntry::CustomMessage(_) => true,
        SessionEntry::Message(m) => {
            matches!(
                m.message,
                AgentMessage::User(_) | AgentMessage::BashExecution(_)
            )
        }
        _ => false,
    }
}

/// The nearest entry at or before `entry_index` (and not before `start_index`) that
/// starts a turn (pi's `findTurnStartIndex`).
pub fn find_turn_start_index<E: Borrow<SessionEntry>>(
    entries: &[E],
    entry_index: usize,
    start_index: usize,
) -> Option<usize> {
    if entries.is_empty() || start_index > entry_index {
        return None;
    }
    let last = entry_index.min(entries.len() - 1);
    (start_index..=last)
        .rev()
        .find(|&i| starts_turn(entries[i].borrow()))
}

/// Finds where to cut `entries[start..end]` so that about `keep_recent_tokens` of the
/// newest messages are kept.
///
/// Walks back from the newest `message` entry summing estimates; at the first entry where
/// the sum reaches `keep_recent_tokens`, the cut is the first valid cut point at or after
/// it. The cut then moves back over non-message entries (model or thinking changes,
/// labels …) so they stay with what they precede, stopping at a message or a compaction.
/// Without any valid cut point the cut is `start`.
///
/// `entries` may be owned entries or references (`&[SessionEntry]` or `&[&SessionEntry]`).
pub fn find_cut_point<E: Borrow<SessionEntry>>(
    entries: &[E],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPoint {
    let end = end.min(entries.len());
    let start = start.min(end);
    let window = &entries[start..end];
    let cut_points: Vec<usize> = window
        .iter()
        .enumerate()
        .filter(|(_, e)| is_valid_cut_point((*e).borrow()))
        .map(|(i, _)| start + i)
        .collect();
    let Some(&first_cut_point) = cut_points.first() else {
        return CutPoint {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut cut_index = first_cut_point;
    let mut accumulated = 0u64;
    for i in (start..end).rev() {
        let SessionEntry::Message(m) = entries[i].borrow() else {
            continue;
        };
        accumulated += estimate_tokens(&m.message);
        if accumulated >= keep_recent_tokens {
            // pi quirk kept on purpose: when no cut point follows (a huge trailing tool
            // result), the cut stays at the first cut point and nothing is summarized.
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut_index = c;
            }
            break;
        }
    }

    while cut_index > start {
        match entries[cut_index - 1].borrow() {
            SessionEntry::Compaction(_) | SessionEntry::Message(_) => break,
            _ => cut_index -= 1,
        }
    }

    let cut_is_user_message = matches!(
        entries[cut_index].borrow(),
        SessionEntry::Message(m) if matches!(m.message, AgentMessage::User(_))
    );
    // As in pi, a cut at anything but a user message looks for the turn start, even when
    // the cut entry itself starts a turn (then the turn prefix is empty).
    let turn_start_index = if cut_is_user_message {
        None
    } else {
        find_turn_start_index(entries, cut_index, start)
    };
    CutPoint {
        first_kept_entry_index: cut_index,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::testkit::{PathBuilder, read, render_cut, words};

    fn cut(entries: &[SessionEntry], start: usize, keep: u64) -> String {
        let c = find_cut_point(entries, start, entries.len(), keep);
        assert_eq!(c.is_split_turn, c.turn_start_index.is_some());
        let split = if c.is_split_turn { "(split turn)" } else { "" };
        format!(
            "{}\n{split}",
            render_cut(entries, c.first_kept_entry_index, c.turn_start_index)
        )
        .trim_end()
        .to_string()
    }

    #[test]
    fn cut_lands_on_the_turn_start_when_whole_turns_fit() {
        let path = PathBuilder::new()
            .user(&words(10))
            .assistant(&words(100))
            .user(&words(10))
            .assistant(&words(100))
            .build();
        insta::assert_snapshot!(cut(&path, 0, 110), @r#"
          e1 user "abcdabcdabcdabcdabcd"…
          e2 assistant "abcdabcdabcdabcdabcd"…
        ✂ e3 user "abcdabcdabcdabcdabcd"…
          e4 assistant "abcdabcdabcdabcdabcd"…
        "#);
    }

    #[test]
    fn tool_results_are_never_cut_and_a_mid_turn_cut_is_a_split_turn() {
        let path = PathBuilder::new()
            .user("Turn 1")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(50))
            .user("Turn 2")
            .tool_call("reading", "read", read("b.txt"))
            .tool_result(&words(500))
            .assistant("done")
            .build();
        // The budget is reached at the big tool result; the next cut point is the
        // assistant reply after it, so the turn of "Turn 2" is split.
        insta::assert_snapshot!(cut(&path, 0, 300), @r#"
          e1 user "Turn 1"
          e2 assistant "reading" [read]
          e3 toolResult "abcdabcdabcdabcdabcd"…
        → e4 user "Turn 2"
          e5 assistant "reading" [read]
          e6 toolResult "abcdabcdabcdabcdabcd"…
        ✂ e7 assistant "done"
        (split turn)
        "#);
    }

    #[test]
    fn a_huge_trailing_tool_result_keeps_everything_like_pi() {
        let path = PathBuilder::new()
            .user("go")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(500))
            .build();
        insta::assert_snapshot!(cut(&path, 0, 100), @r#"
        ✂ e1 user "go"
          e2 assistant "reading" [read]
          e3 toolResult "abcdabcdabcdabcdabcd"…
        "#);
    }

    #[test]
    fn settings_before_the_cut_are_kept_and_make_pi_see_a_split_turn() {
        let path = PathBuilder::new()
            .user(&words(100))
            .assistant(&words(100))
            .model_change()
            .label("e1")
            .user(&words(10))
            .assistant(&words(10))
            .build();
        // pi quirk kept on purpose: the cut entry is the model change, not a user
        // message, so the whole previous turn becomes the "turn prefix".
        insta::assert_snapshot!(cut(&path, 0, 20), @r#"
        → e1 user "abcdabcdabcdabcdabcd"…
          e2 assistant "abcdabcdabcdabcdabcd"…
        ✂ e3 model_change
          e4 label
          e5 user "abcdabcdabcdabcdabcd"…
          e6 assistant "abcdabcdabcdabcdabcd"…
        (split turn)
        "#);
    }

    #[test]
    fn custom_messages_and_branch_summaries_are_cut_points_and_turn_starts() {
        let path = PathBuilder::new()
            .user("Turn 1")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(300))
            .custom_message("extension note")
            .user(&words(10))
            .build();
        insta::assert_snapshot!(cut(&path, 0, 100), @r#"
          e1 user "Turn 1"
          e2 assistant "reading" [read]
          e3 toolResult "abcdabcdabcdabcdabcd"…
        ✂ e4 custom_message "extension note"
          e5 user "abcdabcdabcdabcdabcd"…
        (split turn)
        "#);
        let path = PathBuilder::new()
            .user("Turn 1")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(300))
            .branch_summary("what happened elsewhere", None, false)
            .assistant(&words(10))
            .build();
        insta::assert_snapshot!(cut(&path, 0, 100), @r#"
          e1 user "Turn 1"
          e2 assistant "reading" [read]
          e3 toolResult "abcdabcdabcdabcdabcd"…
        ✂ e4 branch_summary "what happened elsewh"…
          e5 assistant "abcdabcdabcdabcdabcd"…
        (split turn)
        "#);
    }

    #[test]
    fn the_cut_never_moves_back_over_a_compaction_or_before_start() {
        let path = PathBuilder::new()
            .user(&words(100))
            .assistant(&words(100))
            .compaction("old summary", "e1", None)
            .model_change()
            .user(&words(10))
            .assistant(&words(10))
            .build();
        // The model change joins the kept part, the compaction does not. The cut entry is
        // not a user message, so pi looks for a turn start and finds the previous turn.
        insta::assert_snapshot!(cut(&path, 0, 20), @r#"
        → e1 user "abcdabcdabcdabcdabcd"…
          e2 assistant "abcdabcdabcdabcdabcd"…
          e3 compaction (keeps from e1)
        ✂ e4 model_change
          e5 user "abcdabcdabcdabcdabcd"…
          e6 assistant "abcdabcdabcdabcdabcd"…
        (split turn)
        "#);
        // Starting after the compaction, the budget is never reached: the cut is the
        // first cut point moved back to `start`.
        insta::assert_snapshot!(cut(&path, 3, 1000), @r#"
          e1 user "abcdabcdabcdabcdabcd"…
          e2 assistant "abcdabcdabcdabcdabcd"…
          e3 compaction (keeps from e1)
        ✂ e4 model_change
          e5 user "abcdabcdabcdabcdabcd"…
          e6 assistant "abcdabcdabcdabcdabcd"…
        "#);
    }

    #[test]
    fn nothing_to_cut_returns_start() {
        let path = PathBuilder::new().model_change().label("e1").build();
        assert_eq!(
            find_cut_point(&path, 0, path.len(), 10),
            CutPoint {
                first_kept_entry_index: 0,
                turn_start_index: None,
                is_split_turn: false
            }
        );
        assert_eq!(
            find_cut_point(&[] as &[SessionEntry], 0, 0, 10).first_kept_entry_index,
            0
        );
        // Out-of-range bounds are clamped instead of panicking.
        assert_eq!(find_cut_point(&path, 7, 3, 10).first_kept_entry_index, 2);
    }

    #[test]
    fn turn_start_search_accepts_bash_runs() {
        let path = PathBuilder::new()
            .user("a")
            .bash("ls", "x")
            .assistant("b")
            .build();
        assert_eq!(find_turn_start_index(&path, 2, 0), Some(1));
        assert_eq!(find_turn_start_index(&path, 2, 2), None);
        assert_eq!(find_turn_start_index(&path, 99, 0), Some(1));
    }

    fn build(kinds: &[(u8, u16)]) -> Vec<SessionEntry> {
        let mut b = PathBuilder::new();
        for &(kind, size) in kinds {
            let text = words(usize::from(size));
            b = match kind % 9 {
                0 => b.user(&text),
                1 => b.assistant(&text),
                2 => b.tool_call(&text, "read", read("f.rs")),
                3 => b.tool_result(&text),
                4 => b.bash("ls", &text),
                5 => b.model_change(),
                6 => b.custom_message(&text),
                7 => b.branch_summary(&text, None, false),
                _ => b.label("e1"),
            };
        }
        b.build()
    }

    proptest::proptest! {
        #[test]
        fn cut_invariants_hold_for_any_path(
            kinds in proptest::collection::vec((0u8..9, 0u16..400), 0..40),
            start_seed in 0usize..40,
            keep in 0u64..5000,
        ) {
            let path = build(&kinds);
            let start = start_seed.min(path.len());
            let c = find_cut_point(&path, start, path.len(), keep);
            let has_cut_point = path[start..].iter().any(is_valid_cut_point);
            if has_cut_point {
                proptest::prop_assert!(c.first_kept_entry_index < path.len());
                proptest::prop_assert!(c.first_kept_entry_index >= start);
                let first_kept = &path[c.first_kept_entry_index];
                let is_tool_result = matches!(first_kept, SessionEntry::Message(m) if matches!(m.message, AgentMessage::ToolResult(_)));
                proptest::prop_assert!(!is_tool_result);
            } else {
                proptest::prop_assert_eq!(c.first_kept_entry_index, start);
            }
            if let Some(t) = c.turn_start_index {
                proptest::prop_assert!(start <= t && t <= c.first_kept_entry_index);
            }
            proptest::prop_assert_eq!(c.is_split_turn, c.turn_start_index.is_some());
        }
    }
}
