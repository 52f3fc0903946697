//! Extension overlays (`ctx.ui.custom(…, { overlay: true })` and the factory's
//! `tui.showOverlay`): where an overlay goes on the screen, and how its lines are laid over
//! the rows underneath.
//!
//! The placement rules are pi-tui's (`OverlayOptions`): a width (columns or a percentage of
//! the terminal, 80 columns by default, at least `minWidth`), an optional `maxHeight`, a
//! position from an anchor (`center`, `top-left`, …, `right-center`) or from `row` / `col`
//! (absolute, or a percentage of the free space), shifted by `offsetX` / `offsetY`, kept
//! inside the terminal minus its `margin`. Positions are rows and columns of the visible
//! screen: [`composite`] lays the overlays over the last screen-height rows of the content,
//! padding it with blank rows first when it is shorter than the screen, as pi-tui does.
//!
//! Compositing works on styled lines, so the rows underneath keep their colours left and
//! right of an overlay and no style leaks across its edges. A wide character that an edge
//! cuts in two becomes spaces (pi-tui keeps or drops it whole, shifting the rest of the row
//! by a column).

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::text::grapheme_width;

pub use crate::extensions::overlay_options::{Margin, OverlayOptions, SizeValue};

/// Where an overlay goes: its width, its top-left corner on the screen and the most rows
/// it may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverlayLayout {
    pub width: usize,
    pub row: usize,
    pub col: usize,
    pub max_height: Option<usize>,
}

/// JavaScript's number → integer for these options (pi-tui works with whatever numbers it
/// gets; fractions of a cell make no sense on a terminal).
fn int(v: f64) -> i64 {
    if v.is_finite() { v.floor() as i64 } else { 0 }
}

/// A percentage string (`"12.5%"`) as a fraction, or `None`.
fn percent(text: &str) -> Option<f64> {
    let number = text.strip_suffix('%')?;
    let valid = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.chars().next().is_some_and(|c| c.is_ascii_digit())
        && number.chars().last().is_some_and(|c| c.is_ascii_digit())
        && number.matches('.').count() <= 1;
    if !valid {
        return None;
    }
    number.parse::<f64>().ok().map(|p| p / 100.0)
}

