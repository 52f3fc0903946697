//! The cost file checkpoints add to one tool call (`docs/checkpoints.md`), on a generated
//! project of 100,000 files: an `edit` of one file (read and store it before and after),
//! and a `bash` command that changes three files (the working-tree scan against the
//! index of the previous one: on Linux only the files the inotify watches reported, or
//! else a metadata walk of every file, plus reading the changed ones; both are measured).
//! The target is at most 50 ms per tool call.
//!
//! Run with `cargo bench --bench checkpoints`; figures are recorded in
//! docs/performance.md. Generating the project and its first full scan take a while.

// Benchmark fixtures fail loudly.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use pi::core::checkpoints::{Checkpointer, Index, ScanBounds, ScanKind, Store, scan};
use serde_json::json;

const DIRS: usize = 1_000;
const FILES_PER_DIR: usize = 100;

/// 100,000 small source-like files in 1,000 directories (two levels), plus a
/// `.gitignore` and an ignored build directory the scan must skip.
fn generate_tree(root: &Path) {
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/out.bin"), "ignored").unwrap();
    for d in 0..DIRS {
        let dir = root.join(format!("pkg_{:02}/mod_{:03}", d / 100, d));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let n = d * FILES_PER_DIR + f;
            let body = format!("// file {n}\npub fn f_{n}() -> usize {{\n    {n}\n}}\n");
            std::fs::write(dir.join(format!("file_{f:03}.rs")), body).unwrap();
        }
    }
}

fn checkpoints(c: &mut Criterion) {
    let project = tempfile::tempdir().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let root = project.path();
    let started = Instant::now();
    generate_tree(root);
    eprintln!(
        "generated {} files in {:?}",
        DIRS * FILES_PER_DIR,
        started.elapsed()
    );
    // On Linux the checkpointer sets up inotify watches on the 1,000 directories in the
    // background; waiting for them makes the `bash` measurement the watched path.
    let started = Instant::now();
    let mut tracker = Checkpointer::new(agent.path(), root);
    match tracker.wait_for_watcher(Duration::from_secs(120)) {
        Ok(()) => eprintln!("watches set up in {:?}", started.elapsed()),
        Err(why) => eprintln!("no watcher ({why}): bash checkpoints walk the tree"),
    }
    // The first `bash` of a project reads and stores every file once (a slow debug
    // build may need more than one scan's time bound for that).
    let started = Instant::now();
    let mut warm = 0;
    loop {
        warm += 1;
        let id = format!("warm{warm}");
        tracker.start(root, &id, "bash", &json!({"command": "true"}));
        match tracker.finish(root, &id, "bash") {
            None => break,
            Some(c) if c.incomplete.is_some() && warm < 20 => continue,
            Some(c) => panic!("the warm-up scan found changes: {c:?}"),
        }
    }
    eprintln!("first full scan in {:?} ({warm} scans)", started.elapsed());

    let edited = root.join("pkg_05/mod_500/file_050.rs");
    let touched = [
        root.join("pkg_00/mod_001/file_001.rs"),
        root.join("pkg_04/mod_444/file_044.rs"),
        root.join("pkg_09/mod_999/file_099.rs"),
    ];
    let mut n = 0u64;
    let mut group = c.benchmark_group("checkpoint_per_tool_call_100k_files");
    group.sample_size(10);
    group.bench_function("edit_one_file", |b| {
        b.iter(|| {
            n += 1;
            let id = format!("edit{n}");
            tracker.start(
                root,
                &id,
                "edit",
                &json!({"path": "pkg_05/mod_500/file_050.rs"}),
            );
            std::fs::write(&edited, format!("edited {n}\n")).unwrap();
            let checkpoint = tracker.finish(root, &id, "edit").unwrap();
            assert_eq!(checkpoint.changes.len(), 1);
        })
    });
    group.bench_function("bash_touching_3_files", |b| {
        b.iter(|| {
            n += 1;
            let id = format!("bash{n}");
            tracker.start(root, &id, "bash", &json!({"command": "…"}));
            for file in &touched {
                std::fs::write(file, format!("changed by bash {n}\n")).unwrap();
            }
            let checkpoint = tracker.finish(root, &id, "bash").unwrap();
            // The edited file was recorded as racy (rehashed once): at least the 3 files.
            assert!(checkpoint.changes.len() >= 3, "{:?}", checkpoint.changes);
            assert!(
                checkpoint.incomplete.is_none(),
                "{:?}",
                checkpoint.incomplete
            );
        })
    });
    eprintln!("the last bash checkpoint: {:?}", tracker.last_scan());
    // The same without the watcher: the metadata walk of every file.
    let mut walking = Checkpointer::walking_only(agent.path(), root);
    walking.start(root, "walk0", "bash", &json!({"command": "true"}));
    walking.finish(root, "walk0", "bash");
    group.bench_function("bash_touching_3_files_walking", |b| {
        b.iter(|| {
            n += 1;
            let id = format!("walk{n}");
            walking.start(root, &id, "bash", &json!({"command": "…"}));
            for file in &touched {
                std::fs::write(file, format!("changed by bash {n}\n")).unwrap();
            }
            let checkpoint = walking.finish(root, &id, "bash").unwrap();
            assert!(checkpoint.changes.len() >= 3, "{:?}", checkpoint.changes);
            assert_eq!(walking.last_scan(), ScanKind::Walk);
        })
    });
    group.finish();

    // What the bash checkpoint is made of: the metadata walk on one thread and on all
    // cores (nothing changed), and writing the 100k-line index, which is why it is saved
    // once per prompt rather than after every call.
    let store = Store::for_project(agent.path(), root);
    let unbounded = ScanBounds {
        max_duration: std::time::Duration::from_secs(3600),
        ..ScanBounds::default()
    };
    let index = scan(root, &store, Index::default(), &unbounded).index;
    assert_eq!(index.files.len(), DIRS * FILES_PER_DIR + 1); // and .gitignore
    let mut group = c.benchmark_group("scan_100k_files_unchanged");
    group.sample_size(10);
    for threads in [1, 0] {
        let name = if threads == 1 {
            "one_thread"
        } else {
            "all_cores"
        };
        let bounds = ScanBounds {
            threads,
            ..ScanBounds::default()
        };
        group.bench_function(name, |b| {
            b.iter_batched(
                || index.clone(),
                |old| {
                    let out = scan(root, &store, old, &bounds);
                    assert!(out.changes.is_empty() && out.incomplete.is_none());
                    out.index
                },
                BatchSize::LargeInput,
            )
        });
    }
    let saved = agent.path().join("bench-index.tsv");
    group.bench_function("index_save", |b| b.iter(|| index.save(&saved).unwrap()));
    group.finish();
}

criterion_group!(benches, checkpoints);
criterion_main!(benches);
