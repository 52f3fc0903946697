//! The `pi` binary: parse arguments, answer the early exits, run the chosen mode on the
//! runtime, and map errors and signals to exit codes. Everything else is in `cli`
//! (deciding what to run) and `core::factory` (building the session).

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use pi::cli::args::{self, Args, OutputMode};
use pi::cli::launch::{self, Launch};
use pi::core::agent_session::AgentSession;
use pi::core::factory::{EXTENSION_SHUTDOWN_LIMIT, StartupError};
use pi::core::paths::AgentPaths;

/// How long a signal waits for the aborted run to be recorded before exiting.
const ABORT_SETTLE_LIMIT: Duration = Duration::from_millis(1000);

/// How long the exit waits for blocking tasks still running once the mode is done (a
/// stdin reader parked in `read`, a thread finishing a write): they are left behind after
/// that, never waited for.
const EXIT_WAIT: Duration = Duration::from_millis(5);

fn main() -> ExitCode {
    // The node host's loader asks this binary to compile a TypeScript module.
    if let Some(file) = std::env::var_os(pi::extensions::typescript::TRANSPILE_ENV) {
        return transpile(std::path::Path::new(&file));
    }
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    // `--version` answers before anything else is set up.
    if argv.len() == 1 && (argv[0] == "--version" || argv[0] == "-v") {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    // pi's commands are recognised by the first argument alone, before any flag; a
    // command word never becomes a prompt.
    let raw: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(code) = subcommand(&raw) {
        return ExitCode::from(code);
    }
    let args = match args::parse(argv) {
        Ok(args) => args,
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            eprintln!("Error: {}", first.trim_start_matches("error: "));
            return ExitCode::from(1);
        }
    };
    // As pi: every problem with the command line is reported, then pi exits.
    if !args.errors.is_empty() {
        for error in &args.errors {
            eprintln!("Error: {error}");
        }
        return ExitCode::from(1);
    }
    if args.cli.version {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if args.cli.help {
        pi::cli::help::print_help();
        return ExitCode::SUCCESS;
    }
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `pi install / remove / uninstall / update / list / config / auth / mcp …`, when `raw`
/// is one of them: runs it and returns its exit code.
fn subcommand(raw: &[String]) -> Option<u8> {
    match raw.first().map(String::as_str)? {
        "auth" => Some(pi::cli::auth::run_auth_command(
            &raw[1..],
            &AgentPaths::from_env().agent_dir,
        )),
        "mcp" => Some(pi::cli::mcp::run_mcp_command(&raw[1..])),
        _ => package_command(raw),
    }
}

/// `pi install / remove / uninstall / update / list / config …`, when `raw` is one.
fn package_command(raw: &[String]) -> Option<u8> {
    let first = raw.first()?.as_str();
    if !["install", "remove", "uninstall", "update", "list", "config"].contains(&first) {
        return None;
    }
    let Ok(cwd) = std::env::current_dir() else {
        eprintln!("Error: cannot read the current directory");
        return Some(1);
    };
    let agent_dir = AgentPaths::from_env().agent_dir;
    if let Some(code) = pi::cli::packages::run_config_command(raw, &cwd, &agent_dir) {
        return Some(code);
    }
    pi::cli::packages::run_package_command(raw, &cwd, &agent_dir)
}

/// `PI_RS_TRANSPILE=<file>`: prints the file compiled to JavaScript, or the error.
fn transpile(file: &std::path::Path) -> ExitCode {
    use std::io::Write;
    match pi::extensions::typescript::transpile_file(file) {
        Ok(code) => match std::io::stdout().write_all(code.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(1),
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: Args) -> Result<u8, StartupError> {
    // As pi: checked before anything else, stdin belongs to the protocol in RPC mode.
    if args.mode == Some(OutputMode::Rpc) && !args.file_args.is_empty() {
        return Err(StartupError(
            "@file arguments are not supported in RPC mode".into(),
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| StartupError(format!("cannot read the current directory: {e}")))?;
    let paths = AgentPaths::from_env();
    // pi's start-up migration: a keybindings.json with old ids gets the new ones. A file
    // that cannot be rewritten still loads (the old ids keep working).
    let _ = pi::modes::interactive::keys::migrate_keybindings_file(
        &paths.agent_dir.join("keybindings.json"),
    );
    if let Some(search) = args.cli.list_models.clone() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| StartupError(format!("cannot start the runtime: {e}")))?;
        return rt.block_on(pi::cli::launch::list_models(&args, cwd, paths, &search));
    }
    if let Some(input) = &args.cli.export {
        // `pi --export in.jsonl [out.html]`: the optional output is the next argument.
        let out = args.messages.first().map(std::path::PathBuf::from);
        let path = pi::export::export_session_file(std::path::Path::new(input), out.as_deref())
            .map_err(|e| StartupError(e.to_string()))?;
        println!("Exported to: {}", path.display());
        return Ok(0);
    }

    let Some(launch) = launch::prepare(args, cwd, paths)? else {
        return Ok(0);
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| StartupError(format!("cannot start the runtime: {e}")))?;
    let code = rt.block_on(async {
        let code = run_mode(launch).await;
        // Kept Codex WebSockets get a close frame rather than a dropped connection.
        pi::ai::providers::codex_websocket::close_all().await;
        code
    });
    pi::tools::shell::kill_all_running();
    // The blocking stdin reader (RPC) may still be parked in a read: do not wait for it.
    rt.shutdown_timeout(EXIT_WAIT);
    code
}

/// Runs the mode to its end and returns the exit code.
async fn run_mode(launch: Launch) -> Result<u8, StartupError> {
    match launch {
        Launch::Print(print) => {
            let session = print.session().await?;
            tokio::spawn(exit_on_signal(session.clone()));
            Ok(print.run(session).await)
        }
        // RPC mode and the interactive UI handle signals themselves.
        Launch::Rpc(rpc) => rpc.run().await,
        Launch::Interactive(ui) => ui.run().await,
    }
}

/// SIGINT / SIGTERM / SIGHUP: stop the agent, kill running commands (they live in their
/// own process groups and would survive us) and exit with the conventional code.
async fn exit_on_signal(session: AgentSession) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
            _ = hup.recv() => 129,
        };
        session.abort();
        pi::tools::shell::kill_all_running();
        // The aborted answer is recorded once the run winds down (bounded: an abort ends
        // every automatic action within milliseconds).
        let _ = tokio::time::timeout(ABORT_SETTLE_LIMIT, session.wait_for_operation()).await;
        // Extensions get their `session_shutdown` and are stopped.
        let _ = tokio::time::timeout(EXTENSION_SHUTDOWN_LIMIT, session.shutdown()).await;
        std::process::exit(code);
    }
    #[cfg(not(unix))]
    {
        let _ = session;
    }
}
