//! [`ExtensionHost`]: loads the extensions, keeps what they registered (tools, commands,
//! flags) and shuts them down. The event methods live in `dispatch.rs`.
//!
//! The host does not know the session: the caller (the coordinator's `AgentSession`)
//! passes the data each event needs and applies the typed outcomes. What extensions do on
//! their own (send messages, append entries, report errors) arrives on the
//! [`HostChannels::actions`] channel; what they ask of the user arrives on
//! [`HostChannels::ui`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::actions::ExtensionAction;
use super::connection::{Connection, StartOptions};
use super::events::{EventName, ShutdownReason};
use super::link::lock;
use super::link::{CallCancels, Failure, Outputs};
use super::log::{DEFAULT_LOG_LIMIT, ExtensionLog};
use super::protocol::{FlagType, Hello, PROTOCOL_VERSION, ToolRegistration, line};
use super::render::{ItemRenderer, ToolRendering};
use super::source::{ExtensionSource, ResourceScope};
use super::state::{StateSource, StateSync};
use super::tool::{DEFAULT_CANCEL_GRACE, ExtensionTool};
use super::ui::UiRequest;
use crate::agent::AgentEventEncoder;
use crate::tools::Tool;

/// How pi is running (`hello.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMode {
    Interactive,
    Print,
    Json,
    Rpc,
}

impl HostMode {
    pub fn as_str(self) -> &'static str {
        match self {
            HostMode::Interactive => "interactive",
            HostMode::Print => "print",
            HostMode::Json => "json",
            HostMode::Rpc => "rpc",
        }
    }
}

/// Settings of a host.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    pub mode: HostMode,
    /// Whether someone answers UI dialogs (interactive and RPC modes).
    pub has_ui: bool,
    pub session_file: Option<PathBuf>,
    pub session_id: Option<String>,
    /// Command-line flags pi did not know (`Args::unknown_flags`).
    pub cli_flags: Vec<(String, Option<String>)>,
    /// Names of the built-in tools (an extension tool with such a name is reported).
    pub builtin_tools: Vec<String>,
    /// Default time an extension has to answer an event.
    pub event_timeout: Duration,
    /// Time an extension has to send `register` after `hello`.
    pub handshake_timeout: Duration,
    /// Time an extension has to exit after its stdin is closed.
    pub shutdown_grace: Duration,
    /// Time a cancelled tool call waits for the extension's answer.
    pub tool_cancel_grace: Duration,
    /// Size at which `extensions.log` is rotated.
    pub log_limit: u64,
}

impl LoadOptions {
    pub fn new(cwd: &Path, agent_dir: &Path, mode: HostMode, has_ui: bool) -> LoadOptions {
        LoadOptions {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            mode,
            has_ui,
            session_file: None,
            session_id: None,
            cli_flags: Vec::new(),
            builtin_tools: ["read", "bash", "edit", "write", "grep", "find", "ls"]
                .map(String::from)
                .to_vec(),
            event_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(2),
            tool_cancel_grace: DEFAULT_CANCEL_GRACE,
            log_limit: DEFAULT_LOG_LIMIT,
        }
    }
}

/// An extension that could not be loaded, or a registration conflict (pi's load
/// `errors`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: PathBuf,
    pub error: String,
    /// The extension did not load at all (pi stops starting up on these); `false` for
    /// registration problems of a loaded extension (conflicts, unknown event names).
    pub fatal: bool,
}

/// A loaded extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionInfo {
    pub path: PathBuf,
    /// Where it was found (`-e`, settings or an extensions folder).
    pub scope: ResourceScope,
    /// `register.name`, or the file name.
    pub name: String,
    /// The events it subscribed to.
    pub events: Vec<EventName>,
    /// False once it crashed, broke the protocol or was shut down.
    pub running: bool,
}

/// A keyboard shortcut registered by an extension (pi's `registerShortcut`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortcutInfo {
    /// pi's key id, lower case (`ctrl+shift+p`).
    pub key: String,
    pub description: Option<String>,
    pub extension_path: PathBuf,
}

/// A slash command registered by an extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandInfo {
    /// What the user types after `/` (the name, or `name:N` when several extensions
    /// register the same name, as in pi).
    pub invocation_name: String,
    pub name: String,
    pub description: Option<String>,
    pub extension_path: PathBuf,
    /// Where the extension was found (RPC `get_commands` reports it).
    pub scope: ResourceScope,
    /// The extension completes the command's arguments ([`ExtensionHost::complete_arguments`]).
    pub argument_completions: bool,
}

