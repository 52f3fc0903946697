//! Lenient parsing of JSON that is still arriving: tool-call arguments while they stream.
//!
//! [`parse_streaming_json`] never fails. Complete JSON parses normally; JSON with the
//! string mistakes models make (raw control characters, invalid escapes) is repaired
//! first, as pi does; an incomplete document is closed at the point it stops, so
//! `{"path":"a.t` reads as `{"path":"a.t"}` and a UI can show arguments as they grow.
//! A key whose value has not started yet is left out. Malformed input (not merely
//! incomplete) yields an empty object, like pi's `parseStreamingJson`.
//!
//! Not a general JSON parser: use `serde_json` for anything that is supposed to be whole.

use serde_json::{Map, Number, Value};

/// Parses possibly incomplete JSON; returns `{}` when nothing sensible can be read.
pub fn parse_streaming_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let repaired = repair_json(text);
    if repaired != text
        && let Ok(v) = serde_json::from_str::<Value>(&repaired)
    {
        return v;
    }
    // Like pi: the incomplete original first, then its repaired form.
    lenient(text)
        .or_else(|| lenient(&repaired))
        .unwrap_or_else(|| Value::Object(Map::new()))
}

fn lenient(text: &str) -> Option<Value> {
    let mut p = Partial {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    p.value().ok().flatten()
}

/// Escapes raw control characters inside strings and doubles backslashes that start an
/// invalid escape (models emit Windows paths like `"C:\dir"`).
pub fn repair_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 8);
    let mut in_string = false;
    let mut chars = json.char_indices().peekable();
    while let Some((idx, c)) = chars.next() {
        if !in_string {
            out.push(c);
            if c == '"' {
                in_string = true;
            }
            continue;
        }
        match c {
            '"' => {
                out.push(c);
                in_string = false;
            }
            '\\' => match chars.peek().map(|&(_, n)| n) {
                None => out.push_str("\\\\"),
                Some('u') => {
                    let digits = json.get(idx + 2..idx + 6).unwrap_or("");
                    if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                        out.push_str("\\u");
                        out.push_str(digits);
                        chars.next();
                        for _ in 0..4 {
                            chars.next();
                        }
                    } else {
                        out.push_str("\\\\");
                    }
                }
                Some(n @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                    out.push('\\');
                    out.push(n);
                    chars.next();
                }
                Some(_) => out.push_str("\\\\"),
            },
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Marker for malformed input.
struct Malformed;

struct Partial<'a> {
    s: &'a [u8],
    i: usize,
}

