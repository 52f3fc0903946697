//! The provider-neutral streaming protocol: what a provider emits while a response
//! arrives, and how a consumer rebuilds the partial message from those events.
//!
//! Contract (same as pi-ai): a stream starts with [`StreamEvent::Start`], then block
//! events, and ends with exactly one [`StreamEvent::Done`] or [`StreamEvent::Error`]
//! carrying the final message. Providers never fail out of band: network errors, bad
//! status codes and cancellation all end as an `Error` event whose message has
//! `stop_reason` `error` or `aborted` and an `error_message`.
//!
//! Unlike pi, events do not carry a copy of the whole partial message (that would make
//! streaming quadratic). Consumers keep a [`PartialMessage`] and feed every event to
//! [`PartialMessage::apply`].

use std::pin::Pin;

use futures::Stream;
use serde::Serialize;

use super::message::{
    AssistantBlock, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall,
};

/// One streaming event. `content_index` is the index of the block in the final message.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    Start,
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    TextEnd {
        content_index: usize,
        content: String,
        text_signature: Option<String>,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
        signature: Option<String>,
        redacted: bool,
    },
    ToolCallStart {
        content_index: usize,
        id: String,
        name: String,
    },
    /// A fragment of the tool call's JSON arguments.
    ToolCallDelta {
        content_index: usize,
        delta: String,
    },
    ToolCallEnd {
        content_index: usize,
        tool_call: ToolCall,
    },
    /// The response finished normally (`stop`, `length` or `toolUse`).
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    /// The response failed or was aborted; `error` holds everything received so far.
    Error {
        reason: StopReason,
        error: AssistantMessage,
    },
}

impl StreamEvent {
    /// pi's event `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            StreamEvent::Start => "start",
            StreamEvent::TextStart { .. } => "text_start",
            StreamEvent::TextDelta { .. } => "text_delta",
            StreamEvent::TextEnd { .. } => "text_end",
            StreamEvent::ThinkingStart { .. } => "thinking_start",
            StreamEvent::ThinkingDelta { .. } => "thinking_delta",
            StreamEvent::ThinkingEnd { .. } => "thinking_end",
            StreamEvent::ToolCallStart { .. } => "toolcall_start",
            StreamEvent::ToolCallDelta { .. } => "toolcall_delta",
            StreamEvent::ToolCallEnd { .. } => "toolcall_end",
            StreamEvent::Done { .. } => "done",
            StreamEvent::Error { .. } => "error",
        }
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, StreamEvent::Done { .. } | StreamEvent::Error { .. })
    }

    /// pi's JSON shape of this event, with `partial` taken from the consumer's copy.
    pub fn to_json(&self, partial: &AssistantMessage) -> serde_json::Value {
        use serde_json::json;
        let partial = serde_json::to_value(with_role(partial)).unwrap_or_default();
        match self {
            StreamEvent::Start => json!({"type": "start", "partial": partial}),
            StreamEvent::TextStart { content_index }
            | StreamEvent::ThinkingStart { content_index }
            | StreamEvent::ToolCallStart { content_index, .. } => {
                json!({"type": self.type_name(), "contentIndex": content_index, "partial": partial})
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
            } => {
                json!({"type": self.type_name(), "contentIndex": content_index, "delta": delta, "partial": partial})
            }
            StreamEvent::TextEnd {
                content_index,
                content,
                ..
            }
            | StreamEvent::ThinkingEnd {
                content_index,
                content,
                ..
            } => {
                json!({"type": self.type_name(), "contentIndex": content_index, "content": content, "partial": partial})
            }
            StreamEvent::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                let mut tc = serde_json::to_value(tool_call).unwrap_or_default();
                if let Some(obj) = tc.as_object_mut() {
                    obj.insert("type".into(), "toolCall".into());
                }
                json!({"type": "toolcall_end", "contentIndex": content_index, "toolCall": tc, "partial": partial})
            }
            StreamEvent::Done { reason, message } => {
                json!({"type": "done", "reason": reason.as_str(), "message": with_role(message)})
            }
            StreamEvent::Error { reason, error } => {
                json!({"type": "error", "reason": reason.as_str(), "error": with_role(error)})
            }
        }
    }
}

/// Serializes an assistant message with its `"role":"assistant"` tag.
pub fn with_role(message: &AssistantMessage) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct Tagged<'a> {
        role: &'static str,
        #[serde(flatten)]
        inner: &'a AssistantMessage,
    }
    Tagged {
        role: "assistant",
        inner: message,
    }
}

/// A boxed stream of events, as returned by every provider.
pub type EventStream = Pin<Box<dyn Stream<Item = StreamEvent> + Send>>;

/// A consumer-side mirror of the message being streamed.
///
/// Tool-call arguments arrive as JSON fragments; `partial_args` keeps the raw text so a
/// UI can show arguments while they stream (see `ai::json_partial` for lenient parsing).
#[derive(Debug, Clone, Default)]
pub struct PartialMessage {
    pub message: AssistantMessage,
    /// Raw argument JSON received so far, per content index (tool calls only).
    pub partial_args: Vec<Option<String>>,
}

