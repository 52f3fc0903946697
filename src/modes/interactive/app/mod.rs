//! The interactive app: one event loop over terminal input, session events and results
//! of background tasks, drawing at most 60 frames a second and nothing when nothing
//! changed. History goes to the terminal's scrollback; see `renderer`.

mod clipboard;
mod commands;
mod events;
mod ext_overlays;
mod extension_ui;
mod handle;
mod headless;
mod host_render;
mod input;
mod key_sequence;
mod loading;
mod login;
mod msg;
mod overlay;
mod reload;
mod scoped_models;
mod share;
mod state;
mod trust;
mod view;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use tokio::sync::mpsc;

use crate::core::agent_session::{AgentSession, PromptOptions};
use crate::core::factory::{EXTENSION_SHUTDOWN_LIMIT, SessionFactory};
use crate::core::settings::QuietStartup;
use crate::modes::interactive::autocomplete::CombinedProvider;
use crate::modes::interactive::components::header::{LoadedResources, StartupHeader};
use crate::modes::interactive::components::status::PendingMessages;
use crate::modes::interactive::components::transcript::Transcript;
use crate::modes::interactive::editor::Editor;
use crate::modes::interactive::input::TerminalInput;
use crate::modes::interactive::renderer::InlineRenderer;
use crate::modes::interactive::terminal::{self, TerminalGuard};

pub use self::handle::{Effect, UiEvent};
pub use self::headless::Headless;
pub use self::loading::StartupOpen;
pub use self::msg::{AppMsg, Loaded};
pub use self::state::App;
use self::state::Status;
pub use self::view::Composed;

/// What the interactive mode starts with.
#[derive(Default)]
pub struct InteractiveOptions {
    /// Messages to send one after another once the UI is up (`pi "a" "b"`).
    pub initial_prompts: Vec<(String, Vec<crate::ai::message::ImageContent>)>,
    pub warnings: Vec<String>,
    pub verbose: bool,
    /// `--use-theme`: the theme setting for this run, not saved.
    pub theme: Option<String>,
    /// Builds the sessions the UI opens at startup and runs `/reload`. Without it the UI
    /// stays on the session it was given, and `/reload` only reads models.json and
    /// auth.json again.
    pub factory: Option<Arc<SessionFactory>>,
    /// What the factory opens at startup; `None`: the given session is the real one.
    pub open: Option<StartupOpen>,
}

