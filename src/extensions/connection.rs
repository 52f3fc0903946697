//! One running extension: its process, the line-based pipes to it, the requests waiting
//! for an answer, and what happens when it misbehaves.
//!
//! Three tasks serve each process: a writer that owns stdin, a reader that owns stdout
//! and dispatches every message (answers to pending requests, tool updates, UI calls,
//! `exec`, actions), and a drain of stderr into the extension log. The tasks only hold
//! weak references, so dropping the last [`Connection`] kills the process.
//!
//! A process that exits, writes something that is not a protocol message, or cannot be
//! written to is disabled on the spot: every pending request fails, the failure is
//! reported once (as pi's `extension_error`), and the process group is killed. Nothing
//! of this reaches the session as an error; the events it was part of go on without it.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::actions::{ActionKind, DeliverAs, ExtensionAction, ExtensionError};
use super::discovery::ExtensionSource;
use super::events::EventName;
use super::exec;
use super::log::ExtensionLog;
use super::protocol::{
    ExtensionMessage, Hello, MAX_LINE_BYTES, PROTOCOL_VERSION, Registration, UiCall, line,
};
use super::ui::{UiMethod, UiReply, UiRequest, UiResponse};
use crate::ai::message::{UserBlock, now_ms};
use crate::messages::CustomMessage;
use crate::session::entry::EntryId;
use crate::tools::{ToolOutput, UpdateSink};

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

struct Pending {
    label: String,
    reply: oneshot::Sender<Reply>,
    updates: Option<UpdateSink>,
}

struct Inner {
    path: PathBuf,
    name: String,
    writer: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    alive: AtomicBool,
    registered: AtomicBool,
    closing: AtomicBool,
    /// Dialogs and `exec` requests in progress; event timeouts pause while > 0.
    busy: watch::Sender<usize>,
    out: Outputs,
    stop: CancellationToken,
    child: tokio::sync::Mutex<Option<Child>>,
    pid: Option<u32>,
    /// The process has been waited for; its id may belong to someone else now.
    reaped: AtomicBool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        // SAFETY: kill(2) on the process group we created for the extension; no memory
        // is involved and a group that is already gone yields ESRCH.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

/// A running extension that has registered.
pub(crate) struct Connection {
    pub path: PathBuf,
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave them inconsistent (plain inserts
    // and removals), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Inner {
    fn send_line(&self, line: String) -> bool {
        match lock(&self.writer).as_ref() {
            Some(tx) => tx.send(line).is_ok(),
            None => false,
        }
    }

    fn report(&self, event: &str, error: &str) {
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

    fn respond(&self, id: Value, result: Value) {
        self.send_line(line(
            &json!({"type": "response", "id": id, "result": result}),
        ));
    }

    fn respond_error(&self, id: Value, error: &str) {
        self.send_line(line(&json!({"type": "response", "id": id, "error": error})));
    }

    fn action(&self, kind: ActionKind) {
        let _ = self.out.actions.send(ExtensionAction {
            extension_path: self.path.clone(),
            kind,
        });
    }

    /// Disables the extension (once): fails pending requests, reports, kills it.
    fn fail(&self, reason: &str) {
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
    fn kill(&self) {
        if !self.reaped.load(Ordering::SeqCst) {
            kill_group(self.pid);
        }
    }

    fn busy(&self, delta: isize) {
        self.busy
            .send_modify(|b| *b = b.saturating_add_signed(delta));
    }
}

fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
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

async fn read_loop(
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
    }
}

/// Tool content: a list of text/image blocks, or a plain string.
pub(crate) fn content_from_value(value: Value) -> Result<Vec<UserBlock>, String> {
    match value {
        Value::String(s) => Ok(vec![UserBlock::text(s)]),
        Value::Null => Ok(Vec::new()),
        other => serde_json::from_value(other).map_err(|e| format!("invalid content: {e}")),
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
        ExtensionMessage::Exec(request) => {
            inner.busy(1);
            let inner = inner.clone();
            tokio::spawn(async move {
                let cwd = match &request.cwd {
                    Some(dir) => crate::core::resource_paths::resolve_from(&inner.out.cwd, dir),
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
    }
    Ok(())
}

fn handle_ui(inner: &Arc<Inner>, call: UiCall) {
    let method = match UiMethod::from_call(&call) {
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
    if !method.is_dialog() {
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

async fn write_loop(
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

async fn stderr_loop(log: Arc<ExtensionLog>, name: String, stderr: tokio::process::ChildStderr) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => log.line(&name, &String::from_utf8_lossy(&buf)),
        }
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
        tokio::spawn(stderr_loop(log, name.clone(), stderr));
        tokio::spawn(write_loop(Arc::downgrade(&inner), stdin, writer_rx));
        tokio::spawn(read_loop(Arc::downgrade(&inner), stdout, registered_tx));
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
