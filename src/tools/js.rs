//! JavaScript's number and JSON conventions, where tool texts depend on them: pi prints
//! numbers with `String(n)` / `toFixed`, parses numeric strings with `Number(s)`, trims with
//! JavaScript's whitespace set and echoes arguments with `JSON.stringify(value, null, 2)`.
//! Matching these keeps the texts a model reads identical to pi's.
//!
//! This is formatting only; nothing here validates or interprets tool arguments.

use serde_json::Value;

/// JavaScript's `WhiteSpace` and `LineTerminator` characters (what `String.prototype.trim`
/// removes). Differs from `char::is_whitespace` on U+FEFF (JS trims it) and U+0085 (JS
/// keeps it).
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'
            | '\u{000A}'
            | '\u{000B}'
            | '\u{000C}'
            | '\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

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

/// `String(n)` for a finite number: integers without a fraction, shortest round-trip
/// digits otherwise, exponent notation from 1e21 up and below 1e-6.
pub fn js_number_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    let abs = value.abs();
    if (1e-6..1e21).contains(&abs) {
        return format!("{value}");
    }
    // Rust's `{:e}` gives the shortest digits as `1.5e-7`; JavaScript writes `1.5e-7` and
    // `1e+21`.
    let formatted = format!("{value:e}");
    match formatted.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => formatted,
    }
}

/// `n.toFixed(digits)`: the exact decimal value of the double, rounded half up.
pub fn js_to_fixed(value: f64, digits: usize) -> String {
    if !value.is_finite() {
        return js_number_to_string(value);
    }
    // 40 extra digits print the exact binary value far enough to decide the rounding.
    let exact = format!("{:.*}", digits + 40, value.abs());
    let (int_part, frac_part) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut kept: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes().take(digits))
        .collect();
    let round_up = frac_part.as_bytes().get(digits).is_some_and(|d| *d >= b'5');
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let int_len = kept.len() - digits;
    let text = String::from_utf8_lossy(&kept).into_owned();
    let mut out = String::new();
    let negative = value < 0.0 && kept.iter().any(|d| *d != b'0');
    if negative {
        out.push('-');
    }
    out.push_str(&text[..int_len]);
    if digits > 0 {
        out.push('.');
        out.push_str(&text[int_len..]);
    }
    out
}

/// A JSON number as JavaScript prints it.
pub fn json_number_to_string(number: &serde_json::Number) -> String {
    if number.is_i64() || number.is_u64() {
        number.to_string()
    } else {
        js_number_to_string(number.as_f64().unwrap_or(f64::NAN))
    }
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
    fn number_to_string_follows_js_string() {
        let shown: Vec<String> = [5.0, 1.5, 0.1, 1e21, 1.5e-7, -3.0, 123456789.0]
            .into_iter()
            .map(js_number_to_string)
            .collect();
        assert_eq!(
            shown,
            ["5", "1.5", "0.1", "1e+21", "1.5e-7", "-3", "123456789"]
        );
    }

    #[test]
    fn to_fixed_rounds_exact_ties_up() {
        assert_eq!(js_to_fixed(1.125, 2), "1.13");
        assert_eq!(js_to_fixed(1.005, 2), "1.00"); // 1.005 is below the tie in binary
        assert_eq!(js_to_fixed(2.0, 2), "2.00");
        assert_eq!(js_to_fixed(9.999, 2), "10.00");
        assert_eq!(js_to_fixed(0.25, 1), "0.3");
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
