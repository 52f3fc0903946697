//! The prompt editor's extension points in the terminal UI, with pi's own examples:
//! custom editors (`modal-editor`, `border-status-editor`: `ctx.ui.setEditorComponent`),
//! raw input listeners (`ctx.ui.onTerminalInput`), extension completion
//! (`github-issue-autocomplete`: `ctx.ui.addAutocompleteProvider`; `commands`:
//! `getArgumentCompletions`) and the working indicator (`working-indicator`,
//! `ctx.ui.setWorkingVisible`). Each runs in pi-rs and, when it is installed, in the
//! reference pi at the same terminal size, and the rows that matter are compared.

use std::path::Path;

use serde_json::{Value, json};

use super::beside_pi::{examples, rows, start_reference_with};
use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux::Tmux;

/// A project whose settings keep both programs quiet (no header, no "What's New").
fn quiet_env(script: Value) -> Env {
    let env = Env::new(script);
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "lastChangelogVersion": "0.73.1"}"#,
    )
    .unwrap();
    env
}

/// The row containing `needle` and the `before` rows above it.
fn rows_up_to(screen: &str, needle: &str, before: usize) -> Vec<String> {
    let all = rows(screen);
    let at = all
        .iter()
        .rposition(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no row with {needle:?} in:\n{screen}"));
    all[at.saturating_sub(before)..=at].to_vec()
}

/// What one program showed while the modal editor was driven.
struct ModalRun {
    typed: Vec<String>,
    normal: Vec<String>,
    edited: Vec<String>,
    cleared: Vec<String>,
    sent: String,
}

fn drive_modal(t: &Tmux) -> ModalRun {
    t.wait_until("the modal editor", WAIT, |s| s.contains(" INSERT"));
    t.type_text("hello world");
    let typed = rows_up_to(&t.wait_for("hello world", WAIT), " INSERT", 2);
    // Escape leaves insert mode (pi's interrupt is not run), h moves left, x deletes.
    t.keys(&["Escape"]);
    let normal = rows_up_to(&t.wait_for(" NORMAL", WAIT), " NORMAL", 2);
    t.keys(&["h"]);
    t.keys(&["h"]);
    t.keys(&["x"]);
    t.keys(&["i"]);
    t.type_text("!");
    let edited = rows_up_to(&t.wait_for("hello wor!d", WAIT), " INSERT", 2);
    // Ctrl+C is pi's "clear editor" app action, passed on by the CustomEditor.
    t.keys(&["C-c"]);
    let cleared = rows_up_to(
        &t.wait_until("editor cleared", WAIT, |s| !s.contains("hello wor!d")),
        " INSERT",
        2,
    );
    t.type_text("send this");
    t.wait_for("send this", WAIT);
    t.keys(&["Enter"]);
    let sent = t.wait_for("modal reply", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    ModalRun {
        typed,
        normal,
        edited,
        cleared,
        sent,
    }
}

/// `modal-editor.ts`: the extension's editor replaces pi-rs's, gets every key (its own
/// normal mode takes Escape, h and x), passes pi's app keys back (Ctrl+C clears, Ctrl+D
/// exits), and its submit is the user's prompt — drawn as pi draws it.
#[test]
fn modal_editor_takes_the_keys_as_in_pi() {
    let Some(dir) = examples() else { return };
    let env = quiet_env(json!({"sequence": [], "default": {"text": "modal reply"}}));
    let extension = format!("-e {}", dir.join("modal-editor.ts").display());
    let ours = drive_modal(&env.start(&extension, 80, 24));
    assert!(ours.typed[1].contains("hello world"), "{:?}", ours.typed);
    assert!(ours.normal[2].ends_with(" NORMAL"), "{:?}", ours.normal);
    assert!(ours.edited[1].contains("hello wor!d"), "{:?}", ours.edited);
    assert!(!ours.cleared[1].contains("hello"), "{:?}", ours.cleared);
    assert!(ours.sent.contains("send this"), "{}", ours.sent);

    let Some(t) = start_reference_with(&env, &extension, &[], 80, 24) else {
        return;
    };
    let theirs = drive_modal(&t);
    assert_eq!(ours.typed, theirs.typed);
    assert_eq!(ours.normal, theirs.normal);
    assert_eq!(ours.edited, theirs.edited);
    assert_eq!(ours.cleared, theirs.cleared);
}

/// `border-status-editor.ts`: an editor whose borders show the model and the working
/// spinner, with `setWorkingVisible(false)` (no "Working..." line while the agent works)
/// and an empty footer component.
#[test]
fn border_status_editor_hides_the_working_line() {
    let Some(dir) = examples() else { return };
    let env =
        quiet_env(json!({"sequence": [], "default": {"text": "slow answer", "delay_ms": 2500}}));
    let extension = format!("-e {}", dir.join("border-status-editor.ts").display());
    let t = env.start(&extension, 90, 24);
    let idle = t.wait_for("mock/mock-model · off", WAIT);
    submit(&t, "go");
    let working = t.wait_for("go", WAIT);
    assert!(!working.contains("Working..."), "{working}");
    let done = t.wait_for("slow answer", WAIT);
    assert!(!done.contains("Working..."), "{done}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());

    let Some(t) = start_reference_with(&env, &extension, &[], 90, 24) else {
        return;
    };
    let their_idle = t.wait_for("mock/mock-model · off", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    // The bottom border: model and thinking level on the left, context and cwd on the
    // right (pi-rs's `ctx.getContextUsage` may differ before the first reply: compare
    // the left part).
    let left = |screen: &str| {
        let row = rows(screen)
            .into_iter()
            .find(|r| r.contains("mock/mock-model · off"))
            .unwrap_or_default();
        row.split("off ").next().unwrap_or_default().to_string()
    };
    assert_eq!(left(&idle), left(&their_idle));
}

/// An extension with `ctx.ui.onTerminalInput` listeners: one turns `x` into `y`, one
/// consumes `z`; `/quiet` unsubscribes both.
const INPUT_LISTENER: &str = r#"
export default function (pi) {
  let off = [];
  pi.on("session_start", (_event, ctx) => {
    off.push(ctx.ui.onTerminalInput((data) => (data === "x" ? { data: "y" } : undefined)));
    off.push(ctx.ui.onTerminalInput((data) => (data === "z" ? { consume: true } : undefined)));
    ctx.ui.notify("listening");
  });
  pi.registerCommand("quiet", { handler: async (_args, ctx) => {
    for (const unsubscribe of off) unsubscribe();
    off = [];
    ctx.ui.notify("listeners removed");
  }});
}
"#;

fn drive_input_listener(t: &Tmux) -> (String, String) {
    t.wait_until("the editor", WAIT, editor_ready);
    t.wait_for("listening", WAIT);
    t.type_text("axbzc");
    let filtered = t.wait_for("aybc", WAIT);
    t.keys(&["C-c"]);
    submit(t, "/quiet");
    t.wait_for("listeners removed", WAIT);
    t.type_text("axbzc");
    let plain = t.wait_for("axbzc", WAIT);
    t.keys(&["C-c"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    (filtered, plain)
}

/// `ctx.ui.onTerminalInput`: listeners replace and consume keys before the editor sees
/// them, and stop when unsubscribed — as in pi.
#[test]
fn terminal_input_listeners_replace_and_consume_keys() {
    if examples().is_none() {
        return;
    }
    let env = quiet_env(json!({"sequence": []}));
    let file = env.cwd().join("listener.ts");
    std::fs::write(&file, INPUT_LISTENER).unwrap();
    let extension = format!("-e {}", file.display());
    let (filtered, plain) = drive_input_listener(&env.start(&extension, 80, 24));
    assert!(filtered.contains("aybc"), "{filtered}");
    assert!(plain.contains("axbzc"), "{plain}");

    let Some(t) = start_reference_with(&env, &extension, &[], 80, 24) else {
        return;
    };
    let (their_filtered, _) = drive_input_listener(&t);
    let row = |screen: &str| {
        rows(screen)
            .into_iter()
            .find(|r| r.contains("aybc"))
            .unwrap_or_default()
    };
    assert_eq!(row(&filtered), row(&their_filtered));
}

/// A stand-in for GitHub's `gh` (no network): `gh issue list … --json …` prints two
/// issues.
fn fake_gh(bin: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\necho '[{\"number\":12,\"title\":\"Fix the widget\",\"state\":\"OPEN\"},{\"number\":7,\"title\":\"Write the docs\",\"state\":\"OPEN\"}]'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Types `text` until `needle` shows (the extension may still be starting: its
/// provider is added in `session_start`), clearing the editor between tries.
fn type_until(t: &Tmux, text: &str, needle: &str) -> String {
    for _ in 0..4 {
        t.type_text(text);
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(5) {
            let screen = t.screen();
            if screen.contains(needle) {
                return screen;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        // Apart, or Escape and Ctrl+C read as one Alt+Ctrl+C.
        t.keys(&["Escape"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
        t.keys(&["C-c"]);
        std::thread::sleep(std::time::Duration::from_millis(600));
    }
    t.wait_for(needle, WAIT)
}

fn drive_issue_completion(t: &Tmux) -> (Vec<String>, String) {
    t.wait_until("the editor", WAIT, editor_ready);
    let popup = type_until(t, "see #", "Write the docs");
    let list = rows(&popup)
        .into_iter()
        .filter(|r| r.contains("[open]"))
        .collect::<Vec<_>>();
    t.type_text("1");
    t.wait_until("filtered to #12", WAIT, |s| {
        s.contains("Fix the widget") && !s.contains("Write the docs")
    });
    t.keys(&["Tab"]);
    let done = t.wait_until("#12 inserted", WAIT, |s| {
        s.contains("see #12") && !s.contains("Fix the widget")
    });
    t.keys(&["C-c"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    (list, done)
}

/// `github-issue-autocomplete.ts`: typing `#` asks the extension's provider, which runs
/// `gh` (a stand-in here) and offers the open issues; the choice is inserted.
#[test]
fn issue_numbers_complete_from_the_extension() {
    let Some(dir) = examples() else { return };
    let env = quiet_env(json!({"sequence": []}));
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(env.cwd())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "git {args:?} failed");
    };
    git(&["init", "-q", "-b", "trunk"]);
    git(&[
        "remote",
        "add",
        "origin",
        "https://github.com/acme/widgets.git",
    ]);
    let bin = env.dir.path().join("bin");
    fake_gh(&bin);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let vars = [("PATH", path.as_str())];
    let extension = format!("-e {}", dir.join("github-issue-autocomplete.ts").display());
    let (list, done) = drive_issue_completion(&env.start_with_env(&extension, 90, 24, &vars));
    assert_eq!(list.len(), 2, "{list:?}");
    assert!(
        list[0].contains("#12") && list[0].contains("Fix the widget"),
        "{list:?}"
    );
    assert!(done.contains("see #12"), "{done}");

    let Some(t) = start_reference_with(&env, &extension, &vars, 90, 24) else {
        return;
    };
    let (their_list, _) = drive_issue_completion(&t);
    assert_eq!(list, their_list);
}

fn drive_argument_completion(t: &Tmux) -> (Vec<String>, String) {
    t.wait_until("the editor", WAIT, editor_ready);
    let popup = type_until(t, "/commands e", "extension");
    let list = rows(&popup)
        .into_iter()
        .filter(|r| r.trim_start().starts_with("→") || r.contains("extension"))
        .filter(|r| !r.contains("/commands e"))
        .collect::<Vec<_>>();
    t.keys(&["Tab"]);
    let done = t.wait_for("/commands extension", WAIT);
    t.keys(&["C-c"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    (list, done)
}

/// `commands.ts`: `getArgumentCompletions` offers the command's arguments in the popup.
#[test]
fn command_arguments_complete_from_the_extension() {
    let Some(dir) = examples() else { return };
    let env = quiet_env(json!({"sequence": []}));
    let extension = format!("-e {}", dir.join("commands.ts").display());
    let (list, done) = drive_argument_completion(&env.start(&extension, 80, 24));
    assert!(list.iter().any(|r| r.contains("extension")), "{list:?}");
    assert!(done.contains("/commands extension"), "{done}");

    let Some(t) = start_reference_with(&env, &extension, &[], 80, 24) else {
        return;
    };
    let (their_list, _) = drive_argument_completion(&t);
    assert_eq!(list, their_list);
}

fn drive_working_indicator(t: &Tmux) -> (String, String) {
    t.wait_until("the editor", WAIT, editor_ready);
    submit(t, "/working-indicator dot");
    t.wait_for("Working indicator set to: static dot", WAIT);
    submit(t, "first");
    let dot = t.wait_for("Working...", WAIT);
    t.wait_for("the answer", WAIT);
    submit(t, "/working-indicator none");
    t.wait_for("Working indicator set to: hidden", WAIT);
    submit(t, "second");
    let none = t.wait_for("Working...", WAIT);
    t.wait_until("the second answer", WAIT, |s| {
        s.matches("the answer").count() >= 2
    });
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    let working_row = |screen: &str| {
        rows(screen)
            .into_iter()
            .find(|r| r.contains("Working..."))
            .unwrap_or_default()
    };
    (working_row(&dot), working_row(&none))
}

/// `working-indicator.ts`: `setWorkingIndicator` replaces the spinner with the
/// extension's frames (a dot), or with nothing.
#[test]
fn working_indicator_frames_as_in_pi() {
    let Some(dir) = examples() else { return };
    let env =
        quiet_env(json!({"sequence": [], "default": {"text": "the answer", "delay_ms": 2000}}));
    let extension = format!("-e {}", dir.join("working-indicator.ts").display());
    let (dot, none) = drive_working_indicator(&env.start(&extension, 80, 24));
    assert!(dot.trim_start().starts_with("● Working"), "{dot:?}");
    assert!(none.trim_start().starts_with("Working"), "{none:?}");

    let Some(t) = start_reference_with(&env, &extension, &[], 80, 24) else {
        return;
    };
    let (their_dot, their_none) = drive_working_indicator(&t);
    assert_eq!(dot, their_dot);
    assert_eq!(none, their_none);
}
