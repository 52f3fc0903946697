//! The `bash` tool: runs a command in the session's working directory and returns the
//! merged stdout/stderr, keeping the last 2000 lines / 50 KB and saving the full output
//! to a temporary file when it is longer. Partial output streams to the UI at most every
//! 100 ms. A non-zero exit status, a timeout or a cancellation fails the call with the
//! output so far and pi's status line (`Command exited with code 3`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::args::string_arg;
use super::config::ToolConfig;
use super::js::js_number_to_string;
use super::output::{OutputAccumulator, OutputSnapshot};
use super::shell::{ProcessEnd, ProcessSpec, path_with_bin_dir, resolve_shell, run_process};
use super::truncate::{DEFAULT_MAX_BYTES, Limits, TruncatedBy, format_size};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "Run a bash command in the current working directory and get its stdout and stderr. Only the last 2000 lines or 50KB of output are returned (whichever limit is reached first); when output is cut, the complete output is saved to a temporary file. An optional timeout in seconds stops the command.";

/// Minimum time between two streamed partial results.
const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

pub struct BashTool {
    config: ToolConfig,
}

impl BashTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl Tool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn label(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "The bash command line to run"},
                "timeout": {"type": "number", "description": "Seconds after which the command is killed (no timeout when omitted)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Run shell commands (ls, grep, find and the like)")
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let command = string_arg(&call.args, "command")?;
        let timeout = call.args.get("timeout").and_then(Value::as_f64);
        let resolved = match &self.config.command_prefix {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
            _ => command,
        };
        let shell = resolve_shell(self.config.shell_path.as_deref()).map_err(ToolError::new)?;
        let spec = ProcessSpec {
            shell: &shell,
            command: &resolved,
            cwd: &self.config.cwd,
            path_env: path_with_bin_dir(self.config.effective_bin_dir().as_deref()),
            timeout: timeout
                .filter(|t| *t > 0.0 && t.is_finite())
                .map(Duration::from_secs_f64),
        };

        let output = Arc::new(Mutex::new(OutputAccumulator::new(
            Limits::default(),
            &self.config.effective_temp_dir(),
            "pi-bash",
        )));
        let streamer = Streamer::new(call.clone(), output.clone());
        // Stops the update timer even if this call is abandoned half-way.
        let _timer_guard = streamer.inner.stop.clone().drop_guard();
        call.update(ToolOutput::default());
        let end = {
            let streamer = streamer.clone();
            let output = output.clone();
            run_process(&spec, &call.cancel, move |data| {
                if let Ok(mut acc) = output.lock() {
                    acc.append(data);
                }
                streamer.data_arrived();
            })
            .await
        };
        streamer.stop_timer();
        output
            .lock()
            .map_err(|_| ToolError::new("bash output lost"))?
            .finish();
        streamer.flush();
        let (snapshot, last_line_bytes) = {
            let mut acc = output
                .lock()
                .map_err(|_| ToolError::new("bash output lost"))?;
            (acc.snapshot(true), acc.last_line_bytes())
        };

        let end = end.map_err(ToolError::new)?;
        match end {
            ProcessEnd::Cancelled => {
                let (text, _) = format_output(&snapshot, last_line_bytes, "");
                Err(ToolError::new(with_status(&text, "Command aborted")))
            }
            ProcessEnd::TimedOut => {
                let (text, _) = format_output(&snapshot, last_line_bytes, "");
                let seconds = js_number_to_string(timeout.unwrap_or_default());
                Err(ToolError::new(with_status(
                    &text,
                    &format!("Command timed out after {seconds} seconds"),
                )))
            }
            ProcessEnd::Exited(code) => {
                let (text, details) = format_output(&snapshot, last_line_bytes, "(no output)");
                match code {
                    Some(code) if code != 0 => Err(ToolError::new(with_status(
                        &text,
                        &format!("Command exited with code {code}"),
                    ))),
                    _ => Ok(ToolOutput {
                        content: vec![crate::ai::message::UserBlock::text(text)],
                        details,
                    }),
                }
            }
        }
    }
}

/// `text`, a blank line and the status; just the status when there is no text.
fn with_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_string()
    } else {
        format!("{text}\n\n{status}")
    }
}

