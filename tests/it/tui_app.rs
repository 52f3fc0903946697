//! The interactive app in-process: keys and session events go through the app's
//! `handle`, frames come from its `compose`, and the screen is read from a ratatui buffer
//! — no terminal, no tmux. A real `AgentSession` talks to the loopback model server, so
//! prompts really stream. The tmux tests in `e2e` stay for what needs a real terminal
//! (scrollback, escape sequences, key encodings).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::session::mock_agent_session;
use pi::core::agent_session::AgentSession;
use pi::modes::interactive::app::Headless;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(15);

pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) server: MockLlm,
}

impl Env {
    pub(crate) fn new(script: Value, settings: Value) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let env = Env { dir, server };
        std::fs::create_dir_all(env.agent()).unwrap();
        std::fs::create_dir_all(env.cwd()).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", env.server.url()), "api": "openai-completions",
            "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [
                {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
                {"id": "other-model", "name": "Other Model", "contextWindow": 100000, "maxTokens": 4000}
            ]
        }}});
        std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
        let mut settings = settings;
        settings["quietStartup"] = json!(true);
        std::fs::write(env.agent().join("settings.json"), settings.to_string()).unwrap();
        env
    }

    pub(crate) fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    pub(crate) fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn sessions(&self) -> PathBuf {
        self.dir.path().join("sessions")
    }

    pub(crate) fn session(&self) -> AgentSession {
        mock_agent_session(
            &self.agent(),
            &self.cwd(),
            &self.sessions(),
            &["read", "bash", "edit", "write"],
        )
    }

    pub(crate) fn ui(&self, width: u16, height: u16) -> Headless {
        Headless::new(self.session(), width, height)
    }
}

pub(crate) async fn submit(ui: &mut Headless, text: &str) {
    ui.type_text(text);
    ui.keys(&["Enter"]);
}

