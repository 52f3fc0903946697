//! Leaving pi-rs and starting it on a saved session, in a real terminal, as pi 0.73.1
//! does it: `/quit` leaves the last screen in place, `pi -r` shows the picker alone and
//! keeps it after Escape, and `pi -c` draws the conversation from the top row.

use super::env::{Env, WAIT, converse, editor_ready, submit};
use crate::support::tmux;
use serde_json::json;

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

/// A project with one saved conversation ("first question" → "first answer").
fn saved_session() -> Env {
    let env = Env::new(json!({"sequence": [{"text": "first answer"}],
                              "default": {"text": "later answer"}}));
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    converse(&t, &[("first question", "first answer")]);
    submit(&t, "/quit");
    t.wait_until("exit", WAIT, |_| t.exited());
    // pi leaves the screen as it was: the conversation, the empty editor, the footer.
    let screen = t.screen();
    assert!(screen.contains("first answer"), "{screen}");
    assert!(screen.contains("mock-model"), "{screen}");
    assert!(!screen.contains("/quit"), "{screen}");
    env
}

#[test]
fn quit_leaves_the_screen_and_resume_shows_the_picker_alone_until_escape() {
    require_tmux!();
    let env = saved_session();
    let t = env.start("-r", 100, 30);
    t.wait_for("Resume Session", WAIT);
    let screen = t.wait_until("the session listed", WAIT, |s| s.contains("first question"));
    // No footer, warnings or editor around it: pi shows the picker before its UI starts.
    assert!(!screen.contains("mock-model"), "{screen}");
    assert!(!screen.contains("Warning"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let screen = t.screen();
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let picker = rows
        .iter()
        .position(|r| r.starts_with("Resume Session"))
        .unwrap();
    let message = rows
        .iter()
        .position(|r| *r == "No session selected")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(picker < message, "{screen}");
    assert!(
        rows[message - 1].is_empty() && rows[message - 2].starts_with("──"),
        "{screen}"
    );
}

#[test]
fn a_session_picked_at_startup_is_drawn_below_the_picker() {
    require_tmux!();
    let env = saved_session();
    let t = env.start("-r", 100, 40);
    t.wait_for("first question", WAIT);
    t.keys(&["Enter"]);
    let screen = t.wait_until("the session", WAIT, |s| {
        s.contains("first answer") && editor_ready(s)
    });
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let picker = rows.iter().position(|r| r.starts_with("Resume Session"));
    let answer = rows
        .iter()
        .position(|r| r.contains("first answer"))
        .unwrap();
    assert!(picker.is_some_and(|p| p < answer), "{screen}");
}

#[test]
fn continue_draws_the_first_message_from_the_top_row() {
    require_tmux!();
    let env = saved_session();
    let t = env.start("-c", 100, 30);
    let screen = t.wait_until("the session", WAIT, |s| {
        s.contains("first answer") && editor_ready(s)
    });
    // pi: no header row with quietStartup, no blank row above the first user message;
    // its box's padding row is the top row, its text the second.
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows[1].trim(), "first question", "{screen}");
}

#[test]
fn resume_without_a_session_file_still_lists_the_project_sessions() {
    require_tmux!();
    let env = saved_session();
    let t = env.start("--no-session", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "/resume");
    t.wait_for("Resume Session", WAIT);
    t.wait_for("first question", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Resumed session", WAIT);
    t.wait_for("first answer", WAIT);
}
