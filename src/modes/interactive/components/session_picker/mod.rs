//! The session picker of `pi --resume` and `/resume`, as a pure state machine: keys in,
//! outcomes out, lines for a width and height. It never reads the disk itself; sessions
//! arrive through [`SessionPicker::apply`] (normally from a [`Loader`], which fills it in
//! lazily), and deleting or renaming is asked of the app through an outcome, which then
//! reports back with [`SessionPicker::deleted`] / [`SessionPicker::renamed`].
//!
//! Behaviour follows pi's picker: two scopes (this folder, all folders; Tab), three sort
//! modes (threaded with forks under their parent, recent, relevance; Ctrl+S), a named-only
//! filter (Ctrl+N), the file path on each row (Ctrl+P), pi's search syntax (fuzzy tokens,
//! `"phrases"`, `re:` regexes), rename (Ctrl+R, `/resume` only) and delete with a
//! confirmation (Ctrl+D, or Ctrl+Backspace with an empty search). Unlike pi, the list is
//! usable while it loads: rows appear as soon as the first files are read, a search
//! covers what is loaded and refines as message text comes in, and the selection stays on
//! the same session while rows are added around it.

mod keys;
mod loader;
mod render;
pub mod search;
#[cfg(test)]
mod tests;
pub mod threads;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

pub use loader::{
    DeleteMethod, LoadEvent, Loader, LoaderConfig, Scope, SessionText, delete_session_file,
    delete_with_trash_command, rename_session_file,
};

use super::line_input::LineInput;
use crate::session::listing::SessionInfo;
use search::{Query, SearchDoc};

/// Row order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMode {
    /// Forks under their parent, newest first (a search orders by relevance).
    Threaded,
    /// Newest first, also while searching.
    Recent,
    /// Best match first (newest first when nothing is typed).
    Relevance,
}

impl SortMode {
    /// Ctrl+S order: threaded → recent → relevance → threaded.
    pub fn next(self) -> SortMode {
        match self {
            SortMode::Threaded => SortMode::Recent,
            SortMode::Recent => SortMode::Relevance,
            SortMode::Relevance => SortMode::Threaded,
        }
    }

    /// As the header shows it (pi calls relevance "Fuzzy").
    pub fn label(self) -> &'static str {
        match self {
            SortMode::Threaded => "Threaded",
            SortMode::Recent => "Recent",
            SortMode::Relevance => "Fuzzy",
        }
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// The picker changed; redraw it.
    Handled,
    /// Not a key the picker uses.
    Ignored,
    /// Open this session.
    Selected(PathBuf),
    /// Close the picker.
    Cancelled,
    /// Name this session (append a `session_info` entry), then call
    /// [`SessionPicker::renamed`].
    Rename { path: PathBuf, name: String },
    /// Delete this session file (the user confirmed), then call
    /// [`SessionPicker::deleted`].
    Delete { path: PathBuf },
}

/// How long status messages stay, in milliseconds (pi's timings).
const INFO_MS: i64 = 2000;
const ERROR_MS: i64 = 3000;
const LOAD_ERROR_MS: i64 = 4000;
/// Rows shown at most, and the PageUp/PageDown step.
pub const MAX_VISIBLE: usize = 10;