/// A command-line flag registered by an extension.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagInfo {
    pub name: String,
    pub kind: FlagType,
    pub description: Option<String>,
    pub default: Option<Value>,
    pub extension_path: PathBuf,
}

/// Why `run_command` did not run a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandError {
    /// No extension registered this command.
    Unknown(String),
    /// The extension that registered it is not running.
    NotRunning(String),
    /// The command ran and failed (already reported as an extension error).
    Failed(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandError::Unknown(name) => write!(f, "Unknown command: /{name}"),
            CommandError::NotRunning(name) => {
                write!(f, "The extension providing /{name} is not running")
            }
            CommandError::Failed(error) => write!(f, "Command failed: {error}"),
        }
    }
}

impl std::error::Error for CommandError {}

/// The receiving ends the session listens on.
pub struct HostChannels {
    pub actions: mpsc::UnboundedReceiver<ExtensionAction>,
    pub ui: mpsc::UnboundedReceiver<UiRequest>,
}

struct CommandEntry {
    info: CommandInfo,
    connection: Arc<Connection>,
}

pub(crate) struct HostInner {
    pub(crate) connections: Vec<Arc<Connection>>,
    /// Registered at load, then by `register_tool` at any time.
    tools: Mutex<Vec<Arc<ExtensionTool>>>,
    commands: Vec<CommandEntry>,
    flags: Vec<FlagInfo>,
    errors: Vec<LoadError>,
    /// The part of `errors` from starting the extensions (kept for [`HostParts`]).
    pub(crate) start_errors: Vec<LoadError>,
    pub(crate) options: LoadOptions,
    /// Where the connections deliver (new connections of the same host share it).
    pub(crate) outputs: Outputs,
    pub(crate) turn_index: AtomicU64,
    pub(crate) encoder: Mutex<AgentEventEncoder>,
    shut_down: AtomicBool,
    /// Extensions [`ExtensionHost::shutdown`] leaves running (the one whose command
    /// asked for a reload, until it has its answer).
    held: Mutex<Vec<PathBuf>>,
    pub(crate) log: Arc<ExtensionLog>,
    /// The session file and id `session_start` reports (they change with `/new`,
    /// `/resume` and `/fork`).
    pub(crate) session: Mutex<(Option<PathBuf>, Option<String>)>,
    /// The session state sent to the extensions (`state.rs`).
    pub(crate) state: Arc<StateSync>,
    pub(crate) call_cancels: Arc<CallCancels>,
    /// This host's id in the table of APIs streamed by extensions
    /// (`ai::providers::external`).
    pub(crate) stream_owner: u64,
}

/// The running extensions of a session. Cheap to clone; all clones share the processes.
#[derive(Clone)]
pub struct ExtensionHost {
    pub(crate) inner: Arc<HostInner>,
}

fn hello_flags(flags: &[(String, Option<String>)]) -> BTreeMap<String, Value> {
    flags
        .iter()
        .map(|(name, value)| {
            let v = match value {
                Some(v) => Value::String(v.clone()),
                None => Value::Bool(true),
            };
            (name.clone(), v)
        })
        .collect()
}

impl ExtensionHost {
    /// Starts every extension (all at once), waits for their registrations and keeps
    /// those that registered, in the given order. Failures end up in
    /// [`ExtensionHost::load_errors`]; they never fail the load.
    pub async fn load(
        sources: Vec<ExtensionSource>,
        options: LoadOptions,
    ) -> (ExtensionHost, HostChannels) {
        let (actions_tx, actions_rx) = mpsc::unbounded_channel();
        let (ui_tx, ui_rx) = mpsc::unbounded_channel();
        let log = Arc::new(ExtensionLog::new(
            options.agent_dir.join("extensions.log"),
            options.log_limit,
        ));
        let outputs = Outputs {
            actions: actions_tx,
            ui: ui_tx,
            has_ui: options.has_ui,
            cwd: options.cwd.clone(),
            log,
            ui_counter: Arc::new(AtomicU64::new(0)),
            state: Arc::new(StateSync::default()),
            call_cancels: Arc::new(CallCancels::default()),
        };
        let (connections, start_errors) = start_connections(&sources, &options, &outputs).await;
        let parts = HostParts {
            connections,
            start_errors,
            options,
            outputs,
            stream_owner: super::provider_stream::next_owner(),
        };
        (
            assemble(parts),
            HostChannels {
                actions: actions_rx,
                ui: ui_rx,
            },
        )
    }

