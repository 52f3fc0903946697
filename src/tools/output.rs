//! Turning a command's raw output bytes into text, in bounded memory: a UTF-8 decoder that
//! survives characters split across chunks, the `bash` tool's accumulator (keeps a rolling
//! tail for display and saves the full raw output to `pi-bash-<hex>.log` once it exceeds
//! the limits), and the sanitizer for output shown in a terminal (ANSI escapes and control
//! characters removed).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::truncate::{Limits, TruncatedBy, Truncation, count_lines, truncate_tail};

/// Decodes a byte stream as UTF-8, replacing invalid sequences with U+FFFD exactly like a
/// WHATWG `TextDecoder` in streaming mode: an incomplete character at the end of a chunk
/// is kept for the next one.
#[derive(Debug, Default)]
pub struct Utf8StreamDecoder {
    pending: Vec<u8>,
}

impl Utf8StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, holding back a trailing incomplete character.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let (text, rest) = decode_lossy(&input, true);
        self.pending = rest.to_vec();
        text
    }

    /// Decodes whatever is left at the end of the stream.
    pub fn finish(&mut self) -> String {
        let input = std::mem::take(&mut self.pending);
        decode_lossy(&input, false).0
    }
}

/// Lossy decoding; with `streaming`, a trailing incomplete sequence is returned unconsumed.
fn decode_lossy(mut input: &[u8], streaming: bool) -> (String, &[u8]) {
    let mut out = String::with_capacity(input.len());
    loop {
        match std::str::from_utf8(input) {
            Ok(valid) => {
                out.push_str(valid);
                return (out, &[]);
            }
            Err(error) => {
                let (valid, after) = input.split_at(error.valid_up_to());
                // SAFETY-free: `valid_up_to` guarantees this prefix is valid UTF-8.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match error.error_len() {
                    Some(len) => {
                        out.push('\u{FFFD}');
                        input = &after[len..];
                    }
                    None if streaming => return (out, after),
                    None => {
                        out.push('\u{FFFD}');
                        return (out, &[]);
                    }
                }
            }
        }
    }
}

/// A point-in-time view of the accumulated output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSnapshot {
    /// The tail of the output that fits the limits.
    pub content: String,
    /// The truncation record pi stores (totals cover the whole output).
    pub truncation: Truncation,
    /// The file holding the complete raw output, once one was needed.
    pub full_output_path: Option<PathBuf>,
}

/// Collects a command's output for the `bash` tool. Memory stays bounded: only a decoded
/// tail of about twice the byte limit is kept, and the raw bytes go to a temporary file as
/// soon as the output exceeds the line or byte limit.
pub struct OutputAccumulator {
    limits: Limits,
    max_rolling_bytes: usize,
    temp_dir: PathBuf,
    prefix: String,
    decoder: Utf8StreamDecoder,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_starts_at_line_boundary: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    total_lines: usize,
    current_line_bytes: usize,
    temp: Option<(PathBuf, Option<File>)>,
    temp_error: Option<String>,
    finished: bool,
}

