//! The output budget of a request (pi 1.6 `clampMaxTokensToContext`): the requested
//! maximum, or the model's, cut to what the context window leaves after the estimated
//! input and a safety margin.
//!
//! The input is estimated as pi 1.6 does: the usage the last valid assistant response
//! reported for the prefix, plus 3.5 characters per token for what follows it (or for
//! everything, prompt and tool declarations included, when no response counts).

use crate::ai::js::utf16_len;
use crate::ai::message::{AssistantBlock, Context, Message, UserBlock, UserContent};
use crate::ai::model::Model;

const CHARS_PER_TOKEN: f64 = 3.5;
const IMAGE_CHARS: usize = 4800;
/// Tokens always kept free for the input being counted higher than estimated.
const SAFETY_TOKENS: u64 = 4096;
/// The proportional margin, kept only while it leaves this much room for output.
const SAFETY_RATIO: f64 = 0.15;
const MIN_OUTPUT_WITH_RATIO_MARGIN: u64 = 32_768;

fn tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn blocks_chars(blocks: &[UserBlock]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserBlock::Text(t) => utf16_len(&t.text),
            UserBlock::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

fn message_tokens(message: &Message) -> u64 {
    match message {
        Message::User(u) => tokens(match &u.content {
            UserContent::Text(s) => utf16_len(s),
            UserContent::Blocks(b) => blocks_chars(b),
        }),
        Message::ToolResult(r) => tokens(blocks_chars(&r.content)),
        Message::Assistant(a) => tokens(
            a.content
                .iter()
                .map(|b| match b {
                    AssistantBlock::Text(t) => utf16_len(&t.text),
                    AssistantBlock::Thinking(t) => utf16_len(&t.thinking),
                    AssistantBlock::ToolCall(c) => {
                        utf16_len(&c.name)
                            + serde_json::to_string(&c.arguments).map_or(0, |s| utf16_len(&s))
                    }
                })
                .sum(),
        ),
    }
}

/// The leading system message a request carries: the prompt and the tool declarations.
fn system_tokens(context: &Context) -> u64 {
    let prompt = context.system_prompt.as_deref().map_or(0, utf16_len);
    let tools = if context.tools.is_empty() {
        0
    } else {
        tokens(serde_json::to_string(&context.tools).map_or(0, |s| utf16_len(&s)))
    };
    tokens(prompt) + tools
}

/// pi 1.6's `estimateContextTokens` for a request's context.
pub fn estimate_input_tokens(context: &Context) -> u64 {
    // The last assistant response whose usage still describes its prefix: none newer
    // than it was inserted before it (the leading system message has timestamp 0).
    let mut latest_prefix = 0i64;
    let mut last_usage: Option<(usize, u64)> = None;
    for (i, message) in context.messages.iter().enumerate() {
        let timestamp = match message {
            Message::User(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
            Message::Assistant(a) => {
                let used = a.usage.context_tokens();
                if a.timestamp >= latest_prefix
                    && !matches!(
                        a.stop_reason,
                        crate::ai::message::StopReason::Aborted
                            | crate::ai::message::StopReason::Error
                    )
                    && used > 0
                {
                    last_usage = Some((i, used));
                }
                a.timestamp
            }
        };
        latest_prefix = latest_prefix.max(timestamp);
    }
    match last_usage {
        Some((at, used)) => {
            used + context.messages[at + 1..]
                .iter()
                .map(message_tokens)
                .sum::<u64>()
        }
        None => system_tokens(context) + context.messages.iter().map(message_tokens).sum::<u64>(),
    }
}

/// `max_tokens` fitted into the model's context window.
pub fn clamp_to_context(model: &Model, context: &Context, max_tokens: u64) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(1);
    }
    let window = model.context_window as i64;
    let input = estimate_input_tokens(context) as i64;
    let margin = (SAFETY_TOKENS as i64).max((input as f64 * SAFETY_RATIO).ceil() as i64);
    let mut room = window - input - margin;
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN as i64 {
        room = (MIN_OUTPUT_WITH_RATIO_MARGIN as i64).min(window - input - SAFETY_TOKENS as i64);
    }
    max_tokens.min(room.max(1) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{ToolSpec, UserMessage};

    fn model(window: u64, max: u64) -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: crate::ai::model::Api::OpenAiCompletions,
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            thinking_level_map: None,
            input: vec![crate::ai::model::InputKind::Text],
            cost: Default::default(),
            context_window: window,
            max_tokens: max,
            headers: Default::default(),
            compat: None,
            extras: Default::default(),
        }
    }

    #[test]
    fn the_budget_is_what_the_window_leaves_after_the_input_and_the_margin() {
        let context = Context {
            system_prompt: Some("x".repeat(35)),
            messages: vec![Message::User(UserMessage::text("y".repeat(70_000), 1))],
            tools: vec![ToolSpec {
                name: "t".into(),
                description: "d".into(),
                parameters: serde_json::json!({}),
            }],
        };
        // 10 + 20000 + ceil(48 / 3.5) = 20024 tokens of input.
        assert_eq!(estimate_input_tokens(&context), 20_024);
        // A large window: the 15% margin (3004) leaves plenty, max_tokens wins.
        assert_eq!(
            clamp_to_context(&model(200_000, 4000), &context, 4000),
            4000
        );
        // The margin is max(4096, 15% of 20024 = 3004): 150000 - 20024 - 4096 = 125880.
        assert_eq!(
            clamp_to_context(&model(150_000, 200_000), &context, 200_000),
            125_880
        );
        // A small window keeps only the fixed margin: 32000 - 20024 - 4096.
        assert_eq!(
            clamp_to_context(&model(32_000, 16_000), &context, 16_000),
            7_880
        );
        // A window already full still asks for one token.
        assert_eq!(
            clamp_to_context(&model(20_000, 16_000), &context, 16_000),
            1
        );
    }
}
