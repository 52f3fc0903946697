//! A cheap reader for one JSONL line of a session file: it checks that the line is
//! well-formed JSON and picks out the handful of fields the session index needs (`type`,
//! `id`, `parentId`, `timestamp`, label and name fields, and the role and timestamp of a
//! `message`), without building any value for the rest.
//!
//! This is what lets a 40 MB session open in milliseconds: long tool outputs are skipped
//! with `memchr` instead of being decoded. It is not a JSON parser for anything else —
//! typed entries are still read with serde, lazily, only when someone asks for them. The
//! structural check is deliberately complete enough to reject what a crash leaves behind
//! (a cut-off line, two lines glued together), which is what `JSON.parse` rejects in pi.

use std::borrow::Cow;

/// serde_json's own nesting limit: a line nested deeper fails typed parsing anyway.
const MAX_DEPTH: u32 = 128;

/// What one line of a session file turned out to be.
// `Head` is returned by value on purpose: boxing it would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum LineScan<'a> {
    /// Empty or only whitespace (pi skips these).
    Blank,
    /// Not valid JSON: a cut-off or corrupted line.
    Malformed,
    /// Valid JSON, but not an object (so not an entry).
    NotObject,
    /// A JSON object; the fields we index.
    Object(Head<'a>),
}

/// The indexed fields of one JSON object line. Strings are borrowed from the line unless
/// they contain escapes. A field holding something other than a string is `None`, as pi's
/// `typeof x === "string"` checks would see it.
#[derive(Debug, Default)]
pub(crate) struct Head<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub id: Option<Cow<'a, str>>,
    pub parent_id: Option<Cow<'a, str>>,
    pub timestamp: Option<Cow<'a, str>>,
    pub target_id: Option<Cow<'a, str>>,
    pub label: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    /// `message.role`.
    pub role: Option<Cow<'a, str>>,
    /// The text of `message.timestamp` when it is a number (parsed on demand: the index
    /// does not need it, listing does).
    pub message_timestamp_text: Option<&'a [u8]>,
    /// Whether `message` has a `content` key (pi's `isMessageWithContent`).
    pub message_has_content: bool,
}

impl Head<'_> {
    /// `message.timestamp` when it is a number.
    pub fn message_timestamp(&self) -> Option<f64> {
        std::str::from_utf8(self.message_timestamp_text?)
            .ok()?
            .parse()
            .ok()
    }
}

/// Whether a raw key is `lit`. Keys are compared byte by byte at a fixed length, which the
/// compiler turns into a couple of integer compares instead of a `memcmp` call per arm.
#[inline(always)]
pub(super) fn key_is<const N: usize>(key: &[u8], lit: &[u8; N]) -> bool {
    key.len() == N && key.iter().zip(lit).all(|(a, b)| a == b)
}

/// Scans one line (without its trailing newline).
pub(crate) fn scan_line(line: &[u8]) -> LineScan<'_> {
    let mut s = Scanner { b: line, i: 0 };
    // A UTF-8 byte order mark is tolerated at the start of a line (editors add them).
    if s.b.starts_with(b"\xEF\xBB\xBF") {
        s.i = 3;
    }
    s.ws();
    let Some(first) = s.peek() else {
        return LineScan::Blank;
    };
    let result = if first == b'{' {
        s.top_object().map(LineScan::Object)
    } else {
        s.skip_value().map(|()| LineScan::NotObject)
    };
    match result {
        Ok(scan) => {
            s.ws();
            if s.i == s.b.len() {
                scan
            } else {
                LineScan::Malformed
            }
        }
        Err(Bad) => LineScan::Malformed,
    }
}

/// The line is not valid JSON.
#[derive(Debug)]
pub(super) struct Bad;