#[derive(Debug, Clone)]
struct Entry {
    info: SessionInfo,
    current_folder: bool,
    doc: SearchDoc,
    /// Match result for the query of that generation.
    score: Option<(u64, Option<f64>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    entry: usize,
    prefix: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    List,
    ConfirmDelete(PathBuf),
    Rename { path: PathBuf, input: LineInput },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Status {
    text: String,
    error: bool,
    until: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ScopeLoad {
    listed: bool,
    loaded: usize,
    total: Option<usize>,
}

/// The picker's state.
#[derive(Debug, Clone)]
pub struct SessionPicker {
    /// Newest first.
    entries: Vec<Entry>,
    by_path: HashMap<PathBuf, usize>,
    deleted: HashSet<PathBuf>,
    scope: Scope,
    sort: SortMode,
    named_only: bool,
    show_path: bool,
    query: LineInput,
    parsed: Query,
    query_generation: u64,
    rows: Vec<Row>,
    selected: usize,
    mode: Mode,
    status: Option<Status>,
    current_load: ScopeLoad,
    all_load: ScopeLoad,
    texts_loaded: usize,
    finished: bool,
    can_rename: bool,
    current_session: Option<PathBuf>,
    now: DateTime<Utc>,
}

impl Default for SessionPicker {
    fn default() -> Self {
        SessionPicker::new()
    }
}

impl SessionPicker {
    /// An empty picker (as `-r` opens it: no renaming), waiting for sessions.
    pub fn new() -> SessionPicker {
        SessionPicker {
            entries: Vec::new(),
            by_path: HashMap::new(),
            deleted: HashSet::new(),
            scope: Scope::Current,
            sort: SortMode::Threaded,
            named_only: false,
            show_path: false,
            query: LineInput::new(),
            parsed: Query::Empty,
            query_generation: 0,
            rows: Vec::new(),
            selected: 0,
            mode: Mode::List,
            status: None,
            current_load: ScopeLoad::default(),
            all_load: ScopeLoad::default(),
            texts_loaded: 0,
            finished: false,
            can_rename: false,
            current_session: None,
            now: Utc::now(),
        }
    }

    /// Allows renaming (Ctrl+R): `/resume` inside a running session does, `-r` does not.
    pub fn with_rename(mut self, allowed: bool) -> Self {
        self.can_rename = allowed;
        self
    }

    /// The session that is open now: highlighted, and it cannot be deleted.
    pub fn with_current_session(mut self, path: Option<PathBuf>) -> Self {
        self.current_session = path.map(|p| normalized(&p));
        self
    }

    /// The clock used for ages (`5m`, `2d`) and for hiding status messages.
    pub fn with_now(mut self, now: DateTime<Utc>) -> Self {
        self.now = now;
        self
    }

    /// Advances the clock (call before drawing).
    pub fn set_now(&mut self, now: DateTime<Utc>) {
        self.now = now;
        if self.status.as_ref().is_some_and(|s| s.until <= now) {
            self.status = None;
        }
    }

    /// When a status message will disappear, so the app can schedule a redraw.
    pub fn next_deadline(&self) -> Option<DateTime<Utc>> {
        self.status.as_ref().map(|s| s.until)
    }

    pub fn scope(&self) -> Scope {
        self.scope
    }

    pub fn sort(&self) -> SortMode {
        self.sort
    }

    pub fn query(&self) -> &str {
        self.query.value()
    }

    /// Sessions known so far (every scope).
    pub fn session_count(&self) -> usize {
        self.entries.len()
    }

    /// Sessions whose full message text has arrived.
    pub fn search_text_count(&self) -> usize {
        self.texts_loaded
    }

    /// The sessions listed now, in display order.
    pub fn visible_sessions(&self) -> impl Iterator<Item = &SessionInfo> {
        self.rows.iter().map(|r| &self.entries[r.entry].info)
    }

    pub fn selected_session(&self) -> Option<&SessionInfo> {
        self.rows
            .get(self.selected)
            .map(|r| &self.entries[r.entry].info)
    }

    /// Takes one loader event.
    pub fn apply(&mut self, event: LoadEvent) {
        match event {
            LoadEvent::Sessions {
                sessions,
                current_folder,
            } => self.add_sessions(sessions, current_folder),
            LoadEvent::Progress {
                scope,
                loaded,
                total,
            } => {
                let load = self.load_mut(scope);
                load.loaded = loaded;
                load.total = Some(total);
            }
            LoadEvent::Listed(scope) => self.load_mut(scope).listed = true,
            LoadEvent::SearchText(texts) => self.add_texts(texts),
            LoadEvent::Failed { scope, message } => {
                self.load_mut(scope).listed = true;
                self.set_status(
                    format!("Failed to load sessions: {message}"),
                    true,
                    LOAD_ERROR_MS,
                );
            }
            LoadEvent::Finished => {
                self.finished = true;
                self.current_load.listed = true;
                self.all_load.listed = true;
            }
        }
    }

    /// Adds sessions directly (tests, or an app listing them some other way).
    pub fn add_sessions(&mut self, sessions: Vec<SessionInfo>, current_folder: bool) {
        let keep = self.selected_path();
        for info in sessions {
            let key = normalized(&info.path);
            if self.deleted.contains(&key) {
                continue;
            }
            if let Some(&i) = self.by_path.get(&key) {
                let entry = &mut self.entries[i];
                entry.current_folder |= current_folder;
                entry.info = info;
                if entry.doc.is_full() {
                    // Keep the loaded text; the name may have changed.
                    entry.doc.renamed(&entry.info);
                } else {
                    entry.doc = SearchDoc::preview(&entry.info);
                }
                entry.score = None;
                continue;
            }
            self.by_path.insert(key, self.entries.len());
            self.entries.push(Entry {
                doc: SearchDoc::preview(&info),
                info,
                current_folder,
                score: None,
            });
        }
        self.entries
            .sort_by_key(|e| std::cmp::Reverse(e.info.modified));
        self.reindex();
        self.refilter(keep.as_deref());
    }

    fn add_texts(&mut self, texts: Vec<SessionText>) {
        for text in texts {
            let Some(&i) = self.by_path.get(&normalized(&text.path)) else {
                continue;
            };
            let entry = &mut self.entries[i];
            if !entry.doc.is_full() {
                self.texts_loaded += 1;
            }
            entry.doc = SearchDoc::full(&entry.info, &text.text);
            entry.score = None;
        }
        if !self.parsed.is_empty() {
            let keep = self.selected_path();
            self.refilter(keep.as_deref());
        }
    }

    fn reindex(&mut self) {
        self.by_path = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (normalized(&e.info.path), i))
            .collect();
    }

    fn load_mut(&mut self, scope: Scope) -> &mut ScopeLoad {
        match scope {
            Scope::Current => &mut self.current_load,
            Scope::All => &mut self.all_load,
        }
    }

    fn load(&self, scope: Scope) -> ScopeLoad {
        match scope {
            Scope::Current => self.current_load,
            Scope::All => self.all_load,
        }
    }

    fn selected_path(&self) -> Option<PathBuf> {
        self.selected_session().map(|s| normalized(&s.path))
    }

    fn set_status(&mut self, text: String, error: bool, ms: i64) {
        self.status = Some(Status {
            text,
            error,
            until: self.now + chrono::Duration::milliseconds(ms),
        });
    }

    /// Recomputes the rows. With `keep`, the selection stays on that session if it is
    /// still listed; otherwise the selected position is kept (clamped).
    fn refilter(&mut self, keep: Option<&Path>) {
        let generation = self.query_generation;
        let named_only = self.named_only;
        let scope = self.scope;
        let candidates: Vec<usize> = (0..self.entries.len())
            .filter(|&i| {
                let e = &self.entries[i];
                (scope == Scope::All || e.current_folder)
                    && (!named_only || e.info.name.as_deref().is_some_and(|n| !n.trim().is_empty()))
            })
            .collect();
        self.rows = if self.parsed.is_empty() {
            if self.sort == SortMode::Threaded {
                let infos: Vec<&SessionInfo> =
                    candidates.iter().map(|&i| &self.entries[i].info).collect();
                threads::thread(&infos)
                    .into_iter()
                    .map(|r| Row {
                        entry: candidates[r.index],
                        prefix: r.prefix,
                    })
                    .collect()
            } else {
                candidates
                    .into_iter()
                    .map(|entry| Row {
                        entry,
                        prefix: String::new(),
                    })
                    .collect()
            }
        } else {
            let mut matched: Vec<(f64, usize)> = Vec::new();
            for i in candidates {
                let entry = &mut self.entries[i];
                let score = match entry.score {
                    Some((g, score)) if g == generation => score,
                    _ => {
                        let score = self.parsed.score(entry.doc.text());
                        entry.score = Some((generation, score));
                        score
                    }
                };
                if let Some(score) = score {
                    matched.push((score, i));
                }
            }
            if self.sort != SortMode::Recent {
                // Entries are newest first, so a stable sort breaks ties by recency.
                matched.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            matched
                .into_iter()
                .map(|(_, entry)| Row {
                    entry,
                    prefix: String::new(),
                })
                .collect()
        };
        let kept = keep.and_then(|path| {
            self.rows
                .iter()
                .position(|r| normalized(&self.entries[r.entry].info.path) == path)
        });
        self.selected = kept
            .unwrap_or(self.selected)
            .min(self.rows.len().saturating_sub(1));
    }

    fn set_query_changed(&mut self) {
        self.parsed = Query::parse(self.query.value());
        self.query_generation += 1;
        self.selected = 0;
        self.refilter(None);
    }

    fn is_current(&self, path: &Path) -> bool {
        self.current_session
            .as_deref()
            .is_some_and(|c| c == normalized(path))
    }

    /// The app's answer to [`PickerOutcome::Delete`].
    pub fn deleted(&mut self, path: &Path, result: Result<DeleteMethod, String>) {
        match result {
            Ok(method) => {
                let key = normalized(path);
                self.deleted.insert(key.clone());
                if let Some(i) = self.by_path.get(&key).copied() {
                    let had_text = self.entries[i].doc.is_full();
                    self.entries.remove(i);
                    self.texts_loaded = self.texts_loaded.saturating_sub(usize::from(had_text));
                    self.reindex();
                }
                self.refilter(None);
                let text = match method {
                    DeleteMethod::Trash => "Session moved to trash",
                    DeleteMethod::Removed => "Session deleted",
                };
                self.set_status(text.into(), false, INFO_MS);
            }
            Err(e) => self.set_status(format!("Failed to delete: {e}"), true, ERROR_MS),
        }
    }

    /// The app's answer to [`PickerOutcome::Rename`].
    pub fn renamed(&mut self, path: &Path, result: Result<String, String>) {
        match result {
            Ok(name) => {
                let keep = self.selected_path();
                if let Some(&i) = self.by_path.get(&normalized(path)) {
                    let entry = &mut self.entries[i];
                    let name = name.trim();
                    entry.info.name = (!name.is_empty()).then(|| name.to_string());
                    entry.doc.renamed(&entry.info);
                    entry.score = None;
                }
                self.refilter(keep.as_deref());
            }
            Err(e) => self.set_status(format!("Failed to rename: {e}"), true, ERROR_MS),
        }
    }
}

fn normalized(path: &Path) -> PathBuf {
    path.components().collect()
}

/// pi's short relative age: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y`.
pub fn format_age(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    let ms = (now - then).num_milliseconds();
    let minutes = ms.div_euclid(60_000);
    let hours = ms.div_euclid(3_600_000);
    let days = ms.div_euclid(86_400_000);
    if minutes < 1 {
        "now".into()
    } else if minutes < 60 {
        format!("{minutes}m")
    } else if hours < 24 {
        format!("{hours}h")
    } else if days < 7 {
        format!("{days}d")
    } else if days < 30 {
        format!("{}w", days / 7)
    } else if days < 365 {
        format!("{}mo", days / 30)
    } else {
        format!("{}y", days / 365)
    }
}

// Here rather than in `loader`, which knows nothing of the picker it fills.
impl Loader {
    /// Hands every event that is ready to the picker. Returns whether anything arrived
    /// (the picker should be redrawn).
    pub fn feed(&mut self, picker: &mut SessionPicker) -> bool {
        let mut any = false;
        while let Some(event) = self.try_next() {
            picker.apply(event);
            any = true;
        }
        any
    }
}