/// The output text with pi's truncation notice, and the details stored for it.
fn format_output(
    snapshot: &OutputSnapshot,
    last_line_bytes: usize,
    empty_text: &str,
) -> (String, Option<Value>) {
    let truncation = &snapshot.truncation;
    let mut text = if snapshot.content.is_empty() {
        empty_text.to_string()
    } else {
        snapshot.content.clone()
    };
    if !truncation.truncated {
        return (text, None);
    }
    let full = snapshot
        .full_output_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let start = truncation.total_lines - truncation.output_lines + 1;
    let end = truncation.total_lines;
    if truncation.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {full}]",
            format_size(truncation.output_bytes),
            format_size(last_line_bytes)
        ));
    } else if truncation.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {}. Full output: {full}]",
            truncation.total_lines
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {full}]",
            truncation.total_lines,
            format_size(DEFAULT_MAX_BYTES)
        ));
    }
    let mut details = json!({ "truncation": truncation });
    if let Some(path) = &snapshot.full_output_path {
        details["fullOutputPath"] = json!(path.display().to_string());
    }
    (text, Some(details))
}

/// Sends partial results while the command runs, at most one per [`UPDATE_INTERVAL`]:
/// immediately when the last one is old enough, otherwise from a timer.
#[derive(Clone)]
struct Streamer {
    inner: Arc<StreamerInner>,
}

struct StreamerInner {
    call: ToolCallArgs,
    output: Arc<Mutex<OutputAccumulator>>,
    state: Mutex<StreamState>,
    wake: tokio::sync::Notify,
    stop: tokio_util::sync::CancellationToken,
}

struct StreamState {
    dirty: bool,
    last_emit: Option<Instant>,
}

impl Streamer {
    fn new(call: ToolCallArgs, output: Arc<Mutex<OutputAccumulator>>) -> Self {
        let enabled = call.on_update.is_some();
        let streamer = Self {
            inner: Arc::new(StreamerInner {
                call,
                output,
                state: Mutex::new(StreamState {
                    dirty: false,
                    last_emit: None,
                }),
                wake: tokio::sync::Notify::new(),
                stop: tokio_util::sync::CancellationToken::new(),
            }),
        };
        if enabled {
            let timer = streamer.clone();
            tokio::spawn(async move { timer.run_timer().await });
        }
        streamer
    }

    fn data_arrived(&self) {
        if self.inner.call.on_update.is_none() {
            return;
        }
        let due = {
            let Ok(mut state) = self.inner.state.lock() else {
                return;
            };
            state.dirty = true;
            state
                .last_emit
                .is_none_or(|last| last.elapsed() >= UPDATE_INTERVAL)
        };
        if due {
            self.flush();
        } else {
            self.inner.wake.notify_one();
        }
    }

    /// Emits the current output if anything new arrived since the last update.
    fn flush(&self) {
        let snapshot = {
            let Ok(mut state) = self.inner.state.lock() else {
                return;
            };
            if !state.dirty {
                return;
            }
            state.dirty = false;
            state.last_emit = Some(Instant::now());
            let Ok(mut acc) = self.inner.output.lock() else {
                return;
            };
            acc.snapshot(true)
        };
        self.emit(&snapshot);
    }

    fn emit(&self, snapshot: &OutputSnapshot) {
        if self.inner.call.on_update.is_none() {
            return;
        }
        let mut details = json!({});
        if snapshot.truncation.truncated {
            details["truncation"] = json!(snapshot.truncation);
        }
        if let Some(path) = &snapshot.full_output_path {
            details["fullOutputPath"] = json!(path.display().to_string());
        }
        self.inner.call.update(ToolOutput {
            content: vec![crate::ai::message::UserBlock::text(
                snapshot.content.clone(),
            )],
            details: Some(details),
        });
    }

    fn stop_timer(&self) {
        self.inner.stop.cancel();
    }

    async fn run_timer(&self) {
        loop {
            tokio::select! {
                () = self.inner.stop.cancelled() => return,
                () = self.inner.wake.notified() => {}
            }
            let wait = {
                let Ok(state) = self.inner.state.lock() else {
                    return;
                };
                state.last_emit.map_or(Duration::ZERO, |last| {
                    UPDATE_INTERVAL.saturating_sub(last.elapsed())
                })
            };
            tokio::select! {
                () = self.inner.stop.cancelled() => return,
                () = tokio::time::sleep(wait) => self.flush(),
            }
        }
    }
}