/// Frames are drawn at most this often.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Time a frame may spend printing history (the rest follows in the next frames, so a
/// long session fills in without blocking input).
const HISTORY_BUDGET: Duration = Duration::from_millis(8);
/// The slowest frame pacing adaptive spacing may choose.
const MAX_FRAME_INTERVAL: Duration = Duration::from_millis(250);
/// How often the footer checks which git branch is checked out.
const GIT_HEAD_POLL: Duration = Duration::from_secs(1);
/// Spinner and countdown speed.
const TICK: Duration = Duration::from_millis(80);

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Runs the interactive UI until the user quits. Returns the exit code.
pub async fn run_interactive(session: AgentSession, options: InteractiveOptions) -> i32 {
    let guard = match TerminalGuard::enter() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("Error: cannot set up the terminal: {e}");
            return 1;
        }
    };
    let (width, height) = TerminalGuard::size();
    let (tx, mut rx) = mpsc::unbounded_channel();
    crate::core::timing::mark("terminal ready");
    let mut app = new_app(session.clone(), width, height, tx.clone(), &options);
    crate::core::timing::mark("app state built");
    for w in &options.warnings {
        app.pin_warning(w);
    }
    let mut options = options;
    if let Some(open) = options.open.take() {
        loading::start_opening(&mut app, open);
    }

    state::walk_project_files(&tx, app.cwd.clone());
    // The footer's branch follows `git switch` made elsewhere, as pi's watch of
    // `.git/HEAD` does: one small read a second, on a blocking thread (in the directory
    // the session runs in, which loading a session from another project changes).
    let git_cwd = app.watched_cwd.clone();
    let git_tx = tx.clone();
    let mut shown_branch = app.git_branch.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(GIT_HEAD_POLL);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            every.tick().await;
            let cwd = match git_cwd.lock() {
                Ok(cwd) => cwd.clone(),
                Err(poisoned) => poisoned.into_inner().clone(),
            };
            let Ok(branch) = tokio::task::spawn_blocking(move || state::git_branch(&cwd)).await
            else {
                return;
            };
            if branch != shown_branch {
                shown_branch = branch.clone();
                if git_tx.send(AppMsg::GitBranch(branch)).is_err() {
                    return;
                }
            }
        }
    });

    let mut term = match TerminalInput::start(terminal::kitty_active()) {
        Ok(input) => input,
        Err(e) => {
            drop(guard);
            eprintln!("Error: cannot read the terminal: {e}");
            return 1;
        }
    };
    check_tmux_keys(tx.clone());

    let mut prompts = options.initial_prompts.into_iter();
    let mut session_rx = app.session.subscribe();
    // Frames go to the terminal, and to `PI_TUI_WRITE_LOG` when it is set (as pi).
    let (mut stdout, log_warning) = crate::modes::interactive::write_log::TermOut::stdout();
    if let Some(w) = log_warning {
        app.pin_warning(&w);
    }
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    // Frames are spaced at least twice as far apart as drawing takes, so an expensive
    // frame (a huge reply re-wrapping) can never starve the handling of events.
    let mut frame_interval = FRAME_INTERVAL;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    app.full_redraw = true;
    let _ = app.draw(&mut stdout);
    crate::core::timing::mark("first frame drawn");
    if !app.loading
        && let Some((text, images)) = prompts.next()
    {
        send_initial(&mut app, text, images);
    }

    loop {
        let deadline = tokio::time::Instant::from_std(last_frame + frame_interval);
        // While the terminal's progress indicator is on it is sent again every second.
        let progress_due = app.renderer.progress_due();
        let progress_at = tokio::time::Instant::from_std(progress_due.unwrap_or(last_frame));
        let event = tokio::select! {
            biased;
            event = term.next() => match event {
                Some(Event::Key(key)) => UiEvent::Key(key),
                Some(Event::Paste(text)) => UiEvent::Paste(text),
                Some(Event::Resize(w, h)) => UiEvent::Resize(w, h),
                Some(_) => continue,
                None => UiEvent::InputClosed,
            },
            Some(event) = session_rx.recv() => UiEvent::Session(event),
            Some(msg) = rx.recv() => UiEvent::Msg(msg),
            _ = tick.tick(), if app.animating() || app.extension_dialog_open() => UiEvent::Tick,
            _ = tokio::time::sleep_until(progress_at), if progress_due.is_some() => UiEvent::FrameDue,
            _ = tokio::time::sleep_until(deadline), if app.dirty => UiEvent::FrameDue,
        };
        // `ctx.ui.onTerminalInput`: listeners see the input first and may consume or
        // replace it (replaced input is decoded again).
        let event = match event {
            UiEvent::Key(_) | UiEvent::Paste(_) => match app.terminal_input_filter() {
                Some((host, listeners)) => {
                    match filter_terminal_input(&host, &listeners, &event).await {
                        InputVerdict::Pass => event,
                        InputVerdict::Consumed => {
                            app.dirty = true;
                            continue;
                        }
                        InputVerdict::Replaced(mut events) => {
                            // All but the last here; the last goes the usual way.
                            let Some(last) = events.pop() else {
                                continue;
                            };
                            for replaced in events {
                                let _ = app.handle(replaced);
                            }
                            last
                        }
                    }
                }
                None => event,
            },
            other => other,
        };
        let is_msg = matches!(event, UiEvent::Msg(_));
        match app.handle(event) {
            Effect::None => {}
            Effect::Suspend => {
                // pi leaves its last frame on the screen, the shell's job notice below.
                let mut out = std::io::stdout();
                let _ = app.renderer.leave_session(&mut out);
                term.pause();
                let _ = terminal::suspend();
                term.resume();
                let (w, h) = TerminalGuard::size();
                app.renderer.set_size(w, h);
                // Back after `fg`: the shell wrote below the last frame, which stays in
                // the scrollback; the editor and footer are drawn anew where the cursor is
                // (pi clears the terminal and draws the whole conversation again).
                app.dirty = true;
            }
            Effect::ExternalEditor => {
                // The editor reads the terminal now; our reader must not take its keys.
                term.pause();
                external_editor(&mut app);
                term.resume();
            }
            Effect::Resubscribe => {
                session_rx = app.session.subscribe();
                app.run_queued_submits();
            }
            Effect::Fail(e) => {
                // Nothing else can work without the session: say why and stop.
                let _ = app.renderer.finish_session(&mut stdout);
                drop(guard);
                eprintln!("Error: {e}");
                return 1;
            }
        }
        if is_msg
            && !app.busy
            && !app.loading
            && let Some((text, images)) = prompts.next()
        {
            send_initial(&mut app, text, images);
        }
        // pi defers an extension's shutdown request until queued messages are done.
        if app.shutdown_requested && !app.busy && !app.loading && !app.session.is_streaming() {
            app.quit = true;
        }
        let _ = app.renderer.write_progress(&mut stdout, Instant::now());
        if app.quit {
            break;
        }
        // A dialog an extension asked for while something else was open, or one whose
        // extension stopped waiting.
        app.open_waiting_extension_dialog();
        if app.dirty && last_frame.elapsed() >= frame_interval {
            let started = Instant::now();
            let _ = app.draw(&mut stdout);
            last_frame = Instant::now();
            frame_interval = (started.elapsed() * 2).clamp(FRAME_INTERVAL, MAX_FRAME_INTERVAL);
        }
    }
    app.session.abort();
    crate::tools::shell::kill_all_running();
    app.terminal_progress(false);
    // As pi: the last frame stays on the screen (the conversation's end, the editor and
    // the footer, or the `--resume` picker that was cancelled), drawn once more so that
    // it shows the state at the end (the submitted `/quit` gone from the editor).
    app.dirty = true;
    let _ = app.draw(&mut stdout);
    let _ = app.renderer.leave_session(&mut stdout);
    let _ = stdout.flush();
    drop(guard);
    if let Some(message) = app.quit_message.take() {
        println!("{message}");
    }
    // The extensions get `session_shutdown` and stop (they live in their own process
    // groups and would outlive us otherwise).
    let _ = tokio::time::timeout(EXTENSION_SHUTDOWN_LIMIT, app.session.shutdown()).await;
    0
}

