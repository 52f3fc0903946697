//! Moving between sessions: `/fork` and `/clone` (new files holding a path of this one),
//! `/new` and `/resume`.
//!
//! Extensions are asked first (`session_before_fork` / `session_before_switch`, either
//! may cancel), get `session_shutdown` with the switch's reason while the old session is
//! still active (so what they store on the way lands in it), and `session_start` with the
//! same reason once the new session is in place. `targetSessionFile` is only known in
//! advance for `/resume`.

use std::path::Path;

use serde::Serialize;

use super::AgentSession;
use super::extensions::SESSION_SWITCH_CANCELLED;
use super::navigation::user_text;
use crate::ai::model::ThinkingLevel;
use crate::core::events::SessionEvent;
use crate::extensions::{
    ForkPosition, ModelSelectSource, SessionStartReason, ShutdownReason, SwitchReason,
};
use crate::session::SessionManager;
use crate::session::entry::{EntryId, SessionEntry};
use crate::session::refusal::{MissingCwd, read_only_refusal};

/// What `/fork` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkResult {
    /// The selected message's text (for the editor).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub cancelled: bool,
}

/// How the session manager changes in a switch.
enum Replacement {
    /// A new file holding the path up to `leaf` (`None`: an empty session whose header
    /// names the current file as its parent).
    Branch(Option<EntryId>),
    /// An empty session.
    New(Option<String>),
    /// Another file.
    Open(Box<SessionManager>),
}