/// The byte-level reader behind [`scan_line`]; `outline` reuses it to skim message lines.
pub(super) struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Scanner { b, i: 0 }
    }

    /// The current byte offset.
    pub(super) fn pos(&self) -> usize {
        self.i
    }

    /// The bytes from the current offset to the end of the line.
    pub(super) fn rest(&self) -> &'a [u8] {
        self.b.get(self.i..).unwrap_or_default()
    }

    /// The bytes from `start` up to the current offset.
    pub(super) fn since(&self, start: usize) -> &'a [u8] {
        self.b.get(start..self.i).unwrap_or_default()
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    pub(super) fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    pub(super) fn expect(&mut self, c: u8) -> Result<(), Bad> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Bad)
        }
    }

    /// Skips a string whose opening quote is at `self.i`; returns the raw bytes between the
    /// quotes and whether they contain escapes.
    #[inline]
    pub(super) fn raw_string(&mut self) -> Result<(&'a [u8], bool), Bad> {
        debug_assert_eq!(self.peek(), Some(b'"'));
        let start = self.i + 1;
        let mut pos = start;
        let mut escaped = false;
        loop {
            let rest = self.b.get(pos..).ok_or(Bad)?;
            match memchr::memchr2(b'"', b'\\', rest) {
                None => return Err(Bad),
                Some(off) => {
                    let at = pos + off;
                    if self.b[at] == b'"' {
                        self.i = at + 1;
                        return Ok((&self.b[start..at], escaped));
                    }
                    escaped = true;
                    pos = at + 2;
                }
            }
        }
    }

    /// Skips a string whose opening quote is at `self.i`. Only quotes are searched for: a
    /// quote is escaped when an odd run of backslashes precedes it. Escaped newlines are
    /// everywhere in tool output, so this is much faster than stopping at each backslash.
    #[inline]
    pub(super) fn skip_string(&mut self) -> Result<(), Bad> {
        let start = self.i + 1;
        let mut pos = start;
        loop {
            let rest = self.b.get(pos..).ok_or(Bad)?;
            let at = pos + memchr::memchr(b'"', rest).ok_or(Bad)?;
            let run = self.b[start..at]
                .iter()
                .rev()
                .take_while(|&&c| c == b'\\')
                .count();
            if run % 2 == 0 {
                self.i = at + 1;
                return Ok(());
            }
            pos = at + 1;
        }
    }

    /// Reads a string value and decodes it (escapes and invalid UTF-8 handled like pi,
    /// which reads files as UTF-8 with replacement characters).
    pub(super) fn string_value(&mut self) -> Result<Cow<'a, str>, Bad> {
        let quote_start = self.i;
        let (raw, escaped) = self.raw_string()?;
        if !escaped {
            return Ok(String::from_utf8_lossy(raw));
        }
        let quoted = &self.b[quote_start..self.i];
        match serde_json::from_slice::<String>(quoted) {
            Ok(s) => Ok(Cow::Owned(s)),
            Err(_) => {
                let lossy = String::from_utf8_lossy(quoted);
                serde_json::from_str::<String>(&lossy)
                    .map(Cow::Owned)
                    .map_err(|_| Bad)
            }
        }
    }

    /// A string if the value is one; any other value is skipped and gives `None`.
    fn optional_string(&mut self) -> Result<Option<Cow<'a, str>>, Bad> {
        self.ws();
        if self.peek() == Some(b'"') {
            self.string_value().map(Some)
        } else {
            self.skip_value().map(|()| None)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Bad> {
        if self.b.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            Ok(())
        } else {
            Err(Bad)
        }
    }

    /// Skips a number and returns its text.
    pub(super) fn number(&mut self) -> Result<&'a [u8], Bad> {
        let start = self.i;
        let mut digits = false;
        while let Some(c) = self.peek() {
            match c {
                b'0'..=b'9' => digits = true,
                b'-' | b'+' | b'.' | b'e' | b'E' => {}
                _ => break,
            }
            self.i += 1;
        }
        if digits {
            Ok(&self.b[start..self.i])
        } else {
            Err(Bad)
        }
    }

    /// Skips one complete JSON value of any shape, checking its structure. Iterative, with
    /// one bit per nesting level on a stack (1 = object, 0 = array).
    pub(super) fn skip_value(&mut self) -> Result<(), Bad> {
        let mut stack: u128 = 0;
        let mut depth: u32 = 0;
        'value: loop {
            self.ws();
            match self.peek().ok_or(Bad)? {
                b'"' => self.skip_string()?,
                b'{' => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                    } else {
                        if depth >= MAX_DEPTH {
                            return Err(Bad);
                        }
                        stack = (stack << 1) | 1;
                        depth += 1;
                        self.key_and_colon()?;
                        continue 'value;
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                    } else {
                        if depth >= MAX_DEPTH {
                            return Err(Bad);
                        }
                        stack <<= 1;
                        depth += 1;
                        continue 'value;
                    }
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                }
                _ => return Err(Bad),
            }
            // A value is complete: close as many containers as end here.
            loop {
                if depth == 0 {
                    return Ok(());
                }
                self.ws();
                let in_object = stack & 1 == 1;
                let c = self.peek().ok_or(Bad)?;
                self.i += 1;
                match c {
                    b',' => {
                        if in_object {
                            self.key_and_colon()?;
                        }
                        continue 'value;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return Err(Bad),
                }
                stack >>= 1;
                depth -= 1;
            }
        }
    }

    fn key_and_colon(&mut self) -> Result<(), Bad> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(Bad);
        }
        self.skip_string()?;
        self.expect(b':')
    }

    /// Walks the members of an object whose `{` is at `self.i`, calling `member` with each
    /// raw key; `member` must consume the value.
    fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &[u8]) -> Result<(), Bad>,
    ) -> Result<(), Bad> {
        self.expect(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(Bad);
            }
            let (key, _) = self.raw_string()?;
            self.expect(b':')?;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Bad),
            }
        }
    }

    fn top_object(&mut self) -> Result<Head<'a>, Bad> {
        let mut head = Head::default();
        self.members(|s, key| {
            if key_is(key, b"type") {
                head.kind = s.optional_string()?;
            } else if key_is(key, b"id") {
                head.id = s.optional_string()?;
            } else if key_is(key, b"parentId") {
                head.parent_id = s.optional_string()?;
            } else if key_is(key, b"timestamp") {
                head.timestamp = s.optional_string()?;
            } else if key_is(key, b"message") && s.peek() == Some(b'{') {
                s.message_object(&mut head)?;
            } else if key_is(key, b"targetId") {
                head.target_id = s.optional_string()?;
            } else if key_is(key, b"label") {
                head.label = s.optional_string()?;
            } else if key_is(key, b"name") {
                head.name = s.optional_string()?;
            } else {
                s.skip_value()?;
            }
            Ok(())
        })?;
        Ok(head)
    }

    fn message_object(&mut self, head: &mut Head<'a>) -> Result<(), Bad> {
        self.members(|s, key| {
            if key_is(key, b"role") {
                head.role = s.optional_string()?;
            } else if key_is(key, b"content") {
                head.message_has_content = true;
                s.skip_value()?;
            } else if key_is(key, b"timestamp") && matches!(s.peek(), Some(b'-' | b'0'..=b'9')) {
                head.message_timestamp_text = Some(s.number()?);
            } else {
                s.skip_value()?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(line: &str) -> Head<'_> {
        match scan_line(line.as_bytes()) {
            LineScan::Object(h) => h,
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn reads_indexed_fields_in_any_order_and_skips_the_rest() {
        let h = head(
            r#"{"type":"custom","customType":"x","data":{"a":[1,2,{"b":"}"}]},"id":"ab12cd34","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#,
        );
        assert_eq!(h.kind.as_deref(), Some("custom"));
        assert_eq!(h.id.as_deref(), Some("ab12cd34"));
        assert_eq!(h.parent_id, None);
        assert_eq!(h.timestamp.as_deref(), Some("2026-01-01T00:00:00.000Z"));
    }

    #[test]
    fn reads_role_and_numeric_timestamp_of_a_message() {
        let h = head(
            r#"{"type":"message","id":"a","parentId":"b","message":{"role":"assistant","content":[{"type":"text","text":"a \"quoted\" \\ text"}],"timestamp":1795318761635}}"#,
        );
        assert_eq!(h.role.as_deref(), Some("assistant"));
        assert_eq!(h.message_timestamp(), Some(1795318761635.0));
        assert!(h.message_has_content);
        assert_eq!(h.parent_id.as_deref(), Some("b"));
    }

    #[test]
    fn decodes_escaped_strings() {
        let h = head(r#"{"type":"session_info","name":"say \"hi\" \u00e9","id":"x"}"#);
        assert_eq!(h.name.as_deref(), Some("say \"hi\" é"));
    }

    #[test]
    fn rejects_what_a_crash_leaves_behind() {
        let cases = [
            r#"{"type":"message","id":"a","message":{"role":"user","content":"cut of"#,
            r#"{"type":"message","id":"a"}{"type":"message","id":"b"}"#,
            r#"{"type":"mess{"type":"message","id":"b","parentId":null}"#,
            r#"{"type":"message","id":"a",}"#,
            r#"{"type":"message" "id":"a"}"#,
            r#"{"a":[1,2}"#,
            r#"{"a":tru}"#,
            "{",
        ];
        for case in cases {
            assert!(
                matches!(scan_line(case.as_bytes()), LineScan::Malformed),
                "{case}"
            );
        }
    }

    #[test]
    fn classifies_blank_and_non_object_lines() {
        assert!(matches!(scan_line(b"   \r"), LineScan::Blank));
        assert!(matches!(scan_line(b"[1, 2]"), LineScan::NotObject));
        assert!(matches!(scan_line(b"42"), LineScan::NotObject));
        assert!(matches!(scan_line(b" {} \r"), LineScan::Object(_)));
    }

    #[test]
    fn agrees_with_serde_json_on_every_line_of_the_fixtures() {
        use serde_json::Value;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    files.push(path);
                }
            }
        }
        let mut lines = 0;
        for file in files {
            let text = std::fs::read(&file).unwrap();
            for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                lines += 1;
                let value: Value = serde_json::from_slice(line).unwrap();
                let head = match scan_line(line) {
                    LineScan::Object(head) => head,
                    other => panic!("{}: {other:?}", file.display()),
                };
                let text =
                    |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
                let message = value.get("message").cloned().unwrap_or(Value::Null);
                assert_eq!(
                    head.kind.as_deref().map(str::to_string),
                    text(&value, "type")
                );
                assert_eq!(head.id.as_deref().map(str::to_string), text(&value, "id"));
                assert_eq!(
                    head.parent_id.as_deref().map(str::to_string),
                    text(&value, "parentId")
                );
                assert_eq!(
                    head.timestamp.as_deref().map(str::to_string),
                    text(&value, "timestamp")
                );
                assert_eq!(
                    head.label.as_deref().map(str::to_string),
                    text(&value, "label")
                );
                assert_eq!(
                    head.name.as_deref().map(str::to_string),
                    text(&value, "name")
                );
                assert_eq!(
                    head.role.as_deref().map(str::to_string),
                    text(&message, "role")
                );
                assert_eq!(
                    head.message_timestamp(),
                    message.get("timestamp").and_then(Value::as_f64)
                );
                assert_eq!(head.message_has_content, message.get("content").is_some());
            }
        }
        assert!(lines > 4000, "{lines}");
    }

    #[test]
    fn agrees_with_serde_json_on_random_values() {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\{}\\[\\], é\n]{0,12}".prop_map(serde_json::Value::from),
        ];
        let value = leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        });
        proptest!(|(v in value, cut in 1usize..64)| {
            let text = serde_json::to_string(&v).unwrap();
            prop_assert!(!matches!(scan_line(text.as_bytes()), LineScan::Malformed));
            // Any strict prefix of a JSON text is invalid, except a number cut short.
            if cut < text.len() && !matches!(v, serde_json::Value::Number(_)) {
                let prefix = &text.as_bytes()[..cut];
                let serde_ok = serde_json::from_slice::<serde_json::Value>(prefix).is_ok();
                let scan_ok = !matches!(scan_line(prefix), LineScan::Malformed);
                prop_assert_eq!(serde_ok, scan_ok, "{:?}", String::from_utf8_lossy(prefix));
            }
        });
    }
}
