//! One running extension: its process, the line-based pipes to it, the requests waiting
//! for an answer, and what happens when it misbehaves.
//!
//! Three tasks serve each process (see `streams`): a writer that owns stdin, a reader that
//! owns stdout and dispatches every message, and a drain of stderr into the extension
//! log. The tasks only hold weak references, so dropping the last [`Connection`] kills
//! the process.
//!
//! A process that exits, writes something that is not a protocol message, or cannot be
//! written to is disabled on the spot: every pending request fails, the failure is
//! reported once (as pi's `extension_error`), and the process group is killed. Nothing
//! of this reaches the session as an error; the events it was part of go on without it.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::actions::{ActionKind, ExtensionAction, ExtensionError};
use super::discovery::ExtensionSource;
use super::events::EventName;
use super::log::ExtensionLog;
use super::protocol::{Hello, PROTOCOL_VERSION, Registration, line};
use super::streams;
use super::ui::UiRequest;
use crate::core::resource_paths::ResourceScope;
use crate::tools::UpdateSink;

pub(crate) use super::streams::content_from_value;

/// Where a connection delivers what its extension sends, shared by all connections.
#[derive(Clone)]
pub(crate) struct Outputs {
    pub actions: mpsc::UnboundedSender<ExtensionAction>,
    pub ui: mpsc::UnboundedSender<UiRequest>,
    pub has_ui: bool,
    pub cwd: PathBuf,
    pub log: Arc<ExtensionLog>,
    pub ui_counter: Arc<AtomicU64>,
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

/// A running extension that has registered.
pub(crate) struct Connection {
    pub path: PathBuf,
    /// Where it was found (`-e`, settings or an extensions folder).
    pub scope: ResourceScope,
    pub name: String,
    pub registration: Registration,
    pub events: BTreeSet<EventName>,
    default_timeout: Duration,
    inner: Arc<Inner>,
}

/// The result of starting an extension.
pub(crate) struct Started {
    pub connection: Connection,
    /// Problems with the registration that did not prevent loading.
    pub warnings: Vec<String>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave them inconsistent (plain inserts
    // and removals), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    pub(super) fn send_line(&self, line: String) -> bool {
        match lock(&self.writer).as_ref() {
            Some(tx) => tx.send(line).is_ok(),
            None => false,
        }
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

/// Everything [`Connection::start`] needs besides the extension itself.
pub(crate) struct StartOptions<'a> {
    pub hello: Hello,
    pub out: Outputs,
    pub handshake_timeout: Duration,
    pub default_timeout: Duration,
    pub known_tools: &'a [&'a str],
}

impl Connection {
    /// Starts the process, sends `hello` and waits for `register`.
    pub(crate) async fn start(
        source: &ExtensionSource,
        options: StartOptions<'_>,
    ) -> Result<Started, String> {
        let name = source
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| source.path.display().to_string());
        let mut command = tokio::process::Command::new(&source.launch.program);
        command
            .args(&source.launch.args)
            .current_dir(&options.out.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own process group: terminal signals (Ctrl+C) are the host's to handle, and
        // shutting an extension down also ends whatever it started.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("could not start {}: {e}", source.launch.program.display()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("could not open the extension's pipes".into());
        };
        let (writer_tx, writer_rx) = mpsc::unbounded_channel();
        let (busy, _) = watch::channel(0usize);
        let log = options.out.log.clone();
        let inner = Arc::new(Inner {
            path: source.path.clone(),
            name: name.clone(),
            writer: Mutex::new(Some(writer_tx)),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            alive: AtomicBool::new(true),
            registered: AtomicBool::new(false),
            closing: AtomicBool::new(false),
            busy,
            out: options.out,
            stop: CancellationToken::new(),
            pid: child.id(),
            reaped: AtomicBool::new(false),
            child: tokio::sync::Mutex::new(Some(child)),
        });
        log.line(&name, &format!("started {}", source.path.display()));
        let (registered_tx, registered_rx) = oneshot::channel();
        tokio::spawn(streams::stderr_loop(log, name.clone(), stderr));
        tokio::spawn(streams::write_loop(
            Arc::downgrade(&inner),
            stdin,
            writer_rx,
        ));
        tokio::spawn(streams::read_loop(
            Arc::downgrade(&inner),
            stdout,
            registered_tx,
        ));
        inner.send_line(line(&options.hello));

        let registration =
            match tokio::time::timeout(options.handshake_timeout, registered_rx).await {
                Ok(Ok(Ok(r))) => r,
                Ok(Ok(Err(e))) => {
                    inner.fail(&e);
                    return Err(e);
                }
                Ok(Err(_)) => {
                    inner.fail("stopped");
                    return Err("the extension stopped before registering".into());
                }
                Err(_) => {
                    let e = format!(
                        "no \"register\" message within {} ms",
                        options.handshake_timeout.as_millis()
                    );
                    inner.fail(&e);
                    return Err(e);
                }
            };
        if let Some(version) = registration.protocol_version
            && version > PROTOCOL_VERSION
        {
            let e = format!(
                "the extension needs protocol version {version}; this pi-rs speaks version {PROTOCOL_VERSION}"
            );
            inner.registered.store(false, Ordering::SeqCst);
            inner.fail(&e);
            return Err(e);
        }
        let mut warnings = Vec::new();
        let mut events = BTreeSet::new();
        for event in &registration.events {
            match EventName::parse(event) {
                Some(e) => {
                    events.insert(e);
                }
                None => warnings.push(format!("unknown event \"{event}\" ignored")),
            }
        }
        for event in registration.event_timeouts_ms.keys() {
            if EventName::parse(event).is_none() {
                warnings.push(format!("timeout for unknown event \"{event}\" ignored"));
            }
        }
        for tool in &registration.tools {
            if options.known_tools.contains(&tool.name.as_str()) {
                warnings.push(format!(
                    "tool \"{}\" has the name of a built-in tool",
                    tool.name
                ));
            }
        }
        let display_name = registration.name.clone().unwrap_or(name);
        let default_timeout = registration
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(options.default_timeout);
        Ok(Started {
            connection: Connection {
                path: source.path.clone(),
                scope: source.scope,
                name: display_name,
                registration,
                events,
                default_timeout,
                inner,
            },
            warnings,
        })
    }

