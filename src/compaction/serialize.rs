//! The conversation as plain text for the summarizer.
//!
//! Sending history as text inside `<conversation>` tags (instead of as chat messages)
//! keeps the summarizing model from answering it. The format is pi's, to the character:
//! one block per part (`[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(key=JSON, …); …`, `[Tool result]: …`), blocks separated
//! by a blank line, tool results cut to 2000 characters.

use crate::ai::message::{AssistantBlock, Message, UserBlock, UserContent};
use crate::compaction::js::{js_entries, split_at_utf16, stringify};
use crate::messages::{AgentMessage, convert_to_llm};

/// Tool results longer than this (in JavaScript characters) are cut for the summarizer.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The text blocks of user or tool-result content, concatenated without a separator.
fn text_of_blocks(blocks: &[UserBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect()
}

/// Keeps the first [`TOOL_RESULT_MAX_CHARS`] characters and says how many were dropped.
fn truncate_tool_result(text: &str) -> String {
    let (kept, dropped) = split_at_utf16(text, TOOL_RESULT_MAX_CHARS);
    if dropped == 0 {
        return text.to_string();
    }
    format!("{kept}\n\n[... {dropped} more characters truncated]")
}

/// `name(k1=JSON, k2=JSON)` as pi writes a tool call. Arguments that are not an object
/// (never produced by a working provider) contribute their array items, or nothing.
fn format_tool_call(name: &str, arguments: &serde_json::Value) -> String {
    let args = match arguments {
        serde_json::Value::Object(map) => js_entries(map)
            .into_iter()
            .map(|(k, v)| format!("{k}={}", stringify(v)))
            .collect::<Vec<_>>(),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{i}={}", stringify(v)))
            .collect(),
        _ => Vec::new(),
    };
    format!("{name}({})", args.join(", "))
}

/// pi's `serializeConversation` over model-level messages.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(m) => {
                let text = match &m.content {
                    UserContent::Text(s) => s.clone(),
                    UserContent::Blocks(blocks) => text_of_blocks(blocks),
                };
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(m) => {
                let mut texts = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &m.content {
                    match block {
                        AssistantBlock::Text(t) => texts.push(t.text.as_str()),
                        AssistantBlock::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantBlock::ToolCall(tc) => {
                            calls.push(format_tool_call(&tc.name, &tc.arguments));
                        }
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !texts.is_empty() {
                    parts.push(format!("[Assistant]: {}", texts.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(m) => {
                let text = text_of_blocks(&m.content);
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_tool_result(&text)));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// Converts coding-agent messages to what a model would see (bash runs, custom messages
/// and summaries become user text) and serializes them.
pub fn serialize_agent_messages(messages: &[AgentMessage]) -> String {
    serialize_conversation(&convert_to_llm(messages))
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
