//! pi's example extensions that draw their own components (`ctx.ui.custom`) in the
//! terminal UI: the component lives in the Node host, pi-rs shows its lines in place of
//! the editor and forwards keys to it.

use serde_json::json;

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux;

/// `/snake`: the game draws in place of the editor and takes keys (Escape saves and
/// closes it through `done`); it resumes paused from the saved entry, runs on its own
/// timer (`tui.requestRender`) until the snake hits the wall, and `q` quits.
#[test]
fn snake_runs_in_place_of_the_editor_and_takes_keys() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let dir = match crate::ts_extensions::examples_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipped: pi's example extensions are not available: {why}");
            return;
        }
    };
    let env = Env::new(json!({"sequence": []}));
    let t = env.start(&format!("-e {}", dir.join("snake.ts").display()), 100, 40);
    t.wait_until("the editor", WAIT, editor_ready);

    submit(&t, "/snake");
    let screen = t.wait_for("SNAKE", WAIT);
    assert!(screen.contains("Score: 0"), "{screen}");
    // Escape goes to the component: it saves the game and closes (`done`).
    t.keys(&["Escape"]);
    t.wait_until("the editor back", WAIT, |s| {
        !s.contains("SNAKE") && editor_ready(s)
    });

    submit(&t, "/snake");
    // The saved game comes back. On a loaded machine the snake may already have hit the
    // wall before Escape arrived (the game runs on its own timer from the first frame);
    // then the saved game is the finished one.
    let screen = t.wait_until("the saved game", WAIT, |s| {
        s.contains("PAUSED") || s.contains("GAME OVER!")
    });
    if screen.contains("PAUSED") {
        // Any key resumes; then only the game's timer renders (`tui.requestRender`) can
        // bring the end, nobody presses another key.
        t.keys(&["d"]);
        t.wait_for("GAME OVER!", WAIT);
    }
    t.keys(&["q"]);
    t.wait_until("the editor back", WAIT, |s| {
        !s.contains("GAME OVER!") && editor_ready(s)
    });
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
