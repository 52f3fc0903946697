//! The JSON reading the outline skimmer is built from: walking objects and arrays with an
//! early stop, and decoding just the start of a string value the way JavaScript sees it
//! (escapes resolved, cut in UTF-16 code units).

use crate::ai::js::is_js_whitespace;
use crate::session::scan::{Bad, Scanner};

/// Whether to keep reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Go,
    Stop,
}

/// The raw bytes between the quotes of the string at the scanner, escapes undecoded.
pub(super) fn raw_str<'a>(s: &mut Scanner<'a>) -> Result<&'a [u8], Bad> {
    let start = s.pos();
    s.skip_string()?;
    let quoted = s.since(start);
    Ok(quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default())
}

/// Walks the members of the object at the scanner; `member` consumes each value. Stops
/// (leaving the scanner inside the object) when `member` says so.
pub(super) fn members<'a>(
    s: &mut Scanner<'a>,
    mut member: impl FnMut(&mut Scanner<'a>, &'a [u8]) -> Result<Flow, Bad>,
) -> Result<Flow, Bad> {
    s.expect(b'{')?;
    s.ws();
    if s.peek() == Some(b'}') {
        s.expect(b'}')?;
        return Ok(Flow::Go);
    }
    loop {
        s.ws();
        if s.peek() != Some(b'"') {
            return Err(Bad);
        }
        let (key, _) = s.raw_string()?;
        s.expect(b':')?;
        s.ws();
        if member(s, key)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
        s.ws();
        match s.peek() {
            Some(b',') => s.expect(b',')?,
            Some(b'}') => {
                s.expect(b'}')?;
                return Ok(Flow::Go);
            }
            _ => return Err(Bad),
        }
    }
}

/// Walks the elements of the array at the scanner, like [`members`].
pub(super) fn elements<'a>(
    s: &mut Scanner<'a>,
    mut element: impl FnMut(&mut Scanner<'a>) -> Result<Flow, Bad>,
) -> Result<Flow, Bad> {
    s.expect(b'[')?;
    s.ws();
    if s.peek() == Some(b']') {
        s.expect(b']')?;
        return Ok(Flow::Go);
    }
    loop {
        s.ws();
        if element(s)? == Flow::Stop {
            return Ok(Flow::Stop);
        }
        s.ws();
        match s.peek() {
            Some(b',') => s.expect(b',')?,
            Some(b']') => {
                s.expect(b']')?;
                return Ok(Flow::Go);
            }
            _ => return Err(Bad),
        }
    }
}

/// Text cut at a number of UTF-16 code units, like JavaScript's `slice(0, cap)` (a
/// character that would be split is left out).
pub(super) struct Capped {
    pub text: String,
    units: usize,
    cap: usize,
    /// Nothing more can be added.
    pub full: bool,
    /// Something was left out.
    pub overflowed: bool,
}

impl Capped {
    pub fn new(cap: usize) -> Self {
        Capped {
            text: String::new(),
            units: 0,
            cap,
            full: cap == 0,
            overflowed: false,
        }
    }

    /// Adds one character; `false` (and nothing added) once the cap is reached.
    fn push(&mut self, c: char) -> bool {
        let units = c.len_utf16();
        if self.full || self.units + units > self.cap {
            self.full = true;
            self.overflowed = true;
            return false;
        }
        self.units += units;
        self.text.push(c);
        self.full = self.units >= self.cap;
        true
    }

    pub fn extend(&mut self, chars: impl Iterator<Item = char>) {
        for c in chars {
            if !self.push(c) {
                return;
            }
        }
    }

    /// Adds the characters of raw JSON string bytes (up to their end or an unescaped
    /// quote). Stretches without escapes, most of any text, are copied in one go.
    pub fn extend_json(&mut self, raw: &[u8]) {
        if self.text.capacity() == 0 {
            self.text.reserve(raw.len().min(self.cap));
        }
        let mut chars = JsonChars::new(raw);
        loop {
            let rest = raw.get(chars.i..).unwrap_or_default();
            // A UTF-16 unit takes at least one byte, so `room` bytes never overflow.
            let window = &rest[..rest.len().min(self.cap - self.units)];
            let plain = &window[..memchr::memchr2(b'"', b'\\', window).unwrap_or(window.len())];
            let valid = match std::str::from_utf8(plain) {
                Ok(text) => text,
                Err(e) => std::str::from_utf8(&plain[..e.valid_up_to()]).unwrap_or_default(),
            };
            if !valid.is_empty() {
                self.units += if valid.is_ascii() {
                    valid.len()
                } else {
                    valid.chars().map(char::len_utf16).sum()
                };
                self.text.push_str(valid);
                self.full = self.units >= self.cap;
                chars.i += valid.len();
            }
            // An escape, the closing quote, a character cut by the window or bad UTF-8.
            match chars.next() {
                Some(c) => {
                    if !self.push(c) {
                        return;
                    }
                }
                None => return,
            }
        }
    }
}

/// Whether a raw JSON string holds anything but whitespace (JavaScript's
/// `s.trim().length > 0`).
pub(super) fn has_non_space(raw: &[u8]) -> bool {
    JsonChars::new(raw).any(|c| !is_js_whitespace(c))
}

/// The characters of a raw JSON string (between its quotes), decoded lazily: escapes are
/// resolved, invalid UTF-8 and lone surrogates become U+FFFD.
pub(super) struct JsonChars<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> JsonChars<'a> {
    fn new(b: &'a [u8]) -> Self {
        JsonChars { b, i: 0 }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.b.get(self.i..self.i + 4)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        let value = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| u32::from_str_radix(d, 16).ok())?;
        self.i += 4;
        Some(value)
    }

    /// After `\u`.
    fn unicode_escape(&mut self) -> char {
        let Some(high) = self.hex4() else {
            return char::REPLACEMENT_CHARACTER;
        };
        if (0xD800..0xDC00).contains(&high) {
            if self.b.get(self.i..self.i + 2) == Some(b"\\u") {
                let before = self.i;
                self.i += 2;
                if let Some(low) = self.hex4()
                    && (0xDC00..0xE000).contains(&low)
                {
                    let c = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    return char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
                }
                self.i = before;
            }
            return char::REPLACEMENT_CHARACTER;
        }
        char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

impl Iterator for JsonChars<'_> {
    type Item = char;

    /// Ends at the end of the bytes or at an unescaped quote (the end of the string when
    /// reading straight from a line).
    fn next(&mut self) -> Option<char> {
        let first = *self.b.get(self.i)?;
        if first == b'"' {
            return None;
        }
        if first == b'\\' {
            let escape = *self.b.get(self.i + 1)?;
            self.i += 2;
            return Some(match escape {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'u' => self.unicode_escape(),
                other => char::from(other),
            });
        }
        if first.is_ascii() {
            self.i += 1;
            return Some(char::from(first));
        }
        let width = match first {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        let decoded = self
            .b
            .get(self.i..self.i + width)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .and_then(|s| s.chars().next());
        match decoded {
            Some(c) => {
                self.i += width;
                Some(c)
            }
            None => {
                self.i += 1;
                Some(char::REPLACEMENT_CHARACTER)
            }
        }
    }
}
