//! Live extension components in the terminal UI: pi's `custom-header`,
//! `widget-placement` and `custom-footer` examples plus a widget component that shows
//! the width it is rendered at in theme colours, run in pi-rs and in the reference pi in
//! the same terminal size with the same theme file, compared screen to screen.

use serde_json::json;

use super::beside_pi::{rows, write_theme};
use super::env::{Env, WAIT, submit};
use crate::support::reference_pi;
use crate::support::tmux::{self, Tmux};

/// `/live` sets a widget component: its width, a bold letter and a text on a background,
/// in theme colours, rendered again after every resize. (A command rather than
/// `session_start`, so it comes after `widget-placement`'s widget in both programs.)
const LIVE_WIDGET: &str = r#"
export default function (pi) {
  pi.registerCommand("live", { handler: async (_args, ctx) => {
    ctx.ui.setWidget("live", (_tui, theme) => ({
      render: (width) => [theme.fg("accent", `width=${width}`) + " " + theme.bold("B") + " " + theme.bg("selectedBg", "sel")],
      invalidate() {},
    }));
  }});
}
"#;

/// What one program showed: the first screen, its widget row with escapes, the screen
/// after a resize to 80 columns, and the footer row after `/footer` at 80 columns.
struct Run {
    first: String,
    widget_ansi: String,
    resized: String,
    footer: String,
}

fn run(t: &Tmux) -> Run {
    t.wait_until("header and widgets", WAIT, |s| {
        s.contains("shitty coding agent") && s.contains("Below editor widget")
    });
    submit(t, "/live");
    let first = t.wait_for("width=100", WAIT);
    let widget_ansi = t
        .screen_ansi()
        .lines()
        .find(|l| l.contains("width="))
        .unwrap_or_default()
        .to_string();
    t.resize(80, 30);
    let resized = t.wait_for("width=80", WAIT);
    submit(t, "/footer");
    let screen = t.wait_for("↑0 ↓0 $0.000", WAIT);
    let footer = screen
        .lines()
        .find(|l| l.contains("↑0 ↓0"))
        .unwrap_or_default()
        .to_string();
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
    Run {
        first,
        widget_ansi,
        resized,
        footer,
    }
}

#[test]
fn header_widgets_footer_and_theme_as_in_pi() {
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
    write_theme(&env);
    let git = std::process::Command::new("git")
        .args(["init", "-q", "-b", "trunk"])
        .current_dir(env.cwd())
        .status();
    assert!(git.is_ok_and(|s| s.success()), "git init failed");
    let live = env.cwd().join("live.ts");
    std::fs::write(&live, LIVE_WIDGET).unwrap();
    let extensions = format!(
        "-e {} -e {} -e {} -e {}",
        dir.join("custom-header.ts").display(),
        dir.join("widget-placement.ts").display(),
        dir.join("custom-footer.ts").display(),
        live.display()
    );

    let ours = run(&env.start(&extensions, 100, 30));

    // The header is the mascot and the subtitle, the widgets sit above and below the
    // editor, the component widget was rendered at the terminal's width.
    let first = rows(&ours.first);
    assert_eq!(first[0], "");
    assert_eq!(first[2], "  ██████████████", "{}", ours.first);
    assert!(
        first[8].starts_with("   shitty coding agent v"),
        "{}",
        ours.first
    );
    let above = first
        .iter()
        .position(|r| r == " Above editor widget")
        .unwrap();
    assert_eq!(first[above + 1], "width=100 B sel", "{}", ours.first);
    assert!(first[above + 2].starts_with("────"), "{}", ours.first);
    let below = first
        .iter()
        .position(|r| r == " Below editor widget")
        .unwrap();
    assert!(first[below - 1].starts_with("────"), "{}", ours.first);
    // The theme's colours and styles, as pi's Theme writes them: accent #5fd7af,
    // selectedBg #33384a.
    assert!(
        ours.widget_ansi.contains("\x1b[38;2;95;215;175mwidth=100"),
        "{:?}",
        ours.widget_ansi
    );
    assert!(
        ours.widget_ansi.contains("\x1b[1mB"),
        "{:?}",
        ours.widget_ansi
    );
    assert!(
        ours.widget_ansi.contains("\x1b[48;2;51;56;74msel"),
        "{:?}",
        ours.widget_ansi
    );
    // Rendered again at the new width.
    assert!(ours.resized.contains("width=80 B sel"), "{}", ours.resized);
    // The custom footer: its left part, and the right part (model, git branch) ending at
    // the 80th column.
    assert!(ours.footer.starts_with("↑0 ↓0 $0.000"), "{:?}", ours.footer);
    assert!(ours.footer.ends_with("(trunk)"), "{:?}", ours.footer);
    assert_eq!(ours.footer.chars().count(), 80, "{:?}", ours.footer);

    // Pinned to pi 0.73.1: pi 1.6's terminal UI around extension widgets (its header,
    // startup notes, footer) is issue 28's.
    if let Err(why) = reference_pi::available_073() {
        eprintln!("reference pi comparison skipped: {why}");
        return;
    }
    let home = env.home();
    let theirs = run(&Tmux::start(
        &format!(
            "env PI_REFERENCE_VERSION={} {} --offline --provider mock --model mock-model {extensions}",
            reference_pi::OLD_VERSION,
            reference_pi::script().display()
        ),
        &env.cwd(),
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ],
        100,
        30,
    ));
    let their_first = rows(&theirs.first);
    let position = |rows: &[String], row: &str| rows.iter().position(|r| r == row);
    let their_above = position(&their_first, " Above editor widget").unwrap();
    let their_below = position(&their_first, " Below editor widget").unwrap();
    // The header rows (pi prints notes about fd and ripgrep above them; the version
    // differs), and the rows from the upper to the lower widget (the editor).
    let eyes = "     █▌  █▌";
    let ours_at = position(&first, eyes).unwrap();
    let their_at = position(&their_first, eyes).unwrap();
    assert_eq!(
        first[ours_at..ours_at + 7],
        their_first[their_at..their_at + 7],
        "ours:\n{}\ntheirs:\n{}",
        ours.first,
        theirs.first
    );
    assert!(their_first[their_at + 7].starts_with("   shitty coding agent v"));
    assert_eq!(
        first[above..=below],
        their_first[their_above..=their_below],
        "ours:\n{}\ntheirs:\n{}",
        ours.first,
        theirs.first
    );
    assert_eq!(ours.widget_ansi, theirs.widget_ansi);
    // pi knows the model (`ctx.model`), pi-rs's host does not yet: compare the rest.
    assert_eq!(
        ours.footer.split("  ").next(),
        theirs.footer.split("  ").next()
    );
    assert!(theirs.footer.ends_with("(trunk)"), "{:?}", theirs.footer);
}