impl Partial<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    /// `Ok(None)`: the input ended before the value started to mean anything.
    fn value(&mut self) -> Result<Option<Value>, Malformed> {
        let Some(&b) = self.s.get(self.i) else {
            return Ok(None);
        };
        match b {
            b'{' => self.object().map(Some),
            b'[' => self.array().map(Some),
            b'"' => Ok(Some(Value::String(self.string()?.0))),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => Ok(self.number()),
            _ => Err(Malformed),
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Option<Value>, Malformed> {
        let rest = &self.s[self.i..];
        let n = rest.len().min(word.len());
        if rest[..n] != word[..n] {
            return Err(Malformed);
        }
        self.i += n;
        Ok(Some(value))
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.s.get(self.i) {
            self.i += 1;
        }
        let mut text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        // Trim a dangling sign, dot or exponent marker of a number cut short.
        while !text.is_empty() && !text.ends_with(|c: char| c.is_ascii_digit()) {
            text = &text[..text.len() - 1];
        }
        if let Ok(i) = text.parse::<i64>() {
            return Some(Value::Number(i.into()));
        }
        text.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
    }

    /// Returns the decoded string and whether its closing quote was seen.
    fn string(&mut self) -> Result<(String, bool), Malformed> {
        self.i += 1; // opening quote
        let mut out = Vec::new();
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'"' => {
                    self.i += 1;
                    return Ok((String::from_utf8_lossy(&out).into_owned(), true));
                }
                b'\\' => {
                    let Some(&e) = self.s.get(self.i + 1) else {
                        self.i = self.s.len();
                        break;
                    };
                    let simple = match e {
                        b'"' => Some(b'"'),
                        b'\\' => Some(b'\\'),
                        b'/' => Some(b'/'),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        _ => None,
                    };
                    if let Some(c) = simple {
                        out.push(c);
                        self.i += 2;
                    } else if e == b'u' {
                        let Some(hex) = self.s.get(self.i + 2..self.i + 6) else {
                            self.i = self.s.len();
                            break;
                        };
                        let code = std::str::from_utf8(hex)
                            .ok()
                            .and_then(|h| u32::from_str_radix(h, 16).ok())
                            .ok_or(Malformed)?;
                        self.i += 6;
                        let ch = if (0xD800..0xDC00).contains(&code) {
                            self.low_surrogate(code)
                        } else {
                            char::from_u32(code)
                        };
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(
                            ch.unwrap_or('\u{FFFD}').encode_utf8(&mut buf).as_bytes(),
                        );
                    } else {
                        return Err(Malformed);
                    }
                }
                _ => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
        // Input ended inside the string; drop a UTF-8 sequence cut in half.
        let text = match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
        };
        Ok((text, false))
    }

    fn low_surrogate(&mut self, high: u32) -> Option<char> {
        let rest = self.s.get(self.i..self.i + 6)?;
        if rest[0] != b'\\' || rest[1] != b'u' {
            return None;
        }
        let low = u32::from_str_radix(std::str::from_utf8(&rest[2..]).ok()?, 16).ok()?;
        if !(0xDC00..0xE000).contains(&low) {
            return None;
        }
        self.i += 6;
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    fn array(&mut self) -> Result<Value, Malformed> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            match self.s.get(self.i) {
                None => return Ok(Value::Array(items)),
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                Some(b',') if !items.is_empty() => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            match self.value()? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Malformed> {
        self.i += 1;
        let mut map = Map::new();
        loop {
            self.ws();
            match self.s.get(self.i) {
                None => return Ok(Value::Object(map)),
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                Some(b',') if !map.is_empty() => {
                    self.i += 1;
                    continue;
                }
                Some(b'"') => {}
                Some(_) => return Err(Malformed),
            }
            let (key, closed) = self.string()?;
            if !closed {
                return Ok(Value::Object(map));
            }
            self.ws();
            match self.s.get(self.i) {
                None => return Ok(Value::Object(map)),
                Some(b':') => self.i += 1,
                Some(_) => return Err(Malformed),
            }
            self.ws();
            if self.at_end() {
                return Ok(Value::Object(map));
            }
            if let Some(v) = self.value()? {
                map.insert(key, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn complete_json_parses_unchanged() {
        assert_eq!(
            parse_streaming_json(r#"{"a":[1,2,{"b":null}]}"#),
            json!({"a":[1,2,{"b":null}]})
        );
    }

    #[test]
    fn unterminated_string_value_is_closed() {
        assert_eq!(
            parse_streaming_json(r#"{"path":"a.t"#),
            json!({"path":"a.t"})
        );
    }

    #[test]
    fn key_without_value_is_left_out() {
        assert_eq!(
            parse_streaming_json(r#"{"path":"a.txt","off"#),
            json!({"path":"a.txt"})
        );
        assert_eq!(
            parse_streaming_json(r#"{"path":"a.txt","offset":"#),
            json!({"path":"a.txt"})
        );
    }

    #[test]
    fn nested_arrays_and_objects_cut_short_are_closed() {
        assert_eq!(
            parse_streaming_json(r#"{"edits":[{"oldText":"x","newText":"y"},{"oldText":"hel"#),
            json!({"edits":[{"oldText":"x","newText":"y"},{"oldText":"hel"}]})
        );
    }

    #[test]
    fn partial_numbers_and_literals_take_their_readable_prefix() {
        assert_eq!(parse_streaming_json(r#"{"n":12."#), json!({"n":12}));
        assert_eq!(parse_streaming_json(r#"{"b":tr"#), json!({"b":true}));
        assert_eq!(parse_streaming_json(r#"[-"#), json!([]));
    }

    #[test]
    fn cut_escape_sequences_are_dropped() {
        assert_eq!(parse_streaming_json(r#"{"s":"a\"#), json!({"s":"a"}));
        assert_eq!(parse_streaming_json(r#"{"s":"a\u00"#), json!({"s":"a"}));
        assert_eq!(parse_streaming_json(r#"{"s":"\u00e9"#), json!({"s":"é"}));
    }

    #[test]
    fn raw_control_characters_and_bad_escapes_are_repaired() {
        assert_eq!(
            parse_streaming_json("{\"c\":\"line1\nline2\",\"p\":\"C:\\dir\"}"),
            json!({"c":"line1\nline2","p":"C:\\dir"})
        );
    }

    #[test]
    fn malformed_input_and_empty_input_give_an_empty_object() {
        assert_eq!(parse_streaming_json(""), json!({}));
        assert_eq!(parse_streaming_json("{x}"), json!({}));
        assert_eq!(parse_streaming_json("  "), json!({}));
    }
}
