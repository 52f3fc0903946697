//! Built-in tools the model can call (read, write, edit, bash, grep, find, ls) and the
//! [`Tool`] trait every tool implements, built-in or provided by an extension.
//!
//! A tool gets its arguments as JSON (already validated against its schema by the agent
//! loop), a cancellation token and an optional sink for streaming partial output. It
//! returns content for the model plus `details` for the UI and the session file. A failed
//! call returns [`ToolError`]; the agent turns it into a tool result with `isError: true`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ai::message::{ToolSpec, UserBlock};

pub mod args;
pub mod bash;
pub mod bash_exec;
pub mod config;
pub mod edit;
pub mod edit_diff;
pub mod find;
pub mod fsio;
pub mod grep;
pub mod image;
pub mod js;
pub mod line_diff;
pub mod ls;
pub mod mutation_queue;
pub mod output;
pub mod path;
pub mod read;
pub mod registry;
pub mod shell;
pub mod text_window;
pub mod truncate;
pub mod validate;
pub mod walk;
pub mod write;

pub use config::ToolConfig;
pub use registry::{
    UnknownToolError, builtin_tool_names, create_tool, create_tools, default_tool_names,
};

/// Whether a tool may run at the same time as other tool calls of the same response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    #[default]
    Parallel,
    Sequential,
}

/// What a tool produced: content for the model, details for the UI and the file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub content: Vec<UserBlock>,
    pub details: Option<Value>,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![UserBlock::text(text)],
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// A failed tool call. `message` is what the model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub message: String,
    pub details: Option<Value>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            details: None,
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// Receives partial results while a tool runs (e.g. bash output as it streams).
pub type UpdateSink = Arc<dyn Fn(ToolOutput) + Send + Sync>;

/// One call of a tool.
#[derive(Clone)]
pub struct ToolCallArgs {
    pub call_id: String,
    pub args: Value,
    pub cancel: CancellationToken,
    pub on_update: Option<UpdateSink>,
}

impl ToolCallArgs {
    pub fn new(call_id: impl Into<String>, args: Value) -> Self {
        Self {
            call_id: call_id.into(),
            args,
            cancel: CancellationToken::new(),
            on_update: None,
        }
    }

    pub fn update(&self, output: ToolOutput) {
        if let Some(sink) = &self.on_update {
            sink(output);
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model uses (`read`, `bash`, …).
    fn name(&self) -> &str;
    /// A human-readable name for the UI.
    fn label(&self) -> &str;
    /// What the model is told the tool does.
    fn description(&self) -> &str;
    /// JSON schema of the arguments.
    fn parameters(&self) -> Value;
    /// One line for the system prompt's tool list (`None`: the tool is not listed).
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }
    /// Extra lines for the system prompt's guidelines when this tool is enabled.
    fn prompt_guidelines(&self) -> &[&str] {
        &[]
    }
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// Repairs argument shapes models are known to send before they are validated (pi's
    /// `prepareArguments`, e.g. `edit` called with a JSON string for `edits`).
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError>;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description().to_string(),
            parameters: self.parameters(),
        }
    }
}