impl PartialMessage {
    pub fn new(message: AssistantMessage) -> Self {
        Self {
            message,
            partial_args: Vec::new(),
        }
    }

    fn ensure(&mut self, index: usize, block: impl FnOnce() -> AssistantBlock) {
        while self.message.content.len() < index {
            self.message
                .content
                .push(AssistantBlock::Text(TextContent::default()));
        }
        if self.message.content.len() == index {
            self.message.content.push(block());
        }
        if self.partial_args.len() <= index {
            self.partial_args.resize(index + 1, None);
        }
    }

    /// Updates the mirror with one event. Terminal events replace the message wholesale.
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Start => {}
            StreamEvent::TextStart { content_index } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Text(TextContent::default())
                });
            }
            StreamEvent::TextDelta {
                content_index,
                delta,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Text(TextContent::default())
                });
                if let Some(AssistantBlock::Text(t)) = self.message.content.get_mut(*content_index)
                {
                    t.text.push_str(delta);
                }
            }
            StreamEvent::TextEnd {
                content_index,
                content,
                text_signature,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Text(TextContent::default())
                });
                if let Some(AssistantBlock::Text(t)) = self.message.content.get_mut(*content_index)
                {
                    t.text.clone_from(content);
                    t.text_signature.clone_from(text_signature);
                }
            }
            StreamEvent::ThinkingStart { content_index } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Thinking(ThinkingContent::default())
                });
            }
            StreamEvent::ThinkingDelta {
                content_index,
                delta,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Thinking(ThinkingContent::default())
                });
                if let Some(AssistantBlock::Thinking(t)) =
                    self.message.content.get_mut(*content_index)
                {
                    t.thinking.push_str(delta);
                }
            }
            StreamEvent::ThinkingEnd {
                content_index,
                content,
                signature,
                redacted,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::Thinking(ThinkingContent::default())
                });
                if let Some(AssistantBlock::Thinking(t)) =
                    self.message.content.get_mut(*content_index)
                {
                    t.thinking.clone_from(content);
                    t.thinking_signature.clone_from(signature);
                    t.redacted = redacted.then_some(true);
                }
            }
            StreamEvent::ToolCallStart {
                content_index,
                id,
                name,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::ToolCall(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: serde_json::Value::Object(Default::default()),
                        ..ToolCall::default()
                    })
                });
                if let Some(slot) = self.partial_args.get_mut(*content_index) {
                    *slot = Some(String::new());
                }
            }
            StreamEvent::ToolCallDelta {
                content_index,
                delta,
            } => {
                if let Some(Some(buf)) = self.partial_args.get_mut(*content_index) {
                    buf.push_str(delta);
                }
            }
            StreamEvent::ToolCallEnd {
                content_index,
                tool_call,
            } => {
                self.ensure(*content_index, || {
                    AssistantBlock::ToolCall(tool_call.clone())
                });
                if let Some(block) = self.message.content.get_mut(*content_index) {
                    *block = AssistantBlock::ToolCall(tool_call.clone());
                }
                if let Some(slot) = self.partial_args.get_mut(*content_index) {
                    *slot = None;
                }
            }
            StreamEvent::Done { message, .. } => {
                self.message = message.clone();
                self.partial_args.clear();
            }
            StreamEvent::Error { error, .. } => {
                self.message = error.clone();
                self.partial_args.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_message_rebuilds_text_thinking_and_tool_calls() {
        let mut p = PartialMessage::default();
        let events = [
            StreamEvent::Start,
            StreamEvent::ThinkingStart { content_index: 0 },
            StreamEvent::ThinkingDelta {
                content_index: 0,
                delta: "hm".into(),
            },
            StreamEvent::ThinkingEnd {
                content_index: 0,
                content: "hmm".into(),
                signature: Some("sig".into()),
                redacted: false,
            },
            StreamEvent::TextStart { content_index: 1 },
            StreamEvent::TextDelta {
                content_index: 1,
                delta: "Hel".into(),
            },
            StreamEvent::TextDelta {
                content_index: 1,
                delta: "lo".into(),
            },
            StreamEvent::ToolCallStart {
                content_index: 2,
                id: "c1".into(),
                name: "read".into(),
            },
            StreamEvent::ToolCallDelta {
                content_index: 2,
                delta: "{\"pa".into(),
            },
        ];
        for e in &events {
            p.apply(e);
        }
        assert_eq!(p.message.text(), "Hello");
        assert_eq!(p.partial_args[2].as_deref(), Some("{\"pa"));
        match &p.message.content[0] {
            AssistantBlock::Thinking(t) => {
                assert_eq!(t.thinking, "hmm");
                assert_eq!(t.thinking_signature.as_deref(), Some("sig"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
