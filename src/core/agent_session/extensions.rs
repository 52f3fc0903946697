//! The session's side of extensions: attaching a loaded [`ExtensionHost`] (its tools, the
//! agent hooks for `context` / `tool_call` / `tool_result`, the loop applying its actions,
//! its UI requests), the lifecycle events (`session_start`, `session_shutdown`, the
//! `session_before_switch` / `session_before_fork` checks around `/new`, `/resume`,
//! `/fork`, `/clone`), and the notifications the agent loop and model changes produce.
//!
//! Extensions stay running across session switches: a switch sends `session_shutdown`
//! with the switch's reason, then `session_start` with the same reason and the new file.
//! Only [`AgentSession::shutdown`] stops them.
//!
//! Not here: what extensions do to the conversation (`actions.rs`) or to typed input
//! (`input.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::mpsc;

use super::{AgentSession, lock};
use crate::agent::AgentEvent;
use crate::ai::model::{Model, ThinkingLevel};
use crate::extensions::{
    CommandInfo, DiscoverReason, EventName, ExtensionHost, ForkPosition, HostChannels,
    ModelSelectSource, SessionStartReason, ShutdownReason, SwitchReason, UiRequest,
};
use crate::session::entry::EntryId;
use crate::tools::Tool;

/// The error `/new`, `/resume` and `/clone` return when an extension's
/// `session_before_switch` / `session_before_fork` handler cancelled them (RPC answers
/// `{"cancelled": true}` for it).
pub const SESSION_SWITCH_CANCELLED: &str = "Cancelled by an extension";

impl AgentSession {
    /// Connects a loaded extension host: `tools` (the extension tools the tool flags
    /// keep) join the active tools (replacing a built-in tool of the same name), the host answers the agent hooks, its actions are
    /// applied by a task of this session, and its UI requests wait for
    /// [`AgentSession::take_ui_requests`]. Must run inside a tokio runtime. `session_start`
    /// is not sent yet: call [`AgentSession::start_extensions`] once a front end listens.
    pub fn attach_extensions(
        &self,
        host: ExtensionHost,
        channels: HostChannels,
        tools: Vec<Arc<dyn Tool>>,
    ) {
        let HostChannels { actions, ui } = channels;
        {
            let st = self.state();
            host.set_session(
                st.session.session_file(),
                Some(&st.session.session_id().to_string()),
            );
        }
        {
            let mut st = self.state();
            st.hooks = Some(host.hooks());
            st.extensions = Some(host);
            // As in pi, an extension tool replaces a built-in tool of the same name.
            st.tools
                .retain(|t| !tools.iter().any(|new| new.name() == t.name()));
        }
        self.add_tools(tools);
        self.provide_extension_state();
        *lock(&self.inner.ui_requests) = Some(ui);
        let (flush_tx, flush_rx) = mpsc::unbounded_channel();
        *lock(&self.inner.action_flush) = Some(flush_tx);
        tokio::spawn(super::actions::action_loop(
            Arc::downgrade(&self.inner),
            actions,
            flush_rx,
        ));
    }

    /// The attached extension host, if any.
    pub fn extension_host(&self) -> Option<ExtensionHost> {
        self.state().extensions.clone()
    }

    /// The extensions' dialogs and notices (select, confirm, notify, setStatus, …), for the
    /// front end to show and answer. `None` after the first call or without extensions.
    /// Until a front end takes them they wait, so a mode without a user interface loads
    /// extensions with `hasUI: false` (the host then answers dialogs itself).
    pub fn take_ui_requests(&self) -> Option<mpsc::UnboundedReceiver<UiRequest>> {
        lock(&self.inner.ui_requests).take()
    }

    /// The slash commands extensions registered (for autocompletion and RPC
    /// `get_commands`).
    pub fn extension_commands(&self) -> Vec<CommandInfo> {
        self.extension_host()
            .map(|h| h.commands())
            .unwrap_or_default()
    }

    /// Sends `session_start`, waits for the extensions' answers and applies what they did
    /// meanwhile.
    pub async fn start_extensions(&self, reason: SessionStartReason) {
        self.start_extensions_after(reason, None).await;
    }

    async fn start_extensions_after(&self, reason: SessionStartReason, previous: Option<&Path>) {
        let Some(host) = self.extension_host() else {
            return;
        };
        {
            let st = self.state();
            host.set_session(
                st.session.session_file(),
                Some(&st.session.session_id().to_string()),
            );
        }
        host.session_start(reason, previous).await;
        let discover = match reason {
            SessionStartReason::Startup => Some(DiscoverReason::Startup),
            SessionStartReason::Reload => Some(DiscoverReason::Reload),
            _ => None,
        };
        if let Some(discover) = discover {
            self.extend_resources_from_extensions(&host, discover).await;
        }
        // What the handlers did (a `nextTurn` message, an entry) is in place before the
        // first prompt, as it is in pi, where those calls take effect at once.
        self.flush_extension_actions().await;
    }

