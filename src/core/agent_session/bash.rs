//! The user's own shell commands (`!cmd`, `!!cmd`, RPC `bash`): run in the session's
//! directory and recorded as `bashExecution` messages that reach the model with the next
//! prompt (unless excluded). While the agent streams, the record waits until the run ends
//! so tool calls and their results stay adjacent.

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, lock};
use crate::ai::message::now_ms;
use crate::messages::{AgentMessage, BashExecutionMessage};
use crate::tools::bash_exec::{ShellOptions, run_shell_command};

/// pi's `BashResult` (RPC `bash` response).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashOutcome {
    pub output: String,
    /// Absent when the command was cancelled or killed (pi leaves it undefined).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// pi's text when a second `!` command is started while one runs.
pub const BASH_ALREADY_RUNNING: &str =
    "A bash command is already running. Press Esc to cancel it first.";

impl AgentSession {
    /// Runs a user shell command; `on_chunk` receives output as it arrives.
    pub async fn execute_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: impl FnMut(&str) + Send,
    ) -> Result<BashOutcome, String> {
        let options = {
            let mut st = self.state();
            if st.bash_running {
                return Err(BASH_ALREADY_RUNNING.into());
            }
            st.bash_running = true;
            ShellOptions {
                shell_path: st.settings.shell_path().map(Into::into),
                command_prefix: st.settings.shell_command_prefix().map(str::to_string),
                ..ShellOptions::default()
            }
        };
        let cancel = CancellationToken::new();
        *lock(&self.inner.bash_cancel) = Some(cancel.clone());
        let cwd = self.inner.cwd.clone();
        let run = run_shell_command(command, &cwd, &options, &cancel, on_chunk).await;
        lock(&self.inner.bash_cancel).take();
        self.state().bash_running = false;
        let run = run?;
        let message = run.to_message(command, exclude_from_context, now_ms());
        let outcome = BashOutcome {
            output: run.output.clone(),
            exit_code: run.exit_code,
            cancelled: run.cancelled,
            truncated: run.truncated,
            full_output_path: run.full_output_path.map(|p| p.display().to_string()),
        };
        self.record_bash(message)?;
        Ok(outcome)
    }

    /// A `!` / `!!` command typed in the interactive UI (pi's `handleBashCommand`): the
    /// extensions' `user_bash` comes first, and an extension's `result` is recorded in
    /// place of running the command. RPC's `bash` runs [`AgentSession::execute_bash`]
    /// directly, as in pi.
    pub async fn user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_chunk: impl FnMut(&str) + Send,
    ) -> Result<BashOutcome, String> {
        let host = self
            .extension_host()
            .filter(|h| h.has_subscribers(crate::extensions::EventName::UserBash));
        let Some(host) = host else {
            return self
                .execute_bash(command, exclude_from_context, on_chunk)
                .await;
        };
        let replaced = host
            .user_bash(command, exclude_from_context, &self.inner.cwd)
            .await;
        let Some(result) = replaced else {
            return self
                .execute_bash(command, exclude_from_context, on_chunk)
                .await;
        };
        let message = BashExecutionMessage {
            command: command.to_string(),
            output: result.output.clone(),
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path.clone(),
            timestamp: now_ms(),
            exclude_from_context: exclude_from_context.then_some(true),
            ..BashExecutionMessage::default()
        };
        self.record_bash(message)?;
        Ok(BashOutcome {
            output: result.output,
            exit_code: result.exit_code,
            cancelled: result.cancelled,
            truncated: result.truncated,
            full_output_path: result.full_output_path,
        })
    }

    /// Stores a `bashExecution` record: now, or after the run when the agent streams.
    fn record_bash(&self, message: BashExecutionMessage) -> Result<(), String> {
        let mut st = self.state();
        if st.streaming {
            st.pending_bash.push(message);
        } else {
            let message = AgentMessage::BashExecution(message);
            st.messages.push(message.clone());
            st.session
                .append_message(message)
                .map_err(|e| format!("The session file could not be updated: {e}"))?;
        }
        Ok(())
    }

    /// Cancels the running `!` command, if any.
    pub fn abort_bash(&self) {
        if let Some(token) = lock(&self.inner.bash_cancel).take() {
            token.cancel();
        }
    }

    pub fn is_bash_running(&self) -> bool {
        self.state().bash_running
    }
}
