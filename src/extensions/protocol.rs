//! The wire format between pi-rs and an extension process: JSON objects, one per line
//! (LF-terminated), on the child's stdin (host → extension) and stdout (extension → host).
//! Every object has a `type`. `docs/extensions.md` describes each message for extension
//! authors; this module is the same list in types.
//!
//! Host → extension: `hello` (first), `event`, `execute_tool`, `command`, `cancel`,
//! `render` (lines of a chat item the extension draws, see `render.rs`), and
//! `response` (answers to the extension's `ui` dialogs, `exec` and `run_tool` requests).
//! Extension → host: `register` (first, exactly once), `response` (to `event` with an
//! `id`, `execute_tool`, `command`), `tool_update`, `ui`, `exec`, `run_tool`, and the actions
//! `send_message`, `send_user_message`, `append_entry`, `set_label`, `set_session_name`,
//! `shutdown`, `abort`, `compact`, `call` (answered by a `response`), `register_tool`
//! and `emit`. pi-rs also sends `state` (the session state pi's getters read, see
//! `state.rs`) and `bus` (another extension's `emit`).
//!
//! Field names are camelCase like the rest of pi's JSON; event payloads are pi's event
//! objects. Unknown fields are ignored (so an extension may send more than we read); an
//! unknown `type` is a protocol violation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ai::message::{UserBlock, UserContent};

/// The protocol version this host speaks. An extension that needs a newer one says so in
/// `register.protocolVersion` and is not loaded.
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest line accepted from an extension (a `context` reply carries the whole
/// conversation, so this is generous); anything longer is a protocol violation.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The first message the host sends.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hello {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol_version: u32,
    /// pi-rs version (`CARGO_PKG_VERSION`).
    pub pi_version: String,
    /// The path the extension was loaded from.
    pub extension_path: String,
    pub cwd: String,
    pub agent_dir: String,
    pub session_file: Option<String>,
    pub session_id: Option<String>,
    /// `interactive`, `print`, `json` or `rpc`.
    pub mode: &'static str,
    #[serde(rename = "hasUI")]
    pub has_ui: bool,
    /// Command-line flags pi did not know: name → string value, or `true` for a bare flag.
    pub flags: BTreeMap<String, Value>,
    /// For pi's TypeScript modules only: the built-in tools as pi's `createReadTool` & co.
    /// describe them (`name`, `label`, `description`, `parameters`, `promptSnippet`,
    /// `promptGuidelines`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin_tools: Option<Vec<Value>>,
}

/// A slash command an extension provides.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandRegistration {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The command completes its arguments (pi's `getArgumentCompletions`): the host
    /// answers `complete_arguments` requests.
    #[serde(default)]
    pub argument_completions: bool,
}

/// Whether a tool may run alongside other tool calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ToolExecutionMode {
    #[default]
    Parallel,
    Sequential,
}

/// A tool an extension provides.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRegistration {
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub description: String,
    /// JSON schema of the arguments (an empty object schema when absent).
    #[serde(default)]
    pub parameters: Option<Value>,
    #[serde(default)]
    pub execution_mode: Option<ToolExecutionMode>,
    /// One line for the system prompt's tool list.
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    /// Extra guideline bullets for the system prompt while the tool is active.
    #[serde(default)]
    pub prompt_guidelines: Vec<String>,
    /// The extension draws the call line itself (pi's `renderCall`; answered through
    /// `render` requests).
    #[serde(default)]
    pub render_call: bool,
    /// The extension draws the result itself (pi's `renderResult`).
    #[serde(default)]
    pub render_result: bool,
    /// `"self"`: the extension's lines are shown without pi's tool box (pi's
    /// `renderShell`).
    #[serde(default)]
    pub render_shell: Option<String>,
}

/// The type of a command-line flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagType {
    Boolean,
    String,
}

/// A command-line flag an extension provides.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagRegistration {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FlagType,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub default: Option<Value>,
}

