//! Timestamps as pi writes them: entry timestamps are ISO-8601 strings with milliseconds
//! and a `Z` (JavaScript's `toISOString()`), message timestamps are epoch milliseconds.
//!
//! Reading is on the hot path of building a tree (every entry is sorted by time), so the
//! exact shape pi writes is parsed by hand; anything else falls back to chrono.

use chrono::{SecondsFormat, Utc};

/// The current time as pi's `new Date().toISOString()`.
pub(crate) fn now_iso() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Epoch milliseconds of an ISO timestamp, or `None` when it cannot be read.
pub(crate) fn iso_ms(text: &str) -> Option<i64> {
    fast_iso_ms(text.as_bytes()).or_else(|| {
        chrono::DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.timestamp_millis())
    })
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` exactly.
fn fast_iso_ms(b: &[u8]) -> Option<i64> {
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let mut n = 0i64;
        for &c in &b[range] {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + i64::from(c - b'0');
        }
        Some(n)
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second, milli) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 59 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_parser_agrees_with_chrono() {
        for text in [
            "2026-11-22T03:39:21.546Z",
            "1970-01-01T00:00:00.000Z",
            "2000-02-29T23:59:59.999Z",
            "1969-12-31T23:59:59.999Z",
        ] {
            let chrono_ms = chrono::DateTime::parse_from_rfc3339(text)
                .unwrap()
                .timestamp_millis();
            assert_eq!(fast_iso_ms(text.as_bytes()), Some(chrono_ms), "{text}");
        }
    }

    #[test]
    fn other_shapes_fall_back_and_garbage_is_none() {
        assert_eq!(
            iso_ms("2026-11-22T04:39:21.546+01:00"),
            iso_ms("2026-11-22T03:39:21.546Z")
        );
        assert_eq!(iso_ms("not a time"), None);
        assert_eq!(now_iso().len(), 24);
    }
}
