//! The live link to one extension process: what a [`Connection`](super::connection)
//! and the tasks serving its pipes (`streams`) share. The connection starts the process
//! and the tasks; both sides answer requests, report failures and kill the process group
//! through [`Inner`]. Depends on neither side.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::actions::{ActionKind, ExtensionAction, ExtensionError};
use super::log::ExtensionLog;
use super::protocol::line;
use super::ui::UiRequest;
use crate::tools::UpdateSink;

/// Where a connection delivers what its extension sends, shared by all connections.
#[derive(Clone)]
pub(crate) struct Outputs {
    pub actions: mpsc::UnboundedSender<ExtensionAction>,
    pub ui: mpsc::UnboundedSender<UiRequest>,
    pub has_ui: bool,
    pub cwd: PathBuf,
    pub log: Arc<ExtensionLog>,
    pub ui_counter: Arc<AtomicU64>,
    /// The session state pushed to every extension (`state.rs`).
    pub state: Arc<super::state::StateSync>,
    /// `call`s an extension may cancel (`cancel_call`), by extension path and call id.
    pub call_cancels: Arc<CallCancels>,
}

/// Cancellation tokens of the `call`s in progress that an extension may abandon (an
/// `llm_stream` whose AbortSignal fired).
#[derive(Default)]
pub(crate) struct CallCancels(Mutex<HashMap<String, CancellationToken>>);

impl CallCancels {
    fn key(path: &std::path::Path, id: &Value) -> String {
        format!("{}\u{0}{id}", path.display())
    }

    /// A token for call `id` of the extension at `path`, cancelled by its `cancel_call`.
    pub(crate) fn token(&self, path: &std::path::Path, id: &Value) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.0).insert(Self::key(path, id), token.clone());
        token
    }

    /// The call is over.
    pub(crate) fn finish(&self, path: &std::path::Path, id: &Value) {
        lock(&self.0).remove(&Self::key(path, id));
    }

    pub(crate) fn cancel(&self, path: &std::path::Path, id: &Value) {
        if let Some(token) = lock(&self.0).remove(&Self::key(path, id)) {
            token.cancel();
        }
    }
}

/// Why a request got no usable answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The extension was not running when the request was made.
    NotRunning,
    /// The process died or broke the protocol while the request was pending (this has
    /// been reported already).
    Gone(String),
    /// No answer in time (the caller reports it).
    TimedOut(Duration),
    /// The extension answered with an error (the caller reports it).
    Handler(String),
    /// The caller gave up (cancellation).
    Cancelled,
}

pub(crate) type Reply = Result<Option<Value>, Failure>;

pub(super) struct Pending {
    pub(super) label: String,
    pub(super) reply: oneshot::Sender<Reply>,
    pub(super) updates: Option<UpdateSink>,
    /// Where `stream_event`s for this request go (`provider_stream`).
    pub(super) events: Option<mpsc::UnboundedSender<Value>>,
}

pub(super) struct Inner {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) writer: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pub(super) pending: Mutex<HashMap<u64, Pending>>,
    pub(super) next_id: AtomicU64,
    pub(super) alive: AtomicBool,
    pub(super) registered: AtomicBool,
    pub(super) closing: AtomicBool,
    /// Dialogs and `exec` requests in progress; event timeouts pause while > 0.
    pub(super) busy: watch::Sender<usize>,
    pub(super) out: Outputs,
    pub(super) stop: CancellationToken,
    pub(super) child: tokio::sync::Mutex<Option<Child>>,
    pub(super) pid: Option<u32>,
    /// The process has been waited for; its id may belong to someone else now.
    pub(super) reaped: AtomicBool,
    /// The newest `state` version this extension was sent.
    pub(super) state_seen: AtomicU64,
    /// The extension asked for `state` messages (`register.state`).
    pub(super) wants_state: AtomicBool,
    /// Custom message types whose renderer the extension registered after loading.
    pub(super) late_message_renderers: Mutex<Vec<String>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills the process group created for the extension (its id is the extension's pid).
/// Only the group: after the extension has been reaped its pid may belong to another
/// process.
pub(super) fn kill_group(pid: Option<u32>) {
    if let Some(pgid) = pid.and_then(|pid| i32::try_from(pid).ok()) {
        crate::tools::shell::kill_group(pgid);
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave them inconsistent (plain inserts
    // and removals), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    /// Queues a line for the extension, preceded by the `state` parts it has not seen.
    pub(super) fn send_line(&self, line: String) -> bool {
        let writer = lock(&self.writer);
        let Some(tx) = writer.as_ref() else {
            return false;
        };
        if self.wants_state.load(Ordering::Relaxed)
            && let Some(state) = self.out.state.unseen(&self.state_seen)
            && tx.send(state).is_err()
        {
            return false;
        }
        tx.send(line).is_ok()
    }

    pub(super) fn report(&self, event: &str, error: &str) {
        self.out
            .log
            .line(&self.name, &format!("error in {event}: {error}"));
        let _ = self.out.actions.send(ExtensionAction {
            extension_path: self.path.clone(),
            kind: ActionKind::Error(ExtensionError {
                extension_path: self.path.display().to_string(),
                event: event.to_string(),
                error: error.to_string(),
            }),
        });
    }

    pub(super) fn respond(&self, id: Value, result: Value) {
        self.send_line(line(
            &json!({"type": "response", "id": id, "result": result}),
        ));
    }

    pub(super) fn respond_error(&self, id: Value, error: &str) {
        self.send_line(line(&json!({"type": "response", "id": id, "error": error})));
    }

    pub(super) fn action(&self, kind: ActionKind) {
        let _ = self.out.actions.send(ExtensionAction {
            extension_path: self.path.clone(),
            kind,
        });
    }

    /// Disables the extension (once): fails pending requests, reports, kills it.
    pub(super) fn fail(&self, reason: &str) {
        if !self.alive.swap(false, Ordering::SeqCst) {
            return;
        }
        self.out.log.line(&self.name, &format!("stopped: {reason}"));
        lock(&self.writer).take();
        self.stop.cancel();
        let mut pending: Vec<(u64, Pending)> = lock(&self.pending).drain().collect();
        pending.sort_by_key(|(id, _)| *id);
        let in_flight = pending.first().map(|(_, p)| p.label.clone());
        for (_, p) in pending {
            let _ = p.reply.send(Err(Failure::Gone(reason.to_string())));
        }
        if self.registered.load(Ordering::SeqCst) && !self.closing.load(Ordering::SeqCst) {
            self.report(in_flight.as_deref().unwrap_or("process"), reason);
        }
        self.kill();
    }

    /// Kills the extension's process group, unless the process is known to be gone.
    pub(super) fn kill(&self) {
        if !self.reaped.load(Ordering::SeqCst) {
            kill_group(self.pid);
        }
    }

    pub(super) fn busy(&self, delta: isize) {
        self.busy
            .send_modify(|b| *b = b.saturating_add_signed(delta));
    }
}

pub(super) fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) => match s.code() {
            Some(code) => format!("the extension exited (exit code {code})"),
            None => {
                #[cfg(unix)]
                {
                    use std::os::unix::process::ExitStatusExt;
                    if let Some(signal) = s.signal() {
                        return format!("the extension was killed by signal {signal}");
                    }
                }
                "the extension exited".to_string()
            }
        },
        None => "the extension closed its output".to_string(),
    }
}
