//! Diffs between two file states of the checkpoints: the working tree against an entry,
//! or one entry against another (two branches). Only paths some checkpoint touched are
//! compared. Text files get a unified diff (`similar`); binary, huge or no longer stored
//! contents get a one-line summary instead, so the answer stays bounded.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::{FileState, Store, absolute};

/// Contents larger than this are summarised, not diffed.
pub const MAX_DIFF_INPUT_BYTES: usize = 512 * 1024;
/// A diff text longer than this is cut (at a line end) with a note.
pub const MAX_DIFF_OUTPUT_BYTES: usize = 64 * 1024;
/// Diffing one file gives up on finding the smallest diff after this long.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// How a file differs between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Deleted,
    Modified,
    Binary,
}

/// One file that differs: its path, how, and the unified diff (or a summary line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub status: FileStatus,
    pub diff: String,
}

/// One side of a comparison.
pub enum Side<'a> {
    /// The files on disk now.
    WorkingTree,
    /// The files the agent left at an entry.
    Entry(&'a FileState),
}

/// A file's content on one side: absent, its bytes, or stored content that is gone.
enum Content {
    Absent,
    Bytes(Vec<u8>),
    Missing(String),
}

impl Content {
    fn len(&self) -> usize {
        match self {
            Content::Bytes(b) => b.len(),
            _ => 0,
        }
    }
}

fn content(store: &Store, cwd: &Path, side: &Side<'_>, path: &str) -> Content {
    match side {
        Side::WorkingTree => match std::fs::read(absolute(cwd, path)) {
            Ok(bytes) => Content::Bytes(bytes),
            Err(_) => Content::Absent,
        },
        Side::Entry(state) => match state.get(path).cloned().flatten() {
            None => Content::Absent,
            Some(hash) => match store.get(&hash) {
                Ok(bytes) => Content::Bytes(bytes),
                Err(_) => Content::Missing(hash),
            },
        },
    }
}

/// Whether `bytes` look binary (a NUL byte near the start, or not UTF-8).
fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

/// Every path of either side's state that differs, `from` → `to`, sorted by path.
pub fn diff_states(store: &Store, cwd: &Path, from: &Side<'_>, to: &Side<'_>) -> Vec<FileDiff> {
    let mut paths: Vec<&String> = Vec::new();
    for side in [from, to] {
        if let Side::Entry(state) = side {
            paths.extend(state.keys());
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let old = content(store, cwd, from, path);
            let new = content(store, cwd, to, path);
            diff_file(path, &old, &new)
        })
        .collect()
}

