//! Running the user's `npm` and `git` for the package manager, and what goes wrong.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a package operation failed; the message names the package or command and the
/// cause, as pi's do.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// A command exited with an error. `output` is what it printed, when it was captured.
    #[error("{command} failed with code {code}{}", tail(output))]
    Failed {
        command: String,
        code: String,
        output: String,
    },
    /// A command could not be started.
    #[error("cannot run {program}: {reason} (pi packages use the {program} on your PATH)")]
    Spawn { program: String, reason: String },
    #[error("Path does not exist: {}", .0.display())]
    PathMissing(PathBuf),
    #[error("{0}")]
    NoMatch(String),
    #[error("Invalid npmCommand: first array entry must be a non-empty command")]
    InvalidNpmCommand,
    #[error("settings file {}: {reason}", path.display())]
    Settings { path: PathBuf, reason: String },
    #[error("{0}")]
    Io(String),
    /// The project's settings and package folders wait for a trust decision.
    #[error("Project is not trusted; refusing to access project package storage")]
    ProjectNotTrusted,
}

fn tail(output: &str) -> String {
    let trimmed = output.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!(":\n{trimmed}")
    }
}

/// Where the output of `npm` and `git` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandOutput {
    /// To the terminal, as pi's package commands do.
    Inherit,
    /// Kept, and shown in the error if the command fails (startup: a mode owns stdout).
    Capture,
}

/// A command line as pi prints it in errors: program and arguments joined by spaces.
fn display(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

fn spawn_error(program: &str, e: &std::io::Error) -> PackageError {
    let reason = if e.kind() == std::io::ErrorKind::NotFound {
        "not found".to_string()
    } else {
        e.to_string()
    };
    PackageError::Spawn {
        program: program.to_string(),
        reason,
    }
}

/// Runs a command to its end; output per `output`.
pub fn run(
    program: &str,
    args: &[String],
    cwd: Option<&Path>,
    output: CommandOutput,
) -> Result<(), PackageError> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let (status, printed) = match output {
        CommandOutput::Inherit => {
            let status = cmd.status().map_err(|e| spawn_error(program, &e))?;
            (status, String::new())
        }
        CommandOutput::Capture => {
            let out = cmd.output().map_err(|e| spawn_error(program, &e))?;
            let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
            printed.push_str(&String::from_utf8_lossy(&out.stderr));
            (out.status, printed)
        }
    };
    if status.success() {
        return Ok(());
    }
    Err(PackageError::Failed {
        command: display(program, args),
        code: status
            .code()
            .map_or_else(|| "null".to_string(), |c| c.to_string()),
        output: printed,
    })
}

/// Runs a command and returns its trimmed stdout; a failure carries its stderr.
pub fn capture(
    program: &str,
    args: &[String],
    cwd: Option<&Path>,
    env: &[(&str, &str)],
) -> Result<String, PackageError> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().map_err(|e| spawn_error(program, &e))?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Err(PackageError::Failed {
        command: display(program, args),
        code: out
            .status
            .code()
            .map_or_else(|| "null".to_string(), |c| c.to_string()),
        output: if stderr.trim().is_empty() {
            stdout
        } else {
            stderr
        },
    })
}

/// `text` dimmed when stdout is a terminal (pi's progress lines), plain otherwise.
pub fn dim(text: &str) -> String {
    style(text, "2")
}

/// `text` in an SGR style when stdout is a terminal.
pub fn style(text: &str, sgr: &str) -> String {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
