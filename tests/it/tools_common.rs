//! A sandbox for tool tests: a temporary working directory with real files, the built-in
//! tools configured for it, and a runner that validates arguments like the agent loop
//! before executing, recording streamed updates.

// Test support: failing loudly on a broken fixture is the point.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pi::ai::message::UserBlock;
use pi::tools::validate::prepare_and_validate;
use pi::tools::{ToolCallArgs, ToolConfig, ToolError, ToolOutput, create_tool};
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

pub struct Sandbox {
    pub dir: TempDir,
    /// Where `bash` puts full outputs (kept apart from the working directory).
    pub logs: TempDir,
    pub config: ToolConfig,
}

pub struct Outcome {
    pub result: Result<ToolOutput, ToolError>,
    pub updates: Vec<ToolOutput>,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let logs = tempfile::tempdir().unwrap();
        let mut config = ToolConfig::new(dir.path());
        config.temp_dir = Some(logs.path().to_path_buf());
        Self { dir, logs, config }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, contents).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn read_bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    pub async fn run(&self, tool: &str, args: Value) -> Outcome {
        self.run_with(tool, args, CancellationToken::new()).await
    }

    /// Validates like the agent loop, then executes with `cancel`.
    pub async fn run_with(&self, tool: &str, args: Value, cancel: CancellationToken) -> Outcome {
        let tool = create_tool(tool, &self.config).unwrap();
        let args = match prepare_and_validate(tool.as_ref(), args) {
            Ok(args) => args,
            Err(e) => {
                return Outcome {
                    result: Err(e),
                    updates: Vec::new(),
                };
            }
        };
        let updates = Arc::new(Mutex::new(Vec::new()));
        let sink = updates.clone();
        let mut call = ToolCallArgs::new("call_1", args);
        call.cancel = cancel;
        call.on_update = Some(Arc::new(move |update| sink.lock().unwrap().push(update)));
        let result = tool.execute(call).await;
        let updates = updates.lock().unwrap().clone();
        Outcome { result, updates }
    }

    /// Replaces the sandbox paths in a text so snapshots are stable.
    pub fn scrub(&self, text: &str) -> String {
        let text = text.replace(&self.logs.path().display().to_string(), "$LOGS");
        text.replace(&self.dir.path().display().to_string(), "$CWD")
    }
}

pub fn text_of(output: &ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|block| match block {
            UserBlock::Text(t) => Some(t.text.as_str()),
            UserBlock::Image(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Outcome {
    pub fn ok(&self) -> &ToolOutput {
        match &self.result {
            Ok(output) => output,
            Err(e) => panic!("tool failed: {}", e.message),
        }
    }

    /// The text the model reads.
    pub fn text(&self) -> String {
        match &self.result {
            Ok(output) => text_of(output),
            Err(e) => e.message.clone(),
        }
    }

    pub fn error(&self) -> String {
        match &self.result {
            Ok(output) => panic!("expected an error, got: {}", text_of(output)),
            Err(e) => e.message.clone(),
        }
    }

    pub fn details(&self) -> Value {
        self.ok().details.clone().unwrap_or(Value::Null)
    }
}
