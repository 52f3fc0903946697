//! pi's JSON form of the agent loop's events (`agent_start`, `message_update`,
//! `tool_execution_end` …), as `--mode json`, RPC clients and extensions receive them.
//! Session-level events are added on top by `core::events`.

use serde_json::{Value, json};

use super::events::AgentEvent;
use crate::ai::message::AssistantMessage;
use crate::ai::stream::{PartialMessage, StreamEvent};
use crate::messages::AgentMessage;
use crate::tools::ToolOutput;

fn message_json(message: &AgentMessage) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

fn assistant_json(message: &AssistantMessage) -> Value {
    serde_json::to_value(crate::ai::stream::with_role(message)).unwrap_or(Value::Null)
}

/// pi's `{content, details}` tool result object.
pub fn tool_output_json(output: &ToolOutput) -> Value {
    let mut v = json!({ "content": output.content });
    if let Some(details) = &output.details {
        v["details"] = details.clone();
    }
    v
}

/// Turns agent events into pi's JSON objects. Keeps the partial assistant message that
/// pi attaches to every `message_update`, so it must see every event of a run in order.
#[derive(Debug, Default)]
pub struct AgentEventEncoder {
    partial: PartialMessage,
}

impl AgentEventEncoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// The JSON object for one event.
    pub fn encode(&mut self, event: &AgentEvent) -> Value {
        match event {
            AgentEvent::AgentStart => json!({"type": "agent_start"}),
            AgentEvent::AgentEnd {
                messages,
                will_retry,
            } => json!({
                "type": "agent_end",
                "messages": messages.iter().map(message_json).collect::<Vec<_>>(),
                "willRetry": will_retry,
            }),
            AgentEvent::TurnStart => json!({"type": "turn_start"}),
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                let results: Vec<Value> = tool_results
                    .iter()
                    .map(|r| message_json(&AgentMessage::ToolResult(r.clone())))
                    .collect();
                json!({"type": "turn_end", "message": message_json(message), "toolResults": results})
            }
            AgentEvent::MessageStart { message } => {
                if let AgentMessage::Assistant(a) = message {
                    self.partial = PartialMessage::new(a.clone());
                }
                json!({"type": "message_start", "message": message_json(message)})
            }
            AgentEvent::MessageUpdate { event } => {
                self.partial.apply(event);
                json!({
                    "type": "message_update",
                    "message": assistant_json(&self.partial.message),
                    "assistantMessageEvent": event.to_json(&self.partial.message),
                })
            }
            AgentEvent::MessageEnd { message } => {
                json!({"type": "message_end", "message": message_json(message)})
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => json!({
                "type": "tool_execution_start", "toolCallId": tool_call_id,
                "toolName": tool_name, "args": args,
            }),
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial,
            } => json!({
                "type": "tool_execution_update", "toolCallId": tool_call_id,
                "toolName": tool_name, "args": args, "partialResult": tool_output_json(partial),
            }),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
            } => {
                let mut v = json!({
                    "type": "tool_execution_end", "toolCallId": tool_call_id,
                    "toolName": tool_name, "result": tool_output_json(result), "isError": is_error,
                });
                if let Some(ms) = duration_ms {
                    v["durationMs"] = Value::from(*ms);
                }
                v
            }
        }
    }

    /// The JSON object for one event as pi 1.6 writes it to `--mode json` and RPC
    /// clients: like [`AgentEventEncoder::encode`], except that `message_update` carries
    /// only the delta and the answer's latest `usage` — no cumulative `message`, no
    /// `partial` — so the stream grows linearly with the answer. `toolcall_start` names
    /// the call (`id`, `toolName`) instead.
    pub fn encode_wire(&mut self, event: &AgentEvent) -> Value {
        let AgentEvent::MessageUpdate { event } = event else {
            return self.encode(event);
        };
        self.partial.apply(event);
        let usage = serde_json::to_value(&self.partial.message.usage).unwrap_or(Value::Null);
        json!({
            "type": "message_update",
            "usage": usage,
            "assistantMessageEvent": stream_event_delta_json(event, &self.partial.message),
        })
    }
}

/// One provider stream event without its `partial` snapshot (pi 1.6's wire form).
fn stream_event_delta_json(event: &StreamEvent, partial: &AssistantMessage) -> Value {
    match event {
        StreamEvent::Start => json!({"type": "start"}),
        StreamEvent::TextStart { content_index } | StreamEvent::ThinkingStart { content_index } => {
            json!({"type": event.type_name(), "contentIndex": content_index})
        }
        StreamEvent::ToolCallStart {
            content_index,
            id,
            name,
        } => {
            json!({"type": "toolcall_start", "contentIndex": content_index, "id": id, "toolName": name})
        }
        StreamEvent::TextDelta {
            content_index,
            delta,
        }
        | StreamEvent::ThinkingDelta {
            content_index,
            delta,
        }
        | StreamEvent::ToolCallDelta {
            content_index,
            delta,
        } => json!({"type": event.type_name(), "contentIndex": content_index, "delta": delta}),
        StreamEvent::TextEnd {
            content_index,
            content,
            ..
        }
        | StreamEvent::ThinkingEnd {
            content_index,
            content,
            ..
        } => json!({"type": event.type_name(), "contentIndex": content_index, "content": content}),
        StreamEvent::ToolCallEnd { .. } | StreamEvent::Done { .. } | StreamEvent::Error { .. } => {
            let mut v = event.to_json(partial);
            if let Some(map) = v.as_object_mut() {
                map.remove("partial");
            }
            v
        }
    }
}
