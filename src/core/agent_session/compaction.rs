//! Compaction inside a session: `/compact [instructions]` and the automatic threshold and
//! overflow paths share [`AgentSession::run_compaction`]. The full history stays in the
//! file; a `compaction` entry is appended and the agent's messages are rebuilt from it.
//!
//! Extensions see `session_before_compact` first and may cancel or write the summary
//! themselves (stored with `fromHook: true`, no model call); `session_compact` follows
//! every stored compaction.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::client::{
    ProviderClient, budgets_from_settings, cache_retention_from_env, provider_retry_policy,
    retry_callback,
};
use super::{AgentSession, emit_to};
use crate::ai::auth::missing_key_message;
use crate::ai::http::shared_client;
use crate::ai::providers::Transport;
use crate::compaction::CompactionDetails;
use crate::compaction::prompts::summary_reasoning;
use crate::compaction::{
    CompactionError, CompactionResult, CompactionSettings, compact, prepare_compaction,
};
use crate::core::events::{CompactionReason, SessionEvent, SummarizationSource};
use crate::extensions::{CompactDecision, EventName, ExtensionCompaction};
use crate::session::entry::SessionEntry;

/// pi's JSON of a compaction result (`compaction_end.result`, RPC `compact`).
/// `(provider, id)` of the session's model, for per-model settings
/// (`compaction.modelOverrides`).
pub(super) fn model_key(model: &Option<crate::ai::model::Model>) -> Option<(&str, &str)> {
    model.as_ref().map(|m| (m.provider.as_str(), m.id.as_str()))
}

pub fn compaction_result_json(r: &CompactionResult) -> Value {
    let mut v = json!({
        "summary": r.summary,
        "firstKeptEntryId": r.first_kept_entry_id,
        "tokensBefore": r.tokens_before,
    });
    if let Some(after) = r.estimated_tokens_after {
        v["estimatedTokensAfter"] = Value::from(after);
    }
    v["details"] = serde_json::to_value(&r.details).unwrap_or(Value::Null);
    v
}

impl AgentSession {
    /// `/compact [instructions]`: aborts what runs, then summarizes older context.
    pub async fn compact(&self, instructions: Option<&str>) -> Result<CompactionResult, String> {
        self.abort();
        let _op = self.inner.op_lock.lock().await;
        let cancel = self.new_cancel();
        self.run_compaction(CompactionReason::Manual, instructions, false, &cancel)
            .await
    }

