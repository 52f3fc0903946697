//! Output limits shared by every tool: keep the head (file reads, search results) or the
//! tail (command output) of a text within a line limit and a byte limit, whichever is
//! hit first, and describe what was cut in the object pi stores as `details.truncation`.
//!
//! Only whole lines are kept, except when tail truncation meets a single last line that is
//! larger than the byte limit: then the end of that line is kept, cut at a UTF-8 character
//! boundary. Nothing here formats the notices the model reads; each tool words its own.

use serde::{Deserialize, Serialize};

use crate::ai::js::{js_to_fixed, split_at_utf16};

/// Default line limit of every tool output.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default byte limit of every tool output (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep output line, in UTF-16 code units like JavaScript's `String.length`.
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi passes it as the line limit of grep, find and
/// ls results (their own result limits already cap the number of lines), and it ends up in
/// the stored `details.truncation.maxLines`.
pub const UNLIMITED_LINES: usize = 9_007_199_254_740_991;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// Both limits of a truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl Limits {
    /// Only the byte limit applies (grep, find and ls cap their lines themselves).
    pub fn bytes_only() -> Self {
        Self {
            max_lines: UNLIMITED_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// The result of a truncation, serialized exactly like pi's `TruncationResult` (field
/// order included) because tools store it in `details.truncation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    pub last_line_partial: bool,
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Truncation {
    fn untouched(content: &str, total_lines: usize, limits: Limits) -> Self {
        Self {
            content: content.to_string(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        }
    }
}

/// Number of lines when splitting on `\n` (an empty text is one empty line, like
/// JavaScript's `"".split("\n")`).
pub fn count_lines(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// Keeps whole lines from the start. If the first line alone is over the byte limit, the
/// content is empty and `first_line_exceeds_limit` is set.
pub fn truncate_head(content: &str, limits: Limits) -> Truncation {
    let total_lines = count_lines(content);
    if total_lines <= limits.max_lines && content.len() <= limits.max_bytes {
        return Truncation::untouched(content, total_lines, limits);
    }
    let first_line_len = memchr::memchr(b'\n', content.as_bytes()).unwrap_or(content.len());
    if first_line_len > limits.max_bytes {
        return Truncation {
            content: String::new(),
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes: content.len(),
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        };
    }

    // `end` is the byte length of the kept prefix; each kept line after the first also
    // pays for the newline in front of it.
    let mut end = 0usize;
    let mut kept = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    let mut start = 0usize;
    while kept < limits.max_lines && start <= content.len() {
        let line_end = memchr::memchr(b'\n', &content.as_bytes()[start..])
            .map_or(content.len(), |i| start + i);
        let cost = (line_end - start) + usize::from(kept > 0);
        if end + cost > limits.max_bytes {
            truncated_by = TruncatedBy::Bytes;
            break;
        }
        end = line_end;
        kept += 1;
        start = line_end + 1;
    }
    if kept >= limits.max_lines && end <= limits.max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    let output = &content[..end];
    Truncation {
        content: output.to_string(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes: content.len(),
        output_lines: kept,
        output_bytes: output.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: limits.max_lines,
        max_bytes: limits.max_bytes,
    }
}

/// Keeps whole lines from the end. If the last line alone is over the byte limit, its
/// end is kept (cut at a character boundary) and `last_line_partial` is set.
pub fn truncate_tail(content: &str, limits: Limits) -> Truncation {
    let total_lines = count_lines(content);
    if total_lines <= limits.max_lines && content.len() <= limits.max_bytes {
        return Truncation::untouched(content, total_lines, limits);
    }

    let bytes = content.as_bytes();
    // The kept suffix is `content[start..]`.
    let mut start = content.len();
    let mut kept = 0usize;
    let mut kept_bytes = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    let mut last_line_partial = false;
    let mut partial: Option<&str> = None;
    // Lines are scanned from the end; `line_end` is the exclusive end of the current line.
    let mut line_end = content.len();
    loop {
        if kept >= limits.max_lines {
            break;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..line_end]).map_or(0, |i| i + 1);
        let cost = (line_end - line_start) + usize::from(kept > 0);
        if kept_bytes + cost > limits.max_bytes {
            truncated_by = TruncatedBy::Bytes;
            if kept == 0 {
                let tail = tail_within_bytes(&content[line_start..line_end], limits.max_bytes);
                kept_bytes = tail.len();
                kept = 1;
                last_line_partial = true;
                partial = Some(tail);
            }
            break;
        }
        kept += 1;
        kept_bytes += cost;
        start = line_start;
        if line_start == 0 {
            break;
        }
        line_end = line_start - 1;
    }
    if kept >= limits.max_lines && kept_bytes <= limits.max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    let output = partial.unwrap_or(&content[start..]);
    Truncation {
        content: output.to_string(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes: content.len(),
        output_lines: kept,
        output_bytes: output.len(),
        last_line_partial,
        first_line_exceeds_limit: false,
        max_lines: limits.max_lines,
        max_bytes: limits.max_bytes,
    }
}

/// The longest suffix of `text` that fits in `max_bytes`, starting on a character boundary.
pub fn tail_within_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Cuts a line to `max_units` UTF-16 code units (JavaScript string length) and marks the
/// cut with `... [truncated]`. Returns the text and whether it was cut.
pub fn truncate_line(line: &str, max_units: usize) -> (String, bool) {
    match split_at_utf16(line, max_units) {
        (_, 0) => (line.to_string(), false),
        (kept, _) => (format!("{kept}... [truncated]"), true),
    }
}

/// Human-readable size the way pi prints it: `512B`, `50.0KB`, `1.5MB` (one decimal
/// through JavaScript's `toFixed`).
pub fn format_size(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    const MB: f64 = 1024.0 * 1024.0;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if (bytes as f64) < MB {
        format!("{}KB", js_to_fixed(bytes as f64 / KB, 1))
    } else {
        format!("{}MB", js_to_fixed(bytes as f64 / MB, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn small(max_lines: usize, max_bytes: usize) -> Limits {
        Limits {
            max_lines,
            max_bytes,
        }
    }

    #[test]
    fn format_size_matches_pi_rounding() {
        let shown: Vec<String> = [0, 1023, 1024, 1280, 1331, 51200, 1024 * 1024, 1572864]
            .into_iter()
            .map(format_size)
            .collect();
        assert_eq!(
            shown,
            [
                "0B", "1023B", "1.0KB", "1.3KB", "1.3KB", "50.0KB", "1.0MB", "1.5MB"
            ]
        );
    }

    #[test]
    fn head_under_limits_is_untouched() {
        let t = truncate_head("a\nb\n", Limits::default());
        assert!(!t.truncated);
        assert_eq!((t.total_lines, t.output_lines, t.total_bytes), (3, 3, 4));
        assert_eq!(t.truncated_by, None);
    }

    #[test]
    fn head_stops_at_line_limit() {
        let t = truncate_head("1\n2\n3\n4", small(2, 100));
        assert_eq!(t.content, "1\n2");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((t.output_lines, t.output_bytes, t.total_lines), (2, 3, 4));
    }

    #[test]
    fn head_stops_at_byte_limit_on_whole_lines() {
        let t = truncate_head("aaaa\nbbbb\ncccc", small(100, 9));
        assert_eq!(t.content, "aaaa\nbbbb");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        let t = truncate_head("aaaa\nbbbb\ncccc", small(100, 8));
        assert_eq!(t.content, "aaaa");
    }

    #[test]
    fn head_with_oversized_first_line_is_empty() {
        let t = truncate_head("abcdefgh\nx", small(100, 4));
        assert_eq!(t.content, "");
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.output_lines, 0);
    }

    #[test]
    fn tail_keeps_last_lines() {
        let t = truncate_tail("1\n2\n3\n4\n", small(2, 100));
        assert_eq!(t.content, "4\n");
        assert_eq!((t.output_lines, t.total_lines), (2, 5));
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn tail_keeps_utf8_safe_end_of_huge_last_line() {
        let line = "é".repeat(10);
        let t = truncate_tail(&format!("start\n{line}"), small(100, 5));
        assert_eq!(t.content, "éé");
        assert!(t.last_line_partial);
        assert_eq!((t.output_lines, t.output_bytes), (1, 4));
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn tail_by_bytes_keeps_whole_lines() {
        let t = truncate_tail("aaaa\nbbbb\ncccc", small(100, 9));
        assert_eq!(t.content, "bbbb\ncccc");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn truncate_line_counts_utf16_units() {
        assert_eq!(truncate_line("abc", 3), ("abc".to_string(), false));
        assert_eq!(
            truncate_line("abcd", 3),
            ("abc... [truncated]".to_string(), true)
        );
        // An emoji is two UTF-16 units and is never split.
        assert_eq!(
            truncate_line("a😀b", 2),
            ("a... [truncated]".to_string(), true)
        );
    }

    #[test]
    fn truncation_serializes_like_pi() {
        let t = truncate_head("1\n2\n3", small(2, 100));
        insta::assert_snapshot!(serde_json::to_string(&t).unwrap_or_default(), @r#"{"content":"1\n2","truncated":true,"truncatedBy":"lines","totalLines":3,"totalBytes":5,"outputLines":2,"outputBytes":3,"lastLinePartial":false,"firstLineExceedsLimit":false,"maxLines":2,"maxBytes":100}"#);
    }

    proptest::proptest! {
        #[test]
        fn head_output_is_a_prefix_within_limits(text in "[a-c\n é]{0,200}", lines in 1usize..20, bytes in 1usize..80) {
            let t = truncate_head(&text, small(lines, bytes));
            proptest::prop_assert!(text.starts_with(&t.content));
            proptest::prop_assert!(t.output_bytes <= bytes || !t.truncated);
            proptest::prop_assert!(t.output_lines <= lines);
        }

        #[test]
        fn tail_output_is_a_suffix_within_limits(text in "[a-c\n é]{0,200}", lines in 1usize..20, bytes in 1usize..80) {
            let t = truncate_tail(&text, small(lines, bytes));
            proptest::prop_assert!(text.ends_with(&t.content));
            proptest::prop_assert!(t.output_bytes <= bytes || !t.truncated);
            proptest::prop_assert!(t.output_lines <= lines);
        }
    }
}
