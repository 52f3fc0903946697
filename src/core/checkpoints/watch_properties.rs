//! The watcher path of `bash` checkpoints gives the same checkpoints as the walk: two
//! checkpointers on one project, one with the inotify watcher and one that always walks,
//! record the same `bash`-like commands (files and directories created, written, deleted,
//! renamed, ignored files, ignore rules changed), and must agree on every checkpoint.

use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::json;

use super::*;

const FILES: &[&str] = &[
    "a.txt",
    "b.log",
    "d/c.txt",
    "d/e/f.txt",
    "d/e/x.log",
    "g/h.txt",
    "build/out.txt",
    "n/m/deep.txt",
];
const DIRS: &[&str] = &["d", "d/e", "g", "build", "n", "n/m", "z"];
const CONTENTS: &[&str] = &["", "x", "y", "hello\n", "12345678"];
const RULES: &[&str] = &["build/\n*.log\n", "build/\n", "*.log\nd/e/\n", "/g\n"];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize),
    Delete(usize),
    Rename(usize, usize),
    RenameDir(usize, usize),
    RemoveDir(usize),
    /// A directory with nested files, made by one command.
    MakeTree(usize, usize),
    Rules(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let f = 0..FILES.len();
    let d = 0..DIRS.len();
    let c = 0..CONTENTS.len();
    prop_oneof![
        4 => (f.clone(), c.clone()).prop_map(|(f, c)| Op::Write(f, c)),
        2 => f.clone().prop_map(Op::Delete),
        2 => (f.clone(), f).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (d.clone(), d.clone()).prop_map(|(a, b)| Op::RenameDir(a, b)),
        1 => d.clone().prop_map(Op::RemoveDir),
        1 => (d, c).prop_map(|(d, c)| Op::MakeTree(d, c)),
        1 => (0..RULES.len()).prop_map(Op::Rules),
    ]
}

fn apply(root: &Path, op: &Op) {
    match op {
        Op::Write(f, c) => {
            let file = root.join(FILES[*f]);
            let _ = std::fs::create_dir_all(file.parent().unwrap());
            let _ = std::fs::write(file, CONTENTS[*c]);
        }
        Op::Delete(f) => {
            let _ = std::fs::remove_file(root.join(FILES[*f]));
        }
        Op::Rename(a, b) => {
            let to = root.join(FILES[*b]);
            let _ = std::fs::create_dir_all(to.parent().unwrap());
            let _ = std::fs::rename(root.join(FILES[*a]), to);
        }
        Op::RenameDir(a, b) => {
            let to = root.join(DIRS[*b]);
            if !to.exists() {
                let _ = std::fs::create_dir_all(to.parent().unwrap());
                let _ = std::fs::rename(root.join(DIRS[*a]), to);
            }
        }
        Op::RemoveDir(d) => {
            let _ = std::fs::remove_dir_all(root.join(DIRS[*d]));
        }
        Op::MakeTree(d, c) => {
            let dir = root.join(DIRS[*d]).join("new/inner");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join("one.txt"), CONTENTS[*c]);
            let _ = std::fs::write(dir.join("two.log"), "log");
            let _ = std::fs::write(dir.parent().unwrap().join("three.txt"), "3");
        }
        Op::Rules(r) => {
            let _ = std::fs::write(root.join(".gitignore"), RULES[*r]);
        }
    }
}

/// A project, a checkpointer with the watcher (waited for) and one that walks.
struct Pair {
    root: tempfile::TempDir,
    _agents: (tempfile::TempDir, tempfile::TempDir),
    watched: Checkpointer,
    walking: Checkpointer,
    n: usize,
}

impl Pair {
    fn new(setup: impl FnOnce(&Path)) -> Pair {
        let root = tempfile::tempdir().unwrap();
        setup(root.path());
        let agents = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let watched = Checkpointer::new(agents.0.path(), root.path());
        watched.wait_for_watcher(Duration::from_secs(20)).unwrap();
        let walking = Checkpointer::walking_only(agents.1.path(), root.path());
        let mut pair = Pair {
            root,
            _agents: agents,
            watched,
            walking,
            n: 0,
        };
        // The first command walks (and makes the watcher's news trusted from then on).
        assert_eq!(pair.bash(|_| {}), None);
        pair
    }

    /// Runs `command` as one `bash` call seen by both; both must record the same.
    fn bash(&mut self, command: impl FnOnce(&Path)) -> Option<Checkpoint> {
        self.n += 1;
        let id = format!("call{}", self.n);
        let root = self.root.path().to_path_buf();
        let args = json!({"command": "…"});
        self.watched.start(&root, &id, "bash", &args);
        self.walking.start(&root, &id, "bash", &args);
        command(root.as_path());
        let a = self.watched.finish(&root, &id, "bash");
        let b = self.walking.finish(&root, &id, "bash");
        assert_eq!(a, b, "watcher and walk disagree");
        a
    }

