//! Finding what changed in the working tree: a walk honouring `.gitignore` (also outside
//! git repositories; `.git` itself is skipped) that compares each file's size, mtime and
//! inode with the previous scan's [`Index`] and reads and hashes only files that differ.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ignore::WalkState;

use super::git::{GitRepo, Tracked, blob_name, is_blob_name};
use super::stat::stat_key;
use super::{Change, Store, relative_name};

/// What the last scan saw of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub size: u64,
    pub mtime_ns: i128,
    pub ino: u64,
    /// The content's hash in the store, or `git:<blob id>` for a tracked file whose
    /// content git holds ([`super::git`]), stored only when a checkpoint needs it.
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
            // Git's index knows a clean tracked file again in the next process.
            if path.contains('\n') || is_blob_name(&e.hash) {
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

/// Modification times at or after this (now minus a margin for coarse file-system
/// clocks) are too recent to prove a file unchanged later.
fn racy_threshold() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
        - 50_000_000
}

/// One file the walk saw: its name relative to the root, its metadata key, and its git
/// blob when git's index proves the file unchanged.
struct Seen {
    path: String,
    key: (u64, i128, u64),
    blob: Option<gix_index::hash::ObjectId>,
}

/// What the walk threads found.
#[derive(Default)]
struct Walked {
    files: Vec<Seen>,
    too_large: usize,
    /// Directories (or entries) the walk could not read: permissions, symlink loops.
    unreadable: usize,
    incomplete: Option<String>,
}

/// A walk thread's findings, handed to the shared [`Walked`] when the thread is done.
struct Batch<'a> {
    local: Vec<Seen>,
    too_large: usize,
    unreadable: usize,
    shared: &'a Mutex<Walked>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let Ok(mut w) = self.shared.lock() {
            w.files.append(&mut self.local);
            w.too_large += self.too_large;
            w.unreadable += self.unreadable;
        }
    }
}

/// Walks `base` (`root` or a directory below it) on several threads, honouring the ignore
/// files, collecting the metadata key of every regular file within the bounds, named
/// relative to `root` (and its blob, when `git` proves it clean).
fn walk(
    root: &Path,
    base: &Path,
    bounds: &ScanBounds,
    started: Instant,
    git: Option<&Tracked>,
) -> Walked {
    let threads = match bounds.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        n => n,
    };
    let shared = Mutex::new(Walked::default());
    let count = AtomicUsize::new(0);
    let stop: Mutex<Option<String>> = Mutex::new(None);
    crate::tools::walk::walker(base, crate::tools::walk::IgnoreRules::Fd)
        .threads(threads)
        .build_parallel()
        .run(|| {
            let mut batch = Batch {
                local: Vec::new(),
                too_large: 0,
                unreadable: 0,
                shared: &shared,
            };
            let (count, stop) = (&count, &stop);
            Box::new(move |entry| {
                let entry = match entry {
                    Ok(entry) => entry,
                    Err(e) => {
                        // An ignore file that does not parse still lets the walk go on;
                        // an unreadable directory or a loop is a hole in the snapshot.
                        if e.io_error().is_some() || e.is_partial() {
                            batch.unreadable += 1;
                        }
                        return WalkState::Continue;
                    }
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
                let path = relative_name(root, entry.path());
                let blob = git.and_then(|g| g.clean_blob(&path, &meta));
                batch.local.push(Seen { path, key, blob });
                WalkState::Continue
            })
        });
    let mut walked = shared.into_inner().unwrap_or_default();
    walked.incomplete = stop.into_inner().unwrap_or_default();
    walked
}

/// Compares what a walk saw with the previous index, reading and storing the files whose
/// metadata changed.
struct Compare<'a> {
    root: &'a Path,
    store: &'a Store,
    bounds: &'a ScanBounds,
    started: Instant,
    racy_after: i128,
    old_partial: bool,
    /// The changes are wanted (not a scan that only renews the index).
    recording: bool,
    out_of_time: bool,
    unreadable: usize,
    /// Files changed while they were read: not recorded.
    unsteady: usize,
    incomplete: Option<String>,
    changes: Vec<Change>,
    /// Files found deleted: listed after the others (each list in path order).
    deleted: Vec<Change>,
    /// The file size each git blob named in `changes` / `deleted` had.
    blob_sizes: HashMap<String, u64>,
}

