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
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::events::EventName;
use super::link::{Failure, Inner, Outputs, Pending, Reply, describe_exit, kill_group, lock};
use super::protocol::{Hello, PROTOCOL_VERSION, Registration, line};
use super::source::{ExtensionSource, ResourceScope};
use super::streams;
use crate::tools::UpdateSink;

/// A running extension that has registered.
pub(crate) struct Connection {
    pub path: PathBuf,
    /// Where it was found (`-e`, settings or an extensions folder).
    pub scope: ResourceScope,
    pub name: String,
    pub registration: Registration,
    pub events: BTreeSet<EventName>,
    /// Runs in the node host (pi's TypeScript/JavaScript extensions), which reads
    /// `ui_state`.
    pub node_module: bool,
    default_timeout: Duration,
    inner: Arc<Inner>,
}

/// The result of starting an extension.
pub(crate) struct Started {
    pub connection: Connection,
    /// Problems with the registration that did not prevent loading.
    pub warnings: Vec<String>,
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
        let mut command = if source.launch.node_module {
            let host = super::node::prepare()?;
            let mut command = tokio::process::Command::new(&host.node);
            command.args(host.args());
            if let Ok(exe) = std::env::current_exe() {
                command.env("PI_RS_EXE", exe);
            }
            command
        } else {
            tokio::process::Command::new(&source.launch.program)
        };
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
            state_seen: AtomicU64::new(0),
            wants_state: AtomicBool::new(false),
            late_message_renderers: Mutex::new(Vec::new()),
            child: tokio::sync::Mutex::new(Some(child)),
        });
        log.line(&name, &format!("started {}", source.path.display()));
        let (registered_tx, registered_rx) = oneshot::channel();
        let load_error = Arc::new(std::sync::Mutex::new(None));
        let stderr_done = tokio::spawn(streams::stderr_loop(
            log,
            name.clone(),
            stderr,
            load_error.clone(),
        ));
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
                Ok(Ok(Err(e))) if source.launch.node_module => {
                    // The node host says why on stderr; read it to the end first.
                    let _ = tokio::time::timeout(Duration::from_secs(2), stderr_done).await;
                    let cause = load_error.lock().ok().and_then(|mut slot| slot.take());
                    let e = cause.unwrap_or(e);
                    inner.fail(&e);
                    return Err(e);
                }
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
            // pi's modules replace built-in tools on purpose (pi says nothing either).
            if options.known_tools.contains(&tool.name.as_str()) && !source.launch.node_module {
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
                node_module: source.launch.node_module,
                default_timeout,
                inner,
            },
            warnings,
        })
    }

    /// Whether the extension registered with `"state": true` (it gets `state` and `bus`).
    pub fn wants_state(&self) -> bool {
        self.inner.wants_state.load(Ordering::SeqCst)
    }

    pub fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::SeqCst)
    }

    /// Whether the extension draws custom messages of `custom_type` (registered while
    /// loading or after).
    pub fn renders_messages(&self, custom_type: &str) -> bool {
        self.registration
            .message_renderers
            .iter()
            .any(|t| t == custom_type)
            || lock(&self.inner.late_message_renderers)
                .iter()
                .any(|t| t == custom_type)
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
        // The handler reads the session state this request is sent in.
        self.inner.out.state.refresh();
        self.begin_with(label, updates, build)
    }

    /// [`Connection::begin`] without reading the session state again (requests whose
    /// handler does not read it, such as `render`) and without partial updates.
    pub fn begin_quiet(
        &self,
        label: &str,
        build: impl FnOnce(u64) -> String,
    ) -> Result<(u64, oneshot::Receiver<Reply>), Failure> {
        self.begin_with(label, None, build)
    }

    fn begin_with(
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
                events: None,
            },
        );
        if !self.inner.send_line(build(id)) {
            lock(&self.inner.pending).remove(&id);
            return Err(Failure::NotRunning);
        }
        Ok((id, rx))
    }

    /// Sends a request whose progress arrives as `stream_event` messages (on the
    /// returned receiver) before its answer.
    pub fn begin_stream(
        &self,
        label: &str,
        build: impl FnOnce(u64) -> String,
    ) -> Result<
        (
            u64,
            oneshot::Receiver<Reply>,
            mpsc::UnboundedReceiver<Value>,
        ),
        Failure,
    > {
        if !self.is_alive() {
            return Err(Failure::NotRunning);
        }
        self.inner.out.state.refresh();
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        lock(&self.inner.pending).insert(
            id,
            Pending {
                label: label.to_string(),
                reply: tx,
                updates: None,
                events: Some(events_tx),
            },
        );
        if !self.inner.send_line(build(id)) {
            lock(&self.inner.pending).remove(&id);
            return Err(Failure::NotRunning);
        }
        Ok((id, rx, events_rx))
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
    /// Requests sent to the extension that have not been answered yet.
    pub fn pending_requests(&self) -> usize {
        lock(&self.inner.pending).len()
    }

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
