//! The app as a state machine: every input — a key, a paste, a resize, a session event,
//! the result of background work, a timer tick — goes through [`App::handle`], which
//! updates the state and returns what only the event loop can do (the terminal-level
//! [`Effect`]s). Frames come from [`App::compose`]. The real loop (`run_interactive`)
//! and the in-process driver (`Headless`) are two thin shells around the same calls.

use crossterm::event::KeyEvent;

use super::input::KeyCommand;
use super::loading::start_loading;
use super::msg::AppMsg;
use crate::agent::AgentEvent;
use crate::core::events::SessionEvent;
use crate::core::factory::SessionSource;
use crate::modes::interactive::theme::ThemeToken;

use super::state::{self, App, Status};

/// Everything the app reacts to. (Moved once per event, so the size of the largest
/// variant does not matter.)
#[allow(clippy::large_enum_variant)]
pub enum UiEvent {
    Key(KeyEvent),
    Paste(String),
    Resize(u16, u16),
    Session(SessionEvent),
    Msg(AppMsg),
    /// The animation timer (spinner, countdowns).
    Tick,
    /// The frame interval passed with changes waiting to be drawn.
    FrameDue,
    /// The terminal's input ended or failed.
    InputClosed,
}

/// What the event loop must do after an event, beyond the app's own state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Ctrl+Z: hand the terminal back to the shell until resumed.
    Suspend,
    /// Ctrl+G: edit the prompt in `$VISUAL` / `$EDITOR`.
    ExternalEditor,
    /// A new session was installed: subscribe to its events.
    Resubscribe,
    /// Nothing can work (the session could not be loaded): leave with this error.
    Fail(String),
}

impl App {
    /// Applies one event to the state. See the module documentation.
    pub fn handle(&mut self, event: UiEvent) -> Effect {
        let effect = self.apply_event(event);
        // An extension's prompt editor gets what pi-rs put in the editor meanwhile.
        self.sync_extension_editor_text();
        effect
    }

    fn apply_event(&mut self, event: UiEvent) -> Effect {
        match event {
            UiEvent::Key(key) => {
                let command = self.on_key(key);
                let effect = self.run_key_command(command);
                self.ask_extension_completion();
                effect
            }
            UiEvent::Paste(text) => {
                self.on_paste(&text);
                self.ask_extension_completion();
                Effect::None
            }
            UiEvent::Resize(width, height) => {
                self.renderer.set_size(width, height);
                self.editor.set_max_rows(
                    crate::modes::interactive::editor::Editor::rows_for_terminal(height),
                );
                self.full_redraw = true;
                self.dirty = true;
                Effect::None
            }
            UiEvent::Session(event) => {
                // Streaming deltas do not change what the footer shows.
                if !matches!(
                    event,
                    SessionEvent::Agent(
                        AgentEvent::MessageUpdate { .. } | AgentEvent::ToolExecutionUpdate { .. }
                    )
                ) {
                    self.footer_cache = None;
                }
                self.on_session_event(event);
                Effect::None
            }
            UiEvent::Msg(AppMsg::Loaded(result)) => match result {
                Ok(loaded) => {
                    self.install_session(loaded);
                    crate::core::timing::mark("session loaded");
                    Effect::Resubscribe
                }
                Err(e) => {
                    self.loading = false;
                    Effect::Fail(e)
                }
            },
            UiEvent::Msg(AppMsg::ExtensionUi(request)) => {
                self.dirty = true;
                let command = self.on_extension_ui(request);
                self.run_key_command(command)
            }
            UiEvent::Msg(msg) => {
                on_app_msg(self, msg);
                Effect::None
            }
            UiEvent::Tick => {
                if self.animating() {
                    self.spinner = self.spinner.wrapping_add(1);
                    self.dirty = true;
                    self.advance_bash_spinner();
                    self.advance_tool_clocks();
                }
                Effect::None
            }
            UiEvent::FrameDue => Effect::None,
            UiEvent::InputClosed => {
                self.quit = true;
                Effect::None
            }
        }
    }