impl AgentSession {
    /// `/fork`: a new session holding the path up to the selected user message's parent;
    /// the message's text is returned for the editor.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkResult, String> {
        let _op = self.inner.op_lock.lock().await;
        let (text, parent) = {
            let st = self.state();
            let entry = st
                .session
                .entry(&EntryId::from(entry_id))
                .ok_or_else(|| "Invalid entry ID for forking".to_string())?;
            let SessionEntry::Message(m) = entry else {
                return Err("Invalid entry ID for forking".into());
            };
            let Some(text) = user_text(&m.message) else {
                return Err("Invalid entry ID for forking".into());
            };
            (text, m.parent_id.clone())
        };
        if self.fork_cancelled(entry_id, ForkPosition::Before).await {
            return Ok(ForkResult {
                text: None,
                cancelled: true,
            });
        }
        self.replace_session(
            Replacement::Branch(parent),
            ShutdownReason::Fork,
            SessionStartReason::Fork,
            None,
        )
        .await?;
        Ok(ForkResult {
            text: Some(text),
            cancelled: false,
        })
    }

    /// `/clone`: a new session holding the current path, continuing from its leaf.
    pub async fn clone_session(&self) -> Result<(), String> {
        let _op = self.inner.op_lock.lock().await;
        let leaf = self.state().session.leaf_id().cloned();
        if let Some(leaf) = &leaf
            && self.fork_cancelled(leaf.as_str(), ForkPosition::At).await
        {
            return Err(SESSION_SWITCH_CANCELLED.to_string());
        }
        self.replace_session(
            Replacement::Branch(leaf),
            ShutdownReason::Fork,
            SessionStartReason::Fork,
            None,
        )
        .await
    }

    /// pi's `ctx.fork(entryId, {position: "at"})`: a new session holding the path up to
    /// and including `entry_id`, continuing from it.
    pub async fn fork_at(&self, entry_id: &str) -> Result<(), String> {
        let _op = self.inner.op_lock.lock().await;
        let leaf = EntryId::from(entry_id);
        if self.state().session.entry(&leaf).is_none() {
            return Err("Invalid entry ID for forking".into());
        }
        if self.fork_cancelled(entry_id, ForkPosition::At).await {
            return Err(SESSION_SWITCH_CANCELLED.to_string());
        }
        self.replace_session(
            Replacement::Branch(Some(leaf)),
            ShutdownReason::Fork,
            SessionStartReason::Fork,
            None,
        )
        .await
    }

    /// `/new`: an empty session in the same directory.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<(), String> {
        self.abort();
        self.check_switch(SwitchReason::New, None).await?;
        let _op = self.inner.op_lock.lock().await;
        self.replace_session(
            Replacement::New(parent_session),
            ShutdownReason::New,
            SessionStartReason::New,
            None,
        )
        .await
    }

    /// `/resume` / RPC `switch_session`: opens another session file.
    ///
    /// Refused, with the current session left as it was, when the file's header names a
    /// working directory that no longer exists (pi's `Stored session working directory
    /// does not exist: …`; see [`AgentSession::switch_session_in`] to continue it here)
    /// or when the file accepts no appends (a newer format version): a turn there could
    /// not be saved. What was odd about the file follows the switch as
    /// [`SessionEvent::SessionLoadWarning`]s.
    pub async fn switch_session(&self, path: &Path) -> Result<(), String> {
        self.switch_session_in(path, None).await
    }

    /// [`AgentSession::switch_session`], continuing the session in `cwd` instead of the
    /// directory its header names (pi's `cwdOverride`, after the user agreed to continue
    /// a session whose directory is gone in the current one).
    pub async fn switch_session_in(&self, path: &Path, cwd: Option<&Path>) -> Result<(), String> {
        self.abort();
        self.check_switch(SwitchReason::Resume, Some(path)).await?;
        let _op = self.inner.op_lock.lock().await;
        // Checked before opening: opening may upgrade an old file on disk.
        if cwd.is_none()
            && let Some(issue) = MissingCwd::check(path, self.cwd())
        {
            return Err(issue.to_string());
        }
        let manager = SessionManager::open_with_cwd(path, None, cwd).map_err(|e| e.to_string())?;
        if let Some(reason) = manager.read_only_reason() {
            let file = manager.session_file().unwrap_or(path);
            return Err(read_only_refusal(file, reason));
        }
        self.replace_session(
            Replacement::Open(Box::new(manager)),
            ShutdownReason::Resume,
            SessionStartReason::Resume,
            Some(path),
        )
        .await?;
        self.emit_load_warnings();
        Ok(())
    }

    /// The switch itself (the caller holds the operation lock).
    async fn replace_session(
        &self,
        replacement: Replacement,
        shutdown: ShutdownReason,
        start: SessionStartReason,
        target: Option<&Path>,
    ) -> Result<(), String> {
        let previous = self.current_session_file();
        let previous_id = self.state().session.session_id().to_string();
        self.extensions_switching(shutdown, target).await;
        self.flush_extension_actions().await;
        let restore_model = matches!(replacement, Replacement::Open(_));
        {
            let mut st = self.state();
            match replacement {
                Replacement::Branch(Some(leaf)) => {
                    st.session
                        .create_branched_session(&leaf)
                        .map_err(|e| e.to_string())?;
                }
                Replacement::Branch(None) => {
                    let parent = st.session.session_file().map(|p| p.display().to_string());
                    st.start_new_session(parent)?;
                }
                Replacement::New(parent) => {
                    st.start_new_session(parent)?;
                }
                Replacement::Open(manager) => st.session = *manager,
            }
        }
        // The replaced session's resources go, as pi's `dispose` (its kept Codex socket).
        let replaced = self.state().session.session_id().to_string() != previous_id;
        if replaced {
            crate::ai::providers::codex_websocket::close_session(&previous_id).await;
        }
        let before = (self.model(), self.thinking_level());
        self.after_session_replaced(restore_model);
        self.extensions_switched(start, previous).await;
        if restore_model {
            // pi has no event for this (its resumed session starts with the model); we
            // tell extensions after `session_start` when the model or level changed.
            let (model, level) = (self.model(), self.thinking_level());
            if let Some(model) = &model {
                self.notify_model_select(model, before.0.as_ref(), ModelSelectSource::Restore);
            }
            self.notify_thinking_level_select(level, before.1);
        }
        Ok(())
    }

    /// After the session manager changed: rebuild messages, optionally restore the model
    /// and thinking level recorded in the session, clear queues and what extensions had
    /// prepared for the old session.
    fn after_session_replaced(&self, restore_model: bool) {
        let dropped = self.inner.queues.drain_all();
        let queue_changed = {
            let mut st = self.state();
            st.pending_bash.clear();
            st.pending_next_turn.clear();
            st.system_prompt_override = None;
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
            !dropped.is_empty()
        };
        if restore_model {
            self.restore_tools_from_transcript(true);
        }
        // pi reports the queues only when they change (a fork or `/new` with nothing
        // queued emits no `queue_update`).
        if queue_changed {
            self.emit_queue_update();
        }
        self.emit(SessionEvent::SessionReplaced);
    }
}
