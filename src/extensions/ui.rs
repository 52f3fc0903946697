//! User-interface requests from extensions (pi's `ctx.ui.*`), as the front end sees them.
//!
//! The host turns every `ui` message into a [`UiRequest`] on an async channel. Dialogs
//! (`select`, `confirm`, `input`, `editor`) carry a [`UiReply`]; the front end answers
//! through it, or drops it to cancel. Notices (`notify`, `setStatus`, `setWidget`,
//! `setTitle`, `setEditorText`) carry none. Without a UI (print and json modes) dialogs
//! are answered "cancelled" at once and notices are dropped, so extensions never wait on a
//! user who is not there. While a dialog is open, the extension's event timeout is paused.

use std::path::PathBuf;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::protocol::{UiCall, WorkingIndicator};

/// What an extension asks the user interface to do.
#[derive(Debug, Clone, PartialEq)]
pub enum UiMethod {
    Select {
        title: String,
        options: Vec<String>,
        timeout_ms: Option<u64>,
    },
    Confirm {
        title: String,
        message: String,
        timeout_ms: Option<u64>,
    },
    Input {
        title: String,
        placeholder: Option<String>,
        timeout_ms: Option<u64>,
    },
    Editor {
        title: String,
        prefill: Option<String>,
    },
    Notify {
        message: String,
        level: NotifyLevel,
    },
    /// `text: None` clears the status entry `key`.
    SetStatus {
        key: String,
        text: Option<String>,
    },
    /// `lines: None` clears the widget `key`. `component`: the lines were rendered by a
    /// component in the host (shown as they are, at the width pi-rs sent), not a list of
    /// strings (shown as pi's `Text` lines, with one column of padding).
    SetWidget {
        key: String,
        lines: Option<Vec<String>>,
        below_editor: bool,
        component: bool,
    },
    SetTitle {
        title: String,
    },
    SetEditorText {
        text: String,
    },
    /// `ctx.ui.custom`: a component living in the host, shown in place of the editor
    /// until the host closes it. `custom_id` is the host's id for it; keys go back
    /// through `input` (set by the host link, absent in a request read alone).
    /// With `overlay`, it is drawn over the screen instead (pi's `overlay: true`).
    Custom {
        custom_id: String,
        lines: Vec<String>,
        input: Option<UiInput>,
        overlay: Option<Box<OverlaySpec>>,
    },
    /// New lines for the open custom component `custom_id`. `visible`: an overlay's
    /// `visible` callback's answer; `width`: the width they were rendered at.
    CustomRender {
        custom_id: String,
        lines: Vec<String>,
        visible: Option<bool>,
        width: Option<usize>,
    },
    /// pi-tui's `tui.showOverlay(component, options)` from a component's factory: an
    /// overlay that is not a dialog (its handle's `hide` sends `CustomClose`).
    OverlayShow {
        custom_id: String,
        lines: Vec<String>,
        input: Option<UiInput>,
        overlay: Box<OverlaySpec>,
    },
    /// A call on an overlay's `OverlayHandle` (`hide` is `CustomClose`).
    OverlayHandle {
        custom_id: String,
        action: OverlayAction,
    },
    /// The host closed custom component `custom_id` (its `done` was called).
    CustomClose {
        custom_id: String,
    },
    /// `ctx.ui.setFooter`: the lines the extension's footer component rendered (again
    /// after each of its renders); `None` restores the built-in footer.
    SetFooter {
        lines: Option<Vec<String>>,
    },
    /// `ctx.ui.setHeader`: the lines of the extension's header component; `None`
    /// restores the built-in header.
    SetHeader {
        lines: Option<Vec<String>>,
    },
    /// `ctx.ui.setWorkingMessage`: the text next to the spinner while the agent works;
    /// `None` restores pi's "Working...".
    SetWorkingMessage {
        message: Option<String>,
    },
    /// `ctx.ui.setWorkingVisible`: whether the working line shows while the agent works.
    SetWorkingVisible {
        visible: bool,
    },
    /// `ctx.ui.setWorkingIndicator`: `None` restores pi's spinner.
    SetWorkingIndicator {
        indicator: Option<WorkingIndicator>,
    },
    /// `ctx.ui.setEditorComponent`: `lines: Some` — the extension's editor (living in
    /// the host) replaces pi-rs's, keys go to it through `input`; its `text` is the
    /// editor's. `lines: None` restores pi-rs's editor with `text`.
    SetEditorComponent {
        lines: Option<Vec<String>>,
        text: String,
        input: Option<UiInput>,
    },
    /// The extension's editor rendered again (after a key, or when it asked).
    EditorRender {
        lines: Vec<String>,
        text: String,
    },
    /// The extension's editor submitted `text` (pi's `onSubmit`).
    EditorSubmit {
        text: String,
    },
    /// A key of pi's app keybinding `action` reached the extension's editor, which passes
    /// it on (pi's CustomEditor handlers).
    EditorAction {
        action: String,
    },
    /// `ctx.ui.addAutocompleteProvider`: the extension now takes part in completion
    /// (asked with `ExtensionHost::autocomplete`).
    AddAutocompleteProvider,
    /// The extension has (`true`) or no longer has `ctx.ui.onTerminalInput` listeners:
    /// raw input goes through it first (`ExtensionHost::terminal_input`).
    TerminalInput {
        listening: bool,
    },
    /// `ctx.ui.setHiddenThinkingLabel`: the label of hidden thinking blocks; `None`
    /// restores pi's "Thinking...".
    SetHiddenThinkingLabel {
        label: Option<String>,
    },
    /// `ctx.ui.setToolsExpanded`: expands or collapses tool output (as Ctrl+O).
    SetToolsExpanded {
        expanded: bool,
    },
    /// A tool renderer's `context.invalidate()`: the box of `tool_call_id` is drawn
    /// again.
    RenderInvalidate {
        tool_call_id: String,
    },
    /// `ctx.ui.setTheme`: switch to the theme `name`; `persist`: save it as the
    /// settings' theme (a name was given, not a Theme object).
    SetTheme {
        name: String,
        persist: bool,
    },
}