    /// A host with no extensions (what `--no-extensions` without `-e` gives).
    pub async fn empty(options: LoadOptions) -> (ExtensionHost, HostChannels) {
        ExtensionHost::load(Vec::new(), options).await
    }

    /// Extensions that failed to load, and registration conflicts.
    pub fn load_errors(&self) -> &[LoadError] {
        &self.inner.errors
    }

    /// The loaded extensions, in load order.
    pub fn extensions(&self) -> Vec<ExtensionInfo> {
        self.inner
            .connections
            .iter()
            .map(|c| ExtensionInfo {
                path: c.path.clone(),
                scope: c.scope,
                name: c.name.clone(),
                events: c.events.iter().copied().collect(),
                running: c.is_alive(),
            })
            .collect()
    }

    /// Whether the extension at `path` is still running.
    pub fn is_running(&self, path: &Path) -> bool {
        self.inner
            .connections
            .iter()
            .any(|c| c.path == path && c.is_alive())
    }

    /// Whether any running extension subscribed to `event`.
    pub fn has_subscribers(&self, event: EventName) -> bool {
        self.inner.connections.iter().any(|c| c.subscribes(event))
    }

    /// The extension tools (first registration of a name wins).
    pub fn tools(&self) -> Vec<Arc<ExtensionTool>> {
        lock(&self.inner.tools).clone()
    }

    /// The extension tools as agent tools.
    pub fn agent_tools(&self) -> Vec<Arc<dyn Tool>> {
        lock(&self.inner.tools)
            .iter()
            .map(|t| t.clone() as Arc<dyn Tool>)
            .collect()
    }

    /// The extension that draws custom messages of `custom_type` (pi's
    /// `registerMessageRenderer`; the first extension that registered it).
    pub fn message_renderer(&self, custom_type: &str) -> Option<ItemRenderer> {
        self.inner
            .connections
            .iter()
            .find(|c| c.is_alive() && c.renders_messages(custom_type))
            .map(|c| ItemRenderer::new(c.clone(), ToolRendering::default()))
    }

    /// The extension that draws the box of tool `name` (its `renderCall` /
    /// `renderResult`), if any.
    pub fn tool_renderer(&self, name: &str) -> Option<ItemRenderer> {
        lock(&self.inner.tools)
            .iter()
            .find(|t| t.name() == name)
            .and_then(|t| t.renderer())
            .filter(ItemRenderer::is_alive)
    }

    /// Adds a tool an extension registered after loading (pi's `registerTool` at any
    /// time). A tool of the same extension with that name is replaced; one of another
    /// extension keeps its name (`Err` says so).
    pub fn register_tool(
        &self,
        extension_path: &Path,
        spec: ToolRegistration,
    ) -> Result<Arc<ExtensionTool>, String> {
        let conn = self
            .inner
            .connections
            .iter()
            .find(|c| c.path == extension_path && c.is_alive())
            .ok_or_else(|| "the extension is not running".to_string())?;
        let mut tools = lock(&self.inner.tools);
        if let Some(owner) = tools
            .iter()
            .find(|t| t.name() == spec.name && t.extension_path() != extension_path)
        {
            return Err(format!(
                "Tool \"{}\" conflicts with {}",
                spec.name,
                owner.extension_path().display()
            ));
        }
        tools.retain(|t| t.name() != spec.name);
        let tool = Arc::new(ExtensionTool::new(
            conn.clone(),
            spec,
            self.inner.options.tool_cancel_grace,
        ));
        tools.push(tool.clone());
        Ok(tool)
    }

    /// Where the session state the extensions read comes from (see `state.rs`); `None`
    /// stops sending it.
    pub fn set_state_source(&self, source: Option<StateSource>) {
        self.inner.state.set_source(source);
    }

    /// Reads the session state again; what changed reaches each extension before the
    /// next line it is sent.
    pub fn refresh_state(&self) {
        self.inner.state.refresh();
    }

