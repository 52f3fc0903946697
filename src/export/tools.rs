//! Tool calls in the export: each call is drawn as a card holding its arguments and its
//! result, with pi's per-tool views (`read` path and line range with highlighted
//! content, `edit` coloured diff from `details.diff`, `write` content, `bash` command and
//! ANSI-coloured output, `ls`/`find`/`grep` arguments) and a generic JSON view for any
//! other tool. Long outputs are clamped to a few lines with a button to expand them.
//!
//! Arguments come from the model and may have any JSON type: a field that should be a
//! string but is not is shown as `[invalid arg]` rather than guessed at.
//!
//! Highlighting file contents is by far the slowest part of an export (syntect needs
//! tens of microseconds a line), so a session's `read` results and `write` contents are
//! coloured newest first up to [`HIGHLIGHT_BUDGET_LINES`]; older ones are plain text.
//! The choice is made before rendering, so the page does not depend on timing.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::ansi::ansi_to_html;
use super::escape::{escape_html, push_escaped};
use super::highlight::{language_for_path, push_highlighted};
use crate::ai::message::{ToolCall, ToolResultMessage, UserBlock};
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

/// Lines of `read`/`write` file contents an export highlights (newest first). syntect
/// needs about 0.1 ms a line, so this bounds the colouring of a huge session to about a
/// second of CPU time, spread over all cores.
pub const HIGHLIGHT_BUDGET_LINES: usize = 10_000;

/// Tool calls and results of the whole session, by tool call id (first one wins).
#[derive(Debug, Default)]
pub struct ToolIndex<'a> {
    calls: HashMap<&'a str, &'a ToolCall>,
    results: HashMap<&'a str, &'a ToolResultMessage>,
    /// Calls whose file content is highlighted (see [`ToolIndex::plan_highlighting`]).
    highlighted: HashSet<&'a str>,
}

impl<'a> ToolIndex<'a> {
    pub fn build(entries: &'a [SessionEntry]) -> Self {
        let mut index = ToolIndex::default();
        for entry in entries {
            match entry.message() {
                Some(AgentMessage::Assistant(a)) => {
                    for call in a.tool_calls() {
                        index.calls.entry(call.id.as_str()).or_insert(call);
                    }
                }
                Some(AgentMessage::ToolResult(r)) => {
                    index.results.entry(r.tool_call_id.as_str()).or_insert(r);
                }
                _ => {}
            }
        }
        index
    }

    /// Chooses the calls whose file contents get colours: walking `calls_newest_first`,
    /// each `read` result or `write` content in a known language is taken while it fits
    /// in `budget_lines`.
    pub fn plan_highlighting(
        &mut self,
        calls_newest_first: impl Iterator<Item = &'a ToolCall>,
        mut budget_lines: usize,
    ) {
        for call in calls_newest_first {
            let path = match str_arg(&call.arguments, &["path", "file_path"]) {
                Arg::Str(p) => p,
                _ => continue,
            };
            let lines = match call.name.as_str() {
                "read" => self
                    .result(&call.id)
                    .filter(|r| !r.is_error)
                    .map(|r| line_count(&r.text())),
                "write" => match str_arg(&call.arguments, &["content"]) {
                    Arg::Str(c) => Some(line_count(c)),
                    _ => None,
                },
                _ => None,
            };
            let Some(lines) = lines else { continue };
            if lines <= budget_lines && language_for_path(path).is_some() {
                budget_lines -= lines;
                self.highlighted.insert(call.id.as_str());
            }
        }
    }

    /// Whether the file content of this call is highlighted.
    pub fn highlights(&self, call_id: &str) -> bool {
        self.highlighted.contains(call_id)
    }

    pub fn call(&self, id: &str) -> Option<&'a ToolCall> {
        self.calls.get(id).copied()
    }

    pub fn result(&self, id: &str) -> Option<&'a ToolResultMessage> {
        self.results.get(id).copied()
    }

    /// Whether this result is drawn inside its call's card (so its own entry is empty).
    pub fn is_shown_with_call(&self, result: &ToolResultMessage) -> bool {
        self.calls.contains_key(result.tool_call_id.as_str())
            && self
                .result(&result.tool_call_id)
                .is_some_and(|r| std::ptr::eq(r, result))
    }
}

