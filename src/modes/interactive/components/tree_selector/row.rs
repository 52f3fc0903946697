//! What one entry looks like in the list: pi's row texts (`user: …`, `[read: path:1-50]`,
//! `[compaction: 12k tokens]`, …) with pi's colours, the short form of a tool call, and
//! label times. Only the rows on screen are ever formatted.

use chrono::{DateTime, Datelike, TimeZone, Timelike};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::ai::js::{is_js_whitespace, js_number_to_string, split_at_utf16};
use crate::modes::interactive::components::Ui;
use crate::modes::interactive::text::sanitize;
use crate::modes::interactive::theme::ThemeToken;
use crate::session::outline::{
    ArgNumber, AssistantOutline, EntryOutline, MessageOutline, ToolCallOutline, TurnEnding,
};

/// Characters of a failed turn's error shown.
const ERROR_UNITS: usize = 80;
/// Characters of a bash command shown in a tool call.
const BASH_UNITS: usize = 50;

/// pi's `normalize`: tabs and line breaks become spaces, the ends are trimmed. Control
/// characters and escape sequences are removed too (pi prints them raw).
pub(super) fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect();
    sanitize(&flat).trim_matches(is_js_whitespace).to_string()
}

/// The content of an entry's row. `call` is the tool call a tool result answers.
pub(super) fn content_spans(
    outline: &EntryOutline,
    call: Option<&ToolCallOutline>,
    ui: &Ui<'_>,
) -> Vec<Span<'static>> {
    let fg = |token| ui.fg(token);
    let dim = |text: String| vec![Span::styled(text, fg(ThemeToken::Dim))];
    match outline {
        EntryOutline::Message(message) => match message {
            MessageOutline::User { text } => vec![
                Span::styled("user: ", fg(ThemeToken::Accent)),
                Span::raw(one_line(text)),
            ],
            MessageOutline::Assistant(a) => assistant_spans(a, ui),
            MessageOutline::ToolResult { tool_name, .. } => {
                let text = match call {
                    Some(call) => format_tool_call(call, ui),
                    None => format!("[{}]", tool_name.as_deref().unwrap_or("tool")),
                };
                vec![Span::styled(one_line(&text), fg(ThemeToken::Muted))]
            }
            MessageOutline::BashExecution { command } => {
                dim(format!("[bash]: {}", one_line(command)))
            }
            MessageOutline::Other { role, .. } => dim(format!("[{}]", one_line(role))),
        },
        EntryOutline::CustomMessage { custom_type, text } => vec![
            Span::styled(
                format!("[{}]: ", one_line(custom_type.as_deref().unwrap_or(""))),
                fg(ThemeToken::CustomMessageLabel),
            ),
            Span::raw(one_line(text)),
        ],
        EntryOutline::Compaction { tokens_before } => {
            let thousands = tokens_before.map(|t| (t / 1000.0 + 0.5).floor());
            let text = match thousands {
                Some(k) => format!("[compaction: {}k tokens]", js_number_to_string(k)),
                None => "[compaction: NaNk tokens]".to_string(),
            };
            vec![Span::styled(text, fg(ThemeToken::BorderAccent))]
        }
        EntryOutline::BranchSummary { summary } => vec![
            Span::styled("[branch summary]: ", fg(ThemeToken::Warning)),
            Span::raw(one_line(summary)),
        ],
        EntryOutline::ModelChange { model_id } => dim(format!(
            "[model: {}]",
            one_line(model_id.as_deref().unwrap_or("undefined"))
        )),
        EntryOutline::ThinkingLevelChange { level } => dim(format!(
            "[thinking: {}]",
            one_line(level.as_deref().unwrap_or("undefined"))
        )),
        EntryOutline::Custom { custom_type } => dim(format!(
            "[custom: {}]",
            one_line(custom_type.as_deref().unwrap_or("undefined"))
        )),
        EntryOutline::Label { label } => dim(format!(
            "[label: {}]",
            label
                .as_deref()
                .map_or_else(|| "(cleared)".into(), one_line)
        )),
        EntryOutline::SessionInfo { name } => match name.as_deref().filter(|n| !n.is_empty()) {
            Some(name) => dim(format!("[title: {}]", one_line(name))),
            None => vec![
                Span::styled("[title: ", fg(ThemeToken::Dim)),
                Span::styled("empty", fg(ThemeToken::Dim).add_modifier(Modifier::ITALIC)),
                Span::styled("]", fg(ThemeToken::Dim)),
            ],
        },
        EntryOutline::ContextEdit { target_id, omit } => dim(format!(
            "[context {}: {}]",
            if *omit { "omit" } else { "replace" },
            one_line(target_id.as_deref().unwrap_or("undefined"))
        )),
        EntryOutline::Other => Vec::new(),
    }
}

