//! RPC mode's own costs per line: reading commands (a small one, and a prompt carrying a
//! 1 MB image), splitting input into records, and writing a streamed answer — every
//! `message_update` carries the whole partial message, as in pi, so a long answer is the
//! heaviest thing RPC mode writes.
//!
//! Run with `cargo bench --bench rpc`; figures are recorded in docs/performance.md.
//! `scripts/bench/rpc_vs_pi.py` measures the whole program against the reference pi.

// Benchmark fixtures fail loudly.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi::agent::AgentEvent;
use pi::ai::message::AssistantMessage;
use pi::ai::stream::StreamEvent;
use pi::core::events::SessionEvent;
use pi::messages::AgentMessage;
use pi::modes::rpc::framing::{LineReader, spawn_writer};
use pi::modes::rpc::output::RpcOutput;
use pi::modes::rpc::protocol::{Incoming, parse_line};
use serde_json::json;

fn parsing(c: &mut Criterion) {
    let small = json!({"id": "req-42", "type": "get_state"}).to_string();
    let steer = json!({"id": "req-43", "type": "prompt", "message": "Stop and look at src/main.rs instead, the bug is in argument parsing", "streamingBehavior": "steer"}).to_string();
    let image = "A".repeat(1 << 20);
    let big = json!({"id": "req-44", "type": "prompt", "message": "what is this?",
        "images": [{"type": "image", "data": image, "mimeType": "image/png"}]})
    .to_string();
    let mut group = c.benchmark_group("parse_line");
    group.bench_function("get_state", |b| {
        b.iter(|| {
            assert!(matches!(
                parse_line(black_box(&small)),
                Incoming::Command(_)
            ))
        })
    });
    group.bench_function("prompt_steer", |b| {
        b.iter(|| {
            assert!(matches!(
                parse_line(black_box(&steer)),
                Incoming::Command(_)
            ))
        })
    });
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("prompt_with_1mb_image", |b| {
        b.iter(|| assert!(matches!(parse_line(black_box(&big)), Incoming::Command(_))))
    });
    group.finish();
}

fn framing(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let line =
        json!({"id": "req-1", "type": "steer", "message": "keep going\u{2028}please"}).to_string();
    let input: Vec<u8> = (0..10_000)
        .flat_map(|_| format!("{line}\r\n").into_bytes())
        .collect();
    let mut group = c.benchmark_group("line_reader");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.bench_function("10k_lines", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut reader = LineReader::new(&input[..]);
                let mut n = 0;
                while let Some(l) = reader.next_line().await.unwrap() {
                    n += l.len();
                }
                n
            })
        })
    });
    group.finish();
}

/// A 2,000-delta answer (about 10 KB of text) as session events.
fn streamed_answer() -> Vec<SessionEvent> {
    let start = AssistantMessage {
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        ..Default::default()
    };
    let mut events = vec![
        SessionEvent::Agent(AgentEvent::MessageStart {
            message: AgentMessage::Assistant(start),
        }),
        SessionEvent::Agent(AgentEvent::MessageUpdate {
            event: StreamEvent::TextStart { content_index: 0 },
        }),
    ];
    for i in 0..2_000 {
        events.push(SessionEvent::Agent(AgentEvent::MessageUpdate {
            event: StreamEvent::TextDelta {
                content_index: 0,
                delta: format!("w{:03} ", i % 1000),
            },
        }));
    }
    events
}

fn writing(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let events = streamed_answer();
    let mut group = c.benchmark_group("output");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.sample_size(20);
    group.bench_function("stream_2000_deltas_to_stdout_thread", |b| {
        b.iter(|| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let (writer, thread) = spawn_writer(std::io::sink()).unwrap();
            let output = RpcOutput::new(rx, writer);
            for e in &events {
                tx.send(e.clone()).unwrap();
            }
            drop(tx);
            rt.block_on(async {
                output.pump_events().await;
                output.flush().await;
            });
            drop(output);
            thread.join().unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, parsing, framing, writing);
criterion_main!(benches);
