//! A bounded, abortable pass over a text file for the `read` tool: the lines from one
//! line number to another, of which only the first [`HEAD_BYTES`] bytes are kept in
//! memory, plus the counts pi's notices need (lines in the file, lines and bytes of the
//! selection, bytes of its first line), taken while streaming through a fixed buffer.
//!
//! pi reads the whole file into a string, decodes it as UTF-8 (invalid bytes become
//! U+FFFD) and splits it on `\n`. Every count here is of that decoded text, so results
//! match pi's exactly, but without ever holding more than the buffer and the head. The
//! head is enough to truncate the selection the way pi does: what is shown never exceeds
//! 50 KB, and a selection whose first `HEAD_BYTES` bytes do not fit in 50 KB is truncated
//! the same way whatever follows.
//!
//! Not here: the limits' notices and the decision what to show (see `read`).

use std::io::{self, Read};

use tokio_util::sync::CancellationToken;

use super::truncate::DEFAULT_MAX_BYTES;

/// How much of the selection is kept: one byte more than the byte limit, so that a
/// selection longer than the limit is seen to be longer.
pub const HEAD_BYTES: usize = DEFAULT_MAX_BYTES + 1;

/// Size of the read buffer; cancellation is checked once per buffer.
const CHUNK_BYTES: usize = 256 * 1024;

/// Why a scan did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("Operation aborted")]
    Aborted,
}

/// Which lines to select, counting from 0; `end` is exclusive (`None`: to the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    pub start: usize,
    pub end: Option<usize>,
}

/// What a scan found. When `start` is not below `total_lines` the selection is empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextWindow {
    /// Lines in the file, counted like pi's `split("\n").length` (an empty file has one).
    pub total_lines: usize,
    /// The start of the selection, decoded: all of it if it is at most `HEAD_BYTES` long.
    pub head: String,
    /// Lines in the selection (an empty selection is one empty line, as in pi).
    pub selected_lines: usize,
    /// Decoded size of the selection in bytes.
    pub selected_bytes: usize,
    /// Decoded size of the selection's first line in bytes.
    pub first_line_bytes: usize,
}

/// Where the scan is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before the selection: only newlines are counted.
    Skip,
    /// Inside the selection.
    Select,
    /// After the selection: only newlines are counted.
    Count,
}

/// Reads `reader` to its end once, selecting `range`. Checks `cancel` before every read.
pub fn scan(
    reader: impl Read,
    range: LineRange,
    cancel: &CancellationToken,
) -> Result<TextWindow, ScanError> {
    let mut scanner = Scanner::new(range);
    let mut reader = reader;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        if cancel.is_cancelled() {
            return Err(ScanError::Aborted);
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        scanner.feed(&buf[..n]);
    }
    Ok(scanner.finish())
}

struct Scanner {
    range: LineRange,
    phase: Phase,
    /// Newlines seen in the whole file so far.
    newlines: usize,
    /// Raw bytes of the selection's start, at most `HEAD_BYTES`.
    head: Vec<u8>,
    selected_newlines: usize,
    selected: DecodedLen,
    /// Set while the selection's first line has not ended.
    first_line: Option<DecodedLen>,
    first_line_bytes: usize,
}

impl Scanner {
    fn new(range: LineRange) -> Self {
        let mut scanner = Self {
            range,
            phase: Phase::Skip,
            newlines: 0,
            head: Vec::new(),
            selected_newlines: 0,
            selected: DecodedLen::default(),
            first_line: None,
            first_line_bytes: 0,
        };
        if range.start == 0 {
            scanner.enter_selection();
        }
        scanner
    }

