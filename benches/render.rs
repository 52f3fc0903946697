//! Terminal rendering speed: the visible part of a 2,000-message transcript (cached and
//! not), markdown of a long message, and editor keystrokes on a 10k-character prompt.
//! Figures go into docs/performance.md ("Terminal rendering").

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi::ai::message::{
    AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserBlock, UserMessage,
};
use pi::messages::AgentMessage;
use pi::modes::interactive::components::Ui;
use pi::modes::interactive::components::transcript::Transcript;
use pi::modes::interactive::editor::Editor;
use pi::modes::interactive::highlight;
use pi::modes::interactive::keys::Keybindings;
use pi::modes::interactive::markdown::{MarkdownCache, MarkdownStyle, render_markdown};
use pi::modes::interactive::theme::{ColorMode, Theme};
use serde_json::json;

const WIDTH: usize = 120;
/// Rows of chat visible above the editor on a 50-row terminal.
const VISIBLE_ROWS: usize = 40;

fn reply(i: usize) -> String {
    format!(
        "## Step {i}\n\nI looked at `src/module_{i}.rs` and found **two** problems:\n\n\
         1. the parser drops the last line when the file has no trailing newline\n\
         2. errors lose the path, see [the docs](https://example.com/docs/{i})\n\n\
         ```rust\nfn parse_{i}(input: &str) -> Vec<String> {{\n    input.lines().map(str::to_string).collect()\n}}\n```\n\n\
         | file | status |\n|---|---|\n| module_{i}.rs | fixed |\n| tests.rs | added |\n"
    )
}

/// 2,000 messages: user prompts, replies with markdown and a tool call, tool results.
fn conversation() -> Vec<AgentMessage> {
    let mut messages = Vec::new();
    let mut i = 0;
    while messages.len() < 2000 {
        messages.push(AgentMessage::User(UserMessage::text(
            format!("Please fix module {i} and explain what you changed."),
            0,
        )));
        let id = format!("call_{i}");
        messages.push(AgentMessage::Assistant(AssistantMessage {
            content: vec![
                AssistantBlock::Text(TextContent::new(reply(i))),
                AssistantBlock::ToolCall(ToolCall {
                    id: id.clone(),
                    name: "read".into(),
                    arguments: json!({"path": format!("src/module_{i}.rs")}),
                    ..ToolCall::default()
                }),
            ],
            stop_reason: StopReason::ToolUse,
            ..AssistantMessage::default()
        }));
        let body: String = (0..40)
            .map(|l| format!("    let value_{l} = compute({i}, {l}); // line {l}\n"))
            .collect();
        messages.push(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: id,
            tool_name: "read".into(),
            content: vec![UserBlock::text(body)],
            ..ToolResultMessage::default()
        }));
        messages.push(AgentMessage::Assistant(AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(format!(
                "Done with module {i}."
            )))],
            ..AssistantMessage::default()
        }));
        i += 1;
    }
    messages
}

/// A ~2,000-line markdown message.
fn long_markdown() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.lines().count() < 2000 {
        s.push_str(&reply(i));
        s.push_str("\nA longer paragraph that needs wrapping at the terminal width because it keeps going with more words than fit on one line of a normal terminal window, like model output does.\n\n- item one\n- item two\n  - nested item\n\n> a quote to finish the section\n\n");
        i += 1;
    }
    s
}

