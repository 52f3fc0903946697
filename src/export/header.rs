//! The page header: session identity (name, id, working directory, creation time, parent
//! session), totals over every entry of every branch (messages, tool calls, tokens, cost,
//! models) and, when the caller has them, the system prompt and the tool list, both
//! collapsible.

use serde_json::Value;

use super::entries::{compact_tokens, push_time};
use super::escape::push_escaped;
use super::tree::SessionTree;
use crate::ai::js::js_to_fixed;
use crate::ai::message::ToolSpec;
use crate::messages::AgentMessage;
use crate::session::entry::{SessionEntry, SessionHeader};

/// Totals over all entries.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SessionStats {
    pub user: usize,
    pub assistant: usize,
    pub tool_results: usize,
    pub bash_runs: usize,
    pub custom: usize,
    pub compactions: usize,
    pub branch_summaries: usize,
    pub tool_calls: usize,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// `provider/model` of the assistant messages, in order of first use.
    pub models: Vec<String>,
}

impl SessionStats {
    pub fn collect(entries: &[SessionEntry]) -> Self {
        let mut s = SessionStats::default();
        for entry in entries {
            match entry {
                SessionEntry::Message(m) => match &m.message {
                    AgentMessage::User(_) => s.user += 1,
                    AgentMessage::Assistant(a) => {
                        s.assistant += 1;
                        s.tool_calls += a.tool_calls().count();
                        s.input += a.usage.input;
                        s.output += a.usage.output;
                        s.cache_read += a.usage.cache_read;
                        s.cache_write += a.usage.cache_write;
                        let c = &a.usage.cost;
                        s.cost += c.input + c.output + c.cache_read + c.cache_write;
                        if !a.model.is_empty() {
                            let model = if a.provider.is_empty() {
                                a.model.clone()
                            } else {
                                format!("{}/{}", a.provider, a.model)
                            };
                            if !s.models.contains(&model) {
                                s.models.push(model);
                            }
                        }
                    }
                    AgentMessage::ToolResult(_) => s.tool_results += 1,
                    AgentMessage::BashExecution(_) => s.bash_runs += 1,
                    AgentMessage::Custom(_) => s.custom += 1,
                    AgentMessage::BranchSummary(_) => s.branch_summaries += 1,
                    AgentMessage::CompactionSummary(_) => s.compactions += 1,
                    AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
                },
                SessionEntry::CustomMessage(_) => s.custom += 1,
                SessionEntry::Compaction(_) => s.compactions += 1,
                SessionEntry::BranchSummary(_) => s.branch_summaries += 1,
                _ => {}
            }
        }
        s
    }

