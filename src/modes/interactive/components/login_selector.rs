//! pi's provider list of `/login` and `/logout`: a search box over the providers, each
//! row with what is configured for it (`✓ configured`, `• unconfigured`, `✓ env: VAR`,
//! …). Enter picks the provider; what happens then is the app's job.

use crossterm::event::KeyEvent;
use ratatui::text::{Line, Span};

use super::Ui;
use super::line_input::{InputChange, LineInput};
use super::rule;
use crate::ai::auth::AuthSource;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize_single_line, truncate_line};
use crate::modes::interactive::theme::ThemeToken;

/// How a provider signs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthKind {
    /// A subscription (OAuth).
    OAuth,
    ApiKey,
}

impl AuthKind {
    /// The `type` of its auth.json entry.
    pub fn entry_type(self) -> &'static str {
        match self {
            AuthKind::OAuth => "oauth",
            AuthKind::ApiKey => "api_key",
        }
    }
}

/// One provider of the list, with what is configured for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOption {
    pub id: String,
    pub name: String,
    pub kind: AuthKind,
    /// The `type` of its auth.json entry, if it has one.
    pub stored: Option<String>,
    /// Where its credential comes from otherwise.
    pub source: AuthSource,
    /// `name id kind`, what the search matches.
    search: String,
}

impl LoginOption {
    pub fn new(
        id: &str,
        name: &str,
        kind: AuthKind,
        stored: Option<String>,
        source: AuthSource,
    ) -> Self {
        Self {
            id: id.to_string(),
            name: name.to_string(),
            kind,
            stored,
            source,
            search: format!("{name} {id} {}", kind.entry_type()),
        }
    }

    /// The note after the name, and its colour (pi's status indicator).
    fn status(&self) -> (String, ThemeToken) {
        match &self.stored {
            Some(t) if t == self.kind.entry_type() => {
                return (" ✓ configured".into(), ThemeToken::Success);
            }
            Some(t) => {
                let label = if t == "oauth" {
                    "subscription configured"
                } else {
                    "API key configured"
                };
                return (format!(" • {label}"), ThemeToken::Warning);
            }
            None => {}
        }
        if self.kind == AuthKind::OAuth {
            return (" • unconfigured".into(), ThemeToken::Muted);
        }
        match &self.source {
            AuthSource::Environment(var) => (format!(" ✓ env: {var}"), ThemeToken::Success),
            AuthSource::Runtime => (" ✓ runtime API key".into(), ThemeToken::Success),
            AuthSource::ModelsJsonKey => (" ✓ key in models.json".into(), ThemeToken::Success),
            AuthSource::ModelsJsonCommand => {
                (" ✓ command in models.json".into(), ThemeToken::Success)
            }
            AuthSource::Stored | AuthSource::None => (" • unconfigured".into(), ThemeToken::Muted),
        }
    }
}

/// Whether the list signs in or out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginMode {
    Login(AuthKind),
    Logout,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginSelectorOutcome {
    Handled,
    Ignored,
    Selected(LoginOption),
    Cancelled,
}

/// Rows shown at most (pi's).
const MAX_VISIBLE: usize = 8;

#[derive(Debug, Clone)]
pub struct LoginSelector {
    pub mode: LoginMode,
    all: Vec<LoginOption>,
    filtered: Vec<usize>,
    selected: usize,
    query: LineInput,
}

impl LoginSelector {
    pub fn new(mode: LoginMode, options: Vec<LoginOption>) -> Self {
        let filtered = (0..options.len()).collect();
        Self {
            mode,
            all: options,
            filtered,
            selected: 0,
            query: LineInput::new(),
        }
    }

    fn refilter(&mut self) {
        let query = self.query.value().to_string();
        let indexed: Vec<(usize, &LoginOption)> = self.all.iter().enumerate().collect();
        self.filtered = fuzzy_filter(&indexed, &query, |(_, o)| o.search.as_str())
            .into_iter()
            .map(|(i, _)| *i)
            .collect();
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    pub fn paste(&mut self, text: &str) {
        self.query.insert_str(text);
        self.refilter();
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> LoginSelectorOutcome {
        let action = keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectConfirm,
                Action::SelectCancel,
            ],
        );
        let n = self.filtered.len();
        match action {
            Some(Action::SelectUp) if n > 0 => self.selected = self.selected.saturating_sub(1),
            Some(Action::SelectDown) if n > 0 => self.selected = (self.selected + 1).min(n - 1),
            Some(Action::SelectUp | Action::SelectDown) => {}
            Some(Action::SelectConfirm) => {
                return match self.filtered.get(self.selected) {
                    Some(&i) => LoginSelectorOutcome::Selected(self.all[i].clone()),
                    None => LoginSelectorOutcome::Handled,
                };
            }
            Some(Action::SelectCancel) => return LoginSelectorOutcome::Cancelled,
            _ => {
                return match self.query.handle_key(key, keys) {
                    InputChange::Edited => {
                        self.refilter();
                        LoginSelectorOutcome::Handled
                    }
                    InputChange::Moved => LoginSelectorOutcome::Handled,
                    InputChange::Ignored => LoginSelectorOutcome::Ignored,
                };
            }
        }
        LoginSelectorOutcome::Handled
    }

    /// The list and where the cursor of the search box is (column, row).
    pub fn render_with_cursor(
        &self,
        width: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let cut = |line: Line<'static>| truncate_line(line, width, Span::raw("…"));
        let accent = ui.fg(ThemeToken::Accent);
        let title = match self.mode {
            LoginMode::Login(_) => "Select provider to configure:",
            LoginMode::Logout => "Select provider to logout:",
        };
        let mut out = vec![
            rule(width, ui.fg(ThemeToken::Border)),
            Line::default(),
            cut(Line::from(vec![
                Span::raw(" "),
                Span::styled(title, accent.add_modifier(ratatui::style::Modifier::BOLD)),
            ])),
            Line::default(),
        ];
        let (search, column) = self.query.render_with_cursor(width, true);
        let cursor = (
            u16::try_from(column).unwrap_or(u16::MAX),
            u16::try_from(out.len()).unwrap_or(u16::MAX),
        );
        out.push(search);
        out.push(Line::default());
        let n = self.filtered.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        for row in start..end {
            let option = &self.all[self.filtered[row]];
            let (status, token) = option.status();
            let name = sanitize_single_line(&option.name);
            let mut spans = vec![Span::raw(" ")];
            if row == self.selected {
                spans.push(Span::styled("→ ", accent));
                spans.push(Span::styled(name, accent));
            } else {
                spans.push(Span::raw("  "));
                spans.push(Span::styled(name, ui.fg(ThemeToken::Text)));
            }
            spans.push(Span::styled(status, ui.fg(token)));
            out.push(cut(Line::from(spans)));
        }
        let muted = ui.fg(ThemeToken::Muted);
        if start > 0 || end < n {
            out.push(cut(Line::from(Span::styled(
                format!("   ({}/{n})", self.selected + 1),
                muted,
            ))));
        }
        if n == 0 {
            let message = match (self.all.is_empty(), self.mode) {
                (true, LoginMode::Login(_)) => "No providers available",
                (true, LoginMode::Logout) => "No providers logged in. Use /login first.",
                (false, _) => "No matching providers",
            };
            out.push(cut(Line::from(Span::styled(
                format!("   {message}"),
                muted,
            ))));
        }
        out.push(Line::default());
        out.push(rule(width, ui.fg(ThemeToken::Border)));
        (out, Some(cursor))
    }
}
