//! `prepare_compaction` on a long synthetic session: 10,000 turns of user prompt →
//! assistant tool call → tool result → assistant answer (40,000 entries, ~70 MB of text),
//! with a model change at the start and an earlier compaction halfway. Target: ≤ 50 ms.
//!
//! Also measured: the same from a path of references and with a detached (`into_owned`)
//! result, serializing what was selected for the summarizer, and the branch-summary
//! selection over the same entries.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pi::ai::message::{
    AssistantBlock, AssistantMessage, Extra, StopReason, TextContent, ToolCall, ToolResultMessage,
    Usage, UserBlock, UserMessage,
};
use pi::compaction::serialize::serialize_agent_messages;
use pi::compaction::{CompactionSettings, prepare_branch_entries, prepare_compaction};
use pi::messages::AgentMessage;
use pi::session::entry::{CompactionEntry, EntryId, MessageEntry, ModelChangeEntry, SessionEntry};
use serde_json::json;

const TURNS: usize = 10_000;

/// Deterministic pseudo-random sizes (no RNG dependency in the benchmark).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, lo: usize, hi: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + (self.0 >> 33) as usize % (hi - lo)
    }
}

fn text(len: usize) -> String {
    const WORDS: &str = "the quick brown fox jumps over the lazy dog while compiling rust code ";
    WORDS.chars().cycle().take(len).collect()
}

struct Builder {
    entries: Vec<SessionEntry>,
}

impl Builder {
    fn ids(&self) -> (EntryId, Option<EntryId>, String) {
        let id = EntryId(format!("{:08x}", self.entries.len()));
        let parent = self.entries.last().map(|e| EntryId(e.id().to_string()));
        (id, parent, "2026-01-01T00:00:00.000Z".to_string())
    }

    fn message(&mut self, message: AgentMessage) {
        let (id, parent_id, timestamp) = self.ids();
        self.entries.push(SessionEntry::Message(MessageEntry {
            id,
            parent_id,
            timestamp,
            message,
            extra: Extra::new(),
        }));
    }
}

fn assistant(content: Vec<AssistantBlock>, stop_reason: StopReason, total: u64) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage {
            total_tokens: total,
            ..Usage::default()
        },
        stop_reason,
        timestamp: 1,
        ..AssistantMessage::default()
    })
}

fn synthetic_path() -> Vec<SessionEntry> {
    let mut rng = Lcg(42);
    let mut b = Builder {
        entries: Vec::new(),
    };
    let (id, parent_id, timestamp) = b.ids();
    b.entries.push(SessionEntry::ModelChange(ModelChangeEntry {
        id,
        parent_id,
        timestamp,
        provider: "anthropic".into(),
        model_id: "claude-sonnet-4-5".into(),
        extra: Extra::new(),
    }));
    let mut total = 2_000u64;
    for turn in 0..TURNS {
        if turn == TURNS / 2 {
            let first_kept = EntryId(format!("{:08x}", b.entries.len() - 40));
            let (id, parent_id, timestamp) = b.ids();
            b.entries.push(SessionEntry::Compaction(CompactionEntry {
                id,
                parent_id,
                timestamp,
                summary: text(3000),
                first_kept_entry_id: first_kept,
                tokens_before: 150_000,
                details: Some(json!({"readFiles": ["a.rs"], "modifiedFiles": ["b.rs"]})),
                from_hook: Some(false),
                extra: Extra::new(),
            }));
        }
        b.message(AgentMessage::User(UserMessage {
            content: pi::ai::message::UserContent::Blocks(vec![UserBlock::text(text(
                rng.next(50, 600),
            ))]),
            timestamp: 1,
            extra: Extra::new(),
        }));
        let (tool, args) = match turn % 3 {
            0 => (
                "read",
                json!({"path": format!("src/module_{turn}.rs"), "offset": 1, "limit": 200}),
            ),
            1 => (
                "bash",
                json!({"command": format!("cargo test --lib module_{turn} 2>&1 | tail -40")}),
            ),
            _ => (
                "edit",
                json!({"path": format!("src/module_{turn}.rs"), "edits": [{"oldText": text(rng.next(40, 400)), "newText": text(rng.next(40, 400))}]}),
            ),
        };
        total += 400;
        b.message(assistant(
            vec![
                AssistantBlock::Text(TextContent::new(text(rng.next(50, 400)))),
                AssistantBlock::ToolCall(ToolCall {
                    id: format!("toolu_{turn}"),
                    name: tool.into(),
                    arguments: args,
                    ..ToolCall::default()
                }),
            ],
            StopReason::ToolUse,
            total,
        ));
        b.message(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: format!("toolu_{turn}"),
            tool_name: tool.into(),
            content: vec![UserBlock::text(text(rng.next(500, 8000)))],
            timestamp: 1,
            ..ToolResultMessage::default()
        }));
        total += 900;
        b.message(assistant(
            vec![AssistantBlock::Text(TextContent::new(text(
                rng.next(100, 1500),
            )))],
            StopReason::Stop,
            total,
        ));
    }
    b.entries
}

fn bench(c: &mut Criterion) {
    let path = synthetic_path();
    let settings = CompactionSettings::default();
    let mut group = c.benchmark_group("compaction");
    group.sample_size(20);
    group.bench_function("prepare_compaction_10k_turns", |b| {
        b.iter(|| black_box(prepare_compaction(black_box(&path), &settings)));
    });
    group.bench_function("prepare_compaction_10k_turns_into_owned", |b| {
        b.iter(|| {
            black_box(prepare_compaction(black_box(&path), &settings).map(|p| p.into_owned()))
        });
    });
    let refs: Vec<&SessionEntry> = path.iter().collect();
    group.bench_function("prepare_compaction_10k_turns_from_refs", |b| {
        b.iter(|| black_box(prepare_compaction(black_box(&refs), &settings)));
    });
    let prep = prepare_compaction(&path, &settings).unwrap_or_else(|| unreachable!());
    group.bench_function("serialize_messages_to_summarize", |b| {
        b.iter(|| {
            black_box(serialize_agent_messages(black_box(
                &prep.messages_to_summarize,
            )))
        });
    });
    group.bench_function("prepare_branch_entries_10k_turns", |b| {
        b.iter(|| black_box(prepare_branch_entries(black_box(&path), 200_000 - 16_384)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