    pub fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::SeqCst)
    }

    pub fn subscribes(&self, event: EventName) -> bool {
        self.events.contains(&event) && self.is_alive()
    }

    /// The extension's timeout for `event`.
    pub fn timeout_for(&self, event: EventName) -> Duration {
        self.registration
            .event_timeouts_ms
            .get(event.as_str())
            .map(|ms| Duration::from_millis(*ms))
            .unwrap_or(self.default_timeout)
    }

    /// Sends a line that needs no answer.
    pub fn send_line(&self, line: String) -> bool {
        self.is_alive() && self.inner.send_line(line)
    }

    pub fn report(&self, event: &str, error: &str) {
        self.inner.report(event, error);
    }

    /// Registers a request (its answer will arrive on the returned receiver) and sends
    /// the line built for its id.
    pub fn begin(
        &self,
        label: &str,
        updates: Option<UpdateSink>,
        build: impl FnOnce(u64) -> String,
    ) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        if !self.is_alive() {
            return Err(Failure::NotRunning);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(
            id,
            Pending {
                label: label.to_string(),
                reply: tx,
                updates,
            },
        );
        if !self.inner.send_line(build(id)) {
            lock(&self.inner.pending).remove(&id);
            return Err(Failure::NotRunning);
        }
        Ok((id, rx))
    }

    /// Stops waiting for request `id` (a late answer is ignored).
    pub fn forget(&self, id: u64) {
        lock(&self.inner.pending).remove(&id);
    }

    /// Tells the extension to abandon request `id`.
    pub fn send_cancel(&self, id: u64) {
        self.send_line(line(&json!({"type": "cancel", "id": id})));
    }

    /// Waits for the answer to `id`. The timeout does not run while the extension has a
    /// dialog open or an `exec` running (it restarts when they are done).
    pub async fn wait(
        &self,
        id: u64,
        mut rx: oneshot::Receiver<Reply>,
        timeout: Option<Duration>,
        cancel: Option<&CancellationToken>,
    ) -> Reply {
        let mut busy = self.inner.busy.subscribe();
        let mut busy_open = true;
        let mut deadline = timeout.map(|t| Instant::now() + t);
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        loop {
            let paused = *busy.borrow_and_update() > 0;
            let expiry = async {
                match deadline {
                    Some(d) if !paused => tokio::time::sleep_until(d).await,
                    _ => std::future::pending::<()>().await,
                }
            };
            let busy_changed = async {
                if busy_open {
                    busy.changed().await.is_ok()
                } else {
                    std::future::pending::<bool>().await
                }
            };
            tokio::select! {
                reply = &mut rx => {
                    return reply.unwrap_or_else(|_| Err(Failure::Gone("the extension stopped".into())));
                }
                _ = expiry => {
                    self.forget(id);
                    return Err(Failure::TimedOut(timeout.unwrap_or_default()));
                }
                _ = cancel.cancelled() => {
                    self.forget(id);
                    self.send_cancel(id);
                    return Err(Failure::Cancelled);
                }
                open = busy_changed => {
                    busy_open = open;
                    if *busy.borrow() == 0 && let Some(t) = timeout {
                        deadline = Some(Instant::now() + t);
                    }
                }
            }
        }
    }

    /// `begin` and `wait` in one.
    pub async fn request(
        &self,
        label: &str,
        timeout: Option<Duration>,
        cancel: Option<&CancellationToken>,
        build: impl FnOnce(u64) -> String,
    ) -> Reply {
        let (id, rx) = self.begin(label, None, build)?;
        self.wait(id, rx, timeout, cancel).await
    }

    /// Closes stdin, waits up to `grace` for the process to exit, then kills it.
    pub async fn close(&self, grace: Duration) {
        self.inner.closing.store(true, Ordering::SeqCst);
        lock(&self.inner.writer).take();
        {
            let mut child = self.inner.child.lock().await;
            if let Some(c) = child.as_mut() {
                match tokio::time::timeout(grace, c.wait()).await {
                    Ok(status) => {
                        let text = describe_exit(status.ok());
                        self.inner.out.log.line(&self.inner.name, &text);
                    }
                    Err(_) => {
                        self.inner
                            .out
                            .log
                            .line(&self.inner.name, "did not exit in time; killed");
                        kill_group(self.inner.pid);
                        let _ = c.start_kill();
                        let _ = c.wait().await;
                    }
                }
                // Whatever it started in its group goes with it; then its id is free.
                kill_group(self.inner.pid);
                self.inner.reaped.store(true, Ordering::SeqCst);
            }
        }
        self.inner.fail("shut down");
    }
}