    /// A running `!command` shows the same spinner frame as the status line.
    fn advance_bash_spinner(&mut self) {
        let Some(index) = self.bash_item else { return };
        let frame = self.spinner;
        self.transcript.update_at(index, |item| {
            if let crate::modes::interactive::components::transcript::ChatItem::Bash(view) = item
                && let crate::modes::interactive::components::bash_execution::BashStatus::Running {
                    frame: shown,
                } = &mut view.status
            {
                *shown = frame;
            }
        });
    }

    fn run_key_command(&mut self, command: KeyCommand) -> Effect {
        match command {
            KeyCommand::None => {}
            KeyCommand::Submit(text) => self.on_submit(text),
            KeyCommand::FollowUp(text) => self.on_follow_up(text),
            KeyCommand::DoubleEscape => self.on_double_escape(),
            KeyCommand::Suspend => return Effect::Suspend,
            KeyCommand::ExternalEditor => return Effect::ExternalEditor,
            KeyCommand::OpenStartupSession { path, here } => {
                if std::mem::take(&mut self.startup_pick) {
                    self.leave_frame = true;
                    let source = if here {
                        SessionSource::OpenHere(path)
                    } else {
                        SessionSource::Open(path)
                    };
                    start_loading(self, source);
                }
            }
        }
        Effect::None
    }
}

/// Applies the result of background work to the app.
fn on_app_msg(app: &mut App, msg: AppMsg) {
    app.dirty = true;
    match msg {
        AppMsg::PromptDone(result) => {
            app.busy = false;
            if !matches!(app.status, Status::Message(_)) {
                app.status = Status::Idle;
            }
            if let Err(e) = result {
                app.notice(format!("Error: {e}"));
            }
            app.git_branch = state::git_branch(&app.cwd);
            app.footer_cache = None;
        }
        AppMsg::BashChunk(chunk) => app.on_bash_chunk(&chunk),
        AppMsg::BashDone(result) => app.on_bash_done(result),
        AppMsg::Navigated(text) => {
            if let Some(text) = text
                && app.editor.is_empty()
            {
                app.editor.set_text(&text);
            }
            app.notice("Navigated to selected point");
        }
        AppMsg::Forked(text) => {
            app.editor.set_text(&text);
            app.notice("Forked to new session");
        }
        AppMsg::SummaryCancelled(target) => {
            app.notice("Branch summarization cancelled");
            app.open_tree(Some(target));
        }
        AppMsg::ExtensionUi(request) => {
            let _ = app.on_extension_ui(request);
        }
        AppMsg::HostRendered(answer) => app.on_host_rendered(answer),
        AppMsg::ShareDone(result) => app.share_done(result),
        AppMsg::Reloaded(result) => app.finish_reload(result),
        AppMsg::ReloadRequested(done) => {
            app.reload_waiters.push(done);
            app.start_reload();
        }
        AppMsg::Login(msg) => app.on_login_msg(msg),
        AppMsg::Info(text) => app.notice(text),
        AppMsg::Status(text) => app.show_status(text),
        AppMsg::NewSession => app.note("✓ New session started", ThemeToken::Accent, true),
        AppMsg::Warning(text) => app.pin_warning(text),
        AppMsg::Error(e) => app.notice(format!("Error: {e}")),
        AppMsg::Redraw | AppMsg::Loaded(_) => {}
        AppMsg::GitBranch(branch) => {
            app.git_branch = branch;
            app.footer_cache = None;
        }
        AppMsg::ExtensionCompletions(query, suggestions) => {
            app.editor.extension_suggestions(&query, suggestions);
        }
        // A walk of the directory the app has left since (see `App::enter_directory`)
        // is dropped.
        AppMsg::FilesWalked(cwd, files) if cwd == app.cwd => {
            app.project_files = files;
            app.refresh_autocomplete();
        }
        AppMsg::FilesWalked(..) => {}
    }
}