    fn changed(&mut self, command: impl FnOnce(&Path)) -> Vec<(String, bool, bool)> {
        let c = self.bash(command);
        c.map(|c| {
            c.changes
                .into_iter()
                .map(|c| (c.path, c.before.is_some(), c.after.is_some()))
                .collect()
        })
        .unwrap_or_default()
    }
}

fn base(root: &Path) {
    std::fs::write(root.join(".gitignore"), RULES[0]).unwrap();
    for f in ["a.txt", "d/c.txt", "d/e/f.txt", "g/h.txt", "build/out.txt"] {
        let file = root.join(f);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, f).unwrap();
    }
}

fn own(v: &[(&str, bool, bool)]) -> Vec<(String, bool, bool)> {
    v.iter().map(|(p, b, a)| (p.to_string(), *b, *a)).collect()
}

#[test]
fn watcher_sees_files_created_written_deleted_and_renamed() {
    let mut p = Pair::new(base);
    let got = p.changed(|r| {
        std::fs::write(r.join("d/c.txt"), "changed").unwrap();
        std::fs::write(r.join("new.txt"), "new").unwrap();
        std::fs::remove_file(r.join("a.txt")).unwrap();
        std::fs::rename(r.join("d/e/f.txt"), r.join("g/f.txt")).unwrap();
    });
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(
        got,
        own(&[
            ("d/c.txt", true, true),
            ("g/f.txt", false, true),
            ("new.txt", false, true),
            ("a.txt", true, false),
            ("d/e/f.txt", true, false),
        ])
    );
    // Nothing changed: nothing recorded, still without a walk.
    assert!(p.changed(|_| {}).is_empty());
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
}

#[test]
fn watcher_sees_directories_created_renamed_and_removed_by_the_command() {
    let mut p = Pair::new(base);
    let got = p.changed(|r| {
        std::fs::create_dir_all(r.join("x/y/z")).unwrap();
        std::fs::write(r.join("x/y/z/deep.txt"), "deep").unwrap();
        std::fs::write(r.join("x/top.txt"), "top").unwrap();
    });
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(
        got,
        own(&[("x/top.txt", false, true), ("x/y/z/deep.txt", false, true)])
    );
    // The new directories are watched: a later change inside them is seen.
    let got = p.changed(|r| std::fs::write(r.join("x/y/z/deep.txt"), "deeper").unwrap());
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(got, own(&[("x/y/z/deep.txt", true, true)]));
    let got = p.changed(|r| std::fs::rename(r.join("x"), r.join("w")).unwrap());
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(
        got,
        own(&[
            ("w/top.txt", false, true),
            ("w/y/z/deep.txt", false, true),
            ("x/top.txt", true, false),
            ("x/y/z/deep.txt", true, false),
        ])
    );
    // After the rename the moved directories report under their new names.
    let got = p.changed(|r| std::fs::write(r.join("w/y/z/deep.txt"), "moved").unwrap());
    assert_eq!(got, own(&[("w/y/z/deep.txt", true, true)]));
    let got = p.changed(|r| std::fs::remove_dir_all(r.join("w")).unwrap());
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(
        got,
        own(&[("w/top.txt", true, false), ("w/y/z/deep.txt", true, false)])
    );
}

#[test]
fn watcher_leaves_ignored_files_out_and_walks_again_when_the_rules_change() {
    let mut p = Pair::new(base);
    let got = p.changed(|r| {
        std::fs::write(r.join("build/more.txt"), "ignored").unwrap();
        std::fs::create_dir_all(r.join("d/build/sub")).unwrap();
        std::fs::write(r.join("d/build/sub/x.txt"), "ignored").unwrap();
        std::fs::write(r.join("debug.log"), "ignored").unwrap();
        std::fs::write(r.join("kept.txt"), "kept").unwrap();
    });
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(got, own(&[("kept.txt", false, true)]));
    // Un-ignoring `build/` changes which files exist for checkpoints: a walk.
    let got = p.changed(|r| std::fs::write(r.join(".gitignore"), "*.log\n").unwrap());
    assert_eq!(p.watched.last_scan(), ScanKind::Walk);
    assert_eq!(
        got,
        own(&[
            (".gitignore", true, true),
            ("build/more.txt", false, true),
            ("build/out.txt", false, true),
            ("d/build/sub/x.txt", false, true),
        ])
    );
    // The watches are set up again; once a walk began after that (the one above, if the
    // watches were already back, or the next) the watcher is trusted again and sees
    // changes in the directories that are no longer ignored.
    p.watched.wait_for_watcher(Duration::from_secs(20)).unwrap();
    assert!(p.changed(|_| {}).is_empty());
    let got = p.changed(|r| std::fs::write(r.join("build/out.txt"), "rebuilt").unwrap());
    assert_eq!(p.watched.last_scan(), ScanKind::Watched);
    assert_eq!(got, own(&[("build/out.txt", true, true)]));
}