/// Shortcuts: one on a free key, one on a key pi reserves (Ctrl+O, expand tools), and
/// one whose handler throws.
const SHORTCUTS: &str = r#"
export default function (pi) {
  pi.on("session_start", (_event, ctx) => ctx.ui.notify("keys ready"));
  pi.registerShortcut("ctrl+x", { description: "Say hi", handler: async (ctx) => ctx.ui.notify("shortcut ran") });
  pi.registerShortcut("ctrl+o", { description: "Reserved", handler: async (ctx) => ctx.ui.notify("reserved ran") });
  pi.registerShortcut("alt+q", { handler: async () => { throw new Error("boom"); } });
}
"#;

/// `pi.registerShortcut`: the key runs the handler (with a `ctx.ui`), a key of a reserved
/// action stays with pi, a failing handler is reported as in pi, and `/hotkeys` lists
/// the extensions' keys (the path when there is no description).
#[test]
fn extension_shortcuts_run_and_show_in_hotkeys() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    if let Err(why) = crate::ts_extensions::examples_dir() {
        eprintln!("skipped: node and pi's modules are not available: {why}");
        return;
    }
    let env = Env::new(json!({"sequence": []}));
    let file = env.cwd().join("keys.ts");
    std::fs::write(&file, SHORTCUTS).unwrap();
    let t = env.start(&format!("-e {}", file.display()), 100, 40);
    t.wait_for("keys ready", WAIT);
    t.keys(&["C-x"]);
    t.wait_for("shortcut ran", WAIT);
    t.keys(&["M-q"]);
    t.wait_for("Error: Shortcut handler error: boom", WAIT);
    // Ctrl+O keeps expanding tool output; the extension's handler does not run.
    t.keys(&["C-o"]);
    submit(&t, "/hotkeys");
    let screen = t.wait_for(" Extensions", WAIT);
    let rows = rows(&screen);
    let at = rows.iter().position(|r| r == " Extensions").unwrap();
    // pi's table: title, blank, top border, header, separator, then one row per key.
    let cells = |row: &str| -> Vec<String> {
        row.split('│')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    assert_eq!(cells(&rows[at + 5]), ["Ctrl+X", "Say hi"], "{screen}");
    let alt_q = cells(&rows[at + 7]);
    assert_eq!(alt_q[0], "Alt+Q", "{screen}");
    assert!(alt_q[1].ends_with("keys.ts"), "{screen}");
    assert!(!screen.contains("Reserved"), "{screen}");
    assert!(!t.history().contains("reserved ran"));
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// pi's `working-message-test` example: its message replaces "Working..." while the
/// agent works, on every turn.
#[test]
fn working_message_replaces_working() {
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
    // The message shows while the model is silent: long enough for a loaded machine.
    let env = Env::new(json!({"sequence": [
        {"text": "first answer", "delay_ms": 5000},
        {"text": "second answer", "delay_ms": 5000}
    ]}));
    let t = env.start(
        &format!("-e {}", dir.join("working-message-test.ts").display()),
        100,
        30,
    );
    // Typed while the session still loads, the first message is queued until it has
    // loaded; once in four runs of the e2e group it was then not sent (cause not found
    // yet, see the closing note of 2026-11-25). This test is about the working message,
    // so it types once the session has loaded.
    t.wait_until("the loaded session", WAIT, |s| {
        super::env::editor_ready(s) && !s.contains("Loading session")
    });
    for (question, answer) in [("one", "first answer"), ("two", "second answer")] {
        submit(&t, question);
        let screen = t.wait_for("Working... (custom)", WAIT);
        assert!(!screen.contains("\x1b"), "{screen}");
        t.wait_for(answer, WAIT);
    }
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// An extension that takes a while to load, so that the session is still loading when
/// the user types.
const SLOW_LOAD: &str = r#"
export default async function (pi) {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  pi.on("session_start", (_event, ctx) => ctx.ui.notify("slow extension ready"));
}
"#;

/// A message typed while the session loads waits, is sent once the session has loaded,
/// and its run shows as any other: the working line, the message, the answer. (It was
/// once sent before the UI listened to the loaded session, so the run's first events,
/// and with them the working line, were lost.)
#[test]
fn a_message_typed_while_the_session_loads_is_sent_once_it_has_loaded() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    if let Err(why) = crate::ts_extensions::examples_dir() {
        eprintln!("skipped: node and pi's modules are not available: {why}");
        return;
    }
    let env = Env::new(json!({"sequence": [
        {"text": "answer to the early message", "delay_ms": 4000}
    ]}));
    let slow = env.cwd().join("slow.ts");
    std::fs::write(&slow, SLOW_LOAD).unwrap();
    let t = env.start(&format!("-e {}", slow.display()), 100, 30);
    t.wait_for("Loading session", WAIT);
    submit(&t, "early message");
    // The run shows while the model is silent (4 s): its working line and the message
    // (drawn from events that come one after the other, so wait for both).
    t.wait_until("the run of the early message", WAIT, |s| {
        s.contains("Working...") && s.contains("early message")
    });
    t.wait_for("slow extension ready", WAIT);
    t.wait_for("answer to the early message", WAIT);
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// A footer and a header whose extension then crashes.
const CRASHING: &str = r#"
export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    ctx.ui.setFooter(() => ({ render: () => ["CUSTOM FOOTER"], invalidate() {} }));
    ctx.ui.setHeader(() => ({ render: () => ["CUSTOM HEADER"], invalidate() {} }));
  });
  pi.registerCommand("crash", { handler: async () => process.exit(3) });
}
"#;

