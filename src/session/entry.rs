//! Session file lines: the header and every entry type of pi's format v3.
//!
//! A session file is JSONL. Line 1 is a [`SessionHeader`]; every other line is a
//! [`SessionEntry`] linked to its parent by `parentId`, which makes the file a tree.
//! Field names are pi's (camelCase); every struct keeps unknown fields in `extra`, and an
//! entry of a type we do not know is kept whole as [`SessionEntry::Unknown`], so files
//! written by a newer pi survive being read and copied by us.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ai::message::{Extra, UserContent};
use crate::messages::AgentMessage;

/// The format version we write.
pub const CURRENT_SESSION_VERSION: u32 = 3;

/// An entry id: 8 lowercase hex characters for entries we create; any string when read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct EntryId(pub String);

impl EntryId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// Lets id-keyed maps be queried with a `&str` (the derived `Hash`/`Eq` match `str`'s).
impl std::borrow::Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for EntryId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for EntryId {
    fn from(s: &str) -> Self {
        EntryId(s.to_string())
    }
}

impl From<String> for EntryId {
    fn from(s: String) -> Self {
        EntryId(s)
    }
}

impl PartialEq<str> for EntryId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for EntryId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// First line of a session file. Not part of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    /// Absent in v1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// A UUID (pi 0.73 writes UUIDv7).
    pub id: String,
    pub timestamp: String,
    #[serde(default)]
    pub cwd: String,
    /// Path of the session this one was forked or cloned from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// Legacy fields (v1 `provider`, `modelId`, `thinkingLevel`, `branchedFrom`) and
    /// anything newer.
    #[serde(flatten)]
    pub extra: Extra,
}

impl SessionHeader {
    pub fn new(id: String, timestamp: String, cwd: String, parent_session: Option<String>) -> Self {
        Self {
            kind: "session".into(),
            version: Some(CURRENT_SESSION_VERSION),
            id,
            timestamp,
            cwd,
            parent_session,
            extra: Extra::new(),
        }
    }

    /// The format version, 1 when the field is missing.
    pub fn version(&self) -> u32 {
        self.version.unwrap_or(1)
    }
}

/// `message`: one conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub message: AgentMessage,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `thinking_level_change`: sets the thinking level from here on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub thinking_level: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `model_change`: sets the model from here on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub provider: String,
    pub model_id: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `compaction`: everything before `first_kept_entry_id` on this path is replaced by
/// `summary` in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub summary: String,
    pub first_kept_entry_id: EntryId,
    #[serde(default)]
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}` for our own compactions; anything for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `branch_summary`: what happened on a branch the user navigated away from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    /// pi 0.73 writes the id of the entry navigated to (the summary's parent), or
    /// `"root"` when navigating to before the first entry.
    pub from_id: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `custom`: extension state; never part of the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub custom_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `custom_message`: an extension message that is part of the context (as a user message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub custom_type: String,
    pub content: UserContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `label`: sets (or, without `label`, clears) the bookmark of `target_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub target_id: EntryId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `session_info`: session metadata; the latest non-empty `name` is the session's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfoEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `context_edit` (pi 1.6): replaces the content of an earlier user, assistant,
/// toolResult or custom message in the model context (`replacement: {content}`), or leaves
/// it out (`replacement: null`). Branch-relative; the latest edit of a target wins. The
/// target entry itself is never changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextEditEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    pub target_id: EntryId,
    /// `None` is `null`: omit the target. Otherwise `{content}`, a string or blocks.
    #[serde(default)]
    pub replacement: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ContextEditEntry {
    /// The replacement content, or `None` when the target is left out.
    pub fn replacement_content(&self) -> Option<&Value> {
        self.replacement
            .as_ref()
            .map(|r| r.get("content").unwrap_or(&Value::Null))
    }
}

/// `usage` (pi 1.6): model usage that is not an assistant message (cache warming, ...).
/// No part of the context and hidden in `/tree`, but counted in the session's totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageEntry {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
    /// `cache_warm`, or any other kind a newer pi writes.
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub usage: crate::ai::message::Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One tree entry of a session file.
// Most entries are messages, so boxing the large variant would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionEntry {
    #[serde(rename = "message")]
    Message(MessageEntry),
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    #[serde(rename = "model_change")]
    ModelChange(ModelChangeEntry),
    #[serde(rename = "compaction")]
    Compaction(CompactionEntry),
    #[serde(rename = "branch_summary")]
    BranchSummary(BranchSummaryEntry),
    #[serde(rename = "custom")]
    Custom(CustomEntry),
    #[serde(rename = "custom_message")]
    CustomMessage(CustomMessageEntry),
    #[serde(rename = "label")]
    Label(LabelEntry),
    #[serde(rename = "session_info")]
    SessionInfo(SessionInfoEntry),
    #[serde(rename = "context_edit")]
    ContextEdit(ContextEditEntry),
    #[serde(rename = "usage")]
    Usage(UsageEntry),
    /// An entry type we do not know, or a known type whose fields we could not read:
    /// kept verbatim (it still has a place in the tree if it has `id`/`parentId`).
    #[serde(untagged)]
    Unknown(Value),
}

