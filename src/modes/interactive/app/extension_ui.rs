//! What extensions ask of the interactive UI (`ctx.ui.*`): dialogs (`select`, `confirm`,
//! `input`, `editor`) shown one at a time in place of the editor, and notices (`notify`,
//! `setStatus`, `setWidget`, `setTitle`, `setEditorText`) applied at once.
//!
//! A dialog that arrives while another dialog (or a picker) is open waits its turn. The
//! reply travels back through the request's [`UiReply`]; closing a dialog without an
//! answer (Escape) drops it, which the extension sees as "cancelled". A dialog whose
//! extension stopped waiting (its timeout passed, or it exited) is closed by itself.

use std::io::Write;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::json;

use super::overlay::{InputPurpose, Overlay, SelectPurpose};
use super::state::{App, CustomView};
use crate::extensions::{NotifyLevel, UiMethod, UiRequest, UiResponse};
use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::keys::{Action, KeySpec};

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
            UiMethod::SetEditorText { text } => self.editor.set_text(&text),
            UiMethod::CustomRender { custom_id, lines } => {
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
            UiMethod::Custom { .. }
            | UiMethod::Select { .. }
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
                UiMethod::Custom {
                    custom_id,
                    lines,
                    input,
                } => {
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
        let wanted = self.session.settings().theme().map(str::to_string);
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
        let ui = &mut self.extension_ui;
        ui.statuses.clear();
        ui.widgets_above.clear();
        ui.widgets_below.clear();
        ui.component_widgets.clear();
        ui.footer = None;
        ui.working_message = None;
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
        Some(
            lines
                .iter()
                .map(|line| {
                    crate::modes::interactive::text::truncate_line(
                        ansi_line(line),
                        width,
                        Span::raw(""),
                    )
                })
                .collect(),
        )
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
            return lines
                .iter()
                .map(|line| {
                    crate::modes::interactive::text::truncate_line(
                        ansi_line(line),
                        width,
                        Span::raw(""),
                    )
                })
                .collect();
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
        Some(
            view.lines
                .iter()
                .map(|line| {
                    crate::modes::interactive::text::truncate_line(
                        ansi_line(line),
                        width,
                        Span::raw(""),
                    )
                })
                .collect(),
        )
    }
}

/// A key as the bytes a terminal sends for it (what pi-tui's `matchesKey` reads); `None`
/// for keys with no such encoding.
pub fn key_sequence(key: &KeyEvent) -> Option<String> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let base = match key.code {
        KeyCode::Char(c) if ctrl && c.is_ascii_alphabetic() => {
            ((c.to_ascii_lowercase() as u8 - b'a' + 1) as char).to_string()
        }
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "\r".to_string(),
        KeyCode::Tab => "\t".to_string(),
        KeyCode::BackTab => "\x1b[Z".to_string(),
        KeyCode::Backspace => "\x7f".to_string(),
        KeyCode::Esc => "\x1b".to_string(),
        KeyCode::Up if shift => "\x1b[1;2A".to_string(),
        KeyCode::Down if shift => "\x1b[1;2B".to_string(),
        KeyCode::Up => "\x1b[A".to_string(),
        KeyCode::Down => "\x1b[B".to_string(),
        KeyCode::Right => "\x1b[C".to_string(),
        KeyCode::Left => "\x1b[D".to_string(),
        KeyCode::Home => "\x1b[H".to_string(),
        KeyCode::End => "\x1b[F".to_string(),
        KeyCode::Delete => "\x1b[3~".to_string(),
        KeyCode::PageUp => "\x1b[5~".to_string(),
        KeyCode::PageDown => "\x1b[6~".to_string(),
        _ => return None,
    };
    Some(if alt { format!("\x1b{base}") } else { base })
}

