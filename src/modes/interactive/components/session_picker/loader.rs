//! Filling the session picker without making the user wait: a background thread lists
//! the current folder's sessions (newest files first, in small batches so the first
//! screen shows at once), then every other folder, then reads the full message text of
//! every session for search, and hands each piece to the picker through a channel the app
//! drains between frames ([`Loader::feed`]).
//!
//! pi reads and parses every session file before its picker shows anything, which takes
//! seconds on big stores. Here each phase only does what the screen needs next: rows come
//! from the cheap line scanner (`session::listing::session_info`), and the message text,
//! which is what costs, arrives last, in batches, already normalized for searching.
//!
//! Also here, because they are the picker's only file operations: deleting a session file
//! the way pi does (the `trash` command when there is one, else removing it) and renaming
//! a session (appending a `session_info` entry).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::search::{MAX_SEARCH_TEXT_BYTES, normalize};
use crate::session::listing::{SessionInfo, load_search_text_capped, session_info};

/// Sessions in the first batch: enough to fill the first screen.
const FIRST_BATCH: usize = 24;
/// Sessions per later batch of rows.
const BATCH: usize = 128;
/// Sessions per batch of search text.
const TEXT_BATCH: usize = 48;

/// Which sessions are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Sessions of the current folder's session directory.
    Current,
    /// Sessions of every folder.
    All,
}

/// Something the loader found.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadEvent {
    /// Rows for some sessions, from the current folder or from another one.
    Sessions {
        sessions: Vec<SessionInfo>,
        current_folder: bool,
    },
    /// How far listing a scope has got.
    Progress {
        scope: Scope,
        loaded: usize,
        total: usize,
    },
    /// Every session of the scope has been listed.
    Listed(Scope),
    /// Full message text (normalized for search) of some sessions.
    SearchText(Vec<SessionText>),
    /// A scope could not be listed (its directory is unreadable).
    Failed { scope: Scope, message: String },
    /// Nothing more will come.
    Finished,
}

/// The searchable message text of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionText {
    pub path: PathBuf,
    /// Lowercased, whitespace collapsed, capped (see `search::normalize`).
    pub text: String,
}

/// Where the loader looks.
#[derive(Debug, Clone)]
pub struct LoaderConfig {
    /// The session directory of the current folder (`--session-dir` or the default one).
    pub current_dir: PathBuf,
    /// The root holding one directory per project (`~/.pi/agent/sessions`); `None` lists
    /// only the current folder.
    pub sessions_root: Option<PathBuf>,
}

/// The background listing. Dropping it stops the thread at its next batch.
pub struct Loader {
    events: Receiver<LoadEvent>,
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    finished: bool,
}

impl Loader {
    /// Starts listing in a background thread.
    pub fn start(config: LoaderConfig) -> Loader {
        Loader::start_with_waker(config, || {})
    }

    /// Like [`Loader::start`]; `wake` is called after every event is sent, so the app
    /// can schedule a frame instead of polling.
    pub fn start_with_waker(config: LoaderConfig, wake: impl Fn() + Send + 'static) -> Loader {
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let job = Job {
            tx,
            cancel: Arc::clone(&cancel),
            wake: Box::new(wake),
        };
        let thread = std::thread::Builder::new()
            .name("session-picker-loader".into())
            .spawn(move || job.run(&config));
        let (thread, finished) = match thread {
            Ok(handle) => (Some(handle), false),
            // No thread: the picker stays empty rather than crashing the app.
            Err(_) => (None, true),
        };
        Loader {
            events: rx,
            cancel,
            thread,
            finished,
        }
    }

    /// The next event if one is ready.
    pub fn try_next(&mut self) -> Option<LoadEvent> {
        let event = self.events.try_recv().ok()?;
        self.finished |= event == LoadEvent::Finished;
        Some(event)
    }

