//! The chat transcript: the list of chat components built from a conversation (pi's
//! `renderSessionContext`), each cached, with the global toggles (Ctrl+O expands tool
//! output and summaries, Ctrl+T hides thinking) and a renderer for the last N rows, so
//! the bottom of a 2,000-message session is drawn without touching the rest.

use std::collections::HashMap;

use ratatui::text::Line;

use super::assistant_message::{AssistantMessageView, DEFAULT_HIDDEN_THINKING_LABEL};
use super::bash_execution::BashExecutionView;
use super::custom_message::CustomMessageView;
use super::skill_invocation::SkillInvocationView;
use super::summaries::{BranchSummaryView, CompactionSummaryView};
use super::tool_execution::{ToolExecutionState, ToolResultView};
use super::user_message::UserMessageView;
use super::{Cached, Component, Ui, styled_text};
use crate::ai::message::{StopReason, UserBlock, UserContent};
use crate::messages::{AgentMessage, parse_skill_block};
use crate::modes::interactive::theme::ThemeToken;

/// One entry of the chat.
pub enum ChatItem {
    User(UserMessageView),
    /// A `/skill:name` prompt (and the user's words after it).
    Skill(SkillInvocationView),
    Assistant(AssistantMessageView),
    Tool(ToolExecutionState),
    Bash(BashExecutionView),
    Custom(CustomMessageView),
    Compaction(CompactionSummaryView),
    Branch(BranchSummaryView),
    /// A one-line note: dim (`Navigated to selected point`), or in the warning or error
    /// colour when it starts with `Warning: ` or `Error: `, as pi's.
    Notice(String),
    /// A block the user asked for (`/hotkeys`, `/session`, `/changelog`): part of the chat,
    /// not of the session, so it scrolls with the terminal like everything else (as in pi).
    View(Box<dyn Component + Send>),
}

impl ChatItem {
    /// A user prompt: pi's skill box for a `/skill:name` invocation, a plain user
    /// message otherwise.
    pub fn user(text: String) -> ChatItem {
        match parse_skill_block(&text) {
            Some(block) => ChatItem::Skill(SkillInvocationView::from(block)),
            None => ChatItem::User(UserMessageView::new(text)),
        }
    }

    /// Marks a user message or skill prompt as the first thing in an empty chat (no blank
    /// row above it), or not.
    fn set_opens_chat(&mut self, opens: bool) {
        match self {
            ChatItem::User(u) => u.opens_chat = opens,
            ChatItem::Skill(s) => s.opens_chat = opens,
            _ => {}
        }
    }

    fn set_expanded(&mut self, expanded: bool) {
        match self {
            ChatItem::Skill(s) => s.expanded = expanded,
            ChatItem::Tool(t) => t.expanded = expanded,
            ChatItem::Bash(b) => b.expanded = expanded,
            ChatItem::Custom(c) => c.expanded = expanded,
            ChatItem::Compaction(c) => c.expanded = expanded,
            ChatItem::Branch(b) => b.expanded = expanded,
            ChatItem::User(_)
            | ChatItem::Assistant(_)
            | ChatItem::Notice(_)
            | ChatItem::View(_) => {}
        }
    }
}

impl Component for ChatItem {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        match self {
            ChatItem::User(c) => c.render(width, ui),
            ChatItem::Skill(c) => c.render(width, ui),
            ChatItem::Assistant(c) => c.render(width, ui),
            ChatItem::Tool(c) => c.render(width, ui),
            ChatItem::Bash(c) => c.render(width, ui),
            ChatItem::Custom(c) => c.render(width, ui),
            ChatItem::Compaction(c) => c.render(width, ui),
            ChatItem::Branch(c) => c.render(width, ui),
            ChatItem::Notice(text) => {
                let mut out = vec![Line::default()];
                // pi pads only its errors by `outputPad`; warnings and status lines by 1.
                let pad = if text.starts_with("Error: ") {
                    ui.output_pad
                } else {
                    1
                };
                out.extend(styled_text(text, ui.fg(notice_token(text)), width, pad));
                out
            }
            ChatItem::View(view) => view.render(width, ui),
        }
    }
}

/// The colour of a notice, as pi's three kinds of them: `Error: …` in the error colour,
/// `Warning: …` in the warning colour, any other status line dim.
fn notice_token(text: &str) -> ThemeToken {
    if text.starts_with("Error: ") {
        ThemeToken::Error
    } else if text.starts_with("Warning: ") {
        ThemeToken::Warning
    } else {
        ThemeToken::Dim
    }
}

