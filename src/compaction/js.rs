//! JavaScript semantics that pi's numbers and texts depend on.
//!
//! pi measures text with `String.prototype.length` (UTF-16 code units, not bytes or
//! chars), writes tool arguments with `JSON.stringify`, and lists object keys in
//! JavaScript's own order (integer-like keys first, ascending). Token estimates, cut
//! points and the serialized conversation must match pi to the character, so these few
//! rules are reproduced here. Nothing else in the crate should need them.

use serde_json::{Map, Number, Value};

/// `s.length` in JavaScript: the number of UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // Every char is one unit except those above U+FFFF (4-byte sequences), which are two.
    // Counting lead bytes avoids decoding: chars = non-continuation bytes.
    s.bytes()
        .map(|b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// The longest prefix of `s` that is at most `max_units` UTF-16 code units, and the
/// number of units after it (pi's `text.slice(0, max)` and `text.length - max`).
///
/// JavaScript may cut a surrogate pair in half; a Rust string cannot hold half a pair, so
/// the cut moves one unit earlier in that (rare) case.
pub fn split_at_utf16(s: &str, max_units: usize) -> (&str, usize) {
    let total = utf16_len(s);
    if total <= max_units {
        return (s, 0);
    }
    let mut units = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > max_units {
            break;
        }
        units += w;
        end = i + c.len_utf8();
    }
    (&s[..end], total - max_units)
}

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
        Value::Number(n) => format_number(n).len(),
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
        Value::Number(n) => out.push_str(&format_number(n)),
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

/// A JSON number as JavaScript prints it. Integers beyond 2^53 lose precision in
/// JavaScript, so they are printed through `f64` like pi would.
fn format_number(n: &Number) -> String {
    const MAX_SAFE: u64 = 9_007_199_254_740_991;
    if let Some(u) = n.as_u64()
        && u <= MAX_SAFE
    {
        return u.to_string();
    }
    if let Some(i) = n.as_i64()
        && i.unsigned_abs() <= MAX_SAFE
    {
        return i.to_string();
    }
    n.as_f64().map_or_else(|| "null".to_string(), format_f64)
}

/// ECMAScript `Number::toString(10)`.
pub fn format_f64(x: f64) -> String {
    if x.is_nan() || x.is_infinite() {
        // JSON.stringify writes non-finite numbers as null.
        return "null".to_string();
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde±x".
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n = exp + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        format!("{int}.{frac}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let e_sign = if e >= 0 { "+" } else { "-" };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{e_sign}{}", e.abs())
        } else {
            format!("{first}.{rest}e{e_sign}{}", e.abs())
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn utf16_length_counts_astral_chars_twice() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("héllo"), 5);
        assert_eq!(utf16_len("日本"), 2);
        assert_eq!(utf16_len("a😀b"), 4);
        assert_eq!(utf16_len(""), 0);
    }

    #[test]
    fn split_keeps_whole_surrogate_pairs() {
        assert_eq!(split_at_utf16("abcdef", 4), ("abcd", 2));
        assert_eq!(split_at_utf16("abc", 4), ("abc", 0));
        // The emoji would straddle the limit: it is left out entirely.
        assert_eq!(split_at_utf16("ab😀cd", 3), ("ab", 3));
    }

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
    fn numbers_print_like_number_to_string() {
        let cases = [
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123.456, "123.456"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (-2.5e-10, "-2.5e-10"),
            (1.25e30, "1.25e+30"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (x, want) in cases {
            assert_eq!(format_f64(x), want, "{x}");
        }
        assert_eq!(stringify(&json!(u64::MAX)), "18446744073709552000");
    }

    #[test]
    fn sort_order_is_by_utf16_units() {
        // U+FF5E comes before U+1F600 by code point but after it by UTF-16 units.
        assert_eq!(cmp_utf16("\u{FF5E}", "😀"), std::cmp::Ordering::Greater);
        assert_eq!(cmp_utf16("a", "b"), std::cmp::Ordering::Less);
    }
}
