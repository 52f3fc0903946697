//! Property test of checkpoints: random `write`/`edit`/delete/`bash`-like changes made
//! through the [`Checkpointer`] along a random tree of entries (each step branches from
//! any earlier entry, restoring its files first, as `/tree` does). Afterwards, restoring
//! to every entry in random order must reproduce exactly the files seen there, and
//! undoing each restore must bring back the files from before it. The same runs again in
//! a git repository whose first files are committed, where clean tracked files are named
//! by their git blob until a change needs their content ([`super::git`]).

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use serde_json::json;

use super::git::tests::run_git as git;
use super::*;

const PATHS: &[&str] = &["a.txt", "b.txt", "d/c.txt", "d/e/f.txt"];
const CONTENTS: &[&str] = &["", "x", "y", "hello\n", "hello\nworld\n", "12345678"];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize),
    Edit(usize, usize),
    /// A `bash` call deleting one file.
    Delete(usize),
    /// A `bash` call writing and deleting several files.
    Bash(Vec<(usize, usize)>, Vec<usize>),
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PATHS.len();
    let c = 0..CONTENTS.len();
    prop_oneof![
        (p.clone(), c.clone()).prop_map(|(p, c)| Op::Write(p, c)),
        (p.clone(), c.clone()).prop_map(|(p, c)| Op::Edit(p, c)),
        p.clone().prop_map(Op::Delete),
        (
            proptest::collection::vec((p.clone(), c), 0..3),
            proptest::collection::vec(p, 0..2)
        )
            .prop_map(|(w, d)| Op::Bash(w, d)),
    ]
}

type Files = BTreeMap<String, Vec<u8>>;

