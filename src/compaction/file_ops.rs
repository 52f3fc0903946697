//! Which files a stretch of conversation read and changed.
//!
//! Collected from `read` / `write` / `edit` tool calls (their `path` argument) and carried
//! forward from earlier summaries' `details`, so the lists accumulate over repeated
//! compactions and nested branch summaries. The lists are stored in the summary entry's
//! `details` and appended to the summary text in pi's `<read-files>` / `<modified-files>`
//! blocks.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use crate::compaction::js::cmp_utf16;
use crate::messages::AgentMessage;

/// Paths touched by tool calls, by kind of access (unordered; [`FileOps::lists`] sorts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOps {
    #[serde(serialize_with = "sorted")]
    pub read: HashSet<String>,
    #[serde(serialize_with = "sorted")]
    pub written: HashSet<String>,
    #[serde(serialize_with = "sorted")]
    pub edited: HashSet<String>,
}

fn sorted<S: serde::Serializer>(set: &HashSet<String>, s: S) -> Result<S::Ok, S::Error> {
    let mut items: Vec<&String> = set.iter().collect();
    items.sort_by(|a, b| cmp_utf16(a, b));
    s.collect_seq(items)
}

/// The two lists stored in `details` (`readFiles`, `modifiedFiles`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileLists {
    /// Files only read, never written or edited.
    pub read_files: Vec<String>,
    /// Files written or edited.
    pub modified_files: Vec<String>,
}

impl FileOps {
    /// Adds the paths of the `read`, `write` and `edit` calls of an assistant message.
    pub fn add_tool_calls(&mut self, message: &AgentMessage) {
        let AgentMessage::Assistant(a) = message else {
            return;
        };
        for call in a.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            if !set.contains(path) {
                set.insert(path.to_string());
            }
        }
    }

    /// Adds the lists of an earlier summary's `details` (`readFiles` count as read,
    /// `modifiedFiles` as edited). Anything that is not a list of strings is ignored:
    /// extensions may store other shapes there.
    pub fn add_details(&mut self, details: &Value) {
        let strings = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }

    /// Read-only files and modified files, each sorted the way JavaScript sorts strings.
    pub fn lists(&self) -> FileLists {
        let mut modified_files: Vec<String> = self.edited.union(&self.written).cloned().collect();
        let mut read_files: Vec<String> = self
            .read
            .iter()
            .filter(|f| !self.edited.contains(*f) && !self.written.contains(*f))
            .cloned()
            .collect();
        read_files.sort_by(|a, b| cmp_utf16(a, b));
        modified_files.sort_by(|a, b| cmp_utf16(a, b));
        FileLists {
            read_files,
            modified_files,
        }
    }
}

impl FileLists {
    /// The blocks appended to a stored summary: `\n\n<read-files>\n…\n</read-files>` and
    /// `\n\n<modified-files>\n…\n</modified-files>`, each only when non-empty.
    pub fn to_summary_suffix(&self) -> String {
        let mut sections = Vec::new();
        if !self.read_files.is_empty() {
            sections.push(format!(
                "<read-files>\n{}\n</read-files>",
                self.read_files.join("\n")
            ));
        }
        if !self.modified_files.is_empty() {
            sections.push(format!(
                "<modified-files>\n{}\n</modified-files>",
                self.modified_files.join("\n")
            ));
        }
        if sections.is_empty() {
            return String::new();
        }
        format!("\n\n{}", sections.join("\n\n"))
    }

    /// The `details` object stored in the entry.
    pub fn to_details(&self) -> Value {
        serde_json::json!({
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{AssistantBlock, AssistantMessage, ToolCall};
    use serde_json::json;

    fn calls(list: &[(&str, Value)]) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            content: list
                .iter()
                .map(|(name, args)| {
                    AssistantBlock::ToolCall(ToolCall {
                        name: (*name).into(),
                        arguments: args.clone(),
                        ..ToolCall::default()
                    })
                })
                .collect(),
            ..AssistantMessage::default()
        })
    }

    #[test]
    fn read_then_edited_files_are_listed_only_as_modified() {
        let mut ops = FileOps::default();
        ops.add_tool_calls(&calls(&[
            ("read", json!({"path": "notes.txt"})),
            ("read", json!({"path": "b.rs"})),
            ("edit", json!({"path": "notes.txt", "edits": []})),
            ("write", json!({"path": "a.rs", "content": ""})),
            ("bash", json!({"path": "ignored.txt"})),
            ("read", json!({"path": ""})),
            ("read", json!({"file": "no-path.txt"})),
        ]));
        ops.add_details(&json!({"readFiles": ["Z.md", 3], "modifiedFiles": ["c.rs"]}));
        ops.add_details(&json!({"custom": true}));
        let lists = ops.lists();
        assert_eq!(
            lists,
            FileLists {
                read_files: vec!["Z.md".into(), "b.rs".into()],
                modified_files: vec!["a.rs".into(), "c.rs".into(), "notes.txt".into()],
            }
        );
        let suffix = lists.to_summary_suffix();
        assert!(suffix.starts_with("\n\n<read-files>"));
        insta::assert_snapshot!(suffix.trim_start(), @r"
        <read-files>
        Z.md
        b.rs
        </read-files>

        <modified-files>
        a.rs
        c.rs
        notes.txt
        </modified-files>
        ");
        assert_eq!(
            lists.to_details().to_string(),
            r#"{"readFiles":["Z.md","b.rs"],"modifiedFiles":["a.rs","c.rs","notes.txt"]}"#
        );
    }

    #[test]
    fn no_files_means_no_suffix() {
        assert_eq!(FileOps::default().lists().to_summary_suffix(), "");
    }
}
