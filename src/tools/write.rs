//! The `write` tool: creates or overwrites a file with the given content, creating missing
//! parent directories. Writes to one file are serialized with other writes and edits of
//! it, and the file is replaced as a whole so it is never left half-written.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::args::string_arg;
use super::config::ToolConfig;
use super::fsio::{node_error, write_file_replacing};
use super::mutation_queue::lock_file;
use super::path::resolve_to_cwd;
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "Write a file with the given content. The file is created when missing and fully replaced when it exists; missing parent directories are created too.";

pub struct WriteTool {
    config: ToolConfig,
}

impl WriteTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn label(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "File to write, relative to the working directory or absolute"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Create a file or replace its whole content")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &["Reserve write for new files and complete rewrites."]
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let path = string_arg(&call.args, "path")?;
        let content = string_arg(&call.args, "content")?;
        let absolute = resolve_to_cwd(&path, &self.config.cwd);
        let _turn = lock_file(&absolute).await;
        if call.cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        let target = absolute.clone();
        let bytes = content.clone().into_bytes();
        tokio::task::spawn_blocking(move || {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| node_error(&e, "mkdir", Some(parent)))?;
            }
            write_file_replacing(&target, &bytes)
        })
        .await
        .map_err(|e| ToolError::new(format!("write failed: {e}")))?
        .map_err(ToolError::new)?;
        // pi 1.6's wording (0.73 also gave the length).
        Ok(ToolOutput::text(format!("Successfully wrote to {path}")))
    }
}