/// What an extension offers; its first message.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// The protocol version the extension speaks (1 when absent).
    #[serde(default)]
    pub protocol_version: Option<u32>,
    /// A display name (the file name when absent).
    #[serde(default)]
    pub name: Option<String>,
    /// Event names the extension wants to receive.
    #[serde(default)]
    pub events: Vec<String>,
    #[serde(default)]
    pub commands: Vec<CommandRegistration>,
    #[serde(default)]
    pub tools: Vec<ToolRegistration>,
    #[serde(default)]
    pub flags: Vec<FlagRegistration>,
    /// How long the host waits for a reply to an event (default 5000 ms).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Per-event overrides of `timeoutMs`.
    #[serde(default)]
    pub event_timeouts_ms: BTreeMap<String, u64>,
    /// Keyboard shortcuts (pi's `registerShortcut`) for the terminal UI.
    #[serde(default)]
    pub shortcuts: Vec<ShortcutRegistration>,
    /// Wants `state` messages (the session state pi's getters read); off by default so
    /// simple extensions see only what they know.
    #[serde(default)]
    pub state: bool,
    /// Model providers (pi's `registerProvider`), applied to the model registry once
    /// the extensions are loaded.
    #[serde(default)]
    pub providers: Vec<ProviderRegistration>,
    /// Custom message types the extension draws itself (pi's
    /// `registerMessageRenderer`; answered through `render` requests).
    #[serde(default)]
    pub message_renderers: Vec<String>,
}

/// A provider an extension registers: a name and pi's `ProviderConfig` (the models.json
/// provider shape: `baseUrl`, `apiKey`, `api`, `headers`, `authHeader`, `models`, …).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProviderRegistration {
    pub name: String,
    #[serde(default)]
    pub config: Value,
}

/// A keyboard shortcut an extension provides: pi's key id (`ctrl+shift+p`) and what it
/// does. Pressing it sends a `shortcut` request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutRegistration {
    pub key: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// `send_message` options (pi's `sendMessage(message, options)`).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageOptions {
    #[serde(default)]
    pub trigger_turn: bool,
    #[serde(default)]
    pub deliver_as: Option<DeliverAs>,
}

/// When a message sent by an extension reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    /// While the agent works: after the current tool calls, before the next model call.
    Steer,
    /// When the agent would stop.
    FollowUp,
    /// With the next user prompt; triggers nothing.
    NextTurn,
}

/// The message of a `send_message`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessagePayload {
    pub custom_type: String,
    pub content: UserContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default)]
    pub details: Option<Value>,
}

/// `send_user_message` options.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SendUserMessageOptions {
    #[serde(default)]
    pub deliver_as: Option<DeliverAs>,
}

