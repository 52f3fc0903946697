//! Keys and pastes. App-level actions (pi's `app.*` keybindings) are checked first, then
//! the editor gets the key. Dialogs take every key while they are open.

use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, KeyEventKind};

use super::overlay::OverlayOutcome;
use super::state::{App, Status};
use crate::core::agent_session::Direction;
use crate::modes::interactive::editor::EditorAction;
use crate::modes::interactive::keys::Action;

/// Two presses of Escape or Ctrl+C within this time count as a double press (pi).
const DOUBLE_PRESS: Duration = Duration::from_millis(500);

/// Follow-up work a key asks the event loop to do (async or terminal-level).
pub enum KeyCommand {
    None,
    Submit(String),
    FollowUp(String),
    Suspend,
    ExternalEditor,
    DoubleEscape,
    /// `--resume`: the user chose the session to open (`here`: continue it in the current
    /// directory, its own being gone).
    OpenStartupSession {
        path: std::path::PathBuf,
        here: bool,
    },
}

const APP_ACTIONS: &[Action] = &[
    Action::Interrupt,
    Action::Clear,
    Action::Exit,
    Action::Suspend,
    Action::ThinkingCycle,
    Action::ModelCycleForward,
    Action::ModelCycleBackward,
    Action::ModelSelect,
    Action::ToolsExpand,
    Action::ThinkingToggle,
    Action::EditorExternal,
    Action::MessageCopy,
    Action::MessageFollowUp,
    Action::MessageDequeue,
    Action::SessionNew,
    Action::SessionTree,
    Action::SessionFork,
    Action::SessionResume,
];

