//! The per-tool views: what the call line says and how much of the result is shown
//! collapsed (pi: read and write 10 lines, ls and find 20, grep 15, bash the last 5
//! screen rows).

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{HostToolLines, ToolExecutionState, ToolResultView, expand_hint, title};
use crate::modes::interactive::ansi::ansi_line;
use crate::modes::interactive::components::{Component, Ui, panel, text_block};
use crate::modes::interactive::diff::render_diff;
use crate::modes::interactive::highlight::{self, language_for_path};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::{WrapOptions, sanitize, sanitize_single_line, wrap_spans};
use crate::modes::interactive::theme::ThemeToken;
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size};

// The panel around the views is drawn here too, so the state (`super`) does not
// depend on its views.
impl Component for ToolExecutionState {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let background = ui.theme.bg(if self.is_pending() {
            ThemeToken::ToolPendingBg
        } else if self.result.as_ref().is_some_and(|r| r.is_error) {
            ThemeToken::ToolErrorBg
        } else {
            ThemeToken::ToolSuccessBg
        });
        let mut out = vec![Line::default()];
        if let Some(host) = &self.host {
            if host.self_shell {
                out.extend(host_body(self, host, width, ui));
            } else {
                out.extend(panel(width, ui.output_pad, 1, background, |w| {
                    host_body(self, host, w, ui)
                }));
            }
            out.extend(self.image_rows(width, ui));
            return out;
        }
        out.extend(panel(width, ui.output_pad, 1, background, |w| {
            let logical = body(self, w, ui);
            text_block(logical, w, 0)
        }));
        out.extend(self.image_rows(width, ui));
        out
    }
}

/// A box an extension draws: its call lines (or pi's fallback, the tool's name), then,
/// once there is a result, its result lines (or pi's fallback, the result's text).
fn host_body(
    state: &ToolExecutionState,
    host: &HostToolLines,
    width: usize,
    ui: &Ui<'_>,
) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = match &host.call {
        Some(lines) => lines.iter().map(|l| ansi_line(l)).collect(),
        None => text_block(
            vec![vec![title(ui, &sanitize_single_line(&state.call.name))]],
            width,
            0,
        ),
    };
    if let Some(result) = &state.result {
        match &host.result {
            Some(lines) => out.extend(lines.iter().map(|l| ansi_line(l))),
            None => {
                let text = result.text_for(ui);
                if !text.is_empty() {
                    out.extend(text_block(
                        plain_lines(&text, ui.fg(ThemeToken::ToolOutput)),
                        width,
                        0,
                    ));
                }
            }
        }
    }
    out
}

type Logical = Vec<Vec<Span<'static>>>;

const READ_PREVIEW_LINES: usize = 10;
const WRITE_PREVIEW_LINES: usize = 10;
const LIST_PREVIEW_LINES: usize = 20;
const GREP_PREVIEW_LINES: usize = 15;
const BASH_PREVIEW_ROWS: usize = 5;

/// The panel content for a tool call.
pub(super) fn body(state: &ToolExecutionState, width: usize, ui: &Ui<'_>) -> Logical {
    match state.call.name.as_str() {
        "read" => read(state, ui),
        "edit" => edit(state, ui),
        "write" => write(state, ui),
        "bash" => bash(state, width, ui),
        "ls" => listing(state, ui, ListTool::Ls),
        "find" => listing(state, ui, ListTool::Find),
        "grep" => listing(state, ui, ListTool::Grep),
        _ => generic(state, ui),
    }
}

/// The byte cap of a `details.truncation` object as pi prints it (`50.0KB`), pi's default
/// cap when the details omit it.
fn max_bytes_text(truncation: &Value) -> String {
    let max = truncation
        .get("maxBytes")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_MAX_BYTES, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        });
    format_size(max)
}

fn plain_lines(text: &str, style: ratatui::style::Style) -> Logical {
    text.split('\n')
        .map(|l| vec![Span::styled(l.to_string(), style)])
        .collect()
}

fn lines_to_logical(lines: Vec<Line<'static>>) -> Logical {
    lines.into_iter().map(|l| l.spans).collect()
}

fn trim_trailing_empty(lines: &mut Logical) {
    while lines
        .last()
        .is_some_and(|l| l.iter().all(|s| s.content.is_empty()))
    {
        lines.pop();
    }
}

