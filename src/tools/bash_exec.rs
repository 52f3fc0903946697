//! The user's own shell commands (`!cmd` in the TUI, `bash` over RPC): run like the `bash`
//! tool, but the output is cleaned for display (ANSI escapes, control characters and
//! carriage returns removed) as it streams, and the result is a [`BashRun`] that becomes a
//! `bashExecution` message instead of a tool result. Like pi, the full cleaned output goes
//! to `pi-bash-<hex>.log` once it passes 50 KB.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::output::{AnsiStripper, Utf8StreamDecoder, sanitize_for_display};
use super::shell::{ProcessEnd, ProcessSpec, path_with_bin_dir, resolve_shell, run_process};
use super::truncate::{DEFAULT_MAX_BYTES, Limits, truncate_tail};
use crate::ai::js::utf16_len;
use crate::messages::BashExecutionMessage;

/// Settings for [`run_shell_command`], usually taken from the session's settings.
#[derive(Debug, Clone, Default)]
pub struct ShellOptions {
    /// The `shellPath` setting.
    pub shell_path: Option<PathBuf>,
    /// The `shellCommandPrefix` setting, run as a line before the command.
    pub command_prefix: Option<String>,
    /// Put first on `PATH` (`~/.pi/agent/bin`); `None` leaves `PATH` alone.
    pub bin_dir: Option<PathBuf>,
    /// Where the full output is saved; `None` is the system temp dir.
    pub temp_dir: Option<PathBuf>,
    /// Kill the command after this long (pi's `!cmd` has none).
    pub timeout: Option<Duration>,
}

/// The outcome of a user shell command, shaped like pi's `BashResult`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashRun {
    /// The cleaned output, cut to its last 2000 lines / 50 KB.
    pub output: String,
    /// `None` when cancelled, timed out or killed by a signal.
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    /// The complete cleaned output, when it was longer than 50 KB.
    pub full_output_path: Option<PathBuf>,
}

impl BashRun {
    /// The `bashExecution` message recording this run of `command`.
    pub fn to_message(
        &self,
        command: &str,
        exclude_from_context: bool,
        timestamp: i64,
    ) -> BashExecutionMessage {
        BashExecutionMessage {
            command: command.to_string(),
            output: self.output.clone(),
            exit_code: self.exit_code,
            cancelled: self.cancelled,
            truncated: self.truncated,
            full_output_path: self
                .full_output_path
                .as_ref()
                .map(|p| p.display().to_string()),
            timestamp,
            exclude_from_context: exclude_from_context.then_some(true),
            ..BashExecutionMessage::default()
        }
    }
}

/// Runs `command` in `cwd`, streaming cleaned text chunks to `on_chunk`. Cancellation
/// (and the optional timeout) kill the whole process group; the run then reports
/// `cancelled` with the output collected so far. Errors are for commands that could not
/// be started (missing working directory or shell).
pub async fn run_shell_command(
    command: &str,
    cwd: &Path,
    options: &ShellOptions,
    cancel: &CancellationToken,
    mut on_chunk: impl FnMut(&str),
) -> Result<BashRun, String> {
    let resolved = match &options.command_prefix {
        Some(prefix) if !prefix.is_empty() => format!("{prefix}\n{command}"),
        _ => command.to_string(),
    };
    let shell = resolve_shell(options.shell_path.as_deref())?;
    let spec = ProcessSpec {
        shell: &shell,
        command: &resolved,
        cwd,
        path_env: path_with_bin_dir(options.bin_dir.as_deref()),
        timeout: options.timeout,
    };
    let temp_dir = options.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut collector = CleanOutput::new(temp_dir);
    let end = run_process(&spec, cancel, |data| {
        let text = collector.push(data);
        if !text.is_empty() {
            on_chunk(&text);
        }
    })
    .await?;
    let tail = collector.finish();
    if !tail.is_empty() {
        on_chunk(&tail);
    }

    let full: String = collector.chunks.iter().map(String::as_str).collect();
    let truncation = truncate_tail(&full, Limits::default());
    let full_output_path = if truncation.truncated {
        collector.ensure_file();
        collector.path.clone()
    } else {
        collector.path.clone()
    };
    let cancelled = matches!(end, ProcessEnd::Cancelled | ProcessEnd::TimedOut);
    Ok(BashRun {
        output: if truncation.truncated {
            truncation.content
        } else {
            full
        },
        exit_code: match end {
            ProcessEnd::Exited(code) => code,
            ProcessEnd::Cancelled | ProcessEnd::TimedOut => None,
        },
        cancelled,
        truncated: truncation.truncated,
        full_output_path,
    })
}

/// Cleans output as it arrives and keeps a rolling window of about 100 KB of it (whole
/// chunks, like pi), plus a file with everything once 50 KB of raw output went by.
struct CleanOutput {
    decoder: Utf8StreamDecoder,
    stripper: AnsiStripper,
    chunks: std::collections::VecDeque<String>,
    /// Sum of `chunks` lengths in UTF-16 units (pi measures JavaScript string length).
    window_units: usize,
    raw_bytes: usize,
    temp_dir: PathBuf,
    path: Option<PathBuf>,
    file: Option<File>,
}

impl CleanOutput {
    fn new(temp_dir: PathBuf) -> Self {
        Self {
            decoder: Utf8StreamDecoder::new(),
            stripper: AnsiStripper::new(),
            chunks: std::collections::VecDeque::new(),
            window_units: 0,
            raw_bytes: 0,
            temp_dir,
            path: None,
            file: None,
        }
    }

    fn push(&mut self, data: &[u8]) -> String {
        self.raw_bytes += data.len();
        let decoded = self.decoder.decode(data);
        let text = self.clean(&decoded);
        if self.raw_bytes > DEFAULT_MAX_BYTES {
            self.ensure_file();
        }
        self.record(&text);
        text
    }

    fn finish(&mut self) -> String {
        let decoded = self.decoder.finish();
        let text = self.clean(&decoded);
        self.record(&text);
        if let Some(file) = self.file.take() {
            drop(file);
        }
        text
    }

    fn clean(&mut self, decoded: &str) -> String {
        sanitize_for_display(&self.stripper.strip(decoded))
    }

    fn record(&mut self, text: &str) {
        if let Some(file) = &mut self.file {
            // Losing the copy must not lose the command's result; the path is still
            // reported and the on-screen output is complete up to 50 KB.
            let _ = file.write_all(text.as_bytes());
        }
        self.window_units += utf16_len(text);
        self.chunks.push_back(text.to_string());
        while self.window_units > DEFAULT_MAX_BYTES * 2 && self.chunks.len() > 1 {
            if let Some(removed) = self.chunks.pop_front() {
                self.window_units -= utf16_len(&removed);
            }
        }
    }

    fn ensure_file(&mut self) {
        if self.path.is_some() {
            return;
        }
        let id: u64 = rand::random();
        let path = self.temp_dir.join(format!("pi-bash-{id:016x}.log"));
        if let Ok(mut file) = File::create(&path) {
            for chunk in &self.chunks {
                let _ = file.write_all(chunk.as_bytes());
            }
            self.file = Some(file);
        }
        self.path = Some(path);
    }
}
