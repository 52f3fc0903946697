//! Session store speed on a large synthetic session (10 000 turns, about 44 MB, with
//! thousands of branches, labels and compactions; see `session::synth`).
//!
//! ```sh
//! cargo bench --bench session
//! ```
//!
//! Targets (release build): open + build_session_context ≤ 150 ms, tree() ≤ 20 ms, one
//! append ≤ 50 µs. The synthetic file is generated once under `target/`.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pi::ai::message::{AssistantBlock, AssistantMessage, StopReason, TextContent};
use pi::messages::AgentMessage;
use pi::session::listing;
use pi::session::manager::SessionManager;
use pi::session::synth;

const TURNS: usize = 10_000;

fn synthetic_session() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("target/synthetic-session-{TURNS}.jsonl"));
    if !path.exists() {
        synth::generate(&path, TURNS, 42).expect("generate the synthetic session");
    }
    path
}

fn reply(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantBlock::Text(TextContent::new(text))],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        stop_reason: StopReason::Stop,
        timestamp: 1_760_000_000_000,
        ..AssistantMessage::default()
    })
}

fn bench(c: &mut Criterion) {
    let path = synthetic_session();
    let mut group = c.benchmark_group("session");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));

    group.bench_function("open + build_session_context (10k turns)", |b| {
        b.iter(|| {
            let session = SessionManager::open(&path, None).expect("open");
            black_box(session.build_session_context())
        })
    });

    let session = SessionManager::open(&path, None).expect("open");
    group.bench_function("tree (10k turns)", |b| b.iter(|| black_box(session.tree())));
    group.bench_function("build_session_context, entries cached", |b| {
        b.iter(|| black_box(session.build_session_context()))
    });
    drop(session);

    let dir = tempfile::tempdir().expect("temp dir");
    let copy = dir.path().join("append.jsonl");
    std::fs::copy(&path, &copy).expect("copy");
    let mut session = SessionManager::open(&copy, None).expect("open");
    let text = "A typical reply of a few hundred characters. ".repeat(10);
    group.bench_function("append_message (one ~500 B reply, written)", |b| {
        b.iter(|| black_box(session.append_message(reply(&text)).expect("append")))
    });
    drop(session);

    let many = tempfile::tempdir().expect("temp dir");
    for i in 0..100 {
        synth::generate(&many.path().join(format!("s{i:03}.jsonl")), 40, i).expect("generate");
    }
    group.bench_function("list (100 sessions, ~20 MB)", |b| {
        b.iter(|| black_box(listing::list(many.path()).expect("list")))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