impl<'a> Compare<'a> {
    fn new(root: &'a Path, store: &'a Store, bounds: &'a ScanBounds, started: Instant) -> Self {
        Compare {
            root,
            store,
            bounds,
            started,
            racy_after: racy_threshold(),
            old_partial: false,
            recording: true,
            out_of_time: false,
            unreadable: 0,
            unsteady: 0,
            incomplete: None,
            changes: Vec::new(),
            deleted: Vec::new(),
            blob_sizes: HashMap::new(),
        }
    }

    /// Reads and stores a changed file; `None` when it cannot be read or changed while it
    /// was read (then it is counted, and not recorded).
    fn read_file(&mut self, path: &str, key: (u64, i128, u64)) -> Option<String> {
        let file = self.root.join(path);
        let Ok(bytes) = read_regular(&file) else {
            self.unreadable += 1;
            return None;
        };
        // Written to while read: neither the old nor the new content for sure.
        let after = std::fs::symlink_metadata(&file).map(|m| stat_key(&m));
        if after.ok() != Some(key) || bytes.len() as u64 != key.0 {
            self.unsteady += 1;
            return None;
        }
        match self.store.put(&bytes) {
            Ok(hash) => Some(hash),
            Err(_) => {
                self.unreadable += 1;
                None
            }
        }
    }

    /// A file the walk saw, with its old entry: its entry for the new index (`None`: it
    /// stays unknown).
    fn seen(
        &mut self,
        path: &str,
        key: (u64, i128, u64),
        blob: Option<gix_index::hash::ObjectId>,
        prev: Option<IndexEntry>,
    ) -> Option<IndexEntry> {
        let (size, mtime_ns, ino) = key;
        if prev
            .as_ref()
            .is_some_and(|p| p.size == size && p.mtime_ns == mtime_ns && p.ino == ino)
        {
            return prev;
        }
        if !self.out_of_time && self.started.elapsed() > self.bounds.max_duration {
            self.out_of_time = true;
            let secs = self.bounds.max_duration.as_secs();
            self.incomplete.get_or_insert_with(|| {
                format!("stopped after {secs} s while reading changed files")
            });
        }
        if self.out_of_time {
            // Not read: a known file keeps its old entry (the next scan compares it
            // again), a new one stays unknown (the index is partial).
            return prev;
        }
        let hash = match blob {
            Some(blob) => blob_name(&blob),
            // Keep what was known: an unreadable file is not a deleted one.
            None => match self.read_file(path, key) {
                Some(hash) => hash,
                None => return prev,
            },
        };
        // After a partial scan, a file the index lacks may be old: not known to be new.
        let unknown = prev.is_none() && self.old_partial;
        if self.recording
            && !unknown
            && prev.as_ref().map(|p| p.hash.as_str()) != Some(hash.as_str())
        {
            if is_blob_name(&hash) {
                self.blob_sizes.insert(hash.clone(), size);
            }
            if let Some(p) = prev.as_ref().filter(|p| is_blob_name(&p.hash)) {
                self.blob_sizes.insert(p.hash.clone(), p.size);
            }
            self.changes.push(Change {
                path: path.to_string(),
                before: prev.map(|p| p.hash),
                after: Some(hash.clone()),
            });
        }
        // A file modified within the clock's granularity of this scan could change
        // again without its mtime moving: never trust its metadata (git's "racily clean").
        let mtime_ns = if mtime_ns >= self.racy_after {
            -1
        } else {
            mtime_ns
        };
        Some(IndexEntry {
            size,
            mtime_ns,
            ino,
            hash,
        })
    }

    /// A file of the old index the walk did not see: deleted, or now ignored / too large
    /// (then keep quiet about it).
    fn unseen(&mut self, path: String, entry: IndexEntry) {
        if !self.recording || self.root.join(&path).exists() {
            return;
        }
        if is_blob_name(&entry.hash) {
            self.blob_sizes.insert(entry.hash.clone(), entry.size);
        }
        self.deleted.push(Change {
            path,
            before: Some(entry.hash),
            after: None,
        });
    }

