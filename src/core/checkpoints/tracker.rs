//! Per-session bookkeeping of the tool calls in flight: what `write`/`edit` found before
//! the call, and the working-tree index `bash` calls are compared against.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::git::GitRepo;
use super::watch::{Trust, Watcher};
use super::{Change, Checkpoint, Index, IndexEntry, ScanBounds, Store};

/// How long the first `bash` call of a [`Checkpointer::deferred`] waits for the watches
/// to be in place before its snapshot.
pub const WATCH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How the last working-tree scan found the changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// No scan yet.
    None,
    /// A walk of the whole tree.
    Walk,
    /// Only the entries the watcher reported.
    Watched,
}

/// What a tool call in flight needs to finish its checkpoint.
enum Pending {
    /// `write` / `edit`: the file and its content before the call.
    File {
        path: String,
        before: Option<String>,
    },
    /// `bash`: the whole working tree, against the index.
    Tree,
}

/// Per-session checkpoint bookkeeping (behind its own lock, never the state's).
pub struct Checkpointer {
    store: Store,
    /// The last scan; `None` until first needed.
    index: Option<Index>,
    /// Files may have changed outside the agent since the last scan (a new run began, or
    /// a restore wrote files): rescan before the next `bash` without recording.
    stale: bool,
    /// The index in memory has news the saved one lacks.
    dirty: bool,
    pending: HashMap<String, Pending>,
    /// The inotify watches of the project (Linux), set up in the background.
    watcher: Option<Watcher>,
    /// The watcher is started by the first `bash` call (or the model's announcing one)
    /// rather than at creation.
    watch_on_first_bash: bool,
    /// The first `bash` call still has to wait for the watches it started.
    wait_for_watches: bool,
    /// The index came from a complete walk that began once the watches were in place:
    /// the watcher's news since then are all that changed.
    trust: Option<Trust>,
    last_scan: ScanKind,
    /// The project's git repository, looked up by the first scan (`None` inside: none,
    /// or one whose files git may convert).
    git: Option<Option<GitRepo>>,
}

impl Checkpointer {
    /// Files may have changed outside the agent: rescan before the next `bash`.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// A checkpointer for the project `cwd`, starting its watcher in the background.
    pub fn new(agent_dir: &Path, cwd: &Path) -> Checkpointer {
        let mut c = Checkpointer::walking_only(agent_dir, cwd);
        c.watcher = Watcher::start(cwd);
        c
    }

    /// A checkpointer whose watcher is started by the first `bash` call: a run that
    /// never calls `bash` sets nothing up. That call waits (at most [`WATCH_WAIT`]) for
    /// the watches before its snapshot, so the snapshot is the only walk it costs.
    pub fn deferred(agent_dir: &Path, cwd: &Path) -> Checkpointer {
        let mut c = Checkpointer::walking_only(agent_dir, cwd);
        c.watch_on_first_bash = true;
        c
    }

    /// A checkpointer that always walks the tree (no watcher).
    pub fn walking_only(agent_dir: &Path, cwd: &Path) -> Checkpointer {
        Checkpointer {
            store: Store::for_project(agent_dir, cwd),
            index: None,
            stale: true,
            dirty: false,
            pending: HashMap::new(),
            watcher: None,
            watch_on_first_bash: false,
            wait_for_watches: false,
            trust: None,
            last_scan: ScanKind::None,
            git: None,
        }
    }

    /// Waits until the watcher's watches are in place (tests and the benchmark).
    pub fn wait_for_watcher(&self, timeout: std::time::Duration) -> Result<(), String> {
        match &self.watcher {
            Some(w) => w.wait_ready(timeout),
            None => Err("no watcher".into()),
        }
    }

    /// The model is streaming a `bash` call: a deferred watcher starts setting up now,
    /// while the call's arguments arrive, so that call waits less for it.
    pub fn bash_coming(&mut self, cwd: &Path) {
        if std::mem::take(&mut self.watch_on_first_bash) {
            self.watcher = Watcher::start(cwd);
            self.wait_for_watches = true;
        }
    }

    /// How the last scan found its changes.
    pub fn last_scan(&self) -> ScanKind {
        self.last_scan
    }

