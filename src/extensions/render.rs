//! Chat items an extension draws itself: custom messages of a type it registered a
//! renderer for (pi's `registerMessageRenderer`) and the boxes of its tools that have
//! `renderCall` / `renderResult`. The front end asks for the lines with a `render`
//! request and never waits for them: it shows its own rendering until the answer
//! arrives, and keeps it when the extension fails or does not answer within
//! [`RENDER_TIMEOUT`].

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::connection::Connection;
use super::link::Failure;
use super::protocol::line;

/// How long a `render` request may take before the front end gives up on it (the
/// default rendering stays, and the failure is reported once).
pub const RENDER_TIMEOUT: Duration = Duration::from_secs(1);

/// What an extension draws of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolRendering {
    /// The call line (pi's `renderCall`).
    pub call: bool,
    /// The result (pi's `renderResult`).
    pub result: bool,
    /// pi's `renderShell: "self"`: no tool box around the lines.
    pub self_shell: bool,
}

/// The extension that draws an item, and how to ask it.
#[derive(Clone)]
pub struct ItemRenderer {
    connection: Arc<Connection>,
    /// For tools: which parts the extension draws.
    pub tool: ToolRendering,
}

impl std::fmt::Debug for ItemRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemRenderer")
            .field("extension", &self.connection.path)
            .field("tool", &self.tool)
            .finish()
    }
}

impl ItemRenderer {
    pub(crate) fn new(connection: Arc<Connection>, tool: ToolRendering) -> ItemRenderer {
        ItemRenderer { connection, tool }
    }

    /// The extension's file.
    pub fn extension_path(&self) -> &Path {
        &self.connection.path
    }

    /// Whether the extension still runs.
    pub fn is_alive(&self) -> bool {
        self.connection.is_alive()
    }

    /// Sends `render` with `fields` (`kind`, `width`, …) and waits at most `timeout`
    /// for the answer's `result`. A late answer is dropped.
    pub async fn render(&self, fields: &Value, timeout: Duration) -> Result<Value, String> {
        let (id, rx) = self
            .connection
            .begin_quiet("render", |id| {
                let mut message = json!({"type": "render", "id": id});
                if let (Value::Object(target), Value::Object(fields)) = (&mut message, fields) {
                    for (key, value) in fields {
                        target.insert(key.clone(), value.clone());
                    }
                }
                line(&message)
            })
            .map_err(|f| failure_text(&f))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result.unwrap_or(Value::Null)),
            Ok(Ok(Err(failure))) => Err(failure_text(&failure)),
            Ok(Err(_)) => Err("the extension stopped".into()),
            Err(_) => {
                self.connection.forget(id);
                Err(format!("no answer within {} ms", timeout.as_millis()))
            }
        }
    }

    /// Writes a renderer failure to the extension log and reports it as pi's
    /// `extension_error` (the caller reports each renderer once).
    pub fn report(&self, what: &str, error: &str) {
        self.connection.report(what, error);
    }
}

fn failure_text(failure: &Failure) -> String {
    match failure {
        Failure::Handler(e) | Failure::Gone(e) => e.clone(),
        Failure::NotRunning => "the extension is not running".into(),
        Failure::TimedOut(t) => format!("no answer within {} ms", t.as_millis()),
        Failure::Cancelled => "cancelled".into(),
    }
}
