//! What extensions ask of the interactive UI (`ctx.ui.*`): dialogs (`select`, `confirm`,
//! `input`, `editor`) shown one at a time in place of the editor, and notices (`notify`,
//! `setStatus`, `setWidget`, `setTitle`, `setEditorText`) applied at once.
//!
//! A dialog that arrives while another dialog (or a picker) is open waits its turn. The
//! reply travels back through the request's [`UiReply`]; closing a dialog without an
//! answer (Escape) drops it, which the extension sees as "cancelled". A dialog whose
//! extension stopped waiting (its timeout passed, or it exited) is closed by itself.

use std::io::Write;

use super::overlay::{InputPurpose, Overlay, SelectPurpose};
use super::state::App;
use crate::extensions::{NotifyLevel, UiMethod, UiRequest, UiResponse};
use crate::modes::interactive::autocomplete::CompletionItem;

/// The options of a `confirm` dialog, in pi's order.
const CONFIRM_OPTIONS: [&str; 2] = ["Yes", "No"];

fn option_items(options: &[String]) -> Vec<CompletionItem> {
    options
        .iter()
        .map(|o| CompletionItem {
            value: o.clone(),
            label: o.replace('\n', " "),
            description: None,
        })
        .collect()
}

impl App {
    /// A request from an extension.
    pub fn on_extension_ui(&mut self, request: UiRequest) {
        self.dirty = true;
        if request.method.is_dialog() {
            self.extension_ui.waiting.push_back(request);
            self.open_waiting_extension_dialog();
            return;
        }
        match request.method {
            UiMethod::Notify { message, level } => match level {
                NotifyLevel::Info => self.notice(message),
                NotifyLevel::Warning => self.notice(format!("Warning: {message}")),
                NotifyLevel::Error => self.notice(format!("Error: {message}")),
            },
            UiMethod::SetStatus { key, text } => {
                match text {
                    Some(text) => self.extension_ui.statuses.insert(key, text),
                    None => self.extension_ui.statuses.remove(&key),
                };
                self.footer_cache = None;
            }
            UiMethod::SetWidget {
                key,
                lines,
                below_editor,
            } => {
                let (this, other) = if below_editor {
                    (
                        &mut self.extension_ui.widgets_below,
                        &mut self.extension_ui.widgets_above,
                    )
                } else {
                    (
                        &mut self.extension_ui.widgets_above,
                        &mut self.extension_ui.widgets_below,
                    )
                };
                other.remove(&key);
                match lines {
                    Some(lines) => this.insert(key, lines),
                    None => this.remove(&key),
                };
            }
            UiMethod::SetTitle { title } => {
                // OSC 0: the terminal window's title; control characters are dropped.
                let clean: String = title.chars().filter(|c| !c.is_control()).collect();
                let mut out = std::io::stdout();
                let _ = write!(out, "\x1b]0;{clean}\x07");
                let _ = out.flush();
            }
            UiMethod::SetEditorText { text } => self.editor.set_text(&text),
            UiMethod::Select { .. }
            | UiMethod::Confirm { .. }
            | UiMethod::Input { .. }
            | UiMethod::Editor { .. } => {}
        }
    }

    /// Shows the next waiting dialog when nothing else is on screen. Called after every
    /// event, so a dialog queued behind a picker appears once the picker closes.
    pub fn open_waiting_extension_dialog(&mut self) {
        self.close_abandoned_extension_dialog();
        if self.overlay.is_some() || self.extension_ui.open.is_some() {
            return;
        }
        while let Some(request) = self.extension_ui.waiting.pop_front() {
            let Some(reply) = request.reply else { continue };
            // The extension may have given up while the dialog waited.
            if reply.is_closed() {
                continue;
            }
            let id = request.id;
            let overlay = match request.method {
                UiMethod::Select { title, options, .. } => Overlay::select(
                    &title,
                    option_items(&options),
                    SelectPurpose::Extension { id: id.clone() },
                ),
                UiMethod::Confirm { title, message, .. } => {
                    let text = if message.is_empty() {
                        title
                    } else {
                        format!("{title}\n{message}")
                    };
                    let options: Vec<String> =
                        CONFIRM_OPTIONS.iter().map(|s| s.to_string()).collect();
                    Overlay::select(
                        &text,
                        option_items(&options),
                        SelectPurpose::ExtensionConfirm { id: id.clone() },
                    )
                }
                UiMethod::Input { title, .. } => Overlay::input(
                    &title,
                    "",
                    self.keys.clone(),
                    InputPurpose::Extension { id: id.clone() },
                ),
                UiMethod::Editor { title, prefill } => {
                    let mut overlay = Overlay::input(
                        &title,
                        prefill.as_deref().unwrap_or(""),
                        self.keys.clone(),
                        InputPurpose::Extension { id: id.clone() },
                    );
                    if let Overlay::Input { editor, .. } = &mut overlay {
                        editor.set_max_rows(12);
                    }
                    overlay
                }
                _ => continue,
            };
            self.overlay = Some(overlay);
            self.extension_ui.open = Some((id, reply));
            self.dirty = true;
            return;
        }
    }

    /// Whether an extension's dialog is on screen (its timeout is watched).
    pub fn extension_dialog_open(&self) -> bool {
        self.extension_ui.open.is_some()
    }

    /// Answers the open dialog `id` (a stale id is ignored).
    pub fn answer_extension_dialog(&mut self, id: &str, response: UiResponse) {
        if let Some((open, _)) = &self.extension_ui.open
            && open == id
            && let Some((_, reply)) = self.extension_ui.open.take()
        {
            reply.send(response);
        }
        self.open_waiting_extension_dialog();
    }

    /// The overlay was closed: if it was an extension dialog, it was cancelled.
    pub fn overlay_closed(&mut self) {
        if self.overlay.is_none() && self.extension_ui.open.take().is_some() {
            // Dropping the reply tells the extension "cancelled".
            self.open_waiting_extension_dialog();
        }
    }

    /// Closes the dialog on screen when its extension no longer waits for it.
    fn close_abandoned_extension_dialog(&mut self) {
        let abandoned = self
            .extension_ui
            .open
            .as_ref()
            .is_some_and(|(_, reply)| reply.is_closed());
        if abandoned {
            self.extension_ui.open = None;
            if self
                .overlay
                .as_ref()
                .is_some_and(Overlay::is_extension_dialog)
            {
                self.overlay = None;
            }
            self.dirty = true;
        }
    }
}
