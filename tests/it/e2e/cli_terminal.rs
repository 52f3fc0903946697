//! The command line in a real terminal (tmux): pi 1.6 runs print mode when stdout or
//! stdin is not a terminal (`pi "x" > out.txt`, `pi "x" < /dev/null`), command words
//! (`pi mcp …`, `pi auth …`) never open the UI or reach the model, `--tui-mode
//! fullscreen` says that the regular mode is used for now, `--use-theme` colours this
//! run without saving, and `/reload` enables tools newly added to `defaultTools`.

use serde_json::json;

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::pi_project::tool_names;
use crate::support::tmux::{self, Tmux};

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
    };
}

/// Runs `line` (a shell command line; `{pi}` is the binary with the mock model) in a
/// terminal in the project and returns the terminal (its shell waits, so the screen can
/// be read) and the exit code.
fn run_in_terminal(env: &Env, line: &str) -> (Tmux, String) {
    let pi = format!(
        "{} --offline --provider mock --model mock-model",
        env!("CARGO_BIN_EXE_pi")
    );
    let rc = env.cwd().join("rc.txt");
    let _ = std::fs::remove_file(&rc);
    let script = format!("{}; echo $? > rc.txt; sleep 60", line.replace("{pi}", &pi));
    let home = env.home();
    let t = Tmux::start(
        &format!("sh -c '{script}'"),
        &env.cwd(),
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ],
        100,
        30,
    );
    t.wait_until("the command to end", WAIT, |_| {
        std::fs::read_to_string(&rc).is_ok_and(|c| c.ends_with('\n'))
    });
    let code = std::fs::read_to_string(rc).unwrap().trim().to_string();
    (t, code)
}

#[test]
fn stdout_or_stdin_not_a_terminal_means_print_mode() {
    require_tmux!();
    let env = Env::new(json!({"default": {"text": "the answer"}}));
    let (_, code) = run_in_terminal(&env, "{pi} \"what is it\" > out.txt");
    assert_eq!(code, "0");
    assert_eq!(
        std::fs::read_to_string(env.cwd().join("out.txt")).unwrap(),
        "the answer\n"
    );

    let (t, code) = run_in_terminal(&env, "{pi} \"what is it\" < /dev/null");
    assert_eq!(code, "0");
    let screen = t.screen();
    assert!(screen.contains("the answer"), "{screen}");
    // No UI was drawn: no editor border, no footer.
    assert!(!screen.contains("────"), "{screen}");
    assert_eq!(env.server.requests().len(), 2);
}

#[test]
fn command_words_never_become_prompts() {
    require_tmux!();
    let env = Env::new(json!({"default": {"text": "the answer"}}));
    for (line, expected_code, says) in [
        (
            "{pi} mcp list",
            "1",
            "MCP servers come with a later version of pi-rs",
        ),
        // A real login would wait for the browser; an unknown provider ends at once, and
        // neither is a prompt.
        (
            "{pi} auth login nosuchprovider",
            "1",
            "Unknown provider \"nosuchprovider\"",
        ),
        (
            "{pi} update --models",
            "0",
            "no downloadable model catalogs",
        ),
    ] {
        let line = line.replace("{pi} ", &format!("{} ", env!("CARGO_BIN_EXE_pi")));
        let (t, code) = run_in_terminal(&env, &line);
        assert_eq!(code, expected_code, "{line}");
        // Long lines wrap at the pane's width.
        let screen = t.screen().replace('\n', "");
        assert!(screen.contains(says), "{line}:\n{screen}");
        assert!(!screen.contains("────"), "{line} drew the UI:\n{screen}");
    }
    assert!(env.server.requests().is_empty());
}

#[test]
fn fullscreen_tui_mode_says_regular_mode_is_used() {
    require_tmux!();
    let env = Env::new(json!({"default": {"text": "the answer"}}));
    let t = env.start("--tui-mode fullscreen", 140, 30);
    let screen = t.wait_until("the editor", WAIT, editor_ready);
    let screen = if screen.contains("Fullscreen TUI mode") {
        screen
    } else {
        t.wait_for("Fullscreen TUI mode", WAIT)
    };
    assert!(
        screen.contains(
            "Warning: Fullscreen TUI mode comes with a later version of pi-rs; this session uses the regular mode"
        ),
        "{screen}"
    );
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

#[test]
fn use_theme_colours_this_run_without_saving_it() {
    require_tmux!();
    let env = Env::new(json!({"default": {"text": "the answer"}}));
    let colours = |extra: &str| {
        let t = env.start(extra, 100, 30);
        t.wait_until("the session", WAIT, |s| {
            editor_ready(s) && !s.contains("Loading session")
        });
        let ansi = t.screen_ansi();
        t.keys(&["C-d"]);
        t.wait_until("exit", WAIT, |_| t.exited());
        ansi
    };
    let dark = colours("--use-theme dark");
    let light = colours("--use-theme light");
    assert_ne!(dark, light, "the theme did not change the screen");
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.agent_dir().join("settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings.get("theme"), None, "--use-theme was saved");
    // The same screen as with the setting itself.
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "theme": "light"}"#,
    )
    .unwrap();
    assert_eq!(colours(""), light);
}

#[test]
fn reload_enables_tools_newly_added_to_default_tools() {
    require_tmux!();
    let env = Env::new(json!({"default": {"text": "the answer"}}));
    let settings = |tools: serde_json::Value| {
        std::fs::write(
            env.agent_dir().join("settings.json"),
            json!({"quietStartup": true, "defaultTools": tools}).to_string(),
        )
        .unwrap();
    };
    settings(json!(["read", "bash"]));
    let t = env.start("", 100, 30);
    t.wait_until("the editor", WAIT, editor_ready);
    submit(&t, "first");
    t.wait_for("the answer", WAIT);
    // `grep` is added; `bash` leaves the setting but stays until the next start.
    settings(json!(["read", "grep"]));
    submit(&t, "/reload");
    t.wait_for("Reloaded", WAIT);
    submit(&t, "second");
    t.wait_until("the second answer", WAIT, |_| {
        env.server.requests().len() == 2
    });
    let requests = env.server.requests();
    assert_eq!(tool_names(&requests[0].body), ["read", "bash"]);
    assert_eq!(tool_names(&requests[1].body), ["read", "bash", "grep"]);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
