//! The `read` tool: a text file's lines (optionally from `offset`, at most `limit`), cut at
//! 2000 lines / 50 KB with a notice telling the model how to continue, or an image (PNG,
//! JPEG, GIF, WebP, recognized by content) as an image block plus a short text note.
//!
//! Lines are returned as they are in the file, without line numbers, as in pi. Result and
//! error texts are pi's, since models act on them (`Use offset=N to continue.`).

use std::io::Read as _;
use std::path::Path;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::fsio::{Access, check_access, node_error};
use super::image::{SNIFF_BYTES, detect_image_mime, dimension_note, fit_image};
use super::js::js_number_to_string;
use super::path::resolve_read_path;
use super::registry::ToolConfig;
use super::truncate::{DEFAULT_MAX_BYTES, Limits, count_lines, format_size, truncate_head};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};
use crate::ai::message::{ImageContent, UserBlock};

const DESCRIPTION: &str = "Read a file. Text files are returned as text; JPEG, PNG, GIF and WebP images are returned as image attachments. Text output stops after 2000 lines or 50KB, whichever comes first: use offset and limit to read other parts of a large file, and keep reading with a higher offset until you have everything you need.";

const NON_VISION_NOTE: &str =
    "[Current model does not support images. The image will be omitted from this request.]";

pub struct ReadTool {
    config: ToolConfig,
}

impl ReadTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

/// The arguments after validation.
struct ReadArgs {
    path: String,
    offset: Option<f64>,
    limit: Option<f64>,
}

impl ReadArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("read: `path` must be a string"))?
            .to_string();
        Ok(Self {
            path,
            offset: args.get("offset").and_then(Value::as_f64),
            limit: args.get("limit").and_then(Value::as_f64),
        })
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn label(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "File to read, relative to the working directory or absolute"},
                "offset": {"type": "number", "description": "First line to return, counting from 1"},
                "limit": {"type": "number", "description": "How many lines to return at most"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read a file's contents (text or image)")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &["Read files with read rather than cat or sed."]
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let args = ReadArgs::parse(&call.args)?;
        if call.cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        let absolute = resolve_read_path(&args.path, &self.config.cwd);
        let auto_resize = self.config.auto_resize_images;
        let accepts_images = self.config.accepts_images();
        let work = tokio::task::spawn_blocking(move || {
            read_file(&absolute, &args, auto_resize, accepts_images)
        });
        tokio::select! {
            joined = work => joined.map_err(|e| ToolError::new(format!("read failed: {e}")))?,
            () = call.cancel.cancelled() => Err(ToolError::new("Operation aborted")),
        }
    }
}

fn read_file(
    absolute: &Path,
    args: &ReadArgs,
    auto_resize: bool,
    accepts_images: bool,
) -> Result<ToolOutput, ToolError> {
    check_access(absolute, Access::Read)
        .map_err(|e| ToolError::new(node_error(&e, "access", Some(absolute))))?;
    let mut file = std::fs::File::open(absolute)
        .map_err(|e| ToolError::new(node_error(&e, "open", Some(absolute))))?;
    let mut head = vec![0u8; SNIFF_BYTES];
    let head_len = read_up_to(&mut file, &mut head)
        .map_err(|e| ToolError::new(node_error(&e, "read", None)))?;
    head.truncate(head_len);
    let mime = detect_image_mime(&head);
    let mut bytes = head;
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::new(node_error(&e, "read", None)))?;
    match mime {
        Some(mime) => Ok(read_image(&bytes, mime, auto_resize, accepts_images)),
        None => read_text(&String::from_utf8_lossy(&bytes), args),
    }
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn read_image(bytes: &[u8], mime: &str, auto_resize: bool, accepts_images: bool) -> ToolOutput {
    let vision_note = (!accepts_images).then_some(NON_VISION_NOTE);
    let (mut note, image) = if auto_resize {
        match fit_image(bytes, mime) {
            Some(prepared) => {
                let mut note = format!("Read image file [{}]", prepared.mime_type);
                if let Some(dimensions) = dimension_note(&prepared) {
                    note.push('\n');
                    note.push_str(&dimensions);
                }
                (note, Some((prepared.data_base64, prepared.mime_type)))
            }
            None => (
                format!(
                    "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
                ),
                None,
            ),
        }
    } else {
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        (
            format!("Read image file [{mime}]"),
            Some((data, mime.to_string())),
        )
    };
    if let Some(vision_note) = vision_note {
        note.push('\n');
        note.push_str(vision_note);
    }
    let mut content = vec![UserBlock::text(note)];
    if let Some((data, mime_type)) = image {
        content.push(UserBlock::Image(ImageContent {
            data,
            mime_type,
            ..ImageContent::default()
        }));
    }
    ToolOutput {
        content,
        details: None,
    }
}

