//! Events an `AgentSession` emits: the agent loop's events plus session-level ones
//! (queue changes, compaction, automatic retries), and their JSON form — pi's
//! `AgentSessionEvent` shapes, used by `--mode json` and RPC mode.

use serde_json::{Value, json};

use crate::agent::{AgentEvent, AgentEventEncoder};

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

impl CompactionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Manual => "manual",
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
        }
    }
}

/// What a summarization retry is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarizationSource {
    Compaction(CompactionReason),
    BranchSummary,
}

/// Everything an `AgentSession` reports.
// Agent events are by far the most frequent variant; boxing them would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    Agent(AgentEvent),
    /// The pending steering and follow-up messages (texts), whenever they change.
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd {
        reason: CompactionReason,
        /// pi's `CompactionResult` JSON (`summary`, `firstKeptEntryId`, `tokensBefore`,
        /// `details`), absent when it failed or was cancelled.
        result: Option<Value>,
        aborted: bool,
        will_retry: bool,
        error_message: Option<String>,
    },
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        final_error: Option<String>,
    },
    /// pi 1.6's `agent_settled`: the prompt, with every automatic pass after it (retries,
    /// overflow recovery, compaction, queued messages), is over; nothing continues on its
    /// own. `aborted` when it ended because it was aborted.
    AgentSettled {
        aborted: bool,
    },
    /// An extension appended a custom entry (`pi.appendEntry`): pi 1.6's
    /// `entry_appended`, with the entry as the session file stores it.
    EntryAppended {
        entry: Value,
    },
    /// A compaction or branch summary request failed and is retried after `delay_ms`
    /// (pi 1.6's `summarization_retry_scheduled`).
    SummarizationRetryScheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// The retried summary request starts: `source` is `compaction` (with its `reason`)
    /// or `branchSummary` (pi 1.6's `summarization_retry_attempt_start`).
    SummarizationRetryAttemptStart {
        source: SummarizationSource,
    },
    /// The retries of one summary are over (pi 1.6's `summarization_retry_finished`).
    SummarizationRetryFinished,
    /// The provider layer retries a request that failed before streaming (not part of
    /// pi's JSON event stream; shown by the UI).
    ProviderRetry {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// Something the user should know that is not an error of the run (e.g. the session
    /// file could not be written). Not part of pi's JSON event stream.
    Notice {
        message: String,
    },
    /// Something odd found in a session file when it was opened (after `/resume` or
    /// RPC `switch_session`; see `AgentSession::emit_load_warnings`). pi-rs's
    /// `session_load_warning` in RPC mode; print and JSON mode write it to stderr.
    SessionLoadWarning {
        warning: crate::session::error::LoadWarning,
    },
    /// The model was switched (by `/model`, Ctrl+P or RPC).
    ModelChanged,
    /// The thinking level changed (pi's `thinking_level_changed`).
    ThinkingLevelChanged {
        level: crate::ai::model::ThinkingLevel,
    },
    /// The session's name was set (pi's `session_info_changed`); `None` when cleared.
    SessionInfoChanged {
        name: Option<String>,
    },
    /// The agent's messages were rebuilt from the session (after `/tree` navigation).
    ContextRebuilt,
    /// An extension asked to quit (`ctx.shutdown()`); front ends do so once idle.
    ShutdownRequested,
    /// A different session is now active (`/new`, `/resume`, `/fork`, `/clone`).
    SessionReplaced,
    /// A branch summary is being generated (navigation with summarize).
    BranchSummaryStart,
    BranchSummaryEnd {
        aborted: bool,
        error_message: Option<String>,
    },
    /// An extension failed (crashed, timed out, answered with an error) or a resource it
    /// relies on could not be used. pi's `extension_error`.
    ExtensionError {
        /// The extension's file (or the skill file, or `command:<name>`).
        extension_path: String,
        /// The event, tool or command it was handling (`process` when none).
        event: String,
        error: String,
    },
}

impl From<AgentEvent> for SessionEvent {
    fn from(e: AgentEvent) -> Self {
        SessionEvent::Agent(e)
    }
}

/// pi-rs's `session_load_warning` event: `kind` (see `LoadWarning::kind`), the session
/// file, the message a user reads and, for a file moved aside, where it went.
fn load_warning_json(warning: &crate::session::error::LoadWarning) -> Value {
    let mut v = json!({
        "type": "session_load_warning",
        "kind": warning.kind(),
        "sessionFile": warning.path().display().to_string(),
        "message": warning.to_string(),
    });
    if let crate::session::error::LoadWarning::InvalidHeader { backup, .. } = warning {
        v["backupFile"] = Value::from(backup.display().to_string());
    }
    v
}

/// Turns events into pi 1.6's JSON lines: the agent loop's through
/// [`AgentEventEncoder::encode_wire`] (delta-only `message_update` with `usage`), the
/// session's own here.
#[derive(Debug, Default)]
pub struct EventJsonEncoder {
    agent: AgentEventEncoder,
}

