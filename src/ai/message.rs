//! Provider-neutral conversation types, exactly as pi stores them in session files.
//!
//! These structs are the on-disk and on-wire vocabulary shared by every layer: the
//! provider clients produce [`AssistantMessage`]s, tools produce [`ToolResultMessage`]s,
//! and session files store all three. Field names and shapes follow pi-ai's `types.ts`
//! (camelCase JSON). Every struct keeps unknown fields in `extra` so that a file written
//! by a newer pi survives a round trip through us.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Unknown JSON fields carried through unchanged.
pub type Extra = Map<String, Value>;

/// A plain text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl TextContent {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

/// Model reasoning. `thinking_signature` carries the provider's opaque signature (or, for
/// redacted thinking, the encrypted payload) so it can be sent back verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    pub thinking: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An inline image, base64 encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    pub data: String,
    pub mime_type: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool invocation requested by the model. `arguments` is the parsed JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Content allowed in user messages and tool results: text and images.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum UserBlock {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "image")]
    Image(ImageContent),
}

impl UserBlock {
    pub fn text(text: impl Into<String>) -> Self {
        UserBlock::Text(TextContent::new(text))
    }
}

/// Content allowed in assistant messages: text, thinking and tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum AssistantBlock {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

/// User message content: pi accepts a bare string or a list of blocks and stores whichever
/// it was given, so both forms are kept as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<UserBlock>),
}

impl Default for UserContent {
    fn default() -> Self {
        UserContent::Blocks(Vec::new())
    }
}

impl UserContent {
    /// All text of the content, blocks joined with newlines (images skipped).
    pub fn text(&self) -> String {
        match self {
            UserContent::Text(s) => s.clone(),
            UserContent::Blocks(blocks) => join_text_blocks(blocks),
        }
    }

    /// The content as a list of blocks (a bare string becomes one text block).
    pub fn to_blocks(&self) -> Vec<UserBlock> {
        match self {
            UserContent::Text(s) => vec![UserBlock::text(s.clone())],
            UserContent::Blocks(b) => b.clone(),
        }
    }

    pub fn has_images(&self) -> bool {
        matches!(self, UserContent::Blocks(b) if b.iter().any(|b| matches!(b, UserBlock::Image(_))))
    }
}

/// Joins the text blocks of a user/tool-result block list with `\n`.
pub fn join_text_blocks(blocks: &[UserBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let UserBlock::Text(t) = block {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&t.text);
        }
    }
    out
}

/// Serializes a float the way JavaScript's `JSON.stringify` does: integral values without
/// a fractional part (`0`, not `0.0`), so files we write look like pi's.
pub fn js_number<S: serde::Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        s.serialize_i64(*value as i64)
    } else if value.is_finite() {
        s.serialize_f64(*value)
    } else {
        // JSON.stringify(NaN) is null.
        s.serialize_none()
    }
}

/// Cost in US dollars, split like [`Usage`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    #[serde(default, serialize_with = "js_number")]
    pub input: f64,
    #[serde(default, serialize_with = "js_number")]
    pub output: f64,
    #[serde(default, serialize_with = "js_number")]
    pub cache_read: f64,
    #[serde(default, serialize_with = "js_number")]
    pub cache_write: f64,
    #[serde(default, serialize_with = "js_number")]
    pub total: f64,
}

/// Token usage of one assistant response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default)]
    pub cost: Cost,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Usage {
    /// Tokens that occupied the context window for this response: pi's
    /// `totalTokens || input + output + cacheRead + cacheWrite`.
    pub fn context_tokens(&self) -> u64 {
        if self.total_tokens > 0 {
            self.total_tokens
        } else {
            self.input + self.output + self.cache_read + self.cache_write
        }
    }
}

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum StopReason {
    #[default]
    #[serde(rename = "stop")]
    Stop,
    #[serde(rename = "length")]
    Length,
    #[serde(rename = "toolUse")]
    ToolUse,
    #[serde(rename = "error")]
    Error,
    #[serde(rename = "aborted")]
    Aborted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
        }
    }

    /// Error and aborted turns are kept in the file but never replayed to a model.
    pub fn is_failure(self) -> bool {
        matches!(self, StopReason::Error | StopReason::Aborted)
    }
}

/// A message typed by the user (or injected on their behalf).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserContent,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl UserMessage {
    pub fn text(text: impl Into<String>, timestamp: i64) -> Self {
        Self {
            content: UserContent::Blocks(vec![UserBlock::text(text)]),
            timestamp,
            extra: Extra::new(),
        }
    }
}

/// A model response, complete or (while streaming) partial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<AssistantBlock>,
    #[serde(default)]
    pub api: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<Value>>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub stop_reason: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl AssistantMessage {
    /// Concatenated text blocks (no separator, as pi's `getLastAssistantText`).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let AssistantBlock::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall(tc) => Some(tc),
            _ => None,
        })
    }
}

/// The output of one tool call, sent back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<UserBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ToolResultMessage {
    pub fn text(&self) -> String {
        join_text_blocks(&self.content)
    }
}

/// A message a model understands: what is sent to providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum Message {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

impl Message {
    pub fn timestamp(&self) -> i64 {
        match self {
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }
}

/// A tool as advertised to the model: name, description and JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Everything a provider needs for one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Milliseconds since the Unix epoch, as pi stores message timestamps.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_message_round_trips_pi_json_with_unknown_fields() {
        let line = r#"{"role":"assistant","content":[{"type":"text","text":"Let me read the file first."},{"type":"toolCall","id":"call_9aced9e762","name":"read","arguments":{"path":"a.txt"}}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{"input":1386,"output":11,"cacheRead":0,"cacheWrite":0,"totalTokens":1397,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1795318761635,"responseId":"chatcmpl-a1f9e304836d","futureField":{"x":1}}"#;
        let msg: Message = serde_json::from_str(line).expect("parse");
        let Message::Assistant(a) = &msg else {
            panic!("not assistant")
        };
        assert_eq!(a.stop_reason, StopReason::ToolUse);
        assert_eq!(a.tool_calls().count(), 1);
        assert_eq!(
            a.extra.get("futureField"),
            Some(&serde_json::json!({"x":1}))
        );
        let back: Value = serde_json::to_value(&msg).expect("ser");
        let orig: Value = serde_json::from_str(line).expect("parse value");
        assert_eq!(back, orig);
    }

    #[test]
    fn user_content_keeps_string_or_block_form() {
        let a: UserMessage = serde_json::from_str(r#"{"content":"hi","timestamp":1}"#).expect("a");
        assert_eq!(a.content, UserContent::Text("hi".into()));
        let b: UserMessage =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"hi"}],"timestamp":1}"#)
                .expect("b");
        assert_eq!(b.content.text(), "hi");
        assert_eq!(
            serde_json::to_string(&b).expect("ser"),
            r#"{"content":[{"type":"text","text":"hi"}],"timestamp":1}"#
        );
    }
}
