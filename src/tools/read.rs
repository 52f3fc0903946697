//! The `read` tool: a text file's lines (optionally from `offset`, at most `limit`), cut at
//! 2000 lines / 50 KB with a notice telling the model how to continue, or an image (PNG,
//! JPEG, GIF, WebP, recognized by content) as an image block plus a short text note.
//!
//! Lines are returned as they are in the file, without line numbers, as in pi. Result and
//! error texts are pi's, since models act on them (`Use offset=N to continue.`).
//!
//! Unlike pi, which loads the whole file, a text file is streamed once through a fixed
//! buffer, keeping only the first 50 KB of the selected lines (see `text_window`), so any
//! file size costs the same memory; the pass stops at the next buffer when the call is
//! aborted. Image files must be decoded whole and are loaded only up to
//! [`MAX_IMAGE_FILE_BYTES`].

use std::io::{Cursor, Read as _};
use std::path::Path;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::fsio::{Access, check_access, node_error};
use super::image::{SNIFF_BYTES, detect_image_mime, dimension_note, fit_image};
use super::js::js_number_to_string;
use super::path::resolve_read_path;
use super::registry::ToolConfig;
use super::text_window::{LineRange, ScanError, scan};
use super::truncate::{DEFAULT_MAX_BYTES, Limits, format_size, truncate_head};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};
use crate::ai::message::{ImageContent, UserBlock};

const DESCRIPTION: &str = "Read a file. Text files are returned as text; JPEG, PNG, GIF and WebP images are returned as image attachments. Text output stops after 2000 lines or 50KB, whichever comes first: use offset and limit to read other parts of a large file, and keep reading with a higher offset until you have everything you need.";

/// Largest image file the tool loads (it must be decoded whole to be resized); a larger
/// one is answered with pi's note for an image that cannot be sent.
pub const MAX_IMAGE_FILE_BYTES: u64 = 64 * 1024 * 1024;

const IMAGE_CHUNK_BYTES: usize = 1024 * 1024;

