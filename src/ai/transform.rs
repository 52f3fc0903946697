//! Preparing a recorded conversation for the model it is about to be sent to.
//!
//! A session can switch models and providers at any time, so the history may contain
//! reasoning, signatures and tool-call ids another API produced. Before building a
//! request every provider runs [`transform_messages`], which mirrors pi's
//! `transformMessages`:
//! - images become a placeholder text for models without image input;
//! - thinking from another model is dropped (pi 1.6; 0.73 sent it as plain text);
//!   redacted and signed thinking of the same model is kept even when its text is empty;
//! - tool-call ids are rewritten by the target API's normaliser, and their results follow;
//! - failed (error/aborted) assistant turns are skipped;
//! - a tool call that never got a result gets a synthetic error result, so the request
//!   stays valid; a result whose call is gone is dropped.

use std::collections::{HashMap, HashSet};

use super::message::{
    AssistantBlock, AssistantMessage, Message, TextContent, ToolResultMessage, UserBlock,
    UserContent, now_ms,
};
use super::model::Model;

/// Text sent instead of an image to a model without image input (user message).
pub const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
/// Text sent instead of an image to a model without image input (tool result).
pub const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
/// Content of the synthetic result for a tool call that has none.
pub const MISSING_RESULT_TEXT: &str = "No result provided";

/// Whether `message` was produced by exactly this model (same provider, API and id).
pub fn is_same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider
        && message.api == model.api.as_str()
        && message.model == model.id
}

/// Rewrites `messages` for `model`. `normalize_id(id, source)` maps a tool-call id from
/// another model to one the target API accepts.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<Message> {
    let mut id_map: HashMap<String, String> = HashMap::new();
    let supports_images = model.supports_images();

    let transformed: Vec<Message> = messages
        .iter()
        .map(|msg| match msg {
            Message::User(u) => {
                let mut u = u.clone();
                if !supports_images && let UserContent::Blocks(blocks) = &u.content {
                    u.content = UserContent::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER));
                }
                Message::User(u)
            }
            Message::ToolResult(r) => {
                let mut r = r.clone();
                if !supports_images {
                    r.content = replace_images(&r.content, TOOL_IMAGE_PLACEHOLDER);
                }
                if let Some(new_id) = id_map.get(&r.tool_call_id) {
                    r.tool_call_id = new_id.clone();
                }
                Message::ToolResult(r)
            }
            Message::Assistant(a) => {
                Message::Assistant(transform_assistant(a, model, normalize_id, &mut id_map))
            }
        })
        .collect();

    // Second pass: skip failed turns, pair calls with results.
    let mut out: Vec<Message> = Vec::with_capacity(transformed.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let flush = |out: &mut Vec<Message>,
                 pending: &mut Vec<(String, String)>,
                 answered: &mut HashSet<String>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![UserBlock::text(MISSING_RESULT_TEXT)],
                    is_error: true,
                    timestamp: now_ms(),
                    ..ToolResultMessage::default()
                }));
            }
        }
        answered.clear();
    };
    let mut known_calls: HashSet<String> = HashSet::new();
    for msg in transformed {
        match msg {
            Message::Assistant(a) => {
                flush(&mut out, &mut pending, &mut answered);
                if a.stop_reason.is_failure() {
                    continue;
                }
                for tc in a.tool_calls() {
                    pending.push((tc.id.clone(), tc.name.clone()));
                    known_calls.insert(tc.id.clone());
                }
                out.push(Message::Assistant(a));
            }
            Message::ToolResult(r) => {
                // A result whose call was dropped (failed turn) or never existed would be
                // rejected by every API.
                if !known_calls.contains(&r.tool_call_id) {
                    continue;
                }
                answered.insert(r.tool_call_id.clone());
                out.push(Message::ToolResult(r));
            }
            Message::User(u) => {
                flush(&mut out, &mut pending, &mut answered);
                out.push(Message::User(u));
            }
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    out
}

fn transform_assistant(
    a: &AssistantMessage,
    model: &Model,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
    id_map: &mut HashMap<String, String>,
) -> AssistantMessage {
    let same = is_same_model(a, model);
    let mut content = Vec::with_capacity(a.content.len());
    for block in &a.content {
        match block {
            AssistantBlock::Thinking(t) => {
                // Thinking of another model is dropped (pi 1.6): its signatures mean
                // nothing to this one, and as text it would read as part of the reply.
                if !same {
                    continue;
                }
                let signed = t.redacted == Some(true)
                    || t.thinking_signature
                        .as_deref()
                        .is_some_and(|s| !s.is_empty());
                if signed || !t.thinking.trim().is_empty() {
                    content.push(block.clone());
                }
            }
            AssistantBlock::Text(t) => {
                if same {
                    content.push(block.clone());
                } else {
                    content.push(AssistantBlock::Text(TextContent::new(t.text.clone())));
                }
            }
            AssistantBlock::ToolCall(tc) => {
                let mut tc = tc.clone();
                if !same {
                    tc.thought_signature = None;
                    let new_id = normalize_id(&tc.id, a);
                    if new_id != tc.id {
                        id_map.insert(tc.id.clone(), new_id.clone());
                        tc.id = new_id;
                    }
                }
                content.push(AssistantBlock::ToolCall(tc));
            }
        }
    }
    AssistantMessage {
        content,
        ..a.clone()
    }
}

fn replace_images(blocks: &[UserBlock], placeholder: &str) -> Vec<UserBlock> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut previous_was_placeholder = false;
    for block in blocks {
        match block {
            UserBlock::Image(_) => {
                if !previous_was_placeholder {
                    out.push(UserBlock::text(placeholder));
                }
                previous_was_placeholder = true;
            }
            UserBlock::Text(t) => {
                previous_was_placeholder = t.text == placeholder;
                out.push(block.clone());
            }
        }
    }
    out
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_` and keeps at most `max`
/// characters (Anthropic's and Bedrock's tool-call id rule).
pub fn sanitize_tool_call_id(id: &str, max: usize) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect()
}

/// pi's `shortHash`: a fast deterministic 2×32-bit hash in base 36, used to shorten ids.
pub fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in text.encode_utf16() {
        let ch = u32::from(ch);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", to_base36(h2), to_base36(h1))
}

fn to_base36(mut n: u32) -> String {
    if n == 0 {
        return "0".into();
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while n > 0 {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests;
