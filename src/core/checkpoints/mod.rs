//! File checkpoints: the files the agent changed, recorded per tool call so that the file
//! state at any entry of the session tree can be rebuilt and restored (see
//! `docs/checkpoints.md`).
//!
//! Contents live in a content-addressed store outside the project,
//! `<agent_dir>/checkpoints/<project-hash>/blobs/<sha256>`. A tool call that changed files
//! leaves a `custom` entry (`customType` [`CHECKPOINT_TYPE`], which pi ignores when it
//! builds the context) right after its tool result, holding only paths and hashes: for
//! each changed file its content before and after (`null` when absent).
//!
//! `write` and `edit` are recorded exactly (the named file is read before and after the
//! call). `bash` is recorded by comparing the working tree against an index of size,
//! mtime and inode per file ([`scan`]): only files whose metadata changed are read and
//! hashed, so the cost follows the number of changed files, not the size of the project.
//! In a git repository, tracked files git's index proves unchanged are not even read:
//! their content is git's blob, stored only once a tool call changes the file ([`git`]).
//! On Linux, inotify watches ([`watch`]) spare even the walk: a `bash` checkpoint then
//! only looks at the entries the kernel reported changed, and walks the tree whenever
//! those news cannot be trusted.
//!
//! The file state at an entry is the replay of the checkpoints on the path from the root
//! to it ([`state_at`]); a path no checkpoint on that path touched has the content the
//! first checkpoint that ever touched it found.

pub mod diff;
pub mod git;
#[cfg(test)]
mod properties;
pub mod prune;
pub mod scan;
mod stat;
pub mod store;
mod tracker;
pub mod watch;
#[cfg(test)]
mod watch_properties;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use diff::{FileDiff, FileStatus, Side};
pub use prune::prune;
pub use scan::{
    Index, IndexEntry, ScanBounds, ScanOutcome, scan, scan_changed, scan_changed_with, scan_with,
};
pub use store::{PruneReport, Store, hash_bytes, read_hash};
pub use tracker::{Checkpointer, ScanKind};

/// The `customType` of a checkpoint entry.
pub const CHECKPOINT_TYPE: &str = "pi-rs.checkpoint";

/// One changed file: its content hash before and after the tool call (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The `data` of a checkpoint entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub tool: String,
    pub tool_call_id: String,
    pub changes: Vec<Change>,
    /// Why the snapshot is incomplete (a bound was hit), if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// A checkpoint as found in the session: its entry and that entry's parent.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub entry_id: String,
    pub parent_id: Option<String>,
    pub checkpoint: Checkpoint,
}

/// Path (relative to the project, or absolute outside it) → content hash, `None` absent.
pub type FileState = BTreeMap<String, Option<String>>;

/// Whether `recorded` belongs to the state at the end of `path` (ids root → entry): the
/// checkpoint entry is on the path, or it hangs off a tool result on the path (the files
/// changed before the result was written, so the result entry already has them).
fn on_path(recorded: &Recorded, path: &HashSet<&str>) -> bool {
    path.contains(recorded.entry_id.as_str())
        || recorded
            .parent_id
            .as_deref()
            .is_some_and(|p| path.contains(p))
}

/// The files as the agent left them at the end of `path` (entry ids root → entry), for
/// every path any checkpoint in `all` (file order) touched.
pub fn state_at(all: &[Recorded], path: &[String]) -> FileState {
    let on: HashSet<&str> = path.iter().map(String::as_str).collect();
    let mut state = FileState::new();
    for r in all {
        for c in &r.checkpoint.changes {
            state
                .entry(c.path.clone())
                .or_insert_with(|| c.before.clone());
        }
    }
    for r in all.iter().filter(|r| on_path(r, &on)) {
        for c in &r.checkpoint.changes {
            state.insert(c.path.clone(), c.after.clone());
        }
    }
    state
}

/// The absolute location of a checkpoint path.
pub fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The name a file gets in checkpoints: relative to `cwd` when inside it.
pub fn relative_name(cwd: &Path, file: &Path) -> String {
    match file.strip_prefix(cwd) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => file.to_string_lossy().into_owned(),
    }
}