/// A user-interface call (pi's `ctx.ui.*`; the field names are those of pi's RPC
/// `extension_ui_request`). Dialogs carry an `id` and get a `response`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCall {
    #[serde(default)]
    pub id: Option<Value>,
    pub method: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub options: Option<Vec<String>>,
    #[serde(default)]
    pub placeholder: Option<String>,
    #[serde(default)]
    pub prefill: Option<String>,
    /// Milliseconds after which a dialog resolves as cancelled.
    #[serde(default)]
    pub timeout: Option<u64>,
    #[serde(default)]
    pub notify_type: Option<String>,
    #[serde(default)]
    pub status_key: Option<String>,
    #[serde(default)]
    pub status_text: Option<String>,
    #[serde(default)]
    pub widget_key: Option<String>,
    #[serde(default)]
    pub widget_lines: Option<Vec<String>>,
    #[serde(default)]
    pub widget_placement: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    /// A custom component's rendered lines (`custom`, `customRender`).
    #[serde(default)]
    pub lines: Option<Vec<String>>,
    /// The `custom` dialog a `customRender` / `customClose` notice is about.
    #[serde(default)]
    pub custom_id: Option<String>,
    /// `setWidget`: the lines come from a component (shown as rendered).
    #[serde(default)]
    pub widget_component: Option<bool>,
    /// `editorAction`: the id of the app keybinding the extension's editor passed on;
    /// `overlayHandle`: `setHidden`, `focus` or `unfocus`.
    #[serde(default)]
    pub action: Option<String>,
    /// `setWorkingVisible`.
    #[serde(default)]
    pub visible: Option<bool>,
    /// `terminalInput`: whether the extension has `ctx.ui.onTerminalInput` listeners.
    #[serde(default)]
    pub listening: Option<bool>,
    /// `setWorkingIndicator`: `{frames, intervalMs}`; absent restores pi's spinner.
    #[serde(default)]
    pub indicator: Option<WorkingIndicator>,
    /// `custom`: the component is an overlay drawn over the screen.
    #[serde(default)]
    pub overlay: Option<bool>,
    /// `custom` overlays and `overlayShow`: pi-tui's `OverlayOptions` (without `visible`).
    #[serde(default)]
    pub overlay_options: Option<Value>,
    /// The overlay's `visible(columns, rows)` callback's answer at the last render.
    #[serde(default)]
    pub overlay_visible: Option<bool>,
    /// The width the `lines` were rendered at.
    #[serde(default)]
    pub width: Option<u64>,
    /// `overlayHandle` `setHidden`: hide (true) or show (false).
    #[serde(default)]
    pub hidden: Option<bool>,
    /// `setHiddenThinkingLabel`: the label (absent: pi's default).
    #[serde(default)]
    pub label: Option<String>,
    /// `setToolsExpanded`: expand (true) or collapse tool output.
    #[serde(default)]
    pub expanded: Option<bool>,
    /// `renderInvalidate`: the tool call whose box the extension wants drawn again.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    /// `setTheme`: the theme's name.
    #[serde(default)]
    pub theme_name: Option<String>,
    /// `setTheme`: save the choice in the settings.
    #[serde(default)]
    pub persist: Option<bool>,
}

/// pi's `WorkingIndicatorOptions`: the frames drawn in turn before the working message
/// (none: no indicator; as given, not coloured), every `interval_ms` (pi's 80 ms when
/// absent).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct WorkingIndicator {
    #[serde(default)]
    pub frames: Option<Vec<String>>,
    #[serde(default)]
    pub interval_ms: Option<u64>,
}

/// A command the host runs for the extension (pi's `pi.exec`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecRequest {
    pub id: Value,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Milliseconds; the process is terminated after that.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// A partial result of a running tool.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUpdate {
    pub id: u64,
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub details: Option<Value>,
}

