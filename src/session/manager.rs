//! [`SessionManager`]: one session — its header, its tree of entries, the current leaf —
//! and the file it lives in. This is the API the rest of pi-rs uses (mirroring pi's
//! `SessionManager`): constructors here, appends in `append`, new files from old ones in
//! `branching`.
//!
//! A session keeps its file's text in memory and an index over it; typed entries are
//! parsed on first use and cached, so opening a large session is cheap and navigating it
//! parses only what is looked at. Nothing here reads settings or environment variables:
//! the caller passes the session directory.
//!
//! Like pi 1.6, a new session writes nothing until its first user message exists; then
//! everything buffered is written at once and each later entry is appended as it comes.

use std::fs;
use std::path::{Path, PathBuf};

use once_cell::race::OnceBox;

use crate::session::clock::now_iso;
use crate::session::context::{PathEntries, SessionContext, context_of_path};
use crate::session::entry::{EntryId, SessionEntry, SessionHeader};
use crate::session::error::{IoOp, LoadWarning, ReadOnlyReason, Result, SessionError};
use crate::session::ids::{IdSource, SessionId};
use crate::session::load::{LoadMode, Loaded, Opened, has_valid_header, load_file};
use crate::session::paths::session_file_name;
use crate::session::store::{DiskState, LineStore, write_file_atomically};
use crate::session::tree::{EntryKind, Index, SessionTree};

/// A session: header, entry tree, current leaf, and (unless in memory) its file.
#[derive(Debug)]
pub struct SessionManager {
    pub(crate) cwd: PathBuf,
    pub(crate) session_dir: Option<PathBuf>,
    pub(crate) session_id: SessionId,
    pub(crate) header: SessionHeader,
    pub(crate) store: LineStore,
    pub(crate) index: Index,
    /// Change it with [`SessionManager::set_leaf`], which keeps `leaf_id` in step.
    pub(crate) leaf: Option<u32>,
    /// The id of `leaf` (the index keeps ids in compact form; this one is asked for often).
    leaf_id: Option<EntryId>,
    /// `None` for an in-memory session.
    pub(crate) disk: Option<DiskState>,
    pub(crate) read_only: Option<ReadOnlyReason>,
    pub(crate) warnings: Vec<LoadWarning>,
    pub(crate) ids: IdSource,
    /// The id the next append uses if it is free (see
    /// [`SessionManager::prefer_next_id`]).
    pub(crate) preferred_id: Option<EntryId>,
}

/// The cheap facts about an entry, known without parsing it (the ids are built from the
/// index's compact form on each call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryHead {
    pub id: EntryId,
    /// The resolved parent (`None` for roots and orphans).
    pub parent: Option<EntryId>,
    pub kind: EntryKind,
    /// Epoch ms (`i64::MIN` when unreadable).
    pub timestamp_ms: i64,
}

fn create_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| SessionError::io(IoOp::CreateDir, dir, e))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

impl SessionManager {
    fn blank(cwd: PathBuf, session_dir: Option<PathBuf>, persist: bool) -> Self {
        let mut manager = SessionManager {
            cwd,
            session_dir,
            session_id: SessionId::from(""),
            header: SessionHeader::new(String::new(), String::new(), String::new(), None),
            store: LineStore::default(),
            index: Index::default(),
            leaf: None,
            leaf_id: None,
            disk: None,
            read_only: None,
            warnings: Vec::new(),
            ids: IdSource::Random,
            preferred_id: None,
        };
        if persist {
            // Placeholder until new_session picks the real file name.
            manager.disk = Some(DiskState::pending(PathBuf::new()));
        }
        manager
    }

    /// A new session for `cwd`, stored in `session_dir` (created if missing). Nothing is
    /// written until the first user (or assistant) message.
    pub fn create(cwd: impl Into<PathBuf>, session_dir: impl Into<PathBuf>) -> Result<Self> {
        let session_dir = session_dir.into();
        create_dir(&session_dir)?;
        let mut manager = Self::blank(cwd.into(), Some(session_dir), true);
        manager.new_session(None, None);
        Ok(manager)
    }

