//! The three tasks that serve an extension process's pipes: the reader (stdout: parses
//! each line and dispatches it — answers to pending requests, tool updates, UI calls,
//! `exec`, actions), the writer (stdin: batches queued lines) and the stderr drain (into
//! the extension log). They hold weak references, so they end with the connection.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};

use super::actions::{ActionKind, DeliverAs};
use super::exec;
use super::link::{Failure, Inner, describe_exit, kill_group, lock};
use super::log::ExtensionLog;
use super::protocol::{ExtensionMessage, MAX_LINE_BYTES, Registration, UiCall, content_from_value};
use super::ui::{UiInput, UiMethod, UiReply, UiRequest, UiResponse};
use crate::ai::message::now_ms;
use crate::messages::CustomMessage;
use crate::session::entry::EntryId;
use crate::tools::ToolOutput;

/// Reads one line of at most [`MAX_LINE_BYTES`]; `Ok(false)` at end of input.
async fn read_line(reader: &mut BufReader<ChildStdout>, buf: &mut Vec<u8>) -> Result<bool, String> {
    loop {
        let available = reader
            .fill_buf()
            .await
            .map_err(|e| format!("could not read from the extension: {e}"))?;
        if available.is_empty() {
            return Ok(!buf.is_empty());
        }
        match memchr::memchr(b'\n', available) {
            Some(i) => {
                buf.extend_from_slice(&available[..i]);
                reader.consume(i + 1);
                return Ok(true);
            }
            None => {
                let n = available.len();
                buf.extend_from_slice(available);
                reader.consume(n);
                if buf.len() > MAX_LINE_BYTES {
                    return Err(format!(
                        "protocol violation: a line longer than {MAX_LINE_BYTES} bytes"
                    ));
                }
            }
        }
    }
}

pub(super) async fn read_loop(
    weak: Weak<Inner>,
    stdout: ChildStdout,
    registered: oneshot::Sender<Result<Registration, String>>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut buf = Vec::with_capacity(4096);
    let mut registered = Some(registered);
    let failure = loop {
        buf.clear();
        match read_line(&mut reader, &mut buf).await {
            Ok(true) => {}
            Ok(false) => {
                let Some(inner) = weak.upgrade() else { return };
                if inner.closing.load(Ordering::SeqCst) {
                    break String::new();
                }
                let status = {
                    let mut child = inner.child.lock().await;
                    match child.as_mut() {
                        Some(c) => tokio::time::timeout(Duration::from_millis(500), c.wait())
                            .await
                            .ok()
                            .and_then(Result::ok),
                        None => None,
                    }
                };
                if status.is_some() {
                    // Leftover children in its group go too; after that the id is free.
                    kill_group(inner.pid);
                    inner.reaped.store(true, Ordering::SeqCst);
                }
                break describe_exit(status);
            }
            Err(e) => break e,
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match ExtensionMessage::parse(&buf) {
            Ok(m) => m,
            Err(e) => break format!("protocol violation: {e}"),
        };
        let Some(inner) = weak.upgrade() else { return };
        match (message, registered.take()) {
            (ExtensionMessage::Register(r), Some(tx)) => {
                // From here on failures are runtime failures, reported as such.
                inner.registered.store(true, Ordering::SeqCst);
                inner.wants_state.store(r.state, Ordering::SeqCst);
                if r.state {
                    inner.out.state.want();
                }
                let _ = tx.send(Ok(*r));
            }
            (other, Some(tx)) => {
                registered = Some(tx);
                break format!(
                    "protocol violation: the first message must be \"register\", got {}",
                    message_type(&other)
                );
            }
            (message, None) => {
                if let Err(e) = dispatch(&inner, message) {
                    break e;
                }
            }
        }
    };
    if let Some(tx) = registered.take() {
        let _ = tx.send(Err(if failure.is_empty() {
            "the extension stopped before registering".into()
        } else {
            failure.clone()
        }));
    }
    if let Some(inner) = weak.upgrade() {
        if failure.is_empty() {
            inner.alive.store(false, Ordering::SeqCst);
        } else {
            inner.fail(&failure);
        }
    }
}

fn message_type(message: &ExtensionMessage) -> &'static str {
    match message {
        ExtensionMessage::Register(_) => "\"register\"",
        ExtensionMessage::Response(_) => "\"response\"",
        ExtensionMessage::ToolUpdate(_) => "\"tool_update\"",
        ExtensionMessage::Ui(_) => "\"ui\"",
        ExtensionMessage::Exec(_) => "\"exec\"",
        ExtensionMessage::SendMessage { .. } => "\"send_message\"",
        ExtensionMessage::SendUserMessage { .. } => "\"send_user_message\"",
        ExtensionMessage::AppendEntry { .. } => "\"append_entry\"",
        ExtensionMessage::SetLabel { .. } => "\"set_label\"",
        ExtensionMessage::SetSessionName { .. } => "\"set_session_name\"",
        ExtensionMessage::SetThinkingLevel { .. } => "\"set_thinking_level\"",
        ExtensionMessage::SetModel { .. } => "\"set_model\"",
        ExtensionMessage::Shutdown => "\"shutdown\"",
        ExtensionMessage::Abort => "\"abort\"",
        ExtensionMessage::Compact { .. } => "\"compact\"",
        ExtensionMessage::RunTool(_) => "\"run_tool\"",
        ExtensionMessage::Call { .. } => "\"call\"",
        ExtensionMessage::RegisterTool { .. } => "\"register_tool\"",
        ExtensionMessage::RegisterMessageRenderer { .. } => "\"register_message_renderer\"",
        ExtensionMessage::Emit { .. } => "\"emit\"",
        ExtensionMessage::StreamEvent { .. } => "\"stream_event\"",
        ExtensionMessage::CancelCall { .. } => "\"cancel_call\"",
    }
}