/// A size: columns as given, or a percentage of `reference` (rounded down).
fn size(value: &Option<SizeValue>, reference: i64) -> Option<i64> {
    match value.as_ref()? {
        SizeValue::Number(n) => Some(int(*n)),
        SizeValue::Text(t) => percent(t).map(|p| (reference as f64 * p).floor() as i64),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Start,
    Middle,
    End,
}

/// The vertical and horizontal alignment an anchor names (unknown anchors are centred).
fn anchor_edges(anchor: &str) -> (Edge, Edge) {
    match anchor {
        "top-left" => (Edge::Start, Edge::Start),
        "top-center" => (Edge::Start, Edge::Middle),
        "top-right" => (Edge::Start, Edge::End),
        "bottom-left" => (Edge::End, Edge::Start),
        "bottom-center" => (Edge::End, Edge::Middle),
        "bottom-right" => (Edge::End, Edge::End),
        "left-center" => (Edge::Middle, Edge::Start),
        "right-center" => (Edge::Middle, Edge::End),
        _ => (Edge::Middle, Edge::Middle),
    }
}

fn align(edge: Edge, size: i64, available: i64, margin: i64) -> i64 {
    match edge {
        Edge::Start => margin,
        Edge::End => margin + available - size,
        Edge::Middle => margin + (available - size).div_euclid(2),
    }
}

/// A `row` / `col` option: absolute, or a percentage of the free space (0% = first,
/// 100% = last position that keeps the overlay inside); anything else falls back to the
/// centre, as in pi-tui.
fn position(
    value: &SizeValue,
    size: i64,
    available: i64,
    margin: i64,
    fallback: impl FnOnce() -> i64,
) -> i64 {
    match value {
        SizeValue::Number(n) => int(*n),
        SizeValue::Text(t) => match percent(t) {
            Some(p) => margin + ((available - size).max(0) as f64 * p).floor() as i64,
            None => fallback(),
        },
    }
}

/// Places an overlay of `height` rows on a `term_width` × `term_height` screen (pi-tui's
/// `resolveOverlayLayout`). The width and `max_height` do not depend on `height`.
pub fn resolve_layout(
    options: &OverlayOptions,
    height: usize,
    term_width: usize,
    term_height: usize,
) -> OverlayLayout {
    let (tw, th) = (term_width as i64, term_height as i64);
    let (top, right, bottom, left) = match &options.margin {
        None => (0, 0, 0, 0),
        Some(Margin::All(m)) => (int(*m), int(*m), int(*m), int(*m)),
        Some(Margin::Sides {
            top,
            right,
            bottom,
            left,
        }) => {
            let side = |v: &Option<f64>| v.map_or(0, int);
            (side(top), side(right), side(bottom), side(left))
        }
    };
    let (top, right, bottom, left) = (top.max(0), right.max(0), bottom.max(0), left.max(0));
    let avail_width = (tw - left - right).max(1);
    let avail_height = (th - top - bottom).max(1);

    let mut width = size(&options.width, tw).unwrap_or(avail_width.min(80));
    if let Some(min) = options.min_width {
        width = width.max(int(min));
    }
    let width = width.min(avail_width).max(1);

    let max_height = size(&options.max_height, th).map(|m| m.min(avail_height).max(1));
    let height = height as i64;
    let effective = max_height.map_or(height, |m| height.min(m));

    let (vertical, horizontal) = anchor_edges(options.anchor.as_deref().unwrap_or("center"));
    let mut row = match &options.row {
        Some(value) => position(value, effective, avail_height, top, || {
            align(Edge::Middle, effective, avail_height, top)
        }),
        None => align(vertical, effective, avail_height, top),
    };
    let mut col = match &options.col {
        Some(value) => position(value, width, avail_width, left, || {
            align(Edge::Middle, width, avail_width, left)
        }),
        None => align(horizontal, width, avail_width, left),
    };
    row += options.offset_y.map_or(0, int);
    col += options.offset_x.map_or(0, int);
    let row = row.min(th - bottom - effective).max(top);
    let col = col.min(tw - right - width).max(left);
    OverlayLayout {
        width: width as usize,
        row: row as usize,
        col: col as usize,
        max_height: max_height.map(|m| m as usize),
    }
}

/// An overlay ready to be laid over the screen: its lines (already cut to its maximum
/// height) and its place.
#[derive(Debug, Clone)]
pub struct Placed {
    pub lines: Vec<Line<'static>>,
    pub row: usize,
    pub col: usize,
    pub width: usize,
}

/// Lays `overlays` (bottom first) over the last `term_height` rows of `content`, padding
/// it with blank rows to the screen's height (or to the lowest overlay row) first. Returns
/// the index of the first row of the screen in `content`.
pub fn composite(
    content: &mut Vec<Line<'static>>,
    overlays: &[Placed],
    term_width: usize,
    term_height: usize,
) -> usize {
    let needed = overlays
        .iter()
        .map(|o| o.row + o.lines.len())
        .max()
        .unwrap_or(0);
    let working = content.len().max(term_height).max(needed);
    content.resize(working, Line::default());
    let top = working - term_height.min(working);
    for overlay in overlays {
        for (i, line) in overlay.lines.iter().enumerate() {
            let index = top + overlay.row + i;
            if let Some(base) = content.get_mut(index) {
                *base = composite_line(base, line, overlay.col, overlay.width, term_width);
            }
        }
    }
    top
}

/// A line's spans with the line's own style applied under each, and its background
/// filling the row up to `width` when it has one (what the terminal would show).
fn flatten(line: &Line<'static>, width: usize) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = line
        .spans
        .iter()
        .map(|s| Span::styled(s.content.clone(), line.style.patch(s.style)))
        .collect();
    if line.style.bg.is_some() {
        let used: usize = spans.iter().map(span_width).sum();
        if used < width {
            spans.push(Span::styled(" ".repeat(width - used), line.style));
        }
    }
    spans
}

fn span_width(span: &Span<'_>) -> usize {
    span.content.graphemes(true).map(grapheme_width).sum()
}

/// The columns `start..end` of `spans`, in their styles. A wide character only partly
/// inside becomes spaces (in its style) for the columns that are inside. Returns the
/// spans and their width (less than `end - start` when the line is shorter).
pub fn slice_columns(
    spans: &[Span<'static>],
    start: usize,
    end: usize,
) -> (Vec<Span<'static>>, usize) {
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut width = 0;
    let mut column = 0;
    let push = |out: &mut Vec<Span<'static>>, text: &str, style: Style| match out.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => out.push(Span::styled(text.to_string(), style)),
    };
    'spans: for span in spans {
        for g in span.content.graphemes(true) {
            if column >= end {
                break 'spans;
            }
            let w = grapheme_width(g);
            let (from, to) = (column, column + w);
            column = to;
            if w == 0 || to <= start {
                continue;
            }
            if from >= start && to <= end {
                push(&mut out, g, span.style);
                width += w;
            } else {
                let inside = to.min(end) - from.max(start);
                push(&mut out, &" ".repeat(inside), span.style);
                width += inside;
            }
        }
    }
    (out, width)
}

/// `base` with `overlay` (cut or padded to `width` columns) laid over it from column
/// `col`; the result is at most `total` columns wide.
pub fn composite_line(
    base: &Line<'static>,
    overlay: &Line<'static>,
    col: usize,
    width: usize,
    total: usize,
) -> Line<'static> {
    let col = col.min(total);
    let width = width.min(total - col);
    let base_spans = flatten(base, total);
    let (mut spans, before) = slice_columns(&base_spans, 0, col);
    if before < col {
        spans.push(Span::raw(" ".repeat(col - before)));
    }
    let (over, over_width) = slice_columns(&flatten(overlay, width), 0, width);
    spans.extend(over);
    if over_width < width {
        spans.push(Span::raw(" ".repeat(width - over_width)));
    }
    let (after, _) = slice_columns(&base_spans, col + width, total);
    spans.extend(after);
    Line::from(spans)
}

#[cfg(test)]
mod tests;