/// How long pi-rs waits for one extension's `onTerminalInput` listeners to decide about
/// a key or a paste; without an answer by then the input goes on unchanged. Only
/// extensions that registered a listener are asked.
pub const TERMINAL_INPUT_BOUND: Duration = Duration::from_millis(100);

/// What the `onTerminalInput` listeners made of some input.
enum InputVerdict {
    Pass,
    Consumed,
    /// A listener replaced the data: the events it decodes to.
    Replaced(Vec<UiEvent>),
}

/// Runs input through the extensions' `onTerminalInput` listeners in order, as pi's TUI
/// does: one that consumes it ends the chain; one that returns `data` passes that on.
async fn filter_terminal_input(
    host: &crate::extensions::ExtensionHost,
    listeners: &[std::path::PathBuf],
    event: &UiEvent,
) -> InputVerdict {
    let original = match event {
        UiEvent::Key(key) => match key_sequence::key_sequence(key) {
            Some(data) => data,
            None => return InputVerdict::Pass,
        },
        UiEvent::Paste(text) => format!("\x1b[200~{text}\x1b[201~"),
        _ => return InputVerdict::Pass,
    };
    let mut data = original.clone();
    for path in listeners {
        let Some(answer) = host.terminal_input(path, &data, TERMINAL_INPUT_BOUND).await else {
            continue;
        };
        if answer.get("consume").and_then(serde_json::Value::as_bool) == Some(true) {
            return InputVerdict::Consumed;
        }
        if let Some(replaced) = answer.get("data").and_then(serde_json::Value::as_str) {
            data = replaced.to_string();
        }
    }
    if data == original {
        return InputVerdict::Pass;
    }
    let mut decoder = crate::modes::interactive::input::InputDecoder::new();
    let mut events = decoder.feed(data.as_bytes());
    events.extend(decoder.flush());
    InputVerdict::Replaced(
        events
            .into_iter()
            .filter_map(|event| match event {
                Event::Key(key) => Some(UiEvent::Key(key)),
                Event::Paste(text) => Some(UiEvent::Paste(text)),
                _ => None,
            })
            .collect(),
    )
}