/// A path argument for the call line: accent, `...` while missing, red when not text.
fn path_span(
    state: &ToolExecutionState,
    ui: &Ui<'_>,
    keys: &[&str],
    default: Option<&str>,
) -> Span<'static> {
    match state.str_arg(keys) {
        Err(()) => Span::styled("[invalid arg]", ui.fg(ThemeToken::Error)),
        Ok(Some(p)) if !p.is_empty() => Span::styled(
            ui.short_path(&sanitize_single_line(p)),
            ui.fg(ThemeToken::Accent),
        ),
        Ok(_) => match default {
            Some(d) => Span::styled(d.to_string(), ui.fg(ThemeToken::Accent)),
            None => Span::styled("...", ui.fg(ThemeToken::ToolOutput)),
        },
    }
}

fn number_arg(state: &ToolExecutionState, key: &str) -> Option<i64> {
    state.arg(key).and_then(Value::as_i64)
}

/// `:start-end` after a read path (from offset/limit).
fn read_range(state: &ToolExecutionState, ui: &Ui<'_>) -> Option<Span<'static>> {
    let offset = number_arg(state, "offset");
    let limit = number_arg(state, "limit");
    if offset.is_none() && limit.is_none() {
        return None;
    }
    let start = offset.unwrap_or(1);
    let text = match limit {
        Some(l) => format!(":{start}-{}", start + l - 1),
        None => format!(":{start}"),
    };
    Some(Span::styled(text, ui.fg(ThemeToken::Warning)))
}

/// Skills and context files read in full are shown as one quiet line until expanded.
enum CompactRead {
    Skill(String),
    Resource(String),
}

fn compact_read(state: &ToolExecutionState) -> Option<CompactRead> {
    let path = state.str_arg(&["file_path", "path"]).ok().flatten()?;
    let mut parts = path.trim_end_matches('/').rsplit(['/', '\\']);
    let file = parts.next()?;
    match file {
        "SKILL.md" => Some(CompactRead::Skill(parts.next().unwrap_or(file).to_string())),
        "AGENTS.md" | "AGENTS.MD" | "CLAUDE.md" | "CLAUDE.MD" => {
            Some(CompactRead::Resource(file.to_string()))
        }
        _ => None,
    }
}

/// Notes about output the tool cut (from `details.truncation`).
fn truncation_note(result: &ToolResultView, ui: &Ui<'_>) -> Option<Vec<Span<'static>>> {
    let t = result.detail("truncation")?;
    if t.get("truncated").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let num = |k: &str| t.get(k).and_then(Value::as_u64);
    let max_bytes = max_bytes_text(t);
    let text = if t.get("firstLineExceedsLimit").and_then(Value::as_bool) == Some(true) {
        format!("[First line exceeds {max_bytes} limit]")
    } else if t.get("truncatedBy").and_then(Value::as_str) == Some("lines") {
        format!(
            "[Truncated: showing {} of {} lines ({} line limit)]",
            num("outputLines").unwrap_or(0),
            num("totalLines").unwrap_or(0),
            num("maxLines").unwrap_or(DEFAULT_MAX_LINES as u64)
        )
    } else {
        format!(
            "[Truncated: {} lines shown ({max_bytes} limit)]",
            num("outputLines").unwrap_or(0)
        )
    };
    Some(vec![Span::styled(text, ui.fg(ThemeToken::Warning))])
}

/// The first `limit` lines (all when expanded) and a "N more lines" hint.
fn preview(
    mut lines: Logical,
    limit: usize,
    expanded: bool,
    ui: &Ui<'_>,
    with_total: bool,
) -> Logical {
    trim_trailing_empty(&mut lines);
    if expanded || lines.len() <= limit {
        return lines;
    }
    let remaining = lines.len() - limit;
    let total = lines.len();
    lines.truncate(limit);
    lines.push(more_lines(ui, remaining, total, with_total));
    lines
}

fn more_lines(ui: &Ui<'_>, remaining: usize, total: usize, with_total: bool) -> Vec<Span<'static>> {
    let lead = if with_total {
        format!("... ({remaining} more lines, {total} total,")
    } else {
        format!("... ({remaining} more lines,")
    };
    expand_hint(ui, lead)
}

/// A code preview: only the lines that will be shown are highlighted (highlighting
/// costs far more than anything else), then the "N more lines" hint.
fn code_preview(
    text: &str,
    path: Option<&str>,
    limit: usize,
    expanded: bool,
    ui: &Ui<'_>,
    with_total: bool,
) -> Logical {
    let fallback = ui.fg(ThemeToken::ToolOutput);
    let mut raw: Vec<&str> = text.split('\n').collect();
    while raw.last().is_some_and(|l| l.is_empty()) {
        raw.pop();
    }
    let total = raw.len();
    let shown = if expanded { total } else { total.min(limit) };
    if shown == 0 {
        return Vec::new();
    }
    let visible = raw[..shown].join("\n");
    let mut lines = match path.and_then(language_for_path) {
        Some(lang) => lines_to_logical(highlight::highlight(
            &visible,
            Some(lang),
            ui.theme,
            fallback,
        )),
        None => plain_lines(&visible, fallback),
    };
    if shown < total {
        lines.push(more_lines(ui, total - shown, total, with_total));
    }
    lines
}

fn read(state: &ToolExecutionState, ui: &Ui<'_>) -> Logical {
    let mut out: Logical = Vec::new();
    let result = state.result.as_ref();
    let compact = if state.expanded || result.is_some_and(|r| r.is_error) {
        None
    } else {
        compact_read(state)
    };
    let range = read_range(state, ui);
    let hint = || {
        Span::styled(
            format!(" ({} to expand)", ui.key(Action::ToolsExpand)),
            ui.fg(ThemeToken::Dim),
        )
    };
    match compact {
        Some(CompactRead::Skill(name)) => {
            let mut line = vec![
                Span::styled(
                    "[skill] ",
                    ui.fg(ThemeToken::CustomMessageLabel)
                        .add_modifier(Modifier::BOLD),
                ),
                Span::styled(name, ui.fg(ThemeToken::CustomMessageText)),
            ];
            line.extend(range);
            line.push(hint());
            out.push(line);
            return out;
        }
        Some(CompactRead::Resource(name)) => {
            let mut line = vec![
                title(ui, "read resource"),
                Span::raw(" "),
                Span::styled(name, ui.fg(ThemeToken::Accent)),
            ];
            line.extend(range);
            line.push(hint());
            out.push(line);
            return out;
        }
        None => {}
    }
    let mut call = vec![
        title(ui, "read"),
        Span::raw(" "),
        path_span(state, ui, &["file_path", "path"], None),
    ];
    call.extend(range);
    out.push(call);
    if let Some(result) = result {
        let path = state.str_arg(&["file_path", "path"]).ok().flatten();
        let text = result.text_for(ui);
        out.push(Vec::new());
        out.extend(code_preview(
            &text,
            path,
            READ_PREVIEW_LINES,
            state.expanded,
            ui,
            false,
        ));
        out.extend(truncation_note(result, ui));
    }
    out
}

fn edit(state: &ToolExecutionState, ui: &Ui<'_>) -> Logical {
    let mut out: Logical = vec![vec![
        title(ui, "edit"),
        Span::raw(" "),
        path_span(state, ui, &["file_path", "path"], None),
    ]];
    let Some(result) = &state.result else {
        return out;
    };
    if result.is_error {
        let text = result.text_for(ui);
        if !text.is_empty() {
            out.push(Vec::new());
            out.extend(plain_lines(&text, ui.fg(ThemeToken::Error)));
        }
    } else if let Some(diff) = result.detail("diff").and_then(Value::as_str) {
        out.push(Vec::new());
        out.extend(lines_to_logical(render_diff(diff, ui.theme)));
    }
    out
}

fn write(state: &ToolExecutionState, ui: &Ui<'_>) -> Logical {
    let path = state.str_arg(&["file_path", "path"]).ok().flatten();
    let mut out: Logical = vec![vec![
        title(ui, "write"),
        Span::raw(" "),
        path_span(state, ui, &["file_path", "path"], None),
    ]];
    match state.str_arg(&["content"]) {
        Err(()) => {
            out.push(Vec::new());
            out.push(vec![Span::styled(
                "[invalid content arg - expected string]",
                ui.fg(ThemeToken::Error),
            )]);
        }
        Ok(Some(content)) if !content.is_empty() => {
            let clean = sanitize(content);
            out.push(Vec::new());
            match path.and_then(language_for_path) {
                // Expanded while the file may still be streaming in: only new lines get
                // highlighted on each update.
                Some(lang) if state.expanded => {
                    let classified = state.highlight.borrow_mut().update(&clean, lang);
                    let lines = match classified {
                        Some(c) => {
                            lines_to_logical(highlight::to_lines(&c, ui.theme, Default::default()))
                        }
                        None => plain_lines(&clean, ui.fg(ThemeToken::ToolOutput)),
                    };
                    out.extend(preview(lines, WRITE_PREVIEW_LINES, true, ui, true));
                }
                _ => out.extend(code_preview(
                    &clean,
                    path,
                    WRITE_PREVIEW_LINES,
                    state.expanded,
                    ui,
                    true,
                )),
            }
        }
        Ok(_) => {}
    }
    if let Some(result) = state.result.as_ref().filter(|r| r.is_error) {
        let text = result.text_for(ui);
        if !text.is_empty() {
            out.push(Vec::new());
            out.extend(plain_lines(&text, ui.fg(ThemeToken::Error)));
        }
    }
    out
}

fn bash(state: &ToolExecutionState, width: usize, ui: &Ui<'_>) -> Logical {
    let command = match state.str_arg(&["command"]) {
        Err(()) => Span::styled("[invalid arg]", ui.fg(ThemeToken::Error)),
        Ok(Some(c)) if !c.is_empty() => title(ui, &format!("$ {}", sanitize(c))),
        Ok(_) => Span::styled("$ ...", ui.fg(ThemeToken::ToolOutput)),
    };
    let mut call = vec![command];
    if let Some(timeout) = state
        .arg("timeout")
        .filter(|t| !t.is_null() && t.as_f64() != Some(0.0))
    {
        call.push(Span::styled(
            format!(" (timeout {timeout}s)"),
            ui.fg(ThemeToken::Muted),
        ));
    }
    // A multi-line command shows all of its lines.
    let mut out: Logical = Vec::new();
    let joined: String = call.iter().map(|s| s.content.as_ref()).collect();
    if joined.contains('\n') {
        let style = call[0].style;
        out.extend(plain_lines(&joined, style));
    } else {
        out.push(call);
    }
    let Some(result) = &state.result else {
        return out;
    };
    let text = result.text_for(ui);
    let output = text.trim();
    let style = ui.fg(ThemeToken::ToolOutput);
    if !output.is_empty() {
        out.push(Vec::new());
        if state.expanded {
            out.extend(plain_lines(output, style));
        } else {
            // The tail of the output, counted in screen rows at this width.
            let rows: Vec<Line<'static>> = output
                .split('\n')
                .flat_map(|l| wrap_spans(&[Span::styled(l, style)], width, &WrapOptions::default()))
                .collect();
            let skipped = rows.len().saturating_sub(BASH_PREVIEW_ROWS);
            if skipped > 0 {
                out.push(expand_hint(ui, format!("... ({skipped} earlier lines,")));
            }
            out.extend(lines_to_logical(rows.into_iter().skip(skipped).collect()));
        }
    }
    let mut warnings = Vec::new();
    if let Some(path) = result.detail("fullOutputPath").and_then(Value::as_str) {
        warnings.push(format!("Full output: {}", sanitize_single_line(path)));
    }
    if let Some(t) = result
        .detail("truncation")
        .filter(|t| t.get("truncated").and_then(Value::as_bool) == Some(true))
    {
        let num = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        if t.get("truncatedBy").and_then(Value::as_str) == Some("lines") {
            warnings.push(format!(
                "Truncated: showing {} of {} lines",
                num("outputLines"),
                num("totalLines")
            ));
        } else {
            warnings.push(format!(
                "Truncated: {} lines shown ({} limit)",
                num("outputLines"),
                max_bytes_text(t)
            ));
        }
    }
    if !warnings.is_empty() {
        out.push(Vec::new());
        out.push(vec![Span::styled(
            format!("[{}]", warnings.join(". ")),
            ui.fg(ThemeToken::Warning),
        )]);
    }
    if let Some(elapsed) = state.elapsed {
        let label = if state.partial { "Elapsed" } else { "Took" };
        out.push(Vec::new());
        out.push(vec![Span::styled(
            format!(
                "{label} {}s",
                crate::ai::js::js_to_fixed(elapsed.as_millis() as f64 / 1000.0, 1)
            ),
            ui.fg(ThemeToken::Muted),
        )]);
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ListTool {
    Ls,
    Find,
    Grep,
}

fn listing(state: &ToolExecutionState, ui: &Ui<'_>, tool: ListTool) -> Logical {
    let output_style = ui.fg(ThemeToken::ToolOutput);
    let path = match state.str_arg(&["path"]) {
        Err(()) => "[invalid arg]".to_string(),
        Ok(p) => ui.short_path(&sanitize_single_line(
            p.filter(|p| !p.is_empty()).unwrap_or("."),
        )),
    };
    let limit = state.arg("limit").filter(|l| !l.is_null());
    let mut call = Vec::new();
    match tool {
        ListTool::Ls => {
            call.push(title(ui, "ls"));
            call.push(Span::raw(" "));
            call.push(Span::styled(path, ui.fg(ThemeToken::Accent)));
            if let Some(l) = limit {
                call.push(Span::styled(format!(" (limit {l})"), output_style));
            }
        }
        ListTool::Find | ListTool::Grep => {
            let pattern = match state.str_arg(&["pattern"]) {
                Err(()) => Span::styled("[invalid arg]", ui.fg(ThemeToken::Error)),
                Ok(p) => {
                    let p = sanitize_single_line(p.unwrap_or(""));
                    let text = if tool == ListTool::Grep {
                        format!("/{p}/")
                    } else {
                        p
                    };
                    Span::styled(text, ui.fg(ThemeToken::Accent))
                }
            };
            call.push(title(
                ui,
                if tool == ListTool::Grep {
                    "grep"
                } else {
                    "find"
                },
            ));
            call.push(Span::raw(" "));
            call.push(pattern);
            call.push(Span::styled(format!(" in {path}"), output_style));
            if tool == ListTool::Grep {
                if let Ok(Some(glob)) = state.str_arg(&["glob"]) {
                    call.push(Span::styled(
                        format!(" ({})", sanitize_single_line(glob)),
                        output_style,
                    ));
                }
                if let Some(l) = limit {
                    call.push(Span::styled(format!(" limit {l}"), output_style));
                }
            } else if let Some(l) = limit {
                call.push(Span::styled(format!(" (limit {l})"), output_style));
            }
        }
    }
    let mut out: Logical = vec![call];
    let Some(result) = &state.result else {
        return out;
    };
    let text = result.text_for(ui);
    let output = text.trim();
    if !output.is_empty() {
        let limit = if tool == ListTool::Grep {
            GREP_PREVIEW_LINES
        } else {
            LIST_PREVIEW_LINES
        };
        out.push(Vec::new());
        out.extend(preview(
            plain_lines(output, output_style),
            limit,
            state.expanded,
            ui,
            false,
        ));
    }
    let mut warnings = Vec::new();
    let limit_key = match tool {
        ListTool::Ls => ("entryLimitReached", "entries limit"),
        ListTool::Find => ("resultLimitReached", "results limit"),
        ListTool::Grep => ("matchLimitReached", "matches limit"),
    };
    if let Some(n) = result
        .detail(limit_key.0)
        .filter(|v| !v.is_null() && v.as_bool() != Some(false))
    {
        warnings.push(format!("{n} {}", limit_key.1));
    }
    if let Some(t) = result
        .detail("truncation")
        .filter(|t| t.get("truncated").and_then(Value::as_bool) == Some(true))
    {
        warnings.push(format!("{} limit", max_bytes_text(t)));
    }
    if tool == ListTool::Grep
        && result.detail("linesTruncated").and_then(Value::as_bool) == Some(true)
    {
        warnings.push("some lines truncated".to_string());
    }
    if !warnings.is_empty() {
        out.push(vec![Span::styled(
            format!("[Truncated: {}]", warnings.join(", ")),
            ui.fg(ThemeToken::Warning),
        )]);
    }
    out
}

/// Tools without a dedicated view: the name, the arguments as JSON, the output.
fn generic(state: &ToolExecutionState, ui: &Ui<'_>) -> Logical {
    let mut out: Logical = vec![vec![title(ui, &sanitize_single_line(&state.call.name))]];
    let args = serde_json::to_string_pretty(&state.call.arguments).unwrap_or_default();
    if !args.is_empty() && state.call.arguments != Value::Null {
        out.push(Vec::new());
        out.extend(plain_lines(&sanitize(&args), ui.fg(ThemeToken::Text)));
    }
    if let Some(result) = &state.result {
        let text = result.text_for(ui);
        if !text.is_empty() {
            let style = if result.is_error {
                ui.fg(ThemeToken::Error)
            } else {
                ui.fg(ThemeToken::ToolOutput)
            };
            out.extend(plain_lines(&text, style));
        }
    }
    out
}
