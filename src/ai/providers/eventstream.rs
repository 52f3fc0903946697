//! AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), as Bedrock's
//! `ConverseStream` answers.
//!
//! Each message is: total length (u32, big-endian), headers length (u32), a CRC-32 of
//! those 8 bytes, the headers, the payload, and a CRC-32 of everything before it. A
//! header is a 1-byte name length, the name, a 1-byte value type and the value (strings
//! and byte arrays carry a u16 length). Both CRCs are checked; a bad one ends the stream.

use std::fmt;

/// The smallest message: prelude (12 bytes) and message CRC (4).
const MIN_MESSAGE: usize = 16;
/// Larger messages are refused (AWS's limit is 16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// A header value (only the types AWS uses in responses are kept as text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    String(String),
    Other,
}

/// One decoded message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventMessage {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Vec<u8>,
}

impl EventMessage {
    /// A string header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(k, v)| match v {
            HeaderValue::String(s) if k == name => Some(s.as_str()),
            _ => None,
        })
    }
}

/// Why the byte stream is not a valid event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError(pub String);

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid event stream: {}", self.0)
    }
}

/// Incremental decoder: feed chunks, get whole messages.
#[derive(Debug, Default)]
pub struct EventStreamParser {
    buffer: Vec<u8>,
}

impl EventStreamParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes and returns every message now complete, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<EventMessage>, FrameError> {
        self.buffer.extend_from_slice(chunk);
        let mut messages = Vec::new();
        loop {
            if self.buffer.len() < 12 {
                break;
            }
            let total = be_u32(&self.buffer[0..4]) as usize;
            if !(MIN_MESSAGE..=MAX_MESSAGE).contains(&total) {
                return Err(FrameError(format!("message length {total}")));
            }
            let prelude_crc = be_u32(&self.buffer[8..12]);
            if crc32fast::hash(&self.buffer[0..8]) != prelude_crc {
                return Err(FrameError("prelude checksum mismatch".into()));
            }
            if self.buffer.len() < total {
                break;
            }
            let frame: Vec<u8> = self.buffer.drain(..total).collect();
            messages.push(decode_frame(&frame)?);
        }
        Ok(messages)
    }

    /// The body ended: an error if a message was cut off.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.buffer.is_empty() {
            Ok(())
        } else {
            Err(FrameError(format!(
                "the response ended inside a message ({} bytes left)",
                self.buffer.len()
            )))
        }
    }
}

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Decodes one whole frame (its length already checked against the prelude).
fn decode_frame(frame: &[u8]) -> Result<EventMessage, FrameError> {
    let total = frame.len();
    let headers_len = be_u32(&frame[4..8]) as usize;
    let message_crc = be_u32(&frame[total - 4..]);
    if crc32fast::hash(&frame[..total - 4]) != message_crc {
        return Err(FrameError("message checksum mismatch".into()));
    }
    let headers_end = 12 + headers_len;
    if headers_end > total - 4 {
        return Err(FrameError(format!("headers length {headers_len}")));
    }
    let headers = decode_headers(&frame[12..headers_end])?;
    Ok(EventMessage {
        headers,
        payload: frame[headers_end..total - 4].to_vec(),
    })
}

fn decode_headers(mut b: &[u8]) -> Result<Vec<(String, HeaderValue)>, FrameError> {
    let short = || FrameError("truncated header".into());
    let mut out = Vec::new();
    while !b.is_empty() {
        let name_len = b[0] as usize;
        let name = b.get(1..1 + name_len).ok_or_else(short)?;
        let name = String::from_utf8_lossy(name).into_owned();
        b = &b[1 + name_len..];
        let (&kind, rest) = b.split_first().ok_or_else(short)?;
        b = rest;
        // Fixed sizes per type: true, false, byte, short, int, long, -, -, timestamp, uuid.
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            other => return Err(FrameError(format!("header value type {other}"))),
        };
        let value = match fixed {
            Some(n) => {
                b = b.get(n..).ok_or_else(short)?;
                HeaderValue::Other
            }
            None => {
                let len_bytes = b.get(0..2).ok_or_else(short)?;
                let len = u16::from_be_bytes([len_bytes[0], len_bytes[1]]) as usize;
                let bytes = b.get(2..2 + len).ok_or_else(short)?;
                let value = if kind == 7 {
                    HeaderValue::String(String::from_utf8_lossy(bytes).into_owned())
                } else {
                    HeaderValue::Other
                };
                b = &b[2 + len..];
                value
            }
        };
        out.push((name, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame built by hand from the format description (string headers only).
    fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut h = Vec::new();
        for (k, v) in headers {
            h.push(k.len() as u8);
            h.extend_from_slice(k.as_bytes());
            h.push(7);
            h.extend_from_slice(&(v.len() as u16).to_be_bytes());
            h.extend_from_slice(v.as_bytes());
        }
        let total = 12 + h.len() + payload.len() + 4;
        let mut f = Vec::new();
        f.extend_from_slice(&(total as u32).to_be_bytes());
        f.extend_from_slice(&(h.len() as u32).to_be_bytes());
        let crc = crc32fast::hash(&f);
        f.extend_from_slice(&crc.to_be_bytes());
        f.extend_from_slice(&h);
        f.extend_from_slice(payload);
        let crc = crc32fast::hash(&f);
        f.extend_from_slice(&crc.to_be_bytes());
        f
    }

    #[test]
    fn messages_split_anywhere_are_reassembled() {
        let mut bytes = frame(
            &[(":event-type", "messageStart")],
            br#"{"role":"assistant"}"#,
        );
        bytes.extend(frame(
            &[(":event-type", "messageStop")],
            br#"{"stopReason":"end_turn"}"#,
        ));
        for cut in 1..bytes.len() {
            let mut p = EventStreamParser::new();
            let mut got = p.feed(&bytes[..cut]).unwrap();
            got.extend(p.feed(&bytes[cut..]).unwrap());
            p.finish().unwrap();
            assert_eq!(got.len(), 2, "cut at {cut}");
            assert_eq!(got[0].header(":event-type"), Some("messageStart"));
            assert_eq!(got[1].payload, br#"{"stopReason":"end_turn"}"#);
        }
    }

    #[test]
    fn the_empty_message_of_the_specification_decodes() {
        // AWS's "empty message" example: no headers, no payload.
        let bytes = [
            0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98,
            0xc8, 0xff,
        ];
        let got = EventStreamParser::new().feed(&bytes).unwrap();
        assert_eq!(
            got,
            vec![EventMessage {
                headers: vec![],
                payload: vec![]
            }]
        );
    }

    #[test]
    fn bad_checksums_and_cut_messages_are_errors() {
        let mut bytes = frame(&[(":event-type", "x")], b"{}");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert!(EventStreamParser::new().feed(&bytes).is_err());
        let good = frame(&[(":event-type", "x")], b"{}");
        let mut p = EventStreamParser::new();
        assert!(p.feed(&good[..good.len() - 3]).unwrap().is_empty());
        assert!(p.finish().is_err());
        let mut prelude = good.clone();
        prelude[9] ^= 1;
        assert!(EventStreamParser::new().feed(&prelude).is_err());
    }
}
