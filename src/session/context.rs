//! Building the conversation a model sees from the path root → leaf (pi's
//! `buildSessionContext`).
//!
//! Rules, all from pi 0.73.1:
//! - the thinking level is the last `thinking_level_change` on the path (default `off`);
//! - the model is the last `model_change` or assistant message on the path;
//! - with a compaction on the path (the last one wins): its summary comes first, then the
//!   path entries from `firstKeptEntryId` up to the compaction, then everything after it;
//! - message-like entries are `message` (every role, as stored), `custom_message` (becomes
//!   a `custom` message) and `branch_summary` with a non-empty summary.
//!
//! Assistant messages that ended in `error` or `aborted` are kept here: pi drops them later,
//! in the provider layer (`transformMessages` in pi-ai), when a request is built. This
//! module does not turn messages into model input; that is `messages::convert_to_llm`.
//!
//! The algorithm reads entry kinds and ids from the cheap index and parses only the
//! entries it needs, so a long path with a compaction near the end costs little.

use serde_json::Value;

use crate::messages::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, iso_to_ms,
};
use crate::session::entry::{EntryId, SessionEntry};
use crate::session::tree::{EntryKind, MessageRole};

/// The model a context was last using.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextModel {
    pub provider: String,
    pub model_id: String,
}

/// What to send to a model for the current leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    pub messages: Vec<AgentMessage>,
    pub thinking_level: String,
    pub model: Option<ContextModel>,
}

impl SessionContext {
    /// The context before the first entry (pi: leaf `null`).
    pub fn empty() -> Self {
        SessionContext {
            messages: Vec::new(),
            thinking_level: "off".into(),
            model: None,
        }
    }
}

/// A path root → leaf, read lazily.
pub(crate) trait PathEntries {
    fn len(&self) -> usize;
    fn kind(&self, i: usize) -> EntryKind;
    /// Whether entry `i` has the id `id`.
    fn has_id(&self, i: usize, id: &str) -> bool;
    fn entry(&self, i: usize) -> &SessionEntry;
}

/// Builds the context of a path (see the module docs for the rules).
pub(crate) fn context_of_path(path: &impl PathEntries) -> SessionContext {
    let mut context = SessionContext::empty();
    let n = path.len();
    // Later entries win; an entry whose fields cannot be read is passed over.
    context.thinking_level = (0..n)
        .rev()
        .filter(|&i| path.kind(i) == EntryKind::ThinkingLevelChange)
        .find_map(|i| thinking_level(path.entry(i)))
        .unwrap_or_else(|| "off".into());
    context.model = (0..n)
        .rev()
        .filter(|&i| {
            matches!(
                path.kind(i),
                EntryKind::ModelChange | EntryKind::Message(MessageRole::Assistant)
            )
        })
        .find_map(|i| model_of(path.entry(i)));
    let compaction = (0..n)
        .rev()
        .filter(|&i| path.kind(i) == EntryKind::Compaction)
        .find_map(|i| compaction_of(path.entry(i)).map(|c| (i, c)));
    match compaction {
        Some((at, compaction)) => {
            context
                .messages
                .push(AgentMessage::CompactionSummary(CompactionSummaryMessage {
                    summary: compaction.summary,
                    tokens_before: compaction.tokens_before,
                    timestamp: iso_to_ms(path.entry(at).timestamp()),
                }));
            let first_kept = compaction.first_kept.as_deref();
            let start = (0..at)
                .find(|&i| first_kept.is_some_and(|id| path.has_id(i, id)))
                .unwrap_or(at);
            for i in (start..at).chain(at + 1..n) {
                push_message_like(&mut context.messages, path.kind(i), path.entry(i));
            }
        }
        None => {
            for i in 0..n {
                push_message_like(&mut context.messages, path.kind(i), path.entry(i));
            }
        }
    }
    context
}

