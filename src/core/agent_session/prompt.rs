//! Prompting: queueing while streaming, running the agent loop with every message
//! persisted as it completes, then what pi does after a run — retry a transient failure
//! (the failed answer stays in the file, the retry becomes its child), recover from a
//! context overflow with one compaction, or compact when over the threshold.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use super::client::{
    ProviderClient, budgets_from_settings, cache_retention_from_env, provider_retry_policy,
};
use super::compaction::model_key;
use super::{AgentSession, emit_to, lock};
use crate::agent::{self, AgentConfig, AgentEvent};
use crate::ai::auth::missing_key_message;
use crate::ai::http::shared_client;
use crate::ai::message::{
    AssistantMessage, ImageContent, StopReason, UserBlock, UserContent, UserMessage, now_ms,
};
use crate::ai::overflow::is_context_overflow;
use crate::ai::providers::Transport;
use crate::ai::retry::{is_retryable_error, sleep_cancellable};
use crate::compaction::{
    AutoCompaction, AutoCompactionCheck, CompactionSettings, check_auto_compaction,
};
use crate::core::events::{CompactionReason, SessionEvent};
use crate::extensions::InputSource;
use crate::messages::AgentMessage;
use crate::session::SessionManager;
use crate::session::entry::SessionEntry;
use crate::session::tree::EntryKind;
use crate::tools::ExecutionMode;

/// What to do with a prompt that arrives while the agent is streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamingBehavior {
    /// Deliver after the current tool calls.
    Steer,
    /// Deliver when the agent would stop.
    FollowUp,
}

/// Options of [`AgentSession::prompt`].
#[derive(Debug, Clone, Default)]
pub struct PromptOptions {
    pub images: Vec<ImageContent>,
    /// Required when the agent is streaming; without it such a prompt is an error.
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Where the text came from, for extensions' `input` event (interactive when absent).
    pub source: Option<InputSource>,
}

/// What became of a submitted prompt (pi 1.6's `PromptDisposition`, RPC's
/// `data.disposition`): consumed by an extension command or input handler, queued while a
/// run goes on, or started as a new run (which ends with `agent_settled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptDisposition {
    Handled,
    Queued,
    Started,
}

impl PromptDisposition {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptDisposition::Handled => "handled",
            PromptDisposition::Queued => "queued",
            PromptDisposition::Started => "started",
        }
    }
}

/// pi's error text for a prompt sent while streaming without a behaviour.
pub const ALREADY_STREAMING: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

fn user_message(text: &str, images: &[ImageContent]) -> AgentMessage {
    let mut blocks = vec![UserBlock::text(text)];
    blocks.extend(images.iter().cloned().map(UserBlock::Image));
    AgentMessage::User(UserMessage {
        content: UserContent::Blocks(blocks),
        timestamp: now_ms(),
        extra: Default::default(),
    })
}

/// Why a run (or its follow-up) should continue.
pub(crate) enum Next {
    Done,
    Continue,
}

impl AgentSession {
    /// Sends a prompt and waits until the agent (and any retry or recovery) is done.
    ///
    /// In pi's order: an extension `/command` runs at once (also while streaming) and is
    /// not sent; the `input` event may change or swallow the text; `/skill:name` and
    /// `/template` are expanded; while streaming the result is queued per
    /// `options.streaming_behavior`; otherwise it is sent together with the extensions'
    /// `nextTurn` and `before_agent_start` messages.
    pub async fn prompt(&self, text: &str, options: PromptOptions) -> Result<(), String> {
        self.prompt_with_acceptance(text, options, |_| {}).await
    }

    /// [`AgentSession::prompt`], calling `accepted` the moment the prompt is accepted: run
    /// as an extension command, swallowed by an extension, queued while streaming, or past
    /// the checks pi makes before sending (model, key, a due compaction) with the session
    /// already marked as streaming. RPC mode answers `prompt` then, as pi does, while the
    /// run goes on. An `Err` is always returned before acceptance; failures of the run
    /// itself arrive as events.
    pub async fn prompt_with_acceptance(
        &self,
        text: &str,
        options: PromptOptions,
        accepted: impl FnOnce(PromptDisposition) + Send,
    ) -> Result<(), String> {
        self.prompt_with(text, options, true, accepted).await
    }