#[test]
fn a_project_inside_a_git_repository_honours_the_parent_rules() {
    // The project is a subdirectory; the repository's .gitignore above it applies.
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    std::fs::write(repo.path().join(".gitignore"), "*.tmp\n/proj/out/\n").unwrap();
    let proj = repo.path().join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/a.rs"), "a").unwrap();
    let agents = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut watched = Checkpointer::new(agents.0.path(), &proj);
    watched.wait_for_watcher(Duration::from_secs(20)).unwrap();
    let mut walking = Checkpointer::walking_only(agents.1.path(), &proj);
    let mut run = |n: usize, command: &dyn Fn(&Path)| {
        let id = format!("c{n}");
        watched.start(&proj, &id, "bash", &json!({}));
        walking.start(&proj, &id, "bash", &json!({}));
        command(&proj);
        let a = watched.finish(&proj, &id, "bash");
        let b = walking.finish(&proj, &id, "bash");
        assert_eq!(a, b);
        (a, watched.last_scan())
    };
    assert_eq!(run(0, &|_| {}).0, None);
    let (got, kind) = run(1, &|p| {
        std::fs::create_dir_all(p.join("out/x")).unwrap();
        std::fs::write(p.join("out/x/gen.rs"), "g").unwrap();
        std::fs::write(p.join("src/b.tmp"), "t").unwrap();
        std::fs::write(p.join("src/b.rs"), "b").unwrap();
    });
    assert_eq!(kind, ScanKind::Watched);
    let paths: Vec<String> = got.unwrap().changes.into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["src/b.rs"]);
    // The parent's rules change (outside the watched tree): the next scan walks.
    let (got, kind) = run(2, &|_| {
        std::fs::write(repo.path().join(".gitignore"), "*.tmp\n").unwrap();
    });
    assert_eq!(kind, ScanKind::Walk);
    let paths: Vec<String> = got.unwrap().changes.into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["out/x/gen.rs"]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn watcher_and_walk_record_the_same_checkpoints(
        steps in proptest::collection::vec(proptest::collection::vec(op(), 1..4), 1..10)
    ) {
        let mut p = Pair::new(base);
        let mut watched_scans = 0;
        for ops in &steps {
            p.bash(|root| {
                for op in ops {
                    apply(root, op);
                }
            });
            if p.watched.last_scan() == ScanKind::Watched {
                watched_scans += 1;
            }
            if ops.iter().any(|o| matches!(o, Op::Rules(_))) {
                // Rules changed: let the watches be set up again, as between commands.
                let _ = p.watched.wait_for_watcher(Duration::from_secs(20));
            }
        }
        // Commands without rule changes after the first are watched.
        let ruled = steps.iter().filter(|s| s.iter().any(|o| matches!(o, Op::Rules(_)))).count();
        prop_assert!(watched_scans + 2 * ruled + 1 >= steps.len(), "{watched_scans} of {}", steps.len());
    }
}

/// A quick measurement in the test build (the figures of record come from
/// `cargo bench --bench checkpoints`): a `bash` checkpoint touching 3 files of a
/// 100,000-file project, with the watcher and with the walk. Run with
/// `cargo test --lib watch_properties::timing -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: generates 100,000 files"]
fn timing_bash_checkpoint_on_100k_files() {
    use std::time::Instant;
    let root = tempfile::tempdir().unwrap();
    let agent = tempfile::tempdir().unwrap();
    let r = root.path();
    for d in 0..1000 {
        let dir = r.join(format!("pkg_{:02}/mod_{d:03}", d / 100));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("file_{f:03}.rs")), format!("// {d} {f}\n")).unwrap();
        }
    }
    let started = Instant::now();
    let mut watched = Checkpointer::new(agent.path(), r);
    watched.wait_for_watcher(Duration::from_secs(300)).unwrap();
    eprintln!("watches set up in {:?}", started.elapsed());
    let mut walking = Checkpointer::walking_only(agent.path(), r);
    let touched = [
        "pkg_00/mod_001/file_001.rs",
        "pkg_04/mod_444/file_044.rs",
        "pkg_09/mod_999/file_099.rs",
    ];
    for (name, tracker) in [("watched", &mut watched), ("walking", &mut walking)] {
        // Warm up: the first scans read every file.
        for i in 0..3 {
            let id = format!("{name}-warm{i}");
            tracker.start(r, &id, "bash", &json!({}));
            tracker.finish(r, &id, "bash");
        }
        let mut times = Vec::new();
        for i in 0..10 {
            let id = format!("{name}{i}");
            let t = Instant::now();
            tracker.start(r, &id, "bash", &json!({}));
            for f in touched {
                std::fs::write(r.join(f), format!("{name} {i}\n")).unwrap();
            }
            let c = tracker.finish(r, &id, "bash").unwrap();
            times.push(t.elapsed());
            assert_eq!(c.changes.len(), 3, "{c:?}");
        }
        times.sort();
        eprintln!(
            "{name}: median {:?} (min {:?}, max {:?}), last scan {:?}",
            times[5],
            times[0],
            times[9],
            tracker.last_scan()
        );
    }
}
