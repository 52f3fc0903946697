//! The RPC wire format: the commands a client sends (one JSON object per line) and the
//! `response` objects pi answers with. Field names and response shapes are pi 1.6's,
//! byte for byte where clients can see the difference (key order, absent vs `null`).
//!
//! Nothing here runs a command; see `commands` for that.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::ai::model::ThinkingLevel;

/// What a client can ask for: every command of pi 1.6's RPC mode, then pi-rs's tree
/// extensions (`get_tree_outline`, `navigate_tree`, `set_label`, `get_entry`, checkpoints).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum RpcCommand {
    Prompt {
        message: String,
        #[serde(default)]
        images: Option<Vec<Value>>,
        #[serde(default)]
        streaming_behavior: Option<WireStreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default)]
        images: Option<Vec<Value>>,
    },
    FollowUp {
        message: String,
        #[serde(default)]
        images: Option<Vec<Value>>,
    },
    Abort,
    ClearQueue,
    NewSession {
        #[serde(default)]
        parent_session: Option<String>,
    },
    GetState,
    GetMessages,
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: ThinkingLevel,
    },
    CycleThinkingLevel,
    GetAvailableThinkingLevels,
    SetSteeringMode {
        mode: String,
    },
    SetFollowUpMode {
        mode: String,
    },
    Compact {
        #[serde(default)]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
        #[serde(default)]
        exclude_from_context: Option<bool>,
    },
    AbortBash,
    GetSessionStats,
    ExportHtml {
        #[serde(default)]
        output_path: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Fork {
        entry_id: String,
    },
    Clone,
    GetForkMessages,
    GetEntries {
        #[serde(default)]
        since: Option<String>,
    },
    GetTree,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetCommands,
    // ----- pi-rs extensions -----
    /// The whole tree as one flat list with previews (pi-rs's compact form of `get_tree`).
    GetTreeOutline,
    NavigateTree {
        target_id: String,
        #[serde(default)]
        summarize: Option<SummarizeMode>,
        #[serde(default)]
        custom_instructions: Option<String>,
        #[serde(default)]
        replace_instructions: Option<bool>,
        #[serde(default)]
        label: Option<String>,
        #[serde(default)]
        restore_files: Option<bool>,
        #[serde(default)]
        force: Option<bool>,
    },
    /// Puts back the files the last `restoreFiles` navigation overwrote.
    UndoRestore,
    /// Disk use of the project's checkpoints and the entries that changed files.
    GetCheckpoints,
    /// The files that differ between `from` (absent or null: the working tree) and `to`.
    CheckpointDiff {
        #[serde(default)]
        from: Option<String>,
        to: String,
    },
    /// Removes checkpoint contents no session refers to any more.
    PruneCheckpoints,
    SetLabel {
        entry_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    GetEntry {
        entry_id: String,
    },
}

/// Every command `type`, in [`RpcCommand`] order (to tell an unknown command from a
/// known one with bad fields).
pub const COMMAND_TYPES: [&str; 41] = [
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "clear_queue",
    "new_session",
    "get_state",
    "get_messages",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "get_available_thinking_levels",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_entries",
    "get_tree",
    "get_last_assistant_text",
    "set_session_name",
    "get_commands",
    "get_tree_outline",
    "navigate_tree",
    "set_label",
    "get_entry",
    "undo_restore",
    "get_checkpoints",
    "checkpoint_diff",
    "prune_checkpoints",
];

impl RpcCommand {
    /// Whether the command is answered without waiting for anything (no model request,
    /// no shell command, no wait for a running prompt): reading or changing state only.
    pub fn is_instant(&self) -> bool {
        match self {
            RpcCommand::GetState
            | RpcCommand::GetMessages
            | RpcCommand::SetModel { .. }
            | RpcCommand::CycleModel
            | RpcCommand::GetAvailableModels
            | RpcCommand::SetThinkingLevel { .. }
            | RpcCommand::CycleThinkingLevel
            | RpcCommand::SetSteeringMode { .. }
            | RpcCommand::SetFollowUpMode { .. }
            | RpcCommand::SetAutoCompaction { .. }
            | RpcCommand::SetAutoRetry { .. }
            | RpcCommand::AbortRetry
            | RpcCommand::AbortBash
            | RpcCommand::GetSessionStats
            | RpcCommand::GetForkMessages
            | RpcCommand::GetLastAssistantText
            | RpcCommand::SetSessionName { .. }
            | RpcCommand::GetCommands
            | RpcCommand::ClearQueue
            | RpcCommand::GetAvailableThinkingLevels
            | RpcCommand::GetEntries { .. }
            | RpcCommand::GetTree
            | RpcCommand::GetTreeOutline
            | RpcCommand::SetLabel { .. }
            | RpcCommand::GetEntry { .. }
            | RpcCommand::GetCheckpoints
            | RpcCommand::CheckpointDiff { .. } => true,
            RpcCommand::Prompt { .. }
            // An `input` handler may ask the client something before it is queued.
            | RpcCommand::Steer { .. }
            | RpcCommand::FollowUp { .. }
            | RpcCommand::Abort
            | RpcCommand::NewSession { .. }
            | RpcCommand::Compact { .. }
            | RpcCommand::Bash { .. }
            | RpcCommand::ExportHtml { .. }
            | RpcCommand::SwitchSession { .. }
            | RpcCommand::Fork { .. }
            | RpcCommand::Clone
            | RpcCommand::NavigateTree { .. }
            | RpcCommand::UndoRestore
            | RpcCommand::PruneCheckpoints => false,
        }
    }

    /// The `type` string, echoed as the response's `command`.
    pub fn name(&self) -> &'static str {
        match self {
            RpcCommand::Prompt { .. } => "prompt",
            RpcCommand::Steer { .. } => "steer",
            RpcCommand::FollowUp { .. } => "follow_up",
            RpcCommand::Abort => "abort",
            RpcCommand::ClearQueue => "clear_queue",
            RpcCommand::NewSession { .. } => "new_session",
            RpcCommand::GetState => "get_state",
            RpcCommand::GetMessages => "get_messages",
            RpcCommand::SetModel { .. } => "set_model",
            RpcCommand::CycleModel => "cycle_model",
            RpcCommand::GetAvailableModels => "get_available_models",
            RpcCommand::SetThinkingLevel { .. } => "set_thinking_level",
            RpcCommand::CycleThinkingLevel => "cycle_thinking_level",
            RpcCommand::GetAvailableThinkingLevels => "get_available_thinking_levels",
            RpcCommand::SetSteeringMode { .. } => "set_steering_mode",
            RpcCommand::SetFollowUpMode { .. } => "set_follow_up_mode",
            RpcCommand::Compact { .. } => "compact",
            RpcCommand::SetAutoCompaction { .. } => "set_auto_compaction",
            RpcCommand::SetAutoRetry { .. } => "set_auto_retry",
            RpcCommand::AbortRetry => "abort_retry",
            RpcCommand::Bash { .. } => "bash",
            RpcCommand::AbortBash => "abort_bash",
            RpcCommand::GetSessionStats => "get_session_stats",
            RpcCommand::ExportHtml { .. } => "export_html",
            RpcCommand::SwitchSession { .. } => "switch_session",
            RpcCommand::Fork { .. } => "fork",
            RpcCommand::Clone => "clone",
            RpcCommand::GetForkMessages => "get_fork_messages",
            RpcCommand::GetLastAssistantText => "get_last_assistant_text",
            RpcCommand::SetSessionName { .. } => "set_session_name",
            RpcCommand::GetCommands => "get_commands",
            RpcCommand::GetEntries { .. } => "get_entries",
            RpcCommand::GetTree => "get_tree",
            RpcCommand::GetTreeOutline => "get_tree_outline",
            RpcCommand::NavigateTree { .. } => "navigate_tree",
            RpcCommand::UndoRestore => "undo_restore",
            RpcCommand::GetCheckpoints => "get_checkpoints",
            RpcCommand::CheckpointDiff { .. } => "checkpoint_diff",
            RpcCommand::PruneCheckpoints => "prune_checkpoints",
            RpcCommand::SetLabel { .. } => "set_label",
            RpcCommand::GetEntry { .. } => "get_entry",
        }
    }
}