const IMAGE_OMITTED_NOTE: &str =
    "[Image omitted: could not be resized below the inline image size limit.]";

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
        let cancel = call.cancel.clone();
        let work = tokio::task::spawn_blocking(move || {
            read_file(&absolute, &args, auto_resize, accepts_images, &cancel)
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
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    check_access(absolute, Access::Read)
        .map_err(|e| ToolError::new(node_error(&e, "access", Some(absolute))))?;
    let mut file = std::fs::File::open(absolute)
        .map_err(|e| ToolError::new(node_error(&e, "open", Some(absolute))))?;
    let mut head = vec![0u8; SNIFF_BYTES];
    let head_len = read_up_to(&mut file, &mut head).map_err(|e| read_error(&e))?;
    head.truncate(head_len);
    match detect_image_mime(&head) {
        Some(mime) => match read_image_bytes(file, head, cancel)? {
            Some(bytes) => Ok(read_image(&bytes, mime, auto_resize, accepts_images)),
            None => Ok(image_omitted(mime, accepts_images)),
        },
        None => read_text(Cursor::new(head).chain(file), args, cancel),
    }
}

fn read_error(err: &std::io::Error) -> ToolError {
    ToolError::new(node_error(err, "read", None))
}

fn scan_error(err: ScanError) -> ToolError {
    match err {
        ScanError::Io(e) => read_error(&e),
        ScanError::Aborted => ToolError::new("Operation aborted"),
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

/// The whole image file after its already read `head`, or `None` when it is larger than
/// [`MAX_IMAGE_FILE_BYTES`] (decided from its size before reading when it has one).
fn read_image_bytes(
    mut file: std::fs::File,
    head: Vec<u8>,
    cancel: &CancellationToken,
) -> Result<Option<Vec<u8>>, ToolError> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_IMAGE_FILE_BYTES {
        return Ok(None);
    }
    let mut bytes = head;
    bytes.reserve(
        usize::try_from(size)
            .unwrap_or(0)
            .saturating_sub(bytes.len()),
    );
    let mut chunk = vec![0u8; IMAGE_CHUNK_BYTES];
    loop {
        if cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        let n = match file.read(&mut chunk) {
            Ok(0) => return Ok(Some(bytes)),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(&e)),
        };
        if (bytes.len() + n) as u64 > MAX_IMAGE_FILE_BYTES {
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// pi's note for an image it cannot send, used for image files too large to load.
fn image_omitted(mime: &str, accepts_images: bool) -> ToolOutput {
    let mut note = format!("Read image file [{mime}]\n{IMAGE_OMITTED_NOTE}");
    if !accepts_images {
        note.push('\n');
        note.push_str(NON_VISION_NOTE);
    }
    ToolOutput::text(note)
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
                format!("Read image file [{mime}]\n{IMAGE_OMITTED_NOTE}"),
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

/// The selected lines of a text file, read in one bounded pass (see `text_window`).
fn read_text(
    reader: impl std::io::Read,
    args: &ReadArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    // pi treats offset 0 like no offset; JavaScript's `slice` truncates fractions.
    let start_line = match args.offset {
        Some(offset) if offset != 0.0 && !offset.is_nan() => (offset - 1.0).max(0.0).trunc(),
        _ => 0.0,
    };
    // A negative limit selects nothing, like JavaScript's `slice(start, end < start)`.
    // Float-to-integer casts saturate, so absurd offsets and limits stay absurd.
    let end_line = args
        .limit
        .map(|limit| (start_line + limit.trunc().max(0.0)) as usize);
    let range = LineRange {
        start: start_line as usize,
        end: end_line,
    };
    let window = scan(reader, range, cancel).map_err(scan_error)?;
    let total_lines = window.total_lines;
    if start_line >= total_lines as f64 {
        let offset = args.offset.map_or_else(String::new, js_number_to_string);
        return Err(ToolError::new(format!(
            "Offset {offset} is beyond end of file ({total_lines} lines total)"
        )));
    }
    let start_line = range.start;
    let start_display = start_line + 1;
    let user_limited_lines = end_line.map(|end| end.min(total_lines) - start_line);

    // The head decides the truncation exactly as the whole selection would; the totals
    // stored in `details` are those of the whole selection.
    let mut truncation = truncate_head(&window.head, Limits::default());
    truncation.total_lines = window.selected_lines;
    truncation.total_bytes = window.selected_bytes;
    let limit_text = format_size(DEFAULT_MAX_BYTES);
    if truncation.first_line_exceeds_limit {
        let output = format!(
            "[Line {start_display} is {}, exceeds {limit_text} limit. Use bash: sed -n '{start_display}p' {} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(window.first_line_bytes),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// pi's algorithm on the whole decoded file, as `read.ts` does it: split on `\n`,
    /// slice, join, truncate.
    fn whole_file_read(bytes: &[u8], args: &ReadArgs) -> Result<ToolOutput, ToolError> {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.split('\n').collect();
        let start = match args.offset {
            Some(offset) if offset != 0.0 && !offset.is_nan() => (offset - 1.0).max(0.0).trunc(),
            _ => 0.0,
        };
        if start >= lines.len() as f64 {
            let offset = args.offset.map_or_else(String::new, js_number_to_string);
            return Err(ToolError::new(format!(
                "Offset {offset} is beyond end of file ({} lines total)",
                lines.len()
            )));
        }
        let start = start as usize;
        let end = args
            .limit
            .map(|limit| ((start as f64 + limit.trunc().max(0.0)) as usize).min(lines.len()));
        let selection = lines[start..end.unwrap_or(lines.len())].join("\n");
        let truncation = truncate_head(&selection, Limits::default());
        let total = lines.len();
        let shown_to = start + truncation.output_lines;
        let text = if truncation.first_line_exceeds_limit {
            format!(
                "[Line {} is {}, exceeds 50.0KB limit. Use bash: sed -n '{}p' {} | head -c 51200]",
                start + 1,
                format_size(lines[start].len()),
                start + 1,
                args.path
            )
        } else if truncation.truncated {
            let why = match truncation.truncated_by {
                Some(super::super::truncate::TruncatedBy::Lines) => "",
                _ => " (50.0KB limit)",
            };
            format!(
                "{}\n\n[Showing lines {}-{shown_to} of {total}{why}. Use offset={} to continue.]",
                truncation.content,
                start + 1,
                shown_to + 1
            )
        } else if let Some(end) = end.filter(|&end| end < total) {
            format!(
                "{}\n\n[{} more lines in file. Use offset={} to continue.]",
                truncation.content,
                total - end,
                end + 1
            )
        } else {
            truncation.content.clone()
        };
        let output = ToolOutput::text(text);
        Ok(if truncation.truncated {
            output.with_details(json!({ "truncation": truncation }))
        } else {
            output
        })
    }

    fn streamed_read(bytes: &[u8], args: &ReadArgs) -> Result<ToolOutput, ToolError> {
        read_text(Cursor::new(bytes), args, &CancellationToken::new())
    }

    fn args(offset: Option<f64>, limit: Option<f64>) -> ReadArgs {
        ReadArgs {
            path: "f.txt".to_string(),
            offset,
            limit,
        }
    }

    /// A line of `len` bytes: ASCII, two-byte characters, or with invalid bytes.
    fn line(len: usize, kind: u8) -> Vec<u8> {
        match kind {
            0 => vec![b'a'; len],
            1 => "é".repeat(len / 2).into_bytes(),
            _ => b"x\xffy\xe2\x82"
                .iter()
                .copied()
                .cycle()
                .take(len)
                .collect(),
        }
    }

    /// Files of short lines (cut by the line limit), of medium lines (cut by the byte
    /// limit) and with lines over the byte limit.
    fn file_strategy() -> impl Strategy<Value = Vec<u8>> {
        let lines = (0u8..3).prop_flat_map(|kind| {
            let length = match kind {
                0 => prop_oneof![0usize..4, 10usize..40].boxed(),
                1 => (10usize..40).boxed(),
                _ => prop_oneof![8 => 0usize..40, 1 => 20_000usize..60_000].boxed(),
            };
            prop::collection::vec((length, 0u8..3), 0..2600)
        });
        (lines, any::<bool>()).prop_map(|(lines, trailing_newline)| {
            let mut bytes = lines
                .into_iter()
                .map(|(len, kind)| line(len, kind))
                .collect::<Vec<_>>()
                .join(&b'\n');
            if trailing_newline {
                bytes.push(b'\n');
            }
            bytes
        })
    }

    fn number_strategy() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(0.0)),
            Just(Some(-3.0)),
            (1u32..2700).prop_map(|n| Some(f64::from(n))),
            (1u32..30).prop_map(|n| Some(f64::from(n) + 0.5)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn streaming_gives_what_reading_the_whole_file_gives(
            bytes in file_strategy(),
            offset in number_strategy(),
            limit in number_strategy(),
        ) {
            let args = args(offset, limit);
            prop_assert_eq!(streamed_read(&bytes, &args), whole_file_read(&bytes, &args));
        }
    }

    #[test]
    fn a_huge_first_line_is_measured_to_its_end() {
        // 300 000 bytes: 120 000 valid ones and 120 000 invalid sequences, each decoded as a
        // three-byte U+FFFD, make 480 000.
        let mut bytes = b"short\n".to_vec();
        bytes.extend(line(300_000, 2));
        bytes.extend_from_slice(b"\nafter");
        for (offset, limit) in [(Some(2.0), None), (Some(2.0), Some(1.0)), (None, None)] {
            let args = args(offset, limit);
            assert_eq!(streamed_read(&bytes, &args), whole_file_read(&bytes, &args));
        }
        let text = streamed_read(&bytes, &args(Some(2.0), None));
        assert!(
            matches!(&text, Ok(out) if out.content == vec![UserBlock::text("[Line 2 is 468.8KB, exceeds 50.0KB limit. Use bash: sed -n '2p' f.txt | head -c 51200]")]),
            "{text:?}"
        );
    }

    #[test]
    fn exactly_the_limits_are_not_truncated() {
        let at_byte_limit = vec![b'q'; DEFAULT_MAX_BYTES];
        let at_line_limit = "l\n".repeat(1999) + "l";
        for bytes in [at_byte_limit, at_line_limit.into_bytes()] {
            let args = args(None, None);
            let out = streamed_read(&bytes, &args);
            assert_eq!(out, whole_file_read(&bytes, &args));
            assert!(matches!(out, Ok(ToolOutput { details: None, .. })));
        }
    }

    #[test]
    fn oversized_image_files_are_not_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.png");
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.resize(SNIFF_BYTES, 0);
        std::fs::write(&path, &png).unwrap();
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(MAX_IMAGE_FILE_BYTES + 1).unwrap();
        let out = read_file(
            &path,
            &args(None, None),
            true,
            false,
            &CancellationToken::new(),
        );
        assert_eq!(
            out.unwrap().content,
            vec![UserBlock::text(format!(
                "Read image file [image/png]\n{IMAGE_OMITTED_NOTE}\n{NON_VISION_NOTE}"
            ))]
        );
    }
}
