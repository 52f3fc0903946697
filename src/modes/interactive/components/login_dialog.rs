//! pi's login dialog, shown in place of the editor while a provider is set up: a title,
//! then what the sign-in flow asks to show (the address to open, instructions, progress)
//! and, when it waits for the user, a one-line input. Enter hands the input to the flow
//! (for an API key, to the app); Escape cancels.

use crossterm::event::KeyEvent;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use tokio::sync::mpsc;

use super::line_input::{InputChange, LineInput};
use super::{Ui, rule, styled_text};
use crate::ai::oauth::login::LoginEvent;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::theme::ThemeToken;

/// One row of the dialog's content.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Blank,
    Text(String, ThemeToken),
    /// The input field.
    Input,
    /// A key hint: `(esc to cancel)` or `(esc to cancel, enter to submit)`.
    Hint {
        submit: bool,
    },
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginDialogOutcome {
    Handled,
    Ignored,
    /// Enter with the input shown (for an API key dialog: the key typed).
    Submitted(String),
    Cancelled,
}

#[derive(Debug)]
pub struct LoginDialog {
    pub provider: String,
    pub provider_name: String,
    title: String,
    rows: Vec<Row>,
    input: LineInput,
    /// Where Enter sends the input while an OAuth flow runs; `None` for an API key.
    to_flow: Option<mpsc::UnboundedSender<String>>,
}

impl LoginDialog {
    /// The dialog of an OAuth flow that reads its input from `to_flow`'s receiver.
    pub fn oauth(provider: &str, name: &str, to_flow: mpsc::UnboundedSender<String>) -> Self {
        Self {
            provider: provider.to_string(),
            provider_name: name.to_string(),
            title: format!("Login to {name}"),
            rows: Vec::new(),
            input: LineInput::new(),
            to_flow: Some(to_flow),
        }
    }

    /// The API key dialog: "Enter API key:" and the input.
    pub fn api_key(provider: &str, name: &str) -> Self {
        let mut dialog = Self {
            provider: provider.to_string(),
            provider_name: name.to_string(),
            title: format!("Login to {name}"),
            rows: Vec::new(),
            input: LineInput::new(),
            to_flow: None,
        };
        dialog.prompt("Enter API key:", None);
        dialog
    }

    /// An information dialog (pi's `showInfo`): a title and lines of text, Escape closes it.
    pub fn info(provider: &str, name: &str, title: &str, lines: Vec<(String, ThemeToken)>) -> Self {
        let mut rows = vec![Row::Blank];
        rows.extend(
            lines
                .into_iter()
                .map(|(text, token)| Row::Text(text, token)),
        );
        rows.push(Row::Hint { submit: false });
        Self {
            provider: provider.to_string(),
            provider_name: name.to_string(),
            title: title.to_string(),
            rows,
            input: LineInput::new(),
            to_flow: None,
        }
    }

    /// Whether this dialog is a sign-in flow's.
    pub fn is_oauth(&self) -> bool {
        self.to_flow.is_some()
    }

    fn prompt(&mut self, message: &str, placeholder: Option<&str>) {
        self.rows.push(Row::Blank);
        self.rows
            .push(Row::Text(message.to_string(), ThemeToken::Text));
        if let Some(p) = placeholder {
            self.rows
                .push(Row::Text(format!("e.g., {p}"), ThemeToken::Dim));
        }
        self.rows.retain(|r| *r != Row::Input);
        self.rows.push(Row::Input);
        self.rows.push(Row::Hint { submit: true });
        self.input.set_value("");
    }

    /// Shows what the flow asks for. An address to open is also opened in the browser.
    pub fn show(&mut self, event: LoginEvent) {
        match event {
            LoginEvent::Auth { url, instructions } => {
                self.rows.clear();
                self.rows.push(Row::Blank);
                self.rows.push(Row::Text(url.clone(), ThemeToken::Accent));
                self.rows
                    .push(Row::Text(click_hint().to_string(), ThemeToken::Dim));
                if let Some(text) = instructions {
                    self.rows.push(Row::Blank);
                    self.rows.push(Row::Text(text, ThemeToken::Warning));
                }
                open_browser(&url);
            }
            LoginEvent::ManualInput { prompt } => {
                self.rows.push(Row::Blank);
                self.rows.push(Row::Text(prompt, ThemeToken::Dim));
                self.rows.retain(|r| *r != Row::Input);
                self.rows.push(Row::Input);
                self.rows.push(Row::Hint { submit: false });
            }
            LoginEvent::Prompt {
                message,
                placeholder,
            } => self.prompt(&message, placeholder.as_deref()),
            LoginEvent::Waiting(text) => {
                self.rows.push(Row::Blank);
                self.rows.push(Row::Text(text, ThemeToken::Dim));
                self.rows.push(Row::Hint { submit: false });
            }
            LoginEvent::Progress(text) => self.rows.push(Row::Text(text, ThemeToken::Dim)),
        }
    }

    pub fn paste(&mut self, text: &str) {
        self.input.insert_str(text.trim_end_matches(['\r', '\n']));
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> LoginDialogOutcome {
        if keys.matches(key, Action::SelectCancel) {
            return LoginDialogOutcome::Cancelled;
        }
        if keys.matches(key, Action::SelectConfirm) {
            let value = self.input.value().to_string();
            if let Some(tx) = &self.to_flow {
                let _ = tx.send(value.clone());
            }
            return LoginDialogOutcome::Submitted(value);
        }
        match self.input.handle_key(key, keys) {
            InputChange::Edited | InputChange::Moved => LoginDialogOutcome::Handled,
            InputChange::Ignored => LoginDialogOutcome::Ignored,
        }
    }

    /// The dialog and where the input's cursor is (column, row).
    pub fn render_with_cursor(
        &self,
        width: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let border = ui.fg(ThemeToken::Border);
        let mut out = vec![rule(width, border)];
        out.extend(styled_text(
            &self.title,
            ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        let mut cursor = None;
        for row in &self.rows {
            match row {
                Row::Blank => out.push(Line::default()),
                Row::Text(text, token) => out.extend(styled_text(text, ui.fg(*token), width, 1)),
                Row::Input => {
                    let (line, column) = self.input.render_with_cursor(width, true);
                    cursor = Some((
                        u16::try_from(column).unwrap_or(u16::MAX),
                        u16::try_from(out.len()).unwrap_or(u16::MAX),
                    ));
                    out.push(line);
                }
                Row::Hint { submit } => {
                    let mut spans = vec![Span::raw(" (")];
                    spans.extend(ui.key_hint(Action::SelectCancel, "to cancel"));
                    if *submit {
                        spans.push(Span::styled(",", ui.fg(ThemeToken::Muted)));
                        spans.push(Span::raw(" "));
                        spans.extend(ui.key_hint(Action::SelectConfirm, "to submit"));
                    }
                    spans.push(Span::raw(")"));
                    out.push(Line::from(spans));
                }
            }
        }
        out.push(rule(width, border));
        (out, cursor)
    }
}

fn click_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "Cmd+click to open"
    } else {
        "Ctrl+click to open"
    }
}

/// Opens `url` in the browser as pi does (`open` on macOS, `xdg-open` elsewhere); a
/// missing opener is not an error, the address is on screen.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let child = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        // Reap it in the background so it leaves no zombie.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}
