//! The app's side of `host_render`: what the [`App`](super::super::state::App) does with them.

use serde_json::{Value, json};

use super::super::msg::AppMsg;
use super::super::state::App;
#[allow(unused_imports)]
use super::*;
use crate::extensions::RENDER_TIMEOUT;
use crate::modes::interactive::components::tool_execution::HostToolLines;
use crate::modes::interactive::components::transcript::ChatItem;

impl App {
    /// Asks the extensions for the lines of the items they draw whose key changed. Called
    /// when a frame is composed; sends nothing when nothing changed.
    pub(in crate::modes::interactive::app) fn request_host_renders(&mut self) {
        // The extensions render with the width and theme of the last `ui_state`: send it
        // first when it changed.
        self.sync_extension_ui_state();
        let Some(host) = self.session.extension_host() else {
            return;
        };
        let width = self.width();
        let expanded = self.transcript.expanded();
        let generation = self.theme.generation();
        let renders = &mut self.extension_ui.host_renders;
        if renders.scanned > self.transcript.len() {
            renders.reset();
        }
        for index in renders.scanned..self.transcript.len() {
            let renderer = match self.transcript.get(index) {
                Some(ChatItem::Custom(c)) if c.message.display => {
                    host.message_renderer(&c.message.custom_type)
                }
                Some(ChatItem::Tool(t)) => host.tool_renderer(&t.call.name),
                _ => None,
            };
            if let Some(renderer) = renderer {
                renders.tracked.insert(
                    index,
                    Tracked {
                        renderer,
                        requested: None,
                        in_flight: false,
                    },
                );
            }
        }
        renders.scanned = self.transcript.len();
        if renders.tracked.is_empty() {
            return;
        }
        let epoch = renders.epoch;
        for (&index, tracked) in renders.tracked.iter_mut() {
            let Some(version) = self.transcript.version_at(index) else {
                continue;
            };
            let key = (width, expanded, version, generation);
            // One request at a time per item: changes made meanwhile (a stream of
            // partial results) are asked for together once the answer is in.
            if tracked.in_flight || tracked.requested == Some(key) || !tracked.renderer.is_alive() {
                continue;
            }
            let Some(fields) = self
                .transcript
                .get(index)
                .and_then(|item| render_fields(item, width, expanded))
            else {
                continue;
            };
            tracked.requested = Some(key);
            tracked.in_flight = true;
            let renderer = tracked.renderer.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let outcome = renderer.render(&fields, RENDER_TIMEOUT).await;
                let _ = tx.send(AppMsg::HostRendered(HostRendered {
                    epoch,
                    index,
                    key,
                    outcome,
                }));
            });
        }
    }

    /// Ctrl+O and `ctx.ui.setToolsExpanded`: expands or collapses every tool box and
    /// summary (and the header), drawn again from the top.
    pub(in crate::modes::interactive::app) fn set_tools_expanded(&mut self, expanded: bool) {
        if expanded == self.transcript.expanded() {
            return;
        }
        self.transcript.set_expanded(expanded);
        self.header.expanded = expanded;
        self.full_redraw = true;
        self.dirty = true;
    }

    /// The chat index of the box of tool call `id`, if an extension draws it.
    pub(in crate::modes::interactive::app) fn tool_item_index(&self, id: &str) -> Option<usize> {
        self.extension_ui
            .host_renders
            .tracked
            .keys()
            .copied()
            .find(|&i| matches!(self.transcript.get(i), Some(ChatItem::Tool(t)) if t.call.id == id))
    }

    /// Applies the lines an extension drew (or, when it failed, keeps pi-rs's rendering).
    pub(in crate::modes::interactive::app) fn on_host_rendered(&mut self, answer: HostRendered) {
        let renders = &mut self.extension_ui.host_renders;
        if answer.epoch != renders.epoch {
            return;
        }
        let Some(tracked) = renders.tracked.get_mut(&answer.index) else {
            return;
        };
        if tracked.requested != Some(answer.key) {
            return;
        }
        tracked.in_flight = false;
        let renderer = tracked.renderer.clone();
        let is_tool = matches!(self.transcript.get(answer.index), Some(ChatItem::Tool(_)));
        let label = if is_tool {
            "renderer of a tool"
        } else {
            "message renderer"
        };
        match answer.outcome {
            Ok(result) if is_tool => {
                let host = tool_lines(&result);
                for (what, field) in [("renderCall", "callError"), ("renderResult", "resultError")]
                {
                    if let Some(error) = result.get(field).and_then(Value::as_str) {
                        renders.report_once(&renderer, what, error);
                    }
                }
                self.transcript.update_drawing_at(answer.index, |item| {
                    if let ChatItem::Tool(t) = item {
                        t.host = Some(host);
                    }
                });
            }
            Ok(result) => {
                let lines = string_lines(result.get("lines"));
                self.transcript.update_drawing_at(answer.index, |item| {
                    if let ChatItem::Custom(c) = item {
                        c.host_lines = lines;
                    }
                });
            }
            Err(error) => {
                renders.report_once(&renderer, label, &error);
                self.transcript
                    .update_drawing_at(answer.index, |item| match item {
                        ChatItem::Tool(t) => t.host = None,
                        ChatItem::Custom(c) => c.host_lines = None,
                        _ => {}
                    });
            }
        }
        self.dirty = true;
        // Lines already in the scrollback changed: draw everything again (as pi does
        // when lines above the screen change).
        if answer.index < self.committed {
            self.full_redraw = true;
        }
    }
}

