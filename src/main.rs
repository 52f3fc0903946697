//! The `pi` binary: parse arguments, pick a mode, map errors to exit codes.

use std::ffi::OsString;
use std::process::ExitCode;

use pi::cli::args::{self, Args, OutputMode};
use pi::cli::files::{build_initial_message, process_file_args};
use pi::cli::resources::{ExtensionStartup, ResourceLoading};
use pi::cli::startup::{self, StartupError};
use pi::core::agent_session::AgentSession;
use pi::core::paths::AgentPaths;
use pi::core::settings::Settings;
use pi::extensions::{HostMode, SessionStartReason};
use pi::modes::print::{PrintOutput, PrintPrompt, run_print};

/// The interactive UI shows extensions' dialogs (it takes
/// `AgentSession::take_ui_requests()` once the session is loaded).
const TUI_ANSWERS_EXTENSION_UI: bool = true;

/// How long exiting waits for extensions to handle `session_shutdown` and stop.
const SHUTDOWN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// pi's package-manager subcommands, which do not apply to pi-rs.
const PACKAGE_COMMANDS: [&str; 6] = ["install", "remove", "uninstall", "update", "list", "config"];

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    // `--version` answers before anything else is set up.
    if argv.len() == 1 && (argv[0] == "--version" || argv[0] == "-v") {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let args = match args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            // clap prints help/version itself and exits with the right code.
            e.exit();
        }
    };
    if args.cli.version {
        println!("{}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    if let Some(first) = args.messages.first()
        && PACKAGE_COMMANDS.contains(&first.as_str())
        && args.messages.len() <= 3
        && args.file_args.is_empty()
        && !args.cli.print
    {
        eprintln!(
            "pi-rs does not manage pi packages (npm extensions). Extensions for pi-rs are \
executables in ~/.pi/agent/extensions/; see docs/extensions.md."
        );
        return ExitCode::from(1);
    }
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::from(1)
        }
    }
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

