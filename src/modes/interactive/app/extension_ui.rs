//! What extensions ask of the interactive UI (`ctx.ui.*`): dialogs (`select`, `confirm`,
//! `input`, `editor`) shown one at a time in place of the editor, and notices (`notify`,
//! `setStatus`, `setWidget`, `setTitle`, `setEditorText`) applied at once.
//!
//! A dialog that arrives while another dialog (or a picker) is open waits its turn. The
//! reply travels back through the request's [`UiReply`]; closing a dialog without an
//! answer (Escape) drops it, which the extension sees as "cancelled". A dialog whose
//! extension stopped waiting (its timeout passed, or it exited) is closed by itself.

use std::io::Write;

use crossterm::event::KeyEvent;
use ratatui::text::{Line, Span};
use serde_json::json;

use super::input::KeyCommand;
use super::overlay::{InputPurpose, Overlay, SelectPurpose};
use super::state::{App, CustomView, ExtensionEditor};
use crate::extensions::{NotifyLevel, UiMethod, UiRequest, UiResponse};
pub use crate::modes::interactive::ansi::ansi_line;
use crate::modes::interactive::autocomplete::{CompletionItem, Suggestions};
use crate::modes::interactive::editor::CompletionQuery;
use crate::modes::interactive::keys::{Action, KeySpec};

/// How long one extension may take to answer a completion request (its argument
/// completions, or its provider chain). Typing never waits for it; a later answer is
/// dropped.
pub const EXTENSION_COMPLETION_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// `/name args…` before the cursor on the first line: the command and the argument text.
fn command_argument_context(query: &CompletionQuery) -> Option<(String, String)> {
    if query.line != 0 {
        return None;
    }
    let line = query.lines.first()?;
    let before = line.get(..query.col)?.trim_start();
    let rest = before.strip_prefix('/')?;
    let (name, args) = rest.split_once(' ')?;
    Some((name.to_string(), args.to_string()))
}

