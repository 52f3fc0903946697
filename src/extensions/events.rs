//! The events extensions can subscribe to (pi's names) and the typed results the host's
//! event methods return after chaining all subscribed extensions.
//!
//! Events split in two: those an extension may answer (`input`, `context`, `tool_call`,
//! `session_before_compact`, … and the lifecycle events the host waits for,
//! `session_start` and `session_shutdown`) are sent with an `id` and need a `response`;
//! notifications (`turn_start`, `agent_end`, `model_select`, …) are sent without an `id`
//! and need none, so they never slow the agent down.

use serde::Serialize;
use serde_json::Value;

use crate::ai::message::{ImageContent, UserBlock};
use crate::messages::CustomMessage;
use crate::session::entry::{EntryId, SessionEntry};

/// An event name (pi's spelling).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventName {
    SessionStart,
    SessionShutdown,
    SessionBeforeSwitch,
    SessionBeforeFork,
    SessionBeforeCompact,
    SessionCompact,
    SessionBeforeTree,
    SessionTree,
    Input,
    BeforeAgentStart,
    Context,
    ToolCall,
    ToolResult,
    AgentStart,
    AgentEnd,
    TurnStart,
    TurnEnd,
    MessageStart,
    MessageUpdate,
    MessageEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolExecutionEnd,
    ModelSelect,
    ThinkingLevelSelect,
    BeforeProviderRequest,
    AfterProviderResponse,
    ResourcesDiscover,
    UserBash,
    ProjectTrust,
}

impl EventName {
    pub const ALL: [EventName; 30] = [
        EventName::SessionStart,
        EventName::SessionShutdown,
        EventName::SessionBeforeSwitch,
        EventName::SessionBeforeFork,
        EventName::SessionBeforeCompact,
        EventName::SessionCompact,
        EventName::SessionBeforeTree,
        EventName::SessionTree,
        EventName::Input,
        EventName::BeforeAgentStart,
        EventName::Context,
        EventName::ToolCall,
        EventName::ToolResult,
        EventName::AgentStart,
        EventName::AgentEnd,
        EventName::TurnStart,
        EventName::TurnEnd,
        EventName::MessageStart,
        EventName::MessageUpdate,
        EventName::MessageEnd,
        EventName::ToolExecutionStart,
        EventName::ToolExecutionUpdate,
        EventName::ToolExecutionEnd,
        EventName::ModelSelect,
        EventName::ThinkingLevelSelect,
        EventName::BeforeProviderRequest,
        EventName::AfterProviderResponse,
        EventName::ResourcesDiscover,
        EventName::UserBash,
        EventName::ProjectTrust,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventName::SessionStart => "session_start",
            EventName::SessionShutdown => "session_shutdown",
            EventName::SessionBeforeSwitch => "session_before_switch",
            EventName::SessionBeforeFork => "session_before_fork",
            EventName::SessionBeforeCompact => "session_before_compact",
            EventName::SessionCompact => "session_compact",
            EventName::SessionBeforeTree => "session_before_tree",
            EventName::SessionTree => "session_tree",
            EventName::Input => "input",
            EventName::BeforeAgentStart => "before_agent_start",
            EventName::Context => "context",
            EventName::ToolCall => "tool_call",
            EventName::ToolResult => "tool_result",
            EventName::AgentStart => "agent_start",
            EventName::AgentEnd => "agent_end",
            EventName::TurnStart => "turn_start",
            EventName::TurnEnd => "turn_end",
            EventName::MessageStart => "message_start",
            EventName::MessageUpdate => "message_update",
            EventName::MessageEnd => "message_end",
            EventName::ToolExecutionStart => "tool_execution_start",
            EventName::ToolExecutionUpdate => "tool_execution_update",
            EventName::ToolExecutionEnd => "tool_execution_end",
            EventName::ModelSelect => "model_select",
            EventName::ThinkingLevelSelect => "thinking_level_select",
            EventName::BeforeProviderRequest => "before_provider_request",
            EventName::AfterProviderResponse => "after_provider_response",
            EventName::ResourcesDiscover => "resources_discover",
            EventName::UserBash => "user_bash",
            EventName::ProjectTrust => "project_trust",
        }
    }

    pub fn parse(name: &str) -> Option<EventName> {
        EventName::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether the event is sent with an `id` and the host waits for the `response`.
    pub fn expects_response(self) -> bool {
        match self {
            EventName::SessionStart
            | EventName::SessionShutdown
            | EventName::SessionBeforeSwitch
            | EventName::SessionBeforeFork
            | EventName::SessionBeforeCompact
            | EventName::SessionBeforeTree
            | EventName::Input
            | EventName::BeforeAgentStart
            | EventName::Context
            | EventName::ToolCall
            | EventName::ToolResult
            | EventName::BeforeProviderRequest
            | EventName::AfterProviderResponse
            | EventName::ResourcesDiscover
            | EventName::UserBash
            | EventName::ProjectTrust
            | EventName::MessageEnd => true,
            EventName::SessionCompact
            | EventName::SessionTree
            | EventName::AgentStart
            | EventName::AgentEnd
            | EventName::TurnStart
            | EventName::TurnEnd
            | EventName::MessageStart
            | EventName::MessageUpdate
            | EventName::ToolExecutionStart
            | EventName::ToolExecutionUpdate
            | EventName::ToolExecutionEnd
            | EventName::ModelSelect
            | EventName::ThinkingLevelSelect => false,
        }
    }
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a session (re)started (`session_start.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStartReason {
    Startup,
    Reload,
    New,
    Resume,
    Fork,
}

/// Why extensions are shut down (`session_shutdown.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShutdownReason {
    Quit,
    Reload,
    New,
    Resume,
    Fork,
}

/// Where user input came from (`input.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputSource {
    Interactive,
    Rpc,
    Extension,
}

/// How a model was selected (`model_select.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelSelectSource {
    Set,
    Cycle,
    Restore,
}