/// A string argument as the model sent it.
enum Arg<'a> {
    Missing,
    Str(&'a str),
    Invalid,
}

fn str_arg<'a>(args: &'a Value, names: &[&str]) -> Arg<'a> {
    for name in names {
        match args.get(name) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => return Arg::Str(s),
            Some(_) => return Arg::Invalid,
        }
    }
    Arg::Missing
}

fn int_arg(args: &Value, name: &str) -> Option<i64> {
    args.get(name).and_then(Value::as_i64)
}

/// `/home/<user>/x` and `/Users/<user>/x` become `~/x`, as in pi's views.
pub fn shorten_path(path: &str) -> String {
    for base in ["/home/", "/Users/"] {
        if let Some(rest) = path.strip_prefix(base)
            && let Some(slash) = rest.find('/')
        {
            return format!("~{}", &rest[slash..]);
        }
    }
    path.to_string()
}

fn read_range(args: &Value) -> Option<String> {
    let offset = int_arg(args, "offset");
    let limit = int_arg(args, "limit");
    if offset.is_none() && limit.is_none() {
        return None;
    }
    let start = offset.unwrap_or(1);
    Some(match limit {
        Some(limit) => format!(":{start}-{}", start.saturating_add(limit).saturating_sub(1)),
        None => format!(":{start}"),
    })
}

