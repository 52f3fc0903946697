//! Reading an [`EntryOutline`] out of one raw line with the index's byte scanner.
//!
//! Lines reach this point already checked by the index (or written by us), so the reader
//! never reports errors: whatever it could read before something unexpected is the
//! outline. Long strings are skipped with `memchr` and only the prefix an outline keeps
//! is decoded; a message whose outline is complete stops the reading of its line (a tool
//! result's 20 KB of output are never looked at once its first 200 characters are read).

use super::json::{Capped, Flow, elements, has_non_space, members, raw_str};
use super::{
    ARGS_JSON_UNITS, ArgNumber, AssistantOutline, ERROR_TEXT_UNITS, EntryOutline, LONG_TEXT_UNITS,
    MESSAGE_TEXT_UNITS, MessageOutline, ToolArgsOutline, ToolCallOutline, TurnEnding,
};
use crate::ai::js::{is_js_whitespace, js_number_to_string};
use crate::session::entry::EntryId;
use crate::session::manager::SessionManager;
use crate::session::scan::{Bad, Scanner, key_is};
use crate::session::tree::{EntryKind, MessageRole};

// The outline methods of the manager are here, with the reader they call.
impl SessionManager {
    /// An outline of every entry in file order: position `i` describes
    /// `tree().nodes()[i]`.
    ///
    /// Big sessions are read in a few contiguous parts on as many threads (each part is
    /// one forward pass of its own): opening `/tree` on 10,000 turns reads 44 MB.
    pub fn outlines(&self) -> Vec<EntryOutline> {
        /// Below this many entries one thread is quicker than starting more.
        const PER_THREAD: usize = 4_000;
        let nodes = &self.index.nodes;
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4)
            .min(nodes.len() / PER_THREAD)
            .max(1);
        // Each part writes the outlines of its entries into its own slice of `out`.
        let part = |nodes: &[crate::session::tree::Node], out: &mut [EntryOutline]| {
            let mut slots = out.iter_mut();
            let mut kinds = nodes.iter().map(|node| node.kind);
            self.store
                .visit(nodes.iter().map(|node| node.line()), |line| {
                    let outline = outline_line(kinds.next().unwrap_or(EntryKind::Other), line);
                    if let Some(slot) = slots.next() {
                        *slot = outline;
                    }
                });
        };
        let mut out = vec![EntryOutline::Other; nodes.len()];
        if threads == 1 {
            part(nodes, &mut out);
            return out;
        }
        let chunk = nodes.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let mut parts = nodes.chunks(chunk).zip(out.chunks_mut(chunk));
            let first = parts.next();
            let handles: Vec<_> = parts
                .map(|(nodes, out)| scope.spawn(move || part(nodes, out)))
                .collect();
            if let Some((nodes, out)) = first {
                part(nodes, out);
            }
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
        out
    }

    /// The outline of one entry.
    pub fn outline(&self, id: &EntryId) -> Option<EntryOutline> {
        let idx = self.index.lookup(id.as_str())?;
        let node = &self.index.nodes[idx as usize];
        Some(outline_line(node.kind, &self.store.line(node.line())))
    }
}

/// The outline of an entry line of the given kind.
pub(super) fn outline_line(kind: EntryKind, line: &[u8]) -> EntryOutline {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let mut s = Scanner::new(line);
    s.ws();
    match kind {
        EntryKind::Message(role) => {
            let mut acc = MessageAcc::new(role);
            if s.peek() == Some(b'{') {
                // Errors leave what was read so far.
                let _ = members(&mut s, |s, key| {
                    if key_is(key, b"message") && s.peek() == Some(b'{') {
                        acc.read(s)?;
                        // Nothing after the message matters.
                        return Ok(Flow::Stop);
                    }
                    s.skip_value()?;
                    Ok(Flow::Go)
                });
            }
            EntryOutline::Message(acc.finish())
        }
        EntryKind::Other => EntryOutline::Other,
        _ => {
            let mut out = empty_outline(kind);
            if s.peek() == Some(b'{') {
                let _ = members(&mut s, |s, key| {
                    read_entry_field(s, key, &mut out)?;
                    Ok(Flow::Go)
                });
            }
            out
        }
    }
}

fn empty_outline(kind: EntryKind) -> EntryOutline {
    match kind {
        EntryKind::ThinkingLevelChange => EntryOutline::ThinkingLevelChange { level: None },
        EntryKind::ModelChange => EntryOutline::ModelChange { model_id: None },
        EntryKind::Compaction => EntryOutline::Compaction {
            tokens_before: None,
        },
        EntryKind::BranchSummary => EntryOutline::BranchSummary {
            summary: String::new(),
        },
        EntryKind::Custom => EntryOutline::Custom { custom_type: None },
        EntryKind::CustomMessage => EntryOutline::CustomMessage {
            custom_type: None,
            text: String::new(),
        },
        EntryKind::Label => EntryOutline::Label { label: None },
        EntryKind::SessionInfo => EntryOutline::SessionInfo { name: None },
        EntryKind::ContextEdit => EntryOutline::ContextEdit {
            target_id: None,
            omit: false,
        },
        EntryKind::Message(_) | EntryKind::Usage | EntryKind::Other => EntryOutline::Other,
    }
}