fn run(mut args: Args) -> Result<u8, StartupError> {
    // As pi: checked before anything else, stdin belongs to the protocol in RPC mode.
    if args.mode == Some(OutputMode::Rpc) && !args.file_args.is_empty() {
        return Err(StartupError(
            "@file arguments are not supported in RPC mode".into(),
        ));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| StartupError(format!("cannot read the current directory: {e}")))?;
    let paths = AgentPaths::from_env();

    if let Some(search) = args.cli.list_models.clone() {
        let registry = pi::ai::models::ModelRegistry::load(&paths.agent_dir);
        if let Some(e) = registry.error() {
            eprintln!("Warning: errors loading models.json:\n{e}");
        }
        print!(
            "{}",
            pi::cli::list_models::list_models(&registry, Some(&search))
        );
        return Ok(0);
    }

    if let Some(input) = args.cli.export.clone() {
        // `pi --export in.jsonl [out.html]`: the optional output is the next argument.
        let out = args.messages.first().map(std::path::PathBuf::from);
        return match pi::export::export_session_file(std::path::Path::new(&input), out.as_deref()) {
            Ok(path) => {
                println!("Exported to: {}", path.display());
                Ok(0)
            }
            Err(e) => Err(StartupError(e.to_string())),
        };
    }

    if args.mode == Some(OutputMode::Rpc) {
        return run_rpc_mode(&args, &cwd, paths);
    }
    let stdin = startup::read_piped_stdin();
    let print_mode = match args.mode {
        Some(OutputMode::Json) => Some(PrintOutput::Json),
        Some(OutputMode::Text) => Some(PrintOutput::Text),
        None if args.cli.print || stdin.is_some() => Some(PrintOutput::Text),
        // RPC mode has returned above.
        Some(OutputMode::Rpc) | None => None,
    };
    pi::core::timing::mark("arguments");
    let settings = Settings::load(&paths.agent_dir, &cwd);
    let session_dir = startup::session_dir_for(&args, &settings, &paths, &cwd);
    // `--resume` in the interactive UI shows its own picker; everything else is decided
    // (and asked, where pi asks) before the UI starts.
    let tui_resume = print_mode.is_none()
        && args.cli.resume
        && args.cli.fork.is_none()
        && args.cli.session.is_none()
        && !args.cli.no_session;
    let source = if tui_resume {
        startup::SessionSource::Create
    } else {
        match startup::resolve_session_source(&args, &session_dir, &paths, None)? {
            Some(source) => source,
            None => return Ok(0),
        }
    };
    let files = process_file_args(&args.file_args, &cwd, settings.image_auto_resize())
        .map_err(StartupError)?;
    let mut messages = std::mem::take(&mut args.messages);
    let initial = build_initial_message(stdin, &files, &mut messages);
    let mut prompts = Vec::new();
    if let Some(text) = initial {
        prompts.push(PrintPrompt {
            text,
            images: files.images,
        });
    }
    prompts.extend(messages.into_iter().map(|text| PrintPrompt {
        text,
        images: Vec::new(),
    }));
    let rt = runtime().map_err(|e| StartupError(format!("cannot start the runtime: {e}")))?;

    let Some(output) = print_mode else {
        // pi asks before continuing a session whose directory is gone; the other modes
        // refuse it (in `open_session_source`).
        let source = match startup::missing_session_cwd(&source, &cwd) {
            None => source,
            Some(issue) if startup::confirm_continue_here(&issue) => {
                startup::SessionSource::OpenHere(issue.file)
            }
            Some(_) => return Ok(0),
        };
        // Interactive: draw at once with a placeholder session (model and settings, no
        // file yet), and open the real session — possibly a big file — in the background.
        let placeholder = startup::build_session(
            &args,
            &cwd,
            paths.clone(),
            settings.clone(),
            pi::session::SessionManager::in_memory(&cwd),
            &ResourceLoading::Minimal,
        )?;
        pi::core::timing::mark("placeholder session");
        let reloader = pi::cli::reload::Reloader {
            args: args.clone(),
            cwd: cwd.clone(),
            paths: paths.clone(),
            extensions: ExtensionStartup {
                mode: HostMode::Interactive,
                has_ui: TUI_ANSWERS_EXTENSION_UI,
                runtime: rt.handle().clone(),
            },
        };
        let reloader: pi::modes::interactive::app::Reloader =
            std::sync::Arc::new(move |session| reloader.reload(session));
        let loader_args = args.clone();
        let loader_cwd = cwd;
        let picker_dir = session_dir.clone();
        let runtime = rt.handle().clone();
        // The app owns the loaded session; a copy is kept to stop its extensions on exit.
        let loaded: std::sync::Arc<std::sync::Mutex<Option<AgentSession>>> = Default::default();
        let loaded_for_loader = loaded.clone();
        let make_loader =
            move |source: startup::SessionSource| -> pi::modes::interactive::app::SessionLoader {
                Box::new(move || {
                    let manager = startup::open_session_source(&source, &loader_cwd, &session_dir)
                        .map_err(|e| e.0)?;
                    let loading = ResourceLoading::Full(ExtensionStartup {
                        mode: HostMode::Interactive,
                        has_ui: TUI_ANSWERS_EXTENSION_UI,
                        runtime: runtime.clone(),
                    });
                    let built = startup::build_session(
                        &loader_args,
                        &loader_cwd,
                        paths,
                        settings,
                        manager,
                        &loading,
                    )
                    .map_err(|e| e.0)?;
                    // The loader runs on a blocking thread, where waiting on the runtime
                    // is fine.
                    runtime.block_on(built.session.start_extensions(SessionStartReason::Startup));
                    if let Ok(mut slot) = loaded_for_loader.lock() {
                        *slot = Some(built.session.clone());
                    }
                    Ok((built.session, built.warnings))
                })
            };
        let (loader, resume) = if tui_resume {
            let open: pi::modes::interactive::app::SessionOpener = Box::new(move |path, here| {
                make_loader(if here {
                    startup::SessionSource::OpenHere(path)
                } else {
                    startup::SessionSource::Open(path)
                })
            });
            (
                None,
                Some(pi::modes::interactive::app::ResumeAtStartup {
                    session_dir: picker_dir,
                    open,
                }),
            )
        } else {
            (Some(make_loader(source)), None)
        };
        let options = pi::modes::interactive::app::InteractiveOptions {
            initial_prompts: prompts.into_iter().map(|p| (p.text, p.images)).collect(),
            warnings: Vec::new(),
            verbose: args.cli.verbose,
            loader,
            resume,
            reloader: Some(reloader),
        };
        let code = rt.block_on(pi::modes::interactive::app::run_interactive(
            placeholder.session,
            options,
        ));
        let session = loaded.lock().ok().and_then(|mut s| s.take());
        if let Some(session) = session {
            rt.block_on(async {
                let _ = tokio::time::timeout(SHUTDOWN_LIMIT, session.shutdown()).await;
            });
        }
        return Ok(code as u8);
    };

    let manager = startup::open_session_source(&source, &cwd, &session_dir)?;
    pi::core::timing::mark("session file opened");
    let loading = ResourceLoading::Full(ExtensionStartup {
        mode: match output {
            PrintOutput::Json => HostMode::Json,
            PrintOutput::Text => HostMode::Print,
        },
        has_ui: false,
        runtime: rt.handle().clone(),
    });
    let built = startup::build_session(&args, &cwd, paths, settings, manager, &loading)?;
    pi::core::timing::mark("agent session built");
    for w in &built.warnings {
        eprintln!("Warning: {w}");
    }
    let session = built.session;
    let code = rt.block_on(async move {
        let watcher = session.clone();
        tokio::spawn(async move { exit_on_signal(watcher).await });
        run_print(session, output, prompts).await
    });
    pi::tools::shell::kill_all_running();
    Ok(code as u8)
}