impl OutputAccumulator {
    /// `prefix` names the temporary file (`<prefix>-<16 hex>.log` in `temp_dir`).
    pub fn new(limits: Limits, temp_dir: &Path, prefix: &str) -> Self {
        Self {
            limits,
            max_rolling_bytes: (limits.max_bytes * 2).max(1),
            temp_dir: temp_dir.to_path_buf(),
            prefix: prefix.to_string(),
            decoder: Utf8StreamDecoder::new(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_starts_at_line_boundary: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            total_lines: 1,
            current_line_bytes: 0,
            temp: None,
            temp_error: None,
            finished: false,
        }
    }

    pub fn append(&mut self, data: &[u8]) {
        if self.finished {
            return;
        }
        self.total_raw_bytes += data.len();
        let text = self.decoder.decode(data);
        self.append_decoded(&text);
        if self.temp.is_some() || self.needs_temp_file() {
            self.ensure_temp_file();
            self.write_temp(data);
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
    }

    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let rest = self.decoder.finish();
        self.append_decoded(&rest);
        if self.needs_temp_file() {
            self.ensure_temp_file();
        }
        if let Some((_, file)) = &mut self.temp
            && let Some(file) = file.take()
        {
            drop(file);
        }
    }

    /// Bytes of the last (unfinished) line, for the "line is X" notice.
    pub fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    /// A failure to create or write the temporary file, if one happened.
    pub fn temp_file_error(&self) -> Option<&str> {
        self.temp_error.as_deref()
    }

    /// The tail that fits the limits. With `persist_if_truncated`, a temporary file is
    /// created if the output is truncated and none exists yet.
    pub fn snapshot(&mut self, persist_if_truncated: bool) -> OutputSnapshot {
        let text = if self.tail_starts_at_line_boundary {
            self.tail.as_str()
        } else {
            self.tail
                .find('\n')
                .map_or(self.tail.as_str(), |i| &self.tail[i + 1..])
        };
        let mut truncation = truncate_tail(text, self.limits);
        let truncated = self.total_lines > self.limits.max_lines
            || self.total_decoded_bytes > self.limits.max_bytes;
        truncation.truncated_by = if truncated {
            truncation
                .truncated_by
                .or(Some(if self.total_decoded_bytes > self.limits.max_bytes {
                    TruncatedBy::Bytes
                } else {
                    TruncatedBy::Lines
                }))
        } else {
            None
        };
        truncation.truncated = truncated;
        truncation.total_lines = self.total_lines;
        truncation.total_bytes = self.total_decoded_bytes;
        if persist_if_truncated && truncated {
            self.ensure_temp_file();
        }
        OutputSnapshot {
            content: truncation.content.clone(),
            truncation,
            full_output_path: self.temp.as_ref().map(|(path, _)| path.clone()),
        }
    }

    fn needs_temp_file(&self) -> bool {
        self.total_raw_bytes > self.limits.max_bytes
            || self.total_decoded_bytes > self.limits.max_bytes
            || self.total_lines > self.limits.max_lines
    }

    fn append_decoded(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded_bytes += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        let newlines = count_lines(text) - 1;
        if newlines == 0 {
            self.current_line_bytes += text.len();
        } else {
            self.total_lines += newlines;
            let last_newline = text.rfind('\n').unwrap_or(0);
            self.current_line_bytes = text.len() - last_newline - 1;
        }
    }

    fn trim_tail(&mut self) {
        let mut start = self.tail.len() - self.max_rolling_bytes;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        if start > 0 {
            self.tail_starts_at_line_boundary = self.tail.as_bytes()[start - 1] == b'\n';
        }
        self.tail.drain(..start);
    }

    fn ensure_temp_file(&mut self) {
        if self.temp.is_some() {
            return;
        }
        let id: u64 = rand::random();
        let path = self.temp_dir.join(format!("{}-{id:016x}.log", self.prefix));
        match File::create(&path) {
            Ok(mut file) => {
                for chunk in self.raw_chunks.drain(..) {
                    if let Err(e) = file.write_all(&chunk) {
                        self.temp_error = Some(format!("{}: {e}", path.display()));
                        break;
                    }
                }
                self.temp = Some((path, Some(file)));
            }
            Err(e) => {
                self.temp_error = Some(format!("{}: {e}", path.display()));
                self.raw_chunks.clear();
                self.temp = Some((path, None));
            }
        }
    }

    fn write_temp(&mut self, data: &[u8]) {
        if let Some((path, Some(file))) = &mut self.temp
            && let Err(e) = file.write_all(data)
        {
            self.temp_error = Some(format!("{}: {e}", path.display()));
        }
    }
}

/// Removes ANSI escape sequences (CSI, OSC, two-byte escapes) from a stream of text. The
/// state carries over between chunks, so a sequence split across reads is still removed.
#[derive(Debug, Default)]
pub struct AnsiStripper {
    state: AnsiState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum AnsiState {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// Inside `ESC [` (or the C1 CSI) up to the final byte.
    Csi,
    /// Inside `ESC ]` up to BEL or `ESC \`.
    Osc,
    /// Saw ESC inside an OSC string (a `\` ends it).
    OscEscape,
    /// `ESC (`, `ESC )`, `ESC #`: one more character follows.
    OneMore,
}

impl AnsiStripper {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn strip(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            self.state = match (self.state, c) {
                (AnsiState::Text, '\u{1b}') => AnsiState::Escape,
                (AnsiState::Text, '\u{9b}') => AnsiState::Csi,
                (AnsiState::Text, c) => {
                    out.push(c);
                    AnsiState::Text
                }
                (AnsiState::Escape, '[') => AnsiState::Csi,
                (AnsiState::Escape, ']') => AnsiState::Osc,
                (AnsiState::Escape, '(' | ')' | '#' | '%') => AnsiState::OneMore,
                (AnsiState::Escape, _) => AnsiState::Text,
                (AnsiState::OneMore, _) => AnsiState::Text,
                (AnsiState::Csi, c) if ('\u{40}'..='\u{7e}').contains(&c) => AnsiState::Text,
                (AnsiState::Csi, c) if ('\u{20}'..='\u{3f}').contains(&c) => AnsiState::Csi,
                // Anything else cannot be part of a CSI sequence: drop the sequence, keep it.
                (AnsiState::Csi, c) => {
                    out.push(c);
                    AnsiState::Text
                }
                (AnsiState::Osc, '\u{7}' | '\u{9c}') => AnsiState::Text,
                (AnsiState::Osc, '\u{1b}') => AnsiState::OscEscape,
                (AnsiState::Osc, _) => AnsiState::Osc,
                (AnsiState::OscEscape, '\\') => AnsiState::Text,
                (AnsiState::OscEscape, _) => AnsiState::Osc,
            };
        }
        out
    }
}

/// Drops what would garble a terminal or crash width computations: control characters
/// other than tab and newline (carriage returns included, as pi removes them), and the
/// Unicode interlinear annotation characters U+FFF9–U+FFFB.
pub fn sanitize_for_display(text: &str) -> String {
    text.chars()
        .filter(|&c| {
            let code = u32::from(c);
            if c == '\t' || c == '\n' {
                return true;
            }
            code > 0x1f && !(0xFFF9..=0xFFFB).contains(&code)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn decoder_joins_characters_split_across_chunks() {
        let bytes = "añ€😀".as_bytes();
        let mut decoder = Utf8StreamDecoder::new();
        let mut text = String::new();
        for byte in bytes {
            text.push_str(&decoder.decode(std::slice::from_ref(byte)));
        }
        text.push_str(&decoder.finish());
        assert_eq!(text, "añ€😀");
    }

    #[test]
    fn decoder_replaces_invalid_bytes_like_text_decoder() {
        let mut decoder = Utf8StreamDecoder::new();
        let mut text = decoder.decode(b"a\xffb\xe2\x82");
        text.push_str(&decoder.finish());
        assert_eq!(text, "a\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn ansi_sequences_are_stripped_even_when_split() {
        let mut stripper = AnsiStripper::new();
        let mut out = stripper.strip("\u{1b}[1;3");
        out.push_str(&stripper.strip("1mred\u{1b}[0m \u{1b}]0;title\u{7}ok\u{1b}(Bx"));
        assert_eq!(out, "red okx");
    }

    #[test]
    fn sanitizer_keeps_tabs_and_newlines_only() {
        assert_eq!(
            sanitize_for_display("a\tb\r\nc\u{0}\u{7}d\u{FFF9}e"),
            "a\tb\ncde"
        );
    }

    #[test]
    fn accumulator_keeps_the_tail_and_saves_everything_once_over_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_lines: 3,
            max_bytes: 1000,
        };
        let mut acc = OutputAccumulator::new(limits, dir.path(), "pi-bash");
        acc.append(b"1\n2\n");
        assert_eq!(acc.snapshot(true).full_output_path, None);
        acc.append(b"3\n4\n5");
        acc.finish();
        let snapshot = acc.snapshot(true);
        assert_eq!(snapshot.content, "3\n4\n5");
        assert_eq!(snapshot.truncation.total_lines, 5);
        assert!(snapshot.truncation.truncated);
        let path = snapshot.full_output_path.unwrap();
        assert!(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pi-bash-")
        );
        assert_eq!(std::fs::read_to_string(path).unwrap(), "1\n2\n3\n4\n5");
    }
}