/// How an overlay is placed, as its extension asked.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlaySpec {
    pub options: super::overlay_options::OverlayOptions,
    /// The `visible` callback's answer (true without one).
    pub visible: bool,
    /// The width the first lines were rendered at.
    pub width: Option<usize>,
}

/// `OverlayHandle` calls other than `hide`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayAction {
    SetHidden(bool),
    Focus,
    Unfocus,
}

/// Sends key input to a custom component in the host (`ui_input` messages).
#[derive(Clone)]
pub struct UiInput {
    custom_id: String,
    writer: tokio::sync::mpsc::UnboundedSender<String>,
}

impl UiInput {
    pub(crate) fn new(
        custom_id: String,
        writer: tokio::sync::mpsc::UnboundedSender<String>,
    ) -> UiInput {
        UiInput { custom_id, writer }
    }

    /// Forwards `data` (raw terminal input, as pi-tui components expect it) and the
    /// width the component is drawn at.
    pub fn send(&self, data: &str, width: usize) {
        let message =
            json!({"type": "ui_input", "id": self.custom_id, "data": data, "width": width});
        self.send_message(&message);
    }

    /// Forwards a key to the extension's prompt editor (`editor_input`).
    pub fn send_editor_input(&self, data: &str, width: usize) {
        self.send_message(&json!({"type": "editor_input", "data": data, "width": width}));
    }

    /// Replaces the text of the extension's prompt editor (`editor_set_text`).
    pub fn send_editor_text(&self, text: &str) {
        self.send_message(&json!({"type": "editor_set_text", "text": text}));
    }

    fn send_message(&self, message: &Value) {
        // The host may have exited; its view is closed then.
        let _ = self.writer.send(format!("{message}\n"));
    }

    /// Whether the host's input has closed (it exited).
    pub fn is_closed(&self) -> bool {
        self.writer.is_closed()
    }

    /// Asks for the component's lines again at `width` (a `ui_input` without `data`).
    pub fn render_at(&self, width: usize) {
        let message = json!({"type": "ui_input", "id": self.custom_id, "width": width});
        let _ = self.writer.send(format!("{message}\n"));
    }

