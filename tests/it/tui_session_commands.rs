//! The session slash commands as pi 0.73.1 shows them (issue 18's final sweep): the words
//! and colours of their errors, warnings and notes, which notes replace each other (pi's
//! `showStatus`), the dialogs they open, and what `/compact` draws. In-process through
//! `Headless`, with a real session on the loopback model server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::Duration;

use crate::tui_app::{Env, editor_rows, submit};
use pi::modes::interactive::app::Headless;
use pi::modes::interactive::theme::ThemeToken;
use ratatui::style::Color;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

/// The colour of the first character of `text` on the screen.
fn colour_of(ui: &mut Headless, text: &str) -> Option<Color> {
    let screen = ui.screen();
    let frame = ui.frame();
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(text))
        .unwrap_or_else(|| panic!("{text:?} is not on the screen:\n{screen}"));
    let column = line[..line.find(text).unwrap()].chars().count();
    frame.cell((column as u16, row as u16)).unwrap().style().fg
}

fn token(ui: &Headless, token: ThemeToken) -> Option<Color> {
    ui.app.theme.fg(token).fg
}

/// Lets background work (a `/new`, an export) finish and draws.
async fn settle(ui: &mut Headless) {
    for _ in 0..20 {
        ui.pump();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_without_anything_to_work_on_warn_or_fail_in_pis_words_and_colours() {
    let env = Env::new(json!({"default": {"text": "the answer"}}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/copy").await;
    ui.wait_for("Error: No agent messages to copy yet.", WAIT)
        .await;
    let error = token(&ui, ThemeToken::Error);
    assert_eq!(colour_of(&mut ui, "Error: No agent messages"), error);

    // Nothing to compact: a warning, and no summary is asked for.
    submit(&mut ui, "/compact").await;
    ui.wait_for("Warning: Nothing to compact (no messages yet)", WAIT)
        .await;
    let warning = token(&ui, ThemeToken::Warning);
    assert_eq!(colour_of(&mut ui, "Warning: Nothing to compact"), warning);
    assert!(!ui.transcript().contains("[compaction]"));
    assert!(env.server.requests().is_empty());

    // `/name` alone says how to use it (no dialog: what is typed next goes to the editor).
    submit(&mut ui, "/name").await;
    ui.wait_for("Warning: Usage: /name <name>", WAIT).await;
    ui.type_text("typed after");
    let screen = ui.screen();
    assert!(
        editor_rows(&screen)
            .iter()
            .any(|r| r.contains("typed after")),
        "{screen}"
    );
    ui.keys(&["C-c"]);

    submit(&mut ui, "hello").await;
    ui.wait_for("the answer", WAIT).await;
    submit(&mut ui, "/name Parser work").await;
    ui.wait_for("Session name set: Parser work", WAIT).await;
    submit(&mut ui, "/name").await;
    ui.wait_for("Session name: Parser work", WAIT).await;
    let dim = token(&ui, ThemeToken::Dim);
    assert_eq!(colour_of(&mut ui, "Session name: Parser work"), dim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_redraws_the_chat_from_the_summary_and_refuses_twice_as_pi() {
    let env = Env::new(
        json!({
            "rules": [{"match": "You write summaries of working sessions",
                       "reply": {"text": "## Goal\nThe summary."}}],
            "default": {"text": "the answer"}
        }),
        json!({}),
    );
    let mut ui = env.ui(80, 40);
    submit(&mut ui, "hello").await;
    ui.wait_for("the answer", WAIT).await;
    submit(&mut ui, "/compact").await;
    ui.wait_for("Compacted from", WAIT).await;
    // pi draws the chat again from the compacted context (the summary first, then the
    // messages kept) and adds the new summary below it.
    let all = ui.transcript();
    let summaries: Vec<usize> = all.match_indices("[compaction]").map(|(i, _)| i).collect();
    let answer = all.find("the answer").unwrap();
    assert_eq!(summaries.len(), 2, "{all}");
    assert!(summaries[0] < answer && answer < summaries[1], "{all}");

    submit(&mut ui, "/compact").await;
    ui.wait_for("Error: Compaction failed: Already compacted", WAIT)
        .await;
    let error = token(&ui, ThemeToken::Error);
    assert_eq!(colour_of(&mut ui, "Error: Compaction failed"), error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_copy_and_clone_notes_replace_each_other_and_new_session_is_an_accent_line() {
    let env = Env::new(json!({"default": {"text": "the answer"}}), json!({}));
    let mut ui = env.ui(100, 30);
    submit(&mut ui, "hello").await;
    ui.wait_for("the answer", WAIT).await;
    submit(&mut ui, "/export first.jsonl").await;
    ui.wait_for("Session exported to:", WAIT).await;
    submit(&mut ui, "/export").await;
    let screen = ui.wait_for("Session exported to: pi-session-", WAIT).await;
    // The default file is named as pi names it (it is written to the project folder),
    // and the second note took the place of the first.
    assert!(!screen.contains("first.jsonl"), "{screen}");
    assert_eq!(ui.transcript().matches("Session exported to:").count(), 1);
    assert!(std::fs::read_dir(env.cwd()).unwrap().any(|e| {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        name.starts_with("pi-session-") && name.ends_with(".html")
    }));
    assert!(env.cwd().join("first.jsonl").is_file());

    submit(&mut ui, "/new").await;
    ui.wait_for("✓ New session started", WAIT).await;
    settle(&mut ui).await;
    let accent = token(&ui, ThemeToken::Accent);
    assert_eq!(colour_of(&mut ui, "✓ New session started"), accent);
    // pi's note has a blank row below it as well as above, before the editor's spacer.
    let screen = ui.screen();
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("✓ New session started"))
        .unwrap();
    assert!(lines[at - 1].trim().is_empty(), "{screen}");
    assert!(lines[at + 1].trim().is_empty(), "{screen}");
    assert!(lines[at + 2].trim().is_empty(), "{screen}");
    assert!(lines[at + 3].starts_with("──"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_asks_in_pis_selector_and_escape_says_cancelled() {
    let env = Env::new(json!({"default": {"text": "the answer"}}), json!({}));
    let mut ui = env.ui(80, 30);
    submit(&mut ui, "/import").await;
    ui.wait_for("Error: Usage: /import <path.jsonl>", WAIT)
        .await;
    submit(&mut ui, "/import saved/branch.jsonl").await;
    let screen = ui
        .wait_for("Replace current session with saved/branch.jsonl?", WAIT)
        .await;
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let top = lines
        .iter()
        .position(|l| l.contains("Import session"))
        .unwrap();
    // pi's ExtensionSelectorComponent: a rule, a blank row, the title, a blank row, the
    // answers, a blank row, the key hints, a blank row, a rule.
    assert!(lines[top - 2].starts_with("──"), "{screen}");
    assert_eq!(
        lines[top - 1..top + 9],
        [
            "",
            " Import session",
            " Replace current session with saved/branch.jsonl?",
            "",
            " → Yes",
            "   No",
            "",
            " ↑↓ navigate  enter select  escape/ctrl+c cancel",
            "",
            &"─".repeat(80),
        ][..],
        "{screen}"
    );
    // No wrapping around: Up on the first answer stays there.
    ui.keys(&["Up"]);
    assert!(ui.screen().contains(" → Yes"));
    ui.keys(&["Escape"]);
    ui.wait_for("Import cancelled", WAIT).await;
    let dim = token(&ui, ThemeToken::Dim);
    assert_eq!(colour_of(&mut ui, "Import cancelled"), dim);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_is_not_a_command_in_pi_and_goes_to_the_model() {
    let env = Env::new(json!({"default": {"text": "the answer"}}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/exit").await;
    ui.wait_for("the answer", WAIT).await;
    assert!(!ui.app.quit);
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().contains("/exit"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_label_is_typed_in_pis_one_line_field() {
    let env = Env::new(json!({"default": {"text": "the answer"}}), json!({}));
    let mut ui = env.ui(80, 30);
    submit(&mut ui, "hello").await;
    ui.wait_for("the answer", WAIT).await;
    submit(&mut ui, "/tree").await;
    ui.wait_for("Session Tree", WAIT).await;
    ui.keys(&["Up", "S-L"]);
    ui.wait_for("Label (empty to remove):", WAIT).await;
    ui.type_text("parser");
    let screen = ui.screen();
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = rows
        .iter()
        .position(|r| r.contains("Label (empty to remove):"))
        .unwrap();
    // pi's `Input`: `> text` on the row below, then the hints (no editor box).
    assert_eq!(rows[at + 1], "  > parser", "{screen}");
    assert!(rows[at + 2].contains("enter save"), "{screen}");
    ui.keys(&["Enter"]);
    ui.wait_for("[parser] user: hello", WAIT).await;
}