/// pi's check of tmux's keyboard setup: without `extended-keys` tmux never passes
/// Shift+Enter and the other modified keys on, so say how to turn it on (once, at
/// startup, in the background; nothing when tmux cannot be asked).
fn check_tmux_keys(tx: mpsc::UnboundedSender<AppMsg>) {
    if std::env::var_os("TMUX").is_none() {
        return;
    }
    tokio::spawn(async move {
        let (keys, format) = tokio::join!(
            tmux_option("extended-keys"),
            tmux_option("extended-keys-format")
        );
        if let Some(warning) = tmux_keys_warning(keys.as_deref(), format.as_deref()) {
            let _ = tx.send(AppMsg::Warning(warning.to_string()));
        }
    });
}

/// The value of a global tmux option, or `None` when tmux does not answer in 2 s.
async fn tmux_option(name: &str) -> Option<String> {
    let run = tokio::process::Command::new("tmux")
        .args(["show", "-gv", name])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(2), run)
        .await
        .ok()?
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// pi's warnings for tmux's `extended-keys` and `extended-keys-format` options.
fn tmux_keys_warning(extended_keys: Option<&str>, format: Option<&str>) -> Option<&'static str> {
    let keys = extended_keys?;
    if keys != "on" && keys != "always" {
        return Some(
            "tmux extended-keys is off. Modified Enter keys may not work. Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux.",
        );
    }
    (format == Some("xterm")).then_some(
        "tmux extended-keys-format is xterm. Pi works best with csi-u. Add `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux.",
    )
}

fn send_initial(app: &mut App, text: String, images: Vec<crate::ai::message::ImageContent>) {
    app.busy = true;
    let session = app.session.clone();
    let tx = app.tx.clone();
    tokio::spawn(async move {
        let result = session
            .prompt(
                &text,
                PromptOptions {
                    images,
                    ..PromptOptions::default()
                },
            )
            .await;
        let _ = tx.send(AppMsg::PromptDone(result));
    });
}

/// Ctrl+G: edit the prompt in the `externalEditor` setting's command, else `$VISUAL` /
/// `$EDITOR`.
fn external_editor(app: &mut App) {
    let configured = app.session.settings().external_editor().map(str::to_string);
    let Some(editor) = configured
        .or_else(|| env("VISUAL"))
        .or_else(|| env("EDITOR"))
        .filter(|e| !e.is_empty())
    else {
        app.notice("Warning: No editor configured. Set $VISUAL or $EDITOR environment variable.");
        return;
    };
    let path = std::env::temp_dir().join(format!("pi-prompt-{}.md", std::process::id()));
    if std::fs::write(&path, app.editor.expanded_text()).is_err() {
        app.notice("Could not write a temporary file for the external editor");
        return;
    }
    let mut out = std::io::stdout();
    let _ = app.renderer.finish_session(&mut out);
    terminal::restore();
    // The editor command may carry arguments (`code --wait`), so run it through the shell.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("pi-editor")
        .arg(&path)
        .status();
    let _ = TerminalGuard::enter().map(std::mem::forget);
    match status {
        Ok(s) if s.success() => {
            if let Ok(text) = std::fs::read_to_string(&path) {
                app.editor.set_text(text.trim_end_matches('\n'));
            }
        }
        _ => app.notice("The external editor did not finish successfully; the prompt is unchanged"),
    }
    let _ = std::fs::remove_file(&path);
    let (w, h) = TerminalGuard::size();
    app.renderer.set_size(w, h);
    app.full_redraw = true;
    app.dirty = true;
}

