//! What extensions ask the session to do (pi's `pi.sendMessage`, `pi.appendEntry`, …) and
//! the errors the session must report, delivered in order on one channel.
//!
//! The host only validates and forwards: appending entries, queueing messages and
//! starting turns is the session's job, because only it knows whether the agent is busy.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::ai::message::UserContent;
use crate::messages::CustomMessage;
use crate::session::entry::EntryId;

pub use super::protocol::DeliverAs;
use super::protocol::ToolRegistration;

/// Something an extension did, tagged with the extension it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtensionAction {
    pub extension_path: PathBuf,
    pub kind: ActionKind,
}

/// The actions.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionKind {
    /// Add a custom message (a `custom_message` entry, sent to the model as a user
    /// message). `deliver_as` defaults to steer, as in pi; `trigger_turn` starts a run if
    /// the agent is idle (ignored for `NextTurn`).
    SendMessage {
        message: CustomMessage,
        trigger_turn: bool,
        deliver_as: DeliverAs,
    },
    /// Send a user message as if typed; always triggers a turn. While the agent works,
    /// pi requires `deliver_as` (steer or follow-up).
    SendUserMessage {
        content: UserContent,
        deliver_as: Option<DeliverAs>,
    },
    /// Store extension state (a `custom` entry; never sent to the model).
    AppendEntry {
        custom_type: String,
        data: Option<Value>,
    },
    /// Set (or with `None` clear) the label of an entry.
    SetLabel {
        entry_id: EntryId,
        label: Option<String>,
    },
    /// Name the session (a `session_info` entry).
    SetSessionName { name: String },
    /// pi's `pi.setThinkingLevel()` (a level name; clamped to the model as in pi).
    SetThinkingLevel { level: String },
    /// pi's `pi.setModel()`: switch to the registry's model `provider` / `model_id`.
    SetModel { provider: String, model_id: String },
    /// pi's `ctx.shutdown()`: the front end quits once the agent is idle (a no-op in
    /// print and JSON modes, which end by themselves).
    Shutdown,
    /// pi's `ctx.abort()`: abort the agent's run (and a retry wait or compaction).
    Abort,
    /// pi's `ctx.compact()`: compact the session in the background, with optional
    /// custom instructions; a failure is reported as an extension error.
    Compact { custom_instructions: Option<String> },
    /// An extension failed; show it (pi's `extension_error`).
    Error(ExtensionError),
    /// A request the session answers with [`ExtensionHost::answer_call`]
    /// (`crate::extensions::ExtensionHost::answer_call`): `method` with its `params`.
    Call {
        id: Value,
        method: String,
        params: Value,
    },
    /// A tool registered after loading ([`crate::extensions::ExtensionHost::register_tool`]).
    RegisterTool(ToolRegistration),
    /// An event-bus message for the other extensions
    /// ([`crate::extensions::ExtensionHost::emit_bus`]).
    Emit {
        channel: String,
        data: Option<Value>,
    },
}

/// An extension failure, in the shape of pi's RPC `extension_error` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionError {
    pub extension_path: String,
    /// The event (or `process`, `register`, a tool or command name) it happened in.
    pub event: String,
    pub error: String,
}

impl ExtensionError {
    /// `{"type":"extension_error","extensionPath":…,"event":…,"error":…}`.
    pub fn to_json(&self) -> Value {
        json!({
            "type": "extension_error",
            "extensionPath": self.extension_path,
            "event": self.event,
            "error": self.error,
        })
    }
}

impl std::fmt::Display for ExtensionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "extension {} failed in {}: {}",
            self.extension_path, self.event, self.error
        )
    }
}
