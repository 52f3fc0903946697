//! File checkpoints in the interactive app (`docs/checkpoints.md`), in-process through
//! `Headless`: the agent changes a file in two turns; `/tree` to the first turn shows
//! the files diff (Shift+D) and asks "Restore files?"; restoring brings the earlier
//! content back, going back brings the later one; a file changed by hand is listed and
//! `/undo-restore` puts the hand-made content back. Shift+M marks an entry, and Shift+D
//! on another then shows the files diff between the two (two branches).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::Duration;

use crate::tui_app::{Env, submit};
use pi::modes::interactive::app::Headless;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

fn write(content: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": content}}]})
}

/// The row under the cursor in `/tree`.
fn selected(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains('›'))
        .unwrap_or_default()
        .to_string()
}

/// Opens `/tree`, searches for `query` and presses Enter, then "No summary".
async fn tree_to(ui: &mut Headless, query: &str) {
    submit(ui, "/tree").await;
    ui.wait_for("Session Tree", WAIT).await;
    ui.type_text(query);
    let screen = ui.screen();
    assert!(selected(&screen).contains(query), "{screen}");
    ui.keys(&["Enter"]);
    ui.wait_for("Summarize branch?", WAIT).await;
    ui.keys(&["Enter"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_restore_prompt_restores_earlier_files_and_lists_user_changes() {
    let env = Env::new(
        json!({"sequence": [
            write("first\n"), {"text": "alpha done"},
            write("second\n"), {"text": "beta done"},
        ]}),
        json!({}),
    );
    let file = env.cwd().join("a.txt");
    let mut ui = env.ui(100, 40);
    submit(&mut ui, "one").await;
    ui.wait_for("alpha done", WAIT).await;
    ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    submit(&mut ui, "two").await;
    ui.wait_for("beta done", WAIT).await;
    ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "second\n");

    // Shift+D on the first turn: the diff from the working tree to it.
    submit(&mut ui, "/tree").await;
    let screen = ui.wait_for("Session Tree", WAIT).await;
    assert!(
        screen.contains('✎'),
        "tool results that changed files are marked:\n{screen}"
    );
    ui.type_text("alpha");
    ui.keys(&["D"]);
    let screen = ui.wait_for("working tree → this point", WAIT).await;
    assert!(screen.contains("M a.txt +1 -1"), "{screen}");
    assert!(
        screen.contains("-second") && screen.contains("+first"),
        "{screen}"
    );
    ui.keys(&["Escape"]);
    let screen = ui.wait_for("Session Tree", WAIT).await;
    assert!(selected(&screen).contains("alpha"), "{screen}");
    ui.keys(&["Escape", "Escape"]);
    ui.wait_until("tree closed", WAIT, |s| !s.contains("Session Tree"))
        .await;

    // To the first turn: the prompt appears; restoring brings "first" back.
    tree_to(&mut ui, "alpha").await;
    let screen = ui.wait_for("Restore files?", WAIT).await;
    assert!(screen.contains("Restore 1 file(s)"), "{screen}");
    assert!(!screen.contains("Changed outside the agent"), "{screen}");
    ui.keys(&["Enter"]);
    ui.wait_for("Restored 1 file(s): a.txt", WAIT).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "first\n");

    // Back to the second turn: the later content returns.
    tree_to(&mut ui, "beta").await;
    ui.wait_for("Restore files?", WAIT).await;
    ui.keys(&["Enter"]);
    ui.wait_until("restored again", WAIT, |_| {
        std::fs::read_to_string(&file).is_ok_and(|t| t == "second\n")
    })
    .await;

    // A change by hand is listed and the first choice says it will be overwritten.
    std::fs::write(&file, "mine\n").unwrap();
    tree_to(&mut ui, "alpha").await;
    let screen = ui.wait_for("Restore files?", WAIT).await;
    assert!(
        screen.contains("Changed outside the agent: a.txt"),
        "{screen}"
    );
    assert!(
        screen.contains("Restore 1 file(s), overwriting these changes"),
        "{screen}"
    );
    ui.keys(&["Enter"]);
    ui.wait_until("overwritten", WAIT, |_| {
        std::fs::read_to_string(&file).is_ok_and(|t| t == "first\n")
    })
    .await;
    submit(&mut ui, "/undo-restore").await;
    ui.wait_until("undone", WAIT, |_| {
        std::fs::read_to_string(&file).is_ok_and(|t| t == "mine\n")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_diff_between_two_branches_from_a_marked_entry() {
    let env = Env::new(
        json!({"sequence": [
            write("first\n"), {"text": "alpha done"},
            write("second\n"), {"text": "beta done"},
            write("gamma\n"), {"text": "gamma done"},
        ]}),
        json!({}),
    );
    let file = env.cwd().join("a.txt");
    let mut ui = env.ui(100, 40);
    for (prompt, answer) in [("one", "alpha done"), ("two", "beta done")] {
        submit(&mut ui, prompt).await;
        ui.wait_for(answer, WAIT).await;
        ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
            .await;
    }
    // A second branch from the first turn (files restored there first).
    tree_to(&mut ui, "alpha").await;
    ui.wait_for("Restore files?", WAIT).await;
    ui.keys(&["Enter"]);
    ui.wait_for("Restored 1 file(s)", WAIT).await;
    submit(&mut ui, "three").await;
    ui.wait_for("gamma done", WAIT).await;
    ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "gamma\n");

    // Mark the end of the first branch, select the end of the second, Shift+D.
    submit(&mut ui, "/tree").await;
    ui.wait_for("Session Tree", WAIT).await;
    ui.type_text("beta");
    ui.keys(&["M"]);
    let screen = ui.screen();
    assert!(selected(&screen).contains("[diff from]"), "{screen}");
    ui.keys(&["BSpace", "BSpace", "BSpace", "BSpace"]);
    ui.type_text("gamma");
    let screen = ui.screen();
    assert!(selected(&screen).contains("gamma done"), "{screen}");
    ui.keys(&["D"]);
    let screen = ui
        .wait_for("Files: marked point → this point of the tree", WAIT)
        .await;
    assert!(screen.contains("M a.txt +1 -1"), "{screen}");
    assert!(
        screen.contains("-second") && screen.contains("+gamma"),
        "{screen}"
    );
    // Escape closes the diff; the mark stays until Shift+M on it again.
    ui.keys(&["Escape"]);
    let screen = ui.wait_for("Session Tree", WAIT).await;
    assert!(selected(&screen).contains("gamma"), "{screen}");
    ui.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    ui.type_text("beta");
    let screen = ui.screen();
    assert!(selected(&screen).contains("[diff from]"), "{screen}");
    ui.keys(&["M"]);
    assert!(!ui.screen().contains("[diff from]"), "{}", ui.screen());
    // Without a mark, Shift+D compares with the working tree again.
    ui.keys(&["D"]);
    let screen = ui
        .wait_for("Files: working tree → this point of the tree", WAIT)
        .await;
    assert!(
        screen.contains("-gamma") && screen.contains("+second"),
        "{screen}"
    );
    // Nothing on disk changed.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "gamma\n");
}
