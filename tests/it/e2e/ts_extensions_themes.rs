//! Themes from pi's extensions in the terminal UI: `mac-system-theme` switching between
//! light and dark with `ctx.ui.setTheme` (a stand-in `osascript` answers for macOS),
//! `dynamic-resources`' theme file joining the theme list (`getAllThemes`) and being
//! chosen by name, and `ctx.reload()` from a command reloading the UI like `/reload`.

use std::path::Path;

use serde_json::{Value, json};

use super::env::{Env, WAIT, editor_ready, submit};
use crate::support::tmux;

fn settings(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.agent_dir().join("settings.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn wait_for_setting(env: &Env, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let s = settings(env);
        if done(&s) {
            return s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}: {s}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

macro_rules! examples_or_skip {
    () => {{
        if !tmux::available() {
            eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
            return;
        }
        match crate::ts_extensions::examples_dir() {
            Ok(dir) => dir,
            Err(why) => {
                eprintln!("skipped: pi's example extensions are not available: {why}");
                return;
            }
        }
    }};
}

/// A stand-in `osascript` printing the content of `<dir>/dark` ("true" or "false").
fn fake_osascript(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("osascript");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat {}\n", dir.join("dark").display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `mac-system-theme` asks macOS for its appearance at `session_start` and every 2 s:
/// light, then dark after the (stand-in) system switched; each `setTheme` by name is
/// saved in the settings as pi saves it, and the screen's colours follow.
#[test]
fn mac_system_theme_follows_the_system_appearance() {
    let dir = examples_or_skip!();
    let env = Env::new(json!({"sequence": []}));
    let bin = env.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    fake_osascript(&bin);
    std::fs::write(bin.join("dark"), "false\n").unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let t = env.start_with_env(
        &format!("-e {}", dir.join("mac-system-theme.ts").display()),
        100,
        30,
        &[("PATH", path.as_str())],
    );
    t.wait_until("the editor", WAIT, editor_ready);
    wait_for_setting(&env, "the light theme", |s| s["theme"] == "light");
    // The setting is saved before the screen is redrawn in it: under load a snapshot
    // taken at once can still show the startup (dark) colours, which the dark theme
    // then never changes.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let light = t.screen_ansi();
    std::fs::write(bin.join("dark"), "true\n").unwrap();
    wait_for_setting(&env, "the dark theme", |s| s["theme"] == "dark");
    let dark = t.wait_until("the dark colours", WAIT, |_| t.screen_ansi() != light);
    assert!(editor_ready(&dark), "{dark}");
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}

/// Lists the themes and switches to the one named in the arguments.
const THEMES: &str = r#"export default function (pi) {
    pi.registerCommand("themes", { handler: async (args, ctx) => {
        const names = ctx.ui.getAllThemes().map((t) => t.name).join(",");
        const dynamic = ctx.ui.getTheme("dynamic-resources");
        const result = args ? ctx.ui.setTheme(args.trim()) : undefined;
        ctx.ui.notify(`themes=${names} found=${dynamic !== undefined} result=${JSON.stringify(result)} now=${ctx.ui.theme.name}`, "info");
    } });
    pi.registerCommand("reload-ui", { handler: async (_args, ctx) => {
        await ctx.reload();
    } });
}
"#;

/// `dynamic-resources` names its theme file in `resources_discover`: the theme is in
/// `getAllThemes`, `getTheme` finds it, `setTheme` by name switches to it and saves it;
/// an unknown name fails with pi's error. `ctx.reload()` from a command reloads like
/// `/reload` (pi's status note) and the extension theme is still offered afterwards.
#[test]
fn extension_theme_paths_join_the_theme_list() {
    let dir = examples_or_skip!();
    let env = Env::new(json!({"sequence": []}));
    let themes = env.cwd().join("themes.js");
    std::fs::write(&themes, THEMES).unwrap();
    let t = env.start(
        &format!(
            "-e {} -e {}",
            dir.join("dynamic-resources/index.ts").display(),
            themes.display()
        ),
        160,
        30,
    );
    t.wait_until("the editor", WAIT, editor_ready);
    // The extension's theme arrives with the UI state once its `resources_discover`
    // answered: ask until the extension sees it.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        submit(&t, "/themes");
        std::thread::sleep(std::time::Duration::from_millis(500));
        let screen = t.screen();
        if screen.contains("found=true") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{screen}");
    }
    submit(&t, "/themes dynamic-resources");
    let screen = t.wait_for("now=dynamic-resources", WAIT);
    assert!(
        screen.contains("themes=dark,dynamic-resources,light found=true result={\"success\":true}"),
        "{screen}"
    );
    wait_for_setting(&env, "the saved theme", |s| {
        s["theme"] == "dynamic-resources"
    });

    submit(&t, "/themes nosuch");
    let screen = t.wait_for("Theme not found: nosuch", WAIT);
    assert!(screen.contains("now=dark"), "{screen}");
    // A failed switch is not saved (pi falls back to dark without saving).
    assert_eq!(settings(&env)["theme"], "dynamic-resources");

    submit(&t, "/reload-ui");
    t.wait_for(
        "Reloaded keybindings, extensions, skills, prompts, themes",
        WAIT,
    );
    submit(&t, "/themes");
    let screen = t.wait_for("found=true result=undefined", WAIT);
    assert!(
        screen.contains("themes=dark,dynamic-resources,light"),
        "{screen}"
    );
    t.keys(&["C-d"]);
    t.wait_until("exit", WAIT, |_| t.exited());
}
