//! Finding what changed in the working tree: a walk honouring `.gitignore` (also outside
//! git repositories; `.git` itself is skipped) that compares each file's size, mtime and
//! inode with the previous scan's [`Index`] and reads and hashes only files that differ.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Change, Store, relative_name};

/// What the last scan saw of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub size: u64,
    pub mtime_ns: i128,
    pub ino: u64,
    pub hash: String,
}

/// The last scan: relative path → what it saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Index {
    pub files: HashMap<String, IndexEntry>,
}

impl Index {
    /// Reads an index written by [`Index::save`]; a missing or damaged file is empty.
    pub fn load(file: &Path) -> Index {
        let Ok(text) = std::fs::read_to_string(file) else {
            return Index::default();
        };
        let mut files = HashMap::new();
        for line in text.lines() {
            let mut parts = line.splitn(5, '\t');
            let (Some(hash), Some(size), Some(mtime), Some(ino), Some(path)) = (
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
                parts.next(),
            ) else {
                continue;
            };
            let (Ok(size), Ok(mtime_ns), Ok(ino)) = (size.parse(), mtime.parse(), ino.parse())
            else {
                continue;
            };
            files.insert(
                path.to_string(),
                IndexEntry {
                    size,
                    mtime_ns,
                    ino,
                    hash: hash.to_string(),
                },
            );
        }
        Index { files }
    }

    /// Writes the index as tab-separated lines (hash, size, mtime, inode, path).
    pub fn save(&self, file: &Path) -> std::io::Result<()> {
        let mut out = String::with_capacity(self.files.len() * 100);
        for (path, e) in &self.files {
            if path.contains('\n') {
                continue;
            }
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{path}\n",
                e.hash, e.size, e.mtime_ns, e.ino
            ));
        }
        super::store::write_atomic(file, out.as_bytes())
    }
}

/// Limits of one scan.
#[derive(Debug, Clone)]
pub struct ScanBounds {
    pub max_files: usize,
    /// Larger files are not recorded.
    pub max_file_bytes: u64,
    pub max_duration: Duration,
}

impl Default for ScanBounds {
    fn default() -> Self {
        ScanBounds {
            max_files: 250_000,
            max_file_bytes: 10 * 1024 * 1024,
            max_duration: Duration::from_secs(10),
        }
    }
}

/// The result of a scan: the new index and what differs from the old one.
#[derive(Debug, Clone, Default)]
pub struct ScanOutcome {
    pub index: Index,
    pub changes: Vec<Change>,
    /// Why the scan did not see everything, if it did not.
    pub incomplete: Option<String>,
}

/// Size, mtime (ns) and inode of a file.
pub fn stat_key(meta: &std::fs::Metadata) -> (u64, i128, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
        (meta.len(), mtime, meta.ino())
    }
    #[cfg(not(unix))]
    {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        (meta.len(), mtime, 0)
    }
}

/// Modification times at or after this (now minus a margin for coarse file-system
/// clocks) are too recent to prove a file unchanged later.
fn racy_threshold() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
        - 50_000_000
}

/// Walks `root`, storing the content of every new or changed file in `store`.
pub fn scan(root: &Path, store: &Store, old: &Index, bounds: &ScanBounds) -> ScanOutcome {
    let started = Instant::now();
    let racy_after = racy_threshold();
    let mut builder = crate::tools::walk::walker(root, crate::tools::walk::IgnoreRules::Fd);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    let mut out = ScanOutcome::default();
    let mut seen = 0usize;
    let mut too_large = 0usize;
    let mut unreadable = 0usize;
    for entry in builder.build().flatten() {
        if entry.file_type().is_none_or(|t| !t.is_file()) {
            continue;
        }
        seen += 1;
        if seen > bounds.max_files {
            out.incomplete = Some(format!("stopped after {} files", bounds.max_files));
            break;
        }
        if started.elapsed() > bounds.max_duration {
            out.incomplete = Some(format!(
                "stopped after {} s ({} files seen)",
                bounds.max_duration.as_secs(),
                seen
            ));
            break;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let (size, mtime_ns, ino) = stat_key(&meta);
        if size > bounds.max_file_bytes {
            too_large += 1;
            continue;
        }
        let path = relative_name(root, entry.path());
        let prev = old.files.get(&path);
        if let Some(p) = prev
            && p.size == size
            && p.mtime_ns == mtime_ns
            && p.ino == ino
        {
            out.index.files.insert(path, p.clone());
            continue;
        }
        let hash = match std::fs::read(entry.path()).map(|b| store.put(&b)) {
            Ok(Ok(hash)) => hash,
            _ => {
                unreadable += 1;
                continue;
            }
        };
        if prev.map(|p| p.hash.as_str()) != Some(hash.as_str()) {
            out.changes.push(Change {
                path: path.clone(),
                before: prev.map(|p| p.hash.clone()),
                after: Some(hash.clone()),
            });
        }
        // A file modified within the clock's granularity of this scan could change
        // again without its mtime moving: never trust its metadata (git's "racily clean").
        let mtime_ns = if mtime_ns >= racy_after { -1 } else { mtime_ns };
        out.index.files.insert(
            path,
            IndexEntry {
                size,
                mtime_ns,
                ino,
                hash,
            },
        );
    }
    if out.incomplete.is_some() {
        // Unseen files are not known to be gone: keep what the old scan knew.
        for (path, e) in &old.files {
            out.index
                .files
                .entry(path.clone())
                .or_insert_with(|| e.clone());
        }
    } else {
        let mut gone: Vec<&String> = old
            .files
            .keys()
            .filter(|p| !out.index.files.contains_key(*p))
            .collect();
        gone.sort();
        for path in gone {
            // Not seen: deleted, or now ignored / too large (then keep quiet about it).
            if root.join(path).exists() {
                continue;
            }
            out.changes.push(Change {
                path: path.clone(),
                before: old.files.get(path).map(|e| e.hash.clone()),
                after: None,
            });
        }
    }
    let mut notes = Vec::new();
    if let Some(why) = out.incomplete.take() {
        notes.push(why);
    }
    if too_large > 0 {
        notes.push(format!(
            "{too_large} files over the size bound not recorded"
        ));
    }
    if unreadable > 0 {
        notes.push(format!("{unreadable} unreadable files not recorded"));
    }
    out.incomplete = (!notes.is_empty()).then(|| notes.join("; "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_new_changed_and_deleted_files_and_honours_gitignore() {
        let project = tempfile::tempdir().unwrap();
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), project.path());
        let root = project.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        std::fs::create_dir(root.join("target")).unwrap();
        std::fs::write(root.join("target/out"), "x").unwrap();
        let bounds = ScanBounds::default();
        let first = scan(root, &store, &Index::default(), &bounds);
        assert!(first.index.files.contains_key("a.txt"));
        assert!(!first.index.files.contains_key("target/out"));
        let again = scan(root, &store, &first.index, &bounds);
        assert!(again.changes.is_empty(), "{:?}", again.changes);
        std::fs::write(root.join("a.txt"), "changed").unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        let next = scan(root, &store, &again.index, &bounds);
        let mut paths: Vec<(&str, bool, bool)> = next
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.before.is_some(), c.after.is_some()))
            .collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![
                ("a.txt", true, true),
                ("b.txt", true, false),
                ("c.txt", false, true)
            ]
        );
        let saved = root.join("idx");
        next.index.save(&saved).unwrap();
        assert_eq!(Index::load(&saved), next.index);
    }
}
