//! Print mode (`-p`, `--mode text`, piped stdin) and JSON mode (`--mode json`): send the
//! prompts one after another, then print the final answer (text) — or print every event
//! as one JSON line as it happens (json, preceded by the session header line).
//!
//! Extensions get `session_start` after the JSON header and `session_shutdown` at the end
//! (also when a prompt fails); runs they start are waited for. Their failures are
//! `extension_error` lines in JSON mode and `Extension error (…)` lines on stderr in text
//! mode (pi's wording).
//!
//! Warnings about the session file (truncated or malformed lines, duplicate ids, …) go to
//! stderr before anything else, as `Warning: …` lines.
//!
//! Exit code 0 on success; 1 when a prompt could not be sent or the last answer ended in
//! an error or was aborted (the error goes to stderr). Signals are handled by the caller
//! (`main.rs`): the agent is aborted, running commands are killed, exit 130/143/129.

use std::io::Write;

use crate::ai::message::{AssistantBlock, ImageContent, StopReason};
use crate::core::agent_session::{AgentSession, PromptOptions};
use crate::core::events::{EventJsonEncoder, SessionEvent};
use crate::extensions::SessionStartReason;
use crate::messages::AgentMessage;

/// Text or JSON output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintOutput {
    Text,
    Json,
}

/// One prompt to send: text and optional images.
#[derive(Debug, Clone, Default)]
pub struct PrintPrompt {
    pub text: String,
    pub images: Vec<ImageContent>,
}

fn write_json_line(out: &mut impl Write, value: &serde_json::Value) {
    // A closed stdout (e.g. `| head`) must not crash the run; the session still saves.
    let _ = writeln!(out, "{value}");
}

/// Runs the prompts and prints the result. Returns the process exit code.
pub async fn run_print(
    session: AgentSession,
    output: PrintOutput,
    prompts: Vec<PrintPrompt>,
) -> i32 {
    let stdout = std::io::stdout();
    let mut events = session.subscribe();
    // What was odd about the session file: stderr, so JSON mode's stdout stays pi's.
    for warning in session.load_warnings() {
        eprintln!("Warning: {warning}");
    }
    if output == PrintOutput::Json {
        let header = session.with_session(|m| serde_json::to_value(m.header()).ok());
        if let Some(h) = header {
            write_json_line(&mut stdout.lock(), &h);
        }
    }
    let runner = session.clone();
    let mut task = tokio::spawn(async move {
        runner.start_extensions(SessionStartReason::Startup).await;
        let mut result = Ok::<(), String>(());
        for prompt in prompts {
            let options = PromptOptions {
                images: prompt.images,
                ..PromptOptions::default()
            };
            if let Err(e) = runner.prompt(&prompt.text, options).await {
                result = Err(e);
                break;
            }
        }
        if result.is_ok() {
            runner.wait_for_idle().await;
        }
        runner.shutdown().await;
        result
    });
    let mut encoder = EventJsonEncoder::new();
    let handle = |event: SessionEvent, encoder: &mut EventJsonEncoder| match (&event, output) {
        (SessionEvent::Notice { message }, _) => eprintln!("Warning: {message}"),
        (SessionEvent::SessionLoadWarning { warning }, _) => eprintln!("Warning: {warning}"),
        (
            SessionEvent::CompactionEnd {
                error_message: Some(message),
                ..
            },
            PrintOutput::Text,
        ) => eprintln!("{message}"),
        (
            SessionEvent::ExtensionError {
                extension_path,
                error,
                ..
            },
            PrintOutput::Text,
        ) => eprintln!("Extension error ({extension_path}): {error}"),
        (_, PrintOutput::Json) => {
            if let Some(v) = encoder.encode(&event) {
                write_json_line(&mut stdout.lock(), &v);
            }
        }
        _ => {}
    };
    let result = loop {
        tokio::select! {
            Some(event) = events.recv() => handle(event, &mut encoder),
            done = &mut task => {
                while let Ok(event) = events.try_recv() {
                    handle(event, &mut encoder);
                }
                break done;
            }
        }
    };
    let _ = stdout.lock().flush();
    match result {
        Ok(Ok(())) => {}
        Ok(Err(message)) => {
            eprintln!("{message}");
            return 1;
        }
        Err(e) => {
            eprintln!("internal error: {e}");
            return 1;
        }
    }
    if output == PrintOutput::Json {
        return 0;
    }
    let messages = session.messages();
    let Some(AgentMessage::Assistant(last)) = messages.last() else {
        return 0;
    };
    if matches!(last.stop_reason, StopReason::Error | StopReason::Aborted) {
        let fallback = if last.stop_reason == StopReason::Error {
            "Request error"
        } else {
            "Request aborted"
        };
        eprintln!("{}", last.error_message.as_deref().unwrap_or(fallback));
        return 1;
    }
    let mut out = stdout.lock();
    for block in &last.content {
        if let AssistantBlock::Text(t) = block {
            let _ = writeln!(out, "{}", t.text);
        }
    }
    let _ = out.flush();
    0
}