/// The files a restore changed and those it overwrote although they had been changed
/// outside the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreReport {
    pub restored_files: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overwritten_user_changes: Vec<String>,
}

/// The error text of a restore refused because of files changed outside the agent.
pub const RESTORE_CONFLICT_PREFIX: &str = "Files changed outside the agent since their checkpoint";

/// What a restore would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestorePlan {
    /// Files to write (`Some(hash)`) or delete (`None`).
    pub writes: Vec<(String, Option<String>)>,
    /// Files whose content is neither what the agent left at the current entry nor the
    /// target content: changed outside the agent since their checkpoint.
    pub conflicts: Vec<String>,
}

/// Compares the disk against the state the agent left at the current entry and the
/// state at the target.
pub fn plan_restore(cwd: &Path, current: &FileState, target: &FileState) -> RestorePlan {
    let mut plan = RestorePlan::default();
    for (path, wanted) in target {
        let expected = current.get(path).cloned().flatten();
        let on_disk = read_hash(&absolute(cwd, path));
        if on_disk == *wanted {
            continue;
        }
        if on_disk != expected {
            plan.conflicts.push(path.clone());
        }
        plan.writes.push((path.clone(), wanted.clone()));
    }
    plan
}

/// The content of every file in `paths` now, stored, so a restore can be undone.
pub fn capture(store: &Store, cwd: &Path, paths: &[String]) -> std::io::Result<FileState> {
    let mut out = FileState::new();
    for path in paths {
        let file = absolute(cwd, path);
        let hash = match std::fs::read(&file) {
            Ok(bytes) => Some(store.put(&bytes)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        out.insert(path.clone(), hash);
    }
    Ok(out)
}

/// Writes (temp file + rename, so each file is replaced atomically) or deletes files.
/// Every content is read from the store first: a missing one fails before anything is
/// written.
pub fn apply(
    store: &Store,
    cwd: &Path,
    writes: &[(String, Option<String>)],
) -> std::io::Result<()> {
    let mut contents = Vec::with_capacity(writes.len());
    for (path, hash) in writes {
        let bytes = match hash {
            Some(hash) => Some(store.get(hash)?),
            None => None,
        };
        contents.push((absolute(cwd, path), bytes));
    }
    for (file, bytes) in contents {
        match bytes {
            Some(bytes) => store::write_atomic(&file, &bytes)?,
            None => match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        id: &str,
        parent: Option<&str>,
        changes: &[(&str, Option<&str>, Option<&str>)],
    ) -> Recorded {
        Recorded {
            entry_id: id.into(),
            parent_id: parent.map(str::to_string),
            checkpoint: Checkpoint {
                tool: "write".into(),
                tool_call_id: format!("call-{id}"),
                changes: changes
                    .iter()
                    .map(|(p, b, a)| Change {
                        path: (*p).into(),
                        before: b.map(str::to_string),
                        after: a.map(str::to_string),
                    })
                    .collect(),
                incomplete: None,
            },
        }
    }

    #[test]
    fn state_replays_the_path_and_falls_back_to_the_first_before() {
        // root r → tool result t1 (+ checkpoint c1) → t2 (+c2); a branch from r: t3 (+c3)
        let all = vec![
            rec("c1", Some("t1"), &[("a", None, Some("A1"))]),
            rec(
                "c2",
                Some("t2"),
                &[("a", Some("A1"), Some("A2")), ("b", Some("B0"), None)],
            ),
            rec("c3", Some("t3"), &[("c", None, Some("C1"))]),
        ];
        let at = |path: &[&str]| {
            state_at(
                &all,
                &path.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        let s = at(&["r"]);
        assert_eq!(s["a"], None);
        assert_eq!(s["b"], Some("B0".into()));
        assert_eq!(s["c"], None);
        let s = at(&["r", "t1"]);
        assert_eq!(s["a"], Some("A1".into()));
        let s = at(&["r", "t1", "t2"]);
        assert_eq!(s["a"], Some("A2".into()));
        assert_eq!(s["b"], None);
        let s = at(&["r", "t3"]);
        assert_eq!(s["c"], Some("C1".into()));
        assert_eq!(s["a"], None);
    }
}
