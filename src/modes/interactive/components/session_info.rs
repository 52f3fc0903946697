//! `/session`: the open session's name, file and id, its message counts, token totals
//! and cost, laid out like pi's "Session Info" block. Renders plain data
//! ([`SessionStats`] from `AgentSession::stats()` plus the name); it reads nothing itself.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{Component, Ui, text_block};
use crate::ai::js::{js_locale_string, js_to_fixed};
use crate::core::agent_session::SessionStats;
use crate::modes::interactive::text::sanitize_single_line;
use crate::modes::interactive::theme::ThemeToken;

#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfoView {
    /// The session name (`/name`), if any.
    pub name: Option<String>,
    pub stats: SessionStats,
}

impl Component for SessionInfoView {
    /// A blank row, then the block one column in from the left. The file's path is shown
    /// whole, as pi does (not shortened to `~`).
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim = ui.fg(ThemeToken::Dim);
        let heading = |text: &str| vec![Span::styled(text.to_string(), bold)];
        let field = |label: &str, value: String| {
            vec![
                Span::styled(format!("{label}:"), dim),
                Span::raw(format!(" {value}")),
            ]
        };
        let s = &self.stats;
        let mut logical = vec![heading("Session Info"), vec![]];
        if let Some(name) = self.name.as_deref().filter(|n| !n.trim().is_empty()) {
            logical.push(field("Name", sanitize_single_line(name)));
        }
        logical.push(field(
            "File",
            s.session_file
                .as_deref()
                .map_or_else(|| "In-memory".to_string(), |f| f.to_string()),
        ));
        logical.push(field("ID", s.session_id.clone()));
        logical.push(vec![]);
        logical.push(heading("Messages"));
        logical.push(field("User", s.user_messages.to_string()));
        logical.push(field("Assistant", s.assistant_messages.to_string()));
        logical.push(field("Tool Calls", s.tool_calls.to_string()));
        logical.push(field("Tool Results", s.tool_results.to_string()));
        logical.push(field("Total", s.total_messages.to_string()));
        logical.push(vec![]);
        logical.push(heading("Tokens"));
        logical.push(field("Input", js_locale_string(s.tokens.input)));
        logical.push(field("Output", js_locale_string(s.tokens.output)));
        if s.tokens.cache_read > 0 {
            logical.push(field("Cache Read", js_locale_string(s.tokens.cache_read)));
        }
        if s.tokens.cache_write > 0 {
            logical.push(field("Cache Write", js_locale_string(s.tokens.cache_write)));
        }
        logical.push(field("Total", js_locale_string(s.tokens.total)));
        if s.cost > 0.0 {
            logical.push(vec![]);
            logical.push(heading("Cost"));
            logical.push(field("Total", js_to_fixed(s.cost, 4)));
        } else {
            // pi's text ends with a newline here (and not after the cost): a blank row.
            logical.push(vec![]);
        }
        let mut out = vec![Line::default()];
        out.extend(text_block(logical, width, 1));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::agent_session::TokenTotals;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    fn stats() -> SessionStats {
        SessionStats {
            session_file: Some("/home/u/.pi/agent/sessions/--home-u-proj--/2026-11-22T03-45-25-155Z_01a2015b.jsonl".into()),
            session_id: "01a2015b-d4a2-7041-a018-463393c4024d".into(),
            user_messages: 3,
            assistant_messages: 5,
            tool_calls: 4,
            tool_results: 4,
            total_messages: 12,
            tokens: TokenTotals {
                input: 123_456,
                output: 7_890,
                cache_read: 45_000,
                cache_write: 0,
                total: 176_346,
            },
            cost: 0.123_456,
            context_usage: None,
        }
    }

    #[test]
    fn shows_names_counts_tokens_and_cost_like_pi() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_home(Some("/home/u"));
        let view = SessionInfoView {
            name: Some("Parser rewrite".into()),
            stats: stats(),
        };
        let text = plain(&view.render(100, &ui), 100);
        insta::assert_snapshot!(text.strip_prefix('\n').unwrap(), @r"

            Session Info

            Name: Parser rewrite
            File: /home/u/.pi/agent/sessions/--home-u-proj--/2026-11-22T03-45-25-155Z_01a2015b.jsonl
            ID: 01a2015b-d4a2-7041-a018-463393c4024d

            Messages
            User: 3
            Assistant: 5
            Tool Calls: 4
            Tool Results: 4
            Total: 12

            Tokens
            Input: 123,456
            Output: 7,890
            Cache Read: 45,000
            Total: 176,346

            Cost
            Total: 0.1235
            ");
    }

    #[test]
    fn in_memory_sessions_without_cost_leave_those_lines_out() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let view = SessionInfoView {
            name: None,
            stats: SessionStats {
                session_file: None,
                cost: 0.0,
                tokens: TokenTotals::default(),
                ..stats()
            },
        };
        let text = plain(&view.render(40, &ui), 40);
        insta::assert_snapshot!(text.strip_prefix('\n').unwrap(), @r"

            Session Info

            File: In-memory
            ID:
            01a2015b-d4a2-7041-a018-463393c4024d

            Messages
            User: 3
            Assistant: 5
            Tool Calls: 4
            Tool Results: 4
            Total: 12

            Tokens
            Input: 0
            Output: 0
            Total: 0

            ");
        for width in 1..60 {
            plain(&view.render(width, &ui), width);
        }
    }
}