    /// [`AgentSession::prompt_with_acceptance`]; `expand: false` skips commands and
    /// expansion (pi's `expandPromptTemplates: false`, used for extensions' user messages).
    pub(crate) async fn prompt_with(
        &self,
        text: &str,
        options: PromptOptions,
        expand: bool,
        accepted: impl FnOnce(PromptDisposition) + Send,
    ) -> Result<(), String> {
        if expand && self.run_extension_command(text).await {
            accepted(PromptDisposition::Handled);
            return Ok(());
        }
        let source = options.source.unwrap_or(InputSource::Interactive);
        let Some((text, images)) = self.input_event(text, options.images, source).await else {
            accepted(PromptDisposition::Handled);
            return Ok(());
        };
        let text = if expand {
            self.expand_text(&text)
        } else {
            text
        };
        if self.is_streaming() {
            return match options.streaming_behavior {
                Some(StreamingBehavior::Steer) => {
                    self.queue_steering(&text, images);
                    accepted(PromptDisposition::Queued);
                    Ok(())
                }
                Some(StreamingBehavior::FollowUp) => {
                    self.queue_follow_up(&text, images);
                    accepted(PromptDisposition::Queued);
                    Ok(())
                }
                None => Err(ALREADY_STREAMING.to_string()),
            };
        }
        let _op = self.inner.op_lock.lock().await;
        self.flush_pending_bash();
        self.check_can_run()?;
        self.refresh_oauth_if_due().await?;
        let cancel = self.new_cancel();
        // A compaction may be due before sending (this also catches aborted answers).
        if let Some(last) = self.last_assistant() {
            self.auto_compact_if_needed(&last, true, &cancel).await;
        }
        let next_turn = {
            let mut st = self.state();
            st.overflow_recovery_attempted = false;
            std::mem::take(&mut st.pending_next_turn)
        };
        // An abort that stopped the compaction above was meant for it, not for this prompt.
        if cancel.is_cancelled() {
            self.new_cancel();
        }
        // Marked before `accepted` runs so whoever is told "accepted" already sees a
        // streaming session (a second prompt without a behaviour is then refused).
        self.state().streaming = true;
        accepted(PromptDisposition::Started);
        // pi sends (and stores) the prompt first, then the messages queued for this turn,
        // then those `before_agent_start` adds.
        let mut prompts = vec![user_message(&text, &images)];
        prompts.extend(next_turn.into_iter().map(AgentMessage::Custom));
        prompts.extend(self.before_agent_start(&text, &images).await);
        self.run_until_settled(Some(prompts)).await;
        Ok(())
    }

    /// Runs the agent with `messages` as the prompt (an extension's message with
    /// `triggerTurn`), after whatever operation is in progress.
    pub(crate) async fn run_messages(&self, messages: Vec<AgentMessage>) -> Result<(), String> {
        let _op = self.inner.op_lock.lock().await;
        self.flush_pending_bash();
        self.check_can_run()?;
        self.refresh_oauth_if_due().await?;
        self.new_cancel();
        self.run_until_settled(Some(messages)).await;
        Ok(())
    }

    /// Runs the agent from the current messages without a new prompt (e.g. after a
    /// custom message with `triggerTurn`).
    pub async fn continue_run(&self) -> Result<(), String> {
        if self.is_streaming() {
            return Err(ALREADY_STREAMING.to_string());
        }
        let _op = self.inner.op_lock.lock().await;
        self.check_can_run()?;
        self.refresh_oauth_if_due().await?;
        self.new_cancel();
        self.run_until_settled(None).await;
        Ok(())
    }

    /// Queues a steering message (delivered after the current tool calls). Skills and
    /// templates are expanded; an extension command runs at once instead of being queued.
    pub fn steer(&self, text: &str, images: Vec<ImageContent>) {
        if self.spawn_if_extension_command(text) {
            return;
        }
        let text = self.expand_text(text);
        self.queue_steering(&text, images);
    }