impl EventJsonEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The JSON object for one event, or `None` for events pi's stream does not have.
    pub fn encode(&mut self, event: &SessionEvent) -> Option<Value> {
        Some(match event {
            SessionEvent::Agent(e) => self.agent.encode_wire(e),
            SessionEvent::AgentSettled { aborted } => {
                json!({"type": "agent_settled", "aborted": aborted})
            }
            SessionEvent::EntryAppended { entry } => {
                json!({"type": "entry_appended", "entry": entry})
            }
            SessionEvent::SummarizationRetryScheduled {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => json!({
                "type": "summarization_retry_scheduled", "attempt": attempt,
                "maxAttempts": max_attempts, "delayMs": delay_ms, "errorMessage": error_message,
            }),
            SessionEvent::SummarizationRetryAttemptStart { source } => match source {
                SummarizationSource::Compaction(reason) => json!({
                    "type": "summarization_retry_attempt_start", "source": "compaction",
                    "reason": reason.as_str(),
                }),
                SummarizationSource::BranchSummary => json!({
                    "type": "summarization_retry_attempt_start", "source": "branchSummary",
                }),
            },
            SessionEvent::SummarizationRetryFinished => {
                json!({"type": "summarization_retry_finished"})
            }
            SessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => json!({"type": "queue_update", "steering": steering, "followUp": follow_up}),
            SessionEvent::CompactionStart { reason } => {
                json!({"type": "compaction_start", "reason": reason.as_str()})
            }
            SessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                // pi's key order: `result` (left out when there is none) before `aborted`.
                let mut v = json!({"type": "compaction_end", "reason": reason.as_str()});
                if let Some(r) = result {
                    v["result"] = r.clone();
                }
                v["aborted"] = Value::from(*aborted);
                v["willRetry"] = Value::from(*will_retry);
                if let Some(e) = error_message {
                    v["errorMessage"] = Value::from(e.as_str());
                }
                v
            }
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => json!({
                "type": "auto_retry_start", "attempt": attempt, "maxAttempts": max_attempts,
                "delayMs": delay_ms, "errorMessage": error_message,
            }),
            SessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                let mut v =
                    json!({"type": "auto_retry_end", "success": success, "attempt": attempt});
                if let Some(e) = final_error {
                    v["finalError"] = Value::from(e.as_str());
                }
                v
            }
            SessionEvent::ThinkingLevelChanged { level } => {
                json!({"type": "thinking_level_changed", "level": level.as_str()})
            }
            SessionEvent::SessionInfoChanged { name } => {
                let mut v = json!({"type": "session_info_changed"});
                if let Some(name) = name {
                    v["name"] = Value::from(name.as_str());
                }
                v
            }
            SessionEvent::SessionLoadWarning { warning } => load_warning_json(warning),
            SessionEvent::ProviderRetry { .. }
            | SessionEvent::Notice { .. }
            | SessionEvent::ModelChanged
            | SessionEvent::ContextRebuilt
            | SessionEvent::ShutdownRequested
            | SessionEvent::SessionReplaced => return None,
            SessionEvent::BranchSummaryStart => json!({"type": "branch_summary_start"}),
            SessionEvent::ExtensionError {
                extension_path,
                event,
                error,
            } => json!({
                "type": "extension_error", "extensionPath": extension_path,
                "event": event, "error": error,
            }),
            SessionEvent::BranchSummaryEnd {
                aborted,
                error_message,
            } => {
                let mut v = json!({"type": "branch_summary_end", "aborted": aborted});
                if let Some(e) = error_message {
                    v["errorMessage"] = Value::from(e.as_str());
                }
                v
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::AssistantMessage;
    use crate::ai::stream::StreamEvent;
    use crate::messages::AgentMessage;

    #[test]
    fn message_update_carries_only_the_delta_and_usage_like_pi_16() {
        let mut enc = EventJsonEncoder::new();
        let start = AssistantMessage {
            provider: "mock".into(),
            ..Default::default()
        };
        enc.encode(&SessionEvent::Agent(AgentEvent::MessageStart {
            message: AgentMessage::Assistant(start),
        }));
        enc.encode(
            &AgentEvent::MessageUpdate {
                event: StreamEvent::TextStart { content_index: 0 },
            }
            .into(),
        );
        let v = enc
            .encode(
                &AgentEvent::MessageUpdate {
                    event: StreamEvent::TextDelta {
                        content_index: 0,
                        delta: "Hi".into(),
                    },
                }
                .into(),
            )
            .unwrap();
        assert_eq!(
            v,
            json!({
                "type": "message_update",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                    "totalTokens": 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                        "total": 0}},
                "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "Hi"},
            })
        );
        let v = enc
            .encode(
                &AgentEvent::MessageUpdate {
                    event: StreamEvent::ToolCallStart {
                        content_index: 1,
                        id: "call_1".into(),
                        name: "read".into(),
                    },
                }
                .into(),
            )
            .unwrap();
        assert_eq!(
            v["assistantMessageEvent"],
            json!({"type": "toolcall_start", "contentIndex": 1, "id": "call_1", "toolName": "read"})
        );
        let settled = enc.encode(&SessionEvent::AgentSettled { aborted: true });
        assert_eq!(
            settled,
            Some(json!({"type": "agent_settled", "aborted": true}))
        );
    }
}
