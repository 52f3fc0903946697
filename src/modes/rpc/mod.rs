//! RPC mode (`pi --mode rpc`): pi's JSON-lines protocol on stdin/stdout, so a program can
//! drive the agent headless — every command and event of pi 1.6 with its exact response
//! shapes (pi 1.6's own `RpcClient` drives it in `tests/it/rpc_pi16.rs`), extension dialogs
//! as pi's `extension_ui_request` / `extension_ui_response`, plus pi-rs's tree extensions
//! (`get_tree_outline`, `navigate_tree`, `set_label`, `get_entry`, checkpoints).
//! The protocol is described for users in `docs/rpc.md`.
//!
//! Layout: `framing` (LF-only records in, one writer thread out), `protocol` (commands and
//! responses on the wire), `output` (events and responses in one order), `commands` (what
//! each command does), `core::command_list` (`get_commands`), `export` (`export_html`), `tree`
//! (the tree extensions), `extension_ui` (the dialog sub-protocol).
//!
//! Warnings about the session file come first, as `session_load_warning` events (also
//! after a `switch_session`).
//! Extensions get `session_start` once the output and the dialog channel are ready (a
//! handler may ask the client something); commands wait until it has been handled.
//! Lines are read as they come. `abort`, `abort_bash` and `abort_retry` act at once
//! (`abort` also cancels open extension dialogs, which a run may be waiting for);
//! every command (those included) then runs in arrival order, long work in the
//! background. When stdin ends (or SIGTERM, SIGHUP or SIGINT arrives), open dialogs are
//! cancelled, everything running is aborted, running shell commands are killed, what was
//! aborted is recorded, extensions get `session_shutdown` and are stopped, and the mode
//! returns exit code 0 (143, 129, 130). A second signal during that shutdown exits at
//! once.

mod commands;
mod export;
pub mod extension_ui;
pub mod framing;
pub mod output;
pub mod protocol;
mod tree;

use std::future::Future;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::AsyncRead;
use tokio::sync::mpsc;

use crate::core::agent_session::AgentSession;
use crate::extensions::SessionStartReason;
use commands::Rpc;
use extension_ui::ExtensionUi;
use framing::{LineReader, StdinReader, spawn_writer};
use output::RpcOutput;
use protocol::{Incoming, Request, RpcCommand, parse_line};

/// How long shutdown waits for aborted work to be written to the session file.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// How long shutdown waits for extensions to handle `session_shutdown` and exit.
const EXTENSIONS_SHUTDOWN_LIMIT: Duration = Duration::from_secs(5);

/// Runs RPC mode on the process's stdin and stdout until stdin ends (exit code 0) or a
/// SIGTERM, SIGHUP or SIGINT arrives (143, 129, 130). Returns the exit code.
pub async fn run_rpc(session: AgentSession) -> i32 {
    let stdin = match StdinReader::spawn() {
        Ok(stdin) => stdin,
        Err(e) => {
            eprintln!("Error: cannot start the RPC input thread: {e}");
            return 1;
        }
    };
    run_rpc_with(session, stdin, std::io::stdout(), termination_signal()).await
}

/// The exit code for the first termination signal. A second signal exits the process at
/// once with its code, whether the orderly shutdown began with a signal or with the end
/// of input (pi 1.6: a process manager often closes stdin and sends SIGTERM together, so
/// one signal during shutdown is not a request to skip it; a repeated one is). Never
/// completes where signals cannot be watched.
async fn termination_signal() -> i32 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hup), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        ) {
            let (first_tx, first) = tokio::sync::oneshot::channel();
            tokio::spawn(async move {
                let mut first_tx = Some(first_tx);
                loop {
                    let code = tokio::select! {
                        _ = term.recv() => 143,
                        _ = hup.recv() => 129,
                        _ = int.recv() => 130,
                    };
                    match first_tx.take() {
                        // The first one starts the orderly shutdown (or, after the end of
                        // input, changes nothing).
                        Some(tx) => {
                            let _ = tx.send(code);
                        }
                        // Shutdown is already under way: this one ends the process.
                        None => std::process::exit(code),
                    }
                }
            });
            if let Ok(code) = first.await {
                return code;
            }
        }
    }
    std::future::pending().await
}

