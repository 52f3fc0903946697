//! The whole interactive app in-process (`Headless`: the real `handle` and `compose`),
//! on synthetic sessions opened from disk (`session::synth`):
//!
//! - a key and its frame with a 2,000-message conversation open (questions and answers
//!   with markdown; the editor, the footer and the live region recomputed, the history
//!   already in the scrollback);
//! - `/tree` + Enter until its first frame on a 10,000-turn session (snapshot of the
//!   whole tree, selector, first frame).
//!
//! ```sh
//! cargo bench --bench tui_app
//! ```
//!
//! Targets (issue 18, release build): key to frame ≤ 16 ms; `/tree` open ≤ 50 ms. Figures
//! go into docs/performance.md.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyModifiers};
use pi::ai::message::{AssistantBlock, AssistantMessage, StopReason, TextContent, UserMessage};
use pi::ai::models::ModelRegistry;
use pi::core::agent_session::{AgentSession, AgentSessionOptions};
use pi::messages::AgentMessage;
use pi::modes::interactive::app::Headless;
use pi::session::manager::SessionManager;
use pi::session::synth;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target")
}

/// A synthetic session of `turns` turns (generated once under `target/`).
fn synthetic_session(turns: usize) -> PathBuf {
    let path = target_dir().join(format!("synthetic-session-{turns}.jsonl"));
    if !path.exists() {
        synth::generate(&path, turns, 42).expect("generate the synthetic session");
    }
    path
}

/// The app on the session `open` gives, in a throwaway agent folder.
fn headless(scratch: &Path, open: impl FnOnce(&Path) -> SessionManager) -> Headless {
    let agent = scratch.join("agent");
    let cwd = scratch.join("proj");
    std::fs::create_dir_all(&agent).expect("agent dir");
    std::fs::create_dir_all(&cwd).expect("cwd");
    std::fs::write(
        agent.join("settings.json"),
        r#"{"quietStartup": true, "lastChangelogVersion": "999.0.0"}"#,
    )
    .expect("settings");
    let session = AgentSession::new(AgentSessionOptions {
        cwd: cwd.clone(),
        paths: pi::core::paths::AgentPaths::new(agent.clone()),
        settings: pi::core::settings::Settings::load(
            &agent,
            &cwd,
            pi::core::trust::ProjectTrust::Trusted,
        ),
        registry: ModelRegistry::load(&agent),
        session: open(&cwd),
        model: None,
        thinking: pi::ai::model::ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tool_names: Vec::new(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    });
    let mut ui = Headless::new(session, WIDTH, HEIGHT);
    ui.render();
    ui
}

/// A session of 2,000 messages: questions and answers with a paragraph, a list and a
/// code block (the synthetic sessions compact every 250 turns, so their context is
/// shorter).
fn conversation(cwd: &Path, dir: &Path) -> SessionManager {
    let mut session = SessionManager::create(cwd, dir).expect("create a session");
    for i in 0..1_000 {
        let question = format!("Please fix module {i} and explain what you changed.");
        session
            .append_message(AgentMessage::User(UserMessage::text(question, 0)))
            .expect("append");
        let answer = format!(
            "Module {i} dropped the last item when the input ended without a newline. \
             The loop now keeps it, and the test covers both endings.\n\n\
             - `parse_{i}` keeps a trailing line\n- the error names the line\n\n\
             ```rust\nfn parse_{i}(input: &str) -> Vec<String> {{\n    \
             input.lines().map(str::to_string).collect()\n}}\n```"
        );
        session
            .append_message(AgentMessage::Assistant(AssistantMessage {
                content: vec![AssistantBlock::Text(TextContent::new(answer))],
                stop_reason: StopReason::Stop,
                ..AssistantMessage::default()
            }))
            .expect("append");
    }
    session
}

fn key_to_frame(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let _guard = runtime.enter();
    let scratch = tempfile::tempdir().expect("tempdir");
    let sessions = scratch.path().join("sessions");
    let mut ui = headless(scratch.path(), |cwd| conversation(cwd, &sessions));
    let messages = ui.app.session.messages().len();
    assert!(messages >= 2_000, "{messages} messages");
    let mut group = c.benchmark_group("tui_app");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function(format!("key_to_frame_{messages}_messages"), |b| {
        // A character and then Backspace, so the editor stays the same across iterations;
        // the time is per key (two keys and two frames per iteration, halved).
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                ui.press(KeyCode::Char('x'), KeyModifiers::NONE);
                ui.render();
                ui.press(KeyCode::Backspace, KeyModifiers::NONE);
                ui.render();
            }
            start.elapsed() / 2
        })
    });
    group.finish();
}

fn tree_open(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let _guard = runtime.enter();
    let scratch = tempfile::tempdir().expect("tempdir");
    let file = synthetic_session(10_000);
    let mut ui = headless(scratch.path(), |cwd| {
        SessionManager::open_with_cwd(&file, None, Some(cwd)).expect("open the session")
    });
    let mut group = c.benchmark_group("tui_app");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("tree_open_10k_turns", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                ui.type_text("/tree");
                ui.render();
                let start = Instant::now();
                ui.press(KeyCode::Enter, KeyModifiers::NONE);
                ui.render();
                total += start.elapsed();
                assert!(ui.app.overlay.is_some(), "the tree did not open");
                ui.press(KeyCode::Esc, KeyModifiers::NONE);
                ui.render();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, key_to_frame, tree_open);
criterion_main!(benches);
