//! The conversation as plain text for the summarizer.
//!
//! Sending history as text inside `<conversation>` tags (instead of as chat messages)
//! keeps the summarizing model from answering it. The format is pi's, to the character:
//! one block per part (`[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(key=JSON, …); …`, `[Tool result]: …`), blocks separated
//! by a blank line, tool results cut to 2000 characters.

use std::borrow::{Borrow, Cow};

use crate::ai::js::split_at_utf16;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, Message, ToolResultMessage, UserBlock, UserContent,
    UserMessage,
};
use crate::compaction::js::{js_entries, write_stringified};
use crate::messages::AgentMessage;

/// Tool results longer than this (in JavaScript characters) are cut for the summarizer.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The text being built: parts separated by a blank line.
#[derive(Default)]
struct Transcript(String);

impl Transcript {
    /// Starts a new part with its label (`[User]: `, …).
    fn part(&mut self, label: &str) -> &mut String {
        if !self.0.is_empty() {
            self.0.push_str("\n\n");
        }
        self.0.push_str(label);
        &mut self.0
    }
}

/// The text blocks of user or tool-result content, concatenated without a separator
/// (borrowed when there is a single text block).
fn text_of_blocks(blocks: &[UserBlock]) -> Cow<'_, str> {
    let mut texts = blocks.iter().filter_map(|b| match b {
        UserBlock::Text(t) => Some(t.text.as_str()),
        UserBlock::Image(_) => None,
    });
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut all = format!("{first}{second}");
            all.extend(texts);
            Cow::Owned(all)
        }
    }
}

fn write_user(out: &mut Transcript, m: &UserMessage) {
    let text = match &m.content {
        UserContent::Text(s) => Cow::Borrowed(s.as_str()),
        UserContent::Blocks(blocks) => text_of_blocks(blocks),
    };
    if !text.is_empty() {
        out.part("[User]: ").push_str(&text);
    }
}

/// `name(k1=JSON, k2=JSON)` as pi writes a tool call. Arguments that are not an object
/// (never produced by a working provider) contribute their array items, or nothing.
fn write_tool_call(buf: &mut String, name: &str, arguments: &serde_json::Value) {
    buf.push_str(name);
    buf.push('(');
    let mut write_arg = |i: usize, key: &str, value: &serde_json::Value| {
        if i > 0 {
            buf.push_str(", ");
        }
        buf.push_str(key);
        buf.push('=');
        write_stringified(value, buf);
    };
    match arguments {
        serde_json::Value::Object(map) => {
            for (i, (k, v)) in js_entries(map).into_iter().enumerate() {
                write_arg(i, k, v);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                write_arg(i, &i.to_string(), v);
            }
        }
        _ => {}
    }
    buf.push(')');
}

fn write_assistant(out: &mut Transcript, m: &AssistantMessage) {
    let mut write_joined = |label: &str, texts: &mut dyn Iterator<Item = &str>| {
        let mut texts = texts.peekable();
        if texts.peek().is_none() {
            return;
        }
        let buf = out.part(label);
        for (i, text) in texts.enumerate() {
            if i > 0 {
                buf.push('\n');
            }
            buf.push_str(text);
        }
    };
    write_joined(
        "[Assistant thinking]: ",
        &mut m.content.iter().filter_map(|b| match b {
            AssistantBlock::Thinking(t) => Some(t.thinking.as_str()),
            _ => None,
        }),
    );
    write_joined(
        "[Assistant]: ",
        &mut m.content.iter().filter_map(|b| match b {
            AssistantBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        }),
    );
    let mut calls = m.tool_calls().peekable();
    if calls.peek().is_some() {
        let buf = out.part("[Assistant tool calls]: ");
        for (i, call) in calls.enumerate() {
            if i > 0 {
                buf.push_str("; ");
            }
            write_tool_call(buf, &call.name, &call.arguments);
        }
    }
}

fn write_tool_result(out: &mut Transcript, m: &ToolResultMessage) {
    let text = text_of_blocks(&m.content);
    if text.is_empty() {
        return;
    }
    let (kept, dropped) = split_at_utf16(&text, TOOL_RESULT_MAX_CHARS);
    let buf = out.part("[Tool result]: ");
    buf.push_str(kept);
    if dropped > 0 {
        buf.push_str(&format!("\n\n[... {dropped} more characters truncated]"));
    }
}

fn write_message(out: &mut Transcript, message: &Message) {
    match message {
        Message::User(m) => write_user(out, m),
        Message::Assistant(m) => write_assistant(out, m),
        Message::ToolResult(m) => write_tool_result(out, m),
    }
}

/// pi's `serializeConversation` over model-level messages.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut out = Transcript::default();
    for message in messages {
        write_message(&mut out, message);
    }
    out.0
}