    /// The selection starts here (at the file's start or just after a newline).
    fn enter_selection(&mut self) {
        if self.range.end.is_some_and(|end| end <= self.range.start) {
            self.phase = Phase::Count;
        } else {
            self.phase = Phase::Select;
            self.first_line = Some(DecodedLen::default());
        }
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            chunk = match self.phase {
                Phase::Skip => self.skip(chunk),
                Phase::Select => self.select(chunk),
                Phase::Count => {
                    self.newlines += count_newlines(chunk);
                    &[]
                }
            };
        }
    }

    /// Counts newlines up to the one before the selection; returns what follows it.
    fn skip<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let wanted = self.range.start - self.newlines;
        match nth_newline(chunk, wanted) {
            Ok(at) => {
                self.newlines = self.range.start;
                self.enter_selection();
                &chunk[at + 1..]
            }
            Err(found) => {
                self.newlines += found;
                &[]
            }
        }
    }

    /// Takes the selected part of `chunk`; returns what follows the selection's end.
    fn select<'a>(&mut self, chunk: &'a [u8]) -> &'a [u8] {
        let end = self
            .range
            .end
            .map(|end| nth_newline(chunk, end - self.newlines));
        let (part, rest) = match end {
            Some(Ok(at)) => (&chunk[..at], Some(&chunk[at + 1..])),
            _ => (chunk, None),
        };
        let room = HEAD_BYTES - self.head.len();
        self.head.extend_from_slice(&part[..part.len().min(room)]);
        self.selected.feed(part);
        if let Some(first) = &mut self.first_line {
            match memchr::memchr(b'\n', part) {
                Some(at) => {
                    first.feed(&part[..at]);
                    self.first_line_bytes = first.finish();
                    self.first_line = None;
                }
                None => first.feed(part),
            }
        }
        let newlines = count_newlines(part);
        self.selected_newlines += newlines;
        self.newlines += newlines;
        match rest {
            Some(rest) => {
                self.newlines += 1;
                self.leave_selection();
                rest
            }
            None => &[],
        }
    }

    fn leave_selection(&mut self) {
        if let Some(first) = self.first_line.take() {
            self.first_line_bytes = first.finish();
        }
        self.phase = Phase::Count;
    }

    fn finish(mut self) -> TextWindow {
        if self.phase == Phase::Select {
            self.leave_selection();
        }
        let selected_bytes = self.selected.finish();
        TextWindow {
            total_lines: self.newlines + 1,
            head: String::from_utf8_lossy(&self.head).into_owned(),
            selected_lines: self.selected_newlines + 1,
            selected_bytes,
            first_line_bytes: self.first_line_bytes,
        }
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Position of the `n`-th newline (`n` ≥ 1) in `bytes`, or how many newlines there are.
fn nth_newline(bytes: &[u8], n: usize) -> Result<usize, usize> {
    let found = count_newlines(bytes);
    if found < n {
        return Err(found);
    }
    memchr::memchr_iter(b'\n', bytes).nth(n - 1).ok_or(found)
}

/// The length of a byte stream once decoded as UTF-8 with every invalid sequence
/// replaced by U+FFFD (three bytes), exactly as `String::from_utf8_lossy` would decode
/// the whole stream, fed in pieces that may split a character.
#[derive(Debug, Default)]
struct DecodedLen {
    total: usize,
    /// The start of a character cut off at the end of the last piece.
    pending: [u8; 4],
    pending_len: usize,
}

const REPLACEMENT_LEN: usize = '\u{fffd}'.len_utf8();

impl DecodedLen {
    fn feed(&mut self, mut bytes: &[u8]) {
        while self.pending_len > 0 {
            let Some((&next, rest)) = bytes.split_first() else {
                return;
            };
            let mut joined = self.pending;
            joined[self.pending_len] = next;
            match std::str::from_utf8(&joined[..=self.pending_len]) {
                Ok(text) => {
                    self.total += text.len();
                    self.pending_len = 0;
                    bytes = rest;
                }
                Err(e) if e.error_len().is_none() => {
                    self.pending = joined;
                    self.pending_len += 1;
                    bytes = rest;
                }
                // The cut-off start was all there was of that character: it is replaced,
                // and `next` begins something new.
                Err(_) => {
                    self.total += REPLACEMENT_LEN;
                    self.pending_len = 0;
                }
            }
        }
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.total += text.len();
                    return;
                }
                Err(e) => {
                    self.total += e.valid_up_to();
                    match e.error_len() {
                        Some(len) => {
                            self.total += REPLACEMENT_LEN;
                            bytes = &bytes[e.valid_up_to() + len..];
                        }
                        None => {
                            let tail = &bytes[e.valid_up_to()..];
                            self.pending[..tail.len()].copy_from_slice(tail);
                            self.pending_len = tail.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The decoded length; a character cut off at the very end counts as one U+FFFD.
    fn finish(&self) -> usize {
        self.total
            + if self.pending_len > 0 {
                REPLACEMENT_LEN
            } else {
                0
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn decoded_len_in_pieces(bytes: &[u8], piece: usize) -> usize {
        let mut len = DecodedLen::default();
        for part in bytes.chunks(piece.max(1)) {
            len.feed(part);
        }
        len.finish()
    }

    /// Feeds `bytes` one piece of `piece` bytes at a time.
    fn scan_in_pieces(bytes: &[u8], range: LineRange, piece: usize) -> TextWindow {
        let mut scanner = Scanner::new(range);
        for part in bytes.chunks(piece.max(1)) {
            scanner.feed(part);
        }
        scanner.finish()
    }

    /// What the window must be, computed pi's way on the whole decoded text.
    fn expected(bytes: &[u8], range: LineRange) -> TextWindow {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.split('\n').collect();
        let start = range.start.min(lines.len());
        let end = range.end.unwrap_or(lines.len()).clamp(start, lines.len());
        let selection = lines[start..end].join("\n");
        let raw_selection: Vec<u8> = {
            let raw: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
            raw[start..end].join(&b'\n')
        };
        let head_len = raw_selection.len().min(HEAD_BYTES);
        TextWindow {
            total_lines: lines.len(),
            head: String::from_utf8_lossy(&raw_selection[..head_len]).into_owned(),
            selected_lines: selection.split('\n').count(),
            selected_bytes: selection.len(),
            first_line_bytes: lines
                .get(start)
                .filter(|_| end > start)
                .map_or(0, |l| l.len()),
        }
    }

    #[test]
    fn decoded_length_matches_lossy_decoding_however_the_bytes_are_cut() {
        let samples: [&[u8]; 7] = [
            b"plain ascii",
            "é😀ü".as_bytes(),
            b"bad \xff byte",
            b"cut off \xe2\x82",
            b"\xe2\x82 then ascii",
            b"\xf0\x9f\x98 truncated emoji then \xf0\x9f\x98\x80",
            b"\xed\xa0\x80 surrogate \xc0\xaf overlong \xf4\x90\x80\x80 too big",
        ];
        for sample in samples {
            let want = String::from_utf8_lossy(sample).len();
            for piece in 1..=sample.len() {
                assert_eq!(
                    decoded_len_in_pieces(sample, piece),
                    want,
                    "{sample:?} in pieces of {piece}"
                );
            }
        }
    }

    #[test]
    fn windows_match_pi_splitting_for_every_range_and_piece_size() {
        let text: &[u8] = b"one\ntwo \xff\n\nfour \xe2\x82\xac\nlast";
        let ends = [None, Some(0), Some(1), Some(2), Some(4), Some(5), Some(9)];
        for start in 0..7 {
            for end in ends {
                let range = LineRange { start, end };
                let want = expected(text, range);
                for piece in [1, 2, 3, 5, 64] {
                    let got = scan_in_pieces(text, range, piece);
                    if start < want.total_lines {
                        assert_eq!(got, want, "{range:?} in pieces of {piece}");
                    } else {
                        assert_eq!(got.total_lines, want.total_lines);
                    }
                }
            }
        }
    }

    #[test]
    fn only_the_head_of_a_long_selection_is_kept() {
        let mut text = b"first\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 3 * HEAD_BYTES));
        text.extend_from_slice(b"\nend\n");
        let window = scan_in_pieces(
            &text,
            LineRange {
                start: 1,
                end: None,
            },
            1000,
        );
        assert_eq!(window.head.len(), HEAD_BYTES);
        assert_eq!(window.total_lines, 4);
        assert_eq!(window.selected_lines, 3);
        assert_eq!(window.first_line_bytes, 3 * HEAD_BYTES);
        assert_eq!(window.selected_bytes, 3 * HEAD_BYTES + 5);
        assert_eq!(
            window,
            expected(
                &text,
                LineRange {
                    start: 1,
                    end: None
                }
            )
        );
    }

    #[test]
    fn the_head_of_a_line_cut_inside_a_character_decodes_like_pi() {
        let mut text = vec![b'a'; HEAD_BYTES - 1];
        text.extend_from_slice("€€".as_bytes());
        let range = LineRange {
            start: 0,
            end: None,
        };
        let window = scan_in_pieces(&text, range, 7);
        assert_eq!(window, expected(&text, range));
        assert!(window.head.ends_with('\u{fffd}'));
        assert_eq!(window.selected_bytes, HEAD_BYTES - 1 + 6);
    }

    #[test]
    fn an_offset_past_the_end_still_counts_every_line() {
        let window = scan_in_pieces(
            b"a\nb\n",
            LineRange {
                start: 9,
                end: None,
            },
            3,
        );
        assert_eq!(window.total_lines, 3);
        assert_eq!(window.head, "");
    }

    #[test]
    fn a_cancelled_scan_stops_before_reading() {
        struct Endless;
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                buf.fill(b'z');
                Ok(buf.len())
            }
        }
        let cancel = CancellationToken::new();
        cancel.cancel();
        let range = LineRange {
            start: 0,
            end: None,
        };
        assert!(matches!(
            scan(Endless, range, &cancel),
            Err(ScanError::Aborted)
        ));
    }

    #[test]
    fn a_scan_cancelled_midway_stops_at_the_next_buffer() {
        /// Cancels the token after handing out a few buffers of text.
        struct CancelsAfter {
            reads: usize,
            cancel: CancellationToken,
        }
        impl Read for CancelsAfter {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.reads += 1;
                assert!(self.reads <= 4, "read on after cancellation");
                if self.reads == 3 {
                    self.cancel.cancel();
                }
                buf.fill(b'\n');
                Ok(buf.len())
            }
        }
        let cancel = CancellationToken::new();
        let reader = CancelsAfter {
            reads: 0,
            cancel: cancel.clone(),
        };
        let range = LineRange {
            start: 5,
            end: Some(7),
        };
        assert!(matches!(
            scan(reader, range, &cancel),
            Err(ScanError::Aborted)
        ));
    }
}
