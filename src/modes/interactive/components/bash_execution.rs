//! A `!cmd` the user ran: the command between two rules (green, or dim for `!!cmd`
//! which stays out of the model's context), the output tail (last 20 lines collapsed,
//! everything with Ctrl+O), a spinner while it runs, and how it ended.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, SPINNER, Ui, rule, styled_text, text_block};
use crate::messages::BashExecutionMessage;
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::sanitize;
use crate::modes::interactive::theme::ThemeToken;

/// Lines shown while collapsed (pi's bash box preview).
const PREVIEW_LINES: usize = 20;
/// What reaches the model is cut to this many trailing lines; the box shows the same.
const CONTEXT_MAX_LINES: usize = 2000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashStatus {
    /// Still running; the spinner frame to draw.
    Running { frame: usize },
    Complete {
        exit_code: Option<i32>,
        cancelled: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashExecutionView {
    pub command: String,
    pub output: String,
    pub status: BashStatus,
    pub exclude_from_context: bool,
    pub expanded: bool,
    pub truncated: bool,
    pub full_output_path: Option<String>,
}

impl BashExecutionView {
    /// A command that just started.
    pub fn running(command: &str, exclude_from_context: bool) -> Self {
        BashExecutionView {
            command: command.to_string(),
            output: String::new(),
            status: BashStatus::Running { frame: 0 },
            exclude_from_context,
            expanded: false,
            truncated: false,
            full_output_path: None,
        }
    }

    /// Appends streamed output (ANSI and carriage returns are cleaned at render time).
    pub fn append_output(&mut self, chunk: &str) {
        self.output.push_str(chunk);
    }
}

impl From<&BashExecutionMessage> for BashExecutionView {
    fn from(m: &BashExecutionMessage) -> Self {
        BashExecutionView {
            command: m.command.clone(),
            output: m.output.clone(),
            status: BashStatus::Complete {
                exit_code: m.exit_code,
                cancelled: m.cancelled,
            },
            exclude_from_context: m.exclude_from_context.unwrap_or(false),
            expanded: false,
            truncated: m.truncated,
            full_output_path: m.full_output_path.clone(),
        }
    }
}

impl Component for BashExecutionView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let color = ui.fg(if self.exclude_from_context {
            ThemeToken::Dim
        } else {
            ThemeToken::BashMode
        });
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = vec![Line::default(), rule(width, color)];
        out.extend(styled_text(
            &format!("$ {}", sanitize(&self.command)),
            color.add_modifier(Modifier::BOLD),
            width,
            ui.output_pad,
        ));

        // As pi: the output's lines as split on `\n`, so output ending in a newline has an
        // empty last line (shown, and counted in "N more lines").
        let clean = sanitize(&self.output);
        let all: Vec<&str> = if clean.is_empty() {
            Vec::new()
        } else {
            clean.split('\n').collect()
        };
        let available = &all[all.len().saturating_sub(CONTEXT_MAX_LINES)..];
        let preview = &available[available.len().saturating_sub(PREVIEW_LINES)..];
        let hidden = available.len() - preview.len();
        if !available.is_empty() {
            // A blank row, then the output; collapsed, the last PREVIEW_LINES rows of both
            // (a full preview pushes the blank row out, as in pi).
            let shown = if self.expanded { available } else { preview };
            let mut rows = vec![Line::default()];
            rows.extend(styled_text(&shown.join("\n"), muted, width, ui.output_pad));
            let skip = if self.expanded {
                0
            } else {
                rows.len().saturating_sub(PREVIEW_LINES)
            };
            out.extend(rows.into_iter().skip(skip));
        }

        match &self.status {
            BashStatus::Running { frame } => {
                out.push(Line::default());
                let spinner = SPINNER[frame % SPINNER.len()];
                let message = format!("Running... ({} to cancel)", ui.key(Action::SelectCancel));
                out.extend(text_block(
                    vec![vec![
                        Span::styled(format!("{spinner} "), color),
                        Span::styled(message, muted),
                    ]],
                    width,
                    ui.output_pad,
                ));
            }
            BashStatus::Complete {
                exit_code,
                cancelled,
            } => {
                let mut parts: Vec<Vec<Span<'static>>> = Vec::new();
                if hidden > 0 {
                    let mut line = Vec::new();
                    if self.expanded {
                        line.push(Span::raw("("));
                        line.extend(ui.key_hint(Action::ToolsExpand, "to collapse"));
                    } else {
                        line.push(Span::styled(format!("... {hidden} more lines"), muted));
                        line.push(Span::raw(" ("));
                        line.extend(ui.key_hint(Action::ToolsExpand, "to expand"));
                    }
                    line.push(Span::raw(")"));
                    parts.push(line);
                }
                if *cancelled {
                    parts.push(vec![Span::styled(
                        "(cancelled)",
                        ui.fg(ThemeToken::Warning),
                    )]);
                } else if let Some(code) = exit_code.filter(|c| *c != 0) {
                    parts.push(vec![Span::styled(
                        format!("(exit {code})"),
                        ui.fg(ThemeToken::Error),
                    )]);
                }
                if let Some(path) = self
                    .full_output_path
                    .as_deref()
                    .filter(|_| self.truncated || all.len() > CONTEXT_MAX_LINES)
                {
                    parts.push(vec![Span::styled(
                        format!("Output truncated. Full output: {}", sanitize(path)),
                        ui.fg(ThemeToken::Warning),
                    )]);
                }
                if !parts.is_empty() {
                    out.push(Line::default());
                    out.extend(text_block(parts, width, ui.output_pad));
                }
            }
        }
        out.push(rule(width, color));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    fn show(view: &BashExecutionView, width: usize) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        plain(&view.render(width, &Ui::new(&t, &keys)), width)
    }

    #[test]
    fn running_command_shows_a_spinner() {
        let mut view = BashExecutionView::running("npm test", false);
        view.append_output("\u{1b}[32mPASS\u{1b}[0m a.test.js\r\n");
        view.status = BashStatus::Running { frame: 3 };
        insta::assert_snapshot!(show(&view, 40), @r"

        ────────────────────────────────────────
         $ npm test

         PASS a.test.js


         ⠸ Running... (escape/ctrl+c to cancel)
        ────────────────────────────────────────
        ");
    }

    #[test]
    fn output_pad_0_starts_command_and_output_in_the_first_column() {
        let mut view = BashExecutionView::running("ls", false);
        view.append_output("a.txt\n");
        view.status = BashStatus::Running { frame: 0 };
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_output_pad(0);
        insta::assert_snapshot!(plain(&view.render(30, &ui), 30), @r"

        ──────────────────────────────
        $ ls

        a.txt


        ⠋ Running... (escape/ctrl+c to
        cancel)
        ──────────────────────────────
        ");
    }

    #[test]
    fn finished_command_collapses_to_the_last_lines() {
        let msg = BashExecutionMessage {
            command: "seq 25".into(),
            output: (1..=25)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            exit_code: Some(2),
            ..BashExecutionMessage::default()
        };
        let mut view = BashExecutionView::from(&msg);
        insta::assert_snapshot!(show(&view, 30), @r"

        ──────────────────────────────
         $ seq 25
         6
         7
         8
         9
         10
         11
         12
         13
         14
         15
         16
         17
         18
         19
         20
         21
         22
         23
         24
         25

         ... 5 more lines (ctrl+o to
         expand)
         (exit 2)
        ──────────────────────────────
        ");
        view.expanded = true;
        let expanded = show(&view, 30);
        assert!(
            expanded.contains("\n 1\n") && expanded.contains("ctrl+o to collapse"),
            "{expanded}"
        );
    }

    #[test]
    fn cancelled_excluded_command_with_truncated_output() {
        let msg = BashExecutionMessage {
            command: "yes".into(),
            output: "y\ny".into(),
            cancelled: true,
            truncated: true,
            full_output_path: Some("/tmp/pi-bash-x.log".into()),
            exclude_from_context: Some(true),
            ..BashExecutionMessage::default()
        };
        insta::assert_snapshot!(show(&BashExecutionView::from(&msg), 30), @r"

        ──────────────────────────────
         $ yes

         y
         y

         (cancelled)
         Output truncated. Full
         output: /tmp/pi-bash-x.log
        ──────────────────────────────
        ");
    }
}
