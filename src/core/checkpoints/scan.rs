//! Finding what changed in the working tree: a walk honouring `.gitignore` (also outside
//! git repositories; `.git` itself is skipped) that compares each file's size, mtime and
//! inode with the previous scan's [`Index`] and reads and hashes only files that differ.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ignore::WalkState;

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
    /// The scan stopped at a bound before seeing every file: a file missing from `files`
    /// may have been there all along, so the next scan does not report it as created.
    pub partial: bool,
}

/// The first line of a saved [`Index`] that is [`Index::partial`].
const PARTIAL_MARK: &str = "#partial";

impl Index {
    /// Reads an index written by [`Index::save`]; a missing or damaged file is empty.
    pub fn load(file: &Path) -> Index {
        let Ok(text) = std::fs::read_to_string(file) else {
            return Index::default();
        };
        let mut files = HashMap::new();
        let partial = text.lines().next() == Some(PARTIAL_MARK);
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
        Index { files, partial }
    }

    /// Writes the index as tab-separated lines (hash, size, mtime, inode, path).
    pub fn save(&self, file: &Path) -> std::io::Result<()> {
        let mut out = String::with_capacity(self.files.len() * 100);
        if self.partial {
            out.push_str(PARTIAL_MARK);
            out.push('\n');
        }
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
    /// Threads walking the tree (0: one per core, at most 8).
    pub threads: usize,
}

impl Default for ScanBounds {
    fn default() -> Self {
        ScanBounds {
            max_files: 250_000,
            max_file_bytes: 10 * 1024 * 1024,
            max_duration: Duration::from_secs(10),
            threads: 0,
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

/// One file the walk saw: its name relative to the root and its metadata key.
struct Seen {
    path: String,
    key: (u64, i128, u64),
}

/// What the walk threads found.
#[derive(Default)]
struct Walked {
    files: Vec<Seen>,
    too_large: usize,
    incomplete: Option<String>,
}

/// A walk thread's findings, handed to the shared [`Walked`] when the thread is done.
struct Batch<'a> {
    local: Vec<Seen>,
    too_large: usize,
    shared: &'a Mutex<Walked>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let Ok(mut w) = self.shared.lock() {
            w.files.append(&mut self.local);
            w.too_large += self.too_large;
        }
    }
}

/// Walks `root` on several threads, honouring the ignore files, collecting the metadata
/// key of every regular file within the bounds.
fn walk(root: &Path, bounds: &ScanBounds, started: Instant) -> Walked {
    let threads = match bounds.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        n => n,
    };
    let shared = Mutex::new(Walked::default());
    let count = AtomicUsize::new(0);
    let stop: Mutex<Option<String>> = Mutex::new(None);
    crate::tools::walk::walker(root, crate::tools::walk::IgnoreRules::Fd)
        .threads(threads)
        .build_parallel()
        .run(|| {
            let mut batch = Batch {
                local: Vec::new(),
                too_large: 0,
                shared: &shared,
            };
            let (count, stop) = (&count, &stop);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_none_or(|t| !t.is_file()) {
                    return WalkState::Continue;
                }
                let seen = count.fetch_add(1, Ordering::Relaxed) + 1;
                let why = if seen > bounds.max_files {
                    Some(format!("stopped after {} files", bounds.max_files))
                } else if started.elapsed() > bounds.max_duration {
                    Some(format!(
                        "stopped after {} s ({seen} files seen)",
                        bounds.max_duration.as_secs()
                    ))
                } else {
                    None
                };
                if let Some(why) = why {
                    if let Ok(mut stop) = stop.lock() {
                        stop.get_or_insert(why);
                    }
                    return WalkState::Quit;
                }
                let Ok(meta) = entry.metadata() else {
                    return WalkState::Continue;
                };
                let key = stat_key(&meta);
                if key.0 > bounds.max_file_bytes {
                    batch.too_large += 1;
                    return WalkState::Continue;
                }
                batch.local.push(Seen {
                    path: relative_name(root, entry.path()),
                    key,
                });
                WalkState::Continue
            })
        });
    let mut walked = shared.into_inner().unwrap_or_default();
    walked.incomplete = stop.into_inner().unwrap_or_default();
    walked
}

