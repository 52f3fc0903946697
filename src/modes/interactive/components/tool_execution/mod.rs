//! A tool call and its result, drawn like pi: a panel whose background says pending /
//! success / error, a one-line summary of the call (`read ~/src/main.rs:10-40`,
//! `$ cargo test`, `edit notes.txt`), and a preview of the result that Ctrl+O expands.
//! The per-tool views live in [`views`]; tools we do not know get their arguments as
//! JSON and their text output.

mod views;

use std::cell::RefCell;
use std::time::Duration;

use ratatui::style::Modifier;
use ratatui::text::Span;
use serde_json::Value;

use super::Ui;
use crate::ai::message::{ToolCall, ToolResultMessage, UserBlock};
use crate::modes::interactive::highlight::IncrementalHighlight;
use crate::modes::interactive::images;
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::sanitize;
use crate::modes::interactive::theme::ThemeToken;

/// A tool result as the UI needs it (final or a streaming update).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResultView {
    pub content: Vec<UserBlock>,
    pub details: Option<Value>,
    pub is_error: bool,
}

impl From<&ToolResultMessage> for ToolResultView {
    fn from(m: &ToolResultMessage) -> Self {
        ToolResultView {
            content: m.content.clone(),
            details: m.details.clone(),
            is_error: m.is_error,
        }
    }
}

impl ToolResultView {
    /// An error result with just a message (e.g. the turn was aborted).
    pub fn error(message: &str) -> Self {
        ToolResultView {
            content: vec![UserBlock::text(message)],
            details: None,
            is_error: true,
        }
    }

    /// The text blocks, cleaned for display, with pi's note (`[Image: [image/png]
    /// 40x20]`) for each image.
    pub fn text(&self) -> String {
        self.text_with_notes(true)
    }

    /// The text as the tool box shows it: the image notes only where images are not
    /// drawn (pi's `getTextOutput`).
    pub fn text_for(&self, ui: &Ui<'_>) -> String {
        self.text_with_notes(ui.images.is_none())
    }

    fn text_with_notes(&self, notes: bool) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut images: Vec<String> = Vec::new();
        for block in &self.content {
            match block {
                UserBlock::Text(t) => parts.push(sanitize(&t.text).into_owned()),
                UserBlock::Image(img) if notes => {
                    let mime = sanitize(&img.mime_type);
                    images.push(images::fallback(
                        &mime,
                        images::dimensions_base64(&img.data, &img.mime_type),
                        None,
                    ))
                }
                UserBlock::Image(_) => {}
            }
        }
        let mut text = parts.join("\n");
        if !images.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&images.join("\n"));
        }
        text
    }

    fn detail(&self, key: &str) -> Option<&Value> {
        self.details.as_ref().and_then(|d| d.get(key))
    }
}

/// Everything known about one tool call.
pub struct ToolExecutionState {
    pub call: ToolCall,
    /// The model finished streaming the arguments.
    pub args_complete: bool,
    pub result: Option<ToolResultView>,
    /// `result` is a streaming update, not the final result.
    pub partial: bool,
    /// Ctrl+O: show everything instead of a preview.
    pub expanded: bool,
    /// How long it ran (bash shows `Took 1.2s`, or `Elapsed` while running).
    pub elapsed: Option<Duration>,
    /// The tool started running (pi's `executionStarted`).
    pub execution_started: bool,
    /// What the tool's extension drew (pi's `renderCall` / `renderResult`), once it
    /// arrived; pi-rs's own view until then.
    pub host: Option<HostToolLines>,
    highlight: RefCell<IncrementalHighlight>,
}

/// The lines an extension's `renderCall` / `renderResult` drew for a tool box. A part
/// that is `None` gets pi's fallback: the tool name, or the result's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostToolLines {
    /// pi's `renderShell: "self"`: the lines without the tool box.
    pub self_shell: bool,
    pub call: Option<Vec<String>>,
    pub result: Option<Vec<String>>,
}

impl ToolExecutionState {
    pub fn new(call: ToolCall) -> Self {
        ToolExecutionState {
            call,
            args_complete: true,
            result: None,
            partial: false,
            expanded: false,
            elapsed: None,
            execution_started: false,
            host: None,
            highlight: RefCell::new(IncrementalHighlight::default()),
        }
    }

    pub fn with_result(mut self, result: ToolResultView) -> Self {
        self.result = Some(result);
        self.partial = false;
        self.execution_started = true;
        self
    }

    /// The result's images below the box, as pi draws them: each after an empty row,
    /// at most the image width setting wide; pi's text note for one that cannot be drawn.
    /// Nothing where images are not drawn (the box's text has the notes then).
    pub fn image_rows(&self, width: usize, ui: &Ui<'_>) -> Vec<ratatui::text::Line<'static>> {
        let (Some(config), Some(result)) = (ui.images, &self.result) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let pictures = result.content.iter().filter_map(|b| match b {
            UserBlock::Image(img) if !img.data.is_empty() && !img.mime_type.is_empty() => Some(img),
            _ => None,
        });
        for (i, img) in pictures.enumerate() {
            out.push(ratatui::text::Line::default());
            let key = images::placement_key(&format!("{}#{i}", self.call.id), &img.data);
            match images::image_lines(config, &img.data, &img.mime_type, width, key) {
                Some(lines) => out.extend(lines),
                None => {
                    let note = images::fallback(
                        &sanitize(&img.mime_type),
                        images::dimensions_base64(&img.data, &img.mime_type),
                        None,
                    );
                    out.push(ratatui::text::Line::from(Span::styled(
                        crate::modes::interactive::text::truncate_to_width(&note, width, "")
                            .into_owned(),
                        ui.fg(ThemeToken::ToolOutput),
                    )));
                }
            }
        }
        out
    }

    pub fn is_pending(&self) -> bool {
        self.result.is_none() || self.partial
    }

    fn arg(&self, key: &str) -> Option<&Value> {
        self.call.arguments.get(key)
    }

    /// A string argument: `Ok(None)` when absent, `Err` when present but not a string.
    fn str_arg(&self, keys: &[&str]) -> Result<Option<&str>, ()> {
        for key in keys {
            match self.arg(key) {
                Some(Value::String(s)) => return Ok(Some(s)),
                Some(Value::Null) | None => continue,
                Some(_) => return Err(()),
            }
        }
        Ok(None)
    }
}

/// `... (N more lines, ctrl+o to expand)` style hint: `lead` muted, then the key hint.
fn expand_hint(ui: &Ui<'_>, lead: String) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled(lead, ui.fg(ThemeToken::Muted)), Span::raw(" ")];
    spans.extend(ui.key_hint(Action::ToolsExpand, "to expand"));
    spans.push(Span::raw(")"));
    spans
}

fn title(ui: &Ui<'_>, text: &str) -> Span<'static> {
    Span::styled(
        text.to_string(),
        ui.fg(ThemeToken::ToolTitle).add_modifier(Modifier::BOLD),
    )
}

#[cfg(test)]
mod tests;
