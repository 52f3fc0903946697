//! The messages of a coding-agent conversation: what session files store in `message`
//! entries and what the agent keeps in memory.
//!
//! [`AgentMessage`] extends the model-level [`Message`] with the roles only the coding
//! agent knows: `bashExecution` (a `!cmd` the user ran), `custom` (injected by an
//! extension), and the two in-memory summary roles produced by context building
//! (`branchSummary`, `compactionSummary`, never stored as messages).
//! [`convert_to_llm`] turns all of them into user messages a model understands, with the
//! exact wording pi uses so that a session resumed by either program sends the same
//! context.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ai::message::{
    AssistantMessage, Extra, Message, ToolResultMessage, UserBlock, UserContent, UserMessage,
};

pub mod system;
pub use system::{SystemMessage, SystemState, ToolDeclaration};

/// A user message made by a `/skill:name` command (pi's `parseSkillBlock`): the skill
/// wrapped in `<skill name=… location=…>…</skill>`, and what the user typed after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillBlock<'a> {
    pub name: &'a str,
    pub location: &'a str,
    /// The skill's text between the tags.
    pub content: &'a str,
    /// The user's own words after the block, trimmed, if any.
    pub user_message: Option<&'a str>,
}

/// Recognises a skill invocation in a user message's text, as pi does.
pub fn parse_skill_block(text: &str) -> Option<SkillBlock<'_>> {
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = RE
        .get_or_init(|| {
            regex::Regex::new(
                r#"(?s)\A<skill name="([^"]+)" location="([^"]+)">\n(.*?)\n</skill>(?:\n\n(.+))?\z"#,
            )
            .ok()
        })
        .as_ref()?;
    let caps = re.captures(text)?;
    Some(SkillBlock {
        name: caps.get(1)?.as_str(),
        location: caps.get(2)?.as_str(),
        content: caps.get(3)?.as_str(),
        user_message: caps
            .get(4)
            .map(|m| m.as_str().trim())
            .filter(|s| !s.is_empty()),
    })
}

/// Wrapper around a compaction summary when it is sent to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Wrapper around a branch summary when it is sent to the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// A shell command the user ran themselves (`!cmd` in the TUI, RPC `bash`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    pub command: String,
    #[serde(default)]
    pub output: String,
    /// `None` when the process was killed before it exited.
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    #[serde(default)]
    pub timestamp: i64,
    /// `!!cmd`: shown and stored, but never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl BashExecutionMessage {
    /// The user-message text a model sees for this command (pi's `bashExecutionToText`).
    pub fn to_llm_text(&self) -> String {
        let mut text = format!("Ran `{}`\n", self.command);
        if self.output.is_empty() {
            text.push_str("(no output)");
        } else {
            text.push_str("```\n");
            text.push_str(&self.output);
            text.push_str("\n```");
        }
        if self.cancelled {
            text.push_str("\n\n(command cancelled)");
        } else if let Some(code) = self.exit_code.filter(|c| *c != 0) {
            text.push_str(&format!("\n\nCommand exited with code {code}"));
        }
        if self.truncated
            && let Some(path) = &self.full_output_path
        {
            text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
        }
        text
    }
}

/// A message injected by an extension (`sendMessage`); sent to the model as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    pub custom_type: String,
    pub content: UserContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// In-memory form of a `branch_summary` entry on the current path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    pub summary: String,
    pub from_id: String,
    #[serde(default)]
    pub timestamp: i64,
}

/// In-memory form of the `compaction` entry that starts the current context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    pub summary: String,
    pub tokens_before: u64,
    #[serde(default)]
    pub timestamp: i64,
}

/// Any message of a conversation, tagged by `role` like pi's `AgentMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum AgentMessage {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    /// The system prompt and tools, recorded in the conversation (pi 1.6). Never sent as
    /// a message by [`AgentMessage::to_llm`]: [`SystemState::replay`] folds them into the
    /// prompt and tools of a request.
    #[serde(rename = "system")]
    System(SystemMessage),
    /// A role we do not know (from a newer pi) or a message we could not read: kept
    /// verbatim, never sent to a model.
    #[serde(untagged)]
    Unknown(Value),
}

