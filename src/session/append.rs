//! Adding entries to a session. Every append creates a child of the current leaf, moves the
//! leaf to it and returns its id (pi's `appendXXX` methods).
//!
//! Lines are written in pi's exact shape, field order included (`custom` and
//! `custom_message` put `id`, `parentId`, `timestamp` last, as pi does). An append either
//! fully happens or not at all: the line is written first (when the session is on disk and
//! has a user or assistant message) and the in-memory tree changes only if that worked.
//! Before the first user or assistant message nothing is written (pi 1.6's lazy creation);
//! the first one flushes every buffered line in a single write.

use serde::Serialize;
use serde_json::Value;

use crate::ai::message::{Extra, UserContent};
use crate::messages::AgentMessage;
use crate::session::clock::now_iso;
use crate::session::entry::{
    BranchSummaryEntry, CompactionEntry, CustomEntry, CustomMessageEntry, EntryId, LabelEntry,
    MessageEntry, ModelChangeEntry, SessionEntry, SessionInfoEntry, ThinkingLevelChangeEntry,
};
use crate::session::error::{Result, SessionError};
use crate::session::manager::SessionManager;
use crate::session::tree::{EntryKind, MessageRole, normalize_name};

/// `custom` as pi writes it: the envelope fields come last.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    custom_type: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a Value>,
    id: &'a EntryId,
    parent_id: Option<&'a EntryId>,
    timestamp: &'a str,
}

/// `custom_message` as pi writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CustomMessageLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    custom_type: &'a str,
    content: &'a UserContent,
    display: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a Value>,
    id: &'a EntryId,
    parent_id: Option<&'a EntryId>,
    timestamp: &'a str,
}

/// The id, parent and time of a new entry.
#[derive(Clone)]
pub(crate) struct Envelope {
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub timestamp: String,
}