fn transcript(c: &mut Criterion) {
    let theme = Theme::dark(ColorMode::TrueColor);
    let keys = Keybindings::defaults();
    let ui = Ui::new(&theme, &keys);
    let messages = conversation();
    let mut group = c.benchmark_group("transcript_2000_messages");
    // Nothing rendered or highlighted before: opening a session.
    group.bench_function("visible_rows_cold", |b| {
        b.iter_batched_ref(
            || {
                highlight::clear_cache();
                Transcript::from_messages(&messages, false, false)
            },
            |t| black_box(t.render_tail(WIDTH, &ui, VISIBLE_ROWS).len()),
            BatchSize::LargeInput,
        )
    });
    // Component caches empty, highlighting cached: a resize or a theme switch.
    let warm_highlight = Transcript::from_messages(&messages, false, false);
    warm_highlight.render_all(WIDTH, &ui);
    group.bench_function("visible_rows_after_resize", |b| {
        b.iter_batched_ref(
            || Transcript::from_messages(&messages, false, false),
            |t| black_box(t.render_tail(WIDTH, &ui, VISIBLE_ROWS).len()),
            BatchSize::LargeInput,
        )
    });
    // Everything cached: an ordinary frame.
    group.bench_function("visible_rows_cached", |b| {
        b.iter(|| black_box(warm_highlight.render_tail(WIDTH, &ui, VISIBLE_ROWS).len()))
    });
    group.sample_size(10);
    group.bench_function("everything_after_resize", |b| {
        b.iter_batched_ref(
            || Transcript::from_messages(&messages, false, false),
            |t| black_box(t.render_all(WIDTH, &ui).len()),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("everything_cold", |b| {
        b.iter_batched_ref(
            || {
                highlight::clear_cache();
                Transcript::from_messages(&messages, false, false)
            },
            |t| black_box(t.render_all(WIDTH, &ui).len()),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn markdown(c: &mut Criterion) {
    let theme = Theme::dark(ColorMode::TrueColor);
    let style = MarkdownStyle::default();
    let text = long_markdown();
    let mut group = c.benchmark_group("markdown_2000_lines");
    group.bench_function("uncached_cold_highlight", |b| {
        b.iter_batched(
            highlight::clear_cache,
            |()| black_box(render_markdown(&text, WIDTH, &theme, &style)),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("uncached_warm_highlight", |b| {
        b.iter(|| black_box(render_markdown(&text, WIDTH, &theme, &style)))
    });
    let mut cache = MarkdownCache::default();
    let mut grown = text.clone();
    cache.render(&grown, WIDTH, &theme, &style);
    group.bench_function("streaming_append", |b| {
        b.iter(|| {
            grown.push_str("more ");
            black_box(cache.render(&grown, WIDTH, &theme, &style))
        })
    });
    group.finish();
}

/// An editor holding a 10k-character prompt, cursor in the middle of it.
fn loaded_editor(keys: &Arc<Keybindings>, text: &str) -> Editor {
    let mut e = Editor::new(Arc::clone(keys));
    e.set_max_rows(15);
    e.set_text(text);
    let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
    for _ in 0..50 {
        e.handle_key(&up);
    }
    e
}

fn editor(c: &mut Criterion) {
    let theme = Theme::dark(ColorMode::TrueColor);
    let keys = Arc::new(Keybindings::defaults());
    let text: String = (0..100)
        .map(|i| format!("{i:03} {}\n", "word ".repeat(19)))
        .collect();
    assert!(text.len() >= 10_000);
    let mut group = c.benchmark_group("editor_10k_chars");
    let keystroke =
        |name: &str,
         key: KeyEvent,
         group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>| {
            group.bench_function(name, |b| {
                b.iter_batched_ref(
                    || {
                        let mut e = loaded_editor(&keys, &text);
                        e.render(WIDTH, &theme);
                        e
                    },
                    |e| {
                        e.handle_key(&key);
                        black_box(e.render(WIDTH, &theme).lines.len())
                    },
                    BatchSize::SmallInput,
                )
            });
        };
    keystroke(
        "type_char_and_render",
        KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE),
        &mut group,
    );
    keystroke(
        "type_space_and_render",
        KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE),
        &mut group,
    );
    keystroke(
        "backspace_and_render",
        KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE),
        &mut group,
    );
    keystroke(
        "move_row_and_render",
        KeyEvent::new(KeyCode::Up, KeyModifiers::NONE),
        &mut group,
    );
    keystroke(
        "delete_word_and_render",
        KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL),
        &mut group,
    );
    group.finish();
}

criterion_group!(benches, transcript, markdown, editor);
criterion_main!(benches);
