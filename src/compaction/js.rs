//! JavaScript semantics that pi's token estimates and serialized conversation depend on.
//!
//! pi writes tool arguments with `JSON.stringify` and lists object keys in JavaScript's
//! own order (integer-like keys first, ascending); it measures the result with
//! `String.prototype.length` (UTF-16 code units, [`crate::ai::js`]). Token estimates, cut
//! points and the serialized conversation must match pi to the character, so these few
//! rules are reproduced here.

use serde_json::{Map, Value};

use crate::ai::js::{json_number_to_string, utf16_len};

/// Compares two strings like JavaScript's default `Array.prototype.sort` (by UTF-16 code
/// units), which orders some characters differently from Rust's byte order.
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Whether JavaScript treats `key` as an array index (such keys come first, in numeric
/// order, in `Object.entries` and `JSON.stringify`).
fn is_array_index(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return false;
    }
    key.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// The entries of a JSON object in JavaScript's enumeration order.
pub fn js_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    if entries.iter().any(|(k, _)| is_array_index(k)) {
        // Stable sort: index keys first (numerically), the rest keep insertion order.
        entries.sort_by_key(|(k, _)| {
            if is_array_index(k) {
                (0, k.parse::<u64>().unwrap_or(0))
            } else {
                (1, 0)
            }
        });
    }
    entries
}

/// `JSON.stringify(value)`.
pub fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// `JSON.stringify(value)`, appended to `out`.
pub fn write_stringified(value: &Value, out: &mut String) {
    write_value(value, out);
}

/// `JSON.stringify(value).length`, computed without building the string.
pub fn stringify_len_utf16(value: &Value) -> usize {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => json_number_to_string(n).len(),
        Value::String(s) => quoted_len_utf16(s),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(stringify_len_utf16).sum::<usize>()
        }
        Value::Object(map) => {
            2 + map.len().saturating_sub(1)
                + map
                    .iter()
                    .map(|(k, v)| quoted_len_utf16(k) + 1 + stringify_len_utf16(v))
                    .sum::<usize>()
        }
    }
}

fn quoted_len_utf16(s: &str) -> usize {
    let extra: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | 0x08 | 0x09 | 0x0A | 0x0C | 0x0D => 1,
            0x00..=0x1F => 5,
            _ => 0,
        })
        .sum();
    2 + utf16_len(s) + extra
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number_to_string(n)),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in js_entries(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(k, out);
                out.push(':');
                write_value(v, out);
            }
            out.push('}');
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stringify_matches_javascript() {
        let v = json!({"b": 1, "10": [true, null, "x\"\n\u{1}"], "2": 1.5, "a": {"z": -0.000001}});
        assert_eq!(
            stringify(&v),
            r#"{"2":1.5,"10":[true,null,"x\"\n\u0001"],"b":1,"a":{"z":-0.000001}}"#
        );
        assert_eq!(stringify_len_utf16(&v), utf16_len(&stringify(&v)));
        let astral = json!({"k": "😀\t", "01": 0});
        assert_eq!(stringify(&astral), r#"{"k":"😀\t","01":0}"#);
        assert_eq!(stringify_len_utf16(&astral), utf16_len(&stringify(&astral)));
    }

    #[test]
    fn sort_order_is_by_utf16_units() {
        // U+FF5E comes before U+1F600 by code point but after it by UTF-16 units.
        assert_eq!(cmp_utf16("\u{FF5E}", "😀"), std::cmp::Ordering::Greater);
        assert_eq!(cmp_utf16("a", "b"), std::cmp::Ordering::Less);
    }
}
