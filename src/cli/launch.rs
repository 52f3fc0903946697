//! From parsed arguments to a mode ready to run, in two steps. [`prepare`] is plain
//! synchronous code run before the async runtime exists: it reads piped stdin and the
//! `@file` arguments, picks the mode, maps the flags to the session factory's
//! configuration and decides which session to run on — asking on the terminal where pi
//! asks. The [`Launch`] it returns then runs as one async task: the factory builds the
//! session and the mode drives it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::args::{AppMode, Args, TuiMode};
use crate::cli::files::{build_initial_message, process_file_args};
use crate::cli::startup::{
    check_flags, confirm_continue_here, read_piped_stdin, resolve_session_source, session_config,
};
use crate::core::agent_session::AgentSession;
use crate::core::factory::{
    ExtensionHosting, ResourceLoading, SessionFactory, SessionSource, StartupError,
    missing_session_cwd,
};
use crate::core::paths::AgentPaths;
use crate::core::timing;
use crate::extensions::HostMode;
use crate::modes::interactive::app::{InteractiveOptions, StartupOpen, run_interactive};
use crate::modes::print::{PrintOutput, PrintPrompt, run_print};

/// The mode the command line chose, with everything decided before it runs.
pub enum Launch {
    /// `-p`, `--mode json`, or a stdin or stdout that is not a terminal.
    Print(PrintLaunch),
    /// `--mode rpc`.
    Rpc(RpcLaunch),
    /// The terminal UI.
    Interactive(InteractiveLaunch),
}

/// Print or JSON mode: answer the prompts and exit.
pub struct PrintLaunch {
    factory: Arc<SessionFactory>,
    source: SessionSource,
    output: PrintOutput,
    prompts: Vec<PrintPrompt>,
}

/// RPC mode: JSON commands on stdin until it ends.
pub struct RpcLaunch {
    factory: Arc<SessionFactory>,
    source: SessionSource,
}

/// The interactive UI.
pub struct InteractiveLaunch {
    factory: Arc<SessionFactory>,
    open: StartupOpen,
    prompts: Vec<PrintPrompt>,
    verbose: bool,
    /// `--use-theme`: the theme for this run, not saved.
    theme: Option<String>,
    /// Notes for the UI to show at startup (`--tui-mode fullscreen`).
    notes: Vec<String>,
}

/// `--list-models [search]` as pi: after the extensions loaded, so the providers they
/// register are listed too. Without extensions no node process starts. Returns the code.
pub async fn list_models(
    args: &Args,
    cwd: PathBuf,
    paths: AgentPaths,
    search: &str,
) -> Result<u8, StartupError> {
    let factory = Arc::new(SessionFactory::new(
        session_config(args),
        cwd.clone(),
        paths,
        hosting(HostMode::Print, false),
    ));
    let manager = crate::session::SessionManager::in_memory(&cwd);
    let built = factory.build(manager, ResourceLoading::Full).await?;
    // As pi, startup's other diagnostics are not shown here, only pi 1.6's warning of
    // a start without a model.
    warn_without_model(&built.session);
    built.session.with_registry(|registry| {
        if let Some(e) = registry.error() {
            eprintln!("Warning: errors loading models.json:\n{e}");
        }
        crate::cli::list_models::print_registry_models(registry, search)
    });
    built.session.shutdown().await;
    Ok(0)
}

/// Decides what to run. `Ok(None)`: nothing to do (the user cancelled a question).
pub fn prepare(
    mut args: Args,
    cwd: PathBuf,
    paths: AgentPaths,
) -> Result<Option<Launch>, StartupError> {
    check_flags(&args)?;
    let app_mode = args.app_mode_here();
    if app_mode == AppMode::Rpc {
        return prepare_rpc(&args, cwd, paths);
    }
    let stdin = read_piped_stdin();
    let print_mode = match app_mode {
        AppMode::Json => Some(PrintOutput::Json),
        AppMode::Print => Some(PrintOutput::Text),
        AppMode::Interactive | AppMode::Rpc => None,
    };
    timing::mark("arguments");
    let hosting = match print_mode {
        Some(PrintOutput::Json) => hosting(HostMode::Json, false),
        Some(PrintOutput::Text) => hosting(HostMode::Print, false),
        // The interactive UI shows extensions' dialogs.
        None => hosting(HostMode::Interactive, true),
    };
    let factory = SessionFactory::new(session_config(&args), cwd, paths, hosting);
    // `--resume` in the interactive UI shows its own picker; everything else is decided
    // (and asked, where pi asks) before the UI starts.
    let tui_resume = print_mode.is_none()
        && args.cli.resume
        && args.cli.fork.is_none()
        && args.cli.session.is_none()
        && !args.cli.no_session;
    let source = if tui_resume {
        SessionSource::Create
    } else {
        let place = (factory.session_dir(), factory.cwd());
        match resolve_session_source(&args, place, factory.paths(), None)? {
            Some(source) => source,
            None => return Ok(None),
        }
    };
    let prompts = initial_prompts(&mut args, stdin, &factory)?;
    let factory = Arc::new(factory);

    let Some(output) = print_mode else {
        // pi asks before continuing a session whose directory is gone; the other modes
        // refuse it (when the factory opens it).
        let open = if tui_resume {
            StartupOpen::Picker
        } else {
            match missing_session_cwd(&source, factory.cwd()) {
                None => StartupOpen::Source(source),
                Some(issue) if confirm_continue_here(&issue) => {
                    StartupOpen::Source(SessionSource::OpenHere(issue.file))
                }
                Some(_) => return Ok(None),
            }
        };
        let mut notes = Vec::new();
        if args.tui_mode == Some(TuiMode::Fullscreen) {
            notes.push(FULLSCREEN_LATER.to_string());
        }
        return Ok(Some(Launch::Interactive(InteractiveLaunch {
            factory,
            open,
            prompts,
            verbose: args.cli.verbose,
            theme: args.cli.use_theme.clone(),
            notes,
        })));
    };
    Ok(Some(Launch::Print(PrintLaunch {
        factory,
        source,
        output,
        prompts,
    })))
}

