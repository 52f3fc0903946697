//! A plain-text drawing of a session tree, for tests (inline snapshots) and debugging:
//! one line per entry with its id, type or role, the first words of its text, its label
//! and a `← leaf` marker.
//!
//! A chain of single children stays in one column; only a branch point indents, with
//! `├─`/`└─` connectors and `│` rails, so a long conversation does not drift right:
//!
//! ```text
//! 00000001 user "hello"
//! 00000002 assistant "hi"
//! ├─ 00000003 user "try A"
//! │  00000004 assistant "A done"
//! └─ 00000005 user "try B"  ← leaf
//! ```
//!
//! This is not the `/tree` selector UI; it only reads the session.

use std::fmt::Write;

use crate::ai::message::{AssistantBlock, StopReason};
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;
use crate::session::manager::SessionManager;

/// Characters of text shown per entry.
const PREVIEW_CHARS: usize = 40;

fn preview(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut out: String = line.chars().take(PREVIEW_CHARS).collect();
    if line.chars().count() > PREVIEW_CHARS || text.trim().lines().count() > 1 {
        out.push('…');
    }
    format!("\"{out}\"")
}

fn describe_message(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(m) => format!("user {}", preview(&m.content.text())),
        AgentMessage::Assistant(m) => {
            let mut out = "assistant".to_string();
            let text = m.text();
            if !text.is_empty() {
                out.push(' ');
                out.push_str(&preview(&text));
            } else if let Some(thinking) = m.content.iter().find_map(|b| match b {
                AssistantBlock::Thinking(t) => Some(&t.thinking),
                _ => None,
            }) {
                out.push_str(" thinking ");
                out.push_str(&preview(thinking));
            }
            let calls: Vec<&str> = m.tool_calls().map(|c| c.name.as_str()).collect();
            if !calls.is_empty() {
                out.push_str(" → ");
                out.push_str(&calls.join(", "));
            }
            match m.stop_reason {
                StopReason::Error => {
                    let error = m.error_message.as_deref().unwrap_or("");
                    out.push_str(&format!(" (error: {error})"));
                }
                StopReason::Aborted => out.push_str(" (aborted)"),
                StopReason::Stop | StopReason::Length | StopReason::ToolUse => {}
            }
            out
        }
        AgentMessage::ToolResult(m) => {
            let error = if m.is_error { " (error)" } else { "" };
            format!("toolResult {} {}{error}", m.tool_name, preview(&m.text()))
        }
        AgentMessage::BashExecution(m) => {
            format!("bashExecution {}", preview(&format!("$ {}", m.command)))
        }
        AgentMessage::Custom(m) => {
            format!("custom[{}] {}", m.custom_type, preview(&m.content.text()))
        }
        AgentMessage::BranchSummary(m) => format!("branchSummary {}", preview(&m.summary)),
        AgentMessage::CompactionSummary(m) => format!("compactionSummary {}", preview(&m.summary)),
        AgentMessage::System(m) => format!(
            "system sections={} +tools={} -tools={}",
            m.sections.as_ref().map_or(0, |s| s.len()),
            m.tools_added.as_ref().map_or(0, Vec::len),
            m.tools_removed.as_ref().map_or(0, Vec::len)
        ),
        AgentMessage::Unknown(_) => format!("message({})", message.role()),
    }
}

fn describe(entry: &SessionEntry) -> String {
    match entry {
        SessionEntry::Message(m) => describe_message(&m.message),
        SessionEntry::ThinkingLevelChange(e) => {
            format!("thinking_level_change {}", e.thinking_level)
        }
        SessionEntry::ModelChange(e) => format!("model_change {}/{}", e.provider, e.model_id),
        SessionEntry::Compaction(e) => format!(
            "compaction {} (keeps from {}, {} tokens before)",
            preview(&e.summary),
            e.first_kept_entry_id,
            e.tokens_before
        ),
        SessionEntry::BranchSummary(e) => {
            format!("branch_summary from {} {}", e.from_id, preview(&e.summary))
        }
        SessionEntry::Custom(e) => format!("custom {}", e.custom_type),
        SessionEntry::CustomMessage(e) => {
            format!(
                "custom_message {} {}",
                e.custom_type,
                preview(&e.content.text())
            )
        }
        SessionEntry::Label(e) => match &e.label {
            Some(label) => format!("label {} \"{label}\"", e.target_id),
            None => format!("label {} cleared", e.target_id),
        },
        SessionEntry::SessionInfo(e) => {
            format!("session_info {}", preview(e.name.as_deref().unwrap_or("")))
        }
        SessionEntry::ContextEdit(e) => match &e.replacement {
            None => format!("context_edit {} omitted", e.target_id),
            Some(_) => format!("context_edit {} replaced", e.target_id),
        },
        SessionEntry::Usage(e) => format!("usage {} {}/{}", e.kind, e.provider, e.model),
        SessionEntry::Unknown(_) => {
            let kind = entry.type_name();
            if kind.is_empty() {
                "(unreadable entry)".into()
            } else {
                kind.to_string()
            }
        }
    }
}

impl SessionManager {
    /// Draws the whole tree as text (see the module docs).
    pub fn render_tree(&self) -> String {
        let tree = self.tree();
        let mut out = String::new();
        // (node, prefix of its line, connector, prefix of its children's lines)
        let mut stack: Vec<(usize, String, &str, String)> = Vec::new();
        let roots = tree.roots();
        push_siblings(&mut stack, roots, "");
        while let Some((node, prefix, connector, child_prefix)) = stack.pop() {
            let n = tree.node(node);
            // Tree node indexes are entry indexes, so duplicated ids still draw right.
            let text = describe(self.entry_at(node as u32));
            let _ = write!(out, "{prefix}{connector}{} {text}", n.id);
            if let Some(label) = &n.label {
                let _ = write!(out, " [{label}]");
            }
            if self.leaf == Some(node as u32) {
                out.push_str("  ← leaf");
            }
            out.push('\n');
            push_siblings(&mut stack, tree.children(node), &child_prefix);
        }
        out
    }
}

/// Queues `nodes` (in order) below a line whose children start with `prefix`: a single
/// node continues the column, several get connectors.
fn push_siblings(
    stack: &mut Vec<(usize, String, &'static str, String)>,
    nodes: &[usize],
    prefix: &str,
) {
    if let [only] = nodes {
        stack.push((*only, prefix.to_string(), "", prefix.to_string()));
        return;
    }
    for (i, &node) in nodes.iter().enumerate().rev() {
        let last = i + 1 == nodes.len();
        let (connector, rail) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        stack.push((
            node,
            prefix.to_string(),
            connector,
            format!("{prefix}{rail}"),
        ));
    }
}