/// Every file under `root` (not `.git`).
fn snapshot(root: &Path) -> Files {
    let mut out = Files::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(relative_name(root, &path), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn put_file(root: &Path, p: usize, c: usize) {
    let file = root.join(PATHS[p]);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, CONTENTS[c]).unwrap();
}

fn remove_file(root: &Path, p: usize) {
    let _ = std::fs::remove_file(root.join(PATHS[p]));
}

/// One entry of the model tree: the ids root → it, and the files seen there.
struct Node {
    path: Vec<String>,
    files: Files,
}

struct World {
    root: tempfile::TempDir,
    _agent: tempfile::TempDir,
    store: Store,
    tracker: Checkpointer,
    recorded: Vec<Recorded>,
    nodes: Vec<Node>,
    /// The node whose files are on disk.
    current: usize,
}

impl World {
    fn cwd(&self) -> &Path {
        self.root.path()
    }

    /// Restores the files of node `to` as `/tree` does; returns what undo puts back.
    fn restore(&mut self, to: usize) -> FileState {
        let current = state_at(&self.recorded, &self.nodes[self.current].path);
        let target = state_at(&self.recorded, &self.nodes[to].path);
        let plan = plan_restore(self.cwd(), &current, &target);
        assert!(plan.conflicts.is_empty(), "{:?}", plan.conflicts);
        let paths: Vec<String> = plan.writes.iter().map(|(p, _)| p.clone()).collect();
        let saved = capture(&self.store, self.cwd(), &paths).unwrap();
        apply(&self.store, self.cwd(), &plan.writes).unwrap();
        self.tracker.mark_stale();
        self.current = to;
        saved
    }

    /// Runs `op` as tool call number `n` on top of the current node.
    fn step(&mut self, n: usize, op: &Op) {
        let id = format!("call{n}");
        let cwd = self.root.path().to_path_buf();
        let (tool, args) = match op {
            Op::Write(p, _) => ("write", json!({"path": PATHS[*p]})),
            Op::Edit(p, _) => ("edit", json!({"path": PATHS[*p]})),
            Op::Delete(_) | Op::Bash(..) => ("bash", json!({"command": "…"})),
        };
        self.tracker.start(&cwd, &id, tool, &args);
        match op {
            Op::Write(p, c) | Op::Edit(p, c) => put_file(&cwd, *p, *c),
            Op::Delete(p) => remove_file(&cwd, *p),
            Op::Bash(writes, deletes) => {
                for (p, c) in writes {
                    put_file(&cwd, *p, *c);
                }
                for p in deletes {
                    remove_file(&cwd, *p);
                }
            }
        }
        let result_id = format!("t{n}");
        if let Some(checkpoint) = self.tracker.finish(&cwd, &id, tool) {
            assert!(checkpoint.incomplete.is_none());
            self.recorded.push(Recorded {
                entry_id: format!("c{n}"),
                parent_id: Some(result_id.clone()),
                checkpoint,
            });
        }
        let mut path = self.nodes[self.current].path.clone();
        path.push(result_id);
        self.nodes.push(Node {
            path,
            files: snapshot(&cwd),
        });
        self.current = self.nodes.len() - 1;
    }
}

type Steps = Vec<(prop::sample::Index, Op)>;

/// The property: `initial` files (committed when `in_git`), the `steps` along a random
/// tree, then restores in `order`.
fn restores_reproduce_every_entry(
    initial: &[(usize, usize)],
    steps: &Steps,
    order: &[prop::sample::Index],
    in_git: bool,
) -> Result<(), TestCaseError> {
    let root = tempfile::tempdir().unwrap();
    let agent = tempfile::tempdir().unwrap();
    // Files the user had before the agent started.
    for (p, c) in initial {
        put_file(root.path(), *p, *c);
    }
    if in_git {
        assert!(git(root.path(), &["init", "-q"]));
        // The index is written after the files' clock tick: not racily clean.
        std::thread::sleep(std::time::Duration::from_millis(15));
        assert!(git(root.path(), &["add", "-A"]));
        assert!(git(
            root.path(),
            &["commit", "-qm", "start", "--allow-empty"]
        ));
    }
    let mut world = World {
        store: Store::for_project(agent.path(), root.path()),
        tracker: Checkpointer::new(agent.path(), root.path()),
        recorded: Vec::new(),
        nodes: vec![Node {
            path: vec!["root".into()],
            files: snapshot(root.path()),
        }],
        current: 0,
        root,
        _agent: agent,
    };
    for (n, (base, op)) in steps.iter().enumerate() {
        // Branch from any entry so far (often the current one: a linear run).
        let base = if n % 2 == 0 {
            world.current
        } else {
            base.index(world.nodes.len())
        };
        if base != world.current {
            world.restore(base);
            prop_assert_eq!(&snapshot(world.cwd()), &world.nodes[base].files);
        }
        world.step(n, op);
    }
    for pick in order {
        let to = pick.index(world.nodes.len());
        let before = snapshot(world.cwd());
        let from = world.current;
        let saved = world.restore(to);
        prop_assert_eq!(
            &snapshot(world.cwd()),
            &world.nodes[to].files,
            "restore to {}",
            to
        );
        // Undo: the files from before the restore come back.
        apply(
            &world.store,
            world.cwd(),
            &saved.into_iter().collect::<Vec<_>>(),
        )
        .unwrap();
        prop_assert_eq!(&snapshot(world.cwd()), &before);
        world.current = from;
        world.restore(to);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn restoring_any_entry_reproduces_its_files_and_undo_reverts(
        initial in proptest::collection::vec((0..PATHS.len(), 0..CONTENTS.len()), 0..3),
        steps in proptest::collection::vec((any::<prop::sample::Index>(), op()), 1..10),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 1..12),
    ) {
        restores_reproduce_every_entry(&initial, &steps, &order, false)?;
    }

    #[test]
    fn in_a_git_repository_restoring_any_entry_reproduces_its_files(
        initial in proptest::collection::vec((0..PATHS.len(), 0..CONTENTS.len()), 1..4),
        steps in proptest::collection::vec((any::<prop::sample::Index>(), op()), 1..10),
        order in proptest::collection::vec(any::<prop::sample::Index>(), 1..12),
    ) {
        restores_reproduce_every_entry(&initial, &steps, &order, true)?;
    }
}
