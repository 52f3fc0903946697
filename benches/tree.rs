//! `/tree` on a large synthetic session (10 000 turns, about 44 MB and 46 000 entries,
//! thousands of branches; see `session::synth`): opening the selector and typing a search.
//! Figures go into docs/performance.md ("/tree").
//!
//! ```sh
//! cargo bench --bench tree
//! ```
//!
//! Targets (release build): snapshot + selector + first frame ≤ 50 ms; one key while
//! searching (filter + layout + frame) ≤ 16 ms. The session is already open (the app
//! has it); the synthetic file is generated once under `target/`.

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi::modes::interactive::components::Ui;
use pi::modes::interactive::components::tree_selector::{
    FilterMode, TreeSelector, TreeSelectorOptions, TreeSnapshot,
};
use pi::modes::interactive::keys::Keybindings;
use pi::modes::interactive::theme::{ColorMode, Theme};
use pi::session::manager::SessionManager;
use pi::session::synth;

const TURNS: usize = 10_000;
const WIDTH: usize = 120;
/// The list height on a 50-row terminal.
const ROWS: usize = 25;

fn synthetic_session() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("target/synthetic-session-{TURNS}.jsonl"));
    if !path.exists() {
        synth::generate(&path, TURNS, 42).expect("generate the synthetic session");
    }
    path
}

fn open_selector(session: &SessionManager) -> TreeSelector {
    TreeSelector::new(
        TreeSnapshot::from_session(session),
        TreeSelectorOptions {
            visible_rows: ROWS,
            filter: FilterMode::Default,
            initial_selection: None,
        },
    )
}

fn type_text(sel: &mut TreeSelector, keys: &Keybindings, text: &str) {
    for c in text.chars() {
        sel.handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), keys);
    }
}

fn bench(c: &mut Criterion) {
    let path = synthetic_session();
    let session = SessionManager::open(&path, None).expect("open");
    let theme = Theme::dark(ColorMode::TrueColor);
    let keys = Keybindings::defaults();
    let ui = Ui::new(&theme, &keys).with_home(Some("/home/user"));
    let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);

    let mut group = c.benchmark_group("tree");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));

    // Freeing a selector (when it closes) is not part of opening it: outputs are dropped
    // outside the timing.
    group.bench_function("open: snapshot + selector + first frame (10k turns)", |b| {
        b.iter_with_large_drop(|| {
            let sel = open_selector(&session);
            let lines = sel.render(WIDTH, &ui);
            (sel, lines)
        })
    });
    group.bench_function("open, part: snapshot (tree + outlines)", |b| {
        b.iter_with_large_drop(|| TreeSnapshot::from_session(&session))
    });
    group.bench_function("open, part: outlines only", |b| {
        b.iter_with_large_drop(|| session.outlines())
    });

    let opened = open_selector(&session);
    group.bench_function("first search key (builds the search text) + frame", |b| {
        b.iter_batched(
            || opened.clone(),
            |mut sel| {
                type_text(&mut sel, &keys, "p");
                let lines = sel.render(WIDTH, &ui);
                (sel, lines)
            },
            BatchSize::LargeInput,
        )
    });

    let mut searching = opened.clone();
    type_text(&mut searching, &keys, "pars");
    group.bench_function("search key narrowing \"pars\" → \"parse\" + frame", |b| {
        b.iter_batched(
            || searching.clone(),
            |mut sel| {
                type_text(&mut sel, &keys, "e");
                let lines = sel.render(WIDTH, &ui);
                (sel, lines)
            },
            BatchSize::LargeInput,
        )
    });
    let mut two_words = opened.clone();
    type_text(&mut two_words, &keys, "parser ");
    group.bench_function(
        "search key adding a word \"parser \" → \"parser b\" + frame",
        |b| {
            b.iter_batched(
                || two_words.clone(),
                |mut sel| {
                    type_text(&mut sel, &keys, "b");
                    let lines = sel.render(WIDTH, &ui);
                    (sel, lines)
                },
                BatchSize::LargeInput,
            )
        },
    );
    let mut broad = opened.clone();
    type_text(&mut broad, &keys, "t");
    group.bench_function(
        "search key on a broad query \"t\" → \"th\" + frame",
        |b| {
            b.iter_batched(
                || broad.clone(),
                |mut sel| {
                    type_text(&mut sel, &keys, "h");
                    let lines = sel.render(WIDTH, &ui);
                    (sel, lines)
                },
                BatchSize::LargeInput,
            )
        },
    );
    let mut typed = opened.clone();
    type_text(&mut typed, &keys, "parse");
    group.bench_function("Backspace \"parse\" → \"pars\" + frame", |b| {
        b.iter_batched(
            || typed.clone(),
            |mut sel| {
                sel.handle_key(&backspace, &keys);
                let lines = sel.render(WIDTH, &ui);
                (sel, lines)
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("arrow key + frame", |b| {
        let mut sel = opened.clone();
        let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
        b.iter(|| {
            sel.handle_key(&up, &keys);
            black_box(sel.render(WIDTH, &ui))
        })
    });
    group.bench_function("filter change (Ctrl+O) + frame", |b| {
        let mut sel = opened.clone();
        let cycle = KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL);
        b.iter(|| {
            sel.handle_key(&cycle, &keys);
            black_box(sel.render(WIDTH, &ui))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