/// Reads the member `key` of a non-message entry into `out` if it is one the outline
/// keeps; skips it otherwise.
fn read_entry_field(s: &mut Scanner<'_>, key: &[u8], out: &mut EntryOutline) -> Result<(), Bad> {
    match out {
        EntryOutline::ThinkingLevelChange { level } if key_is(key, b"thinkingLevel") => {
            *level = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::ModelChange { model_id } if key_is(key, b"modelId") => {
            *model_id = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::Compaction { tokens_before } if key_is(key, b"tokensBefore") => {
            *tokens_before = opt_number(s)?;
        }
        EntryOutline::BranchSummary { summary } if key_is(key, b"summary") => {
            *summary = opt_string(s, LONG_TEXT_UNITS)?.unwrap_or_default();
        }
        EntryOutline::ContextEdit { target_id, .. } if key_is(key, b"targetId") => {
            *target_id = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::ContextEdit { omit, .. } if key_is(key, b"replacement") => {
            *omit = s.peek() == Some(b'n');
            s.skip_value()?;
        }
        EntryOutline::Custom { custom_type } if key_is(key, b"customType") => {
            *custom_type = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::CustomMessage { custom_type, .. } if key_is(key, b"customType") => {
            *custom_type = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::CustomMessage { text, .. } if key_is(key, b"content") => {
            let mut capped = Capped::new(LONG_TEXT_UNITS);
            content_text(s, &mut capped)?;
            *text = capped.text;
        }
        EntryOutline::Label { label } if key_is(key, b"label") => {
            *label = opt_string(s, LONG_TEXT_UNITS)?;
        }
        EntryOutline::SessionInfo { name } if key_is(key, b"name") => {
            *name = opt_string(s, LONG_TEXT_UNITS)?;
        }
        _ => s.skip_value()?,
    }
    Ok(())
}

/// The text of a content value (a string, or the text blocks of a block list joined),
/// for entries whose content is read whole.
fn content_text(s: &mut Scanner<'_>, out: &mut Capped) -> Result<(), Bad> {
    match s.peek() {
        Some(b'"') => {
            let raw = raw_str(s)?;
            out.extend_json(raw);
        }
        Some(b'[') => {
            elements(s, |s| {
                if s.peek() != Some(b'{') {
                    s.skip_value()?;
                    return Ok(Flow::Go);
                }
                let mut kind: Option<&[u8]> = None;
                let mut text: Option<&[u8]> = None;
                members(s, |s, key| {
                    if key_is(key, b"type") && s.peek() == Some(b'"') {
                        kind = Some(raw_str(s)?);
                    } else if key_is(key, b"text") && s.peek() == Some(b'"') {
                        text = Some(raw_str(s)?);
                    } else {
                        s.skip_value()?;
                    }
                    Ok(Flow::Go)
                })?;
                if kind == Some(b"text")
                    && let Some(raw) = text
                {
                    out.extend_json(raw);
                }
                Ok(Flow::Go)
            })?;
        }
        _ => s.skip_value()?,
    }
    Ok(())
}

/// What has been read of a `message` object.
struct MessageAcc {
    kind: MessageRole,
    role: Option<String>,
    text: Capped,
    content_seen: bool,
    has_text: bool,
    stop_reason: Option<String>,
    error_message: Option<String>,
    tool_call_id: Option<Option<String>>,
    tool_name: Option<Option<String>>,
    command: Option<Option<String>>,
    tool_calls: Vec<ToolCallOutline>,
}

impl MessageAcc {
    fn new(kind: MessageRole) -> Self {
        MessageAcc {
            kind,
            role: None,
            text: Capped::new(MESSAGE_TEXT_UNITS),
            content_seen: false,
            has_text: false,
            stop_reason: None,
            error_message: None,
            tool_call_id: None,
            tool_name: None,
            command: None,
            tool_calls: Vec::new(),
        }
    }

    /// Assistant turns are read whole: their tool calls and stop reason come after the
    /// text.
    fn reads_whole(&self) -> bool {
        self.kind == MessageRole::Assistant
    }

    /// Whether the outline of this message is complete.
    fn complete(&self) -> bool {
        let content = self.content_seen || self.text.full;
        match self.kind {
            MessageRole::User | MessageRole::Custom => content,
            MessageRole::ToolResult => {
                content && self.tool_call_id.is_some() && self.tool_name.is_some()
            }
            MessageRole::BashExecution => self.command.is_some(),
            MessageRole::Other | MessageRole::System => content && self.role.is_some(),
            // A turn that shows text needs nothing after its content (pi's line order puts
            // the usage, stop reason and error after it).
            MessageRole::Assistant => self.content_seen && self.shows_text(),
        }
    }

    /// Whether the turn's row shows its text (not its ending or error).
    fn shows_text(&self) -> bool {
        self.has_text && self.text.text.chars().any(|c| !is_js_whitespace(c))
    }

    fn read(&mut self, s: &mut Scanner<'_>) -> Result<Flow, Bad> {
        members(s, |s, key| {
            if key_is(key, b"content") {
                if self.content(s)? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                self.content_seen = true;
            } else if key_is(key, b"role") && self.kind == MessageRole::Other {
                // Known roles are known from the index already.
                self.role = Some(opt_string(s, LONG_TEXT_UNITS)?.unwrap_or_default());
            } else if key_is(key, b"stopReason") && self.reads_whole() {
                self.stop_reason = opt_string(s, LONG_TEXT_UNITS)?;
            } else if key_is(key, b"errorMessage") && self.reads_whole() {
                self.error_message = opt_string(s, ERROR_TEXT_UNITS)?.filter(|e| !e.is_empty());
            } else if key_is(key, b"toolCallId") {
                self.tool_call_id = Some(opt_string(s, LONG_TEXT_UNITS)?);
            } else if key_is(key, b"toolName") {
                self.tool_name = Some(opt_string(s, LONG_TEXT_UNITS)?);
            } else if key_is(key, b"command") {
                self.command = Some(opt_string(s, LONG_TEXT_UNITS)?);
            } else {
                s.skip_value()?;
            }
            Ok(if self.complete() {
                Flow::Stop
            } else {
                Flow::Go
            })
        })
    }

    /// Reads the string at the scanner into the message text. Once the text is full and
    /// the outline complete, the rest of the line (a tool's long output) is left unread.
    fn text_string(&mut self, s: &mut Scanner<'_>) -> Result<Flow, Bad> {
        if self.reads_whole() {
            let raw = raw_str(s)?;
            self.text.extend_json(raw);
            self.has_text |= has_non_space(raw);
            return Ok(Flow::Go);
        }
        let after_quote = s.rest().get(1..).unwrap_or_default();
        self.text.extend_json(after_quote);
        if self.text.full && self.complete() {
            return Ok(Flow::Stop);
        }
        s.skip_string()?;
        Ok(Flow::Go)
    }

    /// Reads `content`; stops early once the text is full and nothing else is needed.
    fn content(&mut self, s: &mut Scanner<'_>) -> Result<Flow, Bad> {
        match s.peek() {
            Some(b'"') => self.text_string(s),
            Some(b'[') => elements(s, |s| {
                if s.peek() == Some(b'{') {
                    if self.block(s)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                } else {
                    s.skip_value()?;
                }
                // A full text completes the content; stop if nothing else is missing.
                Ok(if self.text.full && self.complete() {
                    Flow::Stop
                } else {
                    Flow::Go
                })
            }),
            _ => {
                s.skip_value()?;
                Ok(Flow::Go)
            }
        }
    }

    /// One content block: text joins the message text, tool calls are kept (assistant).
    fn block(&mut self, s: &mut Scanner<'_>) -> Result<Flow, Bad> {
        let whole = self.reads_whole();
        let mut kind: Option<&[u8]> = None;
        let mut text: Option<&[u8]> = None;
        let mut id = None;
        let mut name = None;
        let mut args = None;
        let flow = members(s, |s, key| {
            if key_is(key, b"type") && s.peek() == Some(b'"') {
                kind = Some(raw_str(s)?);
            } else if key_is(key, b"text") && s.peek() == Some(b'"') {
                if !whole && kind == Some(b"text") {
                    // The usual order (`type` first): read it straight into the text.
                    return self.text_string(s);
                }
                text = Some(raw_str(s)?);
            } else if whole && key_is(key, b"id") {
                id = opt_string(s, LONG_TEXT_UNITS)?;
            } else if whole && key_is(key, b"name") {
                name = opt_string(s, LONG_TEXT_UNITS)?;
            } else if whole && key_is(key, b"arguments") {
                args = Some(tool_args(s)?);
            } else {
                s.skip_value()?;
            }
            Ok(Flow::Go)
        })?;
        match kind {
            Some(b"text") => {
                if let Some(raw) = text {
                    self.text.extend_json(raw);
                    if whole && !self.has_text {
                        self.has_text = has_non_space(raw);
                    }
                }
            }
            Some(b"toolCall") if whole => self.tool_calls.push(ToolCallOutline {
                id: id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                args: args.unwrap_or_default(),
            }),
            _ => {}
        }
        Ok(flow)
    }

    fn finish(self) -> MessageOutline {
        let shows_text = self.shows_text();
        let text = self.text.text;
        match self.kind {
            MessageRole::User => MessageOutline::User { text },
            MessageRole::Assistant => MessageOutline::Assistant(AssistantOutline {
                text,
                has_text: self.has_text,
                ending: match shows_text {
                    true => TurnEnding::Normal,
                    false => TurnEnding::from_stop_reason(self.stop_reason.as_deref()),
                },
                error_message: self.error_message.filter(|_| !shows_text),
                tool_calls: self.tool_calls,
            }),
            MessageRole::ToolResult => MessageOutline::ToolResult {
                tool_call_id: self.tool_call_id.flatten(),
                tool_name: self.tool_name.flatten(),
                text,
            },
            MessageRole::BashExecution => MessageOutline::BashExecution {
                command: self.command.flatten().unwrap_or_default(),
            },
            MessageRole::Custom => MessageOutline::Other {
                role: self.role.unwrap_or_else(|| "custom".into()),
                text,
            },
            MessageRole::Other | MessageRole::System => MessageOutline::Other {
                role: self.role.unwrap_or_default(),
                text,
            },
        }
    }
}

/// The arguments object of a tool call.
fn tool_args(s: &mut Scanner<'_>) -> Result<ToolArgsOutline, Bad> {
    let mut args = ToolArgsOutline::default();
    let start = s.pos();
    if s.peek() == Some(b'{') {
        members(s, |s, key| {
            if key_is(key, b"path") {
                args.path = js_string(s)?;
            } else if key_is(key, b"file_path") {
                args.file_path = js_string(s)?;
            } else if key_is(key, b"command") {
                args.command = js_string(s)?;
            } else if key_is(key, b"pattern") {
                args.pattern = js_string(s)?;
            } else if key_is(key, b"offset") {
                args.offset = Some(arg_number(s)?);
            } else if key_is(key, b"limit") {
                args.limit = Some(arg_number(s)?);
            } else {
                s.skip_value()?;
            }
            Ok(Flow::Go)
        })?;
    } else {
        s.skip_value()?;
    }
    // pi writes compact JSON, so the line's own text is `JSON.stringify(arguments)`.
    let raw = s.since(start);
    let head = String::from_utf8_lossy(&raw[..raw.len().min(1024)]);
    let mut json = Capped::new(ARGS_JSON_UNITS);
    json.extend(head.chars());
    args.json_cut = json.overflowed;
    args.json_head = json.text;
    Ok(args)
}

fn arg_number(s: &mut Scanner<'_>) -> Result<ArgNumber, Bad> {
    Ok(match opt_number(s)? {
        Some(n) => ArgNumber::Number(n),
        None => ArgNumber::NotNumber,
    })
}

/// A number value (anything else is skipped and gives `None`).
fn opt_number(s: &mut Scanner<'_>) -> Result<Option<f64>, Bad> {
    if matches!(s.peek(), Some(b'-' | b'0'..=b'9')) {
        let text = s.number()?;
        Ok(std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()))
    } else {
        s.skip_value()?;
        Ok(None)
    }
}

/// A string value cut at `cap` UTF-16 units (anything else is skipped and gives `None`).
fn opt_string(s: &mut Scanner<'_>, cap: usize) -> Result<Option<String>, Bad> {
    if s.peek() == Some(b'"') {
        let raw = raw_str(s)?;
        let mut out = Capped::new(cap);
        out.extend_json(raw);
        Ok(Some(out.text))
    } else {
        s.skip_value()?;
        Ok(None)
    }
}

/// JavaScript's `String(value)` when the value is truthy, `None` when it is falsy.
fn js_string(s: &mut Scanner<'_>) -> Result<Option<String>, Bad> {
    Ok(match s.peek() {
        Some(b'"') => opt_string(s, LONG_TEXT_UNITS)?.filter(|v| !v.is_empty()),
        Some(b'-' | b'0'..=b'9') => opt_number(s)?
            .filter(|n| *n != 0.0 && !n.is_nan())
            .map(js_number_to_string),
        Some(b't') => {
            s.skip_value()?;
            Some("true".to_string())
        }
        Some(b'{') => {
            s.skip_value()?;
            Some("[object Object]".to_string())
        }
        Some(b'[') => {
            // `String([...])` joins the items; arrays here are a model's mistake.
            s.skip_value()?;
            Some(String::new())
        }
        _ => {
            s.skip_value()?;
            None
        }
    })
}