    /// Answers an extension's `call` request (`Err`: the call failed with that message).
    pub fn answer_call(&self, extension_path: &Path, id: Value, result: Result<Value, String>) {
        self.refresh_state();
        let Some(conn) = self
            .inner
            .connections
            .iter()
            .find(|c| c.path == extension_path)
        else {
            return;
        };
        let message = match result {
            Ok(result) => json!({"type": "response", "id": id, "result": result}),
            Err(error) => json!({"type": "response", "id": id, "error": error}),
        };
        conn.send_line(line(&message));
    }

    /// Sends a line to the extension at `path` (false: it is not running).
    pub(crate) fn send_to(&self, path: &Path, message: &Value) -> bool {
        self.inner
            .connections
            .iter()
            .find(|c| c.path == path)
            .is_some_and(|c| c.send_line(line(message)))
    }

    /// Cancellation of the `call`s extensions may abandon (`cancel_call`).
    pub(crate) fn call_cancels(&self) -> &CallCancels {
        &self.inner.call_cancels
    }

    /// pi's `registerProvider` config with `streamSimple` (the host marks it `true`):
    /// requests for its `api` are streamed by this extension from now on.
    fn apply_js_provider(&self, conn: &Arc<Connection>, name: &str, config: &Value) {
        if let Some(label) = config
            .get("oauth")
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
        {
            crate::ai::oauth::external::register(
                name,
                self.inner.stream_owner,
                Arc::new(super::oauth_bridge::ExtensionOAuth::new(conn, name, label)),
            );
        }
        if config.get("streamSimple").and_then(Value::as_bool) != Some(true) {
            return;
        }
        let Some(api) = config.get("api").and_then(Value::as_str) else {
            return;
        };
        crate::ai::providers::external::register(
            api,
            self.inner.stream_owner,
            Arc::new(super::provider_stream::ExtensionStreamer::new(conn)),
        );
    }

    /// A provider registered after loading by the extension at `path` (its config as
    /// in `register.providers`): its `streamSimple` takes effect here, the models in the
    /// caller's registry.
    pub(crate) fn register_js_provider(&self, path: &Path, name: &str, config: &Value) {
        if let Some(conn) = self.inner.connections.iter().find(|c| c.path == path) {
            self.apply_js_provider(conn, name, config);
        }
    }

    /// `unregisterProvider(name)`: its sign-in goes, and `api` (what its `streamSimple`
    /// served) is no longer streamed by the extension.
    pub(crate) fn unregister_js_provider(&self, name: &str, api: Option<&str>) {
        crate::ai::oauth::external::unregister(name, self.inner.stream_owner);
        if let Some(api) = api {
            crate::ai::providers::external::unregister(api, self.inner.stream_owner);
        }
    }

    /// pi's `pi.events.emit` across extensions: every other running extension that
    /// registered with `"state": true` gets `{"type":"bus","channel":…,"data":…}` (the
    /// sender has delivered it to its own handlers already).
    pub fn emit_bus(&self, from: &Path, channel: &str, data: Option<Value>) {
        let message = line(&json!({"type": "bus", "channel": channel, "data": data}));
        let listeners = self
            .inner
            .connections
            .iter()
            .filter(|c| c.path != from && c.wants_state());
        for conn in listeners {
            conn.send_line(message.clone());
        }
    }

    /// The slash commands, in load order.
    pub fn commands(&self) -> Vec<CommandInfo> {
        self.inner.commands.iter().map(|c| c.info.clone()).collect()
    }

    /// Whether `/name` is an extension command (the session runs those before anything
    /// else, even while the agent works).
    pub fn has_command(&self, invocation_name: &str) -> bool {
        self.inner
            .commands
            .iter()
            .any(|c| c.info.invocation_name == invocation_name)
    }

    /// The model providers the extensions registered while loading, in load order, each
    /// with the extension's path (for errors).
    pub fn providers(&self) -> Vec<(PathBuf, crate::extensions::protocol::ProviderRegistration)> {
        self.inner
            .connections
            .iter()
            .flat_map(|c| {
                c.registration
                    .providers
                    .iter()
                    .map(|p| (c.path.clone(), p.clone()))
            })
            .collect()
    }

    /// The registered command-line flags (first registration of a name wins).
    pub fn flags(&self) -> &[FlagInfo] {
        &self.inner.flags
    }