/// Runs RPC mode on the given input and output until the input ends (exit code 0) or
/// `stop` completes (its exit code). Either way the same orderly shutdown follows.
/// Sends the extensions `session_start` first (call this instead of
/// [`AgentSession::start_extensions`]).
pub async fn run_rpc_with<R, W, S>(session: AgentSession, input: R, output: W, stop: S) -> i32
where
    R: AsyncRead + Unpin,
    W: Write + Send + 'static,
    S: Future<Output = i32>,
{
    let (writer, _writer_thread) = match spawn_writer(output) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("Error: cannot start the RPC output thread: {e}");
            return 1;
        }
    };
    let output = RpcOutput::new(session.subscribe(), writer);
    // What was odd about the session file, as `session_load_warning` events before
    // anything else.
    session.emit_load_warnings();
    let pump = tokio::spawn({
        let output = output.clone();
        async move { output.pump_events().await }
    });
    let rpc = Arc::new(Rpc::new(session.clone(), output.clone()));
    let ui = ExtensionUi::new(output.clone());
    let ui_forwarder = session
        .take_ui_requests()
        .map(|requests| tokio::spawn(ui.clone().forward(requests)));
    let (queue, mut queued) = mpsc::unbounded_channel::<Request>();
    // Commands queued or running in the executor (the extensions' startup counts as one).
    // When there are none, an instant command is answered right here: nothing sent before
    // it is still to run, so the order holds, and the answer saves a hand-over between
    // tasks.
    let in_flight = Arc::new(AtomicUsize::new(1));
    let executor = tokio::spawn({
        let rpc = rpc.clone();
        let session = session.clone();
        let in_flight = in_flight.clone();
        async move {
            // Commands wait for this, as in pi; the input is read meanwhile, so a
            // `session_start` handler's dialog can be answered.
            session.start_extensions(SessionStartReason::Startup).await;
            in_flight.fetch_sub(1, Ordering::AcqRel);
            while let Some(request) = queued.recv().await {
                rpc.execute(request).await;
                in_flight.fetch_sub(1, Ordering::AcqRel);
            }
        }
    });

    let mut reader = LineReader::new(input);
    let mut code = 0;
    tokio::pin!(stop);
    let shutdown = shutdown_when_idle(session.clone(), in_flight.clone());
    tokio::pin!(shutdown);
    loop {
        let line = tokio::select! {
            biased;
            signal_code = &mut stop => {
                code = signal_code;
                break;
            }
            () = &mut shutdown => break,
            line = reader.next_line() => line,
        };
        match line {
            Ok(Some(line)) => match parse_line(&line) {
                Incoming::Command(request) => {
                    rpc.act_on_arrival(&request.command);
                    if request.command == RpcCommand::Abort {
                        ui.cancel_open();
                    }
                    if request.command.is_instant() && in_flight.load(Ordering::Acquire) == 0 {
                        rpc.execute(request).await;
                    } else {
                        in_flight.fetch_add(1, Ordering::AcqRel);
                        let _ = queue.send(request);
                    }
                }
                Incoming::UiResponse(response) => ui.resolve(response),
                Incoming::Invalid(response) => output.respond(response),
            },
            Ok(None) => break,
            Err(e) => {
                eprintln!("Error: reading RPC commands from stdin failed: {e}");
                code = 1;
                break;
            }
        }
    }

    // End of input: nobody is left to answer dialogs. Stop what runs, let the commands
    // already read finish (a prompt among them starts and is stopped at once, as in pi),
    // then stop again.
    ui.close();
    session.abort();
    session.abort_bash();
    drop(queue);
    if tokio::time::timeout(SHUTDOWN_GRACE, executor)
        .await
        .is_err()
    {
        eprintln!("Warning: commands still waiting at shutdown were dropped");
    }
    session.abort();
    session.abort_bash();
    crate::tools::shell::kill_all_running();
    rpc.tasks().close();
    if tokio::time::timeout(SHUTDOWN_GRACE, rpc.tasks().wait())
        .await
        .is_err()
    {
        eprintln!("Warning: some work did not stop within {SHUTDOWN_GRACE:?} of the end of input");
    }
    // What the extensions do on `session_shutdown` is applied and its events written.
    if tokio::time::timeout(EXTENSIONS_SHUTDOWN_LIMIT, session.shutdown())
        .await
        .is_err()
    {
        eprintln!(
            "Warning: extensions did not finish shutting down within {EXTENSIONS_SHUTDOWN_LIMIT:?}"
        );
    }
    if let Some(forwarder) = ui_forwarder {
        forwarder.abort();
    }
    pump.abort();
    output.flush().await;
    code
}