    /// [`SessionManager::create`] with the session's id given (`--session-id`): the
    /// file is `<timestamp>_<id>.jsonl`.
    pub fn create_with_id(
        cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
        id: SessionId,
    ) -> Result<Self> {
        let session_dir = session_dir.into();
        create_dir(&session_dir)?;
        let mut manager = Self::blank(cwd.into(), Some(session_dir), true);
        manager.new_session(Some(id), None);
        Ok(manager)
    }

    /// A session that is never written to disk.
    pub fn in_memory(cwd: impl Into<PathBuf>) -> Self {
        let mut manager = Self::blank(cwd.into(), None, false);
        manager.new_session(None, None);
        manager
    }

    /// [`SessionManager::in_memory`] with the session's id given.
    pub fn in_memory_with_id(cwd: impl Into<PathBuf>, id: SessionId) -> Self {
        let mut manager = Self::blank(cwd.into(), None, false);
        manager.new_session(Some(id), None);
        manager
    }

    /// Opens the session file at `path`; its working directory comes from the header.
    /// `session_dir` (where `/new` and forks go) defaults to the file's directory. A
    /// missing file starts a new session that will be written at `path`.
    pub fn open(path: impl AsRef<Path>, session_dir: Option<&Path>) -> Result<Self> {
        Self::open_with_cwd(path, session_dir, None)
    }

    /// [`SessionManager::open`] with the working directory given instead of taken from the
    /// header.
    pub fn open_with_cwd(
        path: impl AsRef<Path>,
        session_dir: Option<&Path>,
        cwd: Option<&Path>,
    ) -> Result<Self> {
        let path = absolute(path.as_ref());
        let dir = session_dir
            .map(Path::to_path_buf)
            .or_else(|| path.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        create_dir(&dir)?;
        let fallback_cwd = || std::env::current_dir().unwrap_or_default();
        let mut manager = Self::blank(
            cwd.map(Path::to_path_buf).unwrap_or_else(fallback_cwd),
            Some(dir),
            true,
        );
        manager.load_from(&path)?;
        if cwd.is_none() && !manager.header.cwd.is_empty() {
            manager.cwd = PathBuf::from(&manager.header.cwd);
        }
        Ok(manager)
    }

    /// Continues the most recently modified session in `session_dir` (a `.jsonl` whose
    /// first line is a session header), or starts a new one.
    pub fn continue_recent(
        cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
    ) -> Result<Self> {
        let session_dir = session_dir.into();
        create_dir(&session_dir)?;
        let mut manager = Self::blank(cwd.into(), Some(session_dir.clone()), true);
        match find_most_recent(&session_dir) {
            Some(path) => manager.load_from(&path)?,
            None => {
                manager.new_session(None, None);
            }
        }
        Ok(manager)
    }

    /// Switches this manager to another session file (pi's `setSessionFile`): the working
    /// directory and session directory stay as they are.
    pub fn set_session_file(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.load_from(&absolute(path.as_ref()))
    }

    fn load_from(&mut self, path: &Path) -> Result<()> {
        self.warnings.clear();
        match load_file(path, LoadMode::Open, &mut self.ids)? {
            Opened::Loaded(loaded) => self.install(path.to_path_buf(), *loaded),
            Opened::Missing => {
                self.new_session(None, None);
                self.disk = Some(DiskState::pending(path.to_path_buf()));
            }
            Opened::Invalid { backup } => {
                // pi starts over in the same file right away; the old content (if any) is
                // in `backup`, never destroyed.
                self.new_session(None, None);
                let text = self.store.memory_base().unwrap_or_default();
                write_file_atomically(path, text)?;
                self.disk = Some(DiskState::loaded(path.to_path_buf(), &self.store));
                if let Some(backup) = backup {
                    self.warnings.push(LoadWarning::InvalidHeader {
                        path: path.to_path_buf(),
                        backup,
                    });
                }
            }
        }
        Ok(())
    }

    pub(crate) fn install(&mut self, path: PathBuf, loaded: Loaded) {
        let disk = DiskState::loaded(path, &loaded.store);
        self.install_text(loaded.header, loaded.store, loaded.index);
        self.disk = Some(disk);
        self.read_only = loaded.read_only;
        self.warnings.extend(loaded.warnings);
    }

    /// Makes `header`, `store` and `index` the current session, leaf at the last entry.
    pub(crate) fn install_text(&mut self, header: SessionHeader, store: LineStore, index: Index) {
        self.session_id = SessionId::from(header.id.clone());
        self.header = header;
        self.store = store;
        self.index = index;
        self.set_leaf(self.index.nodes.len().checked_sub(1).map(|i| i as u32));
        self.read_only = None;
    }

    /// Starts a new, empty session (with a fresh id unless one is given). For a persisted
    /// session the file name is chosen now and the file is written lazily. Returns the new
    /// file path.
    pub fn new_session(
        &mut self,
        id: Option<SessionId>,
        parent_session: Option<String>,
    ) -> Option<PathBuf> {
        let id = id.unwrap_or_else(|| self.ids.session_id());
        let timestamp = now_iso();
        let header = SessionHeader::new(
            id.to_string(),
            timestamp.clone(),
            self.cwd.to_string_lossy().into_owned(),
            parent_session,
        );
        let mut base = serde_json::to_string(&header)
            .unwrap_or_default()
            .into_bytes();
        base.push(b'\n');
        self.install_text(header, LineStore::new(base), Index::default());
        self.warnings.clear();
        if self.disk.is_some() {
            let dir = self.session_dir.clone().unwrap_or_default();
            let path = dir.join(session_file_name(&timestamp, &id));
            self.disk = Some(DiskState::pending(path));
        }
        self.session_file().map(Path::to_path_buf)
    }

    /// Uses reproducible ids from now on (tests and synthetic sessions only; real
    /// sessions use random ids like pi).
    pub fn use_seeded_ids(&mut self, seed: u64) {
        self.ids = IdSource::Seeded(seed);
    }

    // ----- facts about the session -----

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Where new sessions (`/new`, forks) are created; `None` in memory.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_dir.as_deref()
    }

