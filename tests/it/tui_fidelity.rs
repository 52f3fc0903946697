//! The interactive UI next to pi (issue 18): blocks the user asks for go into the chat and
//! scroll with it, closing a dialog that filled the screen draws the history again, a
//! running bash tool shows a live "Elapsed", and the changelog follows pi's
//! `lastChangelogVersion`. In-process through `Headless`; where bytes on a terminal
//! matter, the app's own `draw` is fed to a vt100 screen.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::num::NonZeroU16;
use std::time::Duration;

use crate::tui_app::{Env, submit};
use pi::modes::interactive::app::{Headless, UiEvent};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

/// What a terminal of the Headless's size shows after the app drew everything so far
/// through its real renderer (the bytes `draw` writes, fed to a vt100 emulator).
struct Terminal {
    parser: vt100::Parser,
}

impl Terminal {
    fn new(width: u16, height: u16) -> Terminal {
        let nz = |n| NonZeroU16::new(n).unwrap();
        Terminal {
            parser: vt100::Parser::new(nz(height), nz(width), 10_000),
        }
    }

    /// Draws frames until the app has nothing left to print (a frame may leave history
    /// for the next one when its time budget is used up).
    fn draw(&mut self, ui: &mut Headless) {
        loop {
            let mut bytes = Vec::new();
            ui.app.draw(&mut bytes).unwrap();
            self.parser.process(&bytes);
            if !ui.app.dirty {
                return;
            }
        }
    }

    fn screen(&self) -> String {
        self.parser.screen().contents()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hotkeys_session_and_changelog_are_chat_blocks_that_scroll_like_pi() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/hotkeys").await;
    let screen = ui.screen();
    // The editor is back at once (no dialog waiting for a key) ...
    assert!(!screen.contains("any key to close"), "{screen}");
    ui.type_text("still typing");
    assert!(ui.screen().contains("still typing"));
    // ... and the whole block is in the chat, its top in the scrollback.
    let all = ui.transcript();
    for part in [
        "Keyboard Shortcuts",
        "Navigation",
        "Editing",
        "Slash commands",
    ] {
        assert!(all.contains(part), "{part} missing:\n{all}");
    }
    ui.keys(&["C-c"]);
    submit(&mut ui, "/session").await;
    // Taller than what is left of 24 rows: its top has scrolled into the scrollback.
    let all = ui.transcript();
    assert!(
        all.contains("Session Info") && ui.screen().contains("Tool Results:"),
        "{all}"
    );
    submit(&mut ui, "/changelog").await;
    let all = ui.transcript();
    assert!(all.contains("What's New"), "{all}");
    // pi's order: the oldest section first, so the newest ends right above the editor.
    assert!(all.contains("Unreleased"), "{all}");
    let screen = ui.screen();
    assert!(
        !screen.contains("What's New"),
        "the block is taller than the screen"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_dialog_taller_than_the_screen_draws_the_chat_again() {
    let env = Env::new(json!({"default": {"text": "an answer"}}), json!({}));
    let mut ui = env.ui(60, 12);
    let mut term = Terminal::new(60, 12);
    term.draw(&mut ui);
    for i in 0..3 {
        submit(&mut ui, &format!("question {i}")).await;
        let start = std::time::Instant::now();
        while ui.transcript().matches("an answer").count() <= i || ui.screen().contains("Working") {
            assert!(start.elapsed() < WAIT, "no answer {i}:\n{}", ui.screen());
            ui.pump();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        term.draw(&mut ui);
    }
    // /settings is taller than 12 rows: it pushes the chat off the screen.
    submit(&mut ui, "/settings").await;
    term.draw(&mut ui);
    assert!(!term.screen().contains("question 2"), "{}", term.screen());
    ui.keys(&["Escape"]);
    term.draw(&mut ui);
    let screen = term.screen();
    // Without the full redraw the editor would sit on the top row over blank rows.
    assert!(
        screen.contains("question 2") && screen.contains("an answer"),
        "{screen}"
    );
    let first = screen.lines().next().unwrap_or_default();
    assert!(!first.starts_with("───"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_bash_tool_shows_a_live_elapsed_time_then_took() {
    let env = Env::new(
        json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2; echo done"}}]},
            {"text": "finished"}
        ]}),
        json!({}),
    );
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "run it").await;
    let screen = ui.wait_for("Elapsed 0.0s", WAIT).await;
    assert!(screen.contains("$ sleep 2; echo done"), "{screen}");
    // A second later a tick moves the clock on, without any output from the command.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    ui.pump();
    ui.handle(UiEvent::Tick);
    let screen = ui.screen();
    let shown: f64 = screen
        .split("Elapsed ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no elapsed time:\n{screen}"));
    assert!((1.0..2.0).contains(&shown), "{screen}");
    let screen = ui.wait_for("finished", WAIT).await;
    assert!(screen.contains("Took 2."), "{screen}");
    assert!(!screen.contains("Elapsed"), "{screen}");
}

fn settings_json(env: &Env) -> serde_json::Value {
    let text = std::fs::read_to_string(env.agent().join("settings.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whats_new_after_an_update_follows_last_changelog_version() {
    let version = env!("CARGO_PKG_VERSION");
    // First run: nothing shown, the version recorded.
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    assert!(!ui.transcript().contains("What's New"));
    assert_eq!(settings_json(&env)["lastChangelogVersion"], json!(version));
    // Started again on the same version: still nothing.
    let mut ui = env.ui(80, 24);
    assert!(!ui.transcript().contains("What's New"));

    // After an update from an older version: the newer sections, then recorded.
    let env = Env::new(
        json!({"default": {"text": "ok"}}),
        json!({"lastChangelogVersion": "0.0.1"}),
    );
    let mut ui = env.ui(80, 24);
    let all = ui.transcript();
    assert!(
        all.contains("What's New") && all.contains("Unreleased"),
        "{all}"
    );
    assert_eq!(settings_json(&env)["lastChangelogVersion"], json!(version));

    // collapseChangelog: one line instead.
    let env = Env::new(
        json!({"default": {"text": "ok"}}),
        json!({"lastChangelogVersion": "0.0.1", "collapseChangelog": true}),
    );
    let mut ui = env.ui(80, 24);
    let all = ui.transcript();
    assert!(
        all.contains(&format!(
            "Updated to v{version}. Use /changelog to view full changelog."
        )),
        "{all}"
    );
    assert!(!all.contains("What's New"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_grows_to_pis_height_before_scrolling() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    // pi: 30 % of the terminal's rows, at least 5.
    for (height, rows) in [(40u16, 12usize), (24, 7), (12, 5)] {
        let mut ui = env.ui(80, height);
        let text: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
        ui.app.editor.set_text(&text.join("\n"));
        let screen = ui.screen();
        let shown = crate::tui_app::editor_rows(&screen);
        assert_eq!(shown.len(), rows, "{height} rows:\n{screen}");
        ui.resize(80, 40);
        assert_eq!(crate::tui_app::editor_rows(&ui.screen()).len(), 12);
    }
}