/// Walks `root` (see [`ScanBounds::threads`]), storing the content of every new or
/// changed file in `store`. Entries of `old` move into the new index, so a scan costs a
/// metadata walk plus reading the files whose size, mtime or inode changed.
pub fn scan(root: &Path, store: &Store, old: Index, bounds: &ScanBounds) -> ScanOutcome {
    let started = Instant::now();
    let racy_after = racy_threshold();
    let walked = walk(root, bounds, started);
    let Index {
        files: mut old_files,
        partial: old_partial,
    } = old;
    let mut out = ScanOutcome {
        index: Index {
            files: HashMap::with_capacity(old_files.len().max(walked.files.len())),
            partial: false,
        },
        changes: Vec::new(),
        incomplete: walked.incomplete,
    };
    let mut unreadable = 0usize;
    let mut out_of_time = false;
    for Seen {
        path,
        key: (size, mtime_ns, ino),
    } in walked.files
    {
        let prev = match old_files.remove(&path) {
            Some(p) if p.size == size && p.mtime_ns == mtime_ns && p.ino == ino => {
                out.index.files.insert(path, p);
                continue;
            }
            prev => prev,
        };
        if !out_of_time && started.elapsed() > bounds.max_duration {
            out_of_time = true;
            out.incomplete.get_or_insert_with(|| {
                format!(
                    "stopped after {} s while reading changed files",
                    bounds.max_duration.as_secs()
                )
            });
        }
        if out_of_time {
            // Not read: a known file keeps its old entry (the next scan compares it
            // again), a new one stays unknown (the index is partial).
            if let Some(p) = prev {
                out.index.files.insert(path, p);
            }
            continue;
        }
        let hash = match std::fs::read(root.join(&path)).map(|b| store.put(&b)) {
            Ok(Ok(hash)) => hash,
            _ => {
                unreadable += 1;
                // Keep what was known: an unreadable file is not a deleted one.
                if let Some(p) = prev {
                    out.index.files.insert(path, p);
                }
                continue;
            }
        };
        // After a partial scan, a file the index lacks may be old: not known to be new.
        let unknown = prev.is_none() && old_partial;
        if !unknown && prev.as_ref().map(|p| p.hash.as_str()) != Some(hash.as_str()) {
            out.changes.push(Change {
                path: path.clone(),
                before: prev.map(|p| p.hash),
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
    out.changes.sort_by(|a, b| a.path.cmp(&b.path));
    if out.incomplete.is_some() {
        out.index.partial = true;
        // Unseen files are not known to be gone: keep what the old scan knew.
        out.index.files.extend(old_files);
    } else {
        let mut gone: Vec<(String, IndexEntry)> = old_files.into_iter().collect();
        gone.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, entry) in gone {
            // Not seen: deleted, or now ignored / too large (then keep quiet about it).
            if root.join(&path).exists() {
                continue;
            }
            out.changes.push(Change {
                path,
                before: Some(entry.hash),
                after: None,
            });
        }
    }
    let mut notes = Vec::new();
    if let Some(why) = out.incomplete.take() {
        notes.push(why);
    }
    if walked.too_large > 0 {
        notes.push(format!(
            "{} files over the size bound not recorded",
            walked.too_large
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
        let first = scan(root, &store, Index::default(), &bounds);
        assert!(first.index.files.contains_key("a.txt"));
        assert!(!first.index.files.contains_key("target/out"));
        let again = scan(root, &store, first.index, &bounds);
        assert!(again.changes.is_empty(), "{:?}", again.changes);
        std::fs::write(root.join("a.txt"), "changed").unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        let next = scan(root, &store, again.index, &bounds);
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

    #[test]
    fn after_a_partial_scan_unseen_files_are_not_reported_as_created() {
        let project = tempfile::tempdir().unwrap();
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), project.path());
        let root = project.path();
        for name in ["a", "b", "c", "d"] {
            std::fs::write(root.join(name), name).unwrap();
        }
        let bounded = ScanBounds {
            max_files: 2,
            ..ScanBounds::default()
        };
        let first = scan(root, &store, Index::default(), &bounded);
        assert!(first.index.partial && first.incomplete.is_some());
        assert_eq!(first.index.files.len(), 2);
        let saved = agent.path().join("idx-partial");
        first.index.save(&saved).unwrap();
        assert_eq!(Index::load(&saved), first.index);
        std::fs::remove_file(&saved).unwrap();
        // The full scan sees the two unseen files for the first time: not changes. A
        // file changed since the partial scan still is one. (The walk is parallel, so
        // which two files the partial scan saw varies.)
        let mut seen: Vec<String> = first.index.files.keys().cloned().collect();
        seen.sort();
        std::fs::write(root.join(&seen[0]), "changed").unwrap();
        let full = scan(root, &store, first.index, &ScanBounds::default());
        assert!(!full.index.partial && full.incomplete.is_none());
        assert_eq!(full.index.files.len(), 4);
        let paths: Vec<&str> = full.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, [seen[0].as_str()]);
    }

    #[test]
    fn a_scan_out_of_time_leaves_new_files_unknown_and_known_ones_to_the_next_scan() {
        let project = tempfile::tempdir().unwrap();
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), project.path());
        let root = project.path();
        std::fs::write(root.join("old"), "1").unwrap();
        let known = scan(root, &store, Index::default(), &ScanBounds::default()).index;
        std::fs::write(root.join("old"), "22").unwrap();
        std::fs::write(root.join("new"), "n").unwrap();
        let no_time = ScanBounds {
            max_duration: Duration::ZERO,
            ..ScanBounds::default()
        };
        let cut = scan(root, &store, known.clone(), &no_time);
        assert!(cut.changes.is_empty(), "{:?}", cut.changes);
        assert!(cut.incomplete.is_some() && cut.index.partial);
        assert_eq!(cut.index.files.get("old"), known.files.get("old"));
        assert!(!cut.index.files.contains_key("new"));
        // The next scan reports the known file's change, not the unknown file.
        let next = scan(root, &store, cut.index, &ScanBounds::default());
        let paths: Vec<&str> = next.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["old"]);
    }
}