    pub fn session_id(&self) -> &SessionId {
        &self.session_id
    }

    /// The session file (it may not exist yet); `None` in memory.
    pub fn session_file(&self) -> Option<&Path> {
        self.disk.as_ref().map(|d| d.path.as_path())
    }

    pub fn is_persisted(&self) -> bool {
        self.disk.is_some()
    }

    /// Why appends are refused, if they are.
    pub fn read_only_reason(&self) -> Option<&ReadOnlyReason> {
        self.read_only.as_ref()
    }

    /// What was odd about the file when it was opened (for the UI to show).
    pub fn load_warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// The name from the latest `session_info` entry (pi: empty names clear it).
    pub fn session_name(&self) -> Option<&str> {
        self.index.session_name.as_deref()
    }

    // ----- entries and the tree -----

    pub fn entry_count(&self) -> usize {
        self.index.nodes.len()
    }

    pub(crate) fn entry_at(&self, idx: u32) -> &SessionEntry {
        let node = &self.index.nodes[idx as usize];
        node.parsed.get_or_init(|| {
            let line = self.store.line(node.line());
            Box::new(parse_entry(&line, || self.index.id_of(idx)))
        })
    }

    pub(crate) fn head_at(&self, idx: u32) -> EntryHead {
        let node = &self.index.nodes[idx as usize];
        EntryHead {
            id: self.index.id_of(idx),
            parent: node.parent().map(|p| self.index.id_of(p)),
            kind: node.kind,
            timestamp_ms: node.ts_ms,
        }
    }

    pub fn leaf_id(&self) -> Option<&EntryId> {
        self.leaf_id.as_ref()
    }

