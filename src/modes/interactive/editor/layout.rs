//! Segmenting and wrapping editor lines: graphemes, with paste markers merged into one
//! unbreakable segment; word-aware wrap into chunks that keep their byte offsets (so
//! the cursor can be mapped onto screen rows); word classes for word motions.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use unicode_segmentation::UnicodeSegmentation;

use crate::modes::interactive::text::str_width;

/// `[paste #1 +123 lines]` or `[paste #2 1234 chars]` (or a bare `[paste #3]`).
pub(super) static MARKER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"\[paste #(\d+)( (\+\d+ lines|\d+ chars))?\]").ok());

/// Segments of a line as byte ranges: graphemes, except that markers of pastes that
/// still exist (`valid`) are single segments.
pub(super) fn segments(line: &str, valid: &dyn Fn(u32) -> bool) -> Vec<Range<usize>> {
    let mut markers: Vec<Range<usize>> = Vec::new();
    if line.contains("[paste #")
        && let Some(re) = MARKER.as_ref()
    {
        for caps in re.captures_iter(line) {
            let id = caps.get(1).and_then(|m| m.as_str().parse::<u32>().ok());
            if let (Some(id), Some(m)) = (id, caps.get(0))
                && valid(id)
            {
                markers.push(m.range());
            }
        }
    }
    let mut out = Vec::new();
    let mut next_marker = 0;
    for (start, g) in line.grapheme_indices(true) {
        while next_marker < markers.len() && markers[next_marker].end <= start {
            next_marker += 1;
        }
        match markers.get(next_marker) {
            Some(m) if start >= m.start && start < m.end => {
                if start == m.start {
                    out.push(m.clone());
                }
            }
            _ => out.push(start..start + g.len()),
        }
    }
    out
}

pub(super) fn is_marker(seg: &str) -> bool {
    seg.len() >= 10 && seg.starts_with("[paste #") && seg.ends_with(']')
}

pub(super) fn is_space(seg: &str) -> bool {
    !seg.is_empty() && seg.chars().all(char::is_whitespace)
}

/// Punctuation that ends a word for word motions (pi's set).
pub(super) fn is_punct(seg: &str) -> bool {
    seg.chars()
        .next()
        .is_some_and(|c| "(){}[]<>.,;:'\"!?+-=*/\\|&%^$#@~`".contains(c))
}

/// Splits a line into chunks of at most `width` columns, breaking after whitespace when
/// possible. Chunks keep trailing whitespace and their byte ranges cover the whole line.
pub(super) fn wrap_chunks(line: &str, segs: &[Range<usize>], width: usize) -> Vec<Range<usize>> {
    if line.is_empty() || width == 0 {
        return std::iter::once(0..0).collect();
    }
    if str_width(line) <= width {
        return std::iter::once(0..line.len()).collect();
    }
    let mut chunks = Vec::new();
    let mut cur = 0usize;
    let mut chunk_start = 0usize;
    // (byte offset where a break may go, width of the chunk up to it)
    let mut opportunity: Option<(usize, usize)> = None;
    for (k, seg) in segs.iter().enumerate() {
        let text = &line[seg.clone()];
        let w = str_width(text);
        let space = !is_marker(text) && is_space(text);
        if cur + w > width {
            match opportunity {
                Some((at, at_width)) if cur - at_width + w <= width => {
                    chunks.push(chunk_start..at);
                    chunk_start = at;
                    cur -= at_width;
                }
                _ if chunk_start < seg.start => {
                    chunks.push(chunk_start..seg.start);
                    chunk_start = seg.start;
                    cur = 0;
                }
                _ => {}
            }
            opportunity = None;
        }
        if w > width && text.graphemes(true).nth(1).is_none() {
            // One character wider than the whole row (a wide glyph at width 1): it gets
            // a row of its own.
            chunks.push(seg.clone());
            chunk_start = seg.end;
            cur = 0;
            continue;
        }
        if w > width {
            // An atomic segment (paste marker) wider than the line: split it visually.
            let inner: Vec<Range<usize>> = text
                .grapheme_indices(true)
                .map(|(i, g)| i..i + g.len())
                .collect();
            let sub = wrap_chunks(text, &inner, width);
            let Some(last) = sub.last().cloned() else {
                continue;
            };
            for sc in &sub[..sub.len() - 1] {
                chunks.push(seg.start + sc.start..seg.start + sc.end);
            }
            chunk_start = seg.start + last.start;
            cur = str_width(&text[last]);
            continue;
        }
        cur += w;
        if space && let Some(next) = segs.get(k + 1) {
            let next_text = &line[next.clone()];
            if is_marker(next_text) || !is_space(next_text) {
                opportunity = Some((next.start, cur));
            }
        }
    }
    chunks.push(chunk_start..line.len());
    chunks
}

/// One screen row of the editor: a byte range of a logical line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VisualLine {
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// Screen rows of all lines at `width`.
pub(super) fn visual_lines(
    lines: &[String],
    width: usize,
    valid: &dyn Fn(u32) -> bool,
) -> Vec<VisualLine> {
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() || str_width(line) <= width {
            out.push(VisualLine {
                line: i,
                start: 0,
                end: line.len(),
            });
            continue;
        }
        for chunk in wrap_chunks(line, &segments(line, valid), width) {
            out.push(VisualLine {
                line: i,
                start: chunk.start,
                end: chunk.end,
            });
        }
    }
    out
}

/// Whether row `i` is the last row of its logical line.
pub(super) fn is_last_row(rows: &[VisualLine], i: usize) -> bool {
    rows.get(i + 1).is_none_or(|next| next.line != rows[i].line)
}

/// The row showing (line, col): the cursor sits at the end of a line's last row only.
pub(super) fn row_of(rows: &[VisualLine], line: usize, col: usize) -> usize {
    for (i, row) in rows.iter().enumerate() {
        if row.line != line {
            continue;
        }
        if col >= row.start && (col < row.end || (is_last_row(rows, i) && col == row.end)) {
            return i;
        }
    }
    rows.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn chunks(line: &str, width: usize) -> Vec<&str> {
        let segs = segments(line, &|_| true);
        wrap_chunks(line, &segs, width)
            .into_iter()
            .map(|r| &line[r])
            .collect()
    }

    #[test]
    fn wraps_after_spaces_and_keeps_them() {
        assert_eq!(
            chunks("hello world again", 8),
            ["hello ", "world ", "again"]
        );
        assert_eq!(chunks("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(chunks("中文字符", 5), ["中文", "字符"]);
    }

    #[test]
    fn paste_markers_are_single_segments_only_when_valid() {
        let line = "a [paste #1 +20 lines] b";
        let segs = segments(line, &|id| id == 1);
        assert_eq!(segs.len(), 5);
        assert_eq!(&line[segs[2].clone()], "[paste #1 +20 lines]");
        assert_eq!(segments(line, &|_| false).len(), line.len());
        assert_eq!(
            chunks("x [paste #1 +20 lines]", 10),
            ["x ", "[paste #1 ", "+20 lines]"]
        );
    }
}
