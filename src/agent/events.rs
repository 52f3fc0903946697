//! Events the agent loop emits while it works, in pi's vocabulary (`agent_start`,
//! `turn_start`, `message_start/update/end`, `tool_execution_start/update/end`,
//! `turn_end`, `agent_end`). Every mode consumes the same events.

use serde_json::Value;

use crate::ai::message::ToolResultMessage;
use crate::ai::stream::StreamEvent;
use crate::messages::AgentMessage;
use crate::tools::ToolOutput;

/// One step of an agent run.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    AgentStart,
    /// The run is over; `messages` are the messages it added.
    AgentEnd {
        messages: Vec<AgentMessage>,
        /// Whether the session will retry the failed answer (pi 1.6's `willRetry`). The
        /// loop always says `false`; the session sets it before passing the event on.
        will_retry: bool,
    },
    TurnStart,
    TurnEnd {
        message: AgentMessage,
        tool_results: Vec<ToolResultMessage>,
    },
    /// A message begins (user prompts and tool results start and end at once; an
    /// assistant message starts empty and is filled by `MessageUpdate`s).
    MessageStart {
        message: AgentMessage,
    },
    /// A streaming delta of the assistant message being received. Consumers rebuild the
    /// partial message with [`crate::ai::stream::PartialMessage`].
    MessageUpdate {
        event: StreamEvent,
    },
    MessageEnd {
        message: AgentMessage,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        args: Value,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        args: Value,
        partial: ToolOutput,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        result: ToolOutput,
        is_error: bool,
        /// How long the tool's `execute` took (monotonic clock); `None` when it did not
        /// run (unknown tool, invalid arguments, blocked, skipped).
        duration_ms: Option<u64>,
    },
}

impl AgentEvent {
    /// pi's `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

/// Receives events synchronously, in order. The loop waits for `emit` to return, so a
/// sink can persist a message before the loop moves on (the session file never lags).
pub trait EventSink: Send {
    fn emit(&mut self, event: AgentEvent);
}

impl<F: FnMut(AgentEvent) + Send> EventSink for F {
    fn emit(&mut self, event: AgentEvent) {
        self(event)
    }
}