impl SessionManager {
    fn check_writable(&self) -> Result<()> {
        match &self.read_only {
            Some(reason) => Err(SessionError::ReadOnly {
                path: self
                    .session_file()
                    .map(|p| p.to_path_buf())
                    .unwrap_or_default(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Appends one entry built by `build` as a child of the leaf.
    fn append_with(
        &mut self,
        kind: EntryKind,
        build: impl FnOnce(&Envelope) -> (String, SessionEntry),
    ) -> Result<EntryId> {
        let preferred = self.preferred_id.take();
        self.check_writable()?;
        let index = &self.index;
        let preferred =
            preferred.filter(|id| !id.as_str().is_empty() && index.lookup(id.as_str()).is_none());
        let id = match preferred {
            Some(id) => id,
            None => self
                .ids
                .entry_id(|candidate| index.lookup(candidate).is_some()),
        };
        let envelope = Envelope {
            id,
            parent_id: self.leaf.map(|l| self.index.id_of(l)),
            timestamp: now_iso(),
        };
        let (line, entry) = build(&envelope);
        if let Some(disk) = self.disk.as_mut()
            && (self.index.has_conversation || kind.is_conversation())
        {
            disk.write_pending(&self.store, Some(&line))?;
        }
        let line = self.store.push(line);
        let idx = self.index.push(
            envelope.id.clone(),
            self.leaf,
            kind,
            &envelope.timestamp,
            line,
            entry,
        );
        self.set_leaf(Some(idx));
        Ok(envelope.id)
    }

    /// Makes the next append use `id` (when no entry has it yet): entries an extension
    /// built with ids it chose itself (pi's `newSession({setup})`, where the
    /// SessionManager hands out ids at once) keep them.
    pub fn prefer_next_id(&mut self, id: EntryId) {
        self.preferred_id = Some(id);
    }

    /// Appends a typed entry whose own serialization is already in pi's field order.
    fn append_entry(
        &mut self,
        kind: EntryKind,
        make: impl FnOnce(Envelope) -> SessionEntry,
    ) -> Result<EntryId> {
        self.append_with(kind, |env| {
            let entry = make(env.clone());
            (entry.to_json_line(), entry)
        })
    }

    /// Appends a conversation message (user, assistant, tool result, bash execution,
    /// custom). Summaries are not messages: use [`SessionManager::append_compaction`] and
    /// [`SessionManager::branch_with_summary`].
    pub fn append_message(&mut self, message: AgentMessage) -> Result<EntryId> {
        let kind = EntryKind::Message(MessageRole::from_role(message.role()));
        self.append_entry(kind, |env| {
            SessionEntry::Message(MessageEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                message,
                extra: Extra::new(),
            })
        })
    }

    pub fn append_thinking_level_change(&mut self, thinking_level: &str) -> Result<EntryId> {
        self.append_entry(EntryKind::ThinkingLevelChange, |env| {
            SessionEntry::ThinkingLevelChange(ThinkingLevelChangeEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                thinking_level: thinking_level.to_string(),
                extra: Extra::new(),
            })
        })
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<EntryId> {
        self.append_entry(EntryKind::ModelChange, |env| {
            SessionEntry::ModelChange(ModelChangeEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                provider: provider.to_string(),
                model_id: model_id.to_string(),
                extra: Extra::new(),
            })
        })
    }

    /// Records a compaction: from now on the context starts with `summary`, then the path
    /// from `first_kept_entry_id`.
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &EntryId,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<EntryId> {
        self.append_entry(EntryKind::Compaction, |env| {
            SessionEntry::Compaction(CompactionEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                summary: summary.to_string(),
                first_kept_entry_id: first_kept_entry_id.clone(),
                tokens_before,
                details,
                from_hook,
                extra: Extra::new(),
            })
        })
    }

    /// Extension state, never part of the context.
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<EntryId> {
        self.append_with(EntryKind::Custom, |env| {
            let line = CustomLine {
                kind: "custom",
                custom_type,
                data: data.as_ref(),
                id: &env.id,
                parent_id: env.parent_id.as_ref(),
                timestamp: &env.timestamp,
            };
            let text = serde_json::to_string(&line).unwrap_or_default();
            let entry = SessionEntry::Custom(CustomEntry {
                id: env.id.clone(),
                parent_id: env.parent_id.clone(),
                timestamp: env.timestamp.clone(),
                custom_type: custom_type.to_string(),
                data,
                extra: Extra::new(),
            });
            (text, entry)
        })
    }

    /// An extension message that is part of the context (sent as a user message).
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: UserContent,
        display: bool,
        details: Option<Value>,
    ) -> Result<EntryId> {
        self.append_with(EntryKind::CustomMessage, |env| {
            let line = CustomMessageLine {
                kind: "custom_message",
                custom_type,
                content: &content,
                display,
                details: details.as_ref(),
                id: &env.id,
                parent_id: env.parent_id.as_ref(),
                timestamp: &env.timestamp,
            };
            let text = serde_json::to_string(&line).unwrap_or_default();
            let entry = SessionEntry::CustomMessage(CustomMessageEntry {
                id: env.id.clone(),
                parent_id: env.parent_id.clone(),
                timestamp: env.timestamp.clone(),
                custom_type: custom_type.to_string(),
                content,
                display,
                details,
                extra: Extra::new(),
            });
            (text, entry)
        })
    }

    /// Sets the label of `target` or, with `None` (or an empty label), clears it: a cleared
    /// label is written without a `label` key, as pi does.
    pub fn append_label_change(
        &mut self,
        target: &EntryId,
        label: Option<&str>,
    ) -> Result<EntryId> {
        if self.index.lookup(target.as_str()).is_none() {
            return Err(SessionError::EntryNotFound(target.clone()));
        }
        let label = label.filter(|l| !l.is_empty()).map(str::to_string);
        let applied = label.clone();
        let id = self.append_entry(EntryKind::Label, |env| {
            SessionEntry::Label(LabelEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                target_id: target.clone(),
                label,
                extra: Extra::new(),
            })
        })?;
        let timestamp = self
            .entry(&id)
            .map(|e| e.timestamp().to_string())
            .unwrap_or_default();
        self.index
            .apply_label(target.as_str(), applied.as_deref(), &timestamp);
        Ok(id)
    }

    /// Names the session (trimmed; an empty name clears it).
    pub fn append_session_info(&mut self, name: &str) -> Result<EntryId> {
        let name = name.trim().to_string();
        let id = self.append_entry(EntryKind::SessionInfo, |env| {
            SessionEntry::SessionInfo(SessionInfoEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                name: Some(name.clone()),
                extra: Extra::new(),
            })
        })?;
        self.index.session_name = normalize_name(Some(&name));
        Ok(id)
    }

    /// Moves the leaf to `from` (or before the first entry for `None`) and appends a
    /// `branch_summary` there. Its `fromId` is `from`, or `"root"` — what pi 0.73.1 writes.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&EntryId>,
        summary: &str,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<EntryId> {
        let target = match from {
            Some(id) => Some(
                self.index
                    .lookup(id.as_str())
                    .ok_or_else(|| SessionError::EntryNotFound(id.clone()))?,
            ),
            None => None,
        };
        self.check_writable()?;
        let previous_leaf = self.leaf;
        self.set_leaf(target);
        let from_id = from.map_or_else(|| "root".to_string(), |id| id.0.clone());
        let result = self.append_entry(EntryKind::BranchSummary, |env| {
            SessionEntry::BranchSummary(BranchSummaryEntry {
                id: env.id,
                parent_id: env.parent_id,
                timestamp: env.timestamp,
                from_id,
                summary: summary.to_string(),
                details,
                from_hook,
                extra: Extra::new(),
            })
        });
        if result.is_err() {
            self.set_leaf(previous_leaf);
        }
        result
    }
}