/// The reply to a host request (`event` with an id, `execute_tool`, `command`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionResponse {
    pub id: u64,
    #[serde(default)]
    pub result: Option<Value>,
    /// Set when the extension's handler failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// Everything an extension may send.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ExtensionMessage {
    Register(Box<Registration>),
    Response(ExtensionResponse),
    ToolUpdate(ToolUpdate),
    Ui(Box<UiCall>),
    Exec(ExecRequest),
    #[serde(rename_all = "camelCase")]
    SendMessage {
        message: CustomMessagePayload,
        #[serde(default)]
        options: Option<SendMessageOptions>,
    },
    #[serde(rename_all = "camelCase")]
    SendUserMessage {
        content: UserContent,
        #[serde(default)]
        options: Option<SendUserMessageOptions>,
    },
    #[serde(rename_all = "camelCase")]
    AppendEntry {
        custom_type: String,
        #[serde(default)]
        data: Option<Value>,
    },
    #[serde(rename_all = "camelCase")]
    SetLabel {
        entry_id: String,
        #[serde(default)]
        label: Option<String>,
    },
    SetSessionName {
        name: String,
    },
    /// pi's `pi.setThinkingLevel(level)`.
    SetThinkingLevel {
        level: String,
    },
    /// pi's `pi.setModel(model)`: the model `provider` / `modelId` of the registry.
    #[serde(rename_all = "camelCase")]
    SetModel {
        provider: String,
        model_id: String,
    },
    /// pi's `ctx.shutdown()`: quit once the agent is idle (interactive and RPC modes).
    Shutdown,
    /// pi's `ctx.abort()`: abort what the agent runs (stream, tools, retry wait,
    /// compaction).
    Abort,
    /// pi's `ctx.compact(options)`: compact the session now, with optional custom
    /// instructions for the summary.
    #[serde(rename_all = "camelCase")]
    Compact {
        #[serde(default)]
        custom_instructions: Option<String>,
    },
    /// Runs one of pi-rs's built-in tools for the extension (pi's `createReadTool(cwd)`
    /// & co. called without custom operations); answered with `{content, details,
    /// isError}`.
    RunTool(RunToolRequest),
    /// A request the session answers with a `response` carrying the same `id`: pi's
    /// command-context and registry calls (`new_session`, `fork`, `navigate_tree`,
    /// `switch_session`, `wait_for_idle`, `compact`, `set_active_tools`, `get_api_key`;
    /// docs/extensions.md lists their parameters and results).
    Call {
        id: Value,
        method: String,
        #[serde(default)]
        params: Option<Value>,
    },
    /// pi's `pi.registerTool` after loading: the tool is added (or replaced) and is
    /// active from the next model call on.
    RegisterTool {
        tool: ToolRegistration,
    },
    /// pi's `pi.registerMessageRenderer` after loading: custom messages of this type
    /// are drawn by the extension from now on (as `register.messageRenderers`).
    RegisterMessageRenderer {
        #[serde(rename = "customType")]
        custom_type: String,
    },
    /// pi's `pi.events.emit(channel, data)`: delivered to every other extension as
    /// `bus`.
    Emit {
        channel: String,
        #[serde(default)]
        data: Option<Value>,
    },
    /// One pi-ai event of a `provider_stream` request in progress (the extension's
    /// `streamSimple` streaming a reply).
    StreamEvent {
        id: u64,
        event: Value,
    },
    /// Abandons a `call` in progress (an `llm_stream` whose AbortSignal fired).
    CancelCall {
        id: Value,
    },
}

/// `run_tool`: a built-in tool call made by an extension.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunToolRequest {
    pub id: Value,
    /// `read`, `bash`, `edit`, `write`, `grep`, `find` or `ls`.
    pub name: String,
    /// The tool's working directory (pi-rs's when absent).
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