    /// Queues a follow-up message (delivered when the agent would stop), expanded like
    /// [`AgentSession::steer`].
    pub fn follow_up(&self, text: &str, images: Vec<ImageContent>) {
        if self.spawn_if_extension_command(text) {
            return;
        }
        let text = self.expand_text(text);
        self.queue_follow_up(&text, images);
    }

    /// pi 1.6's `steer` / `followUp` from a client (RPC): an extension command is refused
    /// (it cannot be queued; send it as a prompt), the `input` event may consume or change
    /// the text, then it is expanded and queued. `Handled` when an input handler consumed
    /// it, `Queued` otherwise.
    pub async fn queue_input(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        behavior: StreamingBehavior,
        source: InputSource,
    ) -> Result<PromptDisposition, String> {
        if let Some(name) = self.extension_command_name(text) {
            return Err(format!(
                "Extension command \"/{name}\" cannot be queued. Use prompt() or execute the command when not streaming."
            ));
        }
        let Some((text, images)) = self.input_event(text, images, source).await else {
            return Ok(PromptDisposition::Handled);
        };
        let text = self.expand_text(&text);
        match behavior {
            StreamingBehavior::Steer => self.queue_steering(&text, images),
            StreamingBehavior::FollowUp => self.queue_follow_up(&text, images),
        }
        Ok(PromptDisposition::Queued)
    }

    fn queue_steering(&self, text: &str, images: Vec<ImageContent>) {
        self.inner.queues.push_steering(user_message(text, &images));
        self.emit_queue_update();
    }

    fn queue_follow_up(&self, text: &str, images: Vec<ImageContent>) {
        self.inner
            .queues
            .push_follow_up(user_message(text, &images));
        self.emit_queue_update();
    }

    /// A run needs a model with a key and a session that can save what it adds: a
    /// session file that accepts no appends (a newer format version) never runs a turn.
    fn check_can_run(&self) -> Result<(), String> {
        let st = self.state();
        if let (Some(reason), Some(file)) =
            (st.session.read_only_reason(), st.session.session_file())
        {
            return Err(crate::session::refusal::read_only_refusal(file, reason));
        }
        // pi runs on an "unknown" stand-in model whose key lookup fails.
        let Some(model) = &st.model else {
            return Err(crate::core::auth_guidance::no_api_key_for_selected_model());
        };
        if !st.registry.has_configured_auth(model) {
            return Err(missing_key_message(&model.provider));
        }
        Ok(())
    }

    fn last_assistant(&self) -> Option<AssistantMessage> {
        self.state().messages.iter().rev().find_map(|m| match m {
            AgentMessage::Assistant(a) => Some(a.clone()),
            _ => None,
        })
    }

    /// Runs the agent, then keeps going while pi would: retries, one overflow recovery,
    /// and queued messages after a threshold compaction.
    ///
    /// One cancellation scope covers the whole prompt: every pass, retry wait, compaction
    /// and the pause before a continuation listen to the token the caller installed, so an
    /// abort that lands between two passes still ends the prompt. Automatic passes are
    /// bounded: retries by `retry.maxRetries` (counted again only after a successful
    /// answer), overflow recovery by one per prompt, and continuations after a threshold
    /// compaction by the messages queued.
    async fn run_until_settled(&self, prompts: Option<Vec<AgentMessage>>) {
        let cancel = lock(&self.inner.cancel).clone();
        self.run_passes(prompts, &cancel).await;
        self.emit(SessionEvent::AgentSettled {
            aborted: cancel.is_cancelled(),
        });
    }

    /// Whether [`AgentSession::retry_if_transient`] will retry after a run that added
    /// `added` (pi 1.6's `agent_end.willRetry`): retries on, attempts left, not aborted,
    /// and the last answer a transient error.
    fn will_retry(
        &self,
        added: &[AgentMessage],
        cancel: &tokio_util::sync::CancellationToken,
    ) -> bool {
        if cancel.is_cancelled() {
            return false;
        }
        let st = self.state();
        if !st.auto_retry || st.retry_attempt >= st.settings.retry().max_retries {
            return false;
        }
        let window = st.model.as_ref().map_or(0, |m| m.context_window);
        added
            .iter()
            .rev()
            .find_map(|m| match m {
                AgentMessage::Assistant(a) => Some(a),
                _ => None,
            })
            .is_some_and(|last| {
                last.stop_reason == StopReason::Error
                    && last
                        .error_message
                        .as_deref()
                        .is_some_and(is_retryable_error)
                    && !is_context_overflow(last, window)
            })
    }