    /// Tells the component it gained or lost the keyboard (pi-tui's `focused` flag).
    pub fn set_focused(&self, focused: bool) {
        let message = json!({"type": "ui_input", "id": self.custom_id, "focused": focused});
        let _ = self.writer.send(format!("{message}\n"));
    }
}

impl std::fmt::Debug for UiInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiInput")
            .field("custom_id", &self.custom_id)
            .finish()
    }
}

impl PartialEq for UiInput {
    fn eq(&self, other: &Self) -> bool {
        self.custom_id == other.custom_id
    }
}

/// `notify` severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyLevel {
    Info,
    Warning,
    Error,
}

impl NotifyLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyLevel::Info => "info",
            NotifyLevel::Warning => "warning",
            NotifyLevel::Error => "error",
        }
    }
}

impl UiMethod {
    /// Whether the extension waits for an answer.
    pub fn is_dialog(&self) -> bool {
        matches!(
            self,
            UiMethod::Select { .. }
                | UiMethod::Confirm { .. }
                | UiMethod::Input { .. }
                | UiMethod::Editor { .. }
                | UiMethod::Custom { .. }
        )
    }

    /// Methods only a terminal UI can show (custom components, footers, headers and
    /// component widgets); other front ends answer them "cancelled" (pi's RPC mode
    /// returns `undefined` from `custom` and ignores the others).
    pub fn needs_terminal(&self) -> bool {
        matches!(
            self,
            UiMethod::Custom { .. }
                | UiMethod::CustomRender { .. }
                | UiMethod::CustomClose { .. }
                | UiMethod::OverlayShow { .. }
                | UiMethod::OverlayHandle { .. }
                | UiMethod::SetFooter { .. }
                | UiMethod::SetHeader { .. }
                | UiMethod::SetWorkingMessage { .. }
                | UiMethod::SetWorkingVisible { .. }
                | UiMethod::SetWorkingIndicator { .. }
                | UiMethod::SetEditorComponent { .. }
                | UiMethod::EditorRender { .. }
                | UiMethod::EditorSubmit { .. }
                | UiMethod::EditorAction { .. }
                | UiMethod::AddAutocompleteProvider
                | UiMethod::TerminalInput { .. }
                | UiMethod::SetHiddenThinkingLabel { .. }
                | UiMethod::SetToolsExpanded { .. }
                | UiMethod::RenderInvalidate { .. }
                | UiMethod::SetTheme { .. }
                | UiMethod::SetWidget {
                    component: true,
                    ..
                }
        )
    }

    /// How long the dialog may stay open before it resolves as cancelled.
    pub fn timeout_ms(&self) -> Option<u64> {
        match self {
            UiMethod::Select { timeout_ms, .. }
            | UiMethod::Confirm { timeout_ms, .. }
            | UiMethod::Input { timeout_ms, .. } => *timeout_ms,
            _ => None,
        }
    }