macro_rules! each_known {
    ($self:expr, $e:ident => $body:expr, $unknown:ident => $ubody:expr) => {
        match $self {
            SessionEntry::Message($e) => $body,
            SessionEntry::ThinkingLevelChange($e) => $body,
            SessionEntry::ModelChange($e) => $body,
            SessionEntry::Compaction($e) => $body,
            SessionEntry::BranchSummary($e) => $body,
            SessionEntry::Custom($e) => $body,
            SessionEntry::CustomMessage($e) => $body,
            SessionEntry::Label($e) => $body,
            SessionEntry::SessionInfo($e) => $body,
            SessionEntry::ContextEdit($e) => $body,
            SessionEntry::Usage($e) => $body,
            SessionEntry::Unknown($unknown) => $ubody,
        }
    };
}

impl SessionEntry {
    /// pi's `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            SessionEntry::Message(_) => "message",
            SessionEntry::ThinkingLevelChange(_) => "thinking_level_change",
            SessionEntry::ModelChange(_) => "model_change",
            SessionEntry::Compaction(_) => "compaction",
            SessionEntry::BranchSummary(_) => "branch_summary",
            SessionEntry::Custom(_) => "custom",
            SessionEntry::CustomMessage(_) => "custom_message",
            SessionEntry::Label(_) => "label",
            SessionEntry::SessionInfo(_) => "session_info",
            SessionEntry::ContextEdit(_) => "context_edit",
            SessionEntry::Usage(_) => "usage",
            SessionEntry::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The entry id (empty for an unknown entry without one).
    pub fn id(&self) -> &str {
        each_known!(self, e => e.id.as_str(), v => v.get("id").and_then(Value::as_str).unwrap_or(""))
    }

    pub fn parent_id(&self) -> Option<&str> {
        each_known!(self, e => e.parent_id.as_ref().map(EntryId::as_str),
            v => v.get("parentId").and_then(Value::as_str))
    }

    pub fn timestamp(&self) -> &str {
        each_known!(self, e => e.timestamp.as_str(),
            v => v.get("timestamp").and_then(Value::as_str).unwrap_or(""))
    }

    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            SessionEntry::Message(m) => Some(&m.message),
            _ => None,
        }
    }

    /// Parses one JSONL line. Never fails on an unknown type: see [`SessionEntry::Unknown`].
    pub fn from_json_line(line: &str) -> serde_json::Result<SessionEntry> {
        serde_json::from_str(line)
    }

    /// Serializes to one JSONL line (without the newline).
    pub fn to_json_line(&self) -> String {
        // Serializing these types cannot fail: all map keys are strings.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_entry_type_of_the_corpus_and_keeps_null_parent() {
        let lines = [
            r#"{"type":"model_change","id":"d09d56f5","parentId":null,"timestamp":"2026-11-22T03:39:21.560Z","provider":"mock","modelId":"mock-model"}"#,
            r#"{"type":"thinking_level_change","id":"a62124a9","parentId":"d09d56f5","timestamp":"2026-11-22T03:39:21.560Z","thinkingLevel":"off"}"#,
            r#"{"type":"label","id":"aa","parentId":"a62124a9","timestamp":"t","targetId":"d09d56f5"}"#,
            r#"{"type":"custom","customType":"x","data":{"n":1},"id":"bb","parentId":"aa","timestamp":"t"}"#,
        ];
        for line in lines {
            let e = SessionEntry::from_json_line(line).expect("parse");
            assert!(!matches!(e, SessionEntry::Unknown(_)), "{line}");
            let a: Value = serde_json::from_str(line).expect("v");
            let b: Value = serde_json::from_str(&e.to_json_line()).expect("v");
            assert_eq!(a, b);
        }
    }

    #[test]
    fn unknown_entry_types_survive() {
        let line = r#"{"type":"hologram","id":"abcd1234","parentId":null,"timestamp":"t","z":[1]}"#;
        let e = SessionEntry::from_json_line(line).expect("parse");
        assert!(matches!(e, SessionEntry::Unknown(_)));
        assert_eq!(e.id(), "abcd1234");
        assert_eq!(e.type_name(), "hologram");
        assert_eq!(e.to_json_line(), line);
    }
}