fn new_app(
    session: AgentSession,
    width: u16,
    height: u16,
    tx: mpsc::UnboundedSender<AppMsg>,
    options: &InteractiveOptions,
) -> App {
    let paths = session.paths().clone();
    let (theme_name, hide_thinking, quiet, show_cursor, max_visible, padding, images, output_pad) = {
        let s = session.settings();
        (
            options
                .theme
                .clone()
                .or_else(|| s.theme().map(str::to_string)),
            s.hide_thinking_block(),
            s.quiet_startup(),
            s.show_hardware_cursor(),
            s.autocomplete_max_visible() as usize,
            s.editor_padding_x() as usize,
            (s.show_images(), s.image_width_cells() as usize),
            s.output_pad(),
        )
    };
    crate::modes::interactive::markdown::set_code_block_indent(
        session.settings().code_block_indent(),
    );
    let mut warnings = Vec::new();
    let (theme, themes, theme_warnings) = reload::load_theme(theme_name, &session);
    warnings.extend(theme_warnings);
    let (keys, key_warnings) = reload::load_keybindings(&paths);
    warnings.extend(key_warnings);
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    let cwd = session.cwd().to_path_buf();
    let mut editor = Editor::new(keys.clone());
    editor.set_autocomplete_max_visible(max_visible);
    editor.set_padding_x(padding);
    editor.set_max_rows(Editor::rows_for_terminal(height));
    editor.set_autocomplete_provider(Arc::new(CombinedProvider::new(
        commands::command_specs(),
        cwd.clone(),
        home.as_ref().map(Into::into),
    )));
    let header = StartupHeader {
        app_name: "pi".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        // pi: the header (and resource listing) only without `quietStartup`; it starts
        // compact unless `--verbose`, and Ctrl+O expands it with the tool output.
        expanded: options.verbose,
        quiet: if options.verbose {
            QuietStartup::Off
        } else {
            quiet
        },
        tagline: None,
        resources: LoadedResources::default(),
        custom: None,
    };
    let mut app = App {
        session,
        theme,
        theme_override: options.theme.clone(),
        themes,
        keys,
        home,
        cwd: cwd.clone(),
        watched_cwd: Arc::new(std::sync::Mutex::new(cwd.clone())),
        header,
        transcript: Transcript::default(),
        done: Vec::new(),
        committed: 0,
        header_written: false,
        editor,
        status: Status::Idle,
        spinner: 0,
        pending: PendingMessages::default(),
        busy: false,
        streaming: None,
        tool_items: HashMap::new(),
        tool_started: HashMap::new(),
        usage: Default::default(),
        provider_count: 0,
        bash_item: None,
        last_ctrl_c: None,
        last_status: None,
        last_escape: None,
        hide_thinking,
        git_branch: state::git_branch(&cwd),
        renderer: InlineRenderer::new(width, height),
        dirty: true,
        full_redraw: true,
        quit: false,
        overlay: None,
        omitted_items: 0,
        flash: None,
        footer_cache: None,
        show_hardware_cursor: show_cursor,
        show_images: images.0,
        image_protocol: crate::modes::interactive::images::protocol(),
        image_width_cells: images.1,
        output_pad,
        tx,
        loading: false,
        queued_submits: Vec::new(),
        reload_waiters: Vec::new(),
        extension_themes_seen: 0,
        history_budget: HISTORY_BUDGET,
        quit_message: None,
        startup_pick: false,
        leave_frame: false,
        extension_ui: Default::default(),
        ext_overlays: Default::default(),
        project_files: Default::default(),
        shutdown_requested: false,
        share_cancel: None,
        factory: options.factory.clone(),
        pinned_warnings: Vec::new(),
        session_warnings: Vec::new(),
        startup_notices_shown: false,
        anthropic_warning_shown: false,
    };
    if options.open.is_none() {
        app.refresh_usage();
        app.header.resources = state::header_resources(&app.session);
        app.header.resources.themes = app.themes.custom_names();
        app.refresh_autocomplete();
        app.rebuild_transcript();
        app.show_startup_notices();
    }
    // Kept across the rebuild when the real session has loaded (and every later one).
    for w in warnings {
        app.pin_warning(w);
    }
    // pi's first-run hint: nothing can be asked without a model, so say how to get one.
    if app.session.model().is_none() {
        app.pin_warning(crate::core::auth_guidance::no_models_available());
    }
    if options.open.is_none() {
        app.warn_anthropic_extra_usage();
    }
    app
}

#[cfg(test)]
mod tests {
    use super::tmux_keys_warning;

    #[test]
    fn tmux_warnings_follow_pi() {
        assert!(
            tmux_keys_warning(None, None).is_none(),
            "tmux did not answer"
        );
        let off = tmux_keys_warning(Some("off"), Some("csi-u")).unwrap_or_default();
        assert!(off.starts_with("tmux extended-keys is off."), "{off}");
        assert!(
            tmux_keys_warning(Some("on"), None).is_none(),
            "tmux 3.3 has no format"
        );
        assert!(tmux_keys_warning(Some("always"), Some("csi-u")).is_none());
        let xterm = tmux_keys_warning(Some("on"), Some("xterm")).unwrap_or_default();
        assert!(
            xterm.starts_with("tmux extended-keys-format is xterm."),
            "{xterm}"
        );
    }
}
