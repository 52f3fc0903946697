//! The sidebar: the full session tree as one row per entry (every branch, every entry
//! type), each row a link to `#entry=<id>`, plus the search box, the filter buttons and
//! the "back to leaf" link. Rows carry their parent id and filter flags in `data-`
//! attributes so the page's script can filter and re-lay them out; the server writes
//! them laid out for the default filter, so the tree reads correctly before any script.

use super::escape::{fragment_value, push_escaped};
use super::tools::{ToolIndex, call_summary};
use super::tree::{FilterMode, SessionTree, layout};
use crate::ai::message::StopReason;
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;

const ROW_TEXT_CHARS: usize = 100;

fn one_line(text: &str) -> String {
    let line = text.replace(['\n', '\t', '\r'], " ");
    let line = line.trim();
    match line.char_indices().nth(ROW_TEXT_CHARS) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

fn push_role(out: &mut String, class: &str, role: &str, text: &str) {
    out.push_str("<span class=\"");
    out.push_str(class);
    out.push_str("\">");
    push_escaped(out, role);
    out.push_str("</span>");
    if !text.is_empty() {
        out.push(' ');
        push_escaped(out, text);
    }
}

/// The row text of an entry, as pi's tree view words it (`user: …`, `[read: a.txt]`,
/// `[compaction: 12k tokens]` …).
pub fn push_row_text(out: &mut String, entry: &SessionEntry, tools: &ToolIndex<'_>) {
    match entry {
        SessionEntry::Message(m) => match &m.message {
            AgentMessage::User(u) => {
                push_role(out, "r-user", "user:", &one_line(&u.content.text()));
            }
            AgentMessage::Assistant(a) => {
                let text = one_line(&a.text());
                if !text.is_empty() {
                    push_role(out, "r-assistant", "assistant:", &text);
                } else if a.stop_reason == StopReason::Aborted {
                    push_role(out, "r-assistant", "assistant:", "");
                    out.push_str(" <span class=\"r-muted\">(aborted)</span>");
                } else if let Some(err) = a.error_message.as_deref() {
                    push_role(out, "r-assistant", "assistant:", "");
                    out.push_str(" <span class=\"r-error\">");
                    push_escaped(out, &one_line(err));
                    out.push_str("</span>");
                } else {
                    push_role(out, "r-assistant", "assistant:", "");
                    out.push_str(" <span class=\"r-muted\">(no text)</span>");
                }
            }
            AgentMessage::ToolResult(r) => {
                let summary = match tools.call(&r.tool_call_id) {
                    Some(call) => call_summary(&call.name, &call.arguments),
                    None => format!("[{}]", r.tool_name),
                };
                push_role(out, "r-tool", &summary, "");
            }
            AgentMessage::BashExecution(b) => {
                push_role(out, "r-tool", "[bash]:", &one_line(&b.command));
            }
            AgentMessage::Custom(c) => {
                let tag = format!("[{}]:", c.custom_type);
                push_role(out, "r-custom", &tag, &one_line(&c.content.text()));
            }
            AgentMessage::BranchSummary(s) => {
                push_role(out, "r-summary", "[branch summary]:", &one_line(&s.summary));
            }
            AgentMessage::CompactionSummary(c) => {
                let tag = format!(
                    "[compaction: {}k tokens]",
                    (c.tokens_before as f64 / 1000.0).round()
                );
                push_role(out, "r-summary", &tag, "");
            }
            AgentMessage::System(_) | AgentMessage::Unknown(_) => {
                let tag = format!("[{}]", m.message.role());
                push_role(out, "r-muted", &tag, "");
            }
        },
        SessionEntry::Compaction(c) => {
            let tag = format!(
                "[compaction: {}k tokens]",
                (c.tokens_before as f64 / 1000.0).round()
            );
            push_role(out, "r-summary", &tag, "");
        }
        SessionEntry::BranchSummary(b) => {
            push_role(out, "r-summary", "[branch summary]:", &one_line(&b.summary));
        }
        SessionEntry::CustomMessage(c) => {
            let tag = format!("[{}]:", c.custom_type);
            push_role(out, "r-custom", &tag, &one_line(&c.content.text()));
        }
        SessionEntry::ModelChange(m) => {
            push_role(out, "r-muted", &format!("[model: {}]", m.model_id), "");
        }
        SessionEntry::ThinkingLevelChange(t) => {
            push_role(
                out,
                "r-muted",
                &format!("[thinking: {}]", t.thinking_level),
                "",
            );
        }
        SessionEntry::Label(l) => {
            let text = match l.label.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(label) => format!("[label: {}]", one_line(label)),
                None => "[label cleared]".to_string(),
            };
            push_role(out, "r-muted", &text, "");
        }
        SessionEntry::SessionInfo(s) => {
            let text = match s.name.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(name) => format!("[session name: {}]", one_line(name)),
                None => "[session info]".to_string(),
            };
            push_role(out, "r-muted", &text, "");
        }
        SessionEntry::Custom(c) => {
            push_role(out, "r-muted", &format!("[custom: {}]", c.custom_type), "");
        }
        SessionEntry::ContextEdit(_) => push_role(out, "r-muted", "[context edit]", ""),
        SessionEntry::Usage(u) => push_role(out, "r-muted", &format!("[usage: {}]", u.kind), ""),
        SessionEntry::Unknown(_) => {
            push_role(out, "r-muted", &format!("[{}]", entry.type_name()), "");
        }
    }
}