    /// Moves the leaf to node `leaf` and keeps its id at hand.
    pub(crate) fn set_leaf(&mut self, leaf: Option<u32>) {
        self.leaf = leaf;
        self.leaf_id = leaf.map(|l| self.index.id_of(l));
    }

    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.map(|l| self.entry_at(l))
    }

    pub fn entry(&self, id: &EntryId) -> Option<&SessionEntry> {
        self.index.lookup(id.as_str()).map(|i| self.entry_at(i))
    }

    /// The cheap facts about an entry, without parsing it.
    pub fn head(&self, id: &EntryId) -> Option<EntryHead> {
        self.index.lookup(id.as_str()).map(|i| self.head_at(i))
    }

    /// Cheap facts about every entry, in file order.
    pub fn heads(&self) -> impl Iterator<Item = EntryHead> {
        (0..self.index.nodes.len() as u32).map(|i| self.head_at(i))
    }

    /// Every entry in file order (parses them all; prefer [`SessionManager::heads`] or
    /// [`SessionManager::path`] on large sessions).
    pub fn entries(&self) -> Vec<&SessionEntry> {
        (0..self.index.nodes.len() as u32)
            .map(|i| self.entry_at(i))
            .collect()
    }

    /// Copies of every entry in file order, parsed without being kept by the session (for
    /// exports, which need them all once).
    pub fn owned_entries(&self) -> Vec<SessionEntry> {
        let mut out = Vec::with_capacity(self.index.nodes.len());
        self.scan_entries_owned(|_| true, |e| out.push(e));
        out
    }

    /// Direct children of an entry, in file order.
    pub fn children(&self, id: &EntryId) -> Vec<&SessionEntry> {
        match self.index.lookup(id.as_str()) {
            Some(i) => self
                .index
                .children(i)
                .into_iter()
                .map(|c| self.entry_at(c))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The current label of an entry.
    pub fn label(&self, id: &EntryId) -> Option<&str> {
        self.index.label(id.as_str()).map(|l| l.label.as_str())
    }

    fn path_indexes(&self, from: Option<&EntryId>) -> Vec<u32> {
        let start = match from {
            Some(id) => self.index.lookup(id.as_str()),
            None => self.leaf,
        };
        start.map(|s| self.index.path_to(s)).unwrap_or_default()
    }

    /// Entries from the root down to `from` (default: the leaf), every type included
    /// (pi's `getBranch`). Empty for an unknown id.
    pub fn path(&self, from: Option<&EntryId>) -> Vec<&SessionEntry> {
        self.path_indexes(from)
            .into_iter()
            .map(|i| self.entry_at(i))
            .collect()
    }

    /// Walks from `from` (default: the leaf) towards the root, giving `visit` the cheap
    /// facts of each entry, until it breaks (its value is returned) or the root is passed.
    /// Nothing is parsed: a caller that needs an entry asks for it by id, so finding the
    /// latest compaction costs the distance to it, not the length of the session.
    pub fn walk_back<B>(
        &self,
        from: Option<&EntryId>,
        mut visit: impl FnMut(EntryHead) -> std::ops::ControlFlow<B>,
    ) -> Option<B> {
        let mut cur = match from {
            Some(id) => self.index.lookup(id.as_str()),
            None => self.leaf,
        };
        let mut steps = 0;
        // Parents are acyclic by construction; the bound only guards against a bug.
        while let Some(n) = cur {
            if steps > self.index.nodes.len() {
                break;
            }
            steps += 1;
            if let std::ops::ControlFlow::Break(b) = visit(self.head_at(n)) {
                return Some(b);
            }
            cur = self.index.nodes[n as usize].parent();
        }
        None
    }

    /// How many entries of the file are of a kind `wanted` accepts (nothing is parsed).
    pub fn count_entries(&self, wanted: impl Fn(EntryKind) -> bool) -> usize {
        self.index.nodes.iter().filter(|n| wanted(n.kind)).count()
    }

    /// Calls `visit` with every entry of a kind `wanted` accepts, in file order, parsing
    /// each one without keeping it: memory stays flat however large the file is (for
    /// totals over the whole file; the lines are read in one forward pass).
    pub fn scan_entries(
        &self,
        wanted: impl Fn(EntryKind) -> bool,
        mut visit: impl FnMut(&SessionEntry),
    ) {
        self.scan_entries_owned(wanted, |entry| visit(&entry));
    }

    /// [`SessionManager::scan_entries`] handing over each parsed entry.
    fn scan_entries_owned(
        &self,
        wanted: impl Fn(EntryKind) -> bool,
        mut visit: impl FnMut(SessionEntry),
    ) {
        let nodes: Vec<u32> = (0..self.index.nodes.len() as u32)
            .filter(|&i| wanted(self.index.nodes[i as usize].kind))
            .collect();
        let mut idxs = nodes.iter().copied();
        let lines = nodes.iter().map(|&i| self.index.nodes[i as usize].line());
        self.store.visit(lines, |line| {
            if let Some(idx) = idxs.next() {
                visit(parse_entry(line, || self.index.id_of(idx)));
            }
        });
    }

    /// Drops every parsed entry kept so far; they are parsed again from their lines when
    /// asked for. Called when a context is rebuilt, so entries parsed for an old one (or
    /// for a compaction over the whole path) do not stay in memory.
    pub fn forget_parsed(&mut self) {
        for node in &mut self.index.nodes {
            node.parsed = OnceBox::new();
        }
    }

    /// [`SessionManager::path`] from position `start` on (entries before it are not
    /// parsed).
    pub fn path_tail(&self, from: Option<&EntryId>, start: usize) -> Vec<&SessionEntry> {
        let path = self.path_indexes(from);
        path.get(start..)
            .unwrap_or_default()
            .iter()
            .map(|&i| self.entry_at(i))
            .collect()
    }

    /// The ids of [`SessionManager::path`], without parsing anything.
    pub fn path_ids(&self, from: Option<&EntryId>) -> Vec<EntryId> {
        self.path_indexes(from)
            .into_iter()
            .map(|i| self.index.id_of(i))
            .collect()
    }

    /// The whole tree: children oldest first, orphans as roots, labels resolved.
    pub fn tree(&self) -> SessionTree {
        self.index.tree()
    }

    /// Moves the leaf to an existing entry; the next append starts a branch there.
    pub fn branch(&mut self, id: &EntryId) -> Result<()> {
        let idx = self
            .index
            .lookup(id.as_str())
            .ok_or_else(|| SessionError::EntryNotFound(id.clone()))?;
        self.set_leaf(Some(idx));
        Ok(())
    }

    /// Moves the leaf before the first entry: the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.set_leaf(None);
    }

    /// What to send to the model from the current leaf.
    pub fn build_session_context(&self) -> SessionContext {
        match self.leaf {
            None => SessionContext::empty(),
            Some(leaf) => context_of_path(&ManagerPath {
                manager: self,
                path: self.index.path_to(leaf),
            }),
        }
    }
}