fn single_line(text: &str) -> String {
    text.replace(['\n', '\t', '\r'], " ").trim().to_string()
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

/// One-line description of a call for the sidebar: `[read: ~/a.rs:1-20]`, `[bash: ls]`.
pub fn call_summary(name: &str, args: &Value) -> String {
    let path = |names: &[&str], default: &str| match str_arg(args, names) {
        Arg::Str(s) => shorten_path(s),
        Arg::Missing => default.to_string(),
        Arg::Invalid => "[invalid arg]".to_string(),
    };
    let text = |names: &[&str]| match str_arg(args, names) {
        Arg::Str(s) => s.to_string(),
        Arg::Missing => String::new(),
        Arg::Invalid => "[invalid arg]".to_string(),
    };
    match name {
        "read" => format!(
            "[read: {}{}]",
            path(&["path", "file_path"], ""),
            read_range(args).unwrap_or_default()
        ),
        "write" | "edit" => format!("[{name}: {}]", path(&["path", "file_path"], "")),
        "bash" => format!("[bash: {}]", cut(&single_line(&text(&["command"])), 50)),
        "grep" => format!(
            "[grep: /{}/ in {}]",
            text(&["pattern"]),
            path(&["path"], ".")
        ),
        "find" => format!("[find: {} in {}]", text(&["pattern"]), path(&["path"], ".")),
        "ls" => format!("[ls: {}]", path(&["path"], ".")),
        _ => format!("[{name}: {}]", cut(&args.to_string(), 40)),
    }
}

const INVALID_ARG: &str = "<span class=\"tool-error\">[invalid arg]</span>";

fn push_arg(out: &mut String, arg: Arg<'_>, shorten: bool, default: &str) {
    match arg {
        Arg::Str(s) if shorten => push_escaped(out, &shorten_path(s)),
        Arg::Str(s) => push_escaped(out, s),
        Arg::Missing => push_escaped(out, default),
        Arg::Invalid => out.push_str(INVALID_ARG),
    }
}

/// Writes an output block of `line_count` lines; longer than `max_lines` it starts
/// clamped, with a button that shows the rest.
pub fn push_output(out: &mut String, inner_html: &str, line_count: usize, max_lines: usize) {
    if line_count > max_lines {
        out.push_str(&format!(
            "<div class=\"out clamp\" style=\"--clamp:{max_lines}\"><pre>"
        ));
        out.push_str(inner_html);
        out.push_str(&format!(
            "</pre></div><button type=\"button\" class=\"expand\">… {} more lines</button>",
            line_count - max_lines
        ));
    } else {
        out.push_str("<div class=\"out\"><pre>");
        out.push_str(inner_html);
        out.push_str("</pre></div>");
    }
}

fn line_count(text: &str) -> usize {
    text.trim_end_matches('\n').lines().count().max(1)
}

fn push_code_output(out: &mut String, text: &str, language: Option<&str>, max_lines: usize) {
    let mut html = String::with_capacity(text.len() + 64);
    push_highlighted(&mut html, text, language);
    push_output(out, &html, line_count(text), max_lines);
}

fn push_plain_output(out: &mut String, text: &str, max_lines: usize) {
    push_output(out, &escape_html(text), line_count(text), max_lines);
}

/// The image types a page may show inline; anything else (SVG can carry script) is not.
const INLINE_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Writes the image blocks of a content list as zoomable `data:` images.
pub fn push_images(out: &mut String, blocks: &[UserBlock]) {
    let images: Vec<_> = blocks
        .iter()
        .filter_map(|b| match b {
            UserBlock::Image(img) => Some(img),
            UserBlock::Text(_) => None,
        })
        .collect();
    if images.is_empty() {
        return;
    }
    out.push_str("<div class=\"images\">");
    for img in images {
        let mime = img.mime_type.trim().to_ascii_lowercase();
        let data_ok = img
            .data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r'));
        if INLINE_IMAGE_TYPES.contains(&mime.as_str()) && data_ok && !img.data.is_empty() {
            out.push_str("<img class=\"zoomable\" alt=\"image\" src=\"data:");
            out.push_str(&mime);
            out.push_str(";base64,");
            out.push_str(&img.data.replace(['\n', '\r'], ""));
            out.push_str("\">");
        } else {
            out.push_str("<div class=\"note\">[image not shown: ");
            push_escaped(out, &img.mime_type);
            out.push_str("]</div>");
        }
    }
    out.push_str("</div>");
}

fn result_text(result: &ToolResultMessage) -> String {
    result.text()
}

/// Writes the card of one tool call with its result (if the session has it).
pub fn push_tool_call(
    out: &mut String,
    call: &ToolCall,
    result: Option<&ToolResultMessage>,
    highlight: bool,
) {
    let status = match result {
        None => "pending",
        Some(r) if r.is_error => "error",
        Some(_) => "success",
    };
    out.push_str(&format!("<div class=\"tool {status}\">"));
    let args = &call.arguments;
    match call.name.as_str() {
        "bash" => {
            out.push_str("<div class=\"tool-head\"><span class=\"cmd\">$ ");
            push_arg(out, str_arg(args, &["command"]), false, "...");
            out.push_str("</span>");
            if let Some(t) = args.get("timeout").and_then(Value::as_f64) {
                out.push_str(&format!(" <span class=\"dim\">(timeout {t}s)</span>"));
            }
            out.push_str("</div>");
            if let Some(r) = result {
                push_images(out, &r.content);
                let text = result_text(r);
                let text = text.trim();
                if !text.is_empty() {
                    push_output(out, &ansi_to_html(text), line_count(text), 5);
                }
            }
        }
        "read" => {
            let path = str_arg(args, &["path", "file_path"]);
            let language = match path {
                Arg::Str(p) if highlight => language_for_path(p),
                _ => None,
            };
            out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">read</span> <span class=\"tool-path\">");
            let range = matches!(path, Arg::Str(_))
                .then(|| read_range(args))
                .flatten();
            push_arg(out, path, true, "");
            if let Some(range) = range {
                out.push_str("<span class=\"line-range\">");
                push_escaped(out, &range);
                out.push_str("</span>");
            }
            out.push_str("</span></div>");
            if let Some(r) = result {
                push_images(out, &r.content);
                let text = result_text(r);
                if !text.is_empty() {
                    let language = if r.is_error {
                        None
                    } else {
                        language.as_deref()
                    };
                    push_code_output(out, &text, language, 10);
                }
            }
        }
        "write" => {
            let path = str_arg(args, &["path", "file_path"]);
            let language = match path {
                Arg::Str(p) if highlight => language_for_path(p),
                _ => None,
            };
            out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">write</span> <span class=\"tool-path\">");
            push_arg(out, path, true, "");
            out.push_str("</span>");
            let content = str_arg(args, &["content"]);
            if let Arg::Str(c) = content {
                let lines = line_count(c);
                if lines > 10 {
                    out.push_str(&format!(" <span class=\"dim\">({lines} lines)</span>"));
                }
            }
            out.push_str("</div>");
            match content {
                Arg::Str(c) if !c.is_empty() => push_code_output(out, c, language.as_deref(), 10),
                Arg::Invalid => out.push_str(
                    "<div class=\"tool-error\">[invalid content arg - expected string]</div>",
                ),
                _ => {}
            }
            if let Some(r) = result {
                push_result_note(out, r);
            }
        }
        "edit" => {
            out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">edit</span> <span class=\"tool-path\">");
            push_arg(out, str_arg(args, &["path", "file_path"]), true, "");
            out.push_str("</span></div>");
            let diff = result
                .and_then(|r| r.details.as_ref())
                .and_then(|d| d.get("diff"))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty());
            match (diff, result) {
                (Some(diff), _) => push_diff(out, diff),
                (None, Some(r)) => push_result_note(out, r),
                (None, None) => {}
            }
        }
        name @ ("ls" | "find" | "grep") => {
            out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">");
            push_escaped(out, name);
            out.push_str("</span> ");
            if name != "ls" {
                out.push_str("<span class=\"tool-pattern\">");
                push_arg(out, str_arg(args, &["pattern"]), false, "");
                out.push_str("</span> <span class=\"dim\">in</span> ");
            }
            out.push_str("<span class=\"tool-path\">");
            push_arg(out, str_arg(args, &["path"]), true, ".");
            out.push_str("</span>");
            if let Some(limit) = int_arg(args, "limit") {
                out.push_str(&format!(" <span class=\"dim\">(limit {limit})</span>"));
            }
            out.push_str("</div>");
            if let Some(r) = result {
                let text = result_text(r);
                let text = text.trim_end();
                if !text.is_empty() {
                    push_plain_output(out, text, if name == "ls" { 20 } else { 10 });
                }
            }
        }
        other => {
            out.push_str("<div class=\"tool-head\"><span class=\"tool-name\">");
            push_escaped(out, other);
            out.push_str("</span></div>");
            let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
            if !matches!(args, Value::Null) && pretty != "{}" {
                push_plain_output(out, &pretty, 10);
            }
            if let Some(r) = result {
                push_images(out, &r.content);
                let text = result_text(r);
                if !text.is_empty() {
                    push_plain_output(out, &text, 10);
                }
            }
        }
    }
    out.push_str("</div>");
}

