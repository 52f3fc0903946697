//! File checkpoints end to end (`docs/checkpoints.md`): the built binary in tmux against
//! the loopback model server. The agent writes a file (`write`), then a `bash` command
//! changes it and creates a directory with a file; `/tree` back to the first turn offers
//! to restore the files, restoring puts the disk back as it was there, and
//! `/undo-restore` brings the later files back. Skipped, with a printed reason, where
//! tmux is missing.

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux;
use serde_json::json;

#[test]
fn tree_restore_prompt_puts_the_files_back_and_undo_restore_returns_them() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    let env = Env::new(json!({"sequence": [
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "first\n"}}]},
        {"text": "alpha done"},
        {"tool_calls": [{"name": "bash", "arguments": {
            "command": "printf 'second\\n' > a.txt && mkdir -p out/deep && printf 'new\\n' > out/deep/b.txt"
        }}]},
        {"text": "beta done"},
    ]}));
    let cwd = env.cwd();
    let a = cwd.join("a.txt");
    let b = cwd.join("out/deep/b.txt");
    let read = |p: &std::path::Path| std::fs::read_to_string(p).ok();
    let t = env.start("", 110, 40);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "write a");
    t.wait_for("alpha done", WAIT);
    submit(&t, "change it with bash");
    t.wait_for("beta done", WAIT);
    assert_eq!(read(&a).as_deref(), Some("second\n"));
    assert_eq!(read(&b).as_deref(), Some("new\n"));

    // Back to the first turn: the tree marks the tool results that changed files, and
    // after the summary question pi-rs offers to restore both files.
    submit(&t, "/tree");
    let screen = t.wait_for("Session Tree", WAIT);
    assert!(screen.contains('✎'), "{screen}");
    t.type_text("alpha");
    t.wait_until("the search", WAIT, |s| s.contains("(1/1)"));
    t.keys(&["Enter"]);
    t.wait_for("Summarize branch?", WAIT);
    t.keys(&["Enter"]);
    let screen = t.wait_for("Restore files?", WAIT);
    assert!(screen.contains("Restore 2 file(s)"), "{screen}");
    assert!(screen.contains("Keep files as they are"), "{screen}");
    t.keys(&["Enter"]);
    t.wait_for("Restored 2 file(s)", WAIT);
    assert_eq!(read(&a).as_deref(), Some("first\n"));
    assert!(!b.exists(), "the file the bash command created is gone");

    // /undo-restore puts back what the restore overwrote.
    submit(&t, "/undo-restore");
    t.wait_until("the files back", WAIT, |_| {
        read(&a).as_deref() == Some("second\n") && read(&b).as_deref() == Some("new\n")
    });
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
