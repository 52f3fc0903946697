use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use serde_json::json;

use super::*;
use crate::modes::interactive::ansi::encode_line;
use crate::modes::interactive::text::line_text;

fn options(value: serde_json::Value) -> OverlayOptions {
    OverlayOptions::from_json(Some(&value)).expect("options")
}

fn layout(value: serde_json::Value, height: usize, w: usize, h: usize) -> (usize, usize, usize) {
    let l = resolve_layout(&options(value), height, w, h);
    (l.width, l.row, l.col)
}

#[test]
fn default_layout_is_centred_and_at_most_80_columns() {
    assert_eq!(layout(json!({}), 10, 120, 40), (80, 15, 20));
    assert_eq!(layout(json!({}), 10, 60, 40), (60, 15, 0));
}

#[test]
fn anchors_put_the_overlay_at_edges_and_corners() {
    let at = |anchor: &str| layout(json!({"anchor": anchor, "width": 20}), 4, 100, 30);
    assert_eq!(at("top-left"), (20, 0, 0));
    assert_eq!(at("top-center"), (20, 0, 40));
    assert_eq!(at("top-right"), (20, 0, 80));
    assert_eq!(at("left-center"), (20, 13, 0));
    assert_eq!(at("right-center"), (20, 13, 80));
    assert_eq!(at("bottom-left"), (20, 26, 0));
    assert_eq!(at("bottom-center"), (20, 26, 40));
    assert_eq!(at("bottom-right"), (20, 26, 80));
}

#[test]
fn percentages_margins_offsets_and_clamping() {
    // 50% of 100 columns; row/col percentages of the free space.
    assert_eq!(
        layout(
            json!({"width": "50%", "row": "100%", "col": "0%"}),
            5,
            100,
            30
        ),
        (50, 25, 0)
    );
    // Margins shrink the space; the overlay stays inside them.
    assert_eq!(
        layout(
            json!({"anchor": "bottom-right", "width": 30, "margin": 2}),
            5,
            100,
            30
        ),
        (30, 23, 68)
    );
    assert_eq!(
        layout(
            json!({"anchor": "top-left", "margin": {"top": 1, "left": 3}, "width": 10}),
            2,
            40,
            10
        ),
        (10, 1, 3)
    );
    // Offsets past the edge are clamped back.
    assert_eq!(
        layout(
            json!({"anchor": "top-left", "offsetX": -5, "offsetY": -5, "width": 10}),
            2,
            40,
            10
        ),
        (10, 0, 0)
    );
    // minWidth wins over a smaller width but not over the screen.
    assert_eq!(
        layout(json!({"width": 10, "minWidth": 30}), 2, 100, 10).0,
        30
    );
    assert_eq!(
        layout(json!({"width": 10, "minWidth": 300}), 2, 100, 10).0,
        100
    );
    // An absolute row below the screen is pulled up so the overlay fits.
    assert_eq!(
        layout(json!({"row": 50, "col": 2, "width": 10}), 4, 40, 10),
        (10, 6, 2)
    );
    // A bad percentage falls back to the centre.
    assert_eq!(
        layout(json!({"row": "half", "width": 10}), 4, 40, 10),
        (10, 3, 15)
    );
}

#[test]
fn max_height_is_clamped_to_the_screen() {
    let l = resolve_layout(&options(json!({"maxHeight": "50%"})), 40, 80, 24);
    assert_eq!(l.max_height, Some(12));
    assert_eq!(l.row, 6);
    let l = resolve_layout(&options(json!({"maxHeight": 100, "margin": 2})), 40, 80, 24);
    assert_eq!(l.max_height, Some(20));
}

#[test]
fn unreadable_options_are_an_error() {
    assert!(OverlayOptions::from_json(Some(&json!({"width": [1]}))).is_err());
    assert!(OverlayOptions::from_json(Some(&json!("wide"))).is_err());
    assert_eq!(
        OverlayOptions::from_json(None),
        Ok(OverlayOptions::default())
    );
}