    /// Reads a `ui` message; `Err` names an unsupported method.
    pub fn from_call(call: &UiCall) -> Result<UiMethod, String> {
        let title = || call.title.clone().unwrap_or_default();
        Ok(match call.method.as_str() {
            "select" => UiMethod::Select {
                title: title(),
                options: call.options.clone().unwrap_or_default(),
                timeout_ms: call.timeout,
            },
            "confirm" => UiMethod::Confirm {
                title: title(),
                message: call.message.clone().unwrap_or_default(),
                timeout_ms: call.timeout,
            },
            "input" => UiMethod::Input {
                title: title(),
                placeholder: call.placeholder.clone(),
                timeout_ms: call.timeout,
            },
            "editor" => UiMethod::Editor {
                title: title(),
                prefill: call.prefill.clone(),
            },
            "notify" => UiMethod::Notify {
                message: call.message.clone().unwrap_or_default(),
                level: match call.notify_type.as_deref() {
                    Some("warning") => NotifyLevel::Warning,
                    Some("error") => NotifyLevel::Error,
                    _ => NotifyLevel::Info,
                },
            },
            "setStatus" => UiMethod::SetStatus {
                key: call.status_key.clone().unwrap_or_default(),
                text: call.status_text.clone(),
            },
            "setWidget" => UiMethod::SetWidget {
                key: call.widget_key.clone().unwrap_or_default(),
                lines: call.widget_lines.clone(),
                below_editor: call.widget_placement.as_deref() == Some("belowEditor"),
                component: call.widget_component == Some(true),
            },
            "setTitle" => UiMethod::SetTitle { title: title() },
            // pi's RPC spells this one in snake case; accept both.
            "setEditorText" | "set_editor_text" => UiMethod::SetEditorText {
                text: call.text.clone().unwrap_or_default(),
            },
            "custom" => UiMethod::Custom {
                custom_id: call
                    .id
                    .as_ref()
                    .map(|id| id.as_str().map_or_else(|| id.to_string(), str::to_string))
                    .unwrap_or_default(),
                lines: call.lines.clone().unwrap_or_default(),
                input: None,
                overlay: if call.overlay == Some(true) {
                    Some(Box::new(overlay_spec(call)?))
                } else {
                    None
                },
            },
            "customRender" => UiMethod::CustomRender {
                custom_id: call.custom_id.clone().unwrap_or_default(),
                lines: call.lines.clone().unwrap_or_default(),
                visible: call.overlay_visible,
                width: call.width.map(|w| w as usize),
            },
            "overlayShow" => UiMethod::OverlayShow {
                custom_id: call.custom_id.clone().unwrap_or_default(),
                lines: call.lines.clone().unwrap_or_default(),
                input: None,
                overlay: Box::new(overlay_spec(call)?),
            },
            "overlayHandle" => UiMethod::OverlayHandle {
                custom_id: call.custom_id.clone().unwrap_or_default(),
                action: match call.action.as_deref() {
                    Some("setHidden") => OverlayAction::SetHidden(call.hidden == Some(true)),
                    Some("focus") => OverlayAction::Focus,
                    Some("unfocus") => OverlayAction::Unfocus,
                    other => {
                        return Err(format!(
                            "unsupported overlay handle action {}",
                            other.map_or("(none)".to_string(), |a| format!("\"{a}\""))
                        ));
                    }
                },
            },
            "customClose" => UiMethod::CustomClose {
                custom_id: call.custom_id.clone().unwrap_or_default(),
            },
            "setFooter" => UiMethod::SetFooter {
                lines: call.lines.clone(),
            },
            "setHeader" => UiMethod::SetHeader {
                lines: call.lines.clone(),
            },
            "setWorkingMessage" => UiMethod::SetWorkingMessage {
                message: call.message.clone(),
            },
            "setWorkingVisible" => UiMethod::SetWorkingVisible {
                visible: call.visible != Some(false),
            },
            "setWorkingIndicator" => UiMethod::SetWorkingIndicator {
                indicator: call.indicator.clone(),
            },
            "setEditorComponent" => UiMethod::SetEditorComponent {
                lines: call.lines.clone(),
                text: call.text.clone().unwrap_or_default(),
                input: None,
            },
            "editorRender" => UiMethod::EditorRender {
                lines: call.lines.clone().unwrap_or_default(),
                text: call.text.clone().unwrap_or_default(),
            },
            "editorSubmit" => UiMethod::EditorSubmit {
                text: call.text.clone().unwrap_or_default(),
            },
            "addAutocompleteProvider" => UiMethod::AddAutocompleteProvider,
            "terminalInput" => UiMethod::TerminalInput {
                listening: call.listening == Some(true),
            },
            "editorAction" => UiMethod::EditorAction {
                action: call.action.clone().unwrap_or_default(),
            },
            "setHiddenThinkingLabel" => UiMethod::SetHiddenThinkingLabel {
                label: call.label.clone(),
            },
            "setToolsExpanded" => UiMethod::SetToolsExpanded {
                expanded: call.expanded == Some(true),
            },
            "renderInvalidate" => UiMethod::RenderInvalidate {
                tool_call_id: call.tool_call_id.clone().unwrap_or_default(),
            },
            "setTheme" => UiMethod::SetTheme {
                name: call.theme_name.clone().unwrap_or_default(),
                persist: call.persist == Some(true),
            },
            other => return Err(format!("unsupported UI method \"{other}\"")),
        })
    }
}

