//! Builders for session paths used by the compaction unit tests, and a text rendering of
//! a path so that tests can snapshot what was cut, kept and summarized.

use serde_json::{Value, json};

use crate::ai::message::{
    AssistantBlock, AssistantMessage, Extra, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserBlock, UserContent, UserMessage,
};
use crate::messages::{AgentMessage, BashExecutionMessage};
use crate::session::entry::{
    BranchSummaryEntry, CompactionEntry, CustomMessageEntry, EntryId, LabelEntry, MessageEntry,
    ModelChangeEntry, SessionEntry,
};

/// Text of roughly `tokens` estimated tokens.
pub fn words(tokens: usize) -> String {
    "abcd".repeat(tokens)
}

/// Builds a linear path with ids `e1`, `e2`, … and parent links.
pub struct PathBuilder {
    pub entries: Vec<SessionEntry>,
    id_prefix: String,
}

impl PathBuilder {
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            id_prefix: "e".into(),
        }
    }

    /// Continues `prefix` (a copy) with new entries named `{id_prefix}{n}`: another branch
    /// of the same tree.
    pub fn branch_from(prefix: &[SessionEntry], id_prefix: &str) -> Self {
        Self {
            entries: prefix.to_vec(),
            id_prefix: id_prefix.into(),
        }
    }

    fn next_ids(&self) -> (EntryId, Option<EntryId>) {
        let id = EntryId(format!("{}{}", self.id_prefix, self.entries.len() + 1));
        let parent = self.entries.last().map(|e| EntryId(e.id().to_string()));
        (id, parent)
    }

    fn timestamp(&self) -> String {
        format!("2026-01-01T00:00:{:02}.000Z", self.entries.len() % 60)
    }

    pub fn message(mut self, message: AgentMessage) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        self.entries.push(SessionEntry::Message(MessageEntry {
            id,
            parent_id,
            timestamp,
            message,
            extra: Extra::new(),
        }));
        self
    }

    pub fn user(self, text: &str) -> Self {
        self.message(AgentMessage::User(UserMessage::text(text, 0)))
    }

    pub fn assistant(self, text: &str) -> Self {
        self.assistant_with_usage(text, 0)
    }

    pub fn assistant_with_usage(self, text: &str, total_tokens: u64) -> Self {
        self.message(AgentMessage::Assistant(AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(text))],
            stop_reason: StopReason::Stop,
            usage: Usage {
                total_tokens,
                ..Usage::default()
            },
            ..AssistantMessage::default()
        }))
    }

    /// An assistant message with some text and one tool call.
    pub fn tool_call(self, text: &str, tool: &str, arguments: Value) -> Self {
        let call_id = format!("call{}", self.entries.len() + 1);
        self.message(AgentMessage::Assistant(AssistantMessage {
            content: vec![
                AssistantBlock::Text(TextContent::new(text)),
                AssistantBlock::ToolCall(ToolCall {
                    id: call_id,
                    name: tool.into(),
                    arguments,
                    ..ToolCall::default()
                }),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        }))
    }

    pub fn tool_result(self, text: &str) -> Self {
        self.message(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: "call".into(),
            tool_name: "read".into(),
            content: vec![UserBlock::text(text)],
            ..ToolResultMessage::default()
        }))
    }

    pub fn bash(self, command: &str, output: &str) -> Self {
        self.message(AgentMessage::BashExecution(BashExecutionMessage {
            command: command.into(),
            output: output.into(),
            exit_code: Some(0),
            ..BashExecutionMessage::default()
        }))
    }

    pub fn model_change(mut self) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        self.entries
            .push(SessionEntry::ModelChange(ModelChangeEntry {
                id,
                parent_id,
                timestamp,
                provider: "mock".into(),
                model_id: "mock-model".into(),
                extra: Extra::new(),
            }));
        self
    }

    pub fn label(mut self, target: &str) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        self.entries.push(SessionEntry::Label(LabelEntry {
            id,
            parent_id,
            timestamp,
            target_id: target.into(),
            label: Some("mark".into()),
            extra: Extra::new(),
        }));
        self
    }

    pub fn compaction(mut self, summary: &str, first_kept: &str, details: Option<Value>) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        self.entries.push(SessionEntry::Compaction(CompactionEntry {
            id,
            parent_id,
            timestamp,
            summary: summary.into(),
            first_kept_entry_id: first_kept.into(),
            tokens_before: 0,
            details,
            from_hook: Some(false),
            extra: Extra::new(),
        }));
        self
    }

    pub fn branch_summary(
        mut self,
        summary: &str,
        details: Option<Value>,
        from_hook: bool,
    ) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        let from_id = parent_id
            .as_ref()
            .map_or("root".to_string(), |p| p.0.clone());
        self.entries
            .push(SessionEntry::BranchSummary(BranchSummaryEntry {
                id,
                parent_id,
                timestamp,
                from_id,
                summary: summary.into(),
                details,
                from_hook: Some(from_hook),
                extra: Extra::new(),
            }));
        self
    }

    pub fn custom_message(mut self, text: &str) -> Self {
        let (id, parent_id) = self.next_ids();
        let timestamp = self.timestamp();
        self.entries
            .push(SessionEntry::CustomMessage(CustomMessageEntry {
                id,
                parent_id,
                timestamp,
                custom_type: "note".into(),
                content: UserContent::Text(text.into()),
                display: true,
                details: None,
                extra: Extra::new(),
            }));
        self
    }

    pub fn build(self) -> Vec<SessionEntry> {
        self.entries
    }
}