    async fn run_passes(
        &self,
        prompts: Option<Vec<AgentMessage>>,
        cancel: &tokio_util::sync::CancellationToken,
    ) {
        let cancel = cancel.clone();
        self.state().overflow_recovery_attempted = false;
        let mut prompts = prompts;
        loop {
            let Ok(added) = self.run_agent(prompts.take(), &cancel).await else {
                return;
            };
            let last = added.iter().rev().find_map(|m| match m {
                AgentMessage::Assistant(a) => Some(a.clone()),
                _ => None,
            });
            let Some(last) = last else { return };
            if cancel.is_cancelled() {
                self.end_retry_if_any(false, Some("Request aborted".into()));
                return;
            }
            match self.retry_if_transient(&last, &cancel).await {
                Next::Continue => continue,
                Next::Done => {}
            }
            if cancel.is_cancelled() {
                return;
            }
            match self.auto_compact_if_needed(&last, false, &cancel).await {
                Next::Continue => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                        _ = cancel.cancelled() => return,
                    }
                }
                Next::Done => return,
            }
        }
    }

    fn end_retry_if_any(&self, success: bool, final_error: Option<String>) {
        let attempt = {
            let mut st = self.state();
            std::mem::take(&mut st.retry_attempt)
        };
        if attempt > 0 {
            self.emit(SessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            });
        }
    }

    /// pi's automatic retry of a transient error: the error answer is dropped from the
    /// agent's messages (it stays in the file) and the run continues after a backoff.
    async fn retry_if_transient(
        &self,
        last: &AssistantMessage,
        run_cancel: &tokio_util::sync::CancellationToken,
    ) -> Next {
        let (enabled, settings, window) = {
            let st = self.state();
            (
                st.auto_retry,
                st.settings.retry(),
                st.model.as_ref().map_or(0, |m| m.context_window),
            )
        };
        let retryable = last.stop_reason == StopReason::Error
            && last
                .error_message
                .as_deref()
                .is_some_and(is_retryable_error)
            && !is_context_overflow(last, window);
        if !retryable || !enabled {
            if last.stop_reason != StopReason::Error {
                self.end_retry_if_any(true, None);
            } else if self.state().retry_attempt > 0 {
                self.end_retry_if_any(false, last.error_message.clone());
            }
            return Next::Done;
        }
        let attempt = {
            let mut st = self.state();
            st.retry_attempt += 1;
            st.retry_attempt
        };
        if attempt > settings.max_retries {
            let mut st = self.state();
            st.retry_attempt = 0;
            drop(st);
            self.emit(SessionEvent::AutoRetryEnd {
                success: false,
                attempt: attempt - 1,
                final_error: last.error_message.clone(),
            });
            return Next::Done;
        }
        let delay_ms = settings
            .base_delay_ms
            .saturating_mul(1u64 << (attempt - 1).min(20))
            .min(settings.max_agent_delay_ms);
        self.emit(SessionEvent::AutoRetryStart {
            attempt,
            max_attempts: settings.max_retries,
            delay_ms,
            error_message: last
                .error_message
                .clone()
                .unwrap_or_else(|| "Unknown error".into()),
        });
        {
            let mut st = self.state();
            if matches!(st.messages.last(), Some(AgentMessage::Assistant(_))) {
                st.messages.pop();
            }
        }
        let token = tokio_util::sync::CancellationToken::new();
        *lock(&self.inner.retry_cancel) = Some(token.clone());
        let waited = tokio::select! {
            r = sleep_cancellable(delay_ms, &token) => r,
            _ = run_cancel.cancelled() => false,
        };
        lock(&self.inner.retry_cancel).take();
        if !waited {
            let attempt = std::mem::take(&mut self.state().retry_attempt);
            self.emit(SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: Some("Retry cancelled".into()),
            });
            return Next::Done;
        }
        Next::Continue
    }

    /// pi's automatic compaction after a run (or before a prompt, `include_aborted`).
    pub(crate) async fn auto_compact_if_needed(
        &self,
        last: &AssistantMessage,
        include_aborted: bool,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Next {
        let decision = {
            let st = self.state();
            let settings = CompactionSettings {
                enabled: st.auto_compaction,
                reserve_tokens: st.settings.compaction_reserve_tokens(model_key(&st.model)),
                keep_recent_tokens: st
                    .settings
                    .compaction_keep_recent_tokens(model_key(&st.model)),
                ..CompactionSettings::default()
            };
            let window = st.model.as_ref().map_or(0, |m| m.context_window);
            let same_model = st
                .model
                .as_ref()
                .is_some_and(|m| m.provider == last.provider && m.id == last.model);
            let latest_compaction_ms = latest_compaction_ms(&st.session);
            check_auto_compaction(&AutoCompactionCheck {
                settings: &settings,
                model: st.model.as_ref(),
                assistant: last,
                is_context_overflow: same_model && is_context_overflow(last, window),
                overflow_recovery_attempted: st.overflow_recovery_attempted,
                latest_compaction_ms,
                agent_messages: &st.messages,
                include_aborted,
            })
        };
        match decision {
            AutoCompaction::None => Next::Done,
            AutoCompaction::OverflowRecoveryExhausted => {
                let message = self.overflow_exhausted_message();
                self.emit(SessionEvent::CompactionEnd {
                    reason: CompactionReason::Overflow,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(message),
                });
                Next::Done
            }
            AutoCompaction::Overflow => {
                // A rejected request is retried once after compacting. A reply that was
                // accepted but reported more input than the window (a silent overflow) is
                // kept: the compaction is for the next prompt, and the model is not asked
                // again — continuing from its own answer would only repeat the request.
                let will_retry = last.stop_reason == StopReason::Error;
                {
                    let mut st = self.state();
                    st.overflow_recovery_attempted = true;
                    if will_retry
                        && matches!(st.messages.last(), Some(AgentMessage::Assistant(a)) if a.stop_reason == StopReason::Error)
                    {
                        st.messages.pop();
                    }
                }
                if !will_retry {
                    self.emit(SessionEvent::Notice {
                        message: self.silent_overflow_notice(last),
                    });
                }
                let ok = self
                    .run_compaction(CompactionReason::Overflow, None, will_retry, cancel)
                    .await
                    .is_ok();
                if ok && will_retry {
                    let mut st = self.state();
                    if matches!(st.messages.last(), Some(AgentMessage::Assistant(a)) if a.stop_reason == StopReason::Error)
                    {
                        st.messages.pop();
                    }
                    Next::Continue
                } else {
                    Next::Done
                }
            }
            AutoCompaction::Threshold { .. } => {
                let ok = self
                    .run_compaction(CompactionReason::Threshold, None, false, cancel)
                    .await
                    .is_ok();
                if ok && !self.inner.queues.is_empty() {
                    Next::Continue
                } else {
                    Next::Done
                }
            }
        }
    }

    /// pi's text for an overflow that survived its one recovery, plus what to change.
    fn overflow_exhausted_message(&self) -> String {
        let st = self.state();
        let Some(model) = st.model.as_ref() else {
            return crate::compaction::trigger::OVERFLOW_RECOVERY_EXHAUSTED.to_string();
        };
        format!(
            "{} The request to {}/{} still did not fit after compacting; its contextWindow is \
             configured as {} tokens. Start a new session (/new) or go back with /tree, switch \
             to a model with a larger context window, or, if the provider's real window differs, \
             correct contextWindow for this model in {}.",
            crate::compaction::trigger::OVERFLOW_RECOVERY_EXHAUSTED,
            model.provider,
            model.id,
            model.context_window,
            self.paths().models().display(),
        )
    }

    /// Said when an accepted reply reports more input than the model's window holds:
    /// usually a `contextWindow` set too small for the model (or a gateway's usage).
    fn silent_overflow_notice(&self, last: &AssistantMessage) -> String {
        let window = self.state().model.as_ref().map_or(0, |m| m.context_window);
        format!(
            "{}/{} reported {} input tokens, more than its configured contextWindow of {} tokens: \
             compacting the session. If the model's real context window is larger, correct \
             contextWindow in {}.",
            last.provider,
            last.model,
            last.usage.input + last.usage.cache_read,
            window,
            self.paths().models().display(),
        )
    }

    /// One run of the agent loop. Returns the messages it added.
    async fn run_agent(
        &self,
        prompts: Option<Vec<AgentMessage>>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<AgentMessage>, agent::ContinueError> {
        // Later turns of a long session may outlive the token; a failure here shows up
        // as the provider's missing-key error on the assistant message.
        let _ = self.refresh_oauth_if_due().await;
        let (config, mut messages) = {
            let mut st = self.state();
            st.streaming = true;
            let Some(model) = st.model.clone() else {
                st.streaming = false;
                return Ok(Vec::new());
            };
            let auth = super::client::with_attribution(
                st.registry.request_auth(&model).unwrap_or_default(),
                &model,
                st.settings.install_telemetry(),
            );
            let (on_payload, on_response) = provider_hooks(st.extensions.as_ref());
            let inner = Arc::downgrade(&self.inner);
            let client = ProviderClient {
                model: model.clone(),
                auth,
                budgets: budgets_from_settings(st.settings.thinking_budgets()),
                retry: provider_retry_policy(&st.settings.retry()),
                session_id: Some(st.session.session_id().to_string()),
                cache_retention: cache_retention_from_env(),
                http: shared_client(),
                transport: Transport::parse(st.settings.transport()),
                on_retry: Some(Arc::new(move |notice| {
                    if let Some(inner) = inner.upgrade() {
                        emit_to(
                            &inner,
                            SessionEvent::ProviderRetry {
                                attempt: notice.attempt,
                                max_attempts: notice.max_attempts,
                                delay_ms: notice.delay_ms,
                                error_message: notice.error,
                            },
                        );
                    }
                })),
                on_payload,
                on_response,
            };
            let config = AgentConfig {
                thinking: st.thinking,
                system_prompt: st
                    .system_prompt_override
                    .clone()
                    .unwrap_or_else(|| st.system_prompt.clone()),
                tools: st.tools.clone(),
                tool_execution: ExecutionMode::Parallel,
                client: Arc::new(client),
                hooks: st.hooks.clone(),
                model,
            };
            (config, st.messages.clone())
        };

        let inner = self.inner.clone();
        let session = self.clone();
        let run_cancel = cancel.clone();
        let mut sink = move |mut event: AgentEvent| {
            if let AgentEvent::AgentEnd {
                messages,
                will_retry,
            } = &mut event
            {
                *will_retry = session.will_retry(messages, &run_cancel);
            }
            session.on_agent_event(&event);
            session.notify_extensions(&event);
            // As pi: a successful answer ends a retry sequence right after listeners saw
            // its `message_end` (before `turn_end`).
            let answered = matches!(
                &event,
                AgentEvent::MessageEnd { message: AgentMessage::Assistant(a) }
                    if a.stop_reason != StopReason::Error
            );
            // The run is over once `agent_end` is out: whoever reacts to it with a new
            // prompt must find the session idle (that prompt then waits for this one's
            // retry or compaction on the operation lock), not be refused as "already
            // processing" because the loop has not returned yet.
            if matches!(event, AgentEvent::AgentEnd { .. }) {
                session.state().streaming = false;
            }
            emit_to(&inner, SessionEvent::Agent(event));
            if answered {
                session.end_retry_if_any(true, None);
            }
        };
        let added = match prompts {
            Some(p) => Ok(agent::run(
                p,
                &mut messages,
                &config,
                &self.inner.queues,
                &mut sink,
                cancel,
            )
            .await),
            None => {
                agent::run_continue(
                    &mut messages,
                    &config,
                    &self.inner.queues,
                    &mut sink,
                    cancel,
                )
                .await
            }
        };
        let added = match added {
            Ok(added) => added,
            Err(refused) => {
                self.state().streaming = false;
                return Err(refused);
            }
        };
        {
            let mut st = self.state();
            st.messages = messages;
            st.streaming = false;
        }
        self.flush_pending_bash();
        Ok(added)
    }

    /// Persistence and bookkeeping for one agent event (before subscribers see it).
    fn on_agent_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart => self.checkpoint_run_started(),
            AgentEvent::MessageUpdate {
                event: crate::ai::stream::StreamEvent::ToolCallStart { name, .. },
            } if name == "bash" => self.checkpoint_bash_coming(),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => self.checkpoint_tool_started(tool_call_id, tool_name, args),
            AgentEvent::MessageStart {
                message: AgentMessage::User(_),
            } => self.emit_queue_update_if_changed(),
            AgentEvent::MessageEnd { message } => {
                let result = {
                    let mut st = self.state();
                    st.messages.push(message.clone());
                    match message {
                        AgentMessage::Custom(c) => st
                            .session
                            .append_custom_message_entry(
                                &c.custom_type,
                                c.content.clone(),
                                c.display,
                                c.details.clone(),
                            )
                            .map(|_| ()),
                        AgentMessage::User(_)
                        | AgentMessage::Assistant(_)
                        | AgentMessage::ToolResult(_) => {
                            st.session.append_message(message.clone()).map(|_| ())
                        }
                        _ => Ok(()),
                    }
                };
                if let Err(e) = result {
                    self.emit(SessionEvent::Notice {
                        message: format!("The session file could not be updated: {e}"),
                    });
                }
                if let AgentMessage::ToolResult(r) = message {
                    self.checkpoint_tool_finished(&r.tool_call_id, &r.tool_name);
                }
            }
            _ => {}
        }
    }

    /// Adds `!cmd` results recorded while streaming, now that the run is over.
    pub(crate) fn flush_pending_bash(&self) {
        let mut st = self.state();
        let pending = std::mem::take(&mut st.pending_bash);
        for message in pending {
            let message = AgentMessage::BashExecution(message);
            st.messages.push(message.clone());
            if let Err(e) = st.session.append_message(message) {
                drop(st);
                self.emit(SessionEvent::Notice {
                    message: format!("The session file could not be updated: {e}"),
                });
                st = self.state();
            }
        }
    }
}

