//! pi 1.6's session-scoped model and thinking choices, in the interactive app: `/model`
//! and `/thinking` change this session only, Ctrl+S in their selectors saves the default
//! (`defaultProvider`/`defaultModel`, `defaultThinkingLevel`) with pi's status line, and
//! the rest of settings.json is kept. Also, in the real binary under tmux: keybindings.json
//! with every id of pi 1.6's keybindings schema loads without a warning and its bindings
//! act, `markdown.codeBlockIndent` applies, and the settings pi-rs does not support yet
//! are named in one notice.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::pi_project::Project;
use crate::support::session::mock_agent_session;
use pi::modes::interactive::app::Headless;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(15);

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(settings: Value) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let env = Env { dir };
        std::fs::create_dir_all(env.agent()).unwrap();
        std::fs::create_dir_all(env.dir.path().join("proj")).unwrap();
        let models = json!({"providers": {"mock": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
        "models": [
            {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "m-two", "name": "Mock Two", "reasoning": true, "contextWindow": 1000, "maxTokens": 100},
            {"id": "m-three", "contextWindow": 1000, "maxTokens": 100}
        ]}}});
        std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
        std::fs::write(env.agent().join("settings.json"), settings.to_string()).unwrap();
        env
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    fn settings(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.agent().join("settings.json")).unwrap())
            .unwrap()
    }

    fn ui(&self) -> Headless {
        let session = mock_agent_session(
            &self.agent(),
            &self.dir.path().join("proj"),
            &self.dir.path().join("sessions"),
            &["read"],
        );
        Headless::new(session, 100, 30)
    }
}

