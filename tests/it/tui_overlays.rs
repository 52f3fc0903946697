//! Extension overlays in the in-process app (`Headless`): an overlay is laid over the rows
//! on screen (history rows included) at its place, hiding it or closing it gives the
//! screen back as it was, a capturing overlay takes the keyboard from the editor and gives
//! it back, and one whose `visible` callback says no is neither drawn nor focused. (The
//! node side, keys reaching the component and the comparison with pi are in
//! `e2e::ts_extensions_overlays`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;

use pi::extensions::{OverlayAction, OverlaySpec, UiMethod, UiRequest};
use pi::modes::interactive::app::Headless;
use pi::modes::interactive::overlays::OverlayOptions;
use serde_json::{Value, json};

use crate::tui_app::Env;

fn request(method: UiMethod) -> UiRequest {
    UiRequest {
        id: "ui-1".into(),
        extension_path: PathBuf::from("/ext/overlay.ts"),
        method,
        reply: None,
    }
}

fn show(ui: &mut Headless, id: &str, lines: &[&str], options: Value) {
    ui.app.on_extension_ui(request(UiMethod::OverlayShow {
        custom_id: id.into(),
        lines: lines.iter().map(|l| l.to_string()).collect(),
        input: None,
        overlay: Box::new(OverlaySpec {
            options: OverlayOptions::from_json(Some(&options)).unwrap(),
            visible: true,
            width: None,
        }),
    }));
}

fn rows(screen: &str) -> Vec<String> {
    screen.lines().map(str::to_string).collect()
}

/// The row with its columns `from..from + text width` replaced by `text` (ASCII rows).
fn overlaid(row: &str, from: usize, text: &str) -> String {
    let mut chars: Vec<char> = format!("{row:<60}").chars().collect();
    for (i, c) in text.chars().enumerate() {
        chars[from + i] = c;
    }
    chars.into_iter().collect::<String>().trim_end().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn overlays_cover_the_screen_and_give_it_back() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let mut ui = env.ui(60, 12);
    for i in 0..6 {
        ui.app.on_extension_ui(request(UiMethod::Notify {
            message: format!("note number {i}"),
            level: pi::extensions::NotifyLevel::Info,
        }));
    }
    let before = ui.screen();
    let before_rows = rows(&before);
    assert_eq!(before_rows.len(), 12, "{before}");

    // Top-left at row 1, column 2: over a history row (a note) and the rows below it.
    show(
        &mut ui,
        "h1",
        &["+--+", "|ok|", "+--+"],
        json!({"anchor": "top-left", "width": 4, "margin": {"top": 1, "left": 2}}),
    );
    let shown = rows(&ui.screen());
    assert_eq!(shown.len(), 12);
    assert_eq!(shown[0], before_rows[0]);
    assert_eq!(shown[1], overlaid(&before_rows[1], 2, "+--+"));
    assert_eq!(shown[2], overlaid(&before_rows[2], 2, "|ok|"));
    assert_eq!(shown[3], overlaid(&before_rows[3], 2, "+--+"));
    assert_eq!(shown[4..], before_rows[4..]);

    // It has the keyboard: typing does not reach the editor.
    ui.type_text("zz");
    assert!(!ui.screen().contains("zz"));

    // A second one, bottom-right, on top; hidden and shown again through its handle.
    show(
        &mut ui,
        "h2",
        &["AB", "CD"],
        json!({"anchor": "bottom-right", "width": 2}),
    );
    let two = rows(&ui.screen());
    assert_eq!(two[10], overlaid(&before_rows[10], 58, "AB"));
    assert_eq!(two[11], overlaid(&before_rows[11], 58, "CD"));
    ui.app.on_extension_ui(request(UiMethod::OverlayHandle {
        custom_id: "h2".into(),
        action: OverlayAction::SetHidden(true),
    }));
    assert_eq!(rows(&ui.screen()), shown);

    // Closing both gives the screen back, and the keyboard to the editor.
    for id in ["h2", "h1"] {
        ui.app.on_extension_ui(request(UiMethod::CustomClose {
            custom_id: id.into(),
        }));
    }
    assert_eq!(ui.screen(), before);
    ui.type_text("yy");
    assert!(ui.screen().contains("yy"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_overlay_its_visible_callback_hides_is_not_drawn_or_focused() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let mut ui = env.ui(60, 12);
    let before = ui.screen();
    show(
        &mut ui,
        "h1",
        &["PANEL"],
        json!({"anchor": "center", "width": 5}),
    );
    assert!(ui.screen().contains("PANEL"));
    ui.app.on_extension_ui(request(UiMethod::CustomRender {
        custom_id: "h1".into(),
        lines: vec!["PANEL".into()],
        visible: Some(false),
        width: Some(5),
    }));
    assert_eq!(ui.screen(), before);
    // Not visible: keys go to the editor again.
    ui.type_text("typed");
    assert!(ui.screen().contains("typed"));
    // A non-capturing overlay never takes the keyboard.
    show(
        &mut ui,
        "h2",
        &["TIMER"],
        json!({"anchor": "top-right", "width": 5, "nonCapturing": true}),
    );
    ui.type_text("more");
    let screen = ui.screen();
    assert!(
        screen.contains("TIMER") && screen.contains("typedmore"),
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn overlays_are_placed_again_after_a_resize() {
    let env = Env::new(json!({"sequence": []}), json!({}));
    let mut ui = env.ui(60, 12);
    show(
        &mut ui,
        "h1",
        &["[BOX]"],
        json!({"anchor": "bottom-right", "width": 5}),
    );
    assert!(rows(&ui.screen())[11].ends_with("[BOX]"));
    ui.resize(40, 10);
    let resized = rows(&ui.screen());
    assert_eq!(resized.len(), 10);
    assert!(resized[9].ends_with("[BOX]"), "{resized:?}");
    assert_eq!(resized[9].chars().count(), 40);
}