impl App {
    pub fn on_paste(&mut self, text: &str) {
        self.dirty = true;
        if self.overlay.is_none() && self.send_to_ext_overlay(text) {
            return;
        }
        if self.custom_component_open() {
            self.send_to_custom_component(text);
            return;
        }
        if self.overlay.is_none() && self.extension_editor_active() {
            self.send_to_extension_editor(&format!("\x1b[200~{text}\x1b[201~"));
            return;
        }
        match &mut self.overlay {
            Some(overlay) => overlay.handle_paste(text),
            None => self.editor.handle_paste(text),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> KeyCommand {
        if key.kind == KeyEventKind::Release {
            return KeyCommand::None;
        }
        self.dirty = true;
        if self.overlay.is_none() && self.ext_overlay_focused() {
            // An overlay with the keyboard takes every key (pi-tui's focused component);
            // one that is no longer visible passes the keyboard on.
            match super::key_sequence::key_sequence(&key) {
                Some(data) if self.send_to_ext_overlay(&data) => return KeyCommand::None,
                Some(_) => {}
                None => return KeyCommand::None,
            }
        }
        if self.custom_component_open() {
            // A custom component takes every key, Escape and Ctrl+C included (pi).
            if let Some(data) = super::key_sequence::key_sequence(&key) {
                self.send_to_custom_component(&data);
            }
            return KeyCommand::None;
        }
        if let Some(overlay) = self.overlay.as_mut() {
            let outcome = overlay.handle_key(&key, &self.keys);
            match outcome {
                OverlayOutcome::Keep => {}
                OverlayOutcome::Cancelled => {
                    self.overlay = None;
                    self.overlay_closed();
                }
                OverlayOutcome::Selected(purpose, item) => {
                    self.overlay = None;
                    return self.on_selected(purpose, item);
                }
                OverlayOutcome::Entered(purpose, text) => {
                    self.overlay = None;
                    return self.on_entered(purpose, text);
                }
                other => return self.on_picker_outcome(other),
            }
            return KeyCommand::None;
        }

        if self.run_extension_shortcut(&key) {
            return KeyCommand::None;
        }
        if self.extension_editor_active() {
            // An extension's editor gets every key; pi's app keys come back from it as
            // `editorAction` (its CustomEditor handlers), its submit as `editorSubmit`.
            if let Some(data) = super::key_sequence::key_sequence(&key) {
                self.send_to_extension_editor(&data);
            }
            return KeyCommand::None;
        }
        // pi 1.6: the dedicated history keys win over the app's keys.
        if self
            .keys
            .action_for(&key, &[Action::HistoryPrevious, Action::HistoryNext])
            .is_some()
        {
            self.editor.handle_key(&key);
            return KeyCommand::None;
        }
        // The completion popup owns Escape while it is open (and the arrows, Tab and
        // Enter, which are editor keys); every other app key still acts, as in pi
        // (Ctrl+C clears the editor and closes the popup).
        let action = self
            .keys
            .action_for(&key, APP_ACTIONS)
            .filter(|a| !(*a == Action::Interrupt && self.editor.is_showing_autocomplete()));
        if let Some(action) = action
            && let Some(command) = self.run_app_action(action)
        {
            return command;
        }

        match self.editor.handle_key(&key) {
            EditorAction::Submit(text) => {
                if text.trim().is_empty() {
                    return KeyCommand::None;
                }
                self.editor.add_to_history(&text);
                KeyCommand::Submit(text)
            }
            EditorAction::Handled | EditorAction::Ignored => KeyCommand::None,
        }
    }

    /// Runs one of pi's app actions (`app.*` keybindings); `None` when it does not apply
    /// now (Ctrl+D on a non-empty editor) and the key goes to the editor.
    pub(super) fn run_app_action(&mut self, action: Action) -> Option<KeyCommand> {
        match action {
            Action::Interrupt => return Some(self.on_escape()),
            Action::Clear => {
                let now = Instant::now();
                if self
                    .last_ctrl_c
                    .is_some_and(|t| now.duration_since(t) < DOUBLE_PRESS)
                {
                    self.quit = true;
                } else {
                    self.editor.set_text("");
                    self.last_ctrl_c = Some(now);
                }
                return Some(KeyCommand::None);
            }
            Action::Exit if self.editor.is_empty() => {
                self.quit = true;
                return Some(KeyCommand::None);
            }
            Action::Suspend => return Some(KeyCommand::Suspend),
            Action::ThinkingCycle => {
                match self.session.cycle_thinking_level() {
                    Ok(Some(level)) => self.show_status(format!("Thinking level: {level}")),
                    Ok(None) => self.show_status("Current model does not support thinking"),
                    Err(e) => self.notice(e),
                }
                self.footer_cache = None;
                return Some(KeyCommand::None);
            }
            a @ (Action::ModelCycleForward | Action::ModelCycleBackward) => {
                let direction = if a == Action::ModelCycleForward {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                match self.session.cycle_model(direction) {
                    Ok(Some(c)) => {
                        // pi's wording: the model's name, and its level when it thinks.
                        let name = if c.model.name.is_empty() {
                            c.model.id.clone()
                        } else {
                            c.model.name.clone()
                        };
                        let thinking = if c.model.reasoning
                            && c.thinking != crate::ai::model::ThinkingLevel::Off
                        {
                            format!(" (thinking: {})", c.thinking)
                        } else {
                            String::new()
                        };
                        self.show_status(format!("Switched to {name}{thinking}"));
                        self.warn_anthropic_extra_usage();
                    }
                    Ok(None) => self.show_status(if cycles_a_scope(&self.session) {
                        "Only one model in scope"
                    } else {
                        "Only one model available"
                    }),
                    Err(e) => self.notice(e),
                }
                self.footer_cache = None;
                return Some(KeyCommand::None);
            }
            Action::ModelSelect => {
                self.open_model_selector();
                return Some(KeyCommand::None);
            }
            Action::ToolsExpand => {
                self.set_tools_expanded(!self.transcript.expanded());
                return Some(KeyCommand::None);
            }
            Action::ThinkingToggle => {
                self.hide_thinking = !self.hide_thinking;
                self.transcript.set_hide_thinking(self.hide_thinking);
                let hide = self.hide_thinking;
                let _ = self
                    .session
                    .set_global_setting(&["hideThinkingBlock"], serde_json::Value::Bool(hide));
                self.show_status(if hide {
                    "Thinking blocks: hidden"
                } else {
                    "Thinking blocks: visible"
                });
                self.full_redraw = true;
                return Some(KeyCommand::None);
            }
            Action::EditorExternal => return Some(KeyCommand::ExternalEditor),
            Action::MessageCopy => {
                self.copy_last_answer();
                return Some(KeyCommand::None);
            }
            Action::MessageFollowUp => {
                let text = self.editor.expanded_text();
                if text.trim().is_empty() {
                    return Some(KeyCommand::None);
                }
                self.editor.add_to_history(&text);
                self.editor.set_text("");
                return Some(KeyCommand::FollowUp(text));
            }
            Action::MessageDequeue => {
                match self.restore_queued_to_editor() {
                    0 => self.show_status("No queued messages to restore"),
                    1 => self.show_status("Restored 1 queued message to editor"),
                    n => self.show_status(format!("Restored {n} queued messages to editor")),
                }
                return Some(KeyCommand::None);
            }
            // Unbound by default; bound in keybindings.json they run the commands.
            Action::SessionNew
            | Action::SessionTree
            | Action::SessionFork
            | Action::SessionResume => {
                let command = match action {
                    Action::SessionNew => "new",
                    Action::SessionTree => "tree",
                    Action::SessionFork => "fork",
                    _ => "resume",
                };
                self.run_command(command, "");
                return Some(KeyCommand::None);
            }
            _ => {}
        }
        None
    }

    /// Escape, in pi's order: abort the agent (queued messages go back to the editor),
    /// cancel a `!` command, leave bash mode, or — on an empty editor — a double press
    /// runs `doubleEscapeAction`.
    fn on_escape(&mut self) -> KeyCommand {
        if self.cancel_share() {
            return KeyCommand::None;
        }
        if self.busy || !matches!(self.status, Status::Idle) {
            self.session.abort();
            self.restore_queued_to_editor();
            return KeyCommand::None;
        }
        if self.session.is_bash_running() {
            self.session.abort_bash();
            return KeyCommand::None;
        }
        if self.editor.bash_mode().is_some() {
            self.editor.set_text("");
            return KeyCommand::None;
        }
        if self.editor.is_empty() {
            let now = Instant::now();
            if self
                .last_escape
                .is_some_and(|t| now.duration_since(t) < DOUBLE_PRESS)
            {
                self.last_escape = None;
                return KeyCommand::DoubleEscape;
            }
            self.last_escape = Some(now);
        }
        KeyCommand::None
    }

    /// Puts queued (not yet delivered) messages back into the editor.
    fn restore_queued_to_editor(&mut self) -> usize {
        let queued = self.session.clear_queue();
        if queued.is_empty() {
            return 0;
        }
        let restored = queued.len();
        let mut text = queued.join("\n\n");
        let current = self.editor.text();
        if !current.trim().is_empty() {
            text = format!("{text}\n\n{current}");
        }
        self.editor.set_text(&text);
        restored
    }

    /// A transient message in the status line (replaced by the next one).
    pub fn flash(&mut self, text: String) {
        self.flash = Some((text, Instant::now()));
    }
}

/// Whether the session cycles through a scope of models (`--models`, `enabledModels`).
fn cycles_a_scope(session: &crate::core::agent_session::AgentSession) -> bool {
    !session.scoped_models().is_empty()
}
