//! Moving around inside a session: `/tree` navigation (optionally leaving a summary of
//! the abandoned branch), labels, and the messages `/fork` offers. Moving between
//! sessions is `switching.rs`.

use std::collections::HashSet;

use serde::Serialize;

use super::{AgentSession, State};
use crate::compaction::{BranchSummarySettings, CompactionError, generate_branch_summary};
use crate::core::events::SessionEvent;
use crate::extensions::{EventName, TreePreparation};
use crate::messages::AgentMessage;
use crate::session::entry::{EntryId, SessionEntry};
use crate::session::tree::{EntryKind, MessageRole};

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
    /// Bring the files back to their state at the target (`docs/checkpoints.md`).
    pub restore_files: bool,
    /// Restore even over files changed outside the agent since their checkpoint.
    pub force: bool,
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
    /// What restoring the files did (with `restore_files`).
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub restore: Option<crate::core::checkpoints::RestoreReport>,
}

/// A branch summary about to be stored: written by the model or by an extension.
struct BranchSummaryText {
    text: String,
    details: Option<serde_json::Value>,
    from_extension: bool,
}

pub(super) fn user_text(message: &AgentMessage) -> Option<String> {
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

/// The leaf after navigating to `target` and the text for the editor: a user message (or
/// an extension's custom message) moves to its parent and goes back to the editor.
pub(super) fn leaf_after_navigation(target: &SessionEntry) -> (Option<EntryId>, Option<String>) {
    match target {
        SessionEntry::Message(m) if matches!(m.message, AgentMessage::User(_)) => {
            (m.parent_id.clone(), user_text(&m.message))
        }
        SessionEntry::CustomMessage(c) => (c.parent_id.clone(), Some(c.content.text())),
        other => (Some(EntryId::from(other.id())), None),
    }
}

impl State {
    /// Replaces the session with an empty one (written once the model first answers)
    /// that starts, like a session begun from the command line, with the model and
    /// thinking level in use — pi writes both.
    pub(super) fn start_new_session(
        &mut self,
        parent_session: Option<String>,
    ) -> Result<(), String> {
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
    /// Extensions see `session_before_tree` first (they may cancel, supply the summary, or
    /// change its instructions and the label) and `session_tree` after.
    pub async fn navigate_tree(
        &self,
        target: &str,
        options: NavigateOptions,
    ) -> Result<NavigateResult, String> {
        let _op = self.inner.op_lock.lock().await;
        let cancel = self.new_cancel();
        let target_id = EntryId::from(target);
        let (abandoned, target_entry, reserve, old_leaf, common_ancestor) = {
            let st = self.state();
            if st.session.leaf_id().map(EntryId::as_str) == Some(target) {
                return Ok(NavigateResult::default());
            }
            let target_entry = st
                .session
                .entry(&target_id)
                .cloned()
                .ok_or_else(|| format!("Entry {target} not found"))?;
            // The deepest common entry is found on ids; only the abandoned part of the
            // old path is parsed.
            let old_ids = st.session.path_ids(None);
            let target_ids = st.session.path_ids(Some(&target_id));
            let on_target: HashSet<&str> = target_ids.iter().map(EntryId::as_str).collect();
            let ancestor = old_ids
                .iter()
                .rposition(|id| on_target.contains(id.as_str()));
            let start = ancestor.map_or(0, |i| i + 1);
            let abandoned: Vec<SessionEntry> = st
                .session
                .path_tail(None, start)
                .into_iter()
                .cloned()
                .collect();
            (
                abandoned,
                target_entry,
                st.settings.branch_summary_reserve_tokens(),
                st.session.leaf_id().map(|id| id.0.clone()),
                ancestor.map(|i| old_ids[i].0.clone()),
            )
        };

        let (new_leaf, editor_text) = leaf_after_navigation(&target_entry);
        // Refuse before anything moves when files were changed outside the agent.
        let restore_plan = options
            .restore_files
            .then(|| self.restore_plan(new_leaf.as_ref()));
        if let Some(plan) = &restore_plan
            && !plan.conflicts.is_empty()
            && !options.force
        {
            return Err(format!(
                "{}: {} (restore with force to overwrite them; /undo-restore puts them back)",
                crate::core::checkpoints::RESTORE_CONFLICT_PREFIX,
                plan.conflicts.join(", ")
            ));
        }

        let mut options = options;
        let mut summary: Option<BranchSummaryText> = None;
        if let Some(host) = self
            .extension_host()
            .filter(|h| h.has_subscribers(EventName::SessionBeforeTree))
        {
            let preparation = TreePreparation {
                target_id: target.to_string(),
                old_leaf_id: old_leaf.clone(),
                common_ancestor_id: common_ancestor,
                entries_to_summarize: abandoned.clone(),
                user_wants_summary: options.summarize,
                custom_instructions: options.custom_instructions.clone(),
                replace_instructions: options.replace_instructions.then_some(true),
                label: options.label.clone(),
            };
            let decision = host.session_before_tree(&preparation, &cancel).await;
            if decision.cancel {
                return Ok(NavigateResult {
                    cancelled: true,
                    ..NavigateResult::default()
                });
            }
            if options.summarize
                && let Some(s) = decision.summary
            {
                summary = Some(BranchSummaryText {
                    text: s.summary,
                    details: s.details,
                    from_extension: true,
                });
            }
            if let Some(ci) = decision.custom_instructions {
                options.custom_instructions = Some(ci);
            }
            if let Some(replace) = decision.replace_instructions {
                options.replace_instructions = replace;
            }
            if let Some(label) = decision.label {
                options.label = Some(label);
            }
        }

        if options.summarize && !abandoned.is_empty() && summary.is_none() {
            self.refresh_oauth_if_due().await?;
            let (client, retries) =
                self.summary_client_for(crate::core::events::SummarizationSource::BranchSummary)?;
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
            retries.finish(self);
            match result {
                Ok(r) => {
                    self.emit(SessionEvent::BranchSummaryEnd {
                        aborted: false,
                        error_message: None,
                    });
                    summary = Some(BranchSummaryText {
                        details: Some(serde_json::json!({
                            "readFiles": r.read_files,
                            "modifiedFiles": r.modified_files,
                        })),
                        text: r.summary,
                        from_extension: false,
                    });
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

        let mut result = NavigateResult {
            editor_text,
            ..NavigateResult::default()
        };
        let (summary_entry, new_leaf_id) = {
            let mut st = self.state();
            let label = options.label.as_deref().filter(|l| !l.is_empty());
            let mut summary_entry = None;
            if let Some(s) = &summary {
                let id = st
                    .session
                    .branch_with_summary(
                        new_leaf.as_ref(),
                        &s.text,
                        s.details.clone(),
                        Some(s.from_extension),
                    )
                    .map_err(|e| e.to_string())?;
                if let Some(label) = label {
                    st.session
                        .append_label_change(&id, Some(label))
                        .map_err(|e| e.to_string())?;
                }
                if let Some(SessionEntry::BranchSummary(b)) = st.session.entry(&id) {
                    summary_entry = Some(b.clone());
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
            (summary_entry, st.session.leaf_id().map(|id| id.0.clone()))
        };
        if let Some(plan) = &restore_plan {
            result.restore = Some(self.apply_restore(plan)?);
        }
        self.reload_messages();
        self.restore_tools_from_transcript(false);
        self.emit(SessionEvent::ContextRebuilt);
        if let Some(host) = self.extension_host() {
            host.session_tree(
                new_leaf_id.as_deref(),
                old_leaf.as_deref(),
                summary_entry.as_ref(),
                summary.as_ref().map(|s| s.from_extension),
            );
        }
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

    /// How many message entries the session file holds, on every branch (pi's
    /// `/compact` refuses with fewer than two).
    pub fn message_entry_count(&self) -> usize {
        self.state()
            .session
            .count_entries(|kind| matches!(kind, EntryKind::Message(_)))
    }

    /// User messages of the whole session, for the `/fork` selector (RPC `get_fork_messages`).
    pub fn fork_messages(&self) -> Vec<(String, String)> {
        let st = self.state();
        let mut out = Vec::new();
        st.session.scan_entries(
            |kind| kind == EntryKind::Message(MessageRole::User),
            |e| {
                if let SessionEntry::Message(m) = e
                    && let Some(text) = user_text(&m.message).filter(|t| !t.is_empty())
                {
                    out.push((m.id.0.clone(), text));
                }
            },
        );
        out
    }
}
