//! `pi config` in a real terminal (tmux): the Resource Configuration screen lists the
//! resources of a local pi package and of the user's and the project's folders, a
//! filter narrows it, Space switches the selected resource, Esc closes, and
//! settings.json holds exactly the `+path` / `-path` entries reference pi writes for the
//! same keys on an identical home.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::reference_16;
use crate::support::tmux::{self, Tmux};

const WAIT: Duration = Duration::from_secs(30);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A home with a local package (a theme, a prompt, a skill) in the user's settings, a
/// user prompt template and a project skill.
fn make_home(root: &Path) {
    let agent = root.join("home/.pi/agent");
    write(
        &agent.join("settings.json"),
        &serde_json::to_string_pretty(&json!({"packages": ["../../pkgs/demo"]})).unwrap(),
    );
    let pkg = root.join("home/pkgs/demo");
    write(&pkg.join("package.json"), r#"{"name": "demo"}"#);
    let theme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/dark.json"))
            .unwrap()
            .replace("\"name\": \"dark\"", "\"name\": \"ocean\"");
    write(&pkg.join("themes/ocean.json"), &theme);
    write(&pkg.join("prompts/review.md"), "Review the code\n");
    write(
        &pkg.join("skills/helper/SKILL.md"),
        "---\nname: helper\ndescription: Helps\n---\nHelp.\n",
    );
    write(&agent.join("prompts/hello.md"), "Say hello\n");
    write(
        &root.join("proj/.pi/skills/local-skill/SKILL.md"),
        "---\nname: local-skill\ndescription: Local\n---\nLocal.\n",
    );
    // The user trusts the project (its settings and skills are listed).
    crate::support::pi_project::trust_folder(&agent, &root.join("proj"));
}

/// Runs `program config` in the home under `root`: switches the package's theme off
/// and the user's prompt off, then closes. Returns the first screen.
fn toggle_two(program: &str, root: &Path) -> String {
    let home = root.join("home");
    let t = Tmux::start(
        &format!("{program} config"),
        &root.join("proj"),
        &[
            ("HOME", home.to_str().unwrap()),
            ("PI_CODING_AGENT_DIR", ""),
        ],
        100,
        40,
    );
    // pi 1.6 heads its screen "Global Resources", pi-rs "Resource Configuration".
    let first = t.wait_for("esc close", WAIT);
    t.wait_for("llama.cpp", WAIT);
    let first = if first.contains("llama.cpp") {
        first
    } else {
        t.screen()
    };
    // pi-rs lists the project's skill further down (pi 1.6 lists it in the project
    // scope, behind Tab, which pi-rs does not have yet).
    if !program.contains("reference") {
        t.type_text("local");
        t.wait_for("local-skill", WAIT);
        t.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
        t.wait_for("review.md", WAIT);
    }
    t.type_text("ocean");
    t.wait_until("the filter", WAIT, |s| !s.contains("review.md"));
    t.keys(&["Space"]);
    t.wait_for("[ ] ocean.json", WAIT);
    // Clear the filter, then pick the user's prompt.
    t.keys(&["BSpace", "BSpace", "BSpace", "BSpace", "BSpace"]);
    t.wait_for("review.md", WAIT);
    t.type_text("hello");
    t.wait_until("the filter", WAIT, |s| !s.contains("review.md"));
    t.keys(&["Enter"]);
    t.wait_for("[ ] hello.md", WAIT);
    t.keys(&["Escape"]);
    t.wait_until("the exit", WAIT, |_| t.exited());
    first
}

fn settings(root: &Path) -> String {
    std::fs::read_to_string(root.join("home/.pi/agent/settings.json")).unwrap()
}

#[test]
fn config_screen_switches_resources_and_writes_pis_entries() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    make_home(dir.path());
    let first = toggle_two(env!("CARGO_BIN_EXE_pi"), dir.path());
    let rows: Vec<&str> = first.lines().map(str::trim_end).collect();
    let start = rows
        .iter()
        .position(|r| r.trim() == "../../pkgs/demo (user)")
        .unwrap_or_else(|| panic!("no package group:\n{first}"));
    // pi 1.6's order: packages, then the user's groups (its folders, pi's built-in
    // extensions), then the project's.
    assert_eq!(
        rows[start..start + 14],
        [
            "  ../../pkgs/demo (user)",
            "    Skills",
            ">     [x] helper",
            "    Prompts",
            "      [x] review.md",
            "    Themes",
            "      [x] ocean.json",
            "  User (~/.pi/agent/)",
            "    Prompts",
            "      [x] hello.md",
            "  Built-in",
            "    Extensions",
            "      [x] codemode",
            "      [x] llama.cpp",
        ]
    );
    let written: Value = serde_json::from_str(&settings(dir.path())).unwrap();
    assert_eq!(
        written,
        json!({
            "packages": [{"source": "../../pkgs/demo", "themes": ["-themes/ocean.json"]}],
            "prompts": ["-prompts/hello.md"],
        })
    );

    // The same keys in reference pi 1.6 on an identical home write the same file.
    if let Err(why) = reference_16::available() {
        eprintln!("reference pi comparison skipped: {why}");
        return;
    }
    let reference = tempfile::tempdir().unwrap();
    make_home(reference.path());
    toggle_two(&reference_16::shell_command(), reference.path());
    assert_eq!(settings(dir.path()), settings(reference.path()));
}