/// The `render` request for an item (without `type` and `id`).
fn render_fields(item: &ChatItem, width: usize, expanded: bool) -> Option<Value> {
    match item {
        ChatItem::Custom(c) => {
            let mut message = serde_json::to_value(&c.message).ok()?;
            message["role"] = Value::from("custom");
            Some(json!({
                "kind": "message",
                "width": width,
                "expanded": expanded,
                "message": message,
            }))
        }
        ChatItem::Tool(t) => {
            let mut fields = json!({
                "kind": "tool",
                "width": width,
                "expanded": expanded,
                "toolName": t.call.name,
                "toolCallId": t.call.id,
                "args": t.call.arguments,
                "argsComplete": t.args_complete,
                "executionStarted": t.execution_started || t.result.is_some(),
                "isPartial": t.is_pending(),
                "isError": t.result.as_ref().is_some_and(|r| r.is_error),
                "showImages": true,
            });
            if let Some(result) = &t.result {
                fields["result"] = json!({
                    "content": result.content,
                    "details": result.details,
                });
            }
            Some(fields)
        }
        _ => None,
    }
}

/// A `lines` array of strings; anything else is "no lines" (default rendering).
fn string_lines(value: Option<&Value>) -> Option<Vec<String>> {
    value?.as_array().map(|lines| {
        lines
            .iter()
            .map(|l| l.as_str().map_or_else(|| l.to_string(), str::to_string))
            .collect()
    })
}

/// The answer to a tool's `render`: `{shell, call, result}` (a part `null` gets pi's
/// fallback).
fn tool_lines(result: &Value) -> HostToolLines {
    HostToolLines {
        self_shell: result.get("shell").and_then(Value::as_str) == Some("self"),
        call: string_lines(result.get("call")),
        result: string_lines(result.get("result")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::CustomMessage;
    use crate::modes::interactive::components::custom_message::CustomMessageView;
    use crate::modes::interactive::components::tool_execution::{
        ToolExecutionState, ToolResultView,
    };

    #[test]
    fn a_message_request_carries_the_message_as_pi_passes_it() {
        let item = ChatItem::Custom(CustomMessageView::new(CustomMessage {
            custom_type: "status-update".into(),
            content: crate::ai::message::UserContent::Text("hi".into()),
            display: true,
            details: Some(json!({"level": "warn"})),
            ..CustomMessage::default()
        }));
        let fields = render_fields(&item, 60, true).unwrap();
        assert_eq!(fields["kind"], "message");
        assert_eq!(fields["width"], 60);
        assert_eq!(fields["expanded"], true);
        assert_eq!(fields["message"]["role"], "custom");
        assert_eq!(fields["message"]["customType"], "status-update");
        assert_eq!(fields["message"]["content"], "hi");
        assert_eq!(fields["message"]["details"]["level"], "warn");
    }

    #[test]
    fn a_tool_request_carries_pis_render_context() {
        let call = crate::ai::message::ToolCall {
            id: "call-1".into(),
            name: "todo".into(),
            arguments: json!({"action": "list"}),
            ..Default::default()
        };
        let pending = ChatItem::Tool(ToolExecutionState::new(call.clone()));
        let fields = render_fields(&pending, 80, false).unwrap();
        assert_eq!(fields["toolName"], "todo");
        assert_eq!(fields["toolCallId"], "call-1");
        assert_eq!(fields["args"]["action"], "list");
        assert_eq!(fields["isPartial"], true);
        assert_eq!(fields["executionStarted"], false);
        assert!(fields.get("result").is_none());

        let done = ChatItem::Tool(ToolExecutionState::new(call).with_result(ToolResultView {
            content: vec![crate::ai::message::UserBlock::text("ok")],
            details: Some(json!({"todos": []})),
            is_error: true,
        }));
        let fields = render_fields(&done, 80, false).unwrap();
        assert_eq!(fields["isPartial"], false);
        assert_eq!(fields["isError"], true);
        assert_eq!(fields["executionStarted"], true);
        assert_eq!(fields["result"]["content"][0]["type"], "text");
        assert_eq!(fields["result"]["content"][0]["text"], "ok");
        assert_eq!(fields["result"]["details"]["todos"], json!([]));
    }

    #[test]
    fn answers_become_lines_or_fallbacks() {
        let host = tool_lines(&json!({"shell": "self", "call": ["a", "b"], "result": null}));
        assert!(host.self_shell);
        assert_eq!(host.call, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(host.result, None);
        assert_eq!(string_lines(Some(&Value::Null)), None);
        assert_eq!(
            string_lines(Some(&json!(["x", 3]))),
            Some(vec!["x".to_string(), "3".to_string()])
        );
    }
}
