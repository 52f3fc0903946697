//! The model ⇄ tools loop. Knows nothing of sessions on disk, settings or terminals: it
//! works on a list of [`crate::messages::AgentMessage`]s and reports what happens through
//! [`AgentEvent`]s; `core::AgentSession` persists and forwards them.

pub mod events;
pub mod json;
pub mod queue;
pub mod run;
#[cfg(test)]
mod tests;

pub use events::{AgentEvent, EventSink};
pub use json::AgentEventEncoder;
pub use queue::{DeliveryMode, MessageQueues};
pub use run::{
    AgentConfig, AgentHooks, ContinueError, ModelClient, ToolCallVerdict, TurnOptions, run,
    run_continue,
};