    /// The value of a registered flag: from the command line if given there (a boolean
    /// flag given bare is `true`; `--flag=false` is `false`), else its default.
    pub fn flag_value(&self, name: &str) -> Option<Value> {
        let flag = self.inner.flags.iter().find(|f| f.name == name)?;
        let given = self
            .inner
            .options
            .cli_flags
            .iter()
            .rev()
            .find(|(n, _)| n == name);
        match (given, flag.kind) {
            (Some((_, None)), FlagType::Boolean) => Some(Value::Bool(true)),
            (Some((_, Some(v))), FlagType::Boolean) => Some(Value::Bool(v != "false")),
            (Some((_, Some(v))), FlagType::String) => Some(Value::String(v.clone())),
            (Some((_, None)), FlagType::String) => Some(Value::String(String::new())),
            (None, _) => flag.default.clone(),
        }
    }

    /// The keyboard shortcuts, in load order (pi: when two extensions register the same
    /// key, the later one is used).
    pub fn shortcuts(&self) -> Vec<ShortcutInfo> {
        let mut out: Vec<ShortcutInfo> = Vec::new();
        for connection in &self.inner.connections {
            for shortcut in &connection.registration.shortcuts {
                let key = shortcut.key.to_lowercase();
                out.retain(|s| s.key != key);
                out.push(ShortcutInfo {
                    key,
                    description: shortcut.description.clone(),
                    extension_path: connection.path.clone(),
                });
            }
        }
        out
    }

    /// Runs the handler of shortcut `key` (as [`ExtensionHost::shortcuts`] lists it).
    /// No timeout: the handler may wait for the user.
    pub async fn run_shortcut(&self, key: &str) -> Result<(), CommandError> {
        let Some(connection) = self.inner.connections.iter().rev().find(|c| {
            c.registration
                .shortcuts
                .iter()
                .any(|s| s.key.to_lowercase() == key)
        }) else {
            return Err(CommandError::Unknown(key.to_string()));
        };
        let label = format!("shortcut {key}");
        let reply = connection
            .request(&label, None, None, |id| {
                line(&json!({"type": "shortcut", "id": id, "key": key}))
            })
            .await;
        match reply {
            Ok(_) => Ok(()),
            // The front end shows the error (pi: "Shortcut handler error: …").
            Err(Failure::Handler(error)) | Err(Failure::Gone(error)) => {
                Err(CommandError::Failed(error))
            }
            Err(Failure::NotRunning) | Err(Failure::TimedOut(_)) | Err(Failure::Cancelled) => {
                Err(CommandError::NotRunning(key.to_string()))
            }
        }
    }

    /// Asks command `/invocation_name`'s `getArgumentCompletions(prefix)` for its items
    /// (`[{value, label, description?}]`); `None` when it has none, fails or does not
    /// answer within `timeout`.
    pub async fn complete_arguments(
        &self,
        invocation_name: &str,
        prefix: &str,
        timeout: Duration,
    ) -> Option<Value> {
        let entry =
            self.inner.commands.iter().find(|c| {
                c.info.invocation_name == invocation_name && c.info.argument_completions
            })?;
        let name = entry.info.name.clone();
        let label = format!("argument completions of /{name}");
        let reply = entry
            .connection
            .request(&label, Some(timeout), None, |id| {
                line(&json!({"type": "complete_arguments", "id": id, "name": name, "prefix": prefix}))
            })
            .await;
        reply.ok().flatten().filter(|v| !v.is_null())
    }

    /// The running node-host extension loaded from `path`, if any.
    fn live_node_module(&self, path: &Path) -> Option<&Arc<Connection>> {
        self.inner
            .connections
            .iter()
            .find(|c| c.path == path && c.node_module && c.is_alive())
    }

    /// Runs the autocomplete providers extension `path` added (`ctx.ui.addAutocompleteProvider`)
    /// over `query` (`{lines, cursorLine, cursorCol, force, base}`, `base`: the suggestions
    /// so far, what their `current.getSuggestions` returns). The answer is the chain's
    /// suggestions (`{items, prefix}` or null); `None` when the extension fails or does not
    /// answer within `timeout`.
    pub async fn autocomplete(
        &self,
        path: &Path,
        query: &Value,
        timeout: Duration,
    ) -> Option<Value> {
        let connection = self.live_node_module(path)?;
        let reply = connection
            .request("autocomplete", Some(timeout), None, |id| {
                let mut message = json!({"type": "autocomplete", "id": id});
                if let (Value::Object(target), Value::Object(fields)) = (&mut message, query) {
                    for (key, value) in fields {
                        target.insert(key.clone(), value.clone());
                    }
                }
                line(&message)
            })
            .await;
        reply.ok().map(|value| value.unwrap_or(Value::Null))
    }