/// An overlay's options and visibility from a `custom` / `overlayShow` message.
fn overlay_spec(call: &UiCall) -> Result<OverlaySpec, String> {
    Ok(OverlaySpec {
        options: super::overlay_options::OverlayOptions::from_json(call.overlay_options.as_ref())?,
        visible: call.overlay_visible != Some(false),
        width: call.width.map(|w| w as usize),
    })
}

/// The user's answer to a dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiResponse {
    /// The chosen option (`select`) or the entered text (`input`, `editor`).
    Value(String),
    /// The answer to `confirm`.
    Confirmed(bool),
    /// Dismissed, timed out, or no UI.
    Cancelled,
}

impl UiResponse {
    /// The `result` object sent back to the extension.
    pub fn to_json(&self) -> Value {
        match self {
            UiResponse::Value(v) => json!({ "value": v }),
            UiResponse::Confirmed(c) => json!({ "confirmed": c }),
            UiResponse::Cancelled => json!({ "cancelled": true }),
        }
    }

    /// Reads pi's RPC `extension_ui_response` fields (`value`, `confirmed`, `cancelled`).
    pub fn from_rpc(response: &Value) -> UiResponse {
        if response.get("cancelled").and_then(Value::as_bool) == Some(true) {
            return UiResponse::Cancelled;
        }
        if let Some(c) = response.get("confirmed").and_then(Value::as_bool) {
            return UiResponse::Confirmed(c);
        }
        match response.get("value").and_then(Value::as_str) {
            Some(v) => UiResponse::Value(v.to_string()),
            None => UiResponse::Cancelled,
        }
    }
}

/// Answers one dialog. Dropping it without answering cancels the dialog.
#[derive(Debug)]
pub struct UiReply(pub(crate) oneshot::Sender<UiResponse>);

impl UiReply {
    /// Whether the extension stopped waiting (its dialog timed out, or it exited).
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    pub fn send(self, response: UiResponse) {
        // The extension may have stopped waiting (timeout, exit); nothing to do then.
        let _ = self.0.send(response);
    }
}

/// One request for the front end.
#[derive(Debug)]
pub struct UiRequest {
    /// Unique among the host's requests (`ui-<n>`); RPC mode uses it as the
    /// `extension_ui_request` id.
    pub id: String,
    pub extension_path: PathBuf,
    pub method: UiMethod,
    /// Present for dialogs.
    pub reply: Option<UiReply>,
}

impl UiRequest {
    /// A dialog asked by pi-rs itself (not by an extension) and where its answer arrives
    /// (dropped unanswered: cancelled).
    pub fn dialog(id: &str, method: UiMethod) -> (UiRequest, oneshot::Receiver<UiResponse>) {
        let (tx, rx) = oneshot::channel();
        let request = UiRequest {
            id: id.to_string(),
            extension_path: PathBuf::new(),
            method,
            reply: Some(UiReply(tx)),
        };
        (request, rx)
    }

