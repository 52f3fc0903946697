//! `AgentSession`: one conversation with a model, tying together the agent loop, the
//! session file, settings, the model registry, tools and compaction. Every front end
//! (interactive, print/JSON, RPC) drives this same API and consumes the same
//! [`SessionEvent`]s.
//!
//! The session is a cheap, cloneable handle. State lives behind short-lived locks that are
//! never held across an `.await`, so `steer`, `abort` or `state()` work while a prompt is
//! streaming. Operations that change the conversation (prompting, compaction, tree
//! navigation, switching sessions) take one async operation lock in turn, so a summary can
//! never attach to the wrong branch because a compaction ran at the same time.
//!
//! Every message is written to the session file as it completes; the agent's in-memory
//! messages are rebuilt from `build_session_context()` after every navigation or
//! compaction, never patched by hand.

mod actions;
mod bash;
mod checkpoints;
pub mod client;
mod compaction;
mod config;
mod ext_calls;
mod ext_llm;
mod extensions;
mod input;
mod jsonl;
mod models;
mod navigation;
mod prompt;
mod reload;
mod resources;
mod state;
mod switching;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentHooks, MessageQueues};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::ModelRegistry;
use crate::ai::models::resolve::ScopedModel;
use crate::core::events::SessionEvent;
use crate::core::paths::AgentPaths;
use crate::core::resources::ContextFile;
use crate::core::settings::{QueueMode, Settings};
use crate::messages::AgentMessage;
use crate::session::SessionManager;
use crate::tools::{Tool, ToolConfig};

pub use crate::core::checkpoints::{RESTORE_CONFLICT_PREFIX, RestoreReport};
pub use bash::{BASH_ALREADY_RUNNING, BashOutcome};
pub use compaction::compaction_result_json;
pub use extensions::SESSION_SWITCH_CANCELLED;
pub use models::{CycledModel, Direction};
pub use navigation::{NavigateOptions, NavigateResult};
pub use prompt::{ALREADY_STREAMING, PromptDisposition, PromptOptions, StreamingBehavior};
pub use reload::{RELOAD_WHILE_COMPACTING, RELOAD_WHILE_STREAMING, ReloadedResources};
pub use resources::LoadedResources;
pub use state::{ContextUsage, SessionStats, SessionStatus, TokenTotals};
pub use switching::ForkResult;

/// Runs a whole reload of the session it is given (pi's `/reload`: `session_shutdown`,
/// settings and resources read again, new extensions, `session_start`); `Err` is what
/// the extension that asked reads. See [`AgentSession::set_reload_handler`]
/// (defined here, beside the session that holds it, so `reload` builds on this file
/// and not the other way round).
pub type ReloadHandler = std::sync::Arc<
    dyn Fn(AgentSession) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync,
>;

/// The default thinking level when switching to a reasoning model without a preference
/// (pi writes `medium` in that case; see the corpus).
pub const DEFAULT_THINKING_LEVEL: ThinkingLevel = ThinkingLevel::Medium;

/// The parts of the system prompt besides the tools.
#[derive(Debug, Clone, Default)]
pub struct PromptResources {
    /// Replaces the default instructions (`--system-prompt`, `SYSTEM.md`).
    pub custom_prompt: Option<String>,
    /// Appended texts (`--append-system-prompt`, `APPEND_SYSTEM.md`).
    pub append: Vec<String>,
    pub context_files: Vec<ContextFile>,
    /// Pre-formatted skills block for the system prompt.
    pub skills_block: Option<String>,
}

/// Everything an `AgentSession` starts from.
pub struct AgentSessionOptions {
    pub cwd: PathBuf,
    pub paths: AgentPaths,
    pub settings: Settings,
    pub registry: ModelRegistry,
    pub session: SessionManager,
    pub model: Option<Model>,
    pub thinking: ThinkingLevel,
    /// Models Ctrl+P cycles through (`--models` / `enabledModels`).
    pub scoped_models: Vec<ScopedModel>,
    /// Names of the built-in tools to activate.
    pub tool_names: Vec<String>,
    /// Tools provided by extensions (always active unless filtered by `--tools`).
    pub extra_tools: Vec<Arc<dyn Tool>>,
    pub resources: PromptResources,
    pub hooks: Option<Arc<dyn AgentHooks>>,
}

