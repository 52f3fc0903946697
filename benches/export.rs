//! `export_html` on a long synthetic session: 1,000 turns (5,000 entries, 7.4 MB of
//! session JSON) of a markdown prompt → assistant text with a fenced Rust block and a
//! `read` call → a different 150-line Rust file each turn as the result → an answer with
//! an ANSI-coloured `bash` result; a branch every 100 turns. Also a 50-turn session (the
//! usual size: 7,500 lines of file content, all of it coloured).
//!
//! Syntax highlighting dominates (syntect: ~0.1 ms a line), which is why file contents
//! are coloured only up to `HIGHLIGHT_BUDGET_LINES`; the other parts — markdown, the
//! tree layout — are measured on their own. Targets on an idle 2-core machine: 50 turns
//! ≤ 0.5 s, 1,000 turns ≤ 1 s (the budget keeps the large case bounded).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pi::export::highlight::{clear_cache, push_highlighted};
use pi::export::markdown::markdown_to_html;
use pi::export::tree::{FilterMode, SessionTree, layout};
use pi::export::{ExportInput, ExportTheme, export_html};
use pi::session::entry::{EntryId, SessionEntry, SessionHeader};
use serde_json::{Value, json};

fn rust_file(lines: usize) -> String {
    (0..lines)
        .map(|i| match i % 5 {
            0 => format!("/// Doc comment {i} with <angle> & brackets"),
            1 => format!("pub fn item_{i}(x: u32) -> Result<String, Error> {{"),
            2 => format!("    let s = \"value {i}\".to_string() + &x.to_string();"),
            3 => "    Ok(s)".to_string(),
            _ => "}".to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn session(turns: usize) -> (SessionHeader, Vec<SessionEntry>) {
    let header: SessionHeader = serde_json::from_value(json!({
        "type": "session", "version": 3, "id": "bench", "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/home/user/project"}))
    .unwrap_or_else(|e| panic!("{e}"));
    let file = rust_file(150);
    let mut entries: Vec<SessionEntry> = Vec::with_capacity(turns * 5);
    let mut parent: Value = Value::Null;
    let mut n = 0;
    let mut push = |entries: &mut Vec<SessionEntry>, parent: &mut Value, body: Value| {
        n += 1;
        let id = format!("{n:08x}");
        let mut v = body;
        v["id"] = json!(id);
        v["parentId"] = parent.clone();
        v["timestamp"] = json!(format!(
            "2026-01-01T00:{:02}:{:02}.000Z",
            (n / 60) % 60,
            n % 60
        ));
        let line = v.to_string();
        entries.push(SessionEntry::from_json_line(&line).unwrap_or_else(|e| panic!("{e}")));
        *parent = json!(id);
    };
    for turn in 0..turns {
        if turn % 100 == 99 {
            // Go back a few entries and continue from there: a new branch.
            let back = entries.len() - 7;
            parent = json!(entries[back].id());
        }
        let msg = |role: &str, content: Value, extra: Value| {
            let mut m = json!({"role": role, "content": content, "timestamp": 0});
            if let (Some(m), Some(e)) = (m.as_object_mut(), extra.as_object()) {
                m.extend(e.clone());
            }
            json!({"type": "message", "message": m})
        };
        let usage = json!({"usage": {"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0,
            "totalTokens": 1280, "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}},
            "provider": "anthropic", "model": "claude", "api": "anthropic-messages"});
        push(
            &mut entries,
            &mut parent,
            msg(
                "user",
                json!(format!(
                    "Turn {turn}: please **refactor** `item_{turn}` in [src/lib.rs](src/lib.rs) and\n- keep the API\n- add tests"
                )),
                json!({}),
            ),
        );
        let mut a = usage.clone();
        a["stopReason"] = json!("toolUse");
        push(
            &mut entries,
            &mut parent,
            msg(
                "assistant",
                json!([
                    {"type": "thinking", "thinking": "I should read the file first and check the callers."},
                    {"type": "text", "text": format!("Looking at it. The function is:\n\n```rust\n{}\n```\n\nReading the file.", rust_file(8))},
                    {"type": "toolCall", "id": format!("r{turn}"), "name": "read", "arguments": {"path": "src/lib.rs"}}
                ]),
                a,
            ),
        );
        push(
            &mut entries,
            &mut parent,
            msg(
                "toolResult",
                // A different file each turn, as in a real session (identical content is
                // highlighted once per export).
                json!([{"type": "text", "text": format!("// src/module_{turn}.rs\n{file}")}]),
                json!({"toolCallId": format!("r{turn}"), "toolName": "read", "isError": false}),
            ),
        );
        let mut b = usage.clone();
        b["stopReason"] = json!("stop");
        push(
            &mut entries,
            &mut parent,
            msg(
                "assistant",
                json!([
                    {"type": "text", "text": "Done. Tests pass:\n\n| test | result |\n|---|---|\n| a | ok |"},
                    {"type": "toolCall", "id": format!("b{turn}"), "name": "bash", "arguments": {"command": "cargo test"}}
                ]),
                b,
            ),
        );
        push(
            &mut entries,
            &mut parent,
            msg(
                "toolResult",
                json!([{"type": "text", "text":
            "\u{1b}[32m   Compiling\u{1b}[0m demo v0.1.0\n\u{1b}[1mrunning 3 tests\u{1b}[0m\ntest a ... \u{1b}[32mok\u{1b}[0m\ntest b ... \u{1b}[32mok\u{1b}[0m\ntest c ... \u{1b}[32mok\u{1b}[0m"}]),
                json!({"toolCallId": format!("b{turn}"), "toolName": "bash", "isError": false}),
            ),
        );
    }
    (header, entries)
}

fn bench(c: &mut Criterion) {
    let theme = ExportTheme::dark();
    for turns in [50, 1000] {
        let (header, entries) = session(turns);
        let leaf = EntryId::from(entries.last().map(|e| e.id()).unwrap_or_default());
        let input = ExportInput {
            header: &header,
            entries: &entries,
            leaf_id: Some(&leaf),
            system_prompt: None,
            tools: &[],
            theme: &theme,
        };
        let html = export_html(&input);
        let source: usize = entries.iter().map(|e| e.to_json_line().len()).sum();
        eprintln!(
            "{turns} turns: {} entries, session {:.1} MB, page {:.1} MB",
            entries.len(),
            source as f64 / 1e6,
            html.len() as f64 / 1e6
        );

        let mut group = c.benchmark_group("export_html");
        group.sample_size(10);
        group.bench_function(format!("{turns}_turns"), |b| {
            b.iter(|| export_html(black_box(&input)))
        });
        group.finish();

        if turns == 1000 {
            c.bench_function("tree_layout_5000_entries", |b| {
                b.iter(|| {
                    let tree = SessionTree::build(black_box(&entries), Some(&leaf));
                    layout(&tree, &tree.visible(FilterMode::Default)).len()
                })
            });
        }
    }

    let file = rust_file(150);
    c.bench_function("highlight_150_line_rust_file", |b| {
        b.iter(|| {
            clear_cache();
            let mut out = String::new();
            push_highlighted(&mut out, black_box(&file), Some("rust"));
            out
        })
    });
    let md = format!(
        "# Title\n\nSome **bold** text with `code` and a [link](https://x.org).\n\n```rust\n{}\n```\n\n- a\n- b\n",
        rust_file(20)
    );
    c.bench_function("markdown_with_code_block", |b| {
        b.iter(|| {
            clear_cache();
            markdown_to_html(black_box(&md))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