/// Completes once an extension asked to quit (`ctx.shutdown()`) and no command is queued
/// or running and the agent is idle: pi defers the shutdown to the next idle state. The
/// caller then shuts down as at the end of input.
async fn shutdown_when_idle(session: AgentSession, in_flight: Arc<AtomicUsize>) {
    session.shutdown_requested().await;
    while in_flight.load(Ordering::Acquire) > 0 || session.is_streaming() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::model::ThinkingLevel;
    use crate::ai::models::ModelRegistry;
    use crate::core::agent_session::AgentSessionOptions;
    use crate::core::paths::AgentPaths;
    use crate::core::settings::Settings;
    use crate::session::SessionManager;

    #[derive(Clone, Default)]
    struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn session_without_model() -> AgentSession {
        let dir = std::env::temp_dir();
        AgentSession::new(AgentSessionOptions {
            cwd: dir.clone(),
            paths: AgentPaths::new(dir.join("pi-rs-rpc-test-agent-dir-unused")),
            settings: Settings::in_memory(serde_json::json!({})),
            registry: ModelRegistry::builtin_only(),
            session: SessionManager::in_memory(&dir),
            model: None,
            thinking: ThinkingLevel::Off,
            scoped_models: Vec::new(),
            tool_names: Vec::new(),
            extra_tools: Vec::new(),
            resources: Default::default(),
            hooks: None,
        })
    }

    #[tokio::test]
    async fn commands_are_answered_in_order_until_the_input_ends() {
        let input = concat!(
            "{\"id\":1,\"type\":\"get_last_assistant_text\"}\n",
            "{\"id\":2,\"type\":\"prompt\",\"message\":\"hi\"}\r\n",
            "{\"id\":3,\"type\":\"set_session_name\",\"name\":\"n\"}\n",
            "{\"id\":4,\"type\":\"get_fork_messages\"}"
        );
        let out = Captured::default();
        let code = run_rpc_with(
            session_without_model(),
            input.as_bytes(),
            out.clone(),
            std::future::pending(),
        )
        .await;
        assert_eq!(code, 0);
        let text = String::from_utf8(out.0.lock().unwrap().clone())
            .unwrap()
            .replace(env!("CARGO_MANIFEST_DIR"), "<pi-rs>");
        insta::assert_snapshot!(text, @r#"
        {"id":1,"type":"response","command":"get_last_assistant_text","success":true,"data":{"text":null}}
        {"id":2,"type":"response","command":"prompt","success":false,"error":"No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key. See:\n  <pi-rs>/docs/providers.md\n  <pi-rs>/docs/models.md"}
        {"type":"session_info_changed","name":"n"}
        {"id":3,"type":"response","command":"set_session_name","success":true}
        {"id":4,"type":"response","command":"get_fork_messages","success":true,"data":{"messages":[]}}
        "#);
    }

    #[tokio::test]
    async fn the_stop_future_ends_the_mode_with_its_exit_code() {
        let (_client, server) = tokio::io::duplex(64);
        let code = run_rpc_with(
            session_without_model(),
            server,
            Captured::default(),
            async { 143 },
        )
        .await;
        assert_eq!(code, 143);
    }
}
