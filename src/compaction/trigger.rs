//! When to compact automatically: pi's `_checkCompaction`, as a pure decision.
//!
//! The agent layer calls [`check_auto_compaction`] after every agent run (with the last
//! assistant message) and before sending a prompt (then also for aborted messages), and
//! acts on the answer: compact and continue for an overflow, compact and stop for the
//! threshold. Deciding whether an error *is* a context overflow belongs to the provider
//! layer; its verdict is an input here.

use crate::ai::message::{AssistantMessage, StopReason};
use crate::ai::model::Model;
use crate::compaction::settings::CompactionSettings;
use crate::compaction::tokens::{estimate_context_tokens, should_compact};
use crate::messages::AgentMessage;

/// Shown when a second overflow follows an overflow recovery in the same prompt (pi's text).
pub const OVERFLOW_RECOVERY_EXHAUSTED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// What the agent should do about the context after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoCompaction {
    /// Nothing to do.
    None,
    /// The model rejected the request as too long: drop the error message from the
    /// agent's messages (it stays in the file), compact, then continue the run.
    Overflow,
    /// An overflow again, after one recovery already ran for this prompt: give up and show
    /// [`OVERFLOW_RECOVERY_EXHAUSTED`].
    OverflowRecoveryExhausted,
    /// The context is over `contextWindow - reserveTokens`: compact, do not continue.
    Threshold { context_tokens: u64 },
}

/// Inputs of [`check_auto_compaction`].
#[derive(Debug, Clone, Copy)]
pub struct AutoCompactionCheck<'a> {
    pub settings: &'a CompactionSettings,
    /// The current model (`None`: no model selected, context window 0).
    pub model: Option<&'a Model>,
    /// The assistant message that ended the run (or the last one, before a prompt).
    pub assistant: &'a AssistantMessage,
    /// The provider layer's verdict: `assistant` is a context-overflow error.
    pub is_context_overflow: bool,
    /// An overflow recovery already ran since the last user message or successful reply.
    pub overflow_recovery_attempted: bool,
    /// Timestamp (ms) of the latest compaction entry on the current path.
    pub latest_compaction_ms: Option<i64>,
    /// The agent's current messages (used to estimate the size after an error reply).
    pub agent_messages: &'a [AgentMessage],
    /// The check before a prompt looks at aborted messages too.
    pub include_aborted: bool,
}