/// When the latest compaction on the current path was made (walks back from the leaf to
/// it and parses only that entry).
fn latest_compaction_ms(session: &SessionManager) -> Option<i64> {
    let id = session.walk_back(None, |head| {
        if head.kind == EntryKind::Compaction {
            ControlFlow::Break(head.id)
        } else {
            ControlFlow::Continue(())
        }
    })?;
    match session.entry(&id)? {
        SessionEntry::Compaction(c) => Some(crate::messages::iso_to_ms(&c.timestamp)),
        _ => None,
    }
}

/// The provider hooks that send `before_provider_request` / `after_provider_response` to
/// the extensions subscribed to them (none without subscribers, so requests are not
/// delayed for nothing).
fn provider_hooks(
    host: Option<&crate::extensions::ExtensionHost>,
) -> (
    Option<crate::ai::providers::PayloadHook>,
    Option<crate::ai::providers::ResponseHook>,
) {
    use crate::extensions::EventName;
    let Some(host) = host else {
        return (None, None);
    };
    let on_payload = host
        .has_subscribers(EventName::BeforeProviderRequest)
        .then(|| {
            let host = host.clone();
            let hook: crate::ai::providers::PayloadHook = Arc::new(move |payload| {
                let host = host.clone();
                Box::pin(async move { host.before_provider_request(payload).await })
            });
            hook
        });
    let on_response = host
        .has_subscribers(EventName::AfterProviderResponse)
        .then(|| {
            let host = host.clone();
            let hook: crate::ai::providers::ResponseHook = Arc::new(move |status, headers| {
                let host = host.clone();
                Box::pin(async move { host.after_provider_response(status, &headers).await })
            });
            hook
        });
    (on_payload, on_response)
}
