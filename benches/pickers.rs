//! Session picker speed on a big store: 1,000 synthetic sessions of 20 to 439 turns
//! (about 1 GB, see `session::synth`) in the current folder's session directory.
//!
//! ```sh
//! cargo bench --bench pickers
//! ```
//!
//! Measured: the first frame (loader started → rows on screen, target ≤ 100 ms), every
//! row listed, the full message text of every session loaded in the background, one
//! search keystroke over all of that text, and drawing a frame. The store is generated
//! once under `target/`. Figures go into docs/performance.md ("Session picker").

// A benchmark that cannot set itself up has nothing to measure: failing loudly is right.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi::modes::interactive::components::Ui;
use pi::modes::interactive::components::session_picker::{
    LoadEvent, Loader, LoaderConfig, SessionPicker,
};
use pi::modes::interactive::keys::Keybindings;
use pi::modes::interactive::theme::{ColorMode, Theme};
use pi::session::synth;

const SESSIONS: usize = 1_000;

fn store() -> PathBuf {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/picker-store-{SESSIONS}-1gb"));
    let dir = root.join("--work-project--");
    let done = root.join(".complete");
    if !done.exists() {
        std::fs::create_dir_all(&dir).expect("create the store");
        for i in 0..SESSIONS {
            let turns = 20 + (i * 37) % 420;
            let path = dir.join(format!("session-{i:04}.jsonl"));
            synth::generate(&path, turns, i as u64).expect("generate a session");
        }
        std::fs::write(&done, "").expect("mark the store complete");
    }
    root
}

fn config(root: &Path) -> LoaderConfig {
    LoaderConfig {
        current_dir: root.join("--work-project--"),
        sessions_root: Some(root.to_path_buf()),
    }
}

/// Runs a loader until `until` says stop, feeding the picker; returns the elapsed time.
fn load_until(
    root: &Path,
    until: impl Fn(&LoadEvent, &SessionPicker) -> bool,
) -> (Duration, SessionPicker) {
    let theme = Theme::dark(ColorMode::TrueColor);
    let keys = Keybindings::defaults();
    let ui = Ui::new(&theme, &keys);
    let start = Instant::now();
    let mut picker = SessionPicker::new();
    let mut loader = Loader::start(config(root));
    loop {
        let event = loader
            .next_timeout(Duration::from_secs(60))
            .expect("the loader stalled");
        let stop = until(&event, &picker);
        picker.apply(event);
        if stop {
            break;
        }
    }
    black_box(picker.render(120, 40, &ui));
    let elapsed = start.elapsed();
    loader.stop();
    (elapsed, picker)
}

fn first_rows(event: &LoadEvent, _: &SessionPicker) -> bool {
    matches!(event, LoadEvent::Sessions { .. })
}

fn bench(c: &mut Criterion) {
    let root = store();
    let mut group = c.benchmark_group("session picker (1,000 sessions)");
    group.sample_size(10);
    group.bench_function("first frame", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| load_until(&root, first_rows).0).sum())
    });
    group.bench_function("every row listed", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    load_until(&root, |e, _| {
                        *e == LoadEvent::Listed(
                            pi::modes::interactive::components::session_picker::Scope::All,
                        )
                    })
                    .0
                })
                .sum()
        })
    });
    group.measurement_time(Duration::from_secs(30));
    group.bench_function("all search text loaded", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| load_until(&root, |e, _| *e == LoadEvent::Finished).0)
                .sum()
        })
    });
    group.finish();

    let (_, loaded) = load_until(&root, |e, _| *e == LoadEvent::Finished);
    assert_eq!(loaded.search_text_count(), SESSIONS);
    let keys = Keybindings::defaults();
    let theme = Theme::dark(ColorMode::TrueColor);
    let ui = Ui::new(&theme, &keys);
    let mut group = c.benchmark_group("session picker search (all text loaded)");
    group.sample_size(20);
    for (name, query) in [
        ("fuzzy two words", "parser cach"),
        ("phrase", "\"the session file\""),
        ("phrase that matches nothing", "\"no such phrase anywhere\""),
        ("regex", r"re:compaction\s+buffer"),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut picker = loaded.clone();
                    let (head, last) = query.split_at(query.len() - 1);
                    picker.paste(head);
                    // Time the last keystroke: a full re-search plus a frame.
                    let key = KeyEvent::new(
                        KeyCode::Char(last.chars().next().unwrap()),
                        KeyModifiers::NONE,
                    );
                    let start = Instant::now();
                    picker.handle_key(&key, &keys);
                    black_box(picker.render(120, 40, &ui));
                    total += start.elapsed();
                }
                total
            })
        });
    }
    group.bench_function("frame with 1,000 rows listed", |b| {
        b.iter(|| black_box(loaded.render(120, 40, &ui)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