impl AgentMessage {
    /// pi's role string (`"unknown"` for unreadable messages).
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::BashExecution(_) => "bashExecution",
            AgentMessage::Custom(_) => "custom",
            AgentMessage::BranchSummary(_) => "branchSummary",
            AgentMessage::CompactionSummary(_) => "compactionSummary",
            AgentMessage::System(_) => "system",
            AgentMessage::Unknown(v) => v.get("role").and_then(Value::as_str).unwrap_or("unknown"),
        }
    }

    pub fn timestamp(&self) -> i64 {
        match self {
            AgentMessage::User(m) => m.timestamp,
            AgentMessage::Assistant(m) => m.timestamp,
            AgentMessage::ToolResult(m) => m.timestamp,
            AgentMessage::BashExecution(m) => m.timestamp,
            AgentMessage::Custom(m) => m.timestamp,
            AgentMessage::BranchSummary(m) => m.timestamp,
            AgentMessage::CompactionSummary(m) => m.timestamp,
            AgentMessage::System(m) => m.timestamp,
            AgentMessage::Unknown(v) => v.get("timestamp").and_then(Value::as_i64).unwrap_or(0),
        }
    }

    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Assistant(a) => Some(a),
            _ => None,
        }
    }

    /// The model-level message this becomes, or `None` if it is not sent at all.
    pub fn to_llm(&self) -> Option<Message> {
        let user = |content: Vec<UserBlock>, timestamp: i64| {
            Some(Message::User(UserMessage {
                content: UserContent::Blocks(content),
                timestamp,
                extra: Extra::new(),
            }))
        };
        match self {
            AgentMessage::User(m) => Some(Message::User(m.clone())),
            AgentMessage::Assistant(m) => Some(Message::Assistant(m.clone())),
            AgentMessage::ToolResult(m) => Some(Message::ToolResult(m.clone())),
            AgentMessage::BashExecution(m) => {
                if m.exclude_from_context == Some(true) {
                    None
                } else {
                    user(vec![UserBlock::text(m.to_llm_text())], m.timestamp)
                }
            }
            AgentMessage::Custom(m) => user(m.content.to_blocks(), m.timestamp),
            AgentMessage::BranchSummary(m) => user(
                vec![UserBlock::text(format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                    m.summary
                ))],
                m.timestamp,
            ),
            AgentMessage::CompactionSummary(m) => user(
                vec![UserBlock::text(format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                    m.summary
                ))],
                m.timestamp,
            ),
            AgentMessage::System(_) | AgentMessage::Unknown(_) => None,
        }
    }

    pub fn as_system(&self) -> Option<&SystemMessage> {
        match self {
            AgentMessage::System(s) => Some(s),
            _ => None,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        match m {
            Message::User(u) => AgentMessage::User(u),
            Message::Assistant(a) => AgentMessage::Assistant(a),
            Message::ToolResult(t) => AgentMessage::ToolResult(t),
        }
    }
}

/// Converts a conversation into what a model is sent (pi's `convertToLlm`). Messages that
/// have no model form (excluded bash runs, unknown roles) are dropped.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(AgentMessage::to_llm).collect()
}

/// Parses an ISO-8601 entry timestamp into epoch milliseconds (0 if unreadable).
pub fn iso_to_ms(timestamp: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(timestamp)
        .map(|t| t.timestamp_millis())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_invocations_are_recognised() {
        let skill = parse_skill_block(
            "<skill name=\"pdf\" location=\"/s/pdf/SKILL.md\">\nUse it.\n</skill>\n\nplease convert",
        )
        .expect("skill");
        assert_eq!(
            (
                skill.name,
                skill.location,
                skill.content,
                skill.user_message
            ),
            ("pdf", "/s/pdf/SKILL.md", "Use it.", Some("please convert"))
        );
        let alone = parse_skill_block("<skill name=\"a\" location=\"b\">\nx\n</skill>");
        assert_eq!(alone.map(|s| s.user_message), Some(None));
        assert!(parse_skill_block("plain text").is_none());
    }

    #[test]
    fn bash_execution_text_matches_pi() {
        let m = BashExecutionMessage {
            command: "ls".into(),
            output: "conf.txt\n".into(),
            exit_code: Some(0),
            ..Default::default()
        };
        assert_eq!(m.to_llm_text(), "Ran `ls`\n```\nconf.txt\n\n```");
        let failed = BashExecutionMessage {
            command: "false".into(),
            exit_code: Some(1),
            truncated: true,
            full_output_path: Some("/tmp/x.log".into()),
            ..Default::default()
        };
        assert_eq!(
            failed.to_llm_text(),
            "Ran `false`\n(no output)\n\nCommand exited with code 1\n\n[Output truncated. Full output: /tmp/x.log]"
        );
    }

    #[test]
    fn unknown_roles_are_kept_and_not_sent() {
        let m: AgentMessage = serde_json::from_str(r#"{"role":"hologram","x":1}"#).expect("parse");
        assert_eq!(m.role(), "hologram");
        assert!(m.to_llm().is_none());
        assert_eq!(
            serde_json::to_string(&m).expect("ser"),
            r#"{"role":"hologram","x":1}"#
        );
    }
}