    pub fn messages_text(&self) -> String {
        let parts: Vec<String> = [
            (self.user, "user"),
            (self.assistant, "assistant"),
            (self.tool_results, "tool results"),
            (self.bash_runs, "shell commands"),
            (self.custom, "custom"),
            (self.compactions, "compactions"),
            (self.branch_summaries, "branch summaries"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(", ")
        }
    }

    pub fn tokens_text(&self) -> String {
        let parts: Vec<String> = [
            (self.input, "↑"),
            (self.output, "↓"),
            (self.cache_read, "R"),
            (self.cache_write, "W"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, sign)| format!("{sign}{}", compact_tokens(*n)))
        .collect();
        if parts.is_empty() {
            "0".into()
        } else {
            parts.join(" ")
        }
    }
}

/// The latest non-empty session name (`session_info` entries).
pub fn session_name(entries: &[SessionEntry]) -> Option<&str> {
    entries.iter().rev().find_map(|e| match e {
        SessionEntry::SessionInfo(s) => s.name.as_deref().map(str::trim).filter(|n| !n.is_empty()),
        _ => None,
    })
}

fn push_row(out: &mut String, label: &str, value_html: &str) {
    out.push_str("<dt>");
    out.push_str(label);
    out.push_str("</dt><dd>");
    out.push_str(value_html);
    out.push_str("</dd>");
}

fn escaped(text: &str) -> String {
    super::escape::escape_html(text)
}

/// Writes the header block.
pub fn push_header(
    out: &mut String,
    header: &SessionHeader,
    entries: &[SessionEntry],
    tree: &SessionTree<'_>,
    system_prompt: Option<&str>,
    tools: &[ToolSpec],
) {
    let stats = SessionStats::collect(entries);
    out.push_str("<header class=\"session-header\"><h1>");
    match session_name(entries) {
        Some(name) => push_escaped(out, name),
        None => {
            out.push_str("Session ");
            push_escaped(out, &header.id);
        }
    }
    out.push_str("</h1><dl class=\"info\">");
    push_row(out, "Session", &escaped(&header.id));
    if !header.cwd.is_empty() {
        push_row(out, "Directory", &escaped(&header.cwd));
    }
    let mut created = String::new();
    push_time(&mut created, &header.timestamp, true);
    if created.is_empty() {
        created = escaped(&header.timestamp);
    }
    push_row(out, "Created", &created);
    if let Some(parent) = &header.parent_session {
        push_row(out, "Forked from", &escaped(parent));
    }
    let models = if stats.models.is_empty() {
        "unknown".to_string()
    } else {
        stats.models.join(", ")
    };
    push_row(out, "Models", &escaped(&models));
    push_row(out, "Messages", &escaped(&stats.messages_text()));
    push_row(out, "Tool calls", &stats.tool_calls.to_string());
    push_row(out, "Tokens", &escaped(&stats.tokens_text()));
    push_row(out, "Cost", &format!("${}", js_to_fixed(stats.cost, 3)));
    let leaves = tree.children.iter().filter(|c| c.is_empty()).count();
    push_row(
        out,
        "Tree",
        &format!(
            "{} entries, {} {}",
            tree.entries.len(),
            leaves,
            if leaves == 1 { "branch" } else { "branches" }
        ),
    );
    out.push_str("</dl>");

    if let Some(prompt) = system_prompt.filter(|p| !p.trim().is_empty()) {
        let lines = prompt.lines().count();
        out.push_str(&format!(
            "<details class=\"card system-prompt\"><summary>System prompt <span class=\"dim\">({lines} lines)</span></summary><pre>"
        ));
        push_escaped(out, prompt);
        out.push_str("</pre></details>");
    }
    if !tools.is_empty() {
        push_tools(out, tools);
    }
    out.push_str("</header>");
}

fn push_tools(out: &mut String, tools: &[ToolSpec]) {
    out.push_str(&format!(
        "<details class=\"card tools-list\"><summary>Tools <span class=\"dim\">({})</span></summary><ul>",
        tools.len()
    ));
    for tool in tools {
        out.push_str("<li><span class=\"tool-item-name\">");
        push_escaped(out, &tool.name);
        out.push_str("</span> – ");
        push_escaped(out, &tool.description);
        let props = tool.parameters.get("properties").and_then(Value::as_object);
        if let Some(props) = props.filter(|p| !p.is_empty()) {
            let required: Vec<&str> = tool
                .parameters
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            out.push_str("<ul class=\"params\">");
            for (name, schema) in props {
                out.push_str("<li><span class=\"param-name\">");
                push_escaped(out, name);
                out.push_str("</span> <span class=\"param-type\">");
                let ty = match schema.get("type") {
                    Some(Value::String(t)) => t.clone(),
                    Some(Value::Array(ts)) => ts
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" | "),
                    _ => "any".into(),
                };
                push_escaped(out, &ty);
                out.push_str("</span> ");
                out.push_str(if required.contains(&name.as_str()) {
                    "<span class=\"param-required\">required</span>"
                } else {
                    "<span class=\"dim\">optional</span>"
                });
                if let Some(desc) = schema.get("description").and_then(Value::as_str) {
                    out.push_str("<div class=\"param-desc\">");
                    push_escaped(out, desc);
                    out.push_str("</div>");
                }
                out.push_str("</li>");
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>");
    }
    out.push_str("</ul></details>");
}