fn dispatch(inner: &Arc<Inner>, message: ExtensionMessage) -> Result<(), String> {
    match message {
        ExtensionMessage::Register(_) => {
            return Err("protocol violation: \"register\" was sent twice".into());
        }
        ExtensionMessage::Response(r) => {
            let pending = lock(&inner.pending).remove(&r.id);
            match pending {
                Some(p) => {
                    let reply = match r.error {
                        Some(error) => Err(Failure::Handler(error)),
                        None => Ok(r.result.filter(|v| !v.is_null())),
                    };
                    let _ = p.reply.send(reply);
                }
                None => inner.out.log.line(
                    &inner.name,
                    &format!("late or unknown response id {} ignored", r.id),
                ),
            }
        }
        ExtensionMessage::ToolUpdate(update) => {
            let sink = lock(&inner.pending)
                .get(&update.id)
                .and_then(|p| p.updates.clone());
            if let Some(sink) = sink {
                match content_from_value(update.content.unwrap_or(Value::Null)) {
                    Ok(content) => sink(ToolOutput {
                        content,
                        details: update.details,
                    }),
                    Err(e) => inner
                        .out
                        .log
                        .line(&inner.name, &format!("tool update ignored: {e}")),
                }
            }
        }
        ExtensionMessage::Ui(call) => handle_ui(inner, *call),
        ExtensionMessage::RunTool(request) => {
            inner.busy(1);
            let inner = inner.clone();
            tokio::spawn(async move {
                let cwd = match &request.cwd {
                    Some(dir) => crate::tools::path::resolve_to_cwd(dir, &inner.out.cwd),
                    None => inner.out.cwd.clone(),
                };
                let result = super::builtin_tools::run(&request, &cwd, &inner.stop).await;
                match result {
                    Ok(value) => inner.respond(request.id, value),
                    Err(error) => inner.respond_error(request.id, &error),
                }
                inner.busy(-1);
            });
        }
        ExtensionMessage::Exec(request) => {
            inner.busy(1);
            let inner = inner.clone();
            tokio::spawn(async move {
                let cwd = match &request.cwd {
                    Some(dir) => crate::tools::path::resolve_to_cwd(dir, &inner.out.cwd),
                    None => inner.out.cwd.clone(),
                };
                let result = exec::run(
                    &request.command,
                    &request.args,
                    &cwd,
                    request.timeout.map(Duration::from_millis),
                    &inner.stop,
                )
                .await;
                inner.respond(
                    request.id,
                    serde_json::to_value(result).unwrap_or(Value::Null),
                );
                inner.busy(-1);
            });
        }
        ExtensionMessage::SendMessage { message, options } => {
            let options = options.unwrap_or_default();
            inner.action(ActionKind::SendMessage {
                message: CustomMessage {
                    custom_type: message.custom_type,
                    content: message.content,
                    display: message.display,
                    details: message.details,
                    timestamp: now_ms(),
                    extra: Default::default(),
                },
                trigger_turn: options.trigger_turn,
                deliver_as: options.deliver_as.unwrap_or(DeliverAs::Steer),
            });
        }
        ExtensionMessage::SendUserMessage { content, options } => {
            inner.action(ActionKind::SendUserMessage {
                content,
                deliver_as: options.and_then(|o| o.deliver_as),
            });
        }
        ExtensionMessage::AppendEntry { custom_type, data } => {
            inner.action(ActionKind::AppendEntry { custom_type, data });
        }
        ExtensionMessage::SetLabel { entry_id, label } => inner.action(ActionKind::SetLabel {
            entry_id: EntryId(entry_id),
            label,
        }),
        ExtensionMessage::SetSessionName { name } => {
            inner.action(ActionKind::SetSessionName { name });
        }
        ExtensionMessage::SetThinkingLevel { level } => {
            inner.action(ActionKind::SetThinkingLevel { level });
        }
        ExtensionMessage::SetModel { provider, model_id } => {
            inner.action(ActionKind::SetModel { provider, model_id });
        }
        ExtensionMessage::Shutdown => inner.action(ActionKind::Shutdown),
        ExtensionMessage::Abort => inner.action(ActionKind::Abort),
        ExtensionMessage::Compact {
            custom_instructions,
        } => inner.action(ActionKind::Compact {
            custom_instructions,
        }),
        ExtensionMessage::Call { id, method, params } => inner.action(ActionKind::Call {
            id,
            method,
            params: params.unwrap_or(Value::Null),
        }),
        ExtensionMessage::RegisterTool { tool } => inner.action(ActionKind::RegisterTool(tool)),
        ExtensionMessage::RegisterMessageRenderer { custom_type } => {
            let mut late = lock(&inner.late_message_renderers);
            if !late.contains(&custom_type) {
                late.push(custom_type);
            }
        }
        ExtensionMessage::Emit { channel, data } => {
            inner.action(ActionKind::Emit { channel, data })
        }
        ExtensionMessage::StreamEvent { id, event } => {
            let sink = lock(&inner.pending).get(&id).and_then(|p| p.events.clone());
            match sink {
                Some(sink) => {
                    let _ = sink.send(event);
                }
                None => inner.out.log.line(
                    &inner.name,
                    &format!("stream_event for unknown request {id} ignored"),
                ),
            }
        }
        ExtensionMessage::CancelCall { id } => inner.out.call_cancels.cancel(&inner.path, &id),
    }
    Ok(())
}

