//! Width-safe text: measuring, sanitising, truncating and wrapping styled text so that no
//! rendered line is ever wider than the terminal.
//!
//! Lines wider than the terminal were pi's most frequent rendering bug (CJK text, emoji,
//! regional-indicator flags, tabs, stray control bytes in tool output). Every renderer in
//! the TUI goes through this module: [`sanitize`] untrusted text once at the boundary,
//! measure with [`str_width`] (grapheme clusters, East-Asian wide, emoji sequences), and
//! lay out with [`wrap_spans`] / [`truncate_line`], which guarantee their width bound.
//! This module does not know about themes or markdown.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// How many spaces a tab becomes on screen (pi renders tool output tabs as 3 spaces).
pub const TAB_WIDTH: usize = 3;

/// Display width of one grapheme cluster in terminal columns.
///
/// Follows `unicode-width` (which already knows emoji ZWJ sequences, flags, keycaps and
/// skin tones) with two deliberate deviations, both towards "wider": a lone regional
/// indicator counts as 2 (terminals draw it as a wide emoji while a flag is still
/// streaming in), and control characters count as 0 (they never reach the screen because
/// [`sanitize`] removes them).
pub fn grapheme_width(grapheme: &str) -> usize {
    let mut chars = grapheme.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if first.is_ascii() && chars.as_str().is_empty() {
        return usize::from(!first.is_ascii_control());
    }
    if first.is_control() {
        return 0;
    }
    if ('\u{1F1E6}'..='\u{1F1FF}').contains(&first) {
        return 2;
    }
    grapheme.width()
}

/// Display width of a string (sum of its grapheme widths). Tabs count as [`TAB_WIDTH`].
pub fn str_width(s: &str) -> usize {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.len();
    }
    s.graphemes(true)
        .map(|g| {
            if g == "\t" {
                TAB_WIDTH
            } else {
                grapheme_width(g)
            }
        })
        .sum()
}

/// Display width of a styled line.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans
        .iter()
        .filter(|s| !super::images::is_marker(s))
        .map(|s| str_width(&s.content))
        .sum()
}

/// The plain text of a line (styles dropped).
pub fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// Format characters (Unicode category Cf) that terminals render inconsistently: bidi
/// controls, invisible separators, Arabic "prepended concatenation marks" (U+0600–0605
/// made pi's renderer crash) and the like. ZWJ/ZWNJ and emoji tag characters are kept:
/// they are part of emoji sequences and shaped scripts.
fn is_stripped_format_char(c: char) -> bool {
    matches!(c,
        '\u{00AD}'
        | '\u{0600}'..='\u{0605}'
        | '\u{061C}'
        | '\u{06DD}'
        | '\u{070F}'
        | '\u{0890}'..='\u{0891}'
        | '\u{08E2}'
        | '\u{180E}'
        | '\u{200B}'
        | '\u{200E}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}'
        | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}'
    )
}

fn needs_sanitizing(s: &str) -> bool {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b) || b == b'\n') {
        return false;
    }
    s.chars()
        .any(|c| (c.is_control() && c != '\n') || c == '\u{1b}' || is_stripped_format_char(c))
}

/// Makes untrusted text (model output, tool output, file names) safe to draw: removes
/// ANSI/OSC/DCS escape sequences, control characters (keeping `\n`), lone carriage
/// returns and invisible format characters; turns CRLF into LF and tabs into
/// [`TAB_WIDTH`] spaces. Returns the input unchanged (borrowed) when it is already clean.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    if !needs_sanitizing(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape_sequence(&mut chars),
            '\t' => out.push_str(&" ".repeat(TAB_WIDTH)),
            '\n' => out.push('\n'),
            c if c.is_control() || is_stripped_format_char(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`sanitize`] for one-line fields (statuses, titles): line breaks become spaces and