/// Mutable state, guarded by one mutex that is only held for short, synchronous work.
pub(crate) struct State {
    pub session: SessionManager,
    pub settings: Settings,
    pub registry: ModelRegistry,
    pub model: Option<Model>,
    pub thinking: ThinkingLevel,
    pub scoped_models: Vec<ScopedModel>,
    /// The agent's view of the conversation (what the next request is built from).
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<Arc<dyn Tool>>,
    pub tool_config: ToolConfig,
    pub resources: PromptResources,
    pub system_prompt: String,
    /// A replacement system prompt from extensions' `before_agent_start`, used until the
    /// next prompt (pi keeps it for retries and runs extensions trigger).
    pub system_prompt_override: Option<String>,
    pub hooks: Option<Arc<dyn AgentHooks>>,
    pub streaming: bool,
    pub compacting: bool,
    pub auto_compaction: bool,
    pub auto_retry: bool,
    pub retry_attempt: u32,
    pub overflow_recovery_attempted: bool,
    /// `!cmd` results recorded while streaming, added once the run ends.
    pub pending_bash: Vec<crate::messages::BashExecutionMessage>,
    pub bash_running: bool,
    /// Theme files the extensions named in `resources_discover` (`themePaths`), and a
    /// counter bumped whenever the list is set (front ends reload their themes then).
    pub extension_themes: (Vec<PathBuf>, u64),
    /// The queue texts last reported in `queue_update` (the queues themselves live in
    /// `Inner::queues`, the one place messages wait).
    pub queue_reported: (Vec<String>, Vec<String>),
    /// The running extensions, once attached.
    pub extensions: Option<crate::extensions::ExtensionHost>,
    /// `/name` prompt templates and `/skill:name` skills.
    pub prompt_templates: Vec<crate::core::prompt_templates::PromptTemplate>,
    pub skills: Vec<crate::core::skills::Skill>,
    /// Extension messages sent with `deliverAs: "nextTurn"`, waiting for the next prompt.
    pub pending_next_turn: Vec<crate::messages::CustomMessage>,
    /// Which tools `--tools` / `--exclude-tools` let extensions activate.
    pub tool_filter: crate::core::tool_selection::ToolFilter,
    /// `Some(--tools +x/-x entries)` when a branch's recorded tools are restored on resume
    /// and `/tree` (the session follows the default selection); `None` otherwise.
    pub transcript_tool_modifiers: Option<Vec<String>>,
}

pub(crate) struct Inner {
    pub state: Mutex<State>,
    pub queues: MessageQueues,
    pub subscribers: Mutex<Vec<mpsc::UnboundedSender<SessionEvent>>>,
    /// Serializes operations that change the conversation.
    pub op_lock: tokio::sync::Mutex<()>,
    /// Cancels the current run (prompt, retry wait, compaction, branch summary).
    pub cancel: Mutex<CancellationToken>,
    pub bash_cancel: Mutex<Option<CancellationToken>>,
    pub retry_cancel: Mutex<Option<CancellationToken>>,
    pub cwd: PathBuf,
    pub paths: AgentPaths,
    /// Extension dialogs and notices, until a front end takes them.
    pub ui_requests: Mutex<Option<mpsc::UnboundedReceiver<crate::extensions::UiRequest>>>,
    /// Asks the extension action loop to apply everything already sent (see
    /// `AgentSession::flush_extension_actions`).
    pub action_flush: Mutex<Option<mpsc::UnboundedSender<tokio::sync::oneshot::Sender<()>>>>,
    /// Runs started by extensions (`triggerTurn`, `sendUserMessage`) that have not ended.
    pub background_runs: std::sync::atomic::AtomicUsize,
    pub background_idle: tokio::sync::Notify,
    /// An extension asked to quit (`ctx.shutdown()`); stores a permit for a late waiter.
    pub shutdown_request: tokio::sync::Notify,
    /// Extension errors reported while nobody was subscribed (e.g. during startup),
    /// handed to the next subscriber.
    pub backlog: Mutex<Vec<SessionEvent>>,
    /// File checkpoints of tool calls, created on first use.
    pub checkpoints: Mutex<Option<crate::core::checkpoints::Checkpointer>>,
    /// How this session reloads (`ctx.reload()`): installed by whoever can (the session
    /// factory for print and RPC mode, the interactive UI for its own sessions).
    pub reload_handler: Mutex<Option<ReloadHandler>>,
}