impl ExtensionMessage {
    /// Parses one line; the error text says what is wrong with it.
    pub fn parse(line: &[u8]) -> Result<ExtensionMessage, String> {
        let value: Value = serde_json::from_slice(line).map_err(|e| {
            let preview = String::from_utf8_lossy(&line[..line.len().min(120)]).into_owned();
            format!("malformed JSON on stdout ({e}): {preview}")
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string);
        let Some(kind) = kind else {
            return Err("message without a \"type\" field".into());
        };
        serde_json::from_value(value).map_err(|e| format!("invalid \"{kind}\" message: {e}"))
    }
}

/// Serializes a host → extension message as one line (with the trailing `\n`).
pub fn line<T: Serialize>(message: &T) -> String {
    let mut text = serde_json::to_string(message).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// `{"type":"event","id":…,"event":…}` built around an already serialized event, so
/// one payload can be sent to several extensions without serializing it again.
pub fn event_line(id: Option<u64>, event_json: &str) -> String {
    match id {
        Some(id) => format!("{{\"type\":\"event\",\"id\":{id},\"event\":{event_json}}}\n"),
        None => format!("{{\"type\":\"event\",\"event\":{event_json}}}\n"),
    }
}

/// Tool content: a list of text/image blocks, or a plain string.
pub(crate) fn content_from_value(value: Value) -> Result<Vec<UserBlock>, String> {
    match value {
        Value::String(s) => Ok(vec![UserBlock::text(s)]),
        Value::Null => Ok(Vec::new()),
        other => serde_json::from_value(other).map_err(|e| format!("invalid content: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_extension_message_type() {
        let lines = [
            r#"{"type":"register","events":["tool_call"],"tools":[{"name":"t","parameters":{"type":"object"},"executionMode":"sequential"}],"flags":[{"name":"plan","type":"boolean","default":false}],"timeoutMs":100}"#,
            r#"{"type":"response","id":3,"result":{"block":true}}"#,
            r#"{"type":"tool_update","id":4,"content":[{"type":"text","text":"half"}]}"#,
            r#"{"type":"ui","id":"u1","method":"select","title":"Pick","options":["a","b"],"timeout":10}"#,
            r#"{"type":"exec","id":7,"command":"git","args":["status"]}"#,
            r#"{"type":"send_message","message":{"customType":"x","content":"hi","display":true},"options":{"triggerTurn":true,"deliverAs":"followUp"}}"#,
            r#"{"type":"send_user_message","content":[{"type":"text","text":"go"}]}"#,
            r#"{"type":"append_entry","customType":"state","data":{"n":1}}"#,
            r#"{"type":"set_label","entryId":"abc","label":null}"#,
            r#"{"type":"call","id":"h1","method":"new_session","params":{"parentSession":"/p"}}"#,
            r#"{"type":"register_tool","tool":{"name":"late","description":"d"}}"#,
            r#"{"type":"register_message_renderer","customType":"note"}"#,
            r#"{"type":"emit","channel":"c","data":{"n":1}}"#,
            r#"{"type":"set_session_name","name":"Refactor","extra":"ignored"}"#,
            r#"{"type":"stream_event","id":5,"event":{"type":"start"}}"#,
            r#"{"type":"cancel_call","id":"h9"}"#,
        ];
        for l in lines {
            assert!(ExtensionMessage::parse(l.as_bytes()).is_ok(), "{l}");
        }
        let Ok(ExtensionMessage::SendMessage { options, .. }) =
            ExtensionMessage::parse(lines[5].as_bytes())
        else {
            panic!("not a send_message");
        };
        assert_eq!(options.unwrap().deliver_as, Some(DeliverAs::FollowUp));
    }

    #[test]
    fn bad_lines_are_described() {
        assert_eq!(
            ExtensionMessage::parse(br#"{"type":"fly"}"#).unwrap_err(),
            "invalid \"fly\" message: unknown variant `fly`, expected one of `register`, `response`, `tool_update`, `ui`, `exec`, `send_message`, `send_user_message`, `append_entry`, `set_label`, `set_session_name`, `set_thinking_level`, `set_model`, `shutdown`, `abort`, `compact`, `run_tool`, `call`, `register_tool`, `register_message_renderer`, `emit`, `stream_event`, `cancel_call`"
        );
        assert_eq!(
            ExtensionMessage::parse(br#"{"id":1}"#).unwrap_err(),
            "message without a \"type\" field"
        );
        assert!(
            ExtensionMessage::parse(b"hello there")
                .unwrap_err()
                .starts_with("malformed JSON on stdout")
        );
        assert!(
            ExtensionMessage::parse(br#"{"type":"set_label"}"#)
                .unwrap_err()
                .contains("missing field `entryId`")
        );
    }

    #[test]
    fn event_lines_wrap_a_serialized_event() {
        let event = json!({"type": "turn_start", "turnIndex": 0}).to_string();
        assert_eq!(
            event_line(Some(9), &event),
            "{\"type\":\"event\",\"id\":9,\"event\":{\"type\":\"turn_start\",\"turnIndex\":0}}\n"
        );
        assert_eq!(
            event_line(None, "{}"),
            "{\"type\":\"event\",\"event\":{}}\n"
        );
    }
}