/// A note in one colour with a blank row above it (pi's `Spacer` and `Text`), and with
/// `blank_after` one below it too (pi's `Text` with vertical padding: `✓ New session
/// started`), or an error shown without the `Error: ` prefix (a failed auto-compaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    pub token: ThemeToken,
    pub blank_after: bool,
}

impl Component for Note {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let mut out = vec![Line::default()];
        out.extend(styled_text(&self.text, ui.fg(self.token), width, 1));
        if self.blank_after {
            out.push(Line::default());
        }
        out
    }
}

/// The text pi shows for a user message: its text blocks joined without separators.
fn user_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(s) => s.clone(),
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                UserBlock::Text(t) => Some(t.text.as_str()),
                UserBlock::Image(_) => None,
            })
            .collect(),
    }
}

/// All chat items with the display toggles.
pub struct Transcript {
    items: Vec<Cached<ChatItem>>,
    /// Nothing is drawn above the chat but the header's own lines (pi's empty chat
    /// container): a user message that comes first gets no blank row above it.
    bare_start: bool,
    expanded: bool,
    hide_thinking: bool,
    hidden_thinking_label: String,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            items: Vec::new(),
            bare_start: false,
            expanded: false,
            hide_thinking: false,
            hidden_thinking_label: DEFAULT_HIDDEN_THINKING_LABEL.to_string(),
        }
    }
}

impl Transcript {
    /// Builds the chat for a conversation: user and assistant messages, a tool box per
    /// tool call (its result attached by call id; calls of failed turns marked as
    /// failed), `!` commands, extension messages and summaries.
    pub fn from_messages(messages: &[AgentMessage], expanded: bool, hide_thinking: bool) -> Self {
        let mut t = Transcript {
            items: Vec::with_capacity(messages.len()),
            expanded,
            hide_thinking,
            ..Transcript::default()
        };
        let mut pending: HashMap<String, usize> = HashMap::new();
        for message in messages {
            match message {
                AgentMessage::User(m) => {
                    let text = user_text(&m.content);
                    if !text.is_empty() {
                        t.push(ChatItem::user(text));
                    }
                }
                AgentMessage::Assistant(m) => {
                    t.push(ChatItem::Assistant(
                        AssistantMessageView::new(m.clone()).with_hidden_thinking(hide_thinking),
                    ));
                    for call in m.tool_calls() {
                        let mut state = ToolExecutionState::new(call.clone());
                        match m.stop_reason {
                            StopReason::Aborted => {
                                state =
                                    state.with_result(ToolResultView::error("Operation aborted"))
                            }
                            StopReason::Error => {
                                let msg = m
                                    .error_message
                                    .as_deref()
                                    .filter(|e| !e.is_empty())
                                    .unwrap_or("Error");
                                state = state.with_result(ToolResultView::error(msg));
                            }
                            StopReason::Stop | StopReason::Length | StopReason::ToolUse => {
                                pending.insert(call.id.clone(), t.items.len());
                            }
                        }
                        t.push(ChatItem::Tool(state));
                    }
                }
                AgentMessage::ToolResult(r) => {
                    if let Some(index) = pending.remove(&r.tool_call_id) {
                        let result = ToolResultView::from(r);
                        t.items[index].update(|item| {
                            if let ChatItem::Tool(state) = item {
                                state.result = Some(result);
                                state.partial = false;
                            }
                        });
                    }
                }
                AgentMessage::BashExecution(b) => {
                    t.push(ChatItem::Bash(BashExecutionView::from(b)))
                }
                AgentMessage::Custom(c) => {
                    if c.display {
                        t.push(ChatItem::Custom(CustomMessageView::new(c.clone())));
                    }
                }
                AgentMessage::CompactionSummary(c) => {
                    t.push(ChatItem::Compaction(CompactionSummaryView::from(c)))
                }
                AgentMessage::BranchSummary(b) => {
                    t.push(ChatItem::Branch(BranchSummaryView::from(b)))
                }
                AgentMessage::System(_) | AgentMessage::Unknown(_) => {}
            }
        }
        t
    }