    /// On exit: `session_shutdown` (reason `quit`), then the extensions are stopped, and
    /// what they reported on the way is applied. Later calls do nothing.
    pub async fn shutdown(&self) {
        let Some(host) = self.extension_host() else {
            return;
        };
        host.shutdown(ShutdownReason::Quit, None).await;
        self.flush_extension_actions().await;
    }

    /// Asks `session_before_switch`; `Err` when an extension cancelled.
    pub(crate) async fn check_switch(
        &self,
        reason: SwitchReason,
        target: Option<&Path>,
    ) -> Result<(), String> {
        match self.extension_host() {
            Some(host) if host.session_before_switch(reason, target).await => {
                Err(SESSION_SWITCH_CANCELLED.to_string())
            }
            _ => Ok(()),
        }
    }

    /// Asks `session_before_fork`; `true` when an extension cancelled.
    pub(crate) async fn fork_cancelled(&self, entry_id: &str, position: ForkPosition) -> bool {
        match self.extension_host() {
            Some(host) => {
                host.session_before_fork(&EntryId::from(entry_id), position)
                    .await
            }
            None => false,
        }
    }

    /// The session file now in use (the "previous" file of a switch).
    pub(crate) fn current_session_file(&self) -> Option<PathBuf> {
        self.state().session.session_file().map(Path::to_path_buf)
    }

    /// After the session file changed: `session_shutdown` for the old one was sent by the
    /// caller before the change; this sends `session_start` for the new one.
    pub(crate) async fn extensions_switched(
        &self,
        reason: SessionStartReason,
        previous: Option<PathBuf>,
    ) {
        self.start_extensions_after(reason, previous.as_deref())
            .await;
    }

    /// `session_shutdown` before a switch (the extensions keep running).
    pub(crate) async fn extensions_switching(&self, reason: ShutdownReason, target: Option<&Path>) {
        if let Some(host) = self.extension_host() {
            host.session_shutdown(reason, target).await;
        }
    }

    /// Forwards an agent-loop event to the subscribed extensions (never waits).
    pub(crate) fn notify_extensions(&self, event: &AgentEvent) {
        let host = self.state().extensions.clone();
        if let Some(host) = host {
            host.agent_event(event);
        }
    }

    pub(crate) fn notify_model_select(
        &self,
        model: &Model,
        previous: Option<&Model>,
        source: ModelSelectSource,
    ) {
        let same = previous.is_some_and(|p| p.provider == model.provider && p.id == model.id);
        if same {
            return;
        }
        if let Some(host) = self.extension_host() {
            host.model_select(model, previous, source);
        }
    }

    pub(crate) fn notify_thinking_level_select(
        &self,
        level: ThinkingLevel,
        previous: ThinkingLevel,
    ) {
        if level == previous {
            return;
        }
        if let Some(host) = self.extension_host() {
            host.thinking_level_select(level, previous);
        }
    }

    /// Whether an attached extension subscribed to `event`.
    pub(crate) fn extensions_listen(&self, event: EventName) -> bool {
        self.extension_host()
            .is_some_and(|h| h.has_subscribers(event))
    }

    /// Applies every action the extensions sent so far (they are applied by a background
    /// task; this waits until it has caught up). Used after a command, so its messages are
    /// in place before the next prompt, and before exiting.
    pub async fn flush_extension_actions(&self) {
        let sender = lock(&self.inner.action_flush).clone();
        let Some(sender) = sender else {
            return;
        };
        let (ack, done) = tokio::sync::oneshot::channel();
        if sender.send(ack).is_ok() {
            let _ = done.await;
        }
    }

    /// Waits until runs started by extensions (`triggerTurn`, `sendUserMessage`) are over
    /// and no operation is in progress. Print mode calls it before exiting.
    pub async fn wait_for_idle(&self) {
        loop {
            self.flush_extension_actions().await;
            let idle = self.inner.background_idle.notified();
            if self.inner.background_runs.load(Ordering::SeqCst) > 0 {
                idle.await;
                continue;
            }
            // A prompt of the front end may still hold the operation lock; what it makes
            // the extensions do is applied by the flush after it.
            drop(self.inner.op_lock.lock().await);
            self.flush_extension_actions().await;
            if self.inner.background_runs.load(Ordering::SeqCst) == 0 {
                return;
            }
        }
    }
}
