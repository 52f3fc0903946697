//! CPU time of `/tree` on a large session: opening the selector (snapshot, layout, first
//! frame) and each key of a search typed into it. It is the counterpart of
//! `benches/tree.rs` that reads the thread's CPU clock instead of the wall clock, so the
//! figures hold steady on a machine busy with other work.
//!
//! ```sh
//! cargo run --release --example tree_cpu -- [path] [turns]
//! ```
//!
//! Without a path, a synthetic 10 000-turn session is generated (once) under `target/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pi::modes::interactive::components::Ui;
use pi::modes::interactive::components::tree_selector::{
    TreeSelector, TreeSelectorOptions, TreeSnapshot,
};
use pi::modes::interactive::keys::Keybindings;
use pi::modes::interactive::theme::{ColorMode, Theme};
use pi::session::manager::SessionManager;
use pi::session::synth;

const WIDTH: usize = 120;
const ROWS: usize = 25;
const RUNS: usize = 15;

/// CPU time used by this thread so far.
fn cpu_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn cpu<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = cpu_now();
    let out = f();
    (out, cpu_now() - start)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let turns: usize = args.get(1).and_then(|t| t.parse().ok()).unwrap_or(10_000);
    let path = match args.first() {
        Some(p) => PathBuf::from(p),
        None => {
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("target/synthetic-session-{turns}.jsonl"));
            if !p.exists() {
                synth::generate(&p, turns, 42)?;
            }
            p
        }
    };
    let session = SessionManager::open(&path, None)?;
    let theme = Theme::dark(ColorMode::TrueColor);
    let keys = Keybindings::defaults();
    let ui = Ui::new(&theme, &keys).with_home(Some("/home/user"));
    let options = TreeSelectorOptions {
        visible_rows: ROWS,
        ..TreeSelectorOptions::default()
    };
    println!(
        "{}: {} entries, {:.1} MB",
        path.display(),
        session.entry_count(),
        std::fs::metadata(&path)?.len() as f64 / 1e6
    );

    let mut tree_times = Vec::new();
    let mut outline_times = Vec::new();
    let mut snapshot_times = Vec::new();
    let mut open_times = Vec::new();
    for _ in 0..RUNS {
        let (tree, t) = cpu(|| session.tree());
        tree_times.push(t);
        let (outlines, t) = cpu(|| session.outlines());
        outline_times.push(t);
        drop((tree, outlines));
        let (snapshot, snap) = cpu(|| TreeSnapshot::from_session(&session));
        // The selector is freed outside the measurement: that happens when it closes.
        let (opened, rest) = cpu(|| {
            let sel = TreeSelector::new(snapshot, options.clone());
            let lines = sel.render(WIDTH, &ui);
            (sel, lines)
        });
        drop(opened);
        snapshot_times.push(snap);
        open_times.push(snap + rest);
    }
    println!(
        "open (snapshot + selector + first frame): median {} (snapshot {}: tree {}, outlines {})",
        ms(median(open_times)),
        ms(median(snapshot_times)),
        ms(median(tree_times)),
        ms(median(outline_times)),
    );

    let base = TreeSelector::new(TreeSnapshot::from_session(&session), options);
    let key = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
    let script: Vec<(String, KeyEvent)> = "parser buffer"
        .chars()
        .map(|c| (format!("type {c:?}"), key(c)))
        .chain((0..3).map(|_| ("Backspace".to_string(), backspace)))
        .chain([("type 'x'".to_string(), key('x'))])
        .collect();
    let mut per_key: Vec<Vec<Duration>> = vec![Vec::new(); script.len()];
    for _ in 0..RUNS {
        let mut sel = base.clone();
        for (n, (_, k)) in script.iter().enumerate() {
            let (lines, t) = cpu(|| {
                sel.handle_key(k, &keys);
                sel.render(WIDTH, &ui)
            });
            drop(lines);
            per_key[n].push(t);
        }
    }
    let mut query = String::new();
    for ((what, _), times) in script.iter().zip(per_key) {
        match what.strip_prefix("type ") {
            Some(c) => query.push(c.trim_matches('\'').chars().next().unwrap_or(' ')),
            None => {
                query.pop();
            }
        }
        println!(
            "{what:<12} → {query:<16} key + frame: median {}",
            ms(median(times))
        );
    }
    Ok(())
}