    /// A client for summarization requests with the current model whose retries are
    /// announced as pi 1.6's `summarization_retry_scheduled` and, once the wait is over,
    /// `summarization_retry_attempt_start` for `source`. Call
    /// [`SummaryRetries::finish`] when the summary is done.
    pub(crate) fn summary_client_for(
        &self,
        source: SummarizationSource,
    ) -> Result<(ProviderClient, SummaryRetries), String> {
        let mut client = self.summary_client()?;
        let retried = Arc::new(AtomicBool::new(false));
        // A retry scheduled whose `attempt_start` is still to be announced.
        let pending = Arc::new(AtomicBool::new(false));
        let inner = Arc::downgrade(&self.inner);
        let (flag, waiting) = (retried.clone(), pending.clone());
        client.on_retry = Some(retry_callback(move |notice| {
            let Some(inner) = inner.upgrade() else { return };
            flag.store(true, Ordering::Relaxed);
            waiting.store(true, Ordering::Release);
            emit_to(
                &inner,
                SessionEvent::SummarizationRetryScheduled {
                    attempt: notice.attempt,
                    max_attempts: notice.max_attempts,
                    delay_ms: notice.delay_ms,
                    error_message: notice.error,
                },
            );
            // The provider layer waits `delay_ms`, then sends the request again.
            let inner = Arc::downgrade(&inner);
            let waiting = waiting.clone();
            let delay = std::time::Duration::from_millis(notice.delay_ms);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                if let Some(inner) = inner.upgrade()
                    && waiting.swap(false, Ordering::AcqRel)
                {
                    emit_to(
                        &inner,
                        SessionEvent::SummarizationRetryAttemptStart { source },
                    );
                }
            });
        }));
        Ok((
            client,
            SummaryRetries {
                retried,
                pending,
                source,
            },
        ))
    }

    /// A client for summarization requests with the current model.
    pub(crate) fn summary_client(&self) -> Result<ProviderClient, String> {
        let st = self.state();
        let model = st
            .model
            .clone()
            .ok_or_else(crate::core::auth_guidance::no_api_key_for_selected_model)?;
        if !st.registry.has_configured_auth(&model) {
            return Err(missing_key_message(&model.provider));
        }
        let auth = st.registry.request_auth(&model)?;
        Ok(ProviderClient {
            auth,
            budgets: budgets_from_settings(st.settings.thinking_budgets()),
            retry: provider_retry_policy(&st.settings.retry()),
            session_id: Some(st.session.session_id().to_string()),
            cache_retention: cache_retention_from_env(),
            http: shared_client(),
            transport: Transport::parse(st.settings.transport()),
            on_retry: None,
            on_payload: None,
            on_response: None,
            model,
        })
    }

    /// Prepares, summarizes and records a compaction. Emits `compaction_start` / `_end`.
    pub(crate) async fn run_compaction(
        &self,
        reason: CompactionReason,
        instructions: Option<&str>,
        will_retry: bool,
        cancel: &CancellationToken,
    ) -> Result<CompactionResult, String> {
        self.emit(SessionEvent::CompactionStart { reason });
        self.state().compacting = true;
        let outcome = self.compaction_inner(reason, instructions, cancel).await;
        self.state().compacting = false;
        let failure_prefix = match reason {
            CompactionReason::Manual => "Compaction failed",
            CompactionReason::Threshold => "Auto-compaction failed",
            CompactionReason::Overflow => "Context overflow recovery failed",
        };
        match outcome {
            Ok((result, result_json)) => {
                self.emit(SessionEvent::CompactionEnd {
                    reason,
                    result: Some(result_json),
                    aborted: false,
                    will_retry,
                    error_message: None,
                });
                Ok(result)
            }
            Err(Failure::Cancelled) => {
                self.emit(SessionEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted: true,
                    will_retry: false,
                    error_message: None,
                });
                Err("Compaction cancelled".into())
            }
            Err(Failure::Plain(message)) => {
                // As pi: a `/compact` that cannot run says why, prefixed ("Compaction
                // failed: Already compacted"); an automatic one with nothing to do ends
                // without a message. The caller (an RPC `compact`) gets the bare reason.
                let nothing_to_do = matches!(
                    message.as_str(),
                    "Already compacted" | "Nothing to compact (session too small)"
                );
                let shown = (reason == CompactionReason::Manual || !nothing_to_do)
                    .then(|| format!("{failure_prefix}: {message}"));
                self.emit(SessionEvent::CompactionEnd {
                    reason,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: shown,
                });
                Err(message)
            }
        }
    }

    /// The compaction itself; the result comes with its JSON (`compaction_end.result`),
    /// which keeps an extension's own `details`.
    async fn compaction_inner(
        &self,
        reason: CompactionReason,
        instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<(CompactionResult, Value), Failure> {
        self.refresh_oauth_if_due().await.map_err(Failure::Plain)?;
        let (client, retries) = self
            .summary_client_for(SummarizationSource::Compaction(reason))
            .map_err(Failure::Plain)?;
        let listening = self.extensions_listen(EventName::SessionBeforeCompact);
        let (preparation, reasoning, branch) = {
            let st = self.state();
            let settings = CompactionSettings {
                enabled: st.auto_compaction,
                reserve_tokens: st.settings.compaction_reserve_tokens(model_key(&st.model)),
                keep_recent_tokens: st
                    .settings
                    .compaction_keep_recent_tokens(model_key(&st.model)),
                ..CompactionSettings::default()
            };
            let path = st.session.path(None);
            let Some(prep) = prepare_compaction(&path, &settings) else {
                let err = if matches!(path.last(), Some(SessionEntry::Compaction(_))) {
                    CompactionError::AlreadyCompacted
                } else {
                    CompactionError::NothingToCompact
                };
                return Err(Failure::Plain(err.to_string()));
            };
            let reasoning = summary_reasoning(client.model.reasoning, st.thinking);
            // Only copied when an extension will look at it (it can be large).
            let branch: Vec<SessionEntry> = if listening {
                path.iter().map(|e| (*e).clone()).collect()
            } else {
                Vec::new()
            };
            (prep.into_owned(), reasoning, branch)
        };
        let decision = match self.extension_host() {
            Some(host) if listening => {
                host.session_before_compact(&preparation, &branch, instructions, cancel)
                    .await
            }
            _ => CompactDecision::Default,
        };
        let (mut result, details, from_hook) = match decision {
            CompactDecision::Cancel => return Err(Failure::Cancelled),
            CompactDecision::Custom(custom) => {
                let ExtensionCompaction {
                    summary,
                    first_kept_entry_id,
                    tokens_before,
                    details,
                } = custom;
                let typed = details
                    .clone()
                    .and_then(|d| serde_json::from_value::<CompactionDetails>(d).ok())
                    .unwrap_or_default();
                let result = CompactionResult {
                    summary,
                    first_kept_entry_id,
                    tokens_before,
                    details: typed,
                    estimated_tokens_after: None,
                };
                (result, details, true)
            }
            CompactDecision::Default => {
                let result = compact(
                    &preparation,
                    &client,
                    instructions,
                    reasoning,
                    cancel.clone(),
                )
                .await;
                retries.finish(self);
                let result = result.map_err(|e| match e {
                    CompactionError::Cancelled(_) => Failure::Cancelled,
                    other => Failure::Plain(other.to_string()),
                })?;
                let details = serde_json::to_value(&result.details).ok();
                (result, details, false)
            }
        };
        if cancel.is_cancelled() {
            return Err(Failure::Cancelled);
        }
        let entry = {
            let mut st = self.state();
            let id = st
                .session
                .append_compaction(
                    &result.summary,
                    &result.first_kept_entry_id,
                    result.tokens_before,
                    details.clone(),
                    Some(from_hook),
                )
                .map_err(|e| Failure::Plain(e.to_string()))?;
            match st.session.entry(&id) {
                Some(SessionEntry::Compaction(c)) => Some(c.clone()),
                _ => None,
            }
        };
        self.reload_messages();
        result.estimated_tokens_after = Some(
            self.state()
                .messages
                .iter()
                .map(crate::compaction::tokens::estimate_tokens)
                .sum(),
        );
        if let (Some(host), Some(entry)) = (self.extension_host(), entry) {
            host.session_compact(&entry, from_hook);
        }
        let mut json = compaction_result_json(&result);
        json["details"] = details.unwrap_or(Value::Null);
        Ok((result, json))
    }
}

enum Failure {
    Cancelled,
    Plain(String),
}

/// Whether a summary's requests were retried (see [`AgentSession::summary_client_for`]).
pub(crate) struct SummaryRetries {
    retried: Arc<AtomicBool>,
    pending: Arc<AtomicBool>,
    source: SummarizationSource,
}

impl SummaryRetries {
    /// `summarization_retry_finished` once the summary is done, if it was retried (after
    /// the last `attempt_start`, should its timer not have fired yet).
    pub(crate) fn finish(&self, session: &AgentSession) {
        if self.pending.swap(false, Ordering::AcqRel) {
            session.emit(SessionEvent::SummarizationRetryAttemptStart {
                source: self.source,
            });
        }
        if self.retried.load(Ordering::Relaxed) {
            session.emit(SessionEvent::SummarizationRetryFinished);
        }
    }
}