    /// Passes raw terminal input `data` through the `ctx.ui.onTerminalInput` listeners of
    /// extension `path`: `{"consume": true}`, `{"data": "…"}` (what goes on), or `None`
    /// when it failed or did not answer within `timeout` (the input goes on unchanged).
    pub async fn terminal_input(
        &self,
        path: &Path,
        data: &str,
        timeout: Duration,
    ) -> Option<Value> {
        let connection = self.live_node_module(path)?;
        let reply = connection
            .request("terminal input", Some(timeout), None, |id| {
                line(&json!({"type": "terminal_input", "id": id, "data": data}))
            })
            .await;
        reply.ok().flatten()
    }

    /// Runs `/name args`. Commands have no timeout (they may wait for the user).
    pub async fn run_command(&self, invocation_name: &str, args: &str) -> Result<(), CommandError> {
        let Some(entry) = self
            .inner
            .commands
            .iter()
            .find(|c| c.info.invocation_name == invocation_name)
        else {
            return Err(CommandError::Unknown(invocation_name.to_string()));
        };
        let conn = &entry.connection;
        let label = format!("command /{}", entry.info.name);
        let reply = conn
            .request(&label, None, None, |id| {
                line(&json!({"type": "command", "id": id, "name": entry.info.name, "args": args}))
            })
            .await;
        match reply {
            Ok(_) => Ok(()),
            Err(Failure::Handler(error)) => {
                conn.report(&label, &error);
                Err(CommandError::Failed(error))
            }
            Err(Failure::Gone(reason)) => Err(CommandError::Failed(reason)),
            Err(Failure::NotRunning) | Err(Failure::TimedOut(_)) | Err(Failure::Cancelled) => {
                Err(CommandError::NotRunning(invocation_name.to_string()))
            }
        }
    }

    /// The session the extensions work on from now on (after `/new`, `/resume`, `/fork`);
    /// the next `session_start` reports it.
    pub fn set_session(&self, session_file: Option<&Path>, session_id: Option<&str>) {
        let mut current = self.inner.session.lock().unwrap_or_else(|e| e.into_inner());
        *current = (
            session_file.map(Path::to_path_buf),
            session_id.map(str::to_string),
        );
    }

    /// Sends `session_shutdown` to its subscribers and waits for their answers (within
    /// their timeouts), without stopping the extensions: a session switch is followed by
    /// a `session_start` to the same processes.
    pub async fn session_shutdown(
        &self,
        reason: ShutdownReason,
        target_session_file: Option<&Path>,
    ) {
        if self
            .inner
            .shut_down
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let mut event = json!({"type": "session_shutdown", "reason": reason});
        if let Some(target) = target_session_file {
            event["targetSessionFile"] = Value::from(target.display().to_string());
        }
        self.broadcast_awaited(EventName::SessionShutdown, &event.to_string())
            .await;
    }

    /// Sends pi-rs's terminal UI state (`ui_state`: width, theme colours, footer data) to
    /// the extensions that run in the node host, which re-render their live footer,
    /// header and widget components with it. Nothing waits for the answer: the new lines
    /// arrive as `ui` notices.
    pub fn send_ui_state(&self, state: &Value) {
        let mut message = json!({"type": "ui_state"});
        if let (Value::Object(target), Value::Object(fields)) = (&mut message, state) {
            for (key, value) in fields {
                target.insert(key.clone(), value.clone());
            }
        }
        let text = line(&message);
        for connection in &self.inner.connections {
            if connection.node_module && connection.is_alive() {
                connection.send_line(text.clone());
            }
        }
    }