fn red() -> Style {
    Style::default().fg(Color::Red)
}

#[test]
fn an_overlay_replaces_the_middle_of_a_row_and_keeps_both_sides() {
    let base = Line::from(vec![Span::styled("abcdefghij", red())]);
    let over = Line::from(vec![Span::styled("XY", Style::default().bg(Color::Blue))]);
    let line = composite_line(&base, &over, 3, 4, 10);
    assert_eq!(line_text(&line), "abcXY  hij");
    // The base keeps its colour on both sides; the overlay's padding is unstyled.
    assert_eq!(line.spans[0].style, red());
    assert_eq!(line.spans.last().map(|s| s.style), Some(red()));
    assert!(
        line.spans
            .iter()
            .any(|s| s.content == "  " && s.style == Style::default())
    );
}

#[test]
fn wide_characters_cut_by_an_edge_become_spaces() {
    // 日 covers columns 2-3, 本 4-5, 語 6-7: an overlay over columns 3..7 cuts 日 and 語.
    let base = Line::from("ab日本語cd");
    let line = composite_line(&base, &Line::from("1234"), 3, 4, 10);
    assert_eq!(line_text(&line), "ab 1234 cd");
    assert_eq!(crate::modes::interactive::text::line_width(&line), 10);
    // A wide character in the overlay that would cross its right edge is dropped.
    let line = composite_line(&Line::from("abcdefghij"), &Line::from("x日本"), 0, 4, 10);
    assert_eq!(line_text(&line), "x日 efghij");
}

#[test]
fn styles_do_not_leak_across_the_overlay_edges() {
    let base = Line::from(vec![
        Span::raw("ab"),
        Span::styled("cdefgh", Style::default().bg(Color::Green)),
    ]);
    let over = Line::from(vec![Span::styled("XX", red())]);
    let encoded = encode_line(&composite_line(&base, &over, 3, 2, 10), 10);
    // Every span starts from a reset: the overlay's red starts and ends at its edges and
    // the base's green background resumes after it.
    let red_at = encoded.find("\x1b[31m").expect("red");
    let xx = encoded.find("XX").expect("overlay text");
    assert!(red_at < xx);
    let after = &encoded[xx..];
    assert!(after.starts_with("XX\x1b[0m\x1b[42m"), "{encoded:?}");
}

#[test]
fn a_line_background_is_kept_under_and_beside_the_overlay() {
    let base = Line::from("ab").style(Style::default().bg(Color::Blue));
    let line = composite_line(&base, &Line::from("X"), 4, 1, 8);
    assert_eq!(line_text(&line), "ab  X   ");
    assert!(
        line.spans
            .last()
            .is_some_and(|s| s.style.bg == Some(Color::Blue))
    );
}

#[test]
fn composite_pads_short_content_and_uses_screen_rows() {
    let mut content: Vec<Line<'static>> = vec![Line::from("one"), Line::from("two")];
    let top = composite(
        &mut content,
        &[Placed {
            lines: vec![Line::from("OV")],
            row: 3,
            col: 1,
            width: 2,
        }],
        10,
        5,
    );
    assert_eq!(top, 0);
    assert_eq!(content.len(), 5);
    assert_eq!(line_text(&content[3]), " OV");
    // Taller content: rows are counted from the first row of the screen.
    let mut content: Vec<Line<'static>> = (0..8).map(|i| Line::from(format!("row{i}"))).collect();
    let top = composite(
        &mut content,
        &[
            Placed {
                lines: vec![Line::from("AAAA")],
                row: 0,
                col: 0,
                width: 4,
            },
            Placed {
                lines: vec![Line::from("B")],
                row: 0,
                col: 2,
                width: 1,
            },
        ],
        10,
        5,
    );
    assert_eq!(top, 3);
    assert_eq!(line_text(&content[3]), "AABA");
    assert_eq!(line_text(&content[2]), "row2");
}