/// Completion items as an extension sent them (`[{value, label, description?}]`).
fn completion_items(value: &serde_json::Value) -> Vec<CompletionItem> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| {
                    let value = item.get("value")?.as_str()?.to_string();
                    Some(CompletionItem {
                        label: item
                            .get("label")
                            .and_then(|l| l.as_str())
                            .map_or_else(|| value.clone(), str::to_string),
                        description: item
                            .get("description")
                            .and_then(|d| d.as_str())
                            .map(str::to_string),
                        value,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A provider chain's answer (`{items, prefix}` or null).
fn suggestions_from(value: &serde_json::Value) -> Option<Suggestions> {
    let items = completion_items(value.get("items")?);
    let prefix = value.get("prefix")?.as_str()?.to_string();
    Some(Suggestions { items, prefix })
}

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
    /// A request from an extension; what its editor asked of the app (submit, an app
    /// action) comes back as a key command for the event loop.
    pub fn on_extension_ui(&mut self, request: UiRequest) -> KeyCommand {
        self.dirty = true;
        let request = match self.on_ext_overlay_request(request) {
            Some(request) => request,
            None => return KeyCommand::None,
        };
        if request.method.is_dialog() {
            self.extension_ui.waiting.push_back(request);
            self.open_waiting_extension_dialog();
            return KeyCommand::None;
        }
        match request.method {
            UiMethod::SetWorkingVisible { visible } => {
                self.extension_ui.working_hidden = !visible;
            }
            UiMethod::SetWorkingIndicator { indicator } => {
                self.extension_ui.working_indicator =
                    indicator.map(|indicator| (indicator, std::time::Instant::now()));
            }
            UiMethod::SetEditorComponent { lines, text, input } => {
                match (lines, input) {
                    (Some(lines), Some(input)) => {
                        // The extension's editor starts with pi-rs's text (pi copies it).
                        self.extension_ui.editor = Some(ExtensionEditor {
                            owner: request.extension_path.clone(),
                            lines,
                            text,
                            input,
                        });
                        self.sync_extension_editor_text();
                    }
                    _ => {
                        // pi's editor again, with the text of the editor that goes.
                        if let Some(old) = self.extension_ui.editor.take()
                            && old.owner == request.extension_path
                        {
                            self.editor.set_text(&text);
                        }
                    }
                }
            }
            UiMethod::EditorRender { lines, text } => {
                if let Some(editor) = self.extension_ui.editor.as_mut()
                    && editor.owner == request.extension_path
                {
                    editor.lines = lines;
                    if editor.text != text {
                        editor.text = text.clone();
                        self.editor.set_text(&text);
                    }
                }
            }
            UiMethod::EditorSubmit { text } => {
                if self.extension_editor_from(&request.extension_path) {
                    // pi's submit handler: empty prompts are ignored.
                    self.editor.set_text("");
                    if let Some(editor) = self.extension_ui.editor.as_mut() {
                        editor.text.clear();
                    }
                    if !text.trim().is_empty() {
                        self.editor.add_to_history(&text);
                        return KeyCommand::Submit(text);
                    }
                }
            }
            UiMethod::EditorAction { action } => {
                if self.extension_editor_from(&request.extension_path)
                    && let Some(action) = Action::from_id(&action)
                {
                    let command = self.run_app_action(action).unwrap_or(KeyCommand::None);
                    self.sync_extension_editor_text();
                    return command;
                }
            }
            UiMethod::AddAutocompleteProvider => {
                if !self
                    .extension_ui
                    .completion_providers
                    .contains(&request.extension_path)
                {
                    self.extension_ui
                        .completion_providers
                        .push(request.extension_path.clone());
                }
                self.refresh_autocomplete();
            }
            UiMethod::TerminalInput { listening } => {
                let listeners = &mut self.extension_ui.input_listeners;
                listeners.retain(|p| *p != request.extension_path);
                if listening {
                    listeners.push(request.extension_path.clone());
                }
            }
            _ => self.on_extension_notice(request),
        }
        KeyCommand::None
    }

    /// What raw terminal input goes through before pi-rs handles it: the extensions
    /// with `ctx.ui.onTerminalInput` listeners and the host to ask (none: nothing to do).
    pub fn terminal_input_filter(
        &self,
    ) -> Option<(crate::extensions::ExtensionHost, Vec<std::path::PathBuf>)> {
        if self.extension_ui.input_listeners.is_empty() {
            return None;
        }
        let host = self.session.extension_host()?;
        Some((host, self.extension_ui.input_listeners.clone()))
    }

    /// Passes the editor's last completion request on to the extensions, without
    /// waiting: first the argument completions of an extension command (`/name args`),
    /// then each extension's provider chain, which gets the suggestions so far as its
    /// base. The answer is shown if the editor has not changed meanwhile. Each
    /// extension gets [`EXTENSION_COMPLETION_BOUND`]; one that does not answer in time
    /// (or fails) leaves the suggestions as they were.
    pub(super) fn ask_extension_completion(&mut self) {
        let Some(query) = self.editor.take_completion_query() else {
            return;
        };
        let Some(host) = self.session.extension_host() else {
            return;
        };
        let providers = self.extension_ui.completion_providers.clone();
        let arguments = command_argument_context(&query).filter(|(name, _)| {
            self.session
                .extension_commands()
                .iter()
                .any(|c| c.invocation_name == *name && c.argument_completions)
        });
        if providers.is_empty() && arguments.is_none() {
            return;
        }
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut current = query.base.clone();
            if let Some((name, prefix)) = arguments {
                let items = host
                    .complete_arguments(&name, &prefix, EXTENSION_COMPLETION_BOUND)
                    .await;
                current = items
                    .map(|items| completion_items(&items))
                    .filter(|items| !items.is_empty())
                    .map(|items| Suggestions { items, prefix });
            }
            let line = query
                .lines
                .get(query.line)
                .map(String::as_str)
                .unwrap_or("");
            let cursor_col = line[..query.col.min(line.len())].encode_utf16().count();
            for path in providers {
                let base = current.as_ref().map(|s| {
                    json!({"items": s.items.iter().map(|i| json!({
                        "value": i.value, "label": i.label, "description": i.description,
                    })).collect::<Vec<_>>(), "prefix": s.prefix})
                });
                let request = json!({
                    "lines": query.lines, "cursorLine": query.line, "cursorCol": cursor_col,
                    "force": query.force, "base": base,
                });
                if let Some(answer) = host
                    .autocomplete(&path, &request, EXTENSION_COMPLETION_BOUND)
                    .await
                {
                    current = suggestions_from(&answer);
                }
            }
            let _ = tx.send(super::msg::AppMsg::ExtensionCompletions(query, current));
        });
    }

    /// Whether the editor on screen is the one extension `path` set.
    fn extension_editor_from(&self, path: &std::path::Path) -> bool {
        self.extension_ui
            .editor
            .as_ref()
            .is_some_and(|editor| editor.owner == path)
    }

    /// The frame of an extension's working indicator to draw now (pi's Loader: frames
    /// in turn every `intervalMs`, 80 ms by default; no frames: no indicator).
    pub(super) fn working_indicator_frame(&self) -> Option<Vec<Span<'static>>> {
        let (indicator, since) = self.extension_ui.working_indicator.as_ref()?;
        let Some(frames) = indicator.frames.as_ref() else {
            // Options without frames keep pi's spinner frames, drawn verbatim.
            let spinner = crate::modes::interactive::components::SPINNER;
            let interval = indicator.interval_ms.filter(|ms| *ms > 0).unwrap_or(80);
            let index = (since.elapsed().as_millis() / u128::from(interval)) as usize;
            return Some(vec![Span::raw(spinner[index % spinner.len()])]);
        };
        if frames.is_empty() {
            return Some(Vec::new());
        }
        let interval = indicator.interval_ms.filter(|ms| *ms > 0).unwrap_or(80);
        let index = if frames.len() == 1 {
            0
        } else {
            (since.elapsed().as_millis() / u128::from(interval)) as usize % frames.len()
        };
        Some(ansi_line(&frames[index]).spans)
    }

    /// pi's app keybindings as configured (`app.*` id → key ids), for the keybindings
    /// manager an extension's editor gets.
    fn app_keys(&self) -> serde_json::Value {
        let mut keys = serde_json::Map::new();
        for action in Action::ALL {
            if action.id().starts_with("app.") {
                let list: Vec<String> = self
                    .keys
                    .keys(*action)
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                keys.insert(action.id().to_string(), json!(list));
            }
        }
        serde_json::Value::Object(keys)
    }

    /// The colour token of the editor's border now (thinking level, bash mode).
    fn editor_border_token(&self) -> crate::modes::interactive::theme::ThemeToken {
        crate::modes::interactive::editor::border_token(
            self.session.thinking_level(),
            self.editor.bash_mode(),
        )
    }

    /// Whether an extension's editor replaces pi-rs's (`ctx.ui.setEditorComponent`).
    pub fn extension_editor_active(&self) -> bool {
        self.extension_ui.editor.is_some()
    }

    /// Sends a key (raw terminal input) to the extension's editor.
    pub(super) fn send_to_extension_editor(&mut self, data: &str) {
        let width = self.width();
        if let Some(editor) = &self.extension_ui.editor {
            editor.input.send_editor_input(data, width);
        }
    }

    /// pi-rs's editor mirrors the extension editor's text; when an app action changed it
    /// (Ctrl+C clears, Alt+Up restores queued messages, …), the extension's editor gets
    /// the new text.
    pub(super) fn sync_extension_editor_text(&mut self) {
        let text = self.editor.text();
        if let Some(editor) = self.extension_ui.editor.as_mut()
            && editor.text != text
        {
            editor.input.send_editor_text(&text);
            editor.text = text;
        }
    }

    /// The extension editor's lines, for the view.
    pub(super) fn extension_editor_lines(&self, width: usize) -> Option<Vec<Line<'static>>> {
        let editor = self.extension_ui.editor.as_ref()?;
        Some(component_lines(&editor.lines, width))
    }

    /// Notices that change what is on screen at once.
    fn on_extension_notice(&mut self, request: UiRequest) {
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
                component,
            } => {
                if component && lines.is_some() {
                    self.extension_ui.component_widgets.insert(key.clone());
                } else {
                    self.extension_ui.component_widgets.remove(&key);
                }
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
                other.retain(|(k, _)| *k != key);
                this.retain(|(k, _)| *k != key);
                if let Some(lines) = lines {
                    this.push((key, lines));
                }
            }
            UiMethod::SetTitle { title } => {
                // OSC 0: the terminal window's title; control characters are dropped.
                let clean: String = title.chars().filter(|c| !c.is_control()).collect();
                let mut out = std::io::stdout();
                let _ = write!(out, "\x1b]0;{clean}\x07");
                let _ = out.flush();
            }
            UiMethod::SetEditorText { text } => {
                self.editor.set_text(&text);
                self.sync_extension_editor_text();
            }
            UiMethod::CustomRender {
                custom_id, lines, ..
            } => {
                if let Some(view) = self.extension_ui.custom.as_mut()
                    && view.custom_id == custom_id
                {
                    view.lines = lines;
                }
            }
            UiMethod::CustomClose { custom_id } => {
                if self
                    .extension_ui
                    .custom
                    .as_ref()
                    .is_some_and(|view| view.custom_id == custom_id)
                {
                    self.extension_ui.custom = None;
                    // The host has resolved the promise itself; this answer is ignored.
                    if let Some((_, reply)) = self.extension_ui.open.take() {
                        reply.send(UiResponse::Cancelled);
                    }
                    self.open_waiting_extension_dialog();
                }
            }
            UiMethod::SetFooter { lines } => {
                self.extension_ui.footer = lines.map(|l| (request.extension_path.clone(), l));
            }
            UiMethod::SetHeader { lines } => {
                let custom: Option<Vec<Line<'static>>> =
                    lines.map(|l| l.iter().map(|line| ansi_line(line)).collect());
                if custom != self.header.custom {
                    self.extension_ui.header_owner =
                        custom.as_ref().map(|_| request.extension_path.clone());
                    self.header.custom = custom;
                    // The header is in the scrollback: print everything again (pi
                    // redraws the whole screen when lines above the viewport change).
                    if self.header_written {
                        self.full_redraw = true;
                    }
                }
            }
            UiMethod::SetTheme { name, persist } => self.set_theme_from_extension(&name, persist),
            UiMethod::SetWorkingMessage { message } => {
                // The status line has its own colours: the text is kept, its escapes not.
                self.extension_ui.working_message =
                    message.map(|m| crate::modes::interactive::text::line_text(&ansi_line(&m)));
            }
            UiMethod::SetHiddenThinkingLabel { label } => {
                let label = label.unwrap_or_else(|| {
                    crate::modes::interactive::components::assistant_message::DEFAULT_HIDDEN_THINKING_LABEL
                        .to_string()
                });
                if label != self.transcript.hidden_thinking_label() {
                    self.transcript.set_hidden_thinking_label(&label);
                    self.full_redraw = true;
                }
            }
            UiMethod::SetToolsExpanded { expanded } => self.set_tools_expanded(expanded),
            UiMethod::RenderInvalidate { tool_call_id } => {
                // pi's `context.invalidate()`: the box is drawn again (a new version
                // makes its extension render it again).
                if let Some(index) = self.tool_item_index(&tool_call_id) {
                    self.transcript.update_at(index, |_| {});
                }
            }
            UiMethod::Custom { .. }
            | UiMethod::OverlayShow { .. }
            | UiMethod::OverlayHandle { .. }
            | UiMethod::Select { .. }
            | UiMethod::Confirm { .. }
            | UiMethod::Input { .. }
            | UiMethod::Editor { .. }
            | UiMethod::SetWorkingVisible { .. }
            | UiMethod::SetWorkingIndicator { .. }
            | UiMethod::SetEditorComponent { .. }
            | UiMethod::EditorRender { .. }
            | UiMethod::EditorSubmit { .. }
            | UiMethod::EditorAction { .. }
            | UiMethod::AddAutocompleteProvider
            | UiMethod::TerminalInput { .. } => {}
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
                UiMethod::Custom {
                    custom_id,
                    lines,
                    input,
                    ..
                } => {
                    // pi's TUI focuses the component (`focused = true` on a Focusable),
                    // so an input in it shows its cursor marker.
                    if let Some(input) = &input {
                        input.set_focused(true);
                    }
                    self.extension_ui.custom = Some(CustomView {
                        custom_id,
                        lines,
                        input,
                    });
                    self.extension_ui.open = Some((id, reply));
                    self.dirty = true;
                    return;
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
            self.extension_ui.custom = None;
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

/// pi's editor-global actions an extension shortcut may not take over (a shortcut on one
/// of their keys is skipped).
const RESERVED_ACTIONS: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

impl App {
    /// The extensions' keyboard shortcuts that are bound: those on a key of a reserved
    /// action are left out, as pi skips them.
    pub fn extension_shortcuts(&self) -> Vec<crate::extensions::ShortcutInfo> {
        let Some(host) = self.session.extension_host() else {
            return Vec::new();
        };
        host.shortcuts()
            .into_iter()
            .filter(|s| {
                let Ok(spec) = s.key.parse::<KeySpec>() else {
                    return false;
                };
                !RESERVED_ACTIONS.iter().any(|id| {
                    Action::from_id(id).is_some_and(|a| self.keys.keys(a).contains(&spec))
                })
            })
            .collect()
    }

    /// Runs the extension shortcut bound to `key`, if any (pi checks them before the
    /// editor's own keys). The handler runs in the background; its failure is shown.
    pub(super) fn run_extension_shortcut(&mut self, key: &KeyEvent) -> bool {
        let Some(shortcut) = self
            .extension_shortcuts()
            .into_iter()
            .find(|s| s.key.parse::<KeySpec>().is_ok_and(|spec| spec.matches(key)))
        else {
            return false;
        };
        let Some(host) = self.session.extension_host() else {
            return false;
        };
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Err(crate::extensions::CommandError::Failed(e)) =
                host.run_shortcut(&shortcut.key).await
            {
                let _ = tx.send(super::msg::AppMsg::Error(format!(
                    "Shortcut handler error: {e}"
                )));
            }
        });
        true
    }

    /// Whether an extension's component is on screen outside dialogs (footer, header or
    /// a component widget): those are rendered again when the footer data changes.
    fn live_extension_components(&self) -> bool {
        self.extension_ui.footer.is_some()
            || self.extension_ui.header_owner.is_some()
            || !self.extension_ui.component_widgets.is_empty()
    }

    /// The footer data changed (it was computed again): live components render again.
    pub(super) fn footer_data_changed(&mut self) {
        if self.live_extension_components() {
            self.extension_ui.revision += 1;
        }
    }

    /// Sends `ui_state` to the extensions when something they render with changed: the
    /// terminal size, the theme (its colours only when it changed), the git branch,
    /// the extension statuses, the provider count, or the footer data (`revision`).
    /// Nothing waits for their new lines.
    pub(super) fn sync_extension_ui_state(&mut self) {
        let Some(host) = self.session.extension_host() else {
            return;
        };
        self.refresh_extension_themes();
        let state = json!({
            "themesRevision": self.extension_themes_seen,
            "width": self.width(),
            "rows": self.height(),
            "gitBranch": self.git_branch,
            "statuses": self.extension_ui.statuses,
            "providerCount": self.provider_count,
            "revision": self.extension_ui.revision,
            "editorBorder": self.editor_border_token().name(),
            "appKeys": self.app_keys(),
            "toolsExpanded": self.transcript.expanded(),
        });
        let generation = self.theme.generation();
        let theme_changed = match &self.extension_ui.sent_state {
            Some((sent, sent_generation)) => {
                if *sent == state && *sent_generation == generation {
                    return;
                }
                *sent_generation != generation
            }
            None => true,
        };
        let themes_changed = self
            .extension_ui
            .sent_state
            .as_ref()
            .is_none_or(|(sent, _)| sent.get("themesRevision") != state.get("themesRevision"));
        let mut message = state.clone();
        if theme_changed {
            message["theme"] = crate::modes::theme::extension_theme_spec(&self.theme);
        }
        if theme_changed || themes_changed {
            message["themes"] = self.extension_theme_list();
        }
        host.send_ui_state(&message);
        self.extension_ui.sent_state = Some((state, generation));
    }

    /// Every theme an extension may ask for (`ctx.ui.getAllThemes`, `getTheme`): name,
    /// file (none for the built-in ones) and colours, in the terminal's colour mode.
    fn extension_theme_list(&self) -> serde_json::Value {
        let mode = self.theme.mode();
        let dir = self.session.paths().themes();
        let list: Vec<serde_json::Value> = self
            .themes
            .names()
            .into_iter()
            .filter_map(|name| {
                let theme = self.themes.theme(&name, &dir, mode).ok()?;
                Some(json!({
                    "name": name,
                    "path": theme.source().map(|p| p.display().to_string()),
                    "spec": crate::modes::theme::extension_theme_spec(&theme),
                }))
            })
            .collect();
        serde_json::Value::Array(list)
    }

    /// The extensions named other theme files (`resources_discover`): the theme list is
    /// read again; when the theme the settings name has just become available, it is
    /// used.
    fn refresh_extension_themes(&mut self) {
        let revision = self.session.extension_theme_files().1;
        if revision == self.extension_themes_seen {
            return;
        }
        self.extension_themes_seen = revision;
        let mode = self.theme.mode();
        self.themes = super::reload::theme_catalog(&self.session, mode);
        let setting = self
            .theme_override
            .clone()
            .or_else(|| self.session.settings().theme().map(str::to_string));
        let wanted = setting.as_deref().map(|s| {
            crate::modes::interactive::theme::resolve_theme_setting(Some(s), |k| {
                std::env::var(k).ok()
            })
            .unwrap_or_else(|(_, fallback)| fallback)
        });
        if let Some(name) = wanted
            && name != self.theme.name()
            && let Ok(theme) = self
                .themes
                .theme(&name, &self.session.paths().themes(), mode)
        {
            self.theme = theme;
            self.full_redraw = true;
        }
    }

    /// `ctx.ui.setTheme`: pi switches at once; by name the choice is saved in the
    /// settings, and a name that does not load falls back to the built-in dark theme
    /// (without saving), as pi does.
    pub(super) fn set_theme_from_extension(&mut self, name: &str, persist: bool) {
        let mode = self.theme.mode();
        match self
            .themes
            .theme(name, &self.session.paths().themes(), mode)
        {
            Ok(theme) => {
                self.theme = theme;
                if persist
                    && self.session.settings().theme() != Some(name)
                    && let Err(e) = self
                        .session
                        .set_global_setting(&["theme"], serde_json::Value::from(name))
                {
                    self.notice(e);
                }
            }
            Err(_) => self.theme = crate::modes::interactive::theme::Theme::dark(mode),
        }
        self.full_redraw = true;
        self.footer_cache = None;
    }

    /// A footer or header whose extension stopped (crashed, or was shut down) gives way
    /// to the built-in one, with one warning.
    pub(super) fn drop_stopped_extension_ui(&mut self) {
        let Some(host) = self.session.extension_host() else {
            return;
        };
        if let Some((path, _)) = &self.extension_ui.footer
            && !host.is_running(path)
        {
            let path = path.clone();
            self.extension_ui.footer = None;
            self.notice(format!(
                "Warning: extension {} stopped; showing the built-in footer",
                path.display()
            ));
        }
        if let Some(editor) = &self.extension_ui.editor
            && !host.is_running(&editor.owner)
        {
            let path = editor.owner.clone();
            self.extension_ui.editor = None;
            self.notice(format!(
                "Warning: extension {} stopped; showing the built-in editor",
                path.display()
            ));
        }
        if let Some(path) = &self.extension_ui.header_owner
            && !host.is_running(path)
        {
            let path = path.clone();
            self.extension_ui.header_owner = None;
            self.header.custom = None;
            self.full_redraw = true;
            self.notice(format!(
                "Warning: extension {} stopped; showing the built-in header",
                path.display()
            ));
        }
    }

    /// Forgets what the extensions of the previous host put on screen (`/reload`, a new
    /// host): footer, header, widgets and statuses, as pi resets its extension UI.
    pub(super) fn reset_extension_ui(&mut self) {
        self.clear_ext_overlays();
        let ui = &mut self.extension_ui;
        ui.statuses.clear();
        ui.widgets_above.clear();
        ui.widgets_below.clear();
        ui.component_widgets.clear();
        ui.footer = None;
        ui.working_message = None;
        ui.working_hidden = false;
        ui.working_indicator = None;
        ui.editor = None;
        ui.completion_providers.clear();
        ui.input_listeners.clear();
        ui.sent_state = None;
        if ui.header_owner.take().is_some() {
            self.header.custom = None;
            self.full_redraw = true;
        }
        self.footer_cache = None;
    }

    /// The extension footer's lines, when an extension replaced the footer.
    pub(super) fn extension_footer_lines(&self, width: usize) -> Option<Vec<Line<'static>>> {
        let (_, lines) = self.extension_ui.footer.as_ref()?;
        Some(component_lines(lines, width))
    }

    /// A widget's lines as pi shows them: a component's lines as rendered; a list of
    /// strings as pi's `Text` lines (one column of padding, wrapped), colours kept.
    pub(super) fn extension_widget_lines(
        &self,
        key: &str,
        lines: &[String],
        width: usize,
    ) -> Vec<Line<'static>> {
        if self.extension_ui.component_widgets.contains(key) {
            return component_lines(lines, width);
        }
        lines
            .iter()
            .flat_map(|line| {
                crate::modes::interactive::components::text_block(
                    vec![ansi_line(line).spans],
                    width,
                    1,
                )
            })
            .collect()
    }

    /// Whether a custom component takes the keys (it is on screen in place of the editor).
    pub fn custom_component_open(&self) -> bool {
        self.extension_ui.custom.is_some()
    }

    /// Sends a key (or pasted text) to the custom component on screen, as the raw
    /// terminal input pi-tui components read.
    pub fn send_to_custom_component(&mut self, data: &str) {
        let width = self.width();
        if let Some(input) = self
            .extension_ui
            .custom
            .as_ref()
            .and_then(|view| view.input.as_ref())
        {
            input.send(data, width);
        }
    }

    /// The custom component's lines, with their colours, for the view.
    pub fn custom_component_lines(&self, width: usize) -> Option<Vec<Line<'static>>> {
        let view = self.extension_ui.custom.as_ref()?;
        Some(component_lines(&view.lines, width))
    }

    /// Where an extension's component shown in place of the editor (`ctx.ui.custom`)
    /// put pi-tui's `CURSOR_MARKER`: the terminal cursor goes there (for input methods).
    pub fn custom_component_cursor(&self, width: usize) -> Option<(usize, usize)> {
        marker_position(&self.extension_ui.custom.as_ref()?.lines, width)
    }

    /// The same for an extension's editor (`ctx.ui.setEditorComponent`).
    pub fn extension_editor_cursor(&self, width: usize) -> Option<(usize, usize)> {
        marker_position(&self.extension_ui.editor.as_ref()?.lines, width)
    }
}

/// pi-tui's `CURSOR_MARKER`: a focused component puts it where the cursor belongs.
const CURSOR_MARKER: &str = "\x1b_pi:c\x07";

/// The (row, column) of the last `CURSOR_MARKER` in a component's lines, as pi-tui finds
/// it (from the bottom; the column is the width of what comes before it, within `width`).
pub fn marker_position(lines: &[String], width: usize) -> Option<(usize, usize)> {
    lines.iter().enumerate().rev().find_map(|(row, line)| {
        let at = line.find(CURSOR_MARKER)?;
        let before = crate::modes::interactive::text::line_width(&ansi_line(&line[..at]));
        Some((row, before.min(width.saturating_sub(1))))
    })
}

/// A component's rendered lines (ANSI) as styled lines cut to `width`, as pi-tui draws
/// what a component returns.
fn component_lines(lines: &[String], width: usize) -> Vec<Line<'static>> {
    lines
        .iter()
        .map(|line| {
            crate::modes::interactive::text::truncate_line(ansi_line(line), width, Span::raw(""))
        })
        .collect()
}
