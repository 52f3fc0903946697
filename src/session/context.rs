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

use std::collections::HashMap;

use serde_json::Value;

use crate::ai::message::UserContent;
use crate::messages::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, SystemMessage,
    SystemState, iso_to_ms,
};
use crate::session::entry::{ContextEditEntry, EntryId, SessionEntry};
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
    /// The prompt and tools the system messages of this context describe (`None` for a
    /// session pi 1.6 never wrote to).
    pub fn system_state(&self) -> Option<SystemState> {
        SystemState::replay(self.messages.iter().filter_map(AgentMessage::as_system))
    }

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
    // The selected entries: with a compaction, the compaction itself, then the kept
    // entries before it (system messages there are superseded by its checkpoint), then
    // everything after it.
    let selected: Vec<usize> = match &compaction {
        Some((at, compaction)) => {
            let at = *at;
            let first_kept = compaction.first_kept.as_deref();
            let start = (0..at)
                .find(|&i| first_kept.is_some_and(|id| path.has_id(i, id)))
                .unwrap_or(at);
            std::iter::once(at)
                .chain(
                    (start..at)
                        .filter(|&i| path.kind(i) != EntryKind::Message(MessageRole::System)),
                )
                .chain(at + 1..n)
                .collect()
        }
        None => (0..n).collect(),
    };
    // The latest `context_edit` of each target among the selected entries.
    let mut edits: HashMap<&str, &ContextEditEntry> = HashMap::new();
    for &i in &selected {
        if path.kind(i) == EntryKind::ContextEdit
            && let SessionEntry::ContextEdit(edit) = path.entry(i)
        {
            edits.insert(edit.target_id.as_str(), edit);
        }
    }
    for (position, &i) in selected.iter().enumerate() {
        let entry = path.entry(i);
        let mut messages = Vec::new();
        match &compaction {
            Some((at, c)) if *at == i && position == 0 => {
                if let Some(system) = &c.system_message {
                    messages.push(AgentMessage::System(system.clone()));
                }
                messages.push(AgentMessage::CompactionSummary(CompactionSummaryMessage {
                    summary: c.summary.clone(),
                    tokens_before: c.tokens_before,
                    timestamp: iso_to_ms(entry.timestamp()),
                }));
            }
            // An older compaction inside the kept range contributes nothing.
            _ => push_message_like(&mut messages, path.kind(i), entry),
        }
        match edits.get(entry.id()) {
            None => context.messages.extend(messages),
            Some(edit) => match edit.replacement_content() {
                None => {}
                Some(content) => context
                    .messages
                    .extend(messages.into_iter().map(|m| replace_content(m, content))),
            },
        }
    }
    context
}

/// A message with its content replaced by a `context_edit` (user, assistant, toolResult
/// and custom messages; others are kept). A string given for an assistant message or a
/// tool result becomes one text block. Content that does not fit the role keeps the
/// original.
fn replace_content(message: AgentMessage, content: &Value) -> AgentMessage {
    fn blocks<T: serde::de::DeserializeOwned>(content: &Value) -> Option<Vec<T>> {
        let value = match content {
            Value::String(text) => serde_json::json!([{"type": "text", "text": text}]),
            other => other.clone(),
        };
        serde_json::from_value(value).ok()
    }
    let user = |content: &Value| serde_json::from_value::<UserContent>(content.clone()).ok();
    match message {
        AgentMessage::User(mut m) => {
            if let Some(c) = user(content) {
                m.content = c;
            }
            AgentMessage::User(m)
        }
        AgentMessage::Custom(mut m) => {
            if let Some(c) = user(content) {
                m.content = c;
            }
            AgentMessage::Custom(m)
        }
        AgentMessage::Assistant(mut m) => {
            if let Some(c) = blocks(content) {
                m.content = c;
            }
            AgentMessage::Assistant(m)
        }
        AgentMessage::ToolResult(mut m) => {
            if let Some(c) = blocks(content) {
                m.content = c;
            }
            AgentMessage::ToolResult(m)
        }
        other => other,
    }
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
    /// pi 1.6's checkpoint of the prompt and tools at the compaction (unreadable ones are
    /// left out; the load warns about them).
    system_message: Option<SystemMessage>,
}

fn checkpoint(value: Option<&Value>) -> Option<SystemMessage> {
    serde_json::from_value::<SystemMessage>(value?.clone())
        .ok()
        .filter(SystemMessage::is_well_formed)
}

fn compaction_of(entry: &SessionEntry) -> Option<CompactionView> {
    match entry {
        SessionEntry::Compaction(c) => Some(CompactionView {
            summary: c.summary.clone(),
            tokens_before: c.tokens_before,
            first_kept: Some(c.first_kept_entry_id.0.clone()),
            system_message: checkpoint(c.extra.get("systemMessage")),
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
            system_message: checkpoint(v.get("systemMessage")),
        }),
        _ => None,
    }
}