fn assistant_spans(a: &AssistantOutline, ui: &Ui<'_>) -> Vec<Span<'static>> {
    let head = Span::styled("assistant: ", ui.fg(ThemeToken::Success));
    let text = one_line(&a.text);
    let body = if !text.is_empty() {
        Span::raw(text)
    } else if a.ending == TurnEnding::Aborted {
        Span::styled("(aborted)", ui.fg(ThemeToken::Muted))
    } else if let Some(error) = a.error_message.as_deref() {
        Span::styled(
            split_at_utf16(&one_line(error), ERROR_UNITS).0.to_string(),
            ui.fg(ThemeToken::Error),
        )
    } else {
        Span::styled("(no content)", ui.fg(ThemeToken::Muted))
    };
    vec![head, body]
}

/// pi's short form of a tool call: `[read: ~/src/main.rs:1-50]`, `[bash: cargo test]`,
/// `[grep: /todo/ in src]`, or `[name: {"json":…}...]` for other tools.
pub(super) fn format_tool_call(call: &ToolCallOutline, ui: &Ui<'_>) -> String {
    let args = &call.args;
    let file = || {
        ui.short_path(
            args.path
                .as_deref()
                .or(args.file_path.as_deref())
                .unwrap_or(""),
        )
    };
    let path_or_dot = || ui.short_path(args.path.as_deref().unwrap_or("."));
    match call.name.as_str() {
        "read" => {
            let mut display = file();
            if args.offset.is_some() || args.limit.is_some() {
                let start = match args.offset {
                    Some(ArgNumber::Number(n)) => n,
                    _ => 1.0,
                };
                display.push(':');
                display.push_str(&js_number_to_string(start));
                if let Some(limit) = args.limit {
                    // `null` counts as 0 in JavaScript arithmetic.
                    let limit = match limit {
                        ArgNumber::Number(l) => l,
                        ArgNumber::NotNumber => 0.0,
                    };
                    let end = start + limit - 1.0;
                    if end != 0.0 && !end.is_nan() {
                        display.push('-');
                        display.push_str(&js_number_to_string(end));
                    }
                }
            }
            format!("[read: {display}]")
        }
        "write" => format!("[write: {}]", file()),
        "edit" => format!("[edit: {}]", file()),
        "bash" => {
            let raw = args.command.as_deref().unwrap_or("");
            let flat: String = raw
                .chars()
                .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
                .collect();
            let command = split_at_utf16(flat.trim_matches(is_js_whitespace), BASH_UNITS).0;
            let more = if raw.encode_utf16().nth(BASH_UNITS).is_some() {
                "..."
            } else {
                ""
            };
            format!("[bash: {command}{more}]")
        }
        "grep" => format!(
            "[grep: /{}/ in {}]",
            args.pattern.as_deref().unwrap_or(""),
            path_or_dot()
        ),
        "find" => format!(
            "[find: {} in {}]",
            args.pattern.as_deref().unwrap_or(""),
            path_or_dot()
        ),
        "ls" => format!("[ls: {}]", path_or_dot()),
        name => format!(
            "[{name}: {}{}]",
            args.json_head,
            if args.json_cut { "..." } else { "" }
        ),
    }
}

/// pi's label time: `14:05` today, `3/7 14:05` this year, `25/3/7 14:05` before, in the
/// time zone of `now`. `None` for a timestamp that is not a date.
pub(super) fn format_label_time<Tz: TimeZone>(
    timestamp: &str,
    now: &DateTime<Tz>,
) -> Option<String> {
    let at = DateTime::parse_from_rfc3339(timestamp)
        .ok()?
        .with_timezone(&now.timezone());
    let time = format!("{:02}:{:02}", at.hour(), at.minute());
    if at.date_naive() == now.date_naive() {
        Some(time)
    } else if at.year() == now.year() {
        Some(format!("{}/{} {time}", at.month(), at.day()))
    } else {
        Some(format!(
            "{:02}/{}/{} {time}",
            at.year().rem_euclid(100),
            at.month(),
            at.day()
        ))
    }
}

/// `style` with the selected-row background added.
pub(super) fn with_selection(style: Style, selected: Option<Style>) -> Style {
    match selected {
        Some(bg) => style.patch(bg),
        None => style,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::theme;
    use crate::session::outline::ToolArgsOutline;

    fn show(name: &str, args: ToolArgsOutline) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_home(Some("/home/u"));
        format_tool_call(
            &ToolCallOutline {
                id: "c".into(),
                name: name.into(),
                args,
            },
            &ui,
        )
    }

    fn path(p: &str) -> ToolArgsOutline {
        ToolArgsOutline {
            path: Some(p.into()),
            ..ToolArgsOutline::default()
        }
    }

    #[test]
    fn tool_calls_are_shown_in_pis_short_forms() {
        let n = |v| Some(ArgNumber::Number(v));
        let cases = [
            show("read", path("/home/u/a.rs")),
            show(
                "read",
                ToolArgsOutline {
                    offset: n(5.0),
                    ..path("a.rs")
                },
            ),
            show(
                "read",
                ToolArgsOutline {
                    limit: n(10.0),
                    ..path("a.rs")
                },
            ),
            show(
                "read",
                ToolArgsOutline {
                    offset: Some(ArgNumber::NotNumber),
                    limit: Some(ArgNumber::NotNumber),
                    ..path("a.rs")
                },
            ),
            show(
                "read",
                ToolArgsOutline {
                    file_path: Some("/home/u/b.rs".into()),
                    ..ToolArgsOutline::default()
                },
            ),
            show("write", path("/home/username/x")),
            show("edit", ToolArgsOutline::default()),
            show(
                "bash",
                ToolArgsOutline {
                    command: Some(format!("  {}", "x".repeat(50))),
                    ..ToolArgsOutline::default()
                },
            ),
            show(
                "bash",
                ToolArgsOutline {
                    command: Some("y".repeat(50)),
                    ..ToolArgsOutline::default()
                },
            ),
            show(
                "grep",
                ToolArgsOutline {
                    pattern: Some("fn main".into()),
                    ..ToolArgsOutline::default()
                },
            ),
            show(
                "find",
                ToolArgsOutline {
                    pattern: Some("*.md".into()),
                    ..path("/home/u/docs")
                },
            ),
            show("ls", ToolArgsOutline::default()),
            show(
                "todo",
                ToolArgsOutline {
                    json_head: r#"{"items":[]}"#.into(),
                    ..ToolArgsOutline::default()
                },
            ),
        ];
        insta::assert_snapshot!(cases.join("\n"), @r#"
            [read: ~/a.rs]
            [read: a.rs:5]
            [read: a.rs:1-10]
            [read: a.rs:1]
            [read: ~/b.rs]
            [write: /home/username/x]
            [edit: ]
            [bash: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...]
            [bash: yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy]
            [grep: /fn main/ in .]
            [find: *.md in ~/docs]
            [ls: .]
            [todo: {"items":[]}]
        "#);
    }

    #[test]
    fn label_times_depend_on_how_long_ago_they_were_set() {
        let now = DateTime::parse_from_rfc3339("2026-03-07T18:00:00-05:00").unwrap();
        let cases: Vec<String> = [
            "2026-03-07T14:05:00-05:00",
            "2026-03-07T02:00:00Z",
            "2026-01-02T09:30:00-05:00",
            "2019-12-31T23:59:00-05:00",
            "not a date",
        ]
        .iter()
        .map(|t| format!("{t} → {:?}", format_label_time(t, &now)))
        .collect();
        insta::assert_snapshot!(cases.join("\n"), @r#"
            2026-03-07T14:05:00-05:00 → Some("14:05")
            2026-03-07T02:00:00Z → Some("3/6 21:00")
            2026-01-02T09:30:00-05:00 → Some("1/2 09:30")
            2019-12-31T23:59:00-05:00 → Some("19/12/31 23:59")
            not a date → None
        "#);
    }

    #[test]
    fn one_line_flattens_and_removes_what_would_break_the_row() {
        assert_eq!(
            one_line("\t first\nsecond\u{1b}[31m red\u{7}  "),
            "first second red"
        );
    }
}
