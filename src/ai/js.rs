//! The JavaScript semantics pi's texts depend on, in one place for every layer: string
//! length and slicing in UTF-16 code units, the whitespace `trim` removes, and numbers
//! written as `String(n)`, `n.toFixed(d)` and `n.toLocaleString()` print them.
//!
//! Tool results, token estimates, the session tree and the footer all print numbers and
//! cut strings the way pi's JavaScript does; sharing these rules keeps them from drifting
//! apart. Layer-specific conventions stay with their users: `Number(s)` and
//! `JSON.stringify(v, null, 2)` in `tools::js`, key order and compact `JSON.stringify` in
//! `compaction::js`.

use serde_json::Number;

/// The largest integer JavaScript represents exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

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

/// `String(n)`: integers without a fraction, shortest round-trip digits otherwise,
/// exponent notation from 1e21 up and below 1e-6; `NaN`, `Infinity`, `-Infinity`.
pub fn js_number_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if value == 0.0 {
        // Also -0, which JavaScript prints as "0".
        return "0".to_string();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    let (digits, exponent) = shortest_digits(value.abs());
    // ECMAScript's Number::toString: `digits` × 10^(n − k).
    let k = digits.len() as i64;
    let n = exponent + 1;
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
        match digits.split_at(1) {
            (first, "") => format!("{first}e{e_sign}{}", e.abs()),
            (first, rest) => format!("{first}.{rest}e{e_sign}{}", e.abs()),
        }
    };
    format!("{sign}{body}")
}

/// The shortest decimal digits that read back as `x` (> 0, finite) and the exponent of
/// the first one, chosen as ECMAScript chooses: Rust's `{:e}` gives shortest digits too,
/// but when `x` lies exactly halfway between two candidates (possible from 16 digits up)
/// it may take the odd one, where JavaScript takes the even one.
fn shortest_digits(x: f64) -> (String, i64) {
    let (digits, exponent) = scientific_digits(&format!("{x:e}"));
    let k = digits.len();
    if k < 16 || digits.bytes().last().is_some_and(|d| d % 2 == 0) {
        return (digits, exponent);
    }
    // 780 digits show any double's exact decimal value; a tie is that value ending in a
    // 5 right after the first `k` digits.
    let (exact, exact_exponent) = scientific_digits(&format!("{x:.780e}"));
    let tie = exact_exponent == exponent
        && exact.as_bytes().get(k) == Some(&b'5')
        && exact.bytes().skip(k + 1).all(|d| d == b'0');
    if !tie {
        return (digits, exponent);
    }
    let mut even: Vec<u8> = exact.bytes().take(k).collect();
    let mut exponent = exponent;
    if even.last().is_some_and(|d| d % 2 == 1) && increment_digits(&mut even) {
        exponent += 1;
    }
    while even.len() > 1 && even.last() == Some(&b'0') {
        even.pop();
    }
    (String::from_utf8_lossy(&even).into_owned(), exponent)
}

/// Adds one unit in the last place to ASCII decimal `digits`; true when that carried into
/// a new leading digit (`999` → `1000`).
fn increment_digits(digits: &mut Vec<u8>) -> bool {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return false;
        }
    }
    digits.insert(0, b'1');
    true
}