/// The editor's rows: the lines between its two horizontal borders.
pub(crate) fn editor_rows(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let borders: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("──"))
        .map(|(i, _)| i)
        .collect();
    let [.., top, bottom] = borders[..] else {
        panic!("no editor on screen:\n{screen}");
    };
    lines[top + 1..bottom]
        .iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_into_the_transcript_and_the_editor_is_cleared() {
    let env = Env::new(
        json!({"sequence": [{"text": "Hello from the **model**.\nSecond line.", "chunk_size": 4,
                              "delay_ms": 2, "usage": {"input": 1000, "output": 10}}]}),
        json!({}),
    );
    let mut ui = env.ui(60, 20);
    submit(&mut ui, "say hello").await;
    let screen = ui.wait_for("Second line.", WAIT).await;
    assert!(screen.contains("say hello"), "{screen}");
    assert!(screen.contains("Hello from the model."), "{screen}");
    // Back to idle: the editor is empty and the footer names the model.
    let screen = ui
        .wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    assert!(
        editor_rows(&screen).iter().all(|r| r.trim().is_empty()),
        "{screen}"
    );
    assert!(screen.contains("mock-model"), "{screen}");
    let shown = screen.replace(&env.dir.path().display().to_string(), "<tmp>");
    insta::assert_snapshot!(shown, @r"
     say hello


     Hello from the model.
     Second line.

    ────────────────────────────────────────────────────────────

    ────────────────────────────────────────────────────────────
    <tmp>/proj
    ↑1.0k ↓10 0.5%/200k (auto)                        mock-model
    ");
    let requests = env.server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().contains("say hello"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_takes_text_new_lines_and_recalls_history() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(50, 16);
    ui.type_text("first line");
    let screen = ui.screen();
    let rows = editor_rows(&screen);
    assert_eq!(rows, ["first line"]);
    // Shift+Enter inserts a line break instead of submitting.
    ui.press(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::SHIFT,
    );
    ui.type_text("second line");
    let rows = editor_rows(&ui.screen());
    assert_eq!(rows, ["first line", "second line"]);
    ui.keys(&["Enter"]);
    ui.wait_for("ok", WAIT).await;
    ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    // Up on an empty editor brings the last prompt back.
    ui.keys(&["Up"]);
    let rows = editor_rows(&ui.screen());
    assert_eq!(rows.join("\n"), "first line\nsecond line");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_sent_while_streaming_are_shown_as_queued_and_then_delivered() {
    let env = Env::new(
        json!({"sequence": [
            {"text": "a slow answer that takes a while to arrive", "chunk_size": 2, "delay_ms": 40},
            {"text": "answer to the steer"}
        ]}),
        json!({}),
    );
    let mut ui = env.ui(70, 24);
    submit(&mut ui, "start").await;
    ui.wait_for("a slow", WAIT).await;
    submit(&mut ui, "change course").await;
    let screen = ui.wait_for("Steering: change course", WAIT).await;
    // pi writes the key capitalized in this hint.
    assert!(
        screen.contains("↳ Alt+Up to edit all queued messages"),
        "{screen}"
    );
    let screen = ui.wait_for("answer to the steer", WAIT).await;
    assert!(!screen.contains("Steering: change course"), "{screen}");
    let last = env.server.requests().last().unwrap().body.to_string();
    assert!(last.contains("change course"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_moves_to_an_earlier_message_after_the_summary_question() {
    let env = Env::new(
        json!({"sequence": [{"text": "answer one"}, {"text": "answer two"}]}),
        json!({}),
    );
    let mut ui = env.ui(80, 30);
    submit(&mut ui, "first question").await;
    ui.wait_for("answer one", WAIT).await;
    submit(&mut ui, "second question").await;
    ui.wait_for("answer two", WAIT).await;
    ui.wait_until("idle", WAIT, |s| !s.contains("Working"))
        .await;
    submit(&mut ui, "/tree").await;
    let screen = ui.wait_for("Session Tree", WAIT).await;
    assert!(screen.contains("first question") && screen.contains("second question"));
    // Up from the leaf: "second question", Up again... choose the first user message.
    ui.keys(&["Up", "Up", "Up"]);
    let screen = ui.screen();
    let selected = screen
        .lines()
        .find(|l| l.contains('›'))
        .unwrap_or_default()
        .to_string();
    assert!(selected.contains("first question"), "{screen}");
    ui.keys(&["Enter"]);
    // The summary question is a dialog: "No summary" is preselected.
    let screen = ui.wait_for("Summarize branch?", WAIT).await;
    assert!(screen.contains("No summary"), "{screen}");
    ui.keys(&["Enter"]);
    let screen = ui.wait_for("Navigated to selected point", WAIT).await;
    // The chosen message is back in the editor, ready to be changed and sent again.
    assert_eq!(
        editor_rows(&screen).join("\n").trim(),
        "first question",
        "{screen}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_selector_filters_and_switches_the_model() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/model").await;
    let screen = ui.wait_for("other-model", WAIT).await;
    assert!(screen.contains("mock-model"), "{screen}");
    ui.type_text("other");
    let screen = ui.screen();
    assert!(
        !screen.contains("mock/mock-model"),
        "filtered out:\n{screen}"
    );
    ui.keys(&["Enter"]);
    let screen = ui
        .wait_until("the new model in the footer", WAIT, |s| {
            !s.contains("Session Tree")
                && s.lines().last().is_some_and(|l| l.contains("other-model"))
        })
        .await;
    assert!(!screen.contains("Select model"), "{screen}");
    assert_eq!(ui.app.session.model().unwrap().id, "other-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_lists_earlier_sessions_of_the_project() {
    let env = Env::new(
        json!({"sequence": [{"text": "an earlier answer"}, {"text": "now"}]}),
        json!({}),
    );
    {
        let mut earlier = env.ui(80, 24);
        submit(&mut earlier, "an earlier conversation").await;
        earlier.wait_for("an earlier answer", WAIT).await;
        earlier
            .wait_until("idle", WAIT, |s| !s.contains("Working"))
            .await;
    }
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "/resume").await;
    let screen = ui.wait_for("an earlier conversation", WAIT).await;
    assert!(screen.contains("Resume Session"), "{screen}");
    ui.keys(&["Escape"]);
    let screen = ui
        .wait_until("the picker to close", WAIT, |s| {
            !s.contains("Resume Session")
        })
        .await;
    assert!(editor_rows(&screen).iter().all(|r| r.trim().is_empty()));
}

/// With the `/` completion popup open, Escape closes the popup only, but Ctrl+C still
/// clears the editor (closing the popup) and the other app keys still act, as in pi.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_keys_act_while_the_completion_popup_is_open() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    ui.type_text("/se");
    ui.wait_for("settings", WAIT).await;
    ui.keys(&["Escape"]);
    let screen = ui
        .wait_until("popup closed", WAIT, |s| !s.contains("settings"))
        .await;
    assert_eq!(editor_rows(&screen), vec!["/se"], "{screen}");
    ui.keys(&["Tab"]);
    ui.wait_for("settings", WAIT).await;
    ui.keys(&["C-p"]);
    ui.wait_for("Switched to Other Model", WAIT).await;
    ui.keys(&["C-c"]);
    let screen = ui
        .wait_until("editor cleared", WAIT, |s| {
            !s.contains("/se") && !s.contains("Open settings")
        })
        .await;
    assert_eq!(editor_rows(&screen), vec![""], "{screen}");
}

/// pi's session actions have no keys by default; bound in keybindings.json they open
/// `/tree`, `/fork` and `/resume` and start a new session, as the commands do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_actions_bound_in_keybindings_json_run_their_commands() {
    let env = Env::new(json!({"default": {"text": "the reply"}}), json!({}));
    std::fs::write(
        env.agent().join("keybindings.json"),
        r#"{"app.session.tree": "ctrl+x", "app.session.fork": "alt+k",
            "app.session.resume": "alt+r", "app.session.new": "alt+n"}"#,
    )
    .unwrap();
    let mut ui = env.ui(80, 30);
    submit(&mut ui, "first question").await;
    ui.wait_for("the reply", WAIT).await;
    ui.keys(&["C-x"]);
    ui.wait_for("Session Tree", WAIT).await;
    ui.keys(&["Escape"]);
    ui.wait_until("tree closed", WAIT, |s| !s.contains("Session Tree"))
        .await;
    ui.keys(&["M-k"]);
    ui.wait_for("Fork from Message", WAIT).await;
    ui.keys(&["Escape"]);
    ui.wait_until("fork closed", WAIT, |s| !s.contains("Fork from Message"))
        .await;
    ui.keys(&["M-r"]);
    ui.wait_for("Resume Session", WAIT).await;
    ui.keys(&["Escape"]);
    ui.wait_until("resume closed", WAIT, |s| !s.contains("Resume Session"))
        .await;
    ui.keys(&["M-n"]);
    let screen = ui.wait_for("New session started", WAIT).await;
    assert!(!screen.contains("first question"), "{screen}");
}

/// Ctrl+T hides and shows thinking blocks and says so, as pi's status line (the second
/// note replaces the first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_t_toggles_thinking_blocks_with_pis_status() {
    let env = Env::new(
        json!({"default": {"thinking": "pondering the question", "text": "the answer"}}),
        json!({}),
    );
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "think").await;
    let screen = ui.wait_for("the answer", WAIT).await;
    assert!(screen.contains("pondering the question"), "{screen}");
    ui.keys(&["C-t"]);
    let screen = ui.wait_for("Thinking blocks: hidden", WAIT).await;
    assert!(!screen.contains("pondering the question"), "{screen}");
    ui.keys(&["C-t"]);
    let screen = ui.wait_for("Thinking blocks: visible", WAIT).await;
    assert!(screen.contains("pondering the question"), "{screen}");
    assert!(!screen.contains("Thinking blocks: hidden"), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_models_and_levels_leaves_one_status_line_as_in_pi() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    ui.keys(&["C-p"]);
    let screen = ui.wait_for("Switched to Other Model", WAIT).await;
    assert!(!screen.contains("mock/"), "{screen}");
    ui.keys(&["C-p"]);
    let screen = ui.wait_for("Switched to mock-model", WAIT).await;
    assert_eq!(
        screen.matches("Switched to").count(),
        1,
        "replaced:\n{screen}"
    );
    ui.keys(&["S-Tab"]);
    let screen = ui
        .wait_for("Current model does not support thinking", WAIT)
        .await;
    assert_eq!(screen.matches("Switched to").count(), 0, "{screen}");
    // Nothing queued: Alt+Up says so.
    ui.keys(&["M-Up"]);
    ui.wait_for("No queued messages to restore", WAIT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_bang_command_animates_its_spinner() {
    let env = Env::new(json!({"default": {"text": "ok"}}), json!({}));
    let mut ui = env.ui(80, 24);
    submit(&mut ui, "!sleep 3").await;
    let running = |screen: &str| {
        screen
            .lines()
            .find(|l| l.contains("Running..."))
            .map(|l| l.trim().to_string())
    };
    let first = running(&ui.wait_for("Running...", WAIT).await).unwrap();
    ui.handle(pi::modes::interactive::app::UiEvent::Tick);
    let second = running(&ui.screen()).unwrap();
    assert_ne!(first, second, "the spinner moved on a tick");
    ui.keys(&["Escape"]);
}
