//! pi's TypeScript example extensions in the terminal UI: the permission gate's `select`
//! dialog decides whether `rm -rf` runs, and protected-paths' `notify` warning shows in
//! the chat while the write is blocked.

use serde_json::json;

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux;

#[test]
fn permission_gate_and_protected_paths_ask_and_warn_in_the_tui() {
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
    let env = Env::new(json!({"sequence": [
        {"text": "Cleaning.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf doomed"}}]},
        {"text": "First cleanup done."},
        {"text": "Again.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf kept"}}]},
        {"text": "Second cleanup done."},
        {"tool_calls": [{"name": "write", "arguments": {"path": ".env", "content": "X=1\n"}}]},
        {"text": "Could not write it."}
    ]}));
    std::fs::create_dir_all(env.cwd().join("doomed")).unwrap();
    std::fs::create_dir_all(env.cwd().join("kept")).unwrap();
    let t = env.start(
        &format!(
            "-e {} -e {}",
            dir.join("permission-gate.ts").display(),
            dir.join("protected-paths.ts").display()
        ),
        100,
        40,
    );
    t.wait_until("the editor", WAIT, editor_ready);

    submit(&t, "clean up doomed");
    let screen = t.wait_for("Allow?", WAIT);
    assert!(screen.contains("Dangerous command:"), "{screen}");
    assert!(screen.contains("rm -rf doomed"), "{screen}");
    assert!(env.cwd().join("doomed").exists(), "ran before the answer");
    // Options: Yes, No.
    t.keys(&["Enter"]);
    t.wait_for("First cleanup done.", WAIT);
    assert!(!env.cwd().join("doomed").exists(), "allowed but not run");

    submit(&t, "clean up kept");
    t.wait_for("Allow?", WAIT);
    t.keys(&["Down", "Enter"]);
    t.wait_for("Second cleanup done.", WAIT);
    assert!(env.cwd().join("kept").exists(), "blocked but run");
    let last = env.server.requests().last().unwrap().body.to_string();
    assert!(last.contains("Blocked by user"), "{last}");

    submit(&t, "write the env file");
    let screen = t.wait_for("Could not write it.", WAIT);
    assert!(
        screen.contains("Blocked write to protected path: .env"),
        "{screen}"
    );
    assert!(!env.cwd().join(".env").exists(), ".env was written");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// A module that fails to load stops the interactive UI too, with pi's error.
#[test]
fn a_module_that_fails_to_load_stops_the_tui_with_the_error() {
    if !tmux::available() || !crate::support::extensions::have("node") {
        eprintln!("skipped: tmux or node is not installed (CI installs them via .ci/run)");
        return;
    }
    let env = Env::new(json!({"sequence": []}));
    let bad = env.cwd().join("bad.ts");
    std::fs::write(&bad, "export default function () {\n  const x = ;\n}\n").unwrap();
    let t = env.start(&format!("-e {}", bad.display()), 120, 30);
    t.wait_until("exit", WAIT, |_| t.exited());
    let screen = t.history();
    let expected = format!(
        "Error: Failed to load extension \"{}\": Failed to load extension: {}:2:13: ",
        bad.display(),
        bad.display()
    );
    assert!(screen.replace('\n', "").contains(&expected), "{screen}");
    assert!(env.server.requests().is_empty());
}