/// One line of a component's output: SGR colour and style codes become styles, other
/// escape sequences and control characters are dropped.
pub fn ansi_line(text: &str) -> Line<'static> {
    let mut spans = Vec::new();
    let mut style = Style::default();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            if !c.is_control() {
                current.push(c);
            }
            continue;
        }
        if chars.peek() != Some(&'[') {
            // OSC and other sequences: leave the rest of the line's text intact.
            let rest: String = std::iter::once(c).chain(chars.by_ref()).collect();
            current.push_str(&crate::modes::interactive::text::sanitize(&rest));
            break;
        }
        chars.next();
        let mut params = String::new();
        let mut last = None;
        for p in chars.by_ref() {
            if ('\u{40}'..='\u{7e}').contains(&p) {
                last = Some(p);
                break;
            }
            params.push(p);
        }
        if last != Some('m') {
            continue;
        }
        if !current.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut current), style));
        }
        style = apply_sgr(style, &params);
    }
    if !current.is_empty() {
        spans.push(Span::styled(current, style));
    }
    Line::from(spans)
}

fn apply_sgr(mut style: Style, params: &str) -> Style {
    let codes: Vec<u16> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
    let mut i = 0;
    while i < codes.len() {
        let code = codes[i];
        match code {
            0 => style = Style::default(),
            1 => style = style.add_modifier(Modifier::BOLD),
            2 => style = style.add_modifier(Modifier::DIM),
            3 => style = style.add_modifier(Modifier::ITALIC),
            4 => style = style.add_modifier(Modifier::UNDERLINED),
            7 => style = style.add_modifier(Modifier::REVERSED),
            9 => style = style.add_modifier(Modifier::CROSSED_OUT),
            22 => style = style.remove_modifier(Modifier::BOLD | Modifier::DIM),
            23 => style = style.remove_modifier(Modifier::ITALIC),
            24 => style = style.remove_modifier(Modifier::UNDERLINED),
            27 => style = style.remove_modifier(Modifier::REVERSED),
            29 => style = style.remove_modifier(Modifier::CROSSED_OUT),
            30..=37 => style = style.fg(Color::Indexed((code - 30) as u8)),
            90..=97 => style = style.fg(Color::Indexed((code - 90 + 8) as u8)),
            40..=47 => style = style.bg(Color::Indexed((code - 40) as u8)),
            100..=107 => style = style.bg(Color::Indexed((code - 100 + 8) as u8)),
            39 => style.fg = None,
            49 => style.bg = None,
            38 | 48 => {
                let color = match codes.get(i + 1) {
                    Some(5) => {
                        let n = codes.get(i + 2).copied().unwrap_or(0);
                        i += 2;
                        Color::Indexed(n.min(255) as u8)
                    }
                    Some(2) => {
                        let get = |k: usize| codes.get(i + k).copied().unwrap_or(0).min(255) as u8;
                        let color = Color::Rgb(get(2), get(3), get(4));
                        i += 4;
                        color
                    }
                    _ => {
                        i += 2;
                        continue;
                    }
                };
                style = if code == 38 {
                    style.fg(color)
                } else {
                    style.bg(color)
                };
            }
            _ => {}
        }
        i += 1;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_terminal_sequences() {
        let key = |code, modifiers| KeyEvent::new(code, modifiers);
        assert_eq!(
            key_sequence(&key(KeyCode::Up, KeyModifiers::NONE)).as_deref(),
            Some("\x1b[A")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)).as_deref(),
            Some("\x03")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Esc, KeyModifiers::NONE)).as_deref(),
            Some("\x1b")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Char('x'), KeyModifiers::ALT)).as_deref(),
            Some("\x1bx")
        );
        assert_eq!(key_sequence(&key(KeyCode::F(5), KeyModifiers::NONE)), None);
    }

    #[test]
    fn sgr_codes_become_styles() {
        let line = ansi_line("a\x1b[1;38;2;255;0;0mred\x1b[0m b\x1b[32mg\x1b[39m");
        let spans: Vec<(String, Style)> = line
            .spans
            .iter()
            .map(|s| (s.content.to_string(), s.style))
            .collect();
        assert_eq!(
            spans,
            vec![
                ("a".to_string(), Style::default()),
                (
                    "red".to_string(),
                    Style::default()
                        .add_modifier(Modifier::BOLD)
                        .fg(Color::Rgb(255, 0, 0))
                ),
                (" b".to_string(), Style::default()),
                ("g".to_string(), Style::default().fg(Color::Indexed(2))),
            ]
        );
    }
}