    /// Puts the git blobs named in the changes into the store, so checkpoints only name
    /// stored contents; drops changes that turn out to be none, and those whose blob git
    /// cannot give back (counted).
    fn materialize(&mut self, git: Option<&GitRepo>) -> usize {
        let named = |c: &Change| {
            c.before.as_deref().is_some_and(is_blob_name)
                || c.after.as_deref().is_some_and(is_blob_name)
        };
        if !self.changes.iter().chain(&self.deleted).any(named) {
            return 0;
        }
        let mut lost = 0;
        let mut stored: HashMap<String, Option<String>> = HashMap::new();
        let objects = git.and_then(GitRepo::objects);
        let sizes = std::mem::take(&mut self.blob_sizes);
        let store = self.store;
        let mut resolve = |name: &str| -> Option<String> {
            if !is_blob_name(name) {
                return Some(name.to_string());
            }
            stored
                .entry(name.to_string())
                .or_insert_with(|| {
                    let size = *sizes.get(name)?;
                    let bytes = objects.as_ref()?.read_blob(name, size)?;
                    store.put(&bytes).ok()
                })
                .clone()
        };
        for list in [&mut self.changes, &mut self.deleted] {
            list.retain_mut(|c| {
                let before = c.before.as_deref().map(&mut resolve);
                let after = c.after.as_deref().map(&mut resolve);
                match (before, after) {
                    (Some(None), _) | (_, Some(None)) => {
                        lost += 1;
                        false
                    }
                    (before, after) => {
                        c.before = before.flatten();
                        c.after = after.flatten();
                        c.before != c.after
                    }
                }
            });
        }
        lost
    }

