//! The session tree over RPC: pi 1.6's `get_entries` and `get_tree` (nested nodes of whole
//! entries), and pi-rs's extensions, which pi only offers in its terminal UI (`/tree`,
//! labels): `get_tree_outline` (every entry with its parent, type, role, a short preview
//! and its label, plus the leaf), `get_entry` (one entry's raw JSON), `set_label` and the
//! options of `navigate_tree`.
//!
//! `get_tree_outline` is deliberately flat — entries in file order, each naming its parent — so a
//! client can draw the tree any way it likes and a large session stays one compact line.

use serde_json::{Map, Value, json};

use super::protocol::SummarizeMode;
use crate::ai::message::AssistantBlock;
use crate::core::agent_session::{AgentSession, NavigateOptions};
use crate::messages::AgentMessage;
use crate::session::entry::{EntryId, SessionEntry};

/// Characters of text in a preview.
const PREVIEW_CHARS: usize = 100;

/// The first `PREVIEW_CHARS` characters of `text`, runs of whitespace (newlines too)
/// folded to one space, `…` when cut.
fn preview(text: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in text.split_whitespace() {
        let separator = (count > 0).then_some(' ');
        for c in separator.into_iter().chain(word.chars()) {
            if count == PREVIEW_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

fn message_preview(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(m) => preview(&m.content.text()),
        AgentMessage::Assistant(m) => {
            let mut text = m.text();
            if text.trim().is_empty() {
                text = m
                    .content
                    .iter()
                    .find_map(|b| match b {
                        AssistantBlock::Thinking(t) => Some(t.thinking.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
            }
            let mut out = preview(&text);
            let calls: Vec<&str> = m.tool_calls().map(|c| c.name.as_str()).collect();
            if !calls.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str("→ ");
                out.push_str(&calls.join(", "));
            }
            if out.is_empty()
                && let Some(error) = &m.error_message
            {
                out = preview(error);
            }
            out
        }
        AgentMessage::ToolResult(m) => preview(&format!("{}: {}", m.tool_name, m.text())),
        AgentMessage::BashExecution(m) => preview(&format!("$ {}", m.command)),
        AgentMessage::Custom(m) => preview(&m.content.text()),
        AgentMessage::BranchSummary(m) => preview(&m.summary),
        AgentMessage::CompactionSummary(m) => preview(&m.summary),
        AgentMessage::System(_) | AgentMessage::Unknown(_) => String::new(),
    }
}

fn entry_preview(entry: &SessionEntry) -> String {
    match entry {
        SessionEntry::Message(m) => message_preview(&m.message),
        SessionEntry::ThinkingLevelChange(e) => e.thinking_level.clone(),
        SessionEntry::ModelChange(e) => format!("{}/{}", e.provider, e.model_id),
        SessionEntry::Compaction(e) => preview(&e.summary),
        SessionEntry::BranchSummary(e) => preview(&e.summary),
        SessionEntry::Custom(e) => e.custom_type.clone(),
        SessionEntry::CustomMessage(e) => preview(&e.content.text()),
        SessionEntry::Label(e) => e.label.as_deref().map(preview).unwrap_or_default(),
        SessionEntry::SessionInfo(e) => e.name.as_deref().map(preview).unwrap_or_default(),
        SessionEntry::Usage(e) => e.kind.clone(),
        SessionEntry::ContextEdit(_) | SessionEntry::Unknown(_) => String::new(),
    }
}

/// `get_tree_outline`: `{"leafId", "entries": [{"id", "parentId", "type", "role"?, "preview"?,
/// "label"?, "timestamp"}]}`, entries in file order, `parentId` resolved (`null` for
/// roots and for entries whose parent is missing from the file).
pub fn tree_json(session: &AgentSession) -> Value {
    session.with_session(|manager| {
        let tree = manager.tree();
        let nodes = tree.nodes();
        let entries: Vec<Value> = nodes
            .iter()
            .map(|node| {
                let entry = manager.entry(&node.id);
                let mut item = Map::new();
                item.insert("id".into(), node.id.as_str().into());
                item.insert(
                    "parentId".into(),
                    node.parent
                        .map_or(Value::Null, |p| nodes[p].id.as_str().into()),
                );
                let kind = entry.map_or("", SessionEntry::type_name);
                item.insert("type".into(), kind.into());
                if let Some(message) = entry.and_then(SessionEntry::message) {
                    item.insert("role".into(), message.role().into());
                }
                let text = entry.map(entry_preview).unwrap_or_default();
                if !text.is_empty() {
                    item.insert("preview".into(), text.into());
                }
                if let Some(label) = &node.label {
                    item.insert("label".into(), label.as_str().into());
                }
                item.insert(
                    "timestamp".into(),
                    entry.map_or("", SessionEntry::timestamp).into(),
                );
                Value::Object(item)
            })
            .collect();
        json!({
            "leafId": manager.leaf_id().map(EntryId::as_str),
            "entries": entries,
        })
    })
}

/// pi 1.6's `get_entries`: every entry in file order (no header) and the leaf; with
/// `since`, only the entries after that one (an unknown id is an error).
pub fn entries_json(session: &AgentSession, since: Option<&str>) -> Result<Option<Value>, String> {
    session.with_session(|manager| {
        let entries = manager.entries();
        let start = match since {
            None => 0,
            Some(id) => {
                entries
                    .iter()
                    .position(|e| e.id() == id)
                    .ok_or_else(|| format!("Entry not found: {id}"))?
                    + 1
            }
        };
        let entries: Vec<Value> = entries[start..]
            .iter()
            .map(|e| serde_json::to_value(e).map_err(|e| format!("An entry cannot be shown: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Some(json!({
            "entries": entries,
            "leafId": manager.leaf_id().map(EntryId::as_str),
        })))
    })
}

/// pi 1.6's `get_tree` data as JSON text: `{"tree": [node…], "leafId"}`, each node
/// `{"entry", "children": [node…], "label"?, "labelTimestamp"?}`, roots (entries without a
/// parent in the file) and children in file order. Written depth-first without recursion,
/// so a chain of 100 000 entries is one long line, not a stack overflow.
pub fn nested_tree_text(session: &AgentSession) -> String {
    session.with_session(|manager| {
        let tree = manager.tree();
        let mut out = String::from("{\"tree\":[");
        // Open nodes: (node, next child to write).
        let mut stack: Vec<(usize, usize)> = Vec::new();
        let write_open = |out: &mut String, index: usize| {
            let node = tree.node(index);
            out.push_str("{\"entry\":");
            let entry = manager
                .entry(&node.id)
                .and_then(|e| serde_json::to_string(e).ok())
                .unwrap_or_else(|| "null".to_string());
            out.push_str(&entry);
            out.push_str(",\"children\":[");
        };
        let write_close = |out: &mut String, index: usize| {
            let node = tree.node(index);
            out.push(']');
            if let Some(label) = &node.label {
                out.push_str(",\"label\":");
                out.push_str(&Value::from(label.as_str()).to_string());
            }
            if let Some(at) = &node.label_timestamp {
                out.push_str(",\"labelTimestamp\":");
                out.push_str(&Value::from(at.as_str()).to_string());
            }
            out.push('}');
        };
        for (n, &root) in tree.roots().iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            write_open(&mut out, root);
            stack.push((root, 0));
            while let Some((index, next)) = stack.pop() {
                let children = tree.children(index);
                if let Some(&child) = children.get(next) {
                    if next > 0 {
                        out.push(',');
                    }
                    stack.push((index, next + 1));
                    write_open(&mut out, child);
                    stack.push((child, 0));
                } else {
                    write_close(&mut out, index);
                }
            }
        }
        out.push_str("],\"leafId\":");
        let leaf = manager
            .leaf_id()
            .map_or(Value::Null, |id| Value::from(id.as_str()));
        out.push_str(&leaf.to_string());
        out.push('}');
        out
    })
}

/// `get_entry`: the entry exactly as it is stored.
pub fn entry_json(session: &AgentSession, entry_id: &str) -> Result<Value, String> {
    session.with_session(|manager| {
        let entry = manager
            .entry(&EntryId::from(entry_id))
            .ok_or_else(|| format!("Entry {entry_id} not found"))?;
        serde_json::to_value(entry).map_err(|e| format!("Entry {entry_id} cannot be shown: {e}"))
    })
}

/// `navigate_tree`'s fields as [`NavigateOptions`].
pub fn navigate_options(
    summarize: Option<SummarizeMode>,
    custom_instructions: Option<String>,
    replace_instructions: Option<bool>,
    label: Option<String>,
) -> Result<NavigateOptions, String> {
    let mode = summarize.unwrap_or_default();
    let custom_instructions = match mode {
        SummarizeMode::None | SummarizeMode::Default => None,
        SummarizeMode::Custom => match custom_instructions {
            Some(text) if !text.trim().is_empty() => Some(text),
            _ => {
                return Err(
                    "summarize \"custom\" needs non-empty customInstructions (or use \"default\")"
                        .into(),
                );
            }
        },
    };
    Ok(NavigateOptions {
        summarize: mode != SummarizeMode::None,
        custom_instructions,
        replace_instructions: replace_instructions.unwrap_or(false),
        label,
        ..NavigateOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_fold_whitespace_and_cut_long_text() {
        assert_eq!(preview("  two\n\nlines\there "), "two lines here");
        let long = "word ".repeat(40);
        let cut = preview(&long);
        assert_eq!(cut.chars().count(), PREVIEW_CHARS + 1);
        assert!(cut.ends_with('…'));
        let exact = "x".repeat(PREVIEW_CHARS);
        assert_eq!(preview(&exact), exact);
        assert_eq!(preview(&format!("{exact} y")), format!("{exact}…"));
    }

    #[test]
    fn custom_summaries_need_instructions() {
        let err = navigate_options(Some(SummarizeMode::Custom), None, None, None).unwrap_err();
        assert!(err.contains("customInstructions"), "{err}");
        let options = navigate_options(
            Some(SummarizeMode::Default),
            Some("ignored".into()),
            None,
            None,
        )
        .unwrap();
        assert!(options.summarize);
        assert_eq!(options.custom_instructions, None);
        let options = navigate_options(None, None, None, Some("L".into())).unwrap();
        assert!(!options.summarize);
        assert_eq!(options.label.as_deref(), Some("L"));
    }
}
