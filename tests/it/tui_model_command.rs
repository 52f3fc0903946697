//! `/model <text>` in the interactive app (in-process, `Headless`), as in pi: an exact
//! `provider/id` or a bare id that names one model (case-insensitive) switches at once with
//! `Model: <id>`; anything else — a partial name, an id two providers share, nothing at all
//! — opens the model selector searching for the text, and the model stays.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::time::Duration;

use crate::support::session::mock_agent_session;
use pi::modes::interactive::app::Headless;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let env = Env { dir };
        std::fs::create_dir_all(env.agent()).unwrap();
        std::fs::create_dir_all(env.dir.path().join("proj")).unwrap();
        let provider = |models: serde_json::Value| {
            json!({"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                "apiKey": "k", "models": models})
        };
        let models = json!({"providers": {
            "mock": provider(json!([
                {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
                {"id": "shared-model", "name": "Shared", "contextWindow": 1000, "maxTokens": 100},
                {"id": "unique-model", "name": "Unique Model", "contextWindow": 1000, "maxTokens": 100}
            ])),
            "alt": provider(json!([
                {"id": "shared-model", "name": "Shared", "contextWindow": 1000, "maxTokens": 100}
            ]))
        }});
        std::fs::write(env.agent().join("models.json"), models.to_string()).unwrap();
        std::fs::write(
            env.agent().join("settings.json"),
            r#"{"quietStartup": true}"#,
        )
        .unwrap();
        env
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
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

/// Submits `text` as it stands: typed in, `/model <text>` opens pi's completion list,
/// whose Enter takes the highlighted model instead (see the last test).
fn command(ui: &mut Headless, text: &str) {
    ui.app.editor.set_text(text);
    ui.keys(&["Enter"]);
}

fn current(ui: &Headless) -> String {
    let model = ui.app.session.model().unwrap();
    format!("{}/{}", model.provider, model.id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_reference_switches_at_once_in_any_case() {
    let env = Env::new();
    let mut ui = env.ui();
    command(&mut ui, "/model MOCK/Unique-Model");
    let screen = ui.wait_for("Model: unique-model", WAIT).await;
    assert_eq!(current(&ui), "mock/unique-model");
    assert!(
        screen.lines().last().unwrap().contains("unique-model"),
        "the footer does not show the model:\n{screen}"
    );
    // A bare id that only one provider has.
    command(&mut ui, "/model mock-model");
    ui.wait_for("Model: mock-model", WAIT).await;
    assert_eq!(current(&ui), "mock/mock-model");
    // provider/id picks one of two models with the same id.
    command(&mut ui, "/model alt/shared-model");
    ui.wait_for("Model: shared-model", WAIT).await;
    assert_eq!(current(&ui), "alt/shared-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ambiguous_or_partial_reference_opens_the_selector_searching_for_it() {
    let env = Env::new();
    let mut ui = env.ui();
    // Two providers have `shared-model`: pi does not guess.
    command(&mut ui, "/model shared-model");
    let screen = ui.wait_for("> shared-model", WAIT).await;
    assert!(
        screen.contains("[mock]") || screen.contains("mock"),
        "{screen}"
    );
    let rows = screen
        .lines()
        .filter(|l| l.contains("shared-model"))
        .count();
    assert!(
        rows >= 3,
        "both models and the search are listed:\n{screen}"
    );
    assert_eq!(current(&ui), "mock/mock-model");
    ui.keys(&["Escape"]);

    // A part of a name is a search, not a choice.
    command(&mut ui, "/model unique");
    let screen = ui.wait_for("> unique", WAIT).await;
    assert!(screen.contains("unique-model"), "{screen}");
    assert_eq!(current(&ui), "mock/mock-model");
    // Enter takes the match.
    ui.keys(&["Enter"]);
    ui.wait_for("Model: unique-model", WAIT).await;
    assert_eq!(current(&ui), "mock/unique-model");

    command(&mut ui, "/model zzz-nothing");
    let screen = ui.wait_for("No matching models", WAIT).await;
    assert!(screen.contains("> zzz-nothing"), "{screen}");
    assert_eq!(current(&ui), "mock/unique-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_argument_of_model_completes_fuzzily_as_provider_slash_id() {
    let env = Env::new();
    let mut ui = env.ui();
    ui.wait_for("mock-model", WAIT).await;
    // pi lists every available model under `/model `: the id, then the provider.
    ui.type_text("/model ");
    let screen = ui.wait_for("unique-model", WAIT).await;
    let row = screen
        .lines()
        .find(|l| l.contains("unique-model"))
        .unwrap_or_default();
    assert!(row.trim_end().ends_with("mock"), "{screen}");
    // Words match the id and the provider in any order: `shared alt` is alt's model only.
    ui.type_text("shared alt");
    let screen = ui
        .wait_until("one match", WAIT, |s| {
            s.lines().filter(|l| l.contains("shared-model")).count() == 1
        })
        .await;
    assert!(
        screen
            .lines()
            .any(|l| l.contains("shared-model") && l.trim_end().ends_with("alt")),
        "{screen}"
    );
    // Tab puts `provider/id` in the editor; Enter then switches at once.
    ui.keys(&["Tab"]);
    let screen = ui.wait_for("/model alt/shared-model", WAIT).await;
    assert!(!screen.contains("unique-model"), "{screen}");
    ui.keys(&["Enter"]);
    ui.wait_for("Model: shared-model", WAIT).await;
    assert_eq!(current(&ui), "alt/shared-model");
}