struct ManagerPath<'a> {
    manager: &'a SessionManager,
    path: Vec<u32>,
}

impl PathEntries for ManagerPath<'_> {
    fn len(&self) -> usize {
        self.path.len()
    }
    fn kind(&self, i: usize) -> EntryKind {
        self.manager.index.nodes[self.path[i] as usize].kind
    }
    fn has_id(&self, i: usize, id: &str) -> bool {
        self.manager.index.id_is(self.path[i], id)
    }
    fn entry(&self, i: usize) -> &SessionEntry {
        self.manager.entry_at(self.path[i])
    }
}

/// Parses an entry line; a line the index accepted but serde cannot read (rare: invalid
/// escapes, control characters) becomes an unknown entry holding only its id.
fn parse_entry(line: &[u8], id: impl FnOnce() -> EntryId) -> SessionEntry {
    serde_json::from_slice::<SessionEntry>(line)
        .or_else(|_| SessionEntry::from_json_line(&String::from_utf8_lossy(line)))
        .unwrap_or_else(|_| SessionEntry::Unknown(serde_json::json!({ "id": id().0 })))
}

/// The newest `.jsonl` in `session_dir` (by modification time) whose first line is a
/// session header (pi's `findMostRecentSession`).
pub fn find_most_recent(session_dir: &Path) -> Option<PathBuf> {
    let entries = fs::read_dir(session_dir).ok()?;
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| has_valid_header(p))
        .filter_map(|p| Some((fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, p)| p)
}