/// A running conversation. Clone it freely: clones share everything.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) inner: Arc<Inner>,
}

impl AgentSession {
    /// Builds a session. The agent's messages start as the session file's context.
    pub fn new(options: AgentSessionOptions) -> AgentSession {
        let mut tool_config = ToolConfig::new(options.cwd.clone());
        tool_config.shell_path = options.settings.shell_path().map(PathBuf::from);
        tool_config.command_prefix = options.settings.shell_command_prefix().map(str::to_string);
        tool_config.auto_resize_images = options.settings.image_auto_resize();
        if let Some(model) = &options.model {
            tool_config.model_accepts_images.store(
                model.supports_images(),
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        let mut tools =
            crate::tools::create_tools(&options.tool_names, &tool_config).unwrap_or_default();
        tools.extend(options.extra_tools);
        let messages = options.session.build_session_context().messages;
        let queues = MessageQueues::new();
        queues.set_modes(
            delivery(options.settings.steering_mode()),
            delivery(options.settings.follow_up_mode()),
        );
        let auto_compaction = options.settings.compaction_enabled();
        let auto_retry = options.settings.retry().enabled;
        let mut state = State {
            session: options.session,
            settings: options.settings,
            registry: options.registry,
            model: options.model,
            thinking: options.thinking,
            scoped_models: options.scoped_models,
            messages,
            tools,
            tool_config,
            resources: options.resources,
            system_prompt: String::new(),
            system_prompt_override: None,
            hooks: options.hooks,
            streaming: false,
            compacting: false,
            auto_compaction,
            auto_retry,
            retry_attempt: 0,
            overflow_recovery_attempted: false,
            pending_bash: Vec::new(),
            extension_themes: (Vec::new(), 0),
            bash_running: false,
            queue_reported: (Vec::new(), Vec::new()),
            extensions: None,
            prompt_templates: Vec::new(),
            skills: Vec::new(),
            pending_next_turn: Vec::new(),
            tool_filter: Default::default(),
            transcript_tool_modifiers: None,
        };
        state.rebuild_system_prompt(&options.cwd);
        AgentSession {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                queues,
                subscribers: Mutex::new(Vec::new()),
                op_lock: tokio::sync::Mutex::new(()),
                cancel: Mutex::new(CancellationToken::new()),
                bash_cancel: Mutex::new(None),
                retry_cancel: Mutex::new(None),
                cwd: options.cwd,
                paths: options.paths,
                ui_requests: Mutex::new(None),
                action_flush: Mutex::new(None),
                background_runs: std::sync::atomic::AtomicUsize::new(0),
                background_idle: tokio::sync::Notify::new(),
                shutdown_request: tokio::sync::Notify::new(),
                backlog: Mutex::new(Vec::new()),
                checkpoints: Mutex::new(None),
                reload_handler: Mutex::new(None),
            }),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }

    /// Receives every event from now on, in order. Dropping the receiver unsubscribes.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<SessionEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut subs = lock(&self.inner.subscribers);
        for event in lock(&self.inner.backlog).drain(..) {
            let _ = tx.send(event);
        }
        subs.push(tx);
        rx
    }

    pub(crate) fn emit(&self, event: SessionEvent) {
        emit_to(&self.inner, event);
    }

    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    pub fn paths(&self) -> &AgentPaths {
        &self.inner.paths
    }

    /// Runs `f` with the session manager (read-only access for front ends).
    pub fn with_session<R>(&self, f: impl FnOnce(&SessionManager) -> R) -> R {
        f(&self.state().session)
    }