fn command(ui: &mut Headless, text: &str) {
    ui.app.editor.set_text(text);
    ui.keys(&["Enter"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_choices_stay_in_the_session_and_ctrl_s_saves_the_default() {
    let env = Env::new(json!({"quietStartup": true, "defaultProvider": "mock",
        "defaultModel": "mock-model", "customKey": 1}));
    let mut ui = env.ui();
    command(&mut ui, "/model");
    let screen = ui.wait_for("to set as default", WAIT).await;
    assert!(screen.contains("mock-model [mock] · default"), "{screen}");
    assert!(
        screen.contains("Enter to select · Ctrl+S to set as default · Escape/Ctrl+C to cancel"),
        "{screen}"
    );
    // Enter: this session only.
    ui.app.overlay = None;
    command(&mut ui, "/model m-two");
    ui.wait_for("Model: m-two", WAIT).await;
    assert_eq!(env.settings()["defaultModel"], "mock-model");
    // Ctrl+S on the highlighted model saves it, and keeps every other key.
    command(&mut ui, "/model");
    ui.wait_for("to set as default", WAIT).await;
    ui.type_text("m-three");
    ui.keys(&["C-s"]);
    ui.wait_for("Default model: mock/m-three", WAIT).await;
    assert_eq!(
        env.settings(),
        json!({"quietStartup": true, "defaultProvider": "mock", "defaultModel": "m-three",
            "customKey": 1, "lastChangelogVersion": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(ui.app.session.model().unwrap().id, "m-three");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_choices_stay_in_the_session_and_ctrl_s_saves_the_default() {
    let env = Env::new(json!({"quietStartup": true}));
    let mut ui = env.ui();
    command(&mut ui, "/model m-two");
    ui.wait_for("Model: m-two", WAIT).await;
    // Shift+Tab and `/thinking <level>` change the session's level only.
    ui.keys(&["S-Tab"]);
    ui.wait_for("Thinking level:", WAIT).await;
    command(&mut ui, "/thinking low");
    ui.wait_for("Thinking level: low", WAIT).await;
    command(&mut ui, "/thinking huge");
    ui.wait_for(
        "Unknown thinking level \"huge\". Available levels: off",
        WAIT,
    )
    .await;
    assert_eq!(env.settings().get("defaultThinkingLevel"), None);
    // The selector: the current level ticked, the default marked; Ctrl+S saves.
    command(&mut ui, "/thinking");
    let screen = ui.wait_for("Thinking Level", WAIT).await;
    assert!(screen.contains("✓ low"), "{screen}");
    assert!(screen.contains("· default"), "{screen}");
    assert!(
        screen.contains("Shift+Tab cycles thinking levels in-session"),
        "{screen}"
    );
    ui.keys(&["Down"]);
    ui.keys(&["C-s"]);
    ui.wait_for("Default thinking level: medium", WAIT).await;
    assert_eq!(
        env.settings(),
        json!({"quietStartup": true, "defaultThinkingLevel": "medium",
            "lastChangelogVersion": env!("CARGO_PKG_VERSION")})
    );
}

/// Every id of pi 1.6's keybindings schema, each bound to keys its pattern allows (the
/// history ones to keys this test presses), plus `$schema`.
fn pi16_keybindings() -> Option<Value> {
    let schema = match crate::support::pi16_schema::load("keybindings.schema.json") {
        Ok(schema) => schema,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    let mut map = serde_json::Map::new();
    map.insert(
        "$schema".into(),
        json!("https://pi.dev/schemas/keybindings.schema.json"),
    );
    // Every key name the schema's pattern allows, with a modifier, on an action that is
    // unbound by default.
    let pattern = schema.root["$defs"]["KeybindingValue"]["anyOf"][0]["pattern"]
        .as_str()
        .unwrap();
    let names = pattern
        .split("(?:[a-z0-9]|")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(")$"))
        .unwrap();
    let mut every_key: Vec<String> = ('a'..='z')
        .chain('0'..='9')
        .map(|c| format!("super+{c}"))
        .collect();
    // The alternatives, `\` escaping the next character (`\|` is the `|` key).
    let mut name = String::new();
    let mut chars = names.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.extend(chars.next()),
            '|' => every_key.push(format!("super+{}", std::mem::take(&mut name))),
            other => name.push(other),
        }
    }
    every_key.push(format!("super+{name}"));
    assert!(every_key.len() > 80, "{every_key:?}");
    map.insert("app.session.new".into(), json!(every_key));
    let spare = [
        "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
    ];
    let mut i = 0;
    for id in schema.root["properties"].as_object().unwrap().keys() {
        if id == "$schema" || id == "app.session.new" {
            continue;
        }
        let value = match id.as_str() {
            "tui.editor.historyPrevious" => json!("alt+p"),
            "tui.editor.historyNext" => json!(["alt+n"]),
            // Keep what this test types working.
            "tui.input.submit" => json!("enter"),
            "app.exit" | "app.clear" | "app.interrupt" => json!([]),
            _ => {
                i += 1;
                json!([format!("ctrl+shift+alt+super+{}", spare[i % spare.len()])])
            }
        };
        assert!(
            schema.valid(&value, &schema.root["properties"][id.as_str()]),
            "{id}: {value}"
        );
        map.insert(id.clone(), value);
    }
    Some(Value::Object(map))
}

#[test]
fn pi_1_6_keybindings_load_without_a_warning_and_unsupported_settings_are_named() {
    require!("tmux");
    let Some(bindings) = pi16_keybindings() else {
        return;
    };
    let project =
        Project::new(json!({"sequence": [{"text": "first answer\n\n```\nlet x = 1;\n```"}]}));
    std::fs::write(
        project.agent_dir().join("keybindings.json"),
        format!("\u{feff}{bindings}"),
    )
    .unwrap();
    std::fs::write(
        project.agent_dir().join("settings.json"),
        json!({"tuiMode": "fullscreen",
            "markdown": {"mermaid": "final", "codeBlockIndent": "»» "}})
        .to_string(),
    )
    .unwrap();
    let tui = project.tui("");
    let screen = tui.wait_for("settings pi-rs does not support yet", WAIT);
    assert!(screen.contains("markdown.mermaid, tuiMode"), "{screen}");
    assert!(!screen.contains("keybindings.json"), "{screen}");
    assert!(!screen.contains("unknown action"), "{screen}");
    assert!(!screen.contains("is not a key"), "{screen}");
    tui.type_text("first prompt");
    tui.keys(&["Enter"]);
    let screen = tui.wait_for("first answer", WAIT);
    // `markdown.codeBlockIndent` starts the code block's lines.
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start().starts_with("»» let x = 1;")),
        "{screen}"
    );
    // The dedicated history key brings the prompt back, wherever the cursor is.
    tui.keys(&["M-p"]);
    tui.wait_until("the prompt is back in the editor", WAIT, |s| {
        s.lines().filter(|l| l.contains("first prompt")).count() >= 2
    });
}
