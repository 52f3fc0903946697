//! The status line above the editor (a spinner and what is going on: `Working...`,
//! `Retrying (1/3) in 5s...`, `Auto-compacting...`) and the list of queued steering /
//! follow-up messages. The app advances the spinner frame and the countdown; these
//! only draw a given state.

use std::time::Duration;

use ratatui::text::{Line, Span};

use super::{Component, SPINNER, Ui, text_block};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::{sanitize_single_line, truncate_line};
use crate::modes::interactive::theme::ThemeToken;

/// A spinner and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLine {
    pub frame: usize,
    pub message: String,
    /// Colour of the spinner (`accent` while working, `warning` while retrying).
    pub spinner: ThemeToken,
    /// An extension's indicator frame (`ctx.ui.setWorkingIndicator`), drawn as given in
    /// place of the spinner; an empty frame draws no indicator.
    pub indicator: Option<Vec<Span<'static>>>,
}

impl StatusLine {
    /// pi's default loader text while the agent works.
    pub fn working(frame: usize) -> Self {
        StatusLine {
            frame,
            message: "Working...".to_string(),
            spinner: ThemeToken::Accent,
            indicator: None,
        }
    }

    /// The countdown before an automatic retry; `remaining` is rounded up to seconds.
    pub fn retrying(
        frame: usize,
        attempt: u32,
        max_attempts: u32,
        remaining: Duration,
        ui: &Ui<'_>,
    ) -> Self {
        let seconds = remaining.as_millis().div_ceil(1000);
        StatusLine {
            frame,
            message: format!(
                "Retrying ({attempt}/{max_attempts}) in {seconds}s... ({} to cancel)",
                ui.key(Action::Interrupt)
            ),
            spinner: ThemeToken::Warning,
            indicator: None,
        }
    }

    /// The same line with an extension's indicator frame in place of the spinner.
    pub fn with_indicator(mut self, indicator: Option<Vec<Span<'static>>>) -> Self {
        self.indicator = indicator;
        self
    }

    /// Any other message (`Auto-compacting... (escape to cancel)`, extension text).
    pub fn message(frame: usize, message: &str) -> Self {
        StatusLine {
            frame,
            message: message.to_string(),
            spinner: ThemeToken::Accent,
            indicator: None,
        }
    }
}

impl Component for StatusLine {
    /// A blank row, then the spinner line (wrapped if the message is long).
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let mut spans = match &self.indicator {
            // pi's loader: a frame, a space, then the message; no frame, no space.
            Some(frame) if frame.iter().all(|s| s.content.is_empty()) => Vec::new(),
            Some(frame) => {
                let mut spans = frame.clone();
                spans.push(Span::raw(" "));
                spans
            }
            None => {
                let spinner = SPINNER[self.frame % SPINNER.len()];
                vec![Span::styled(format!("{spinner} "), ui.fg(self.spinner))]
            }
        };
        spans.push(Span::styled(
            sanitize_single_line(&self.message),
            ui.fg(ThemeToken::Muted),
        ));
        let mut out = vec![Line::default()];
        out.extend(text_block(vec![spans], width, 1));
        out
    }
}

/// Messages waiting to be delivered while the agent works.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PendingMessages {
    pub steering: Vec<String>,
    pub follow_up: Vec<String>,
}

impl Component for PendingMessages {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        if self.steering.is_empty() && self.follow_up.is_empty() {
            return Vec::new();
        }
        let dim = ui.fg(ThemeToken::Dim);
        let inner = width.saturating_sub(2).max(1);
        let one_line = |text: String| {
            let line = truncate_line(
                Line::from(Span::styled(text, dim)),
                inner,
                Span::styled("...", dim),
            );
            let mut spans = vec![Span::raw(if width > 2 { " " } else { "" })];
            spans.extend(line.spans);
            Line::from(spans)
        };
        let mut out = vec![Line::default()];
        for m in &self.steering {
            out.push(one_line(format!("Steering: {}", sanitize_single_line(m))));
        }
        for m in &self.follow_up {
            out.push(one_line(format!("Follow-up: {}", sanitize_single_line(m))));
        }
        out.push(one_line(format!(
            "↳ {} to edit all queued messages",
            ui.key_capitalized(Action::MessageDequeue)
        )));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    #[test]
    fn working_and_retry_lines() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        insta::assert_snapshot!(plain(&StatusLine::working(2).render(40, &ui), 40), @r"

        ⠹ Working...
        ");
        let retry = StatusLine::retrying(0, 2, 3, Duration::from_millis(4200), &ui);
        insta::assert_snapshot!(plain(&retry.render(60, &ui), 60), @r"

        ⠋ Retrying (2/3) in 5s... (escape to cancel)
        ");
        insta::assert_snapshot!(plain(&retry.render(20, &ui), 20), @r"

        ⠋ Retrying (2/3)
        in 5s... (escape
        to cancel)
        ");
    }

    #[test]
    fn queued_messages_are_listed_one_line_each() {
        let t = theme();
        let keys = Keybindings::defaults();
        let pending = PendingMessages {
            steering: vec!["stop and use the other file\nplease".into()],
            follow_up: vec!["then run the tests, all of them, with coverage".into()],
        };
        insta::assert_snapshot!(plain(&pending.render(40, &Ui::new(&t, &keys)), 40), @r"

        Steering: stop and use the other fi...
        Follow-up: then run the tests, all ...
        ↳ Alt+Up to edit all queued messages
        ");
        assert!(
            PendingMessages::default()
                .render(40, &Ui::new(&t, &keys))
                .is_empty()
        );
    }
}
