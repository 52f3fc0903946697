//! JavaScript's number and JSON conventions, where tool texts depend on them: pi prints
//! numbers with `String(n)` / `toFixed`, parses numeric strings with `Number(s)`, trims with
//! JavaScript's whitespace set and echoes arguments with `JSON.stringify(value, null, 2)`.
//! Matching these keeps the texts a model reads identical to pi's. The rules other
//! layers share (`String(n)`, `toFixed`, the whitespace set) live in [`crate::ai::js`] and
//! are re-exported here for the tools.
//!
//! This is formatting only; nothing here validates or interprets tool arguments.

use serde_json::Value;

pub use crate::ai::js::{
    is_js_whitespace, js_number_to_string, js_to_fixed, json_number_to_string,
};

/// `String.prototype.trim`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// `String.prototype.trimEnd`.
pub fn js_trim_end(text: &str) -> &str {
    text.trim_end_matches(is_js_whitespace)
}

/// `Number(text)` for a string: surrounding whitespace is ignored, an empty string is 0,
/// `0x`/`0o`/`0b` prefixes and `Infinity` are accepted. `None` stands for `NaN`.
pub fn js_string_to_number(text: &str) -> Option<f64> {
    let s = js_trim(text);
    if s.is_empty() {
        return Some(0.0);
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = s.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            let mut value = 0f64;
            for c in digits.chars() {
                value = value * f64::from(radix) + f64::from(c.to_digit(radix)?);
            }
            return Some(value);
        }
    }
    let (sign, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    if unsigned == "Infinity" {
        return Some(sign * f64::INFINITY);
    }
    if !is_decimal_literal(unsigned) {
        return None;
    }
    unsigned.parse::<f64>().ok().map(|v| sign * v)
}

/// `digits[.digits][e[+-]digits]` or `.digits[…]`: the only forms `Number()` accepts
/// besides the prefixed ones (Rust's parser would also take `inf` or `nan`).
fn is_decimal_literal(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut i = 0;
    let int_digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if exp_digits == 0 {
            return false;
        }
        i += exp_digits;
    }
    i == bytes.len()
}

/// A JSON number for a computed value: integral values become JSON integers, so the
/// tool reading them sees `5`, not `5.0`. `None` for values JSON cannot hold.
pub fn number_value(value: f64) -> Option<Value> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE {
        Some(Value::from(value as i64))
    } else {
        serde_json::Number::from_f64(value).map(Value::Number)
    }
}

/// `JSON.stringify(value, null, 2)`.
pub fn json_stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number_to_string(n)),
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                write_pretty(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline_indent(depth + 1, out);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push_str(": ");
                write_pretty(item, depth + 1, out);
            }
            newline_indent(depth, out);
            out.push('}');
        }
    }
}

fn newline_indent(depth: usize, out: &mut String) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn string_to_number_follows_js_number() {
        let cases = [
            ("5", Some(5.0)),
            (" 5 ", Some(5.0)),
            ("", Some(0.0)),
            ("1e3", Some(1000.0)),
            ("0x10", Some(16.0)),
            ("-2.5", Some(-2.5)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("abc", None),
            ("inf", None),
            ("1e", None),
            ("-0x10", None),
        ];
        for (text, expected) in cases {
            assert_eq!(js_string_to_number(text), expected, "{text:?}");
        }
    }

    #[test]
    fn pretty_json_matches_json_stringify() {
        let value = json!({"path": "a", "n": 1.0, "edits": [{"oldText": "x"}], "e": {}, "l": []});
        insta::assert_snapshot!(json_stringify_pretty(&value), @r#"
        {
          "path": "a",
          "n": 1,
          "edits": [
            {
              "oldText": "x"
            }
          ],
          "e": {},
          "l": []
        }
        "#);
    }
}