/// One line per entry: id, kind and the first words of its text.
pub fn describe(entry: &SessionEntry) -> String {
    let what = match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => format!("user {}", short(&u.content.text())),
            AgentMessage::Assistant(a) => {
                let tools: Vec<&str> = a.tool_calls().map(|t| t.name.as_str()).collect();
                if tools.is_empty() {
                    format!("assistant {}", short(&a.text()))
                } else {
                    format!("assistant {} [{}]", short(&a.text()), tools.join(", "))
                }
            }
            AgentMessage::ToolResult(t) => format!("toolResult {}", short(&t.text())),
            AgentMessage::BashExecution(b) => format!("bash {}", b.command),
            AgentMessage::BranchSummary(b) => format!("branchSummary {}", short(&b.summary)),
            AgentMessage::CompactionSummary(c) => {
                format!("compactionSummary {}", short(&c.summary))
            }
            AgentMessage::Custom(c) => format!("custom {}", short(&c.content.text())),
            other => other.role().to_string(),
        },
        SessionEntry::Compaction(c) => format!("compaction (keeps from {})", c.first_kept_entry_id),
        SessionEntry::BranchSummary(b) => format!("branch_summary {}", short(&b.summary)),
        SessionEntry::CustomMessage(c) => format!("custom_message {}", short(&c.content.text())),
        other => other.type_name().to_string(),
    };
    format!("{} {what}", entry.id())
}

fn short(text: &str) -> String {
    let t: String = text.chars().take(20).collect();
    if t.len() < text.len() {
        format!("{t:?}…")
    } else {
        format!("{t:?}")
    }
}

/// The path with a `✂` before the first kept entry and `→` on the turn start of a split.
pub fn render_cut(
    entries: &[SessionEntry],
    first_kept: usize,
    turn_start: Option<usize>,
) -> String {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mark = if i == first_kept {
                "✂ "
            } else if Some(i) == turn_start {
                "→ "
            } else {
                "  "
            };
            format!("{mark}{}", describe(e))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The messages of a summary, one line each, like [`describe`] without ids.
pub fn describe_messages<M: std::borrow::Borrow<AgentMessage>>(messages: &[M]) -> String {
    messages
        .iter()
        .map(|m| {
            let entry = SessionEntry::Message(MessageEntry {
                id: EntryId::default(),
                parent_id: None,
                timestamp: String::new(),
                message: m.borrow().clone(),
                extra: Extra::new(),
            });
            format!("  {}", describe(&entry).trim_start())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn read(path: &str) -> Value {
    json!({ "path": path })
}

/// What the scripted backend answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A normal reply with this text.
    Text(String),
    /// A reply with `stopReason: error` and this message (`None`: no message).
    ErrorStop(Option<String>),
    /// A transport failure (`Err(CompactionError::Backend)`).
    Fail(String),
    /// Never answers, even when cancelled (a badly behaved backend).
    Hang,
}

/// A [`SummaryBackend`](crate::compaction::SummaryBackend) that answers from a script per
/// request kind and records every request it got.
pub struct ScriptedBackend {
    replies: std::sync::Mutex<Vec<(crate::compaction::SummaryKind, Reply)>>,
    pub requests: std::sync::Mutex<Vec<crate::compaction::SummaryRequest>>,
    /// When set, every request waits here until this many requests are in flight.
    gate: Option<tokio::sync::Barrier>,
}

impl ScriptedBackend {
    pub fn new(replies: Vec<(crate::compaction::SummaryKind, Reply)>) -> Self {
        Self {
            replies: std::sync::Mutex::new(replies),
            requests: std::sync::Mutex::new(Vec::new()),
            gate: None,
        }
    }

    /// Requests only proceed once `n` of them are waiting at the same time.
    pub fn require_concurrent(mut self, n: usize) -> Self {
        self.gate = Some(tokio::sync::Barrier::new(n));
        self
    }

    pub fn requests(&self) -> Vec<crate::compaction::SummaryRequest> {
        self.requests.lock().unwrap().clone()
    }
}

/// The single user message text of a summary request.
pub fn request_text(request: &crate::compaction::SummaryRequest) -> String {
    match request.messages.as_slice() {
        [crate::ai::message::Message::User(u)] => u.content.text(),
        other => panic!("expected one user message, got {other:?}"),
    }
}

#[async_trait::async_trait]
impl crate::compaction::SummaryBackend for ScriptedBackend {
    async fn complete(
        &self,
        request: crate::compaction::SummaryRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> Result<AssistantMessage, crate::compaction::CompactionError> {
        let kind = request.kind;
        self.requests.lock().unwrap().push(request);
        if let Some(gate) = &self.gate {
            gate.wait().await;
        }
        let reply = {
            let mut replies = self.replies.lock().unwrap();
            let index = replies
                .iter()
                .position(|(k, _)| *k == kind)
                .unwrap_or_else(|| panic!("no scripted reply for {kind:?}"));
            replies.remove(index).1
        };
        let message = |stop_reason, text: &str, error_message| AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(text))],
            stop_reason,
            error_message,
            ..AssistantMessage::default()
        };
        match reply {
            Reply::Text(text) => Ok(message(StopReason::Stop, &text, None)),
            Reply::ErrorStop(error) => Ok(message(StopReason::Error, "", error)),
            Reply::Fail(error) => Err(crate::compaction::CompactionError::Backend(error)),
            Reply::Hang => std::future::pending().await,
        }
    }
}
