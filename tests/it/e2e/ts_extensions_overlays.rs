//! Extension overlays in the terminal UI (`ctx.ui.custom(…, { overlay: true })` and
//! `tui.showOverlay`): pi's `overlay-test`, `overlay-qa-tests` and `doom-overlay` examples
//! run in pi-rs and, where the reference pi is installed, in pi at the same terminal size
//! with the same theme, the overlay rows compared screen to screen.

use serde_json::json;

use super::beside_pi::{examples, rows, start_reference, write_theme};
use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux::Tmux;

/// The columns `from..to` of a screen row (tmux pads wide characters' second cell with
/// nothing, so columns are counted with the display width).
fn columns(row: &str, from: usize, to: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let mut out = String::new();
    let mut col = 0;
    for c in row.chars() {
        let w = c.width().unwrap_or(0);
        if col >= from && col + w <= to {
            out.push(c);
        }
        col += w;
    }
    out
}

/// The rows of a screen that hold the overlay box drawn from column `col` (its top-left
/// corner `corner`), as (row index, the box's columns).
fn box_rows(screen: &str, col: usize, width: usize, corner: char) -> Vec<(usize, String)> {
    let rows = rows(screen);
    let Some(top) = rows
        .iter()
        .position(|r| columns(r, col, col + width).starts_with(corner))
    else {
        return Vec::new();
    };
    rows.iter()
        .enumerate()
        .skip(top)
        .map(|(i, r)| (i, columns(r, col, col + width)))
        .take_while(|(_, r)| r.starts_with(['╭', '│', '╰']))
        .collect()
}

/// `/overlay-test`: what one program showed.
struct OverlayTestRun {
    opened: String,
    typed: String,
    after_escape: String,
    after_enter: String,
}

