//! Token counts without a tokenizer: pi's `ceil(chars / 4)` estimates and the usage the
//! provider reported, combined the way pi decides how full the context is.
//!
//! "chars" are JavaScript string lengths (UTF-16 code units), so estimates equal pi's for
//! every text. These numbers choose cut points and compaction triggers, so they must not
//! drift from pi's even where a real tokenizer would disagree.

use std::borrow::Borrow;

use crate::ai::js::utf16_len;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, StopReason, Usage, UserBlock, UserContent,
};
use crate::compaction::js::stringify_len_utf16;
use crate::compaction::settings::CompactionSettings;
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

/// What an image is assumed to weigh, in characters (1200 tokens).
pub const IMAGE_CHARS: usize = 4800;

fn ceil_quarter(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// Characters of the text blocks of a user message (images are not counted for user
/// messages, as in pi).
fn user_text_chars(content: &UserContent) -> usize {
    match content {
        UserContent::Text(s) => utf16_len(s),
        UserContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                UserBlock::Text(t) => utf16_len(&t.text),
                UserBlock::Image(_) => 0,
            })
            .sum(),
    }
}

/// Characters of tool-result or custom-message blocks: text plus [`IMAGE_CHARS`] per image.
fn blocks_with_images_chars(blocks: &[UserBlock]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => utf16_len(&t.text),
            UserBlock::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

fn assistant_chars(message: &AssistantMessage) -> usize {
    message
        .content
        .iter()
        .map(|b| match b {
            AssistantBlock::Text(t) => utf16_len(&t.text),
            AssistantBlock::Thinking(t) => utf16_len(&t.thinking),
            AssistantBlock::ToolCall(tc) => {
                utf16_len(&tc.name) + stringify_len_utf16(&tc.arguments)
            }
        })
        .sum()
}

/// pi's `estimateTokens`: `ceil(chars / 4)` of what the message contributes to a context.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::User(m) => user_text_chars(&m.content),
        AgentMessage::Assistant(m) => assistant_chars(m),
        AgentMessage::ToolResult(m) => blocks_with_images_chars(&m.content),
        AgentMessage::Custom(m) => match &m.content {
            UserContent::Text(s) => utf16_len(s),
            UserContent::Blocks(blocks) => blocks_with_images_chars(blocks),
        },
        AgentMessage::BashExecution(m) => utf16_len(&m.command) + utf16_len(&m.output),
        AgentMessage::BranchSummary(m) => utf16_len(&m.summary),
        AgentMessage::CompactionSummary(m) => utf16_len(&m.summary),
        AgentMessage::System(m) => {
            let content = match &m.content {
                Some(UserContent::Text(s)) => utf16_len(s),
                Some(UserContent::Blocks(blocks)) => blocks_with_images_chars(blocks),
                None => 0,
            };
            let sections: usize = m
                .sections
                .iter()
                .flatten()
                .filter_map(|(_, v)| v.as_str())
                .map(utf16_len)
                .sum();
            let tools = m.tools_added.as_ref().map_or(0, |t| {
                serde_json::to_value(t).map_or(0, |v| stringify_len_utf16(&v))
            });
            content + sections + tools
        }
        AgentMessage::Unknown(_) => 0,
    };
    ceil_quarter(chars)
}

/// Tokens the context held for a response: `totalTokens`, or the sum of its parts when a
/// provider did not report a total.
pub fn context_tokens(usage: &Usage) -> u64 {
    usage.context_tokens()
}

/// The usage of an assistant message if it can be trusted: aborted and failed responses
/// carry no meaningful usage.
fn valid_usage(message: &AgentMessage) -> Option<&Usage> {
    match message {
        AgentMessage::Assistant(a)
            if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error) =>
        {
            Some(&a.usage)
        }
        _ => None,
    }
}

/// The usage of the last successful assistant message on a path (pi's
/// `getLastAssistantUsage`).
pub fn last_assistant_usage<E: Borrow<SessionEntry>>(path_entries: &[E]) -> Option<&Usage> {
    path_entries
        .iter()
        .rev()
        .find_map(|e| e.borrow().message().and_then(valid_usage))
}

/// How full a context is, split into what the provider reported and what was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// Context tokens reported with the last successful assistant message (0 if none).
    pub usage_tokens: u64,
    /// Estimated tokens of the messages after that assistant message (or of all messages).
    pub trailing_tokens: u64,
    /// Index of the assistant message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// pi's `estimateContextTokens`: the last reported usage plus estimates for the messages