/// Builds the context for `leaf` from a list of parsed entries (pi's exported
/// `buildSessionContext(entries, leafId)`). `None` means "before the first entry" and gives
/// an empty context; an id that is not in `entries` falls back to the last entry, as pi.
pub fn build_session_context(entries: &[SessionEntry], leaf: Option<&EntryId>) -> SessionContext {
    let Some(leaf) = leaf else {
        return SessionContext::empty();
    };
    let mut by_id = std::collections::HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        by_id.insert(entry.id(), i);
    }
    let Some(mut cur) = by_id
        .get(leaf.as_str())
        .copied()
        .or(entries.len().checked_sub(1))
    else {
        return SessionContext::empty();
    };
    let mut path = vec![cur];
    let mut seen = vec![false; entries.len()];
    seen[cur] = true;
    while let Some(&parent) = entries[cur].parent_id().and_then(|p| by_id.get(p)) {
        // A cycle (or a self parent) ends the walk instead of looping forever.
        if std::mem::replace(&mut seen[parent], true) {
            break;
        }
        path.push(parent);
        cur = parent;
    }
    path.reverse();
    context_of_path(&SlicePath { entries, path })
}

struct SlicePath<'a> {
    entries: &'a [SessionEntry],
    path: Vec<usize>,
}

impl PathEntries for SlicePath<'_> {
    fn len(&self) -> usize {
        self.path.len()
    }
    fn kind(&self, i: usize) -> EntryKind {
        EntryKind::of(&self.entries[self.path[i]])
    }
    fn has_id(&self, i: usize, id: &str) -> bool {
        self.entries[self.path[i]].id() == id
    }
    fn entry(&self, i: usize) -> &SessionEntry {
        &self.entries[self.path[i]]
    }
}