/// `--mode rpc`: the session from the flags, driven by JSON commands on stdin until it
/// ends. Positional messages are ignored, as in pi.
fn run_rpc_mode(args: &Args, cwd: &std::path::Path, paths: AgentPaths) -> Result<u8, StartupError> {
    let settings = Settings::load(&paths.agent_dir, cwd);
    let session_dir = startup::session_dir_for(args, &settings, &paths, cwd);
    let Some(manager) = startup::create_session_manager(args, cwd, &session_dir, &paths, None)?
    else {
        return Ok(0);
    };
    let rt = runtime().map_err(|e| StartupError(format!("cannot start the runtime: {e}")))?;
    let loading = ResourceLoading::Full(ExtensionStartup {
        mode: HostMode::Rpc,
        // Dialogs go to the client as `extension_ui_request`s.
        has_ui: true,
        runtime: rt.handle().clone(),
    });
    let built = startup::build_session(args, cwd, paths, settings, manager, &loading)?;
    for w in &built.warnings {
        eprintln!("Warning: {w}");
    }
    let session = built.session;
    if session.model().is_none() {
        return Err(StartupError(
            "No models available. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), \
add one to ~/.pi/agent/auth.json, or configure ~/.pi/agent/models.json."
                .into(),
        ));
    }
    // RPC mode sends `session_start` itself, once it can forward the extensions' dialogs.
    // It handles SIGTERM/SIGHUP/SIGINT itself: the same orderly shutdown as the end of
    // stdin (extensions included), so an interrupted answer is still recorded.
    let code = rt.block_on(pi::modes::rpc::run_rpc(session));
    pi::tools::shell::kill_all_running();
    // The blocking stdin reader may still be parked in a read; do not wait for it.
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(code as u8)
}

/// How long a signal waits for the aborted run to be recorded before exiting.
const ABORT_SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_millis(1000);

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
        // The aborted answer is recorded once the run winds down (bounded: an abort
        // ends every automatic action within milliseconds).
        let _ = tokio::time::timeout(ABORT_SETTLE_LIMIT, session.wait_for_operation()).await;
        // Extensions get their `session_shutdown` and are stopped (they live in their own
        // process groups and would outlive us otherwise).
        let _ = tokio::time::timeout(SHUTDOWN_LIMIT, session.shutdown()).await;
        std::process::exit(code);
    }
    #[cfg(not(unix))]
    {
        let _ = session;
    }
}
