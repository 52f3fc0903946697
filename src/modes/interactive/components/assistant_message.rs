//! An assistant reply: its text as markdown, thinking blocks in italic (or a one-line
//! `Thinking...` marker when hidden), and a red note when the turn failed or was
//! aborted. Tool calls are drawn separately by [`super::tool_execution`].
//!
//! Each text/thinking block keeps a [`MarkdownCache`], so while a reply streams in only
//! the markdown block that is growing is rendered again.

use std::cell::RefCell;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{Component, Ui, styled_text};
use crate::ai::message::{AssistantBlock, AssistantMessage, StopReason};
use crate::modes::interactive::markdown::{MarkdownCache, MarkdownStyle};
use crate::modes::interactive::text::sanitize;
use crate::modes::interactive::theme::ThemeToken;

/// What pi shows in place of a hidden thinking block.
pub const DEFAULT_HIDDEN_THINKING_LABEL: &str = "Thinking...";

pub struct AssistantMessageView {
    pub message: AssistantMessage,
    pub hide_thinking: bool,
    pub hidden_thinking_label: String,
    markdown: RefCell<Vec<MarkdownCache>>,
}

impl AssistantMessageView {
    pub fn new(message: AssistantMessage) -> Self {
        AssistantMessageView {
            message,
            hide_thinking: false,
            hidden_thinking_label: DEFAULT_HIDDEN_THINKING_LABEL.to_string(),
            markdown: RefCell::new(Vec::new()),
        }
    }

    pub fn with_hidden_thinking(mut self, hide: bool) -> Self {
        self.hide_thinking = hide;
        self
    }
}

fn is_visible(block: &AssistantBlock) -> bool {
    match block {
        AssistantBlock::Text(t) => !t.text.trim().is_empty(),
        AssistantBlock::Thinking(t) => !t.thinking.trim().is_empty(),
        AssistantBlock::ToolCall(_) => false,
    }
}

/// Markdown `outputPad` columns in from each side (pi's `Markdown(text, outputPad, 0)`).
fn indented_markdown(
    cache: &mut MarkdownCache,
    text: &str,
    width: usize,
    ui: &Ui<'_>,
    style: &MarkdownStyle,
) -> Vec<Line<'static>> {
    let pad = ui.output_pad;
    let inner = width.saturating_sub(2 * pad).max(1);
    cache
        .render(text, inner, ui.theme, style)
        .into_iter()
        .map(|line| {
            let mut spans = Vec::with_capacity(line.spans.len() + 1);
            if pad > 0 && width > 2 * pad {
                spans.push(Span::raw(" ".repeat(pad)));
            }
            spans.extend(line.spans);
            Line::from(spans)
        })
        .collect()
}

impl Component for AssistantMessageView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let blocks = &self.message.content;
        let mut caches = self.markdown.borrow_mut();
        if caches.len() < blocks.len() {
            caches.resize_with(blocks.len(), MarkdownCache::default);
        }
        let mut out = Vec::new();
        let any_visible = blocks.iter().any(is_visible);
        if any_visible {
            out.push(Line::default());
        }
        let thinking_style = ui
            .fg(ThemeToken::ThinkingText)
            .add_modifier(Modifier::ITALIC);
        for (i, block) in blocks.iter().enumerate() {
            match block {
                AssistantBlock::Text(t) if is_visible(block) => {
                    out.extend(indented_markdown(
                        &mut caches[i],
                        t.text.trim(),
                        width,
                        ui,
                        &MarkdownStyle::default(),
                    ));
                }
                AssistantBlock::Thinking(t) if is_visible(block) => {
                    if self.hide_thinking {
                        out.extend(styled_text(
                            &self.hidden_thinking_label,
                            thinking_style,
                            width,
                            ui.output_pad,
                        ));
                    } else {
                        let style = MarkdownStyle::with_base(thinking_style);
                        out.extend(indented_markdown(
                            &mut caches[i],
                            t.thinking.trim(),
                            width,
                            ui,
                            &style,
                        ));
                    }
                    if blocks[i + 1..].iter().any(is_visible) {
                        out.push(Line::default());
                    }
                }
                _ => {}
            }
        }
        // With tool calls, the tool boxes show the failure instead.
        if self.message.tool_calls().next().is_none() {
            let error = ui.fg(ThemeToken::Error);
            let note = match self.message.stop_reason {
                StopReason::Aborted => Some(match self.message.error_message.as_deref() {
                    Some(msg) if msg != "Request was aborted" && !msg.is_empty() => msg.to_string(),
                    _ => "Operation aborted".to_string(),
                }),
                StopReason::Error => Some(format!(
                    "Error: {}",
                    self.message
                        .error_message
                        .as_deref()
                        .filter(|m| !m.is_empty())
                        .unwrap_or("Unknown error")
                )),
                StopReason::Stop | StopReason::Length | StopReason::ToolUse => None,
            };
            if let Some(note) = note {
                out.push(Line::default());
                out.extend(styled_text(&sanitize(&note), error, width, ui.output_pad));
            }
        }
        out
    }
}