/// `prompt`'s `streamingBehavior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum WireStreamingBehavior {
    #[serde(rename = "steer")]
    Steer,
    #[serde(rename = "followUp")]
    FollowUp,
}

/// `navigate_tree`'s `summarize`: leave no summary, pi's default summary, or one with the
/// client's `customInstructions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SummarizeMode {
    #[default]
    None,
    Default,
    Custom,
}

/// The `id` a client put on a command, echoed verbatim: pi echoes any JSON value, and a
/// client that sent a number gets a number back.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestId(pub Value);

/// A command and the id to answer it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Option<RequestId>,
    pub command: RpcCommand,
}

/// One input line, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Command(Request),
    /// An answer to an `extension_ui_request` (the whole object).
    UiResponse(Map<String, Value>),
    /// Not a usable command; the response says why.
    Invalid(Response),
}

/// Reads one line (already without its `\n` / `\r\n`).
pub fn parse_line(line: &str) -> Incoming {
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Invalid(Response::error(
                None,
                "parse",
                format!("Failed to parse command: {e}"),
            ));
        }
    };
    let Value::Object(object) = value else {
        return Incoming::Invalid(Response::error(
            None,
            "parse",
            "Failed to parse command: expected a JSON object".to_string(),
        ));
    };
    let id = object.get("id").cloned().map(RequestId);
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Incoming::Invalid(Response::error(
            id,
            "parse",
            "Failed to parse command: missing string field \"type\"".to_string(),
        ));
    };
    if kind == "extension_ui_response" {
        return Incoming::UiResponse(object);
    }
    let kind = kind.to_string();
    match serde_json::from_value::<RpcCommand>(Value::Object(object)) {
        Ok(command) => Incoming::Command(Request { id, command }),
        Err(_) if !COMMAND_TYPES.contains(&kind.as_str()) => Incoming::Invalid(Response::error(
            id,
            &kind,
            format!("Unknown command: {kind}"),
        )),
        Err(e) => Incoming::Invalid(Response::error(
            id,
            &kind,
            format!("Invalid {kind} command: {e}"),
        )),
    }
}