/// A result's text as a short note under the call (write/edit success or error text).
fn push_result_note(out: &mut String, result: &ToolResultMessage) {
    let text = result_text(result);
    let text = text.trim();
    if !text.is_empty() {
        let class = if result.is_error {
            "result-note tool-error"
        } else {
            "result-note"
        };
        out.push_str(&format!("<div class=\"{class}\">"));
        push_escaped(out, text);
        out.push_str("</div>");
    }
}

/// pi's edit diff (`+N added`, `-N removed`, ` N context`, ` ... ` gaps), coloured.
fn push_diff(out: &mut String, diff: &str) {
    out.push_str("<div class=\"out diff\"><pre>");
    for (i, line) in diff.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let class = match line.as_bytes().first() {
            Some(b'+') => "d-add",
            Some(b'-') => "d-del",
            _ => "d-ctx",
        };
        out.push_str(&format!("<span class=\"{class}\">"));
        push_escaped(out, line);
        out.push_str("</span>");
    }
    out.push_str("</pre></div>");
}

/// A tool result whose call is not in the session: drawn on its own.
pub fn push_orphan_result(out: &mut String, result: &ToolResultMessage) {
    let status = if result.is_error { "error" } else { "success" };
    out.push_str(&format!(
        "<div class=\"tool {status}\"><div class=\"tool-head\"><span class=\"tool-name\">"
    ));
    push_escaped(out, &result.tool_name);
    out.push_str("</span> <span class=\"dim\">result</span></div>");
    push_images(out, &result.content);
    let text = result_text(result);
    if !text.is_empty() {
        push_plain_output(out, &text, 10);
    }
    out.push_str("</div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_summaries_match_pis_tree_labels() {
        let cases = [
            call_summary(
                "read",
                &json!({"path": "/home/ann/p/a.rs", "offset": 5, "limit": 10}),
            ),
            call_summary("read", &json!({"path": 7})),
            call_summary(
                "read",
                &json!({"path": "a", "offset": i64::MAX, "limit": 5}),
            ),
            call_summary("bash", &json!({"command": "ls -la\n| wc -l"})),
            call_summary("grep", &json!({"pattern": "fn", "path": "src"})),
            call_summary("find", &json!({"pattern": "*.rs"})),
            call_summary("ls", &json!({})),
            call_summary("edit", &json!({"path": "/Users/bo/x.txt"})),
            call_summary(
                "mcp",
                &json!({"query": "a very long argument value that goes on"}),
            ),
        ];
        insta::assert_snapshot!(cases.join("\n"), @r#"
        [read: ~/p/a.rs:5-14]
        [read: [invalid arg]]
        [read: a:9223372036854775807-9223372036854775806]
        [bash: ls -la | wc -l]
        [grep: /fn/ in src]
        [find: *.rs in .]
        [ls: .]
        [edit: ~/x.txt]
        [mcp: {"query":"a very long argument value tha...]
        "#);
    }

    #[test]
    fn file_contents_are_highlighted_newest_first_within_the_budget() {
        let entries: Vec<SessionEntry> = (0..4)
            .flat_map(|i| {
                let call = json!({"type": "message", "id": format!("a{i}"), "parentId": null,
                    "timestamp": "t", "message": {"role": "assistant", "stopReason": "toolUse",
                    "timestamp": 0, "content": [{"type": "toolCall", "id": format!("c{i}"),
                    "name": "read", "arguments": {"path": if i == 2 { "notes.txt" } else { "a.rs" }}}]}});
                let result = json!({"type": "message", "id": format!("r{i}"), "parentId": null,
                    "timestamp": "t", "message": {"role": "toolResult", "toolCallId": format!("c{i}"),
                    "toolName": "read", "isError": false, "timestamp": 0,
                    "content": [{"type": "text", "text": "fn a() {}\n".repeat(10)}]}});
                [call, result]
            })
            .map(|v| SessionEntry::from_json_line(&v.to_string()).unwrap())
            .collect();
        let mut index = ToolIndex::build(&entries);
        let newest_first: Vec<&ToolCall> = entries
            .iter()
            .rev()
            .filter_map(|e| e.message().and_then(AgentMessage::as_assistant))
            .flat_map(|a| a.tool_calls())
            .collect();
        index.plan_highlighting(newest_first.into_iter(), 25);
        // c3 and c1 fit (c2 is plain text and costs nothing); c0 is over budget.
        let chosen: Vec<bool> = (0..4).map(|i| index.highlights(&format!("c{i}"))).collect();
        assert_eq!(chosen, [false, true, false, true]);
    }

    #[test]
    fn long_output_is_clamped_with_an_expand_button() {
        let mut out = String::new();
        push_output(&mut out, "x", 12, 10);
        assert_eq!(
            out,
            "<div class=\"out clamp\" style=\"--clamp:10\"><pre>x</pre></div><button type=\"button\" class=\"expand\">… 2 more lines</button>"
        );
    }

    #[test]
    fn unsafe_image_types_and_data_are_not_inlined() {
        let mut out = String::new();
        let img = |mime: &str, data: &str| {
            UserBlock::Image(crate::ai::message::ImageContent {
                data: data.into(),
                mime_type: mime.into(),
                extra: Default::default(),
            })
        };
        push_images(
            &mut out,
            &[
                img("image/png", "iVBORw0KGgo="),
                img("image/svg+xml", "PHN2Zz4="),
                img("image/png", "\"><script>"),
            ],
        );
        insta::assert_snapshot!(out, @r#"<div class="images"><img class="zoomable" alt="image" src="data:image/png;base64,iVBORw0KGgo="><div class="note">[image not shown: image/svg+xml]</div><div class="note">[image not shown: image/png]</div></div>"#);
    }
}
