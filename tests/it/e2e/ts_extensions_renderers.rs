//! Chat items drawn by extensions: pi's `message-renderer`, `built-in-tool-renderer`,
//! `todo` and `hidden-thinking-label` examples, run in pi-rs and in the reference pi in
//! the same terminal size with the same theme, compared row by row; plus a renderer that
//! throws and `ctx.ui.setToolsExpanded`.

use serde_json::json;

use super::beside_pi::{examples, rows, start_reference, write_theme};
use super::env::{Env, WAIT, submit};
use crate::support::tmux::Tmux;

/// `count` rows from the first one containing `needle` (plus `before` rows above it).
fn block(screen: &str, needle: &str, before: usize, count: usize) -> Vec<String> {
    let rows = rows(screen);
    let at = rows
        .iter()
        .position(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not on screen:\n{screen}"));
    let start = at.saturating_sub(before);
    rows[start..(start + count).min(rows.len())].to_vec()
}

/// The row containing `needle`, with its escape sequences.
fn ansi_row(t: &Tmux, needle: &str) -> String {
    t.screen_ansi()
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_default()
        .to_string()
}

fn quit(t: &Tmux) {
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

fn ready(t: &Tmux) {
    t.wait_until("the loaded session", WAIT, |s| {
        super::env::editor_ready(s) && !s.contains("Loading session")
    });
}

/// What `message-renderer` showed: the status message collapsed (rows and the escapes
/// of its text row) and expanded.
struct MessageRun {
    collapsed: Vec<String>,
    ansi: String,
    expanded: Vec<String>,
}

fn message_run(t: &Tmux) -> MessageRun {
    ready(t);
    submit(t, "/status warn disk almost full");
    let screen = t.wait_for("[WARN] disk almost full", WAIT);
    let collapsed = block(&screen, "[WARN]", 2, 4);
    let ansi = ansi_row(t, "[WARN]");
    t.keys(&["C-o"]);
    let screen = t.wait_for("  at ", WAIT);
    let expanded = block(&screen, "[WARN]", 2, 5);
    quit(t);
    MessageRun {
        collapsed,
        ansi,
        expanded,
    }
}

/// pi's `message-renderer` example: `/status` sends a custom message that its renderer
/// draws (a box with the level in colour), with the time once expanded (Ctrl+O).
#[test]
fn message_renderer_draws_custom_messages_as_in_pi() {
    let Some(dir) = examples() else { return };
    let env = Env::new(json!({"sequence": []}));
    write_theme(&env);
    let extensions = format!("-e {}", dir.join("message-renderer.ts").display());
    let ours = message_run(&env.start(&extensions, 80, 30));
    // A spacer, then the renderer's box: a padding row, the text, a padding row.
    assert_eq!(
        ours.collapsed,
        ["", "", " [WARN] disk almost full", ""],
        "{:?}",
        ours.collapsed
    );
    // The level in the theme's warning colour (#e0af68).
    assert!(
        ours.ansi.contains("\x1b[38;2;224;175;104m[WARN]"),
        "{:?}",
        ours.ansi
    );
    assert!(
        ours.expanded[3].starts_with("   at "),
        "{:?}",
        ours.expanded
    );

    let Some(t) = start_reference(&env, &extensions, 80, 30) else {
        return;
    };
    let theirs = message_run(&t);
    assert_eq!(ours.collapsed, theirs.collapsed);
    assert_eq!(ours.ansi, theirs.ansi);
    assert_eq!(ours.expanded.len(), theirs.expanded.len());
    assert_eq!(ours.expanded[..3], theirs.expanded[..3]);
}

/// A message renderer that throws, and one that returns nothing.
const FAILING_RENDERER: &str = r#"
export default function (pi) {
  pi.registerMessageRenderer("broken", () => { throw new Error("renderer exploded"); });
  pi.registerMessageRenderer("plain", () => undefined);
  pi.registerCommand("send", { handler: async (args) => {
    pi.sendMessage({ customType: args.trim(), content: `message of ${args.trim()}`, display: true });
  }});
}
"#;

/// A renderer that throws leaves pi's default box (type label and text) and is reported
/// once; one that returns nothing gets the default box too (pi's fallback).
#[test]
fn a_failing_message_renderer_falls_back_to_the_default_box() {
    let Some(_) = examples() else { return };
    let env = Env::new(json!({"sequence": []}));
    let file = env.cwd().join("failing.ts");
    std::fs::write(&file, FAILING_RENDERER).unwrap();
    let t = env.start(&format!("-e {}", file.display()), 80, 40);
    ready(&t);
    submit(&t, "/send broken");
    let screen = t.wait_for("message of broken", WAIT);
    assert!(screen.contains("[broken]"), "{screen}");
    submit(&t, "/send broken");
    submit(&t, "/send plain");
    let screen = t.wait_for("message of plain", WAIT);
    assert!(screen.contains("[plain]"), "{screen}");
    let log = std::fs::read_to_string(env.agent_dir().join("extensions.log")).unwrap_or_default();
    assert_eq!(
        log.matches("renderer exploded").count(),
        1,
        "reported once: {log}"
    );
    quit(&t);
}

/// What `built-in-tool-renderer` showed for a `read` call: the box collapsed, the same
/// box after `/expand` (an extension calling `ctx.ui.setToolsExpanded(true)`).
struct ToolRun {
    collapsed: Vec<String>,
    ansi: String,
    expanded: Vec<String>,
    said: String,
}

/// `/expand`: `ctx.ui.setToolsExpanded(true)`, then says what `getToolsExpanded()` says.
const EXPAND: &str = r#"
export default function (pi) {
  pi.registerCommand("expand", { handler: async (_args, ctx) => {
    ctx.ui.setToolsExpanded(true);
    ctx.ui.notify(`expanded=${ctx.ui.getToolsExpanded()}`);
  }});
}
"#;

fn tool_run(t: &Tmux) -> ToolRun {
    ready(t);
    submit(t, "read it");
    t.wait_for("All read.", WAIT);
    // The final result's lines arrive from the extension after the answer may show.
    let screen = t.wait_for("3 lines", WAIT);
    let collapsed = block(&screen, "read notes.txt", 2, 4);
    let ansi = ansi_row(t, "3 lines");
    submit(t, "/expand");
    let screen = t.wait_for("expanded=true", WAIT);
    let said = "expanded=true".to_string();
    let screen = if screen.contains("third line") {
        screen
    } else {
        t.wait_for("third line", WAIT)
    };
    let expanded = block(&screen, "read notes.txt", 2, 7);
    quit(t);
    ToolRun {
        collapsed,
        ansi,
        expanded,
        said,
    }
}

/// pi's `built-in-tool-renderer` example: `read` keeps its behaviour, its box shows the
/// extension's call line and result summary; expanded (by `ctx.ui.setToolsExpanded`)
/// the result shows the file's lines.
#[test]
fn built_in_tool_renderer_draws_the_read_box_as_in_pi() {
    let Some(dir) = examples() else { return };
    // One turn for pi-rs, the same one again for the reference pi.
    let turn = [
        json!({"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]}),
        json!({"text": "All read."}),
    ];
    let env = Env::new(json!({"sequence": [turn[0], turn[1], turn[0], turn[1]]}));
    write_theme(&env);
    std::fs::write(
        env.cwd().join("notes.txt"),
        "first line\nsecond line\nthird line",
    )
    .unwrap();
    let expand = env.cwd().join("expand.ts");
    std::fs::write(&expand, EXPAND).unwrap();
    let extensions = format!(
        "-e {} -e {}",
        dir.join("built-in-tool-renderer.ts").display(),
        expand.display()
    );
    let ours = tool_run(&env.start(&extensions, 80, 40));
    assert_eq!(
        ours.collapsed,
        ["", "", " read notes.txt", " 3 lines"],
        "{:?}",
        ours.collapsed
    );
    // "3 lines" in the success colour on the success background.
    assert!(ours.ansi.contains("3 lines"), "{:?}", ours.ansi);
    assert_eq!(ours.said, "expanded=true");
    assert_eq!(
        ours.expanded[4..7],
        [" first line", " second line", " third line"],
        "{:?}",
        ours.expanded
    );

    let Some(t) = start_reference(&env, &extensions, 80, 40) else {
        return;
    };
    let theirs = tool_run(&t);
    assert_eq!(ours.collapsed, theirs.collapsed);
    assert_eq!(ours.ansi, theirs.ansi);
    assert_eq!(ours.expanded, theirs.expanded);
}

/// pi's `todo` example: its tool's `renderCall` and `renderResult`.
#[test]
fn todo_tool_renders_its_call_and_result_as_in_pi() {
    let Some(dir) = examples() else { return };
    let turn = [
        json!({"tool_calls": [{"name": "todo", "arguments": {"action": "add", "text": "water the plants"}}]}),
        json!({"text": "Added."}),
    ];
    let script = json!({"sequence": [turn[0], turn[1], turn[0], turn[1]]});
    let env = Env::new(script);
    write_theme(&env);
    let extensions = format!("-e {}", dir.join("todo.ts").display());
    let run = |t: &Tmux| -> (Vec<String>, String) {
        ready(t);
        submit(t, "add a todo");
        t.wait_for("Added.", WAIT);
        let screen = t.wait_for("✓ Added #1", WAIT);
        let rows = block(&screen, "todo add", 2, 4);
        let ansi = ansi_row(t, "todo add");
        quit(t);
        (rows, ansi)
    };
    let ours = run(&env.start(&extensions, 80, 30));
    assert!(ours.0[2].starts_with(" todo add"), "{:?}", ours.0);
    assert!(ours.0[2].contains("water the plants"), "{:?}", ours.0);
    assert!(ours.0[3].contains("water the plants"), "{:?}", ours.0);

    let Some(t) = start_reference(&env, &extensions, 80, 30) else {
        return;
    };
    let theirs = run(&t);
    assert_eq!(ours.0, theirs.0);
    assert_eq!(ours.1, theirs.1);
}

/// pi's `hidden-thinking-label` example: with thinking hidden (Ctrl+T) the thinking
/// block shows the extension's label, and `/thinking-label` changes it.
#[test]
fn hidden_thinking_label_replaces_the_thinking_marker_as_in_pi() {
    let Some(dir) = examples() else { return };
    let turn =
        json!({"thinking": "Let me consider the options carefully.", "text": "The answer is 42."});
    let script = json!({"sequence": [turn, turn]});
    let env = Env::new(script);
    write_theme(&env);
    let extensions = format!("-e {}", dir.join("hidden-thinking-label.ts").display());
    let run = |t: &Tmux| -> (Vec<String>, Vec<String>) {
        ready(t);
        submit(t, "think");
        t.wait_for("The answer is 42.", WAIT);
        t.keys(&["C-t"]);
        let screen = t.wait_for("Pondering...", WAIT);
        let first = block(&screen, "Pondering...", 1, 3);
        submit(t, "/thinking-label Mulling it over");
        // The label shows in the notice first; the block is redrawn with it a frame later.
        let screen = t.wait_until("the block to show the new label", WAIT, |s| {
            s.contains("The answer is 42.")
                && block(s, "The answer is 42.", 3, 4)
                    .iter()
                    .any(|r| r.trim() == "Mulling it over")
        });
        let second = block(&screen, "The answer is 42.", 3, 4);
        // Back to showing thinking for the next run (the setting is global).
        t.keys(&["C-t"]);
        t.wait_for("consider the options", WAIT);
        quit(t);
        (first, second)
    };
    let ours = run(&env.start(&extensions, 80, 30));
    assert_eq!(ours.0[1].trim(), "Pondering...", "{:?}", ours.0);
    assert!(
        ours.1.iter().any(|r| r.trim() == "Mulling it over"),
        "{:?}",
        ours.1
    );

    let Some(t) = start_reference(&env, &extensions, 80, 30) else {
        return;
    };
    let theirs = run(&t);
    assert_eq!(ours.0, theirs.0);
    assert_eq!(ours.1, theirs.1);
}

/// A renderer registered after loading (in `session_start`, as extensions that set
/// themselves up lazily do) and one registered by a command later still.
const LATE_RENDERER: &str = r#"
export default function (pi) {
  const box = (label) => (message) => ({ render: () => [`${label}: ${message.content}`], invalidate() {} });
  pi.on("session_start", () => pi.registerMessageRenderer("early", box("EARLY BOX")));
  pi.registerCommand("later", { handler: async () => pi.registerMessageRenderer("later", box("LATER BOX")) });
  pi.registerCommand("send", { handler: async (args) => {
    pi.sendMessage({ customType: args.trim(), content: `message of ${args.trim()}`, display: true });
  }});
}
"#;

/// Renderers registered after the extension loaded draw their messages too, as in pi.
#[test]
fn message_renderers_registered_after_loading_draw_their_messages() {
    let Some(_) = examples() else { return };
    let env = Env::new(json!({"sequence": []}));
    let file = env.cwd().join("late.ts");
    std::fs::write(&file, LATE_RENDERER).unwrap();
    let t = env.start(&format!("-e {}", file.display()), 80, 30);
    ready(&t);
    submit(&t, "/send early");
    t.wait_for("EARLY BOX: message of early", WAIT);
    submit(&t, "/later");
    submit(&t, "/send later");
    let screen = t.wait_for("LATER BOX: message of later", WAIT);
    assert!(
        !screen.contains("[later]"),
        "drawn by the extension: {screen}"
    );
    quit(&t);
}