/// A `{"type": "response", …}` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: Option<RequestId>,
    pub command: String,
    /// `Ok(None)`: success without `data` (pi leaves the key out); `Ok(Some(Null))` is
    /// `"data": null` (`cycle_model` with nothing to cycle to).
    pub outcome: Result<Option<Value>, String>,
}

impl Response {
    pub fn success(id: Option<RequestId>, command: &str, data: Option<Value>) -> Response {
        Response {
            id,
            command: command.to_string(),
            outcome: Ok(data),
        }
    }

    pub fn error(id: Option<RequestId>, command: &str, message: String) -> Response {
        Response {
            id,
            command: command.to_string(),
            outcome: Err(message),
        }
    }

    /// A success line whose `data` is `data` as it stands (JSON text built elsewhere:
    /// `get_tree`'s nesting can be deeper than a `Value` is safe to build and drop).
    pub fn success_with_raw_data(id: Option<RequestId>, command: &str, data: &str) -> String {
        let head = Response::success(id, command, Some(Value::Null))
            .to_json()
            .to_string();
        // `data` is the last key: `…,"data":null}`.
        let head = head.strip_suffix("null}").unwrap_or(&head);
        format!("{head}{data}}}")
    }

    /// The JSON object, keys in pi's order: `id`, `type`, `command`, `success`, then
    /// `data` or `error`.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if let Some(RequestId(id)) = &self.id {
            map.insert("id".into(), id.clone());
        }
        map.insert("type".into(), "response".into());
        map.insert("command".into(), self.command.as_str().into());
        match &self.outcome {
            Ok(data) => {
                map.insert("success".into(), true.into());
                if let Some(data) = data {
                    map.insert("data".into(), data.clone());
                }
            }
            Err(message) => {
                map.insert("success".into(), false.into());
                map.insert("error".into(), message.as_str().into());
            }
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn command(line: Value) -> RpcCommand {
        match parse_line(&line.to_string()) {
            Incoming::Command(r) => r.command,
            other => panic!("not a command: {other:?}"),
        }
    }

    fn invalid(line: &str) -> String {
        match parse_line(line) {
            Incoming::Invalid(r) => r.to_json().to_string(),
            other => panic!("not invalid: {other:?}"),
        }
    }

    /// One minimal valid line per command type.
    fn samples() -> Vec<Value> {
        vec![
            json!({"type": "prompt", "message": "hi"}),
            json!({"type": "steer", "message": "hi"}),
            json!({"type": "follow_up", "message": "hi"}),
            json!({"type": "abort"}),
            json!({"type": "clear_queue"}),
            json!({"type": "new_session"}),
            json!({"type": "get_state"}),
            json!({"type": "get_messages"}),
            json!({"type": "set_model", "provider": "p", "modelId": "m"}),
            json!({"type": "cycle_model"}),
            json!({"type": "get_available_models"}),
            json!({"type": "set_thinking_level", "level": "high"}),
            json!({"type": "cycle_thinking_level"}),
            json!({"type": "get_available_thinking_levels"}),
            json!({"type": "set_steering_mode", "mode": "all"}),
            json!({"type": "set_follow_up_mode", "mode": "all"}),
            json!({"type": "compact"}),
            json!({"type": "set_auto_compaction", "enabled": true}),
            json!({"type": "set_auto_retry", "enabled": false}),
            json!({"type": "abort_retry"}),
            json!({"type": "bash", "command": "ls"}),
            json!({"type": "abort_bash"}),
            json!({"type": "get_session_stats"}),
            json!({"type": "export_html"}),
            json!({"type": "switch_session", "sessionPath": "/x.jsonl"}),
            json!({"type": "fork", "entryId": "abc"}),
            json!({"type": "clone"}),
            json!({"type": "get_fork_messages"}),
            json!({"type": "get_entries", "since": "abc"}),
            json!({"type": "get_tree"}),
            json!({"type": "get_last_assistant_text"}),
            json!({"type": "set_session_name", "name": "n"}),
            json!({"type": "get_commands"}),
            json!({"type": "get_tree_outline"}),
            json!({"type": "navigate_tree", "targetId": "abc"}),
            json!({"type": "set_label", "entryId": "abc", "label": null}),
            json!({"type": "get_entry", "entryId": "abc"}),
            json!({"type": "undo_restore"}),
            json!({"type": "get_checkpoints"}),
            json!({"type": "checkpoint_diff", "from": null, "to": "e1"}),
            json!({"type": "prune_checkpoints"}),
        ]
    }

    #[test]
    fn every_command_type_parses_and_names_itself() {
        let samples = samples();
        assert_eq!(samples.len(), COMMAND_TYPES.len());
        for (sample, kind) in samples.into_iter().zip(COMMAND_TYPES) {
            assert_eq!(sample["type"], kind);
            assert_eq!(command(sample).name(), kind);
        }
    }

    #[test]
    fn camel_case_fields_and_optional_nulls_are_read() {
        assert_eq!(
            command(json!({"type": "prompt", "message": "m", "images": null,
                "streamingBehavior": "followUp", "id": 7})),
            RpcCommand::Prompt {
                message: "m".into(),
                images: None,
                streaming_behavior: Some(WireStreamingBehavior::FollowUp),
            }
        );
        assert_eq!(
            command(
                json!({"type": "navigate_tree", "targetId": "t", "summarize": "custom",
                "customInstructions": "focus", "label": "L", "restoreFiles": true})
            ),
            RpcCommand::NavigateTree {
                target_id: "t".into(),
                summarize: Some(SummarizeMode::Custom),
                custom_instructions: Some("focus".into()),
                replace_instructions: None,
                label: Some("L".into()),
                restore_files: Some(true),
                force: None,
            }
        );
    }

    #[test]
    fn the_id_is_echoed_whatever_its_json_type() {
        let Incoming::Command(r) = parse_line(r#"{"id": 42, "type": "get_state"}"#) else {
            panic!()
        };
        let response = Response::success(r.id, r.command.name(), None);
        assert_eq!(
            response.to_json().to_string(),
            r#"{"id":42,"type":"response","command":"get_state","success":true}"#
        );
    }

    #[test]
    fn data_absent_and_data_null_are_different() {
        let with_null = Response::success(None, "cycle_model", Some(Value::Null));
        assert_eq!(
            with_null.to_json().to_string(),
            r#"{"type":"response","command":"cycle_model","success":true,"data":null}"#
        );
    }

    #[test]
    fn bad_lines_get_error_responses_naming_the_problem() {
        insta::assert_snapshot!(invalid("{not json"), @r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: key must be a string at line 1 column 2"}"#);
        insta::assert_snapshot!(invalid(""), @r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: EOF while parsing a value at line 1 column 0"}"#);
        insta::assert_snapshot!(invalid("[1]"), @r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object"}"#);
        insta::assert_snapshot!(invalid(r#"{"id":"a"}"#), @r#"{"id":"a","type":"response","command":"parse","success":false,"error":"Failed to parse command: missing string field \"type\""}"#);
        insta::assert_snapshot!(invalid(r#"{"id":"b","type":"frobnicate"}"#), @r#"{"id":"b","type":"response","command":"frobnicate","success":false,"error":"Unknown command: frobnicate"}"#);
        insta::assert_snapshot!(invalid(r#"{"id":"c","type":"prompt"}"#), @r#"{"id":"c","type":"response","command":"prompt","success":false,"error":"Invalid prompt command: missing field `message`"}"#);
        insta::assert_snapshot!(invalid(r#"{"type":"set_thinking_level","level":"ultra"}"#), @r#"{"type":"response","command":"set_thinking_level","success":false,"error":"Invalid set_thinking_level command: unknown thinking level 'ultra'"}"#);
        // pi 1.6's deepest level is a level.
        assert!(matches!(
            parse_line(r#"{"type":"set_thinking_level","level":"max"}"#),
            Incoming::Command(_)
        ));
    }

    #[test]
    fn extension_ui_responses_are_routed_not_executed() {
        let Incoming::UiResponse(map) =
            parse_line(r#"{"type":"extension_ui_response","id":"u1","value":"Allow"}"#)
        else {
            panic!()
        };
        assert_eq!(map["value"], "Allow");
    }
}
