//! Helpers shared by the session tests: message builders and a text rendering of a
//! context, so tests read as scenarios and assert on whole values.
#![allow(dead_code)]

use pi::ai::message::{
    AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserBlock, UserMessage,
};
use pi::messages::AgentMessage;
use pi::session::context::SessionContext;
use pi::session::manager::SessionManager;

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text, 1_700_000_000_000))
}

pub fn assistant(text: &str) -> AgentMessage {
    assistant_with(
        vec![AssistantBlock::Text(TextContent::new(text))],
        StopReason::Stop,
    )
}

pub fn assistant_with(content: Vec<AssistantBlock>, stop: StopReason) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        stop_reason: stop,
        timestamp: 1_700_000_000_001,
        ..AssistantMessage::default()
    })
}

/// An assistant message that calls `tool` with id `call_id`.
pub fn assistant_calls(text: &str, call_id: &str, tool: &str) -> AgentMessage {
    assistant_with(
        vec![
            AssistantBlock::Text(TextContent::new(text)),
            AssistantBlock::ToolCall(ToolCall {
                id: call_id.into(),
                name: tool.into(),
                arguments: serde_json::json!({ "path": "a.txt" }),
                ..ToolCall::default()
            }),
        ],
        StopReason::ToolUse,
    )
}

pub fn tool_result(call_id: &str, tool: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: call_id.into(),
        tool_name: tool.into(),
        content: vec![UserBlock::text(text)],
        timestamp: 1_700_000_000_002,
        ..ToolResultMessage::default()
    })
}

/// One line per context message, plus the model and thinking level.
pub fn render_context(context: &SessionContext) -> String {
    let mut out = String::new();
    let model = context.model.as_ref().map_or("none".to_string(), |m| {
        format!("{}/{}", m.provider, m.model_id)
    });
    out.push_str(&format!(
        "model {model}, thinking {}\n",
        context.thinking_level
    ));
    for message in &context.messages {
        let line = match message {
            AgentMessage::User(m) => format!("user: {}", m.content.text()),
            AgentMessage::Assistant(m) => {
                let calls: Vec<String> = m
                    .tool_calls()
                    .map(|c| format!("{}#{}", c.name, c.id))
                    .collect();
                let mut line = format!("assistant: {}", m.text());
                if !calls.is_empty() {
                    line.push_str(&format!(" → {}", calls.join(", ")));
                }
                if m.stop_reason != StopReason::Stop && m.stop_reason != StopReason::ToolUse {
                    line.push_str(&format!(" ({})", m.stop_reason.as_str()));
                }
                line
            }
            AgentMessage::ToolResult(m) => format!("toolResult {}: {}", m.tool_call_id, m.text()),
            AgentMessage::BashExecution(m) => format!("bash: {}", m.command),
            AgentMessage::Custom(m) => format!("custom[{}]: {}", m.custom_type, m.content.text()),
            AgentMessage::BranchSummary(m) => {
                format!("branchSummary from {}: {}", m.from_id, m.summary)
            }
            AgentMessage::CompactionSummary(m) => {
                format!(
                    "compactionSummary ({} tokens): {}",
                    m.tokens_before, m.summary
                )
            }
            AgentMessage::System(m) => format!(
                "system: sections {:?} +tools {:?} -tools {:?}",
                m.sections
                    .iter()
                    .flatten()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
                m.tools_added
                    .iter()
                    .flatten()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>(),
                m.tools_removed
                    .iter()
                    .flatten()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
            ),
            AgentMessage::Unknown(v) => format!("unknown: {v}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A new persisted session in `dir` with reproducible entry ids.
pub fn new_session(dir: &std::path::Path) -> SessionManager {
    let mut session = SessionManager::create("/work/project", dir).unwrap();
    session.use_seeded_ids(1);
    session
}

/// The file's lines as JSON values (malformed lines as strings).
pub fn file_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|_| serde_json::Value::String(l.to_string()))
        })
        .collect()
}

/// An `AgentSession` in this process on `mock/mock-model` from `agent`'s models.json and
/// settings, with a new session file under `sessions` and the given built-in tools.
pub fn mock_agent_session(
    agent: &std::path::Path,
    cwd: &std::path::Path,
    sessions: &std::path::Path,
    tools: &[&str],
) -> pi::core::agent_session::AgentSession {
    use pi::ai::models::ModelRegistry;
    use pi::core::agent_session::{AgentSession, AgentSessionOptions};
    let registry = ModelRegistry::load(agent);
    let model = registry.find("mock", "mock-model").cloned();
    assert!(
        model.is_some(),
        "mock model missing: {:?}",
        registry.error()
    );
    AgentSession::new(AgentSessionOptions {
        cwd: cwd.to_path_buf(),
        paths: pi::core::paths::AgentPaths::new(agent.to_path_buf()),
        settings: pi::core::settings::Settings::load(
            agent,
            cwd,
            pi::core::trust::ProjectTrust::Trusted,
        ),
        registry,
        session: SessionManager::create(cwd, sessions).unwrap(),
        model,
        thinking: pi::ai::model::ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tool_names: tools.iter().map(|t| t.to_string()).collect(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    })
}