    /// Scans the tree against the index (loading it first) and returns the changes.
    ///
    /// The saved index only spares the next process from hashing every file again, so
    /// it is written by the first scan of a run and when the checkpointer is dropped,
    /// not after every `bash` call (on 100k files it is megabytes).
    ///
    /// When the watcher's news are complete since the index was made, only the entries
    /// it reported are looked at; otherwise the whole tree is walked. Without `record`
    /// the scan only renews the index (the changes found are not the agent's).
    fn rescan(&mut self, cwd: &Path, record: bool) -> (Vec<Change>, Option<String>) {
        let first_of_run = self.stale || self.index.is_none();
        let old = match self.index.take() {
            Some(index) => index,
            None => Index::load(&self.store.index_path()),
        };
        let bounds = ScanBounds::default();
        let news = match (&self.watcher, &self.trust) {
            (Some(w), Some(trust)) if !old.partial => w.take(trust).ok(),
            _ => None,
        };
        let walked = news.is_none();
        let git = self
            .git
            .get_or_insert_with(|| GitRepo::open(cwd, &super::git::user_files()))
            .as_mut();
        let outcome = match news {
            Some(dirty) => {
                self.last_scan = ScanKind::Watched;
                super::scan_changed_with(cwd, &self.store, old, &bounds, &dirty, git, record)
            }
            None => {
                self.last_scan = ScanKind::Walk;
                self.trust = self.watcher.as_ref().and_then(Watcher::begin_full);
                super::scan_with(cwd, &self.store, old, &bounds, git, record)
            }
        };
        if outcome.index.partial {
            self.trust = None;
        }
        self.index = Some(outcome.index);
        self.stale = false;
        self.dirty = true;
        // With the watcher's news, the next scans of this process do not need the saved
        // index: it is written after the first walk of a run only (and on drop).
        if first_of_run && walked {
            self.save_index();
        }
        (outcome.changes, outcome.incomplete)
    }

    /// Writes the index if it has news (a failure only costs rehashing later).
    pub fn save_index(&mut self) {
        if let Some(index) = self.index.as_ref().filter(|_| self.dirty)
            && index.save(&self.store.index_path()).is_ok()
        {
            self.dirty = false;
        }
    }

    /// A tool call starts: remember what its checkpoint compares against.
    pub fn start(&mut self, cwd: &Path, tool_call_id: &str, tool: &str, args: &Value) {
        match tool {
            "write" | "edit" => {
                let Some(path) = args.get("path").and_then(Value::as_str) else {
                    return;
                };
                let file = crate::tools::path::resolve_to_cwd(path, cwd);
                let name = super::relative_name(cwd, &file);
                let before = std::fs::read(&file)
                    .ok()
                    .and_then(|bytes| self.store.put(&bytes).ok());
                self.pending.insert(
                    tool_call_id.to_string(),
                    Pending::File { path: name, before },
                );
            }
            "bash" => {
                self.bash_coming(cwd);
                if std::mem::take(&mut self.wait_for_watches) {
                    if let Some(w) = &self.watcher {
                        // Not ready in time: this call walks twice, the next ones are
                        // watched once a walk began after the watches were in place.
                        let _ = w.wait_ready(WATCH_WAIT);
                    }
                    crate::core::timing::mark("checkpoint watches set up");
                }
                if self.stale || self.index.is_none() {
                    // Only the starting point: what changed before is not the agent's.
                    self.rescan(cwd, false);
                    crate::core::timing::mark("checkpoint snapshot before bash");
                }
                self.pending.insert(tool_call_id.to_string(), Pending::Tree);
            }
            _ => {}
        }
    }

    /// A tool call ended: what it changed, if anything.
    pub fn finish(&mut self, cwd: &Path, tool_call_id: &str, tool: &str) -> Option<Checkpoint> {
        let (changes, incomplete) = match self.pending.remove(tool_call_id)? {
            Pending::File { path, before } => {
                let file = super::absolute(cwd, &path);
                let after = std::fs::read(&file)
                    .ok()
                    .and_then(|bytes| self.store.put(&bytes).ok());
                self.dirty = true;
                if let (Some(index), Some(hash)) = (self.index.as_mut(), after.as_ref())
                    && let Ok(meta) = std::fs::metadata(&file)
                {
                    let (size, _, ino) = super::stat::stat_key(&meta);
                    // mtime -1: the next scan rehashes it rather than trusting metadata.
                    index.files.insert(
                        path.clone(),
                        IndexEntry {
                            size,
                            mtime_ns: -1,
                            ino,
                            hash: hash.clone(),
                        },
                    );
                }
                let changes = if before == after {
                    Vec::new()
                } else {
                    vec![Change {
                        path,
                        before,
                        after,
                    }]
                };
                (changes, None)
            }
            Pending::Tree => {
                let found = self.rescan(cwd, true);
                crate::core::timing::mark(match self.last_scan {
                    ScanKind::Watched => "checkpoint after bash (watched)",
                    _ => "checkpoint after bash (walked)",
                });
                found
            }
        };
        if changes.is_empty() && incomplete.is_none() {
            return None;
        }
        Some(Checkpoint {
            tool: tool.to_string(),
            tool_call_id: tool_call_id.to_string(),
            changes,
            incomplete,
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.save_index();
    }
}
