//! Moving around and between sessions: `/tree` navigation (optionally leaving a summary of
//! the abandoned branch), `/fork` and `/clone` (new files holding a path of this one),
//! `/new` and `/resume`.

use serde::Serialize;

use super::{AgentSession, State};
use crate::ai::model::ThinkingLevel;
use crate::compaction::{
    BranchSummarySettings, CompactionError, collect_entries_for_branch_summary,
    generate_branch_summary,
};
use crate::core::events::SessionEvent;
use crate::messages::AgentMessage;
use crate::session::SessionManager;
use crate::session::entry::{EntryId, SessionEntry};

/// How to leave the current branch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavigateOptions {
    /// Summarize the abandoned branch into a `branch_summary` entry.
    pub summarize: bool,
    /// Extra focus for the summary (or the whole prompt with `replace_instructions`).
    pub custom_instructions: Option<String>,
    pub replace_instructions: bool,
    /// Label to attach (to the summary entry, or to the target without a summary).
    pub label: Option<String>,
}

/// What a navigation did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResult {
    /// Text for the editor (navigating to a user message puts it back for editing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    pub cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_entry_id: Option<String>,
}

/// What `/fork` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkResult {
    /// The selected message's text (for the editor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub cancelled: bool,
}

fn user_text(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::User(u) => {
            let blocks = u.content.to_blocks();
            Some(
                blocks
                    .iter()
                    .filter_map(|b| match b {
                        crate::ai::message::UserBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect::<String>(),
            )
        }
        _ => None,
    }
}

impl State {
    /// Replaces the session with an empty one (written once the model first answers)
    /// that starts, like a session begun from the command line, with the model and
    /// thinking level in use — pi writes both.
    fn start_new_session(&mut self, parent_session: Option<String>) -> Result<(), String> {
        self.session.new_session(None, parent_session);
        if let Some(model) = self.model.clone() {
            self.session
                .append_model_change(&model.provider, &model.id)
                .map_err(|e| e.to_string())?;
        }
        let level = self.thinking;
        self.session
            .append_thinking_level_change(level.as_str())
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

impl AgentSession {
    /// Moves the leaf to `target` (pi's `navigateTree`). Selecting a user message moves to
    /// its parent and returns its text for the editor; selecting anything else moves to it.
    pub async fn navigate_tree(
        &self,
        target: &str,
        options: NavigateOptions,
    ) -> Result<NavigateResult, String> {
        let _op = self.inner.op_lock.lock().await;
        let cancel = self.new_cancel();
        let target_id = EntryId::from(target);
        let (abandoned, target_entry, reserve) = {
            let st = self.state();
            if st.session.leaf_id().map(EntryId::as_str) == Some(target) {
                return Ok(NavigateResult::default());
            }
            let target_entry = st
                .session
                .entry(&target_id)
                .cloned()
                .ok_or_else(|| format!("Entry {target} not found"))?;
            let old_path = st.session.path(None);
            let target_path = st.session.path(Some(&target_id));
            let branch = collect_entries_for_branch_summary(&old_path, &target_path);
            let abandoned: Vec<SessionEntry> =
                branch.entries.iter().map(|e| (*e).clone()).collect();
            (
                abandoned,
                target_entry,
                st.settings.branch_summary_reserve_tokens(),
            )
        };

        let mut summary = None;
        if options.summarize && !abandoned.is_empty() {
            let client = self.summary_client()?;
            let budget = BranchSummarySettings {
                reserve_tokens: reserve,
                ..BranchSummarySettings::default()
            }
            .token_budget(client.model.context_window);
            self.emit(SessionEvent::BranchSummaryStart);
            let result = generate_branch_summary(
                &abandoned,
                &client,
                budget,
                options.custom_instructions.as_deref(),
                options.replace_instructions,
                cancel.clone(),
            )
            .await;
            match result {
                Ok(r) => {
                    self.emit(SessionEvent::BranchSummaryEnd {
                        aborted: false,
                        error_message: None,
                    });
                    summary = Some(r);
                }
                Err(CompactionError::Cancelled(_)) => {
                    self.emit(SessionEvent::BranchSummaryEnd {
                        aborted: true,
                        error_message: None,
                    });
                    return Ok(NavigateResult {
                        cancelled: true,
                        ..NavigateResult::default()
                    });
                }
                Err(e) => {
                    let message = e.to_string();
                    self.emit(SessionEvent::BranchSummaryEnd {
                        aborted: false,
                        error_message: Some(message.clone()),
                    });
                    return Err(message);
                }
            }
            if cancel.is_cancelled() {
                return Ok(NavigateResult {
                    cancelled: true,
                    ..NavigateResult::default()
                });
            }
        }

        let (new_leaf, editor_text) = match &target_entry {
            SessionEntry::Message(m) if matches!(m.message, AgentMessage::User(_)) => {
                (m.parent_id.clone(), user_text(&m.message))
            }
            SessionEntry::CustomMessage(c) => (c.parent_id.clone(), Some(c.content.text())),
            other => (Some(EntryId::from(other.id())), None),
        };
        let mut result = NavigateResult {
            editor_text,
            ..NavigateResult::default()
        };
        {
            let mut st = self.state();
            let label = options.label.as_deref().filter(|l| !l.is_empty());
            if let Some(s) = &summary {
                let details = serde_json::json!({
                    "readFiles": s.read_files,
                    "modifiedFiles": s.modified_files,
                });
                let id = st
                    .session
                    .branch_with_summary(new_leaf.as_ref(), &s.summary, Some(details), Some(false))
                    .map_err(|e| e.to_string())?;
                if let Some(label) = label {
                    st.session
                        .append_label_change(&id, Some(label))
                        .map_err(|e| e.to_string())?;
                }
                result.summary_entry_id = Some(id.0);
            } else {
                match &new_leaf {
                    Some(id) => st.session.branch(id).map_err(|e| e.to_string())?,
                    None => st.session.reset_leaf(),
                }
                if let Some(label) = label {
                    st.session
                        .append_label_change(&target_id, Some(label))
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        self.reload_messages();
        self.emit(SessionEvent::ContextRebuilt);
        Ok(result)
    }

    /// Sets or clears (`None`) the label of an entry.
    pub fn set_label(&self, target: &str, label: Option<&str>) -> Result<(), String> {
        let mut st = self.state();
        st.session
            .append_label_change(&EntryId::from(target), label)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// User messages of the whole session, for the `/fork` selector (RPC `get_fork_messages`).
    pub fn fork_messages(&self) -> Vec<(String, String)> {
        let st = self.state();
        st.session
            .entries()
            .into_iter()
            .filter_map(|e| match e {
                SessionEntry::Message(m) => user_text(&m.message)
                    .filter(|t| !t.is_empty())
                    .map(|t| (m.id.0.clone(), t)),
                _ => None,
            })
            .collect()
    }

    /// `/fork`: a new session holding the path up to the selected user message's parent;
    /// the message's text is returned for the editor.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkResult, String> {
        let _op = self.inner.op_lock.lock().await;
        {
            let mut st = self.state();
            let entry = st
                .session
                .entry(&EntryId::from(entry_id))
                .cloned()
                .ok_or_else(|| "Invalid entry ID for forking".to_string())?;
            let SessionEntry::Message(m) = &entry else {
                return Err("Invalid entry ID for forking".into());
            };
            let Some(text) = user_text(&m.message) else {
                return Err("Invalid entry ID for forking".into());
            };
            match &m.parent_id {
                Some(parent) => {
                    st.session
                        .create_branched_session(parent)
                        .map_err(|e| e.to_string())?;
                }
                None => {
                    let parent_file = st.session.session_file().map(|p| p.display().to_string());
                    st.start_new_session(parent_file)?;
                }
            }
            drop(st);
            self.after_session_replaced(false);
            Ok(ForkResult {
                text: Some(text),
                cancelled: false,
            })
        }
    }

    /// `/clone`: a new session holding the current path, continuing from its leaf.
    pub async fn clone_session(&self) -> Result<(), String> {
        let _op = self.inner.op_lock.lock().await;
        {
            let mut st = self.state();
            match st.session.leaf_id().cloned() {
                Some(leaf) => {
                    st.session
                        .create_branched_session(&leaf)
                        .map_err(|e| e.to_string())?;
                }
                None => {
                    let parent_file = st.session.session_file().map(|p| p.display().to_string());
                    st.start_new_session(parent_file)?;
                }
            }
        }
        self.after_session_replaced(false);
        Ok(())
    }

    /// `/new`: an empty session in the same directory.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<(), String> {
        self.abort();
        let _op = self.inner.op_lock.lock().await;
        self.state().start_new_session(parent_session)?;
        self.after_session_replaced(false);
        Ok(())
    }

    /// `/resume` / RPC `switch_session`: opens another session file.
    pub async fn switch_session(&self, path: &std::path::Path) -> Result<(), String> {
        self.abort();
        let _op = self.inner.op_lock.lock().await;
        let manager = SessionManager::open(path, None).map_err(|e| e.to_string())?;
        self.state().session = manager;
        self.after_session_replaced(true);
        Ok(())
    }

    /// After the session manager changed: rebuild messages, optionally restore the model
    /// and thinking level recorded in the session, clear queues.
    fn after_session_replaced(&self, restore_model: bool) {
        let dropped = self.inner.queues.drain_all();
        let queue_changed = {
            let mut st = self.state();
            let had_texts = !st.queued_steering.is_empty() || !st.queued_follow_up.is_empty();
            st.queued_steering.clear();
            st.queued_follow_up.clear();
            st.pending_bash.clear();
            st.retry_attempt = 0;
            st.overflow_recovery_attempted = false;
            let context = st.session.build_session_context();
            st.messages = context.messages;
            if restore_model {
                if let Some(m) = &context.model
                    && let Some(model) = st.registry.find(&m.provider, &m.model_id).cloned()
                    && st.registry.has_configured_auth(&model)
                {
                    st.model = Some(model);
                }
                if let Some(level) = ThinkingLevel::parse(&context.thinking_level) {
                    st.thinking = match &st.model {
                        Some(m) => m.clamp_thinking(level),
                        None => level,
                    };
                }
            }
            had_texts || !dropped.is_empty()
        };
        // pi reports the queues only when they change (a fork or `/new` with nothing
        // queued emits no `queue_update`).
        if queue_changed {
            self.emit_queue_update();
        }
        self.emit(SessionEvent::SessionReplaced);
    }
}