/// When the extension drawing the footer and header stops, the built-in ones come back,
/// with one warning each.
#[test]
fn a_crashed_extensions_footer_and_header_give_way_to_the_built_in_ones() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return;
    }
    if let Err(why) = crate::ts_extensions::examples_dir() {
        eprintln!("skipped: node and pi's modules are not available: {why}");
        return;
    }
    let env = Env::new(json!({"sequence": []}));
    let file = env.cwd().join("crashing.ts");
    std::fs::write(&file, CRASHING).unwrap();
    let t = env.start(&format!("-e {}", file.display()), 100, 30);
    let screen = t.wait_until("the custom footer and header", WAIT, |s| {
        s.contains("CUSTOM FOOTER") && s.contains("CUSTOM HEADER")
    });
    assert!(!screen.contains("0.0%/200k"), "{screen}");
    submit(&t, "/crash");
    let screen = t.wait_until("the built-in footer", WAIT, |s| {
        s.contains("0.0%/200k") && s.contains("showing the built-in header")
    });
    assert!(!screen.contains("CUSTOM FOOTER"), "{screen}");
    assert!(!screen.contains("CUSTOM HEADER"), "{screen}");
    assert_eq!(
        screen
            .matches("stopped; showing the built-in footer")
            .count(),
        1,
        "{screen}"
    );
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