/// Thinking text style, for callers that draw thinking elsewhere.
pub fn thinking_style(ui: &Ui<'_>) -> Style {
    ui.fg(ThemeToken::ThinkingText)
        .add_modifier(Modifier::ITALIC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::{TextContent, ThinkingContent, ToolCall};
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    fn message(
        blocks: Vec<AssistantBlock>,
        stop: StopReason,
        error: Option<&str>,
    ) -> AssistantMessage {
        AssistantMessage {
            content: blocks,
            stop_reason: stop,
            error_message: error.map(str::to_string),
            ..AssistantMessage::default()
        }
    }

    fn text(s: &str) -> AssistantBlock {
        AssistantBlock::Text(TextContent::new(s))
    }

    fn thinking(s: &str) -> AssistantBlock {
        AssistantBlock::Thinking(ThinkingContent {
            thinking: s.into(),
            ..ThinkingContent::default()
        })
    }

    fn show(view: &AssistantMessageView, width: usize) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        plain(&view.render(width, &Ui::new(&t, &keys)), width)
    }

    #[test]
    fn output_pad_0_drops_the_side_columns() {
        let t = theme();
        let keys = Keybindings::defaults();
        let msg = message(
            vec![thinking("pondering"), text("an answer that wraps here")],
            StopReason::Error,
            None,
        );
        let view = AssistantMessageView::new(msg);
        let ui = Ui::new(&t, &keys).with_output_pad(0);
        insta::assert_snapshot!(plain(&view.render(12, &ui), 12), @r"

        pondering

        an answer
        that wraps
        here

        Error:
        Unknown
        error
        ");
    }

    #[test]
    fn text_and_thinking_shown() {
        let msg = message(
            vec![
                thinking("Let me **count** the lines."),
                text("Four lines: alpha, BETA, gamma, delta."),
            ],
            StopReason::Stop,
            None,
        );
        insta::assert_snapshot!(show(&AssistantMessageView::new(msg), 30), @r"

        Let me count the lines.

        Four lines: alpha, BETA,
        gamma, delta.
        ");
    }

    #[test]
    fn hidden_thinking_shows_a_marker() {
        let msg = message(
            vec![thinking("secret reasoning"), text("Answer.")],
            StopReason::Stop,
            None,
        );
        insta::assert_snapshot!(show(&AssistantMessageView::new(msg).with_hidden_thinking(true), 30), @r"

        Thinking...

        Answer.
        ");
    }

    #[test]
    fn failed_turns_show_a_note_unless_tools_were_called() {
        let aborted = message(
            vec![text("Partial answer")],
            StopReason::Aborted,
            Some("Request was aborted"),
        );
        insta::assert_snapshot!(show(&AssistantMessageView::new(aborted), 40), @r"

        Partial answer

        Operation aborted
        ");
        let error = message(vec![], StopReason::Error, Some("429 rate limited"));
        insta::assert_snapshot!(show(&AssistantMessageView::new(error), 40), @r"

        Error: 429 rate limited
        ");
        let custom = message(
            vec![],
            StopReason::Aborted,
            Some("Aborted after 2 retry attempts"),
        );
        insta::assert_snapshot!(show(&AssistantMessageView::new(custom), 40), @r"

        Aborted after 2 retry attempts
        ");
        let with_tool = message(
            vec![AssistantBlock::ToolCall(ToolCall {
                id: "1".into(),
                name: "read".into(),
                ..ToolCall::default()
            })],
            StopReason::Error,
            Some("boom"),
        );
        assert_eq!(show(&AssistantMessageView::new(with_tool), 40), "");
    }

    #[test]
    fn streaming_text_rerenders_incrementally_and_matches_a_fresh_render() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let mut view = AssistantMessageView::new(message(
            vec![text("# Plan\n\n1. read")],
            StopReason::Stop,
            None,
        ));
        view.render(40, &ui);
        view.message.content = vec![text("# Plan\n\n1. read\n2. edit the file")];
        let streamed = view.render(40, &ui);
        let fresh = AssistantMessageView::new(view.message.clone()).render(40, &ui);
        assert_eq!(streamed, fresh);
    }
}
