//! Tools registered by extensions, as the agent sees them: a [`Tool`] whose `execute`
//! sends `execute_tool` to the extension, forwards `tool_update` messages as partial
//! results, and sends `cancel` when the call is aborted.
//!
//! Tool calls have no timeout (a tool may legitimately run for minutes); they end when the
//! extension answers, when it dies (the call fails with the reason), or when the call is
//! cancelled and the extension does not answer within a short grace period.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::connection::Connection;
use super::link::Failure;
use super::protocol::content_from_value;
use super::protocol::{ToolExecutionMode, ToolRegistration, line};
use crate::ai::message::join_text_blocks;
use crate::tools::{ExecutionMode, Tool, ToolCallArgs, ToolError, ToolOutput};

/// A tool provided by an extension.
pub struct ExtensionTool {
    connection: Arc<Connection>,
    spec: ToolRegistration,
    parameters: Value,
    cancel_grace: Duration,
}

impl ExtensionTool {
    pub(crate) fn new(
        connection: Arc<Connection>,
        spec: ToolRegistration,
        cancel_grace: Duration,
    ) -> ExtensionTool {
        let parameters = spec
            .parameters
            .clone()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        ExtensionTool {
            connection,
            spec,
            parameters,
            cancel_grace,
        }
    }

    /// The extension that provides the tool.
    pub fn extension_path(&self) -> &std::path::Path {
        &self.connection.path
    }

    /// The extension's renderer for the tool's box, when it draws a part of it (pi's
    /// `renderCall` / `renderResult`).
    pub fn renderer(&self) -> Option<super::render::ItemRenderer> {
        let rendering = super::render::ToolRendering {
            call: self.spec.render_call,
            result: self.spec.render_result,
            self_shell: self.spec.render_shell.as_deref() == Some("self"),
        };
        (rendering.call || rendering.result)
            .then(|| super::render::ItemRenderer::new(self.connection.clone(), rendering))
    }

    /// Guideline bullets for the system prompt while the tool is active.
    pub fn prompt_guidelines(&self) -> &[String] {
        &self.spec.prompt_guidelines
    }

    fn output_from(result: Option<Value>) -> Result<(ToolOutput, bool), String> {
        let Some(result) = result else {
            return Ok((ToolOutput::default(), false));
        };
        let content = content_from_value(result.get("content").cloned().unwrap_or(Value::Null))?;
        let details = result.get("details").cloned().filter(|d| !d.is_null());
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok((ToolOutput { content, details }, is_error))
    }
}

#[async_trait]
impl Tool for ExtensionTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn label(&self) -> &str {
        self.spec.label.as_deref().unwrap_or(&self.spec.name)
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.spec.prompt_snippet.as_deref()
    }

    fn execution_mode(&self) -> ExecutionMode {
        match self.spec.execution_mode.unwrap_or_default() {
            ToolExecutionMode::Parallel => ExecutionMode::Parallel,
            ToolExecutionMode::Sequential => ExecutionMode::Sequential,
        }
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let conn = &self.connection;
        let updates = call.on_update.clone();
        let label = self.spec.name.clone();
        let started = conn.begin(&label, updates, |id| {
            line(&json!({
                "type": "execute_tool", "id": id, "toolName": self.spec.name,
                "toolCallId": call.call_id, "input": call.args,
            }))
        });
        let (id, mut rx) = match started {
            Ok(started) => started,
            Err(_) => {
                return Err(ToolError::new(format!(
                    "The extension providing {} is not running ({})",
                    self.spec.name,
                    conn.path.display()
                )));
            }
        };
        let reply = tokio::select! {
            reply = &mut rx => reply.unwrap_or_else(|_| Err(Failure::Gone("the extension stopped".into()))),
            _ = call.cancel.cancelled() => {
                conn.send_cancel(id);
                match tokio::time::timeout(self.cancel_grace, &mut rx).await {
                    Ok(reply) => reply.unwrap_or(Err(Failure::Cancelled)),
                    Err(_) => {
                        conn.forget(id);
                        Err(Failure::Cancelled)
                    }
                }
            }
        };
        match reply {
            Ok(result) => match Self::output_from(result) {
                Ok((output, false)) => Ok(output),
                Ok((output, true)) => Err(ToolError {
                    message: join_text_blocks(&output.content),
                    details: output.details,
                }),
                Err(e) => {
                    conn.report(&self.spec.name, &e);
                    Err(ToolError::new(format!(
                        "The extension returned an invalid result for {}: {e}",
                        self.spec.name
                    )))
                }
            },
            Err(Failure::Handler(message)) => Err(ToolError::new(message)),
            Err(Failure::Cancelled) => Err(ToolError::new("Aborted")),
            Err(Failure::Gone(reason)) => Err(ToolError::new(format!(
                "The extension providing {} stopped: {reason}",
                self.spec.name
            ))),
            Err(Failure::NotRunning) | Err(Failure::TimedOut(_)) => Err(ToolError::new(format!(
                "The extension providing {} is not running ({})",
                self.spec.name,
                conn.path.display()
            ))),
        }
    }
}

/// How long a cancelled tool call waits for the extension to answer before giving up.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(2);
