//! The app as a state machine: every input — a key, a paste, a resize, a session event,
//! the result of background work, a timer tick — goes through [`App::handle`], which
//! updates the state and returns what only the event loop can do (the terminal-level
//! [`Effect`]s). Frames come from [`App::compose`]. The real loop (`run_interactive`)
//! and the in-process driver (`Headless`) are two thin shells around the same calls.

use crossterm::event::KeyEvent;

use super::input::KeyCommand;
use super::{AppMsg, on_app_msg, start_loading};
use crate::agent::AgentEvent;
use crate::core::events::SessionEvent;
use crate::core::factory::SessionSource;

use super::state::App;

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
        match event {
            UiEvent::Key(key) => {
                let command = self.on_key(key);
                self.run_key_command(command)
            }
            UiEvent::Paste(text) => {
                self.on_paste(&text);
                Effect::None
            }
            UiEvent::Resize(width, height) => {
                self.renderer.set_size(width, height);
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
            UiEvent::Msg(msg) => {
                on_app_msg(self, msg);
                Effect::None
            }
            UiEvent::Tick => {
                if self.animating() {
                    self.spinner = self.spinner.wrapping_add(1);
                    self.dirty = true;
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