/// Serializes coding-agent messages as a model would see them (pi's
/// `serializeConversation(convertToLlm(messages))`): bash runs, extension messages and
/// summaries become user text; excluded bash runs and unknown roles are left out.
pub fn serialize_agent_messages<M: Borrow<AgentMessage>>(messages: &[M]) -> String {
    let mut out = Transcript::default();
    for message in messages {
        match message.borrow() {
            AgentMessage::User(m) => write_user(&mut out, m),
            AgentMessage::Assistant(m) => write_assistant(&mut out, m),
            AgentMessage::ToolResult(m) => write_tool_result(&mut out, m),
            other => {
                if let Some(converted) = other.to_llm() {
                    write_message(&mut out, &converted);
                }
            }
        }
    }
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{
        AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
        UserMessage,
    };
    use crate::messages::{BashExecutionMessage, BranchSummaryMessage, CustomMessage};
    use serde_json::json;

    #[test]
    fn every_part_of_a_conversation_has_its_label() {
        let messages = vec![
            AgentMessage::User(UserMessage {
                content: UserContent::Blocks(vec![
                    UserBlock::text("look at "),
                    UserBlock::Image(ImageContent::default()),
                    UserBlock::text("this"),
                ]),
                ..UserMessage::default()
            }),
            AgentMessage::Assistant(AssistantMessage {
                content: vec![
                    AssistantBlock::Thinking(ThinkingContent {
                        thinking: "hmm".into(),
                        ..ThinkingContent::default()
                    }),
                    AssistantBlock::Text(TextContent::new("first")),
                    AssistantBlock::ToolCall(ToolCall {
                        name: "bash".into(),
                        arguments: json!({"command": "ls \"x\"", "timeout": 5}),
                        ..ToolCall::default()
                    }),
                    AssistantBlock::Thinking(ThinkingContent {
                        thinking: "more".into(),
                        ..ThinkingContent::default()
                    }),
                    AssistantBlock::Text(TextContent::new("second")),
                    AssistantBlock::ToolCall(ToolCall {
                        name: "read".into(),
                        arguments: json!({"path": "a.rs", "offset": 1.5}),
                        ..ToolCall::default()
                    }),
                ],
                ..AssistantMessage::default()
            }),
            AgentMessage::ToolResult(ToolResultMessage {
                content: vec![UserBlock::text("out"), UserBlock::text("put")],
                ..ToolResultMessage::default()
            }),
            AgentMessage::ToolResult(ToolResultMessage::default()),
            AgentMessage::BashExecution(BashExecutionMessage {
                command: "pwd".into(),
                output: "/x".into(),
                ..BashExecutionMessage::default()
            }),
            AgentMessage::BashExecution(BashExecutionMessage {
                command: "secret".into(),
                exclude_from_context: Some(true),
                ..BashExecutionMessage::default()
            }),
            AgentMessage::Custom(CustomMessage {
                content: UserContent::Text("from an extension".into()),
                ..CustomMessage::default()
            }),
            AgentMessage::BranchSummary(BranchSummaryMessage {
                summary: "S".into(),
                ..BranchSummaryMessage::default()
            }),
        ];
        insta::assert_snapshot!(serialize_agent_messages(&messages), @r#"
        [User]: look at this

        [Assistant thinking]: hmm
        more

        [Assistant]: first
        second

        [Assistant tool calls]: bash(command="ls \"x\"", timeout=5); read(path="a.rs", offset=1.5)

        [Tool result]: output

        [User]: Ran `pwd`
        ```
        /x
        ```

        [User]: from an extension

        [User]: The following is a summary of a branch that this conversation came back from:

        <summary>
        S</summary>
        "#);
    }

    #[test]
    fn long_tool_results_are_cut_with_a_count_of_what_was_dropped() {
        let long = format!("{}{}", "a".repeat(1999), "😀tail");
        let messages = vec![Message::ToolResult(ToolResultMessage {
            content: vec![UserBlock::text(long)],
            ..ToolResultMessage::default()
        })];
        // 1999 + 2 (emoji) + 4 = 2005 units; the emoji does not fit whole, so the cut is
        // after 1999 units and the count says 5 (pi counts from 2000).
        let text = serialize_conversation(&messages);
        assert_eq!(
            text,
            format!(
                "[Tool result]: {}\n\n[... 5 more characters truncated]",
                "a".repeat(1999)
            )
        );
        let exact = vec![Message::ToolResult(ToolResultMessage {
            content: vec![UserBlock::text("b".repeat(2000))],
            ..ToolResultMessage::default()
        })];
        assert_eq!(
            serialize_conversation(&exact),
            format!("[Tool result]: {}", "b".repeat(2000))
        );
    }

    #[test]
    fn empty_conversation_is_empty_text() {
        assert_eq!(serialize_conversation(&[]), "");
    }
}