    /// pi's RPC `extension_ui_request` object for this request.
    pub fn to_rpc_json(&self) -> Value {
        let mut v = json!({"type": "extension_ui_request", "id": self.id});
        let fields = match &self.method {
            UiMethod::Select {
                title,
                options,
                timeout_ms,
            } => {
                json!({"method": "select", "title": title, "options": options, "timeout": timeout_ms})
            }
            UiMethod::Confirm {
                title,
                message,
                timeout_ms,
            } => {
                json!({"method": "confirm", "title": title, "message": message, "timeout": timeout_ms})
            }
            UiMethod::Input {
                title,
                placeholder,
                timeout_ms,
            } => {
                json!({"method": "input", "title": title, "placeholder": placeholder, "timeout": timeout_ms})
            }
            UiMethod::Editor { title, prefill } => {
                json!({"method": "editor", "title": title, "prefill": prefill})
            }
            UiMethod::Notify { message, level } => {
                json!({"method": "notify", "message": message, "notifyType": level.as_str()})
            }
            UiMethod::SetStatus { key, text } => {
                json!({"method": "setStatus", "statusKey": key, "statusText": text})
            }
            UiMethod::SetWidget {
                key,
                lines,
                below_editor,
                ..
            } => json!({
                "method": "setWidget", "widgetKey": key, "widgetLines": lines,
                "widgetPlacement": if *below_editor { "belowEditor" } else { "aboveEditor" },
            }),
            UiMethod::SetTitle { title } => json!({"method": "setTitle", "title": title}),
            UiMethod::SetEditorText { text } => json!({"method": "set_editor_text", "text": text}),
            // Never sent to RPC clients (see `needs_terminal`).
            UiMethod::Custom { lines, .. } | UiMethod::CustomRender { lines, .. } => {
                json!({"method": "custom", "lines": lines})
            }
            UiMethod::CustomClose { .. } => json!({"method": "customClose"}),
            UiMethod::OverlayShow { lines, .. } => json!({"method": "overlayShow", "lines": lines}),
            UiMethod::OverlayHandle { .. } => json!({"method": "overlayHandle"}),
            UiMethod::SetFooter { lines } => json!({"method": "setFooter", "lines": lines}),
            UiMethod::SetHeader { lines } => json!({"method": "setHeader", "lines": lines}),
            UiMethod::SetWorkingMessage { message } => {
                json!({"method": "setWorkingMessage", "message": message})
            }
            // Never sent to RPC clients (see `needs_terminal`).
            UiMethod::SetWorkingVisible { visible } => {
                json!({"method": "setWorkingVisible", "visible": visible})
            }
            UiMethod::SetWorkingIndicator { .. } => json!({"method": "setWorkingIndicator"}),
            UiMethod::SetEditorComponent { .. } => json!({"method": "setEditorComponent"}),
            UiMethod::EditorRender { .. } => json!({"method": "editorRender"}),
            UiMethod::EditorSubmit { .. } => json!({"method": "editorSubmit"}),
            UiMethod::EditorAction { action } => {
                json!({"method": "editorAction", "action": action})
            }
            UiMethod::AddAutocompleteProvider => json!({"method": "addAutocompleteProvider"}),
            UiMethod::TerminalInput { listening } => {
                json!({"method": "terminalInput", "listening": listening})
            }
            UiMethod::SetHiddenThinkingLabel { label } => {
                json!({"method": "setHiddenThinkingLabel", "label": label})
            }
            UiMethod::SetToolsExpanded { expanded } => {
                json!({"method": "setToolsExpanded", "expanded": expanded})
            }
            UiMethod::RenderInvalidate { tool_call_id } => {
                json!({"method": "renderInvalidate", "toolCallId": tool_call_id})
            }
            UiMethod::SetTheme { name, persist } => {
                json!({"method": "setTheme", "themeName": name, "persist": persist})
            }
        };
        if let (Value::Object(target), Value::Object(source)) = (&mut v, fields) {
            for (key, value) in source {
                // pi leaves absent optional fields out rather than sending null.
                if !value.is_null() {
                    target.insert(key, value);
                }
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpc_shape_matches_pis_extension_ui_request() {
        let req = UiRequest {
            id: "ui-1".into(),
            extension_path: PathBuf::from("/x"),
            method: UiMethod::Select {
                title: "Allow?".into(),
                options: vec!["Yes".into(), "No".into()],
                timeout_ms: None,
            },
            reply: None,
        };
        assert_eq!(
            req.to_rpc_json().to_string(),
            r#"{"type":"extension_ui_request","id":"ui-1","method":"select","title":"Allow?","options":["Yes","No"]}"#
        );
        assert_eq!(
            UiResponse::from_rpc(&json!({"id": "ui-1", "confirmed": true})),
            UiResponse::Confirmed(true)
        );
        assert_eq!(
            UiResponse::from_rpc(&json!({"cancelled": true, "value": "x"})),
            UiResponse::Cancelled
        );
    }
}