fn overlay_test_run(t: &Tmux) -> OverlayTestRun {
    t.wait_until("editor", WAIT, editor_ready);
    submit(t, "/overlay-test");
    let opened = t.wait_for("Overlay Test", WAIT);
    t.type_text("héllo");
    let typed = t.wait_for("héllo", WAIT);
    t.keys(&["Escape"]);
    let after_escape = t.wait_until("overlay closed", WAIT, |s| !s.contains("Overlay Test"));
    submit(t, "/overlay-test");
    t.wait_for("Overlay Test", WAIT);
    t.type_text("abc");
    t.wait_for("abc", WAIT);
    t.keys(&["Enter"]);
    let after_enter = t.wait_for("Search: \"abc\"", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    OverlayTestRun {
        opened,
        typed,
        after_escape,
        after_enter,
    }
}

#[test]
fn overlay_test_example_draws_over_the_screen_as_in_pi() {
    let Some(dir) = examples() else { return };
    let env = Env::new(json!({"sequence": []}));
    write_theme(&env);
    let extensions = format!("-e {}", dir.join("overlay-test.ts").display());
    let ours = overlay_test_run(&env.start(&extensions, 100, 30));

    // 70 columns (the component's `width`), centred on 100: columns 15..85.
    let boxed = box_rows(&ours.opened, 15, 70, '╭');
    assert!(boxed.len() >= 15, "{}", ours.opened);
    assert!(boxed[0].1.starts_with("╭────"), "{}", ours.opened);
    assert!(boxed.last().is_some_and(|(_, r)| r.starts_with("╰")));
    // Vertically centred on the 30 rows.
    let height = boxed.len();
    assert_eq!(boxed[0].0, (30 - height) / 2, "{}", ours.opened);
    // Typed text goes to the overlay's search field, not to the editor.
    assert!(ours.typed.contains("▶ Search: héllo"), "{}", ours.typed);
    // Escape closes it and the screen under it is back: the editor, no box rows.
    assert!(editor_ready(&ours.after_escape), "{}", ours.after_escape);
    assert!(!ours.after_escape.contains('╭'), "{}", ours.after_escape);
    assert!(
        !ours.after_escape.contains("héllo"),
        "{}",
        ours.after_escape
    );
    // Enter answers the dialog: the command notifies with the action and the query.
    assert!(ours.after_enter.contains("Search: \"abc\""));

    let Some(theirs) = start_reference(&env, &extensions, 100, 30) else {
        return;
    };
    let theirs = overlay_test_run(&theirs);
    let their_box = box_rows(&theirs.opened, 15, 70, '╭');
    assert_eq!(
        boxed, their_box,
        "ours:\n{}\ntheirs:\n{}",
        ours.opened, theirs.opened
    );
    assert_eq!(
        box_rows(&ours.typed, 15, 70, '╭'),
        box_rows(&theirs.typed, 15, 70, '╭'),
        "ours:\n{}\ntheirs:\n{}",
        ours.typed,
        theirs.typed
    );
}

/// `/overlay-anchors` (Space cycles through pi-tui's nine anchors) and `/overlay-stack`
/// (three overlays on top of each other, closed one by one from the front).
fn qa_run(t: &Tmux) -> (Vec<String>, String, String) {
    t.wait_until("editor", WAIT, editor_ready);
    submit(t, "/overlay-anchors");
    let mut anchors = Vec::new();
    for anchor in [
        "top-left",
        "top-center",
        "top-right",
        "left-center",
        "center",
        "right-center",
        "bottom-left",
        "bottom-center",
        "bottom-right",
    ] {
        anchors.push(t.wait_for(&format!("Current: {anchor} "), WAIT));
        t.keys(&["Space"]);
    }
    t.wait_for("Current: top-left ", WAIT);
    t.keys(&["Escape"]);
    t.wait_until("anchors closed", WAIT, |s| !s.contains("Anchor Test"));
    submit(t, "/overlay-stack");
    let stacked = t.wait_for("front (blue border)", WAIT);
    t.keys(&["Escape"]);
    t.wait_until("front closed", WAIT, |s| !s.contains("front (blue border)"));
    t.keys(&["Escape"]);
    t.wait_until("middle closed", WAIT, |s| {
        !s.contains("middle (green border)")
    });
    t.keys(&["Escape"]);
    let closed = t.wait_for("Closed in order:", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    (anchors, stacked, closed)
}

#[test]
fn overlay_qa_anchors_and_stacks_as_in_pi() {
    let Some(dir) = examples() else { return };
    let env = Env::new(json!({"sequence": []}));
    write_theme(&env);
    let extensions = format!("-e {}", dir.join("overlay-qa-tests.ts").display());
    let (anchors, stacked, closed) = qa_run(&env.start(&extensions, 100, 30));
    // top-left starts on the first row at the first column; bottom-right ends on the
    // last row at the last column.
    let first = rows(&anchors[0]);
    let top = first
        .iter()
        .position(|r| r.contains("Current: top-left"))
        .unwrap();
    assert!(top <= 2, "{}", anchors[0]);
    assert!(
        first[0].starts_with('╭') || first[0].starts_with('┌'),
        "{}",
        anchors[0]
    );
    let last = rows(&anchors[8]);
    assert!(last[29].chars().count() >= 100 - 1, "{}", anchors[8]);
    assert!(stacked.contains("front (blue border)"), "{stacked}");
    assert!(closed.contains("Closed in order:"), "{closed}");

    let Some(theirs) = start_reference(&env, &extensions, 100, 30) else {
        return;
    };
    let (their_anchors, their_stacked, _) = qa_run(&theirs);
    // Each anchor's box: where it starts (row, column) and its rows, in both programs
    // (what lies beside it differs: pi-rs and pi print different notes).
    let anchor_box = |screen: &str| -> (usize, usize, Vec<String>) {
        let rows = rows(screen);
        let top = rows
            .iter()
            .position(|r| r.contains("╭──────────── Anchor Test"))
            .expect("the anchor box");
        let prefix = &rows[top][..rows[top].find('╭').unwrap()];
        let col = unicode_width::UnicodeWidthStr::width(prefix);
        let boxed = rows[top..]
            .iter()
            .map(|r| columns(r, col, col + 40))
            .take_while(|r| r.starts_with(['╭', '│', '╰']))
            .collect();
        (top, col, boxed)
    };
    for (ours, theirs) in anchors.iter().zip(&their_anchors) {
        assert_eq!(
            anchor_box(ours),
            anchor_box(theirs),
            "ours:\n{ours}\ntheirs:\n{theirs}"
        );
    }
    let box_only = |s: &str| -> Vec<String> {
        rows(s)
            .into_iter()
            .map(|r| {
                // Up to the front overlay's right edge (the rest is what lies beside it).
                let boxed = columns(&r, 17, 83);
                match boxed.rfind(['│', '╮', '╯']) {
                    Some(end) => boxed[..end + '│'.len_utf8()].to_string(),
                    None => boxed,
                }
            })
            .filter(|r| r.contains("border)") || r.contains("Overlay"))
            .collect()
    };
    assert_eq!(
        box_only(&stacked),
        box_only(&their_stacked),
        "ours:\n{stacked}\ntheirs:\n{their_stacked}"
    );
}

/// `doom-overlay`: without a WAD it cannot start the game; with one it opens an overlay,
/// draws frames, takes keys and closes with Escape. pi's example downloads the shareware
/// WAD; tests have no network, so this only runs where `PI_TEST_DOOM_WAD` names one.
#[test]
fn doom_overlay_opens_draws_and_closes() {
    let Some(dir) = examples() else { return };
    let Ok(wad) = std::env::var("PI_TEST_DOOM_WAD") else {
        eprintln!("skipped: PI_TEST_DOOM_WAD does not name a doom1.wad (no network in tests)");
        return;
    };
    let env = Env::new(json!({"sequence": []}));
    let extensions = format!("-e {}", dir.join("doom-overlay").display());
    let t = env.start(&extensions, 120, 40);
    t.wait_until("editor", WAIT, editor_ready);
    submit(&t, &format!("/doom-overlay {wad}"));
    let drawn = t.wait_until("frames", WAIT, |s| s.contains('▀') || s.contains('▄'));
    let before = t.screen();
    t.keys(&["Up", "Up", "Up"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_ne!(before, t.screen(), "the game's frames change");
    t.keys(&["Escape"]);
    t.wait_until("closed", WAIT, |s| editor_ready(s) && !s.contains('▀'));
    assert!(!drawn.is_empty());
}
