//! The session factory (`core::factory`), the way the binary and the interactive UI use
//! it: it builds, loads and reloads sessions as async code — on a single-threaded runtime
//! too, which would panic if anything inside still blocked on the runtime — with pi's
//! warnings in pi's order, and the interactive app asks it for the session to open at
//! startup (directly or through the `--resume` picker) and for `/reload`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::extensions as ext_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::support::pi_project::Project;
use pi::core::agent_session::{AgentSession, PromptOptions};
use pi::core::factory::{
    ExtensionHosting, ResourceLoading, SessionConfig, SessionFactory, SessionSource, ToolSelection,
};
use pi::core::paths::AgentPaths;
use pi::extensions::HostMode;
use pi::modes::interactive::app::{Headless, InteractiveOptions, StartupOpen};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);

/// An extension that registers a tool named after its file (`shout.sh`: `shout`) and
/// appends every event it gets (`<type> <reason>`) to `events.log` in the project.
const RECORDING_EXTENSION: &str = r#"#!/bin/sh
name=$(basename "$0" .sh)
IFS= read -r hello || exit 0
printf '{"type":"register","name":"%s","events":["session_start","session_shutdown"],"tools":[{"name":"%s","label":"%s","description":"The %s tool","parameters":{"type":"object","properties":{}}}]}\n' "$name" "$name" "$name" "$name"
while IFS= read -r line; do
    case "$line" in
    '{"type":"event"'*)
        kind=$(printf '%s' "$line" | sed -n 's/.*"event":{"type":"\([a-z_]*\)".*/\1/p')
        reason=$(printf '%s' "$line" | sed -n 's/.*"reason":"\([a-z]*\)".*/\1/p')
        echo "$name $kind $reason" >> events.log
        id=${line#*\"id\":}
        id=${id%%,*}
        printf '{"type":"response","id":%s}\n' "$id" ;;
    esac
done
"#;

/// The mock model, chosen the way `--provider mock --model mock-model` does.
fn config() -> SessionConfig {
    SessionConfig {
        provider: Some("mock".into()),
        model: Some("mock-model".into()),
        ..SessionConfig::default()
    }
}

fn new_factory(p: &Project, config: SessionConfig) -> Arc<SessionFactory> {
    let hosting = ExtensionHosting {
        mode: HostMode::Interactive,
        has_ui: false,
    };
    Arc::new(SessionFactory::new(
        config,
        p.cwd(),
        AgentPaths::new(p.agent_dir()),
        hosting,
    ))
}

/// Puts a recording extension named `name` into the project's `.pi/extensions/`.
fn extension(p: &Project, name: &str) -> PathBuf {
    let dir = p.cwd().join(".pi/extensions");
    std::fs::create_dir_all(&dir).unwrap();
    ext_support::script(&dir, name, RECORDING_EXTENSION)
}

/// What the extension `name` recorded, in order (extensions get an event all at once, so
/// the order between them is not fixed).
fn events(p: &Project, name: &str) -> Vec<String> {
    std::fs::read_to_string(p.cwd().join("events.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("{name} ")).map(str::to_string))
        .collect()
}

/// Tool names, sorted.
fn tools(session: &AgentSession) -> Vec<String> {
    let mut names: Vec<String> = session
        .tools()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    names.sort();
    names
}

fn session_file(session: &AgentSession) -> PathBuf {
    session.with_session(|m| m.session_file().unwrap().to_path_buf())
}

#[tokio::test(flavor = "current_thread")]
async fn loads_and_reloads_with_extensions_on_a_single_threaded_runtime() {
    let p = Project::new(json!({"sequence": []}));
    let shout = extension(&p, "shout.sh");
    extension(&p, "keep.sh");
    let factory = new_factory(&p, config());

    let built = factory.load(SessionSource::Create).await.unwrap();
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    let session = built.session;
    assert_eq!(
        tools(&session),
        ["bash", "edit", "keep", "read", "shout", "write"]
    );
    // A new session file in the session directory, started by `load`.
    assert!(session_file(&session).starts_with(factory.session_dir()));
    for name in ["keep", "shout"] {
        assert_eq!(events(&p, name), ["session_start startup"]);
    }

    std::fs::remove_file(&shout).unwrap();
    p.write("AGENTS.md", "Answer in FACTORY-RELOADED style.\n");
    let warnings = factory.reload(&session).await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(tools(&session), ["bash", "edit", "keep", "read", "write"]);
    assert!(session.system_prompt().contains("FACTORY-RELOADED"));
    session.shutdown().await;
    assert_eq!(
        events(&p, "shout"),
        ["session_start startup", "session_shutdown reload"]
    );
    assert_eq!(
        events(&p, "keep"),
        [
            "session_start startup",
            "session_shutdown reload",
            "session_start reload",
            "session_shutdown quit"
        ]
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_placeholder_has_the_model_but_no_file_and_no_resources() {
    let p = Project::new(json!({"sequence": []}));
    extension(&p, "shout.sh");
    p.write(
        ".pi/prompts/review.md",
        "---\ndescription: Review\n---\nReview $1.\n",
    );
    let factory = new_factory(&p, config());
    let placeholder = factory.placeholder().await.unwrap().session;
    assert_eq!(placeholder.model().unwrap().id, "mock-model");
    assert!(placeholder.with_session(|m| m.session_file().is_none()));
    assert_eq!(tools(&placeholder), ["bash", "edit", "read", "write"]);
    assert!(placeholder.prompt_templates().is_empty());
    // Nothing was started, nothing was written.
    assert!(events(&p, "shout").is_empty());
    assert!(!factory.session_dir().exists());
}

#[tokio::test(flavor = "current_thread")]
async fn warnings_come_in_pis_order_and_a_bad_model_is_an_error() {
    let p = Project::new(json!({"sequence": []}));
    p.write(".pi/settings.json", "{ not json");
    let config = SessionConfig {
        warnings: vec!["Invalid thinking level \"max\" ignored.".into()],
        tools: ToolSelection {
            tools: Some(vec!["read".into(), "nope".into()]),
            ..ToolSelection::default()
        },
        ..config()
    };
    let factory = new_factory(&p, config.clone());
    let manager = factory.open(SessionSource::InMemory).await.unwrap();
    let built = factory.build(manager, ResourceLoading::Full).await.unwrap();
    let w = &built.warnings;
    assert_eq!(w.len(), 3, "{w:#?}");
    assert!(w[0].starts_with("Invalid thinking level"), "{w:#?}");
    assert!(w[1].contains("settings.json"), "{w:#?}");
    assert!(w[2].starts_with("Unknown tool \"nope\" ignored"), "{w:#?}");
    assert_eq!(tools(&built.session), ["read"]);

    // A flag no extension registered stops the build, as in pi.
    let flagged = SessionConfig {
        extension_flags: vec![("plan".into(), None), ("deep".into(), None)],
        ..config.clone()
    };
    let factory = new_factory(&p, flagged);
    let manager = factory.open(SessionSource::InMemory).await.unwrap();
    let error = factory
        .build(manager, ResourceLoading::Full)
        .await
        .err()
        .unwrap();
    assert_eq!(error.0, "Unknown options: --plan, --deep");

    // Without `--provider`, a `--model` that matches nothing stops the build.
    let unknown = SessionConfig {
        provider: None,
        model: Some("no-such-model".into()),
        ..config
    };
    let manager = factory.open(SessionSource::InMemory).await.unwrap();
    let error = new_factory(&p, unknown)
        .build(manager, ResourceLoading::Minimal)
        .await
        .err()
        .unwrap();
    assert!(error.to_string().contains("Use --list-models"), "{error}");
}

/// A session file holding one exchange, made through the factory.
async fn earlier_session(factory: &Arc<SessionFactory>) -> PathBuf {
    let session = factory.load(SessionSource::Create).await.unwrap().session;
    session
        .prompt("an earlier question", PromptOptions::default())
        .await
        .unwrap();
    session.shutdown().await;
    let file = session_file(&session);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("an earlier answer")
    );
    file
}

#[tokio::test(flavor = "current_thread")]
async fn the_app_loads_the_startup_session_through_the_factory() {
    let p = Project::new(json!({"sequence": [{"text": "an earlier answer"}]}));
    let factory = new_factory(&p, config());
    let file = earlier_session(&factory).await;

    let placeholder = factory.placeholder().await.unwrap().session;
    let options = InteractiveOptions {
        factory: Some(factory.clone()),
        open: Some(StartupOpen::Source(SessionSource::Open(file.clone()))),
        ..InteractiveOptions::default()
    };
    let mut ui = Headless::with_options(placeholder, 80, 24, options);
    let screen = ui.wait_for("an earlier answer", WAIT).await;
    assert!(screen.contains("an earlier question"), "{screen}");
    assert_eq!(session_file(&ui.app.session), file);
    assert!(!ui.app.loading);
}

#[tokio::test(flavor = "current_thread")]
async fn the_resume_picker_at_startup_opens_the_chosen_session_through_the_factory() {
    let p = Project::new(json!({"sequence": [{"text": "an earlier answer"}]}));
    extension(&p, "shout.sh");
    let factory = new_factory(&p, config());
    let file = earlier_session(&factory).await;
    std::fs::remove_file(p.cwd().join("events.log")).unwrap();

    let placeholder = factory.placeholder().await.unwrap().session;
    let options = InteractiveOptions {
        factory: Some(factory.clone()),
        open: Some(StartupOpen::Picker),
        ..InteractiveOptions::default()
    };
    let mut ui = Headless::with_options(placeholder, 80, 24, options);
    let screen = ui.wait_for("an earlier question", WAIT).await;
    assert!(screen.contains("Resume Session"), "{screen}");
    assert!(ui.app.loading);
    ui.keys(&["Enter"]);
    ui.wait_for("an earlier answer", WAIT).await;
    assert_eq!(session_file(&ui.app.session), file);
    assert_eq!(tools(&ui.app.session).len(), 5);
    assert_eq!(events(&p, "shout"), ["session_start startup"]);

    // `/reload` goes to the same factory: the extension restarts.
    ui.type_text("/reload");
    ui.keys(&["Enter"]);
    ui.wait_for("Reloaded keybindings", WAIT).await;
    assert_eq!(
        events(&p, "shout"),
        [
            "session_start startup",
            "session_shutdown reload",
            "session_start reload"
        ]
    );
    ui.app.session.shutdown().await;
}