/// A theme from a package named by the `theme` setting draws the interactive screen in
/// its colours.
#[tokio::test]
async fn package_theme_is_selectable_by_the_theme_setting() {
    use pi::modes::interactive::app::Headless;
    use pi::modes::theme::{ColorMode, ColorValue};

    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let models = json!({"providers": {"mock": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "mock",
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
    }}});
    write(&agent.join("models.json"), &models.to_string());
    let pkg = dir.path().join("pkgs/demo");
    let mut theme: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/dark.json"))
            .unwrap(),
    )
    .unwrap();
    theme["name"] = json!("ocean");
    // The editor's border takes the thinking level's colour, the others the border's.
    for token in ["border", "borderAccent", "borderMuted", "thinkingOff"] {
        theme["colors"][token] = json!("#123456");
    }
    write(&pkg.join("package.json"), r#"{"name": "demo"}"#);
    write(&pkg.join("themes/sea.json"), &theme.to_string());
    write(
        &agent.join("settings.json"),
        &json!({"packages": [pkg.to_str().unwrap()], "theme": "ocean", "quietStartup": true})
            .to_string(),
    );
    let session = crate::support::session::mock_agent_session(
        &agent,
        &cwd,
        &dir.path().join("sessions"),
        &["read"],
    );
    let mut ui = Headless::new(session, 80, 24);
    ui.render();
    let mode = ColorMode::detect(|k| std::env::var(k).ok());
    let ours = ColorValue::parse_hex("#123456").unwrap().to_color(mode);
    let frame = ui.frame();
    let borders: Vec<_> = frame
        .content()
        .iter()
        .filter(|c| c.symbol() == "─")
        .map(|c| Some(c.fg))
        .collect();
    assert!(!borders.is_empty(), "no border drawn:\n{}", ui.screen());
    assert!(
        borders.iter().all(|fg| *fg == ours),
        "borders not in the package theme's colour: {:?}",
        &borders[..3.min(borders.len())]
    );
}

/// Switches pi 1.6's built-in `mcp` extension off, then on again, in `program config`.
fn toggle_builtin(program: &str, root: &Path) {
    for shown in ["[ ] mcp", "[x] mcp"] {
        let t = Tmux::start(
            &format!("{program} config"),
            &root.join("proj"),
            &[
                ("HOME", root.join("home").to_str().unwrap()),
                ("PI_CODING_AGENT_DIR", ""),
            ],
            100,
            40,
        );
        t.wait_for("Built-in", WAIT);
        t.type_text("mcp");
        t.wait_until("the filter", WAIT, |s| !s.contains("codemode"));
        t.keys(&["Space"]);
        t.wait_for(shown, WAIT);
        t.keys(&["Escape"]);
        t.wait_until("the exit", WAIT, |_| t.exited());
    }
}

/// The Built-in group lists pi 1.6's built-in extensions; switching one writes
/// `-builtin:<name>` / `+builtin:<name>` to the user's `extensions`, byte for byte as
/// reference pi 1.6 writes them.
#[test]
fn builtin_extensions_are_switched_as_pi_1_6_writes_them() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("home/.pi/agent/settings.json"), "{}");
    std::fs::create_dir_all(dir.path().join("proj")).unwrap();
    toggle_builtin(env!("CARGO_BIN_EXE_pi"), dir.path());
    let written: Value = serde_json::from_str(&settings(dir.path())).unwrap();
    assert_eq!(written, json!({"extensions": ["+builtin:mcp"]}));

    if let Err(why) = reference_16::available() {
        eprintln!("reference pi comparison skipped: {why}");
        return;
    }
    let reference = tempfile::tempdir().unwrap();
    write(&reference.path().join("home/.pi/agent/settings.json"), "{}");
    std::fs::create_dir_all(reference.path().join("proj")).unwrap();
    toggle_builtin(&reference_16::shell_command(), reference.path());
    assert_eq!(settings(dir.path()), settings(reference.path()));
}