    /// Appends an item (with the current expand state applied).
    pub fn push(&mut self, mut item: ChatItem) {
        item.set_expanded(self.expanded);
        if self.items.is_empty() && self.bare_start {
            item.set_opens_chat(true);
        }
        if let ChatItem::Assistant(a) = &mut item {
            a.hide_thinking = self.hide_thinking;
            a.hidden_thinking_label
                .clone_from(&self.hidden_thinking_label);
        }
        self.items.push(Cached::new(item));
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Changes the last item (e.g. a streaming message).
    pub fn update_last(&mut self, f: impl FnOnce(&mut ChatItem)) {
        if let Some(last) = self.items.last_mut() {
            last.update(f);
        }
    }

    /// Changes the item at `index` (a tool box whose result arrived, a streaming reply
    /// followed by its tool boxes). Out-of-range indexes are ignored.
    pub fn update_at(&mut self, index: usize, f: impl FnOnce(&mut ChatItem)) {
        if let Some(item) = self.items.get_mut(index) {
            item.update(f);
        }
    }

    /// Sets the lines an extension drew for the item at `index` without counting it as
    /// a change of the item (see [`Transcript::version_at`]).
    pub fn update_drawing_at(&mut self, index: usize, f: impl FnOnce(&mut ChatItem)) {
        if let Some(item) = self.items.get_mut(index) {
            item.update_drawing(f);
        }
    }

    /// How often the item at `index` changed (an extension draws it again when this
    /// moves on).
    pub fn version_at(&self, index: usize) -> Option<u64> {
        self.items.get(index).map(Cached::version)
    }

    /// The label of hidden thinking blocks (`ctx.ui.setHiddenThinkingLabel`).
    pub fn hidden_thinking_label(&self) -> &str {
        &self.hidden_thinking_label
    }

    /// Changes the label of hidden thinking blocks on every assistant message.
    pub fn set_hidden_thinking_label(&mut self, label: &str) {
        self.hidden_thinking_label = label.to_string();
        for item in &mut self.items {
            if let ChatItem::Assistant(a) = item.get()
                && a.hidden_thinking_label != label
            {
                item.update(|i| {
                    if let ChatItem::Assistant(a) = i {
                        a.hidden_thinking_label = label.to_string();
                    }
                });
            }
        }
    }

    /// The item at `index`.
    pub fn get(&self, index: usize) -> Option<&ChatItem> {
        self.items.get(index).map(Cached::get)
    }

    /// Whether nothing but the header's own lines is drawn above the chat (no resource
    /// listing, no earlier items left out): as in pi, a user message that comes first
    /// then has no blank row above it.
    pub fn set_bare_start(&mut self, bare: bool) {
        self.bare_start = bare;
        if let Some(first) = self.items.first_mut()
            && matches!(first.get(), ChatItem::User(_) | ChatItem::Skill(_))
        {
            first.update(|item| item.set_opens_chat(bare));
        }
    }

    /// Lines of the items in `range` (clamped to the transcript).
    pub fn render_range(
        &self,
        range: std::ops::Range<usize>,
        width: usize,
        ui: &Ui<'_>,
    ) -> Vec<Line<'static>> {
        let end = range.end.min(self.items.len());
        let start = range.start.min(end);
        let mut out = Vec::new();
        for item in &self.items[start..end] {
            out.extend(item.lines(width, ui).iter().cloned());
        }
        out
    }

    /// Whether tool output and summaries are shown expanded (Ctrl+O).
    pub fn expanded(&self) -> bool {
        self.expanded
    }

    /// Ctrl+O: expand or collapse every tool box and summary.
    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
        for item in &mut self.items {
            item.update(|i| i.set_expanded(expanded));
        }
    }

    /// Ctrl+T: hide or show thinking blocks.
    pub fn set_hide_thinking(&mut self, hide: bool) {
        self.hide_thinking = hide;
        for item in &mut self.items {
            if matches!(item.get(), ChatItem::Assistant(_)) {
                item.update(|i| {
                    if let ChatItem::Assistant(a) = i {
                        a.hide_thinking = hide;
                    }
                });
            }
        }
    }

    /// Every line of the chat.
    pub fn render_all(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_range(0..self.items.len(), width, ui)
    }

    /// The last `rows` lines of the chat, rendering items from the end only until
    /// enough rows are collected.
    pub fn render_tail(&self, width: usize, ui: &Ui<'_>, rows: usize) -> Vec<Line<'static>> {
        let mut chunks = Vec::new();
        let mut count = 0;
        for item in self.items.iter().rev() {
            if count >= rows {
                break;
            }
            let lines = item.lines(width, ui);
            count += lines.len();
            chunks.push(lines);
        }
        let mut out: Vec<Line<'static>> = Vec::with_capacity(count.min(rows));
        for chunk in chunks.iter().rev() {
            out.extend(chunk.iter().cloned());
        }
        let skip = out.len().saturating_sub(rows);
        out.drain(..skip);
        out
    }
}

#[cfg(test)]
mod tests;
