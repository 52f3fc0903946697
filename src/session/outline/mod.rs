//! A cheap outline of every entry, for tree views such as the `/tree` selector: what the
//! entry is, the first words of its text, the tool calls of an assistant turn and how the
//! turn ended. It is read straight from the session's lines with the index's byte scanner
//! and stops reading a line as soon as a view has what it needs, so the long outputs of
//! tool results are skipped, never decoded: outlining a 44 MB session costs a few
//! milliseconds instead of the fifth of a second a full parse takes.
//!
//! Texts are cut where pi's tree view cuts them: message text at [`MESSAGE_TEXT_UNITS`]
//! UTF-16 code units (JavaScript's `slice(0, 200)`), texts pi shows whole (branch
//! summaries, extension messages, bash commands, paths) at [`LONG_TEXT_UNITS`]. Field
//! values are read the way pi's JavaScript reads the parsed JSON (a field of the wrong
//! type counts as absent). Nothing here formats rows: see
//! `modes::interactive::components::tree_selector`.

mod json;
mod skim;

/// Message text kept per entry (pi's tree view shows and searches this much).
pub const MESSAGE_TEXT_UNITS: usize = 200;
/// Longest text kept for entries pi shows whole.
pub const LONG_TEXT_UNITS: usize = 4096;
/// Error text kept for failed assistant turns (pi shows 80 after trimming).
pub const ERROR_TEXT_UNITS: usize = 300;
/// Characters of a tool call's JSON arguments kept (pi shows 40 for unknown tools).
pub const ARGS_JSON_UNITS: usize = 40;

/// What a tree view needs to know about one entry.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum EntryOutline {
    Message(MessageOutline),
    ThinkingLevelChange {
        level: Option<String>,
    },
    ModelChange {
        model_id: Option<String>,
    },
    Compaction {
        tokens_before: Option<f64>,
    },
    BranchSummary {
        summary: String,
    },
    /// Extension state (`custom`).
    Custom {
        custom_type: Option<String>,
    },
    CustomMessage {
        custom_type: Option<String>,
        text: String,
    },
    /// A label change: the new label, `None` when it was cleared.
    Label {
        label: Option<String>,
    },
    SessionInfo {
        name: Option<String>,
    },
    /// A `context_edit`: its target, and whether it leaves the target out (`null`
    /// replacement) rather than replacing its content.
    ContextEdit {
        target_id: Option<String>,
        omit: bool,
    },
    /// An entry type we do not know.
    #[default]
    Other,
}

/// A `message` entry, by role.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageOutline {
    User {
        text: String,
    },
    Assistant(AssistantOutline),
    ToolResult {
        tool_call_id: Option<String>,
        tool_name: Option<String>,
        text: String,
    },
    BashExecution {
        command: String,
    },
    /// `custom` messages and roles we do not know, shown by their role.
    Other {
        role: String,
        text: String,
    },
}

/// An assistant turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantOutline {
    /// Its text blocks joined, cut at [`MESSAGE_TEXT_UNITS`].
    pub text: String,
    /// Whether any text block holds more than whitespace (a turn without is a pure
    /// tool-call turn, which tree views hide).
    pub has_text: bool,
    /// How the turn ended and its error, read only for a turn whose row cannot show text
    /// (no text in its first characters); [`TurnEnding::Normal`] and `None` otherwise.
    pub ending: TurnEnding,
    pub error_message: Option<String>,
    pub tool_calls: Vec<ToolCallOutline>,
}

/// How an assistant turn ended, as far as a tree view cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TurnEnding {
    /// `stop`, `toolUse` or no stop reason.
    #[default]
    Normal,
    Aborted,
    /// `error`, `length` or anything else.
    Failed,
}

impl TurnEnding {
    fn from_stop_reason(reason: Option<&str>) -> Self {
        match reason {
            None | Some("" | "stop" | "toolUse") => TurnEnding::Normal,
            Some("aborted") => TurnEnding::Aborted,
            Some(_) => TurnEnding::Failed,
        }
    }
}

/// One tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCallOutline {
    pub id: String,
    pub name: String,
    pub args: ToolArgsOutline,
}

/// The arguments of a tool call that short tool descriptions use. String fields hold
/// JavaScript's `String(value)` of a truthy value (`None` for absent, empty, `0`, `false`,
/// `null`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolArgsOutline {
    pub path: Option<String>,
    pub file_path: Option<String>,
    pub command: Option<String>,
    pub pattern: Option<String>,
    pub offset: Option<ArgNumber>,
    pub limit: Option<ArgNumber>,
    /// The arguments as compact JSON, cut at [`ARGS_JSON_UNITS`].
    pub json_head: String,
    /// Whether the JSON was longer than that.
    pub json_cut: bool,
}

/// A numeric argument as present in the JSON.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgNumber {
    Number(f64),
    /// Present, but `null` or not a number.
    NotNumber,
}

#[cfg(test)]
mod tests;