/// What the UI says for `--tui-mode fullscreen`.
pub const FULLSCREEN_LATER: &str =
    "Fullscreen TUI mode comes with a later version of pi-rs; this session uses the regular mode";

/// `--mode rpc`: the session from the flags; positional messages are ignored, as in pi.
fn prepare_rpc(
    args: &Args,
    cwd: PathBuf,
    paths: AgentPaths,
) -> Result<Option<Launch>, StartupError> {
    // Dialogs go to the client as `extension_ui_request`s.
    let hosting = hosting(HostMode::Rpc, true);
    let factory = SessionFactory::new(session_config(args), cwd, paths, hosting);
    let place = (factory.session_dir(), factory.cwd());
    let found = resolve_session_source(args, place, factory.paths(), None)?;
    Ok(found.map(|source| {
        Launch::Rpc(RpcLaunch {
            factory: Arc::new(factory),
            source,
        })
    }))
}

fn hosting(mode: HostMode, has_ui: bool) -> ExtensionHosting {
    ExtensionHosting { mode, has_ui }
}

/// The prompts to send: piped stdin, the `@file` arguments and the first message make
/// the first one (with the files' images); every further message is one more.
fn initial_prompts(
    args: &mut Args,
    stdin: Option<String>,
    factory: &SessionFactory,
) -> Result<Vec<PrintPrompt>, StartupError> {
    let auto_resize = factory.settings().image_auto_resize();
    let files =
        process_file_args(&args.file_args, factory.cwd(), auto_resize).map_err(StartupError)?;
    let mut messages = std::mem::take(&mut args.messages);
    let initial = build_initial_message(stdin, &files, &mut messages);
    let first = initial.map(|text| PrintPrompt {
        text,
        images: files.images,
    });
    let rest = messages.into_iter().map(|text| PrintPrompt {
        text,
        images: Vec::new(),
    });
    Ok(first.into_iter().chain(rest).collect())
}

fn print_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("Warning: {w}");
    }
}

/// pi 1.6 outside interactive mode: a session that starts without a model (on pi's
/// "unknown" stand-in) first warns on stderr that no model is available.
fn warn_without_model(session: &AgentSession) {
    if session.model().is_none() {
        print_warnings(&[crate::core::auth_guidance::pi_no_models_available()]);
    }
}

impl PrintLaunch {
    /// Opens and builds the session (its warnings go to stderr).
    pub async fn session(&self) -> Result<AgentSession, StartupError> {
        let manager = self.factory.open(self.source.clone()).await?;
        timing::mark("session file opened");
        let built = self.factory.build(manager, ResourceLoading::Full).await?;
        timing::mark("agent session built");
        print_warnings(&built.warnings);
        warn_without_model(&built.session);
        Ok(built.session)
    }

    /// Sends the prompts on `session` and prints the answers. Returns the exit code.
    pub async fn run(self, session: AgentSession) -> u8 {
        run_print(session, self.output, self.prompts).await as u8
    }
}

impl RpcLaunch {
    /// Builds the session and serves the protocol on stdin and stdout until stdin ends
    /// or a signal arrives (RPC mode handles SIGTERM/SIGHUP/SIGINT itself: the same
    /// orderly shutdown as the end of stdin, extensions included). Returns the exit code.
    pub async fn run(self) -> Result<u8, StartupError> {
        let manager = self.factory.open(self.source).await?;
        let built = self.factory.build(manager, ResourceLoading::Full).await?;
        print_warnings(&built.warnings);
        warn_without_model(&built.session);
        // Without a model RPC starts as pi does (on its "unknown" stand-in): `get_state`
        // works and a prompt is answered with pi's missing-key error.
        let session = built.session;
        // RPC mode sends `session_start` itself, once it can forward the extensions'
        // dialogs.
        Ok(crate::modes::rpc::run_rpc(session).await as u8)
    }
}

impl InteractiveLaunch {
    /// Draws the UI at once on a placeholder session (model and settings, no file yet)
    /// while the factory opens the real one — possibly a big file — in the background.
    /// Returns the exit code.
    pub async fn run(self) -> Result<u8, StartupError> {
        let placeholder = self.factory.placeholder().await?;
        timing::mark("placeholder session");
        let options = InteractiveOptions {
            initial_prompts: self
                .prompts
                .into_iter()
                .map(|p| (p.text, p.images))
                .collect(),
            warnings: self.notes,
            verbose: self.verbose,
            theme: self.theme,
            factory: Some(self.factory),
            open: Some(self.open),
        };
        Ok(run_interactive(placeholder.session, options).await as u8)
    }
}