    fn finish(mut self, mut index: Index, too_large: usize, git: Option<&GitRepo>) -> ScanOutcome {
        let lost = self.materialize(git);
        self.changes.sort_by(|a, b| a.path.cmp(&b.path));
        self.deleted.sort_by(|a, b| a.path.cmp(&b.path));
        self.changes.append(&mut self.deleted);
        if self.incomplete.is_some() {
            index.partial = true;
        }
        let mut notes = Vec::new();
        if let Some(why) = self.incomplete.take() {
            notes.push(why);
        }
        if too_large > 0 {
            notes.push(format!(
                "{too_large} files over the size bound not recorded"
            ));
        }
        if self.unreadable > 0 {
            notes.push(format!("{} unreadable files not recorded", self.unreadable));
        }
        if self.unsteady > 0 {
            notes.push(format!(
                "{} files changing while read not recorded",
                self.unsteady
            ));
        }
        if lost > 0 {
            notes.push(format!(
                "{lost} files whose earlier content git could not give back not recorded"
            ));
        }
        ScanOutcome {
            index,
            changes: self.changes,
            incomplete: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

/// What a walk could not see makes the scan incomplete: directories it could not read
/// may hold files that are still there.
fn incomplete_of(walked: &mut Walked) -> Option<String> {
    let unreadable = (walked.unreadable > 0).then(|| {
        format!(
            "{} directories or entries could not be read",
            walked.unreadable
        )
    });
    match (walked.incomplete.take(), unreadable) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// Walks `root` (see [`ScanBounds::threads`]), storing the content of every new or
/// changed file in `store`. Entries of `old` move into the new index, so a scan costs a
/// metadata walk plus reading the files whose size, mtime or inode changed.
pub fn scan(root: &Path, store: &Store, old: Index, bounds: &ScanBounds) -> ScanOutcome {
    scan_with(root, store, old, bounds, None, true)
}

/// [`scan`], with git's index (when the project is in a repository) naming the content
/// of clean tracked files instead of reading them ([`super::git`]). Without `record`
/// only the index is renewed (no changes are reported).
pub fn scan_with(
    root: &Path,
    store: &Store,
    old: Index,
    bounds: &ScanBounds,
    mut git: Option<&mut GitRepo>,
    record: bool,
) -> ScanOutcome {
    let started = Instant::now();
    let mut cmp = Compare::new(root, store, bounds, started);
    cmp.recording = record;
    if let Some(g) = git.as_deref_mut() {
        g.refresh();
    }
    let mut walked = walk(
        root,
        root,
        bounds,
        started,
        git.as_deref().map(GitRepo::tracked),
    );
    let Index {
        files: mut old_files,
        partial: old_partial,
    } = old;
    cmp.old_partial = old_partial;
    cmp.incomplete = incomplete_of(&mut walked);
    let mut files = HashMap::with_capacity(old_files.len().max(walked.files.len()));
    for Seen { path, key, blob } in walked.files {
        let prev = old_files.remove(&path);
        if let Some(entry) = cmp.seen(&path, key, blob, prev) {
            files.insert(path, entry);
        }
    }
    if cmp.incomplete.is_some() {
        // Unseen files are not known to be gone: keep what the old scan knew.
        files.extend(old_files);
    } else {
        let mut gone: Vec<(String, IndexEntry)> = old_files.into_iter().collect();
        gone.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, entry) in gone {
            cmp.unseen(path, entry);
        }
    }
    let index = Index {
        files,
        partial: false,
    };
    cmp.finish(index, walked.too_large, git.as_deref())
}

/// The parent directory of a relative path (`""`: the root) and its last component.
fn split_parent(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}

/// Whether `path` is `tree` or below it.
fn is_under(path: &str, tree: &str) -> bool {
    path == tree
        || (path.len() > tree.len()
            && path.starts_with(tree)
            && path.as_bytes()[tree.len()] == b'/')
}

/// Like [`scan`], but only looks at what the watcher reported changed (`dirty`): each
/// named entry of a watched directory (listed with the ignore rules, so a new ignored
/// file stays out) and the whole subtree of each directory created, deleted or renamed.
/// Every other entry of `old` is carried over unchanged. `old` must be complete (not
/// [`Index::partial`]) and the news complete since it was made ([`super::watch`]); then
/// the outcome is the one [`scan`] would give, at a cost proportional to the changes.
pub fn scan_changed(
    root: &Path,
    store: &Store,
    old: Index,
    bounds: &ScanBounds,
    dirty: &super::watch::Dirty,
) -> ScanOutcome {
    scan_changed_with(root, store, old, bounds, dirty, None, true)
}

/// [`scan_changed`] with git's index, as [`scan_with`].
pub fn scan_changed_with(
    root: &Path,
    store: &Store,
    old: Index,
    bounds: &ScanBounds,
    dirty: &super::watch::Dirty,
    mut git: Option<&mut GitRepo>,
    record: bool,
) -> ScanOutcome {
    use std::collections::HashSet;
    let started = Instant::now();
    let mut cmp = Compare::new(root, store, bounds, started);
    cmp.recording = record;
    if let Some(g) = git.as_deref_mut() {
        g.refresh();
    }
    let tracked = git.as_deref().map(GitRepo::tracked);
    cmp.old_partial = old.partial;
    // Subtrees to walk whole, leaving out those inside another.
    let in_tree = |path: &str| {
        let mut p = path;
        while let Some(i) = p.rfind('/') {
            p = &p[..i];
            if dirty.trees.contains(p) {
                return true;
            }
        }
        false
    };
    let mut trees: Vec<&str> = dirty
        .trees
        .iter()
        .map(String::as_str)
        .filter(|t| !in_tree(t))
        .collect();
    trees.sort_unstable();
    let covered = |path: &str| in_tree(path) || dirty.trees.contains(path);
    let mut names: Vec<&str> = dirty
        .files
        .iter()
        .map(String::as_str)
        .filter(|p| !covered(p))
        .collect();
    names.sort_unstable();
    let mut by_dir: HashMap<&str, HashSet<&str>> = HashMap::new();
    for path in &names {
        let (dir, name) = split_parent(path);
        by_dir.entry(dir).or_default().insert(name);
    }

    let mut walked = Walked::default();
    for (dir, wanted) in &by_dir {
        let base = if dir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(dir)
        };
        let listing = crate::tools::walk::walker(&base, crate::tools::walk::IgnoreRules::Fd)
            .max_depth(Some(1))
            .build();
        for entry in listing.flatten() {
            if entry.depth() != 1
                || entry.file_type().is_none_or(|t| !t.is_file())
                || !wanted.contains(entry.file_name().to_string_lossy().as_ref())
            {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let key = stat_key(&meta);
            if key.0 > bounds.max_file_bytes {
                walked.too_large += 1;
                continue;
            }
            let path = relative_name(root, entry.path());
            let blob = tracked.and_then(|g| g.clean_blob(&path, &meta));
            walked.files.push(Seen { path, key, blob });
        }
    }
    for tree in &trees {
        let (parent, name) = split_parent(tree);
        let visible = super::watch::list_dir(root, parent)
            .iter()
            .any(|(n, is_dir)| *is_dir && n == name);
        if !visible {
            continue;
        }
        let mut sub = walk(root, &root.join(tree), bounds, started, tracked);
        walked.files.append(&mut sub.files);
        walked.too_large += sub.too_large;
        walked.unreadable += sub.unreadable;
        if walked.incomplete.is_none() {
            walked.incomplete = sub.incomplete;
        }
    }

    cmp.incomplete = incomplete_of(&mut walked);
    let Index { mut files, .. } = old;
    let mut seen: HashSet<String> = HashSet::with_capacity(walked.files.len());
    for Seen { path, key, blob } in walked.files {
        let prev = files.remove(&path);
        if let Some(entry) = cmp.seen(&path, key, blob, prev) {
            files.insert(path.clone(), entry);
        }
        seen.insert(path);
    }
    if cmp.incomplete.is_none() {
        let mut gone: Vec<String> = names
            .iter()
            .filter(|p| !seen.contains(**p) && files.contains_key(**p))
            .map(|p| p.to_string())
            .collect();
        if !trees.is_empty() {
            gone.extend(
                files
                    .keys()
                    .filter(|k| !seen.contains(*k) && trees.iter().any(|t| is_under(k, t)))
                    .cloned(),
            );
        }
        gone.sort();
        for path in gone {
            if let Some(entry) = files.remove(&path) {
                cmp.unseen(path, entry);
            }
        }
    }
    let index = Index {
        files,
        partial: false,
    };
    cmp.finish(index, walked.too_large, git.as_deref())
}

/// A regular file's bytes, opened without following a symbolic link and without
/// blocking (a FIFO put in its place since the walk is refused, not waited on).
fn read_regular(file: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let mut f = options.open(file)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
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

    /// A scan of `root` into a fresh store.
    fn fresh_scan(root: &Path, bounds: &ScanBounds) -> ScanOutcome {
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), root);
        scan(root, &store, Index::default(), bounds)
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_a_symlink_loop_and_dangling_links_neither_block_nor_count() {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let fifo =
            std::ffi::CString::new(root.join("pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        std::os::unix::fs::symlink(".", root.join("loop")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("b", root.join("c")).unwrap();
        std::os::unix::fs::symlink("c", root.join("b")).unwrap();
        let out = fresh_scan(root, &ScanBounds::default());
        assert_eq!(out.incomplete, None);
        let mut names: Vec<&String> = out.index.files.keys().collect();
        names.sort();
        assert_eq!(names, ["a.txt"]);
        // Reading a FIFO put where a file was refuses at once instead of waiting.
        assert!(read_regular(&root.join("pipe")).is_err());
        assert!(read_regular(&root.join("loop")).is_err());
    }

    /// Makes `depth` nested directories of 250-character names under `root` (relative
    /// to each parent, so the whole path may exceed what one system call takes), with a
    /// file in the last; returns the relative path of that file.
    #[cfg(unix)]
    fn deep_tree(root: &Path, depth: usize) -> String {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let name = "d".repeat(250);
        let c_name = std::ffi::CString::new(name.clone()).unwrap();
        let mut dir = std::fs::File::open(root).unwrap();
        let mut path = Vec::new();
        for _ in 0..depth {
            // SAFETY: valid descriptor and NUL-terminated name; results are checked.
            let fd = unsafe {
                assert_eq!(libc::mkdirat(dir.as_raw_fd(), c_name.as_ptr(), 0o755), 0);
                libc::openat(
                    dir.as_raw_fd(),
                    c_name.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY,
                )
            };
            assert!(fd >= 0);
            // SAFETY: a new descriptor owned by nobody else.
            dir = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
            path.push(name.clone());
        }
        let file = std::ffi::CString::new("deep.txt").unwrap();
        // SAFETY: as above.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                file.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY,
                0o644,
            )
        };
        assert!(fd >= 0);
        // SAFETY: closes the descriptor just opened.
        unsafe { libc::close(fd) };
        path.push("deep.txt".into());
        path.join("/")
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_the_walk_cannot_read_makes_an_honest_incomplete_scan() {
        // A directory whose path is too long to open (ENAMETOOLONG) stands for any the
        // walk cannot read; permissions would not stop a test running as root.
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), root);
        let first = scan(root, &store, Index::default(), &ScanBounds::default());
        assert_eq!(first.incomplete, None);
        deep_tree(root, 20);
        std::fs::remove_file(root.join("a.txt")).unwrap();
        let next = scan(root, &store, first.index, &ScanBounds::default());
        let note = next.incomplete.unwrap_or_default();
        assert!(note.contains("could not be read"), "{note}");
        assert!(next.index.partial);
        // A file not seen is not known to be gone while the snapshot has a hole: it
        // stays in the index, no deletion is recorded, and restores leave it alone.
        assert!(next.changes.is_empty(), "{:?}", next.changes);
        assert!(next.index.files.contains_key("a.txt"));
    }

    #[test]
    fn a_file_changing_while_it_is_read_is_not_recorded_and_is_named() {
        let project = tempfile::tempdir().unwrap();
        let agent = tempfile::tempdir().unwrap();
        let root = project.path();
        let store = Store::for_project(agent.path(), root);
        std::fs::write(root.join("busy.log"), "first").unwrap();
        let meta = std::fs::symlink_metadata(root.join("busy.log")).unwrap();
        let key = stat_key(&meta);
        // Written to between the walk's look at it and the read.
        std::fs::write(root.join("busy.log"), "first and more").unwrap();
        let bounds = ScanBounds::default();
        let mut cmp = Compare::new(root, &store, &bounds, Instant::now());
        assert_eq!(cmp.seen("busy.log", key, None, None), None);
        let out = cmp.finish(Index::default(), 0, None);
        assert!(out.changes.is_empty());
        let note = out.incomplete.unwrap_or_default();
        assert!(note.contains("1 files changing while read"), "{note}");
        assert_eq!(store.disk_usage().1, 0, "nothing stored");
    }

    #[test]
    fn a_million_files_stop_at_the_file_bound_within_the_time_bound() {
        // 3,000 files against a bound of 1,000 stand for a million against 250,000.
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        for d in 0..30 {
            let dir = root.join(format!("d{d}"));
            std::fs::create_dir(&dir).unwrap();
            for f in 0..100 {
                std::fs::write(dir.join(format!("f{f}")), "x").unwrap();
            }
        }
        let bounds = ScanBounds {
            max_files: 1000,
            ..ScanBounds::default()
        };
        let started = Instant::now();
        let out = fresh_scan(root, &bounds);
        assert!(started.elapsed() < bounds.max_duration);
        assert!(out.index.partial);
        assert!(out.index.files.len() <= 1000);
        let note = out.incomplete.unwrap_or_default();
        assert!(note.contains("stopped after 1000 files"), "{note}");
    }

    #[test]
    fn in_git_clean_tracked_files_are_not_read_and_a_changed_one_comes_back_from_git() {
        let dir = crate::core::checkpoints::git::tests::repo_with(&[
            ("kept.txt", "kept\n"),
            ("changed.txt", "old\n"),
            ("gone.txt", "gone\n"),
        ]);
        let root = dir.path();
        let agent = tempfile::tempdir().unwrap();
        let store = Store::for_project(agent.path(), root);
        let mut git = GitRepo::open(root, &[]);
        assert!(git.is_some());
        std::fs::write(root.join("untracked.txt"), "mine\n").unwrap();
        let bounds = ScanBounds::default();
        let first = scan_with(root, &store, Index::default(), &bounds, git.as_mut(), false);
        assert!(first.changes.is_empty());
        // Only the untracked file was read and stored.
        assert_eq!(store.disk_usage().1, 1);
        assert!(is_blob_name(&first.index.files["kept.txt"].hash));
        std::fs::write(root.join("changed.txt"), "new\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        let next = scan_with(root, &store, first.index, &bounds, git.as_mut(), true);
        assert_eq!(next.incomplete, None);
        type Content = Option<Vec<u8>>;
        let got: Vec<(&str, Content, Content)> = next
            .changes
            .iter()
            .map(|c| {
                let get = |h: &Option<String>| h.as_ref().map(|h| store.get(h).unwrap());
                (c.path.as_str(), get(&c.before), get(&c.after))
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "changed.txt",
                    Some(b"old\n".to_vec()),
                    Some(b"new\n".to_vec())
                ),
                ("gone.txt", Some(b"gone\n".to_vec()), None),
            ]
        );
        // kept.txt was never copied.
        let kept = crate::core::checkpoints::hash_bytes(b"kept\n");
        assert!(store.get(&kept).is_err());
    }
}
