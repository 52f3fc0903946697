//! `@file` arguments and piped stdin: what becomes the first message.
//!
//! As in pi, a text file is wrapped as `<file name="ABS">\n…\n</file>\n`; an image
//! (recognised by its bytes, not its name) is attached and referenced by an empty
//! `<file>` tag (or one holding a note when it was resized); empty files are skipped; a
//! missing or unreadable file is an error naming it. Stdin, file texts and the first
//! message are concatenated into the initial prompt.

use std::path::Path;

use crate::ai::message::ImageContent;
use crate::tools::image::{detect_image_mime, dimension_note, fit_image};
use crate::tools::path::resolve_read_path;

/// Text and images gathered from `@file` arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileArgs {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// Reads every `@file` argument relative to `cwd`.
pub fn process_file_args(
    files: &[String],
    cwd: &Path,
    auto_resize_images: bool,
) -> Result<FileArgs, String> {
    let mut out = FileArgs::default();
    for arg in files {
        let path = resolve_read_path(arg, cwd);
        let shown = path.display().to_string();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("File not found: {shown}"));
            }
            Err(e) => return Err(format!("Could not read file {shown}: {e}")),
        };
        if bytes.is_empty() {
            continue;
        }
        if let Some(mime) = detect_image_mime(&bytes) {
            if auto_resize_images {
                match fit_image(&bytes, mime) {
                    Some(image) => {
                        let note = dimension_note(&image).unwrap_or_default();
                        out.text.push_str(&format!("<file name=\"{shown}\">{note}</file>\n"));
                        out.images.push(ImageContent {
                            data: image.data_base64,
                            mime_type: image.mime_type,
                            extra: Default::default(),
                        });
                    }
                    None => out.text.push_str(&format!(
                        "<file name=\"{shown}\">[Image omitted: could not be resized below the inline image size limit.]</file>\n"
                    )),
                }
            } else {
                use base64::Engine;
                out.text
                    .push_str(&format!("<file name=\"{shown}\"></file>\n"));
                out.images.push(ImageContent {
                    data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    mime_type: mime.to_string(),
                    extra: Default::default(),
                });
            }
            continue;
        }
        let content = String::from_utf8(bytes)
            .map_err(|_| format!("Could not read file {shown}: it is not valid UTF-8 text"))?;
        out.text
            .push_str(&format!("<file name=\"{shown}\">\n{content}\n</file>\n"));
    }
    Ok(out)
}

/// pi's initial message: stdin, then file texts, then the first CLI message (which is
/// removed from `messages`).
pub fn build_initial_message(
    stdin: Option<String>,
    files: &FileArgs,
    messages: &mut Vec<String>,
) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(s) = stdin {
        parts.push(s);
    }
    if !files.text.is_empty() {
        parts.push(files.text.clone());
    }
    if !messages.is_empty() {
        parts.push(messages.remove(0));
    }
    (!parts.is_empty()).then(|| parts.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_are_wrapped_and_missing_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "hello").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let out =
            process_file_args(&["a.md".into(), "empty.txt".into()], dir.path(), true).unwrap();
        let abs = dir.path().join("a.md").display().to_string();
        assert_eq!(out.text, format!("<file name=\"{abs}\">\nhello\n</file>\n"));
        let err = process_file_args(&["nope.txt".into()], dir.path(), true).unwrap_err();
        assert!(err.starts_with("File not found: ") && err.ends_with("nope.txt"));
    }

    #[test]
    fn initial_message_joins_stdin_files_and_first_message() {
        let files = FileArgs {
            text: "<file>x</file>\n".into(),
            images: vec![],
        };
        let mut messages = vec!["do it".to_string(), "then this".to_string()];
        let first = build_initial_message(Some("piped".into()), &files, &mut messages);
        assert_eq!(first.as_deref(), Some("piped<file>x</file>\ndo it"));
        assert_eq!(messages, ["then this"]);
    }
}