    /// What was odd about the session file when it was opened (truncated or malformed
    /// lines, duplicate ids, cycles, a file moved aside). Each mode shows these once at
    /// startup; after `/resume` / `switch_session` they arrive as
    /// [`SessionEvent::SessionLoadWarning`].
    pub fn load_warnings(&self) -> Vec<crate::session::error::LoadWarning> {
        self.state().session.load_warnings().to_vec()
    }

    /// Emits a [`SessionEvent::SessionLoadWarning`] for each of [`AgentSession::load_warnings`]
    /// (for front ends that report them as events once they listen).
    pub fn emit_load_warnings(&self) {
        for warning in self.load_warnings() {
            self.emit(SessionEvent::SessionLoadWarning { warning });
        }
    }

    /// The agent's current messages (the context of the next request).
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.state().messages.clone()
    }

    pub fn model(&self) -> Option<Model> {
        self.state().model.clone()
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.state().thinking
    }

    pub fn system_prompt(&self) -> String {
        self.state().system_prompt.clone()
    }

    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.state().tools.clone()
    }

    /// The models Ctrl+P cycles through (`--models` / `enabledModels`), if scoped.
    pub fn scoped_models(&self) -> Vec<Model> {
        self.state()
            .scoped_models
            .iter()
            .map(|s| s.model.clone())
            .collect()
    }

    pub fn is_streaming(&self) -> bool {
        self.state().streaming
    }

    /// Replaces the extension hooks (after extensions are (re)loaded).
    pub fn set_hooks(&self, hooks: Option<Arc<dyn AgentHooks>>) {
        self.state().hooks = hooks;
    }

    /// Adds tools (e.g. registered by extensions) and rebuilds the system prompt.
    pub fn add_tools(&self, tools: Vec<Arc<dyn Tool>>) {
        let cwd = self.inner.cwd.clone();
        let mut st = self.state();
        for tool in tools {
            if !st.tools.iter().any(|t| t.name() == tool.name()) {
                st.tools.push(tool);
            }
        }
        st.rebuild_system_prompt(&cwd);
    }

    /// Sets the session's name (a `session_info` entry) and reports the name now in
    /// effect (pi's `session_info_changed`).
    pub fn set_session_name(&self, name: &str) -> Result<(), String> {
        let name = {
            let mut st = self.state();
            st.session
                .append_session_info(name)
                .map_err(|e| e.to_string())?;
            st.session.session_name().map(str::to_string)
        };
        self.emit(SessionEvent::SessionInfoChanged { name });
        Ok(())
    }

    /// Turns automatic compaction on or off, remembered in the global settings as pi does.
    pub fn set_auto_compaction(&self, enabled: bool) {
        let mut st = self.state();
        st.auto_compaction = enabled;
        // A failed settings write is not fatal: the choice still applies to this run.
        let _ = st
            .settings
            .set_global(&["compaction", "enabled"], enabled.into());
    }

    /// Turns automatic retries on or off, remembered in the global settings as pi does.
    pub fn set_auto_retry(&self, enabled: bool) {
        let mut st = self.state();
        st.auto_retry = enabled;
        let _ = st
            .settings
            .set_global(&["retry", "enabled"], enabled.into());
    }

    /// How steering messages are delivered; remembered in the global settings.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        let queues = &self.inner.queues;
        queues.set_modes(delivery(mode), queues.follow_up_mode());
        let _ = self
            .state()
            .settings
            .set_global(&["steeringMode"], mode.as_str().into());
    }

    /// How follow-up messages are delivered; remembered in the global settings.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        let queues = &self.inner.queues;
        queues.set_modes(queues.steering_mode(), delivery(mode));
        let _ = self
            .state()
            .settings
            .set_global(&["followUpMode"], mode.as_str().into());
    }

    /// Waits until no operation that changes the conversation runs: the current prompt
    /// (with its retries and compactions), a compaction or a tree navigation. After
    /// [`AgentSession::abort`] this is when the aborted work has been recorded. Unlike
    /// [`AgentSession::wait_for_idle`] it does not wait for runs extensions started.
    pub async fn wait_for_operation(&self) {
        drop(self.inner.op_lock.lock().await);
    }

    /// Completes when an extension asks to quit (`ctx.shutdown()`). Front ends quit once
    /// the agent is idle; the interactive UI also sees [`SessionEvent::ShutdownRequested`].
    pub async fn shutdown_requested(&self) {
        self.inner.shutdown_request.notified().await;
    }

    /// Cancels a pending automatic retry (its wait).
    pub fn abort_retry(&self) {
        if let Some(token) = lock(&self.inner.retry_cancel).take() {
            token.cancel();
        }
    }

    /// Aborts whatever runs: the agent (stream and tools), a retry wait, a compaction or a
    /// branch summary. Queued messages stay queued (the UI may take them back).
    pub fn abort(&self) {
        self.abort_retry();
        lock(&self.inner.cancel).cancel();
    }

    /// Empties both message queues and returns their texts (steering first).
    pub fn clear_queue(&self) -> Vec<String> {
        let drained = self.inner.queues.drain_all();
        self.emit_queue_update();
        drained.iter().map(queued_text).collect()
    }

    /// Empties both queues and returns their texts, steering and follow-up apart (pi
    /// 1.6's `clearQueue`).
    pub fn clear_queues(&self) -> (Vec<String>, Vec<String>) {
        let (steering, follow_up) = self.inner.queues.drain_split();
        self.emit_queue_update();
        (
            steering.iter().map(queued_text).collect(),
            follow_up.iter().map(queued_text).collect(),
        )
    }

    /// The texts waiting in the steering and follow-up queues.
    pub fn queued_messages(&self) -> (Vec<String>, Vec<String>) {
        let (steering, follow_up) = self.inner.queues.pending();
        (
            steering.iter().map(queued_text).collect(),
            follow_up.iter().map(queued_text).collect(),
        )
    }

    /// Reports the queues (`queue_update`).
    pub(crate) fn emit_queue_update(&self) {
        let (steering, follow_up) = self.queued_messages();
        self.state().queue_reported = (steering.clone(), follow_up.clone());
        self.emit(SessionEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    /// Reports the queues if they changed since the last report (the agent loop took a
    /// message from them).
    pub(crate) fn emit_queue_update_if_changed(&self) {
        let now = self.queued_messages();
        if self.state().queue_reported != now {
            self.emit_queue_update();
        }
    }

    /// A fresh cancellation token for a new operation (the previous one stays cancelled).
    pub(crate) fn new_cancel(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *lock(&self.inner.cancel) = token.clone();
        token
    }

    /// Rebuilds the agent's messages from the session file (after navigation/compaction).
    /// Entries parsed for the old context (or for the compaction) are dropped first: only
    /// what the new context needs is parsed again, so memory follows what is sent.
    pub(crate) fn reload_messages(&self) {
        let mut st = self.state();
        st.session.forget_parsed();
        st.messages = st.session.build_session_context().messages;
    }
}

/// How many unseen extension errors are kept for a later subscriber.
const BACKLOG_LIMIT: usize = 100;

pub(crate) fn emit_to(inner: &Inner, event: SessionEvent) {
    let mut subs = lock(&inner.subscribers);
    subs.retain(|tx| tx.send(event.clone()).is_ok());
    // An extension that fails while the session starts (before a front end listens) must
    // still be reported.
    if subs.is_empty() && matches!(event, SessionEvent::ExtensionError { .. }) {
        let mut backlog = lock(&inner.backlog);
        if backlog.len() < BACKLOG_LIMIT {
            backlog.push(event);
        }
    }
}

/// Locks a mutex, recovering from poisoning (a panicking holder cannot leave these
/// structures half-updated in a way that matters more than stopping would).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a queued message is shown: its text (or its role, for a non-user message).
fn queued_text(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(u) => u.content.text(),
        other => other.role().to_string(),
    }
}

fn delivery(mode: QueueMode) -> crate::agent::DeliveryMode {
    match mode {
        QueueMode::OneAtATime => crate::agent::DeliveryMode::OneAtATime,
        QueueMode::All => crate::agent::DeliveryMode::All,
    }
}