fn handle_ui(inner: &Arc<Inner>, call: UiCall) {
    let mut method = match UiMethod::from_call(&call) {
        Ok(method) => method,
        Err(e) => {
            inner.out.log.line(&inner.name, &e);
            if let Some(id) = call.id {
                inner.respond_error(id, &e);
            }
            return;
        }
    };
    let id = format!(
        "ui-{}",
        inner.out.ui_counter.fetch_add(1, Ordering::Relaxed) + 1
    );
    if let UiMethod::Custom {
        custom_id, input, ..
    }
    | UiMethod::OverlayShow {
        custom_id, input, ..
    } = &mut method
    {
        let writer = lock(&inner.writer).clone();
        *input = writer.map(|w| UiInput::new(custom_id.clone(), w));
    }
    if !method.is_dialog() {
        if let UiMethod::SetEditorComponent {
            lines: Some(_),
            input,
            ..
        } = &mut method
        {
            let writer = lock(&inner.writer).clone();
            *input = writer.map(|w| UiInput::new(String::new(), w));
        }
        if inner.out.has_ui {
            let _ = inner.out.ui.send(UiRequest {
                id,
                extension_path: inner.path.clone(),
                method,
                reply: None,
            });
        }
        return;
    }
    let Some(reply_id) = call.id else {
        inner
            .out
            .log
            .line(&inner.name, "a UI dialog without an \"id\" was ignored");
        return;
    };
    if !inner.out.has_ui {
        inner.respond(reply_id, UiResponse::Cancelled.to_json());
        return;
    }
    let timeout = method.timeout_ms().map(Duration::from_millis);
    let (tx, rx) = oneshot::channel();
    let request = UiRequest {
        id,
        extension_path: inner.path.clone(),
        method,
        reply: Some(UiReply(tx)),
    };
    if inner.out.ui.send(request).is_err() {
        inner.respond(reply_id, UiResponse::Cancelled.to_json());
        return;
    }
    inner.busy(1);
    let inner = inner.clone();
    tokio::spawn(async move {
        let expiry = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending::<()>().await,
            }
        };
        let response = tokio::select! {
            r = rx => r.unwrap_or(UiResponse::Cancelled),
            _ = expiry => UiResponse::Cancelled,
            _ = inner.stop.cancelled() => UiResponse::Cancelled,
        };
        inner.respond(reply_id, response.to_json());
        inner.busy(-1);
    });
}

pub(super) async fn write_loop(
    weak: Weak<Inner>,
    mut stdin: ChildStdin,
    mut rx: mpsc::UnboundedReceiver<String>,
) {
    while let Some(first) = rx.recv().await {
        let mut batch = first.into_bytes();
        while batch.len() < 256 * 1024 {
            match rx.try_recv() {
                Ok(more) => batch.extend_from_slice(more.as_bytes()),
                Err(_) => break,
            }
        }
        if let Err(e) = stdin.write_all(&batch).await {
            if let Some(inner) = weak.upgrade()
                && !inner.closing.load(Ordering::SeqCst)
            {
                inner.fail(&format!("could not write to the extension: {e}"));
            }
            return;
        }
    }
    let _ = stdin.shutdown().await;
}

/// The prefix of the stderr line in which the node host states why a module did not
/// load (the line becomes the load error).
pub(super) const LOAD_ERROR_PREFIX: &str = "pi-rs-load-error: ";

pub(super) async fn stderr_loop(
    log: Arc<ExtensionLog>,
    name: String,
    stderr: tokio::process::ChildStderr,
    load_error: Arc<std::sync::Mutex<Option<String>>>,
) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf);
                if let Some(cause) = text.strip_prefix(LOAD_ERROR_PREFIX)
                    && let Ok(mut slot) = load_error.lock()
                {
                    *slot = Some(cause.trim_end().to_string());
                }
                log.line(&name, &text);
            }
        }
    }
}