    /// Waits up to `timeout` for the next event (`None`: nothing came, or the loader has
    /// finished).
    pub fn next_timeout(&mut self, timeout: Duration) -> Option<LoadEvent> {
        match self.events.recv_timeout(timeout) {
            Ok(event) => {
                self.finished |= event == LoadEvent::Finished;
                Some(event)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Stops the thread and waits for it (it finishes the batch it is reading first).
    /// Dropping the loader stops it without waiting.
    pub fn stop(mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Whether the `Finished` event has been received.
    pub fn is_finished(&self) -> bool {
        self.finished
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        // Not joined: the thread stops at its next batch, and the UI must not wait for it.
        drop(self.thread.take());
    }
}

struct Job {
    tx: Sender<LoadEvent>,
    cancel: Arc<AtomicBool>,
    wake: Box<dyn Fn() + Send>,
}

/// The receiver is gone or the loader was dropped.
struct Stopped;

impl Job {
    fn send(&self, event: LoadEvent) -> Result<(), Stopped> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stopped);
        }
        self.tx.send(event).map_err(|_| Stopped)?;
        (self.wake)();
        Ok(())
    }

    fn run(self, config: &LoaderConfig) {
        let _ = self.phases(config);
        let _ = self.send(LoadEvent::Finished);
    }

    fn phases(&self, config: &LoaderConfig) -> Result<(), Stopped> {
        let mut sessions_found = Vec::new();
        let current = match session_files(&config.current_dir) {
            Ok(files) => files,
            Err(e) => {
                self.send(LoadEvent::Failed {
                    scope: Scope::Current,
                    message: format!(
                        "cannot read session directory {}: {e}",
                        config.current_dir.display()
                    ),
                })?;
                Vec::new()
            }
        };
        let current_total = current.len();
        self.list(
            &current,
            true,
            Scope::Current,
            0,
            current_total,
            &mut sessions_found,
        )?;
        self.send(LoadEvent::Listed(Scope::Current))?;
        let current_count = sessions_found.len();

        if let Some(root) = &config.sessions_root {
            match other_session_files(root, &config.current_dir) {
                Ok(others) => {
                    let total = current_total + others.len();
                    self.list(
                        &others,
                        false,
                        Scope::All,
                        current_total,
                        total,
                        &mut sessions_found,
                    )?;
                }
                Err(e) => self.send(LoadEvent::Failed {
                    scope: Scope::All,
                    message: format!("cannot read sessions directory {}: {e}", root.display()),
                })?,
            }
        }
        self.send(LoadEvent::Listed(Scope::All))?;

        // Current folder first (it is what the picker shows first), newest files first.
        let (mine, theirs) = sessions_found.split_at(current_count);
        for chunk in mine.chunks(TEXT_BATCH).chain(theirs.chunks(TEXT_BATCH)) {
            let texts = par_map(chunk, |path| {
                load_search_text_capped(path, MAX_SEARCH_TEXT_BYTES)
                    .ok()
                    .map(|text| SessionText {
                        path: path.clone(),
                        text: normalize(&text, MAX_SEARCH_TEXT_BYTES),
                    })
            });
            let texts: Vec<SessionText> = texts.into_iter().flatten().collect();
            if !texts.is_empty() {
                self.send(LoadEvent::SearchText(texts))?;
            }
        }
        Ok(())
    }

    /// Lists `files` in batches, sending rows and progress; records the sessions found.
    fn list(
        &self,
        files: &[PathBuf],
        current_folder: bool,
        scope: Scope,
        already: usize,
        total: usize,
        found: &mut Vec<PathBuf>,
    ) -> Result<(), Stopped> {
        self.send(LoadEvent::Progress {
            scope,
            loaded: already,
            total,
        })?;
        let mut done = 0;
        while done < files.len() {
            let size = if done == 0 { FIRST_BATCH } else { BATCH };
            let chunk = &files[done..(done + size).min(files.len())];
            let sessions: Vec<SessionInfo> = par_map(chunk, |p| session_info(p))
                .into_iter()
                .flatten()
                .collect();
            done += chunk.len();
            found.extend(sessions.iter().map(|s| s.path.clone()));
            if !sessions.is_empty() {
                self.send(LoadEvent::Sessions {
                    sessions,
                    current_folder,
                })?;
            }
            self.send(LoadEvent::Progress {
                scope,
                loaded: already + done,
                total,
            })?;
        }
        Ok(())
    }
}

/// `.jsonl` files of a directory, most recently written first. A missing directory has
/// none.
fn session_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| {
            let mtime = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (mtime, e.path())
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// Session files of every project directory under `root` except `current_dir`, most
/// recently written first.
fn other_session_files(root: &Path, current_dir: &Path) -> io::Result<Vec<PathBuf>> {
    let dirs = match fs::read_dir(root) {
        Ok(dirs) => dirs,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let skip: PathBuf = current_dir.components().collect();
    let mut files: Vec<(SystemTime, PathBuf)> = Vec::new();
    for dir in dirs.filter_map(Result::ok) {
        let path = dir.path();
        if !dir.file_type().is_ok_and(|t| t.is_dir())
            || path.components().collect::<PathBuf>() == skip
        {
            continue;
        }
        for file in session_files(&path).unwrap_or_default() {
            let mtime = fs::metadata(&file)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            files.push((mtime, file));
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// `f` over `items` on all cores, results in input order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        out.push((i, f(item)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// How a session file was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteMethod {
    /// Moved to the trash with the `trash` command.
    Trash,
    /// Removed for good (no `trash` command, or it failed).
    Removed,
}

/// Deletes a session file like pi: the `trash` command if it is installed and works,
/// otherwise the file is removed. The error says what went wrong with both.
pub fn delete_session_file(path: &Path) -> Result<DeleteMethod, String> {
    delete_with_trash_command(path, "trash")
}

/// [`delete_session_file`] with another trash program (tests use a script).
pub fn delete_with_trash_command(path: &Path, trash: &str) -> Result<DeleteMethod, String> {
    let mut command = Command::new(trash);
    // A file name starting with `-` must not be taken for an option.
    if path.to_string_lossy().starts_with('-') {
        command.arg("--");
    }
    let result = command
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let trash_error = match &result {
        Ok(out) if out.status.success() => return Ok(DeleteMethod::Trash),
        Ok(out) => String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| format!("exited with {}", out.status)),
        Err(e) => e.to_string(),
    };
    if !path.exists() {
        return Ok(DeleteMethod::Trash);
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(DeleteMethod::Removed),
        Err(e) => Err(format!(
            "{e} (trash: {})",
            trash_error.chars().take(200).collect::<String>()
        )),
    }
}

/// Names a session on disk (appends a `session_info` entry, as `/name` does).
pub fn rename_session_file(path: &Path, name: &str) -> Result<(), String> {
    let mut manager = crate::session::manager::SessionManager::open(path, None)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    manager
        .append_session_info(name)
        .map(|_| ())
        .map_err(|e| format!("cannot rename {}: {e}", path.display()))
}