/// Decides whether and why to compact. Settings disabled → never.
pub fn check_auto_compaction(check: &AutoCompactionCheck<'_>) -> AutoCompaction {
    let assistant = check.assistant;
    if !check.settings.enabled {
        return AutoCompaction::None;
    }
    if !check.include_aborted && assistant.stop_reason == StopReason::Aborted {
        return AutoCompaction::None;
    }
    // A message from before the latest compaction describes the old, larger context; it
    // must not trigger another compaction right away.
    let before_compaction =
        |timestamp: i64| check.latest_compaction_ms.is_some_and(|c| timestamp <= c);
    if before_compaction(assistant.timestamp) {
        return AutoCompaction::None;
    }
    let context_window = check.model.map_or(0, |m| m.context_window);
    // An overflow reported by another model (the user switched to a bigger one since)
    // says nothing about the current model.
    let same_model = check
        .model
        .is_some_and(|m| assistant.provider == m.provider && assistant.model == m.id);
    if same_model && check.is_context_overflow {
        return if check.overflow_recovery_attempted {
            AutoCompaction::OverflowRecoveryExhausted
        } else {
            AutoCompaction::Overflow
        };
    }

    let context_tokens = if assistant.stop_reason == StopReason::Error {
        // An error reply has no usage: estimate from the last successful reply onwards.
        let estimate = estimate_context_tokens(check.agent_messages);
        let Some(index) = estimate.last_usage_index else {
            return AutoCompaction::None;
        };
        if before_compaction(check.agent_messages[index].timestamp()) {
            return AutoCompaction::None;
        }
        estimate.tokens
    } else {
        assistant.usage.context_tokens()
    };
    if should_compact(context_tokens, context_window, check.settings) {
        AutoCompaction::Threshold { context_tokens }
    } else {
        AutoCompaction::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{Usage, UserMessage};

    fn model() -> Model {
        serde_json::from_value(serde_json::json!({
            "id": "m1", "name": "M1", "api": "openai-completions", "provider": "p",
            "baseUrl": "http://localhost", "contextWindow": 10000
        }))
        .unwrap()
    }

    fn reply(stop_reason: StopReason, total_tokens: u64, timestamp: i64) -> AssistantMessage {
        AssistantMessage {
            provider: "p".into(),
            model: "m1".into(),
            stop_reason,
            usage: Usage {
                total_tokens,
                ..Usage::default()
            },
            timestamp,
            ..AssistantMessage::default()
        }
    }

    struct Case {
        assistant: AssistantMessage,
        overflow: bool,
        attempted: bool,
        compaction_ms: Option<i64>,
        messages: Vec<AgentMessage>,
        include_aborted: bool,
        enabled: bool,
    }

    impl Case {
        fn new(assistant: AssistantMessage) -> Self {
            Self {
                assistant,
                overflow: false,
                attempted: false,
                compaction_ms: None,
                messages: Vec::new(),
                include_aborted: false,
                enabled: true,
            }
        }

        fn check(&self, model: Option<&Model>) -> AutoCompaction {
            let settings = CompactionSettings {
                enabled: self.enabled,
                reserve_tokens: 2000,
                ..CompactionSettings::default()
            };
            check_auto_compaction(&AutoCompactionCheck {
                settings: &settings,
                model,
                assistant: &self.assistant,
                is_context_overflow: self.overflow,
                overflow_recovery_attempted: self.attempted,
                latest_compaction_ms: self.compaction_ms,
                agent_messages: &self.messages,
                include_aborted: self.include_aborted,
            })
        }
    }

    #[test]
    fn threshold_is_crossed_by_the_reported_usage() {
        let m = model();
        assert_eq!(
            Case::new(reply(StopReason::Stop, 8000, 5)).check(Some(&m)),
            AutoCompaction::None
        );
        assert_eq!(
            Case::new(reply(StopReason::Stop, 8001, 5)).check(Some(&m)),
            AutoCompaction::Threshold {
                context_tokens: 8001
            }
        );
        let disabled = Case {
            enabled: false,
            ..Case::new(reply(StopReason::Stop, 9999, 5))
        };
        assert_eq!(disabled.check(Some(&m)), AutoCompaction::None);
    }

    #[test]
    fn aborted_replies_count_only_in_the_check_before_a_prompt() {
        let m = model();
        let aborted = Case::new(reply(StopReason::Aborted, 9000, 5));
        assert_eq!(aborted.check(Some(&m)), AutoCompaction::None);
        let before_prompt = Case {
            include_aborted: true,
            ..aborted
        };
        assert_eq!(
            before_prompt.check(Some(&m)),
            AutoCompaction::Threshold {
                context_tokens: 9000
            }
        );
    }

    #[test]
    fn replies_from_before_the_latest_compaction_never_trigger() {
        let m = model();
        let stale = Case {
            compaction_ms: Some(5),
            overflow: true,
            ..Case::new(reply(StopReason::Error, 0, 5))
        };
        assert_eq!(stale.check(Some(&m)), AutoCompaction::None);
    }

    #[test]
    fn overflow_recovers_once_and_only_for_the_same_model() {
        let m = model();
        let overflow = Case {
            overflow: true,
            ..Case::new(reply(StopReason::Error, 0, 5))
        };
        assert_eq!(overflow.check(Some(&m)), AutoCompaction::Overflow);
        let again = Case {
            attempted: true,
            ..overflow
        };
        assert_eq!(
            again.check(Some(&m)),
            AutoCompaction::OverflowRecoveryExhausted
        );
        let mut bigger = model();
        bigger.id = "m2".into();
        // Another model's overflow falls through to the size check, which has no usage.
        assert_eq!(again.check(Some(&bigger)), AutoCompaction::None);
        assert_eq!(again.check(None), AutoCompaction::None);
    }

    #[test]
    fn an_error_reply_is_sized_from_the_last_successful_one() {
        let m = model();
        let good = AgentMessage::Assistant(reply(StopReason::Stop, 7990, 3));
        let prompt = AgentMessage::User(UserMessage::text("x".repeat(80), 4));
        let error = reply(StopReason::Error, 0, 5);
        let case = Case {
            messages: vec![good, prompt.clone(), AgentMessage::Assistant(error.clone())],
            ..Case::new(error.clone())
        };
        assert_eq!(
            case.check(Some(&m)),
            AutoCompaction::Threshold {
                context_tokens: 8010
            }
        );
        // That usage predates the latest compaction: it says nothing about the new context.
        let stale = Case {
            compaction_ms: Some(3),
            ..case
        };
        assert_eq!(stale.check(Some(&m)), AutoCompaction::None);
        // No usage at all: nothing to go on.
        let unknown = Case {
            messages: vec![prompt],
            ..Case::new(error)
        };
        assert_eq!(unknown.check(Some(&m)), AutoCompaction::None);
    }
}