/// Writes the sidebar. `selected` is the node whose path is shown when the page opens.
pub fn push_sidebar(
    out: &mut String,
    tree: &SessionTree<'_>,
    tools: &ToolIndex<'_>,
    selected: Option<usize>,
) {
    let visible = tree.visible(FilterMode::Default);
    let rows = layout(tree, &visible);
    let mut prefixes: Vec<Option<&str>> = vec![None; tree.entries.len()];
    for row in &rows {
        prefixes[row.node] = Some(row.prefix.as_str());
    }
    let mut on_path = vec![false; tree.entries.len()];
    if let Some(sel) = selected {
        for i in tree.path_to(sel) {
            on_path[i] = true;
        }
    }

    out.push_str("<aside id=\"sidebar\" aria-label=\"Session tree\"><div class=\"sidebar-top\">");
    out.push_str("<input type=\"search\" id=\"tree-search\" placeholder=\"Search…\" aria-label=\"Search entries\" autocomplete=\"off\">");
    out.push_str("<div class=\"filters\" role=\"group\" aria-label=\"Filter\">");
    for mode in FilterMode::ALL {
        let active = if mode == FilterMode::Default {
            " active"
        } else {
            ""
        };
        out.push_str(&format!(
            "<button type=\"button\" class=\"filter{active}\" data-filter=\"{}\">{}</button>",
            mode.name(),
            mode.title()
        ));
    }
    out.push_str("</div><div class=\"sidebar-actions\">");
    if let Some(leaf) = tree.leaf {
        out.push_str("<a id=\"back-to-leaf\" href=\"#entry=");
        push_escaped(out, &fragment_value(tree.id(leaf)));
        out.push_str("\">↩ Back to leaf</a>");
    }
    out.push_str("<button type=\"button\" id=\"sidebar-close\" aria-label=\"Close the tree\">✕</button></div></div>");

    out.push_str("<nav id=\"tree\">\n");
    for &node in &tree.preorder {
        let id = tree.id(node);
        let mut classes = String::from("node");
        if on_path[node] {
            classes.push_str(" on-path");
        }
        if Some(node) == selected {
            classes.push_str(" selected");
        }
        if Some(node) == tree.leaf {
            classes.push_str(" leaf");
        }
        out.push_str(&format!("<a class=\"{classes}\" href=\"#entry="));
        push_escaped(out, &fragment_value(id));
        out.push_str("\" data-id=\"");
        push_escaped(out, id);
        out.push('"');
        if let Some(p) = tree.parent[node] {
            out.push_str(" data-parent=\"");
            push_escaped(out, tree.id(p));
            out.push('"');
        }
        let flags = tree.flags(node).code();
        if !flags.is_empty() {
            out.push_str(" data-f=\"");
            out.push_str(&flags);
            out.push('"');
        }
        if prefixes[node].is_none() {
            out.push_str(" hidden");
        }
        out.push_str("><span class=\"prefix\">");
        out.push_str(prefixes[node].unwrap_or(""));
        out.push_str("</span><span class=\"marker\">");
        out.push_str(if on_path[node] { "•" } else { " " });
        out.push_str("</span><span class=\"row-text\">");
        if let Some(label) = tree.label(node) {
            out.push_str("<span class=\"r-label\">[");
            push_escaped(out, label);
            out.push_str("]</span> ");
        }
        push_row_text(out, tree.entries[node], tools);
        if Some(node) == tree.leaf {
            out.push_str(" <span class=\"leaf-mark\">← leaf</span>");
        }
        out.push_str("</span></a>\n");
    }
    out.push_str("</nav>");
    out.push_str(&format!(
        "<div id=\"tree-status\">{} / {} entries</div></aside>",
        rows.len(),
        tree.entries.len()
    ));
}
