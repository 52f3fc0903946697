//! Scalars and flow collections of the frontmatter parser: quoted strings with escapes,
//! plain scalars typed by the YAML 1.2 core schema, and `[…]` / `{…}` collections.

use serde_json::{Map, Number, Value};

use super::error::{FrontmatterError, err};

pub(super) const UNCLOSED: &str = "unclosed";
pub(super) const FLOW_UNCLOSED: &str = "flow collection is not closed with `]` or `}`";

/// A quoted scalar at the start of `text`; returns it and the text after the closing quote.
pub(super) fn quoted(text: &str, number: usize) -> Result<(String, &str), FrontmatterError> {
    let mut chars = text.char_indices();
    let Some((_, q)) = chars.next() else {
        return err(number, "expected a quoted string");
    };
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        if c == q {
            if q == '\'' && text[i + 1..].starts_with('\'') {
                out.push('\'');
                chars.next();
                continue;
            }
            return Ok((out, &text[i + 1..]));
        }
        if q == '"' && c == '\\' {
            let Some((_, e)) = chars.next() else {
                return err(number, UNCLOSED);
            };
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '/' => out.push('/'),
                ' ' => out.push(' '),
                'u' | 'x' | 'U' => {
                    let len = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = (0..len).filter_map(|_| chars.next().map(|x| x.1)).collect();
                    let code = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32);
                    match code {
                        Some(ch) => out.push(ch),
                        None => return err(number, format!("invalid escape `\\{e}{hex}`")),
                    }
                }
                other => return err(number, format!("invalid escape `\\{other}`")),
            }
            continue;
        }
        out.push(c);
    }
    err(number, UNCLOSED)
}

/// A plain (unquoted) or quoted scalar with the YAML 1.2 core schema.
pub(super) fn scalar(text: &str, number: usize) -> Result<Value, FrontmatterError> {
    let text = text.trim();
    if text.starts_with('"') || text.starts_with('\'') {
        let (value, rest) = quoted(text, number).map_err(|e| {
            if e.message == UNCLOSED {
                FrontmatterError {
                    line: number,
                    message: "unterminated quoted string".into(),
                }
            } else {
                e
            }
        })?;
        if !rest.trim().is_empty() {
            return err(number, "unexpected text after a quoted string");
        }
        return Ok(Value::String(value));
    }
    if text.starts_with('[') || text.starts_with('{') {
        return flow(text, number).map_err(|e| {
            if e.message == UNCLOSED {
                FrontmatterError {
                    line: number,
                    message: FLOW_UNCLOSED.into(),
                }
            } else {
                e
            }
        });
    }
    if text.starts_with(['&', '*', '!', '@', '`', '%']) {
        return err(number, format!("`{text}` cannot start a plain value"));
    }
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => number_value(text).unwrap_or_else(|| Value::String(text.to_string())),
    })
}

fn number_value(text: &str) -> Option<Value> {
    let is_int = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if is_int(text)
        && let Ok(i) = text.parse::<i64>()
    {
        return Some(Value::Number(i.into()));
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16)
            .ok()
            .map(|i| Value::Number(i.into()));
    }
    let looks_float = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && text.bytes().any(|b| b.is_ascii_digit());
    if looks_float {
        return text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number);
    }
    None
}

/// A flow collection (`[...]` or `{...}`) filling all of `text`.
pub(super) fn flow(text: &str, number: usize) -> Result<Value, FrontmatterError> {
    let mut p = FlowParser {
        text,
        pos: 0,
        number,
    };
    let value = p.value()?;
    p.skip_ws();
    if p.pos < text.len() {
        return err(number, "unexpected text after a flow collection");
    }
    Ok(value)
}

struct FlowParser<'a> {
    text: &'a str,
    pos: usize,
    number: usize,
}

impl FlowParser<'_> {
    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn value(&mut self) -> Result<Value, FrontmatterError> {
        self.skip_ws();
        match self.peek() {
            None => err(self.number, UNCLOSED),
            Some('[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return err(self.number, UNCLOSED),
                        Some(']') => {
                            self.pos += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => {}
                    }
                    items.push(self.value()?);
                    self.skip_ws();
                    match self.peek() {
                        Some(',') => self.pos += 1,
                        Some(']') => {}
                        None => return err(self.number, UNCLOSED),
                        Some(c) => return err(self.number, format!("unexpected `{c}` in a list")),
                    }
                }
            }
            Some('{') => {
                self.pos += 1;
                let mut map = Map::new();
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return err(self.number, UNCLOSED),
                        Some('}') => {
                            self.pos += 1;
                            return Ok(Value::Object(map));
                        }
                        _ => {}
                    }
                    let key = match self.value()? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    self.skip_ws();
                    let value = if self.peek() == Some(':') {
                        self.pos += 1;
                        self.value()?
                    } else {
                        Value::Null
                    };
                    map.insert(key, value);
                    self.skip_ws();
                    match self.peek() {
                        Some(',') => self.pos += 1,
                        Some('}') => {}
                        None => return err(self.number, UNCLOSED),
                        Some(c) => {
                            return err(self.number, format!("unexpected `{c}` in a mapping"));
                        }
                    }
                }
            }
            Some('"') | Some('\'') => {
                let (value, rest) = quoted(&self.text[self.pos..], self.number)?;
                self.pos = self.text.len() - rest.len();
                Ok(Value::String(value))
            }
            Some(_) => {
                let rest = &self.text[self.pos..];
                let end = rest
                    .char_indices()
                    .find(|&(i, c)| {
                        let key_colon = c == ':'
                            && (i + 1 == rest.len()
                                || rest[i + 1..].starts_with([' ', ',', ']', '}']));
                        matches!(c, ',' | ']' | '}') || key_colon
                    })
                    .map_or(rest.len(), |(i, _)| i);
                self.pos += end;
                scalar(&rest[..end], self.number)
            }
        }
    }
}