/// The digits (without the point) and the exponent of Rust's `d.ddde±x` notation.
fn scientific_digits(sci: &str) -> (String, i64) {
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let digits = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// A JSON number as JavaScript prints it after `JSON.parse`: integers beyond 2^53 lose
/// precision there, so they are printed through `f64`.
pub fn json_number_to_string(number: &Number) -> String {
    if let Some(u) = number.as_u64()
        && u <= MAX_SAFE_INTEGER
    {
        return u.to_string();
    }
    if let Some(i) = number.as_i64()
        && i.unsigned_abs() <= MAX_SAFE_INTEGER
    {
        return i.to_string();
    }
    js_number_to_string(number.as_f64().unwrap_or(f64::NAN))
}

/// `n.toFixed(digits)`: the exact decimal value of the double, rounded half up. (Rust's
/// `{:.1}` rounds an exact tie to even: 1.25 becomes "1.2" where JavaScript says "1.3".)
pub fn js_to_fixed(value: f64, digits: usize) -> String {
    // From 1e21 up JavaScript gives `String(n)`, exponent and all.
    if !value.is_finite() || value.abs() >= 1e21 {
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
        increment_digits(&mut kept);
    }
    let int_len = kept.len() - digits;
    let text = String::from_utf8_lossy(&kept).into_owned();
    let mut out = String::new();
    // JavaScript keeps the sign of a negative number that rounds to zero ("-0.0"), but
    // not of -0 itself.
    if value < 0.0 {
        out.push('-');
    }
    out.push_str(&text[..int_len]);
    if digits > 0 {
        out.push('.');
        out.push_str(&text[int_len..]);
    }
    out
}

/// `n.toLocaleString()` for a whole number in pi's (en-US) locale: `1234567` →
/// `1,234,567`.
pub fn js_locale_string(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// ASCII in the order of Unicode's root collation, which JavaScript's `localeCompare`
/// uses by default: spaces and punctuation, symbols, digits, then letters.
const ASCII_COLLATION_ORDER: &str =
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";

fn collation_weight(c: char) -> u32 {
    let lower = c.to_ascii_lowercase();
    match ASCII_COLLATION_ORDER.find(lower) {
        Some(rank) if c.is_ascii() => rank as u32,
        _ => 0x100 + u32::from(c),
    }
}

/// `a.localeCompare(b)` for identifiers (model ids, provider names): letters compare
/// case-insensitively first, punctuation sorts before digits and digits before letters,
/// and only then does lower case come before upper case. Characters outside ASCII sort
/// after it by code point, which is exact enough for ids.
pub fn js_locale_compare(a: &str, b: &str) -> std::cmp::Ordering {
    let primary = |s: &str| s.chars().map(collation_weight).collect::<Vec<_>>();
    let tertiary = |s: &str| s.chars().map(|c| c.is_uppercase()).collect::<Vec<_>>();
    primary(a)
        .cmp(&primary(b))
        .then_with(|| tertiary(a).cmp(&tertiary(b)))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn utf16_length_counts_astral_chars_twice() {
        assert_eq!(utf16_len("hello"), 5);
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
    fn js_whitespace_is_what_trim_removes() {
        assert!(is_js_whitespace('\u{FEFF}'));
        assert!(is_js_whitespace('\u{3000}'));
        assert!(!is_js_whitespace('\u{0085}'));
        assert!(!is_js_whitespace('x'));
    }

    #[test]
    fn number_to_string_follows_js_string() {
        let cases = [
            (5.0, "5"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (-3.0, "-3"),
            (-0.0, "0"),
            (123456789.0, "123456789"),
            (123.456, "123.456"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.25e30, "1.25e+30"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (-2.5e-10, "-2.5e-10"),
            (0.1 + 0.2, "0.30000000000000004"),
            // Exactly halfway between two shortest forms: JavaScript takes the even one.
            (666_894_329_563_869.0 + 0.25, "666894329563869.2"),
            (721_125_788_020.0 + 0.531_25, "721125788020.5312"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, want) in cases {
            assert_eq!(js_number_to_string(x), want, "{x}");
        }
    }

    #[test]
    fn json_numbers_lose_precision_beyond_2_pow_53_like_javascript() {
        let shown: Vec<String> = [
            json!(9_007_199_254_740_991u64),
            json!(u64::MAX),
            json!(-42),
            json!(2.5),
        ]
        .iter()
        .filter_map(|v| v.as_number().map(json_number_to_string))
        .collect();
        assert_eq!(
            shown,
            ["9007199254740991", "18446744073709552000", "-42", "2.5"]
        );
    }

    #[test]
    fn to_fixed_rounds_exact_ties_up() {
        assert_eq!(js_to_fixed(1.125, 2), "1.13");
        assert_eq!(js_to_fixed(1.005, 2), "1.00"); // 1.005 is below the tie in binary
        assert_eq!(js_to_fixed(2.0, 2), "2.00");
        assert_eq!(js_to_fixed(9.999, 2), "10.00");
        assert_eq!(js_to_fixed(0.25, 1), "0.3");
        assert_eq!(js_to_fixed(-0.04, 1), "-0.0");
        assert_eq!(js_to_fixed(-0.0, 1), "0.0");
        assert_eq!(js_to_fixed(2e21, 2), "2e+21");
    }

    #[test]
    fn locale_string_groups_thousands() {
        let shown: Vec<String> = [0, 999, 2404, 1_234_567]
            .into_iter()
            .map(js_locale_string)
            .collect();
        assert_eq!(shown, ["0", "999", "2,404", "1,234,567"]);
    }

    #[test]
    fn locale_compare_orders_ids_like_node() {
        let mut ids = vec![
            "gpt-5.1",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1-codex",
            "GPT-4o",
            "gpt-4o",
            "gpt_x",
            "gpt-4o-2024",
            "claude",
            "Claude-3",
            "a:b",
            "a-b",
            "a/b",
            "a1",
            "ab",
        ];
        ids.sort_by(|a, b| js_locale_compare(a, b));
        // The order Node 22 (ICU) gives with `ids.sort((a, b) => a.localeCompare(b))`.
        assert_eq!(
            ids,
            [
                "a-b",
                "a:b",
                "a/b",
                "a1",
                "ab",
                "claude",
                "Claude-3",
                "gpt_x",
                "gpt-4o",
                "GPT-4o",
                "gpt-4o-2024",
                "gpt-5",
                "gpt-5-mini",
                "gpt-5.1",
                "gpt-5.1-codex"
            ]
        );
    }
}