fn thinking_level(entry: &SessionEntry) -> Option<String> {
    match entry {
        SessionEntry::ThinkingLevelChange(e) => Some(e.thinking_level.clone()),
        SessionEntry::Unknown(v) => v
            .get("thinkingLevel")
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

fn model_of(entry: &SessionEntry) -> Option<ContextModel> {
    match entry {
        SessionEntry::ModelChange(e) => Some(ContextModel {
            provider: e.provider.clone(),
            model_id: e.model_id.clone(),
        }),
        SessionEntry::Message(m) => m.message.as_assistant().map(|a| ContextModel {
            provider: a.provider.clone(),
            model_id: a.model.clone(),
        }),
        SessionEntry::Unknown(v) => {
            let text =
                |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
            match v.get("message") {
                Some(m) => Some(ContextModel {
                    provider: text(m, "provider")?,
                    model_id: text(m, "model")?,
                }),
                None => Some(ContextModel {
                    provider: text(v, "provider")?,
                    model_id: text(v, "modelId")?,
                }),
            }
        }
        _ => None,
    }
}

struct CompactionView {
    summary: String,
    tokens_before: u64,
    first_kept: Option<String>,
}

fn compaction_of(entry: &SessionEntry) -> Option<CompactionView> {
    match entry {
        SessionEntry::Compaction(c) => Some(CompactionView {
            summary: c.summary.clone(),
            tokens_before: c.tokens_before,
            first_kept: Some(c.first_kept_entry_id.0.clone()),
        }),
        // A compaction without `firstKeptEntryId` (a v1 index that pointed nowhere) keeps
        // nothing from before it, as in pi.
        SessionEntry::Unknown(v) => Some(CompactionView {
            summary: v.get("summary").and_then(Value::as_str)?.to_string(),
            tokens_before: v.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0),
            first_kept: v
                .get("firstKeptEntryId")
                .and_then(Value::as_str)
                .map(str::to_string),
        }),
        _ => None,
    }
}

fn push_message_like(out: &mut Vec<AgentMessage>, kind: EntryKind, entry: &SessionEntry) {
    match entry {
        SessionEntry::Message(m) => out.push(m.message.clone()),
        SessionEntry::CustomMessage(c) => out.push(AgentMessage::Custom(CustomMessage {
            custom_type: c.custom_type.clone(),
            content: c.content.clone(),
            display: c.display,
            details: c.details.clone(),
            timestamp: iso_to_ms(&c.timestamp),
            extra: Default::default(),
        })),
        SessionEntry::BranchSummary(b) if !b.summary.is_empty() => {
            out.push(AgentMessage::BranchSummary(BranchSummaryMessage {
                summary: b.summary.clone(),
                from_id: b.from_id.clone(),
                timestamp: iso_to_ms(&b.timestamp),
            }))
        }
        // A message entry whose envelope we could not read still carries its message.
        SessionEntry::Unknown(v) if matches!(kind, EntryKind::Message(_)) => {
            if let Some(message) = v.get("message")
                && let Ok(message) = serde_json::from_value::<AgentMessage>(message.clone())
            {
                out.push(message);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(lines: &[&str]) -> Vec<SessionEntry> {
        lines
            .iter()
            .map(|l| SessionEntry::from_json_line(l).unwrap())
            .collect()
    }

    fn roles(context: &SessionContext) -> Vec<String> {
        context
            .messages
            .iter()
            .map(|m| match m {
                AgentMessage::User(u) => format!("user:{}", u.content.text()),
                AgentMessage::CompactionSummary(c) => format!("compaction:{}", c.summary),
                AgentMessage::BranchSummary(b) => format!("branch:{}", b.summary),
                other => other.role().to_string(),
            })
            .collect()
    }

    const HEAD: &str = r#""timestamp":"2026-01-01T00:00:00.000Z""#;

    fn user(id: &str, parent: &str, text: &str) -> String {
        let parent = if parent.is_empty() {
            "null".to_string()
        } else {
            format!("\"{parent}\"")
        };
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},{HEAD},"message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    }

    #[test]
    fn leaf_none_is_empty_and_an_unknown_leaf_falls_back_to_the_last_entry() {
        let lines = [user("a", "", "one"), user("b", "a", "two")];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(build_session_context(&e, None), SessionContext::empty());
        let ctx = build_session_context(&e, Some(&EntryId::from("nope")));
        assert_eq!(roles(&ctx), ["user:one", "user:two"]);
    }

    #[test]
    fn compaction_keeps_from_first_kept_then_everything_after() {
        let lines = [
            user("a", "", "one"),
            user("b", "a", "two"),
            user("c", "b", "three"),
            format!(
                r#"{{"type":"compaction","id":"k","parentId":"c",{HEAD},"summary":"S","firstKeptEntryId":"b","tokensBefore":9}}"#
            ),
            user("d", "k", "four"),
            format!(
                r#"{{"type":"branch_summary","id":"e","parentId":"d",{HEAD},"fromId":"d","summary":""}}"#
            ),
            format!(
                r#"{{"type":"custom_message","customType":"x","content":"hi","display":false,"id":"f","parentId":"e",{HEAD}}}"#
            ),
        ];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("f")));
        assert_eq!(
            roles(&ctx),
            [
                "compaction:S",
                "user:two",
                "user:three",
                "user:four",
                "custom"
            ]
        );
    }

    #[test]
    fn model_comes_from_the_last_model_change_or_assistant_and_thinking_from_the_last_change() {
        let lines = [
            format!(
                r#"{{"type":"model_change","id":"a","parentId":null,{HEAD},"provider":"p1","modelId":"m1"}}"#
            ),
            format!(
                r#"{{"type":"thinking_level_change","id":"b","parentId":"a",{HEAD},"thinkingLevel":"high"}}"#
            ),
            format!(
                r#"{{"type":"message","id":"c","parentId":"b",{HEAD},"message":{{"role":"assistant","content":[],"provider":"p2","model":"m2","stopReason":"error","timestamp":1}}}}"#
            ),
        ];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("c")));
        assert_eq!(ctx.thinking_level, "high");
        assert_eq!(
            ctx.model,
            Some(ContextModel {
                provider: "p2".into(),
                model_id: "m2".into()
            })
        );
        assert_eq!(
            ctx.messages.len(),
            1,
            "error turns are kept here, dropped by the provider layer"
        );
    }

    #[test]
    fn a_parent_cycle_ends_the_walk() {
        let lines = [user("a", "b", "one"), user("b", "a", "two")];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("b")));
        assert_eq!(roles(&ctx), ["user:one", "user:two"]);
    }
}