/// after it; only estimates when no response reported usage.
pub fn estimate_context_tokens<M: Borrow<AgentMessage>>(messages: &[M]) -> ContextEstimate {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| valid_usage(m.borrow()).map(|u| (i, u)));
    match last {
        None => {
            let estimated = messages.iter().map(|m| estimate_tokens(m.borrow())).sum();
            ContextEstimate {
                tokens: estimated,
                usage_tokens: 0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((index, usage)) => {
            let usage_tokens = context_tokens(usage);
            let trailing_tokens = messages[index + 1..]
                .iter()
                .map(|m| estimate_tokens(m.borrow()))
                .sum();
            ContextEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
    }
}

/// Whether a context of `context_tokens` is over the threshold
/// `context_window - reserve_tokens` (never, when auto-compaction is disabled).
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    if !settings.enabled {
        return false;
    }
    // Signed, as in pi: a window smaller than the reserve means "always over".
    i128::from(context_tokens) > i128::from(context_window) - i128::from(settings.reserve_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage};
    use crate::messages::{BashExecutionMessage, CustomMessage};
    use serde_json::json;

    fn assistant(blocks: Vec<AssistantBlock>, stop: StopReason, total: u64) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            content: blocks,
            stop_reason: stop,
            usage: Usage {
                total_tokens: total,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        })
    }

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage::text(text, 0))
    }

    fn image() -> UserBlock {
        UserBlock::Image(ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
            ..ImageContent::default()
        })
    }

    #[test]
    fn estimates_follow_pi_per_message_kind() {
        let tool_call = AssistantBlock::ToolCall(ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: json!({"path": "a.txt"}),
            ..ToolCall::default()
        });
        let text = AssistantBlock::Text(TextContent::new("hello"));
        let cases: Vec<(&str, AgentMessage)> = vec![
            ("user text", user("12345")),
            (
                "user image ignored",
                AgentMessage::User(UserMessage {
                    content: UserContent::Blocks(vec![UserBlock::text("abcd"), image()]),
                    ..UserMessage::default()
                }),
            ),
            // 5 + "read"(4) + {"path":"a.txt"}(16) = 25 chars
            (
                "assistant",
                assistant(vec![text, tool_call], StopReason::ToolUse, 0),
            ),
            (
                "tool result image",
                AgentMessage::ToolResult(ToolResultMessage {
                    content: vec![UserBlock::text("ok"), image()],
                    ..ToolResultMessage::default()
                }),
            ),
            (
                "custom string",
                AgentMessage::Custom(CustomMessage {
                    content: UserContent::Text("123456789".into()),
                    ..CustomMessage::default()
                }),
            ),
            (
                "bash",
                AgentMessage::BashExecution(BashExecutionMessage {
                    command: "ls".into(),
                    output: "a b".into(),
                    ..BashExecutionMessage::default()
                }),
            ),
            ("astral chars count twice", user("😀😀")),
            (
                "unknown",
                AgentMessage::Unknown(json!({"role": "x", "text": "long text"})),
            ),
        ];
        let out: Vec<String> = cases
            .iter()
            .map(|(name, m)| format!("{name}: {}", estimate_tokens(m)))
            .collect();
        insta::assert_snapshot!(out.join("\n"), @r"
        user text: 2
        user image ignored: 1
        assistant: 7
        tool result image: 1201
        custom string: 3
        bash: 2
        astral chars count twice: 1
        unknown: 0
        ");
    }

    #[test]
    fn context_estimate_uses_last_successful_usage_plus_later_messages() {
        let messages = vec![
            user("x"),
            assistant(vec![], StopReason::Stop, 1000),
            user("12345678"),
            assistant(
                vec![AssistantBlock::Text(TextContent::new("1234"))],
                StopReason::Error,
                9999,
            ),
        ];
        assert_eq!(
            estimate_context_tokens(&messages),
            ContextEstimate {
                tokens: 1003,
                usage_tokens: 1000,
                trailing_tokens: 3,
                last_usage_index: Some(1)
            }
        );
        let no_usage = vec![user("12345678"), user("1")];
        assert_eq!(
            estimate_context_tokens(&no_usage),
            ContextEstimate {
                tokens: 3,
                usage_tokens: 0,
                trailing_tokens: 3,
                last_usage_index: None
            }
        );
    }

    #[test]
    fn usage_without_total_sums_its_parts() {
        let usage = Usage {
            input: 10,
            output: 5,
            cache_read: 3,
            cache_write: 2,
            ..Usage::default()
        };
        assert_eq!(context_tokens(&usage), 20);
    }

    #[test]
    fn threshold_is_window_minus_reserve_and_respects_enabled() {
        let s = CompactionSettings::default();
        assert!(!should_compact(200_000 - 16384, 200_000, &s));
        assert!(should_compact(200_000 - 16383, 200_000, &s));
        assert!(
            should_compact(0, 1000, &s),
            "window below reserve is always over"
        );
        let off = CompactionSettings {
            enabled: false,
            ..CompactionSettings::default()
        };
        assert!(!should_compact(1_000_000, 1000, &off));
    }
}
