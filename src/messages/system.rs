//! `role:"system"` messages (pi 1.6): the system prompt and the tool set, recorded in the
//! conversation itself.
//!
//! The first request of a session records one system message holding every prompt section
//! and every tool declaration; later changes are recorded as patches: `sections` maps a
//! section name to its new text (`null` removes it), `toolsRemoved` names tools that are
//! gone and `toolsAdded` declares new or changed ones. [`SystemState::replay`] folds the
//! system messages of a context, in order, into the prompt and tools they describe.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ai::message::{Extra, ToolSpec, UserContent};

/// A tool as a system message declares it (`{name, description, parameters,
/// constrainedSampling?}`); other fields are kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDeclaration {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl ToolDeclaration {
    pub fn from_spec(spec: &ToolSpec) -> Self {
        ToolDeclaration {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters: spec.parameters.clone(),
            constrained_sampling: None,
            extra: Extra::new(),
        }
    }

    pub fn to_spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
        }
    }
}

/// A tool a system message removes (`{name}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRef {
    pub name: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One system message. `sections` keeps the file's key order (which decides where a
/// section lands in the prompt).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SystemMessage {
    /// Usually `""`; a string or text blocks. `null` or absent reads as `""`.
    #[serde(default)]
    pub content: Option<UserContent>,
    /// Section name → text, or `null` to remove the section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_added: Option<Vec<ToolDeclaration>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_removed: Option<Vec<ToolRef>>,
    #[serde(default)]
    pub timestamp: i64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl SystemMessage {
    /// The plain text of `content`.
    pub fn content_text(&self) -> String {
        self.content
            .as_ref()
            .map(UserContent::text)
            .unwrap_or_default()
    }

    /// Whether every section value is a string or `null` (a message that fails this is
    /// skipped, with a load warning, rather than giving a wrong prompt).
    pub fn is_well_formed(&self) -> bool {
        self.sections
            .as_ref()
            .is_none_or(|s| s.values().all(|v| v.is_string() || v.is_null()))
    }
}

/// The prompt and tools after replaying every system message of a context.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SystemState {
    /// Non-empty `content` texts, in order.
    pub content: Vec<String>,
    /// Current sections, in first-insertion order (re-setting a key keeps its place).
    pub sections: Map<String, Value>,
    /// Current tools, in first-declaration order (a re-declared tool keeps its place
    /// unless it was removed in between).
    pub tools: Vec<ToolDeclaration>,
    /// How many system messages were replayed.
    pub messages: usize,
}

impl SystemState {
    /// Replays `messages` in order (pi-ai `getCurrentSystemMessage`). `None` when there
    /// are none.
    pub fn replay<'a>(messages: impl IntoIterator<Item = &'a SystemMessage>) -> Option<Self> {
        let mut state = SystemState::default();
        for message in messages {
            state.apply(message);
        }
        (state.messages > 0).then_some(state)
    }

    /// Applies one system message on top of this state.
    pub fn apply(&mut self, message: &SystemMessage) {
        self.messages += 1;
        let text = message.content_text();
        if !text.is_empty() {
            self.content.push(text);
        }
        for (name, value) in message.sections.iter().flatten() {
            match value {
                Value::String(_) => {
                    // `Map::insert` keeps an existing key's position (preserve_order).
                    self.sections.insert(name.clone(), value.clone());
                }
                _ => {
                    self.sections.shift_remove(name);
                }
            }
        }
        for removed in message.tools_removed.iter().flatten() {
            self.tools.retain(|t| t.name != removed.name);
        }
        for added in message.tools_added.iter().flatten() {
            match self.tools.iter_mut().find(|t| t.name == added.name) {
                Some(slot) => *slot = added.clone(),
                None => self.tools.push(added.clone()),
            }
        }
    }

    /// The prompt text: content then section texts, joined by blank lines (pi-ai
    /// `getSystemMessageText`).
    pub fn prompt(&self) -> String {
        self.content
            .iter()
            .map(String::as_str)
            .chain(self.sections.values().filter_map(Value::as_str))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// The names of the current tools, in order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.clone()).collect()
    }

    /// The current tools as the model is offered them.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(ToolDeclaration::to_spec).collect()
    }
}

/// A later system message as it is sent in place to a model that accepts them (pi-ai
/// `renderSystemMessageUpdate`): its content, then each section change framed by name.
pub fn render_update(message: &SystemMessage) -> String {
    let mut parts = Vec::new();
    let text = message.content_text();
    if !text.is_empty() {
        parts.push(text);
    }
    for (name, value) in message.sections.iter().flatten() {
        parts.push(match value.as_str() {
            Some(text) => format!("Updated system prompt section \"{name}\":\n\n{text}"),
            None => format!("Removed system prompt section \"{name}\"."),
        });
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(json: &str) -> SystemMessage {
        serde_json::from_str(json).expect("system message")
    }

    #[test]
    fn replay_patches_sections_in_place_and_removes_tools_before_adding() {
        let first = msg(
            r#"{"content":"","sections":{"preamble":"P","tools":"<tools>\nT\n</tools>","cwd":"<cwd>\nC\n</cwd>"},
            "toolsAdded":[{"name":"read","description":"r","parameters":{}},{"name":"write","description":"w","parameters":{}}],"timestamp":1}"#,
        );
        let second = msg(
            r#"{"content":"","sections":{"tools":null,"addendum":"A","preamble":"Q"},"toolsRemoved":[{"name":"read"}],
            "toolsAdded":[{"name":"read","description":"r2","parameters":{}}],"timestamp":2}"#,
        );
        let state = SystemState::replay([&first, &second]).expect("state");
        assert_eq!(state.prompt(), "Q\n\n<cwd>\nC\n</cwd>\n\nA");
        assert_eq!(state.tool_names(), ["write", "read"]);
        assert_eq!(state.tools[1].description, "r2");
        assert!(SystemState::replay([]).is_none());
    }

    #[test]
    fn content_text_is_appended_and_updates_render_by_name() {
        let m = msg(r#"{"content":[{"type":"text","text":"Base"}],"sections":{"a":"x","b":null}}"#);
        let state = SystemState::replay([&m]).expect("state");
        assert_eq!(state.prompt(), "Base\n\nx");
        assert_eq!(
            render_update(&m),
            "Base\n\nUpdated system prompt section \"a\":\n\nx\n\nRemoved system prompt section \"b\"."
        );
        assert!(!msg(r#"{"sections":{"a":3}}"#).is_well_formed());
        assert_eq!(msg(r#"{"content":null}"#).content_text(), "");
    }
}