/// `session_before_switch.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchReason {
    New,
    Resume,
}

/// `session_before_fork.position`: `/fork` forks before the entry, `/clone` at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ForkPosition {
    Before,
    At,
}

/// The chained result of `input`.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    /// Go on with the text as it was.
    Continue,
    /// Go on with this text (and images) instead.
    Transform {
        text: String,
        images: Option<Vec<ImageContent>>,
    },
    /// An extension took care of it; nothing is sent to the model.
    Handled,
}

/// The chained result of `before_agent_start`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BeforeAgentStartOutcome {
    /// Messages to store (as `custom_message` entries) and send with the prompt.
    pub messages: Vec<CustomMessage>,
    /// The system prompt for this run, if an extension replaced it.
    pub system_prompt: Option<String>,
}

/// The result of `tool_call`.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallDecision {
    /// Run the tool; with `input`, with these arguments instead (pi's in-place mutation
    /// of `event.input`).
    Allow { input: Option<Value> },
    /// Do not run it; the model gets `reason` as an error result.
    Block { reason: String },
}

/// A finished tool call as `tool_result` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultEvent {
    pub tool_call_id: String,
    pub tool_name: String,
    pub input: Value,
    pub content: Vec<UserBlock>,
    pub details: Option<Value>,
    pub is_error: bool,
}

/// The result after all `tool_result` handlers (only returned when one changed it).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultPatch {
    pub content: Vec<UserBlock>,
    pub details: Option<Value>,
    pub is_error: bool,
}

/// A compaction written by an extension; stored with `fromHook: true`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionCompaction {
    pub summary: String,
    pub first_kept_entry_id: EntryId,
    pub tokens_before: u64,
    pub details: Option<Value>,
}

/// The result of `session_before_compact`.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactDecision {
    /// Compact the usual way.
    Default,
    /// Do not compact.
    Cancel,
    /// Store this compaction instead of asking the model.
    Custom(ExtensionCompaction),
}

/// What a tree navigation is about to do (pi's `TreePreparation`), shown to
/// `session_before_tree`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreePreparation {
    pub target_id: String,
    pub old_leaf_id: Option<String>,
    pub common_ancestor_id: Option<String>,
    pub entries_to_summarize: Vec<SessionEntry>,
    pub user_wants_summary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace_instructions: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A branch summary written by an extension.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionBranchSummary {
    pub summary: String,
    pub details: Option<Value>,
}

/// The result of `session_before_tree`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TreeDecision {
    pub cancel: bool,
    /// Use this summary instead of asking the model.
    pub summary: Option<ExtensionBranchSummary>,
    pub custom_instructions: Option<String>,
    pub replace_instructions: Option<bool>,
    pub label: Option<String>,
}