/// Byte offset where line `index` (0-based) starts, or `None` past the end.
fn line_start(text: &str, index: usize) -> Option<usize> {
    if index == 0 {
        return Some(0);
    }
    memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(index - 1)
        .map(|newline| newline + 1)
}

/// Byte offset where line `index` ends (its newline or the end of the text).
fn line_end(text: &str, from: usize) -> usize {
    memchr::memchr(b'\n', &text.as_bytes()[from..]).map_or(text.len(), |i| from + i)
}

fn read_text(text: &str, args: &ReadArgs) -> Result<ToolOutput, ToolError> {
    let total_lines = count_lines(text);
    // pi treats offset 0 like no offset; JavaScript's `slice` truncates fractions.
    let start_line = match args.offset {
        Some(offset) if offset != 0.0 && !offset.is_nan() => (offset - 1.0).max(0.0).trunc(),
        _ => 0.0,
    };
    if start_line >= total_lines as f64 {
        let offset = args.offset.map_or_else(String::new, js_number_to_string);
        return Err(ToolError::new(format!(
            "Offset {offset} is beyond end of file ({total_lines} lines total)"
        )));
    }
    let start_line = start_line as usize;
    let start_display = start_line + 1;
    let start_byte = line_start(text, start_line).unwrap_or(text.len());

    let (selected, user_limited_lines) = match args.limit {
        Some(limit) => {
            // A negative limit selects nothing, like JavaScript's `slice(start, end < start)`.
            let end_line = (start_line as f64 + limit.trunc().max(0.0)).min(total_lines as f64);
            let end_line = end_line as usize;
            let selected = if end_line == start_line {
                ""
            } else {
                let last_start = line_start(text, end_line - 1).unwrap_or(text.len());
                &text[start_byte..line_end(text, last_start)]
            };
            (selected, Some(end_line - start_line))
        }
        None => (&text[start_byte..], None),
    };

    let truncation = truncate_head(selected, Limits::default());
    let limit_text = format_size(DEFAULT_MAX_BYTES);
    if truncation.first_line_exceeds_limit {
        let first_line = &text[start_byte..line_end(text, start_byte)];
        let output = format!(
            "[Line {start_display} is {}, exceeds {limit_text} limit. Use bash: sed -n '{start_display}p' {} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(first_line.len()),
            args.path
        );
        return Ok(ToolOutput::text(output).with_details(json!({ "truncation": truncation })));
    }
    if truncation.truncated {
        let end_display = start_display + truncation.output_lines - 1;
        let next = end_display + 1;
        let notice = if truncation.truncated_by == Some(super::truncate::TruncatedBy::Lines) {
            format!(
                "\n\n[Showing lines {start_display}-{end_display} of {total_lines}. Use offset={next} to continue.]"
            )
        } else {
            format!(
                "\n\n[Showing lines {start_display}-{end_display} of {total_lines} ({limit_text} limit). Use offset={next} to continue.]"
            )
        };
        let output = format!("{}{notice}", truncation.content);
        return Ok(ToolOutput::text(output).with_details(json!({ "truncation": truncation })));
    }
    if let Some(shown) = user_limited_lines
        && start_line + shown < total_lines
    {
        let remaining = total_lines - (start_line + shown);
        let next = start_line + shown + 1;
        return Ok(ToolOutput::text(format!(
            "{}\n\n[{remaining} more lines in file. Use offset={next} to continue.]",
            truncation.content
        )));
    }
    Ok(ToolOutput::text(truncation.content))
}