/// runs of spaces collapse, like pi's status-line sanitiser.
pub fn sanitize_single_line(s: &str) -> String {
    let clean = sanitize(s);
    let mut out = String::with_capacity(clean.len());
    let mut last_space = false;
    for c in clean.chars() {
        let c = if c == '\n' { ' ' } else { c };
        if c == ' ' {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out.trim().to_string()
}

/// Skips one escape sequence whose ESC was already consumed.
fn skip_escape_sequence(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek().copied() {
        // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
        Some('[') => {
            chars.next();
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        // OSC / DCS / SOS / PM / APC: until BEL or ST (ESC \).
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            while let Some(c) = chars.next() {
                if c == '\u{07}' {
                    break;
                }
                if c == '\u{1b}' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        // Two- or three-byte sequences: optional intermediates, then a final byte.
        Some(_) => {
            while let Some(&c) = chars.peek() {
                chars.next();
                if !(' '..='/').contains(&c) {
                    break;
                }
            }
        }
        None => {}
    }
}

/// Cuts `s` to at most `max_width` columns, ending with `ellipsis` when something was
/// cut. If even the ellipsis does not fit, it is cut too.
pub fn truncate_to_width<'a>(s: &'a str, max_width: usize, ellipsis: &str) -> Cow<'a, str> {
    if str_width(s) <= max_width {
        return Cow::Borrowed(s);
    }
    let ellipsis_width = str_width(ellipsis);
    if ellipsis_width >= max_width {
        return Cow::Owned(take_width(ellipsis, max_width).0.to_string());
    }
    let (head, _) = take_width(s, max_width - ellipsis_width);
    let mut out = String::with_capacity(head.len() + ellipsis.len());
    out.push_str(head);
    out.push_str(ellipsis);
    Cow::Owned(out)
}

/// The longest prefix of `s` that fits in `max_width` columns, and its width.
fn take_width(s: &str, max_width: usize) -> (&str, usize) {
    let mut width = 0;
    for (idx, g) in s.grapheme_indices(true) {
        let w = if g == "\t" {
            TAB_WIDTH
        } else {
            grapheme_width(g)
        };
        if width + w > max_width {
            return (&s[..idx], width);
        }
        width += w;
    }
    (s, width)
}

/// Cuts a styled line to at most `max_width` columns, appending `ellipsis` (in its own
/// style) when something was cut.
pub fn truncate_line(
    line: Line<'static>,
    max_width: usize,
    ellipsis: Span<'static>,
) -> Line<'static> {
    if line_width(&line) <= max_width {
        return line;
    }
    let ellipsis_width = str_width(&ellipsis.content);
    let line_style = line.style;
    if ellipsis_width >= max_width {
        let (text, _) = take_width(&ellipsis.content, max_width);
        return Line::from(vec![Span::styled(text.to_string(), ellipsis.style)]).style(line_style);
    }
    let mut budget = max_width - ellipsis_width;
    let mut spans = Vec::with_capacity(line.spans.len() + 1);
    for span in line.spans {
        if budget == 0 {
            break;
        }
        let w = str_width(&span.content);
        if w <= budget {
            budget -= w;
            spans.push(span);
        } else {
            let (text, _) = take_width(&span.content, budget);
            if !text.is_empty() {
                spans.push(Span::styled(text.to_string(), span.style));
            }
            break;
        }
    }
    spans.push(ellipsis);
    Line::from(spans).style(line_style)
}

/// Pads a line with spaces in `style` up to exactly `width` columns (lines already at
/// or over `width` are returned unchanged). Used for full-width backgrounds.
pub fn pad_line(mut line: Line<'static>, width: usize, style: Style) -> Line<'static> {
    let w = line_width(&line);
    if w < width {
        line.spans.push(Span::styled(" ".repeat(width - w), style));
    }
    line
}

/// Applies `style` underneath every span of every line (span styles win), e.g. a box
/// background.
pub fn patch_lines(lines: &mut [Line<'static>], style: Style) {
    for line in lines {
        for span in &mut line.spans {
            span.style = style.patch(span.style);
        }
    }
}

/// Options for [`wrap_spans`].
#[derive(Debug, Clone, Default)]
pub struct WrapOptions {
    /// Spans put in front of the first output line (e.g. a list bullet).
    pub first_prefix: Vec<Span<'static>>,
    /// Spans put in front of every following line (e.g. hanging indent, quote border).
    pub rest_prefix: Vec<Span<'static>>,
}

impl WrapOptions {
    /// The same prefix on every line.
    pub fn prefixed(prefix: Vec<Span<'static>>) -> Self {
        Self {
            first_prefix: prefix.clone(),
            rest_prefix: prefix,
        }
    }
}

/// One grapheme of the input, located by span and byte range.
#[derive(Clone, Copy)]
struct Cell {
    span: usize,
    start: usize,
    end: usize,
    width: usize,
    space: bool,
}

/// Whitespace where a line may break. No-break spaces are excluded on purpose.
fn is_break_space(g: &str) -> bool {
    g.chars()
        .all(|c| c.is_whitespace() && !matches!(c, '\u{a0}' | '\u{2007}' | '\u{202f}'))
}

/// Word-wraps one logical line of styled text (no `\n` inside) to `width` columns.
///
/// Breaks after whitespace when possible and inside words when a word is longer than a
/// line. Whitespace at a break is dropped; leading whitespace of the first line is kept
/// (indentation). A grapheme wider than the whole line (a wide character at width 1) is
/// replaced by `?`. Every returned line, prefix included, is at most `width` wide; the
/// result always has at least one line.
pub fn wrap_spans(spans: &[Span<'_>], width: usize, opts: &WrapOptions) -> Vec<Line<'static>> {
    let width = width.max(1);
    let first_prefix = fit_prefix(&opts.first_prefix, width);
    let rest_prefix = fit_prefix(&opts.rest_prefix, width);
    let first_avail = (width - spans_width(&first_prefix)).max(1);
    let rest_avail = (width - spans_width(&rest_prefix)).max(1);

    let cells = collect_cells(spans);
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut line_start = 0;
    let mut line_width = 0;
    let mut avail = first_avail;
    // Index of the first non-space grapheme after the last whitespace run on this line.
    let mut break_at: Option<usize> = None;
    let mut i = 0;
    while i < cells.len() {
        let cell = cells[i];
        if cell.space && line_width == 0 && !ranges.is_empty() && i == line_start {
            // Continuation lines never start with the whitespace we broke at.
            line_start = i + 1;
            i += 1;
            continue;
        }
        let cell_width = cell.width.min(avail);
        if line_width + cell_width > avail {
            if cell.space {
                ranges.push((line_start, i));
                i += 1;
                while i < cells.len() && cells[i].space {
                    i += 1;
                }
                line_start = i;
                line_width = 0;
                break_at = None;
                avail = rest_avail;
                continue;
            }
            match break_at.filter(|b| *b > line_start) {
                Some(b) => {
                    ranges.push((line_start, b));
                    line_start = b;
                    line_width = cells[b..i].iter().map(|c| c.width.min(rest_avail)).sum();
                    avail = rest_avail;
                    if line_width + cell_width > avail {
                        ranges.push((line_start, i));
                        line_start = i;
                        line_width = 0;
                    }
                }
                None => {
                    if i > line_start {
                        ranges.push((line_start, i));
                    }
                    line_start = i;
                    line_width = 0;
                    avail = rest_avail;
                }
            }
            break_at = None;
        }
        line_width += cell.width.min(avail);
        if cell.space && cells.get(i + 1).is_some_and(|next| !next.space) {
            break_at = Some(i + 1);
        }
        i += 1;
    }
    if line_start < cells.len() || ranges.is_empty() {
        ranges.push((line_start, cells.len()));
    }

    let mut out = Vec::with_capacity(ranges.len());
    for (n, (start, end)) in ranges.into_iter().enumerate() {
        let prefix = if n == 0 { &first_prefix } else { &rest_prefix };
        let avail = if n == 0 { first_avail } else { rest_avail };
        let mut end = end;
        while end > start && cells[end - 1].space {
            end -= 1;
        }
        let mut line_spans: Vec<Span<'static>> = prefix.clone();
        push_cells(&mut line_spans, spans, &cells[start..end], avail);
        out.push(Line::from(line_spans));
    }
    out
}

/// Wraps multi-line text in one style: each `\n`-separated line is wrapped on its own.
pub fn wrap_text(text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    text.split('\n')
        .flat_map(|l| wrap_spans(&[Span::styled(l, style)], width, &WrapOptions::default()))
        .collect()
}

/// Wraps already-built lines (each a logical line) to `width`.
pub fn wrap_lines(lines: &[Line<'_>], width: usize) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        let spans: Vec<Span<'_>> = line
            .spans
            .iter()
            .map(|s| Span::styled(s.content.as_ref(), line.style.patch(s.style)))
            .collect();
        out.extend(wrap_spans(&spans, width, &WrapOptions::default()));
    }
    out
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// A prefix that leaves at least one column for content (cut when it would not).
fn fit_prefix(prefix: &[Span<'static>], width: usize) -> Vec<Span<'static>> {
    if spans_width(prefix) < width {
        return prefix.to_vec();
    }
    let line = truncate_line(
        Line::from(prefix.to_vec()),
        width.saturating_sub(1),
        Span::raw(""),
    );
    line.spans
}

fn collect_cells(spans: &[Span<'_>]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for (si, span) in spans.iter().enumerate() {
        let text = span.content.as_ref();
        // Printable ASCII is one grapheme of width 1 per byte: skip segmentation, which
        // dominates the cost of wrapping long replies.
        let bytes = text.as_bytes();
        if bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
            cells.extend(bytes.iter().enumerate().map(|(b, &byte)| Cell {
                span: si,
                start: b,
                end: b + 1,
                width: 1,
                space: byte == b' ',
            }));
            continue;
        }
        for (start, g) in text.grapheme_indices(true) {
            let (width, space) = if g == "\t" {
                (TAB_WIDTH, true)
            } else {
                (grapheme_width(g), is_break_space(g))
            };
            cells.push(Cell {
                span: si,
                start,
                end: start + g.len(),
                width,
                space,
            });
        }
    }
    cells
}

/// Appends the graphemes of `cells` as spans, merging runs from the same input span.
fn push_cells(out: &mut Vec<Span<'static>>, spans: &[Span<'_>], cells: &[Cell], avail: usize) {
    let mut i = 0;
    while i < cells.len() {
        let span_idx = cells[i].span;
        let style = spans[span_idx].style;
        let text = spans[span_idx].content.as_ref();
        let mut buf = String::new();
        let mut run_start = cells[i].start;
        let mut run_end = run_start;
        while i < cells.len() && cells[i].span == span_idx {
            let c = cells[i];
            if c.width > avail {
                // Cannot be drawn at this width at all.
                buf.push_str(&text[run_start..run_end]);
                buf.push('?');
                run_start = c.end;
            } else if text.as_bytes()[c.start] == b'\t' {
                buf.push_str(&text[run_start..run_end]);
                buf.push_str(&" ".repeat(TAB_WIDTH.min(avail)));
                run_start = c.end;
            }
            run_end = c.end;
            i += 1;
        }
        buf.push_str(&text[run_start..run_end]);
        if !buf.is_empty() {
            out.push(Span::styled(buf, style));
        }
    }
}

/// Lays a line out in exactly `width` columns: `left` flush left, `right` flush right,
/// at least `gap` spaces between them. When they do not both fit, `right` is cut first
/// (dropped when fewer than one column remains), then `left`.
pub fn align_left_right(
    left: Line<'static>,
    right: Line<'static>,
    width: usize,
    gap: usize,
) -> Line<'static> {
    let left = truncate_line(left, width, Span::raw("..."));
    let left_width = line_width(&left);
    let right_width = line_width(&right);
    let mut spans = left.spans;
    if left_width + gap + right_width <= width {
        spans.push(Span::raw(" ".repeat(width - left_width - right_width)));
        spans.extend(right.spans);
    } else if width > left_width + gap {
        let right = truncate_line(right, width - left_width - gap, Span::raw(""));
        let right_width = line_width(&right);
        spans.push(Span::raw(" ".repeat(width - left_width - right_width)));
        spans.extend(right.spans);
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests;
