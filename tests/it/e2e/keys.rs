//! Keys through a real tmux: Shift+Enter with tmux's `extended-keys` (pi-rs asks for
//! xterm modifyOtherKeys when the kitty protocol is missing and decodes what tmux sends),
//! the editor keys that must keep working with our own input decoder (Home/End, Alt+b,
//! a lone Escape, Ctrl+C, bracketed paste), and pi's warning when `extended-keys` is off.

use super::env::{Env, WAIT, editor_ready};
use crate::support::tmux;
use serde_json::{Value, json};

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

/// The text of every user message in the session files, in order.
fn user_texts(env: &Env) -> Vec<String> {
    let mut texts = Vec::new();
    for file in env.session_files() {
        let content = std::fs::read_to_string(file).unwrap();
        for line in content.lines() {
            let entry: Value = serde_json::from_str(line).unwrap();
            let message = &entry["message"];
            if message["role"] != "user" {
                continue;
            }
            let text = match &message["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            texts.push(text);
        }
    }
    texts
}

const WARNING: &str = "tmux extended-keys is off";

#[test]
fn shift_enter_under_tmux_with_extended_keys_inserts_a_new_line() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [
        {"text": "first reply"},
        {"text": "second reply"}
    ]}));
    let t = env.start_in_tmux_with("set -g extended-keys on\n", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    t.type_text("line one");
    t.keys(&["S-Enter"]);
    t.type_text("line two");
    let screen = t.wait_for("line two", WAIT);
    assert!(!screen.contains("S-Enter"), "{screen}");
    let rows: Vec<&str> = screen.lines().collect();
    let one = rows.iter().position(|r| r.contains("line one"));
    let two = rows.iter().position(|r| r.contains("line two"));
    assert!(
        matches!((one, two), (Some(a), Some(b)) if b == a + 1),
        "two editor rows: {screen}"
    );
    t.keys(&["Enter"]);
    t.wait_for("first reply", WAIT);

    // The other keys still arrive as keys: Home/End, Alt+b (word left), a lone Escape
    // (nothing to abort: the editor keeps its text), Ctrl+C (clears the editor) and a
    // bracketed paste with a line break.
    t.type_text("thrown away");
    t.keys(&["C-c"]);
    t.wait_until("the editor cleared", WAIT, |s| !s.contains("thrown away"));
    t.type_text("mid end");
    t.keys(&["Home"]);
    t.type_text("start ");
    t.keys(&["End"]);
    t.type_text(" tail");
    t.keys(&["M-b"]);
    t.type_text("+");
    t.keys(&["Escape"]);
    // The paste goes where the cursor is: after the `+`.
    t.paste("\npasted line");
    t.wait_for("pasted line", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("second reply", WAIT);
    let screen = t.screen();
    assert!(!screen.contains(WARNING), "extended-keys is on: {screen}");
    assert_eq!(
        user_texts(&env),
        vec![
            "line one\nline two".to_string(),
            "start mid end +\npasted linetail".to_string()
        ]
    );
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

#[test]
fn tmux_without_extended_keys_gets_pis_warning() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "hi"}]}));
    let t = env.start_in_tmux_with("set -g extended-keys off\n", 120, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    let screen = t.wait_for(WARNING, WAIT);
    assert!(
        screen.contains("Warning: tmux extended-keys is off. Modified Enter keys may not work."),
        "{screen}"
    );
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// Keys typed while pi-rs starts (before and during the terminal's kitty keyboard
/// query) reach the editor: the query's answer is read among the keys instead of by a
/// probe that swallowed them.
#[test]
fn keys_typed_while_starting_are_kept() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "reply to the early keys"}]}));
    let t = env.start("", 100, 30);
    t.type_text("typed at once");
    t.wait_until("the editor", WAIT, editor_ready);
    t.wait_for("typed at once", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("reply to the early keys", WAIT);
    assert_eq!(user_texts(&env), vec!["typed at once".to_string()]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// Ctrl+Z, `fg` and quitting in a shell, as in pi: the last frame (transcript, editor
/// with its text, footer) stays on the screen with the shell's lines below it; after
/// `fg` the editor comes back below them, still holding the text, and the frame left
/// behind is untouched; after quitting, the shell's prompt follows one blank row below
/// the footer.
#[test]
fn suspend_resume_and_quit_leave_the_last_frame_as_pi() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "the first reply"}]}));
    let home = env.home();
    let t = tmux::Tmux::start(
        "bash --norc --noprofile -i",
        &env.cwd(),
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
            ("PS1", "$ "),
        ],
        80,
        24,
    );
    t.wait_for("$", WAIT);
    t.type_text(&format!(
        "{} --provider mock --model mock-model",
        env!("CARGO_BIN_EXE_pi")
    ));
    t.keys(&["Enter"]);
    t.wait_until("the editor", WAIT, editor_ready);
    super::env::submit(&t, "hello");
    t.wait_for("the first reply", WAIT);
    t.type_text("still typed");
    t.wait_for("still typed", WAIT);

    t.keys(&["C-z"]);
    let screen = t.wait_for("Stopped", WAIT);
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let row_of = |rows: &[&str], text: &str| rows.iter().position(|r| *r == text);
    let typed = row_of(&rows, "still typed").unwrap_or_else(|| panic!("{screen}"));
    let stopped = rows
        .iter()
        .position(|r| r.contains("Stopped"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(rows[typed - 1].starts_with("────"), "{screen}");
    assert!(rows[typed + 1].starts_with("────"), "{screen}");
    assert!(rows[typed + 3].contains("mock-model"), "{screen}");
    assert!(stopped > typed + 4, "{screen}");
    assert!(screen.contains("the first reply"), "{screen}");

    t.type_text("fg");
    t.keys(&["Enter"]);
    let screen = t.wait_until("the editor back", WAIT, |s| {
        s.lines().filter(|r| r.trim_end() == "still typed").count() == 2
    });
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let fg = row_of(&rows, "$ fg").unwrap_or_else(|| panic!("{screen}"));
    let first = row_of(&rows, "still typed").unwrap_or_else(|| panic!("{screen}"));
    let again = rows
        .iter()
        .rposition(|r| *r == "still typed")
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(first < fg && fg < again, "{screen}");
    assert!(rows[first + 3].contains("mock-model"), "{screen}");
    assert!(rows[again + 3].contains("mock-model"), "{screen}");
    // The editor works again.
    t.type_text(" and more");
    t.wait_for("still typed and more", WAIT);

    t.keys(&["C-c"]);
    t.wait_until("the editor cleared", WAIT, |s| {
        !s.contains("still typed and more")
    });
    t.keys(&["C-d"]);
    let screen = t.wait_until("the shell prompt", WAIT, |s| {
        s.lines().map(str::trim_end).filter(|r| *r == "$").count() == 1
    });
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let prompt = row_of(&rows, "$").unwrap_or_else(|| panic!("{screen}"));
    // The frame ended on the bottom row here, so the prompt comes right below it (one
    // blank row between them when the frame ends higher up, as the Ctrl+Z above shows).
    assert!(rows[prompt - 1].contains("mock-model"), "{screen}");
    assert!(rows[prompt - 3].starts_with("────"), "{screen}");
    assert!(rows[prompt - 5].starts_with("────"), "{screen}");
}

/// Ctrl+G with neither `$VISUAL` nor `$EDITOR` set: pi's warning, the prompt kept.
#[test]
fn ctrl_g_without_an_editor_gives_pis_warning() {
    require_tmux!();
    let env = Env::new(json!({"sequence": [{"text": "unused"}]}));
    let t = env.start_with_env("", 100, 30, &[("VISUAL", ""), ("EDITOR", "")]);
    t.wait_until("the editor", WAIT, editor_ready);
    t.type_text("kept prompt");
    t.wait_for("kept prompt", WAIT);
    t.keys(&["C-g"]);
    let screen = t.wait_for(
        "Warning: No editor configured. Set $VISUAL or $EDITOR environment variable.",
        WAIT,
    );
    assert!(screen.contains("kept prompt"), "{screen}");
    t.keys(&["C-c"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
