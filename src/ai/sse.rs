//! An incremental Server-Sent Events parser over raw byte chunks.
//!
//! Every provider streams its response as SSE; this module turns the bytes that arrive
//! from the network into `(event name, data)` pairs and nothing more (no JSON, no
//! provider knowledge). It follows the WHATWG rules that matter in practice: LF, CRLF and
//! lone CR line endings (also when a CRLF pair is split between two chunks), several
//! `data:` lines joined with `\n`, `:` comment lines, `event:` names, one optional space
//! after the colon, and a last event that is flushed by [`SseParser::finish`] even when
//! the server closed the connection without the final blank line. Lines are handled as
//! bytes, so a UTF-8 character split across chunks is reassembled before it is decoded.
//!
//! Hot path: a complete line inside a chunk is never copied except into the event's data
//! buffer; only the unfinished tail of a chunk is kept for the next one.

use memchr::memchr2;

/// One parsed event. Borrowed from the parser; copy what you need to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, or `""` when the event had none (SSE's "message").
    pub event: &'a str,
    pub data: &'a str,
}

/// Incremental SSE parser. Feed chunks with [`feed`](Self::feed); call
/// [`finish`](Self::finish) when the body ends.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line that has not been terminated yet.
    partial: Vec<u8>,
    /// The previous chunk ended with `\r`: a leading `\n` in the next chunk belongs to it.
    skip_lf: bool,
    event: String,
    data: String,
    /// Whether any `data:` line was seen for the current event (data may be empty).
    has_data: bool,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses one chunk, calling `on_event` for every complete event in it.
    pub fn feed(&mut self, mut chunk: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) {
        if self.skip_lf {
            self.skip_lf = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        while let Some(pos) = memchr2(b'\n', b'\r', chunk) {
            let is_cr = chunk[pos] == b'\r';
            let line_end = pos;
            let mut next = pos + 1;
            if is_cr {
                match chunk.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            if self.partial.is_empty() {
                self.line(&chunk[..line_end], &mut on_event);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(&chunk[..line_end]);
                self.line(&line, &mut on_event);
                line.clear();
                self.partial = line;
            }
            chunk = &chunk[next..];
        }
        self.partial.extend_from_slice(chunk);
    }

    /// Ends the stream: an unterminated last line and a pending event are delivered.
    pub fn finish(&mut self, mut on_event: impl FnMut(SseEvent<'_>)) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut on_event);
        }
        self.dispatch(&mut on_event);
        self.skip_lf = false;
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let mut value = &line[colon + 1..];
                if value.first() == Some(&b' ') {
                    value = &value[1..];
                }
                (&line[..colon], value)
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_utf8(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                push_utf8(&mut self.event, value);
            }
            // `id:` and `retry:` are not used by any model API.
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data || !self.event.is_empty() {
            on_event(SseEvent {
                event: &self.event,
                data: &self.data,
            });
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

fn push_utf8(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.feed(chunk, |e| {
                out.push((e.event.to_string(), e.data.to_string()))
            });
        }
        parser.finish(|e| out.push((e.event.to_string(), e.data.to_string())));
        out
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn lf_crlf_and_cr_line_endings_all_end_events() {
        let input = b"data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d\n\n";
        assert_eq!(
            parse_chunks(&[input]),
            pairs(&[("", "a"), ("", "b"), ("", "c"), ("", "d")])
        );
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_ending() {
        assert_eq!(
            parse_chunks(&[b"data: a\r", b"\n\r", b"\ndata: b\n\n"]),
            pairs(&[("", "a"), ("", "b")])
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines_and_comments_are_skipped() {
        let input = b": keep-alive\nevent: message_start\ndata: {\"a\":\ndata:1}\n\n";
        assert_eq!(
            parse_chunks(&[input]),
            pairs(&[("message_start", "{\"a\":\n1}")])
        );
    }

    #[test]
    fn final_event_without_trailing_blank_line_is_delivered() {
        assert_eq!(
            parse_chunks(&[b"data: first\n\ndata: last"]),
            pairs(&[("", "first"), ("", "last")])
        );
    }

    #[test]
    fn utf8_character_split_across_chunks_is_reassembled() {
        let text = "data: héllo ✓\n\n".as_bytes();
        // Split inside the two-byte 'é' and inside the three-byte '✓'.
        let e = text.iter().position(|&b| b == 0xC3).unwrap_or(0) + 1;
        let check = text.len() - 4;
        assert_eq!(
            parse_chunks(&[&text[..e], &text[e..check], &text[check..]]),
            pairs(&[("", "héllo ✓")])
        );
    }

    #[test]
    fn every_byte_in_its_own_chunk_parses_the_same() {
        let input = b"event: x\r\ndata: one\r\ndata: two\r\n\r\n:c\ndata:three\n\n";
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(
            parse_chunks(&chunks),
            pairs(&[("x", "one\ntwo"), ("", "three")])
        );
    }

    #[test]
    fn event_name_does_not_leak_into_the_next_event() {
        assert_eq!(
            parse_chunks(&[b"event: a\ndata: 1\n\ndata: 2\n\n"]),
            pairs(&[("a", "1"), ("", "2")])
        );
    }
}