    /// Whether [`ExtensionHost::shutdown`] ran.
    pub fn is_shut_down(&self) -> bool {
        self.inner
            .shut_down
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Sends `session_shutdown` to its subscribers (waiting for their answers, within
    /// their timeouts), closes every extension's stdin, and kills those that have not
    /// exited after the grace period. Later calls do nothing.
    pub async fn shutdown(&self, reason: ShutdownReason, target_session_file: Option<&Path>) {
        if self.is_shut_down() {
            return;
        }
        self.session_shutdown(reason, target_session_file).await;
        if self
            .inner
            .shut_down
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        crate::ai::providers::external::unregister_owner(self.inner.stream_owner);
        crate::ai::oauth::external::unregister_owner(self.inner.stream_owner);
        let grace = self.inner.options.shutdown_grace;
        let held = lock(&self.inner.held).clone();
        let closing = self
            .inner
            .connections
            .iter()
            .filter(|c| !held.contains(&c.path));
        futures::future::join_all(closing.map(|c| c.close(grace))).await;
        self.inner.log.line("host", "all extensions shut down");
    }

    /// Keeps the extension of `path` running through a [`ExtensionHost::shutdown`]
    /// (it gets `session_shutdown` all the same) until [`ExtensionHost::release_held`].
    pub fn hold_open(&self, path: &Path) {
        lock(&self.inner.held).push(path.to_path_buf());
    }

    /// Stops the extensions [`ExtensionHost::hold_open`] kept running, once the shutdown
    /// happened: each may first finish what pi-rs asked of it (its command), within the
    /// shutdown grace time.
    pub async fn release_held(&self) {
        let held = std::mem::take(&mut *lock(&self.inner.held));
        if !self.is_shut_down() {
            return;
        }
        let grace = self.inner.options.shutdown_grace;
        let closing = self
            .inner
            .connections
            .iter()
            .filter(|c| held.contains(&c.path))
            .map(|c| async move {
                let until = tokio::time::Instant::now() + grace;
                while c.pending_requests() > 0 && tokio::time::Instant::now() < until {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                c.close(grace).await;
            });
        futures::future::join_all(closing).await;
    }
}

/// Starts the extensions of `sources` (all at once) and waits for their registrations;
/// those that failed are left out and reported in the errors.
pub(crate) async fn start_connections(
    sources: &[ExtensionSource],
    options: &LoadOptions,
    outputs: &Outputs,
) -> (Vec<Arc<Connection>>, Vec<LoadError>) {
    let flags = hello_flags(&options.cli_flags);
    let builtin: Vec<&str> = options.builtin_tools.iter().map(String::as_str).collect();
    let starts = sources.iter().map(|source| {
        let hello = Hello {
            kind: "hello",
            protocol_version: PROTOCOL_VERSION,
            pi_version: env!("CARGO_PKG_VERSION").to_string(),
            extension_path: source.path.display().to_string(),
            cwd: options.cwd.display().to_string(),
            agent_dir: options.agent_dir.display().to_string(),
            session_file: options
                .session_file
                .as_ref()
                .map(|p| p.display().to_string()),
            session_id: options.session_id.clone(),
            mode: options.mode.as_str(),
            has_ui: options.has_ui,
            flags: flags.clone(),
            builtin_tools: source
                .launch
                .node_module
                .then(|| super::builtin_tools::definitions(&options.cwd)),
        };
        Connection::start(
            source,
            StartOptions {
                hello,
                out: outputs.clone(),
                handshake_timeout: options.handshake_timeout,
                default_timeout: options.event_timeout,
                known_tools: &builtin,
            },
        )
    });
    let results = futures::future::join_all(starts).await;

    let mut errors = Vec::new();
    let mut connections = Vec::new();
    for (source, result) in sources.iter().zip(results) {
        match result {
            Ok(started) => {
                for warning in started.warnings {
                    errors.push(LoadError {
                        path: source.path.clone(),
                        fatal: false,
                        error: warning,
                    });
                }
                connections.push(Arc::new(started.connection));
            }
            Err(error) => {
                outputs.log.line(
                    "host",
                    &format!("{} not loaded: {error}", source.path.display()),
                );
                errors.push(LoadError {
                    path: source.path.clone(),
                    fatal: true,
                    error: format!("Failed to load extension: {error}"),
                });
            }
        }
    }
    (connections, errors)
}

/// What a host is made of before its registrations are combined.
pub(crate) struct HostParts {
    /// The running extensions, in load order.
    pub connections: Vec<Arc<Connection>>,
    /// Problems starting them (registration conflicts are found by [`assemble`]).
    pub start_errors: Vec<LoadError>,
    pub options: LoadOptions,
    pub outputs: Outputs,
    pub stream_owner: u64,
}

/// The host of `parts`: the tools, flags and commands of its extensions (the first
/// registration of a tool or flag wins; the others are reported), and the providers
/// they stream.
pub(crate) fn assemble(parts: HostParts) -> ExtensionHost {
    let HostParts {
        connections,
        start_errors,
        options,
        outputs,
        stream_owner,
    } = parts;
    let mut errors = start_errors.clone();
    let mut tools: Vec<Arc<ExtensionTool>> = Vec::new();
    let mut flags: Vec<FlagInfo> = Vec::new();
    let mut commands: Vec<CommandEntry> = Vec::new();
    for conn in &connections {
        for spec in &conn.registration.tools {
            if let Some(owner) = tools.iter().find(|t| t.name() == spec.name) {
                errors.push(LoadError {
                    path: conn.path.clone(),
                    fatal: false,
                    error: format!(
                        "Tool \"{}\" conflicts with {}",
                        spec.name,
                        owner.extension_path().display()
                    ),
                });
                continue;
            }
            tools.push(Arc::new(ExtensionTool::new(
                conn.clone(),
                spec.clone(),
                options.tool_cancel_grace,
            )));
        }
        for flag in &conn.registration.flags {
            if let Some(owner) = flags.iter().find(|f| f.name == flag.name) {
                errors.push(LoadError {
                    path: conn.path.clone(),
                    fatal: false,
                    error: format!(
                        "Flag \"--{}\" conflicts with {}",
                        flag.name,
                        owner.extension_path.display()
                    ),
                });
                continue;
            }
            flags.push(FlagInfo {
                name: flag.name.clone(),
                kind: flag.kind,
                description: flag.description.clone(),
                default: flag.default.clone(),
                extension_path: conn.path.clone(),
            });
        }
        for command in &conn.registration.commands {
            commands.push(CommandEntry {
                info: CommandInfo {
                    invocation_name: command.name.clone(),
                    name: command.name.clone(),
                    description: command.description.clone(),
                    extension_path: conn.path.clone(),
                    scope: conn.scope,
                    argument_completions: command.argument_completions,
                },
                connection: conn.clone(),
            });
        }
    }
    assign_invocation_names(&mut commands);

    let session = Mutex::new((options.session_file.clone(), options.session_id.clone()));
    let host = ExtensionHost {
        inner: Arc::new(HostInner {
            session,
            connections,
            tools: Mutex::new(tools),
            commands,
            flags,
            errors,
            start_errors,
            options,
            turn_index: AtomicU64::new(0),
            encoder: Mutex::new(AgentEventEncoder::new()),
            shut_down: AtomicBool::new(false),
            held: Mutex::new(Vec::new()),
            log: outputs.log.clone(),
            state: outputs.state.clone(),
            call_cancels: outputs.call_cancels.clone(),
            outputs,
            stream_owner,
        }),
    };
    for conn in &host.inner.connections {
        for provider in &conn.registration.providers {
            host.apply_js_provider(conn, &provider.name, &provider.config);
        }
    }
    host
}

/// pi's rule: a command name registered once keeps its name; when several extensions
/// register it, each gets `name:N` (N counting that name's registrations in load order),
/// skipping names already taken.
fn invocation_names(names: &[&str]) -> Vec<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut taken = std::collections::BTreeSet::new();
    names
        .iter()
        .map(|name| {
            let occurrence = {
                let n = seen.entry(name).or_default();
                *n += 1;
                *n
            };
            let mut invocation = if counts.get(name).copied().unwrap_or(0) > 1 {
                format!("{name}:{occurrence}")
            } else {
                name.to_string()
            };
            let mut suffix = occurrence;
            while taken.contains(&invocation) {
                suffix += 1;
                invocation = format!("{name}:{suffix}");
            }
            taken.insert(invocation.clone());
            invocation
        })
        .collect()
}

fn assign_invocation_names(commands: &mut [CommandEntry]) {
    let names: Vec<String> = commands.iter().map(|c| c.info.name.clone()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    for (command, invocation) in commands.iter_mut().zip(invocation_names(&refs)) {
        command.info.invocation_name = invocation;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_command_names_are_numbered_like_pi() {
        assert_eq!(invocation_names(&["a", "b", "a"]), ["a:1", "b", "a:2"]);
        assert_eq!(
            invocation_names(&["review:2", "review", "review"]),
            ["review:2", "review:1", "review:3"]
        );
        assert!(invocation_names(&[]).is_empty());
    }

    #[test]
    fn flags_from_the_command_line_become_values() {
        assert_eq!(
            hello_flags(&[("plan".into(), None), ("depth".into(), Some("3".into()))]),
            BTreeMap::from([
                ("depth".to_string(), Value::from("3")),
                ("plan".to_string(), Value::Bool(true))
            ])
        );
    }
}