fn diff_file(path: &str, old: &Content, new: &Content) -> Option<FileDiff> {
    let status = match (old, new) {
        (Content::Absent, Content::Absent) => return None,
        (Content::Bytes(a), Content::Bytes(b)) if a == b => return None,
        (Content::Missing(a), Content::Missing(b)) if a == b => return None,
        (Content::Absent, _) => FileStatus::Added,
        (_, Content::Absent) => FileStatus::Deleted,
        _ => FileStatus::Modified,
    };
    let summary = |status: FileStatus, why: String| {
        Some(FileDiff {
            path: path.to_string(),
            status,
            diff: why,
        })
    };
    for side in [old, new] {
        if let Content::Missing(hash) = side {
            return summary(
                status,
                format!(
                    "(content {} is no longer stored)",
                    &hash[..hash.len().min(12)]
                ),
            );
        }
    }
    let (a, b) = match (old, new) {
        (Content::Bytes(a), Content::Bytes(b)) => (a.as_slice(), b.as_slice()),
        (Content::Bytes(a), _) => (a.as_slice(), &[][..]),
        (_, Content::Bytes(b)) => (&[][..], b.as_slice()),
        _ => (&[][..], &[][..]),
    };
    if is_binary(a) || is_binary(b) {
        return summary(
            FileStatus::Binary,
            format!("(binary: {} → {} bytes)", old.len(), new.len()),
        );
    }
    if a.len() > MAX_DIFF_INPUT_BYTES || b.len() > MAX_DIFF_INPUT_BYTES {
        return summary(
            status,
            format!("(too large to show: {} → {} bytes)", old.len(), new.len()),
        );
    }
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let text_diff = similar::TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(a.as_ref(), b.as_ref());
    let old_name = if matches!(old, Content::Absent) {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    let new_name = if matches!(new, Content::Absent) {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    let text = text_diff
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string();
    summary(status, bound(text))
}

/// Cuts `text` after the last whole line within [`MAX_DIFF_OUTPUT_BYTES`].
fn bound(text: String) -> String {
    if text.len() <= MAX_DIFF_OUTPUT_BYTES {
        return text;
    }
    let mut end = MAX_DIFF_OUTPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind('\n').map_or(0, |i| i + 1);
    let dropped = text[cut..].lines().count();
    format!("{}… ({dropped} more diff lines not shown)\n", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(store: &Store, pairs: &[(&str, Option<&[u8]>)]) -> FileState {
        pairs
            .iter()
            .map(|(p, c)| (p.to_string(), c.map(|c| store.put(c).unwrap())))
            .collect()
    }

    #[test]
    fn entries_and_working_tree_diff_with_status_and_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("p");
        std::fs::create_dir(&cwd).unwrap();
        let store = Store::for_project(dir.path(), &cwd);
        let big = "x\n".repeat(MAX_DIFF_INPUT_BYTES);
        let from = state(
            &store,
            &[
                ("same", Some(b"s\n")),
                ("mod", Some(b"one\ntwo\nthree\n")),
                ("gone", Some(b"bye\n")),
                ("new", None),
                ("bin", Some(b"a\0b")),
                ("big", Some(b"small\n")),
            ],
        );
        let to = state(
            &store,
            &[
                ("same", Some(b"s\n")),
                ("mod", Some(b"one\n2\nthree\n")),
                ("gone", None),
                ("new", Some(b"hi\n")),
                ("bin", Some(b"a\0c")),
                ("big", Some(big.as_bytes())),
            ],
        );
        let diffs = diff_states(&store, &cwd, &Side::Entry(&from), &Side::Entry(&to));
        let summary: Vec<(&str, FileStatus)> =
            diffs.iter().map(|d| (d.path.as_str(), d.status)).collect();
        assert_eq!(
            summary,
            [
                ("big", FileStatus::Modified),
                ("bin", FileStatus::Binary),
                ("gone", FileStatus::Deleted),
                ("mod", FileStatus::Modified),
                ("new", FileStatus::Added),
            ]
        );
        let by = |p: &str| diffs.iter().find(|d| d.path == p).unwrap().diff.clone();
        assert_eq!(
            by("mod"),
            "--- a/mod\n+++ b/mod\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert!(by("new").starts_with("--- /dev/null\n+++ b/new\n"));
        assert!(by("big").starts_with("(too large to show"), "{}", by("big"));
        assert_eq!(by("bin"), "(binary: 3 → 3 bytes)");

        // The working tree as the old side: files on disk, only touched paths.
        std::fs::write(cwd.join("mod"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(cwd.join("untouched"), "x").unwrap();
        let diffs = diff_states(&store, &cwd, &Side::WorkingTree, &Side::Entry(&to));
        let paths: Vec<&str> = diffs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["big", "bin", "mod", "new", "same"]);
    }

    #[test]
    fn long_diffs_are_cut_at_a_line_end() {
        let text = "+line\n".repeat(MAX_DIFF_OUTPUT_BYTES / 6 + 100);
        let cut = bound(text);
        assert!(cut.len() < MAX_DIFF_OUTPUT_BYTES + 100);
        assert!(
            cut.ends_with("more diff lines not shown)\n"),
            "{}",
            &cut[cut.len() - 60..]
        );
        assert!(cut.lines().rev().nth(1).unwrap() == "+line");
    }
}