fn push_message_like(out: &mut Vec<AgentMessage>, kind: EntryKind, entry: &SessionEntry) {
    match entry {
        // A malformed system message is left out (the load warns about it).
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::System(system) if !system.is_well_formed() => {}
            message => out.push(message.clone()),
        },
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

    fn system(id: &str, parent: &str, sections: &str, extra: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}",{HEAD},"message":{{"role":"system","content":"","sections":{sections}{extra},"timestamp":1}}}}"#
        )
    }

    fn assistant(id: &str, parent: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}",{HEAD},"message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"openai-completions","provider":"p","model":"m","usage":{{}},"stopReason":"stop","timestamp":1}}}}"#
        )
    }

    #[test]
    fn context_edits_replace_or_omit_their_target_and_the_latest_wins() {
        let lines = [
            user("a", "", "one"),
            assistant("b", "a", "long failed answer"),
            user("c", "b", "two"),
            assistant("d", "c", "answer"),
            format!(
                r#"{{"type":"context_edit","id":"e1","parentId":"d",{HEAD},"targetId":"b","replacement":{{"content":"first edit"}}}}"#
            ),
            format!(
                r#"{{"type":"context_edit","id":"e2","parentId":"e1",{HEAD},"targetId":"b","replacement":{{"content":"short"}}}}"#
            ),
            format!(
                r#"{{"type":"context_edit","id":"e3","parentId":"e2",{HEAD},"targetId":"c","replacement":null}}"#
            ),
            format!(
                r#"{{"type":"usage","id":"u","parentId":"e3",{HEAD},"kind":"cache_warm","provider":"p","model":"m","usage":{{"input":5,"cost":{{"total":0.5}}}}}}"#
            ),
            user("f", "u", "three"),
        ];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(e.iter().all(|e| !matches!(e, SessionEntry::Unknown(_))));
        let ctx = build_session_context(&e, Some(&EntryId::from("f")));
        let texts: Vec<String> = ctx
            .messages
            .iter()
            .map(|m| match m {
                AgentMessage::User(u) => format!("user:{}", u.content.text()),
                AgentMessage::Assistant(a) => format!("assistant:{}", a.text()),
                other => other.role().to_string(),
            })
            .collect();
        assert_eq!(
            texts,
            [
                "user:one",
                "assistant:short",
                "assistant:answer",
                "user:three"
            ]
        );
        // Before the edits, on the same path, the original content is there.
        let before = build_session_context(&e, Some(&EntryId::from("d")));
        assert_eq!(before.messages.len(), 4);
    }

    #[test]
    fn compaction_checkpoint_leads_and_supersedes_kept_system_messages() {
        let lines = [
            system("s0", "", r#"{"preamble":"old"}"#, ""),
            user("a", "s0", "one"),
            system("s1", "a", r#"{"addendum":"kept-range patch"}"#, ""),
            user("b", "s1", "two"),
            format!(
                r#"{{"type":"compaction","id":"k","parentId":"b",{HEAD},"summary":"S","firstKeptEntryId":"a","tokensBefore":9,
                "systemMessage":{{"role":"system","content":"","sections":{{"preamble":"checkpoint"}},"toolsAdded":[{{"name":"read","description":"r","parameters":{{}}}}],"timestamp":2}}}}"#
            ),
            system(
                "s2",
                "k",
                r#"{"cwd":"here"}"#,
                r#","toolsRemoved":[{"name":"read"}]"#,
            ),
            user("c", "s2", "three"),
        ];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("c")));
        assert_eq!(
            roles(&ctx),
            [
                "system",
                "compaction:S",
                "user:one",
                "user:two",
                "system",
                "user:three"
            ]
        );
        let state = ctx.system_state().expect("state");
        assert_eq!(state.prompt(), "checkpoint\n\nhere");
        assert!(state.tools.is_empty());
        let before = build_session_context(&e, Some(&EntryId::from("b")));
        let state = before.system_state().expect("state");
        assert_eq!(state.prompt(), "old\n\nkept-range patch");
    }

    #[test]
    fn a_malformed_system_message_is_left_out_and_later_roots_start_their_own_path() {
        let lines = [
            system("s0", "", r#"{"preamble":"good"}"#, ""),
            system("s1", "s0", r#"{"preamble":42}"#, ""),
            user("a", "s1", "one"),
            user("r", "", "second root"),
        ];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("a")));
        assert_eq!(roles(&ctx), ["system", "user:one"]);
        assert_eq!(ctx.system_state().expect("state").prompt(), "good");
        let ctx = build_session_context(&e, Some(&EntryId::from("r")));
        assert_eq!(roles(&ctx), ["user:second root"]);
        assert!(ctx.system_state().is_none());
    }

    #[test]
    fn a_parent_cycle_ends_the_walk() {
        let lines = [user("a", "b", "one"), user("b", "a", "two")];
        let e = entries(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let ctx = build_session_context(&e, Some(&EntryId::from("b")));
        assert_eq!(roles(&ctx), ["user:one", "user:two"]);
    }
}
