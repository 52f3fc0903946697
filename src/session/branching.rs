//! New session files made from existing sessions: `/fork` and `/clone`
//! ([`SessionManager::create_branched_session`]), `--fork`
//! ([`SessionManager::fork_from`]) and `/export file.jsonl`
//! ([`SessionManager::export_path_jsonl`]).
//!
//! Copied entries keep their ids and their exact text (unknown fields included). One
//! deliberate difference from pi 0.73.1: pi drops the `label` entries of the copied path
//! and re-creates them at the end, but leaves the entry that followed a label pointing at
//! the dropped label, which makes it an orphan and silently cuts the forked conversation
//! short. Here such an entry is re-attached to the entry before the label, so the new file
//! has the same conversation as the path it came from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::session::clock::now_iso;
use crate::session::entry::{EntryId, SessionHeader};
use crate::session::error::{IoOp, Result, SessionError};
use crate::session::ids::{IdSource, SessionId};
use crate::session::load::{LoadMode, Opened, load_file};
use crate::session::manager::SessionManager;
use crate::session::paths::session_file_name;
use crate::session::store::{DiskState, LineStore, write_file_atomically};
use crate::session::tree::{EntryKind, Index};

/// A re-created label entry, in pi's field order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LabelLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a EntryId,
    parent_id: Option<&'a EntryId>,
    timestamp: &'a str,
    target_id: &'a EntryId,
    label: &'a str,
}

fn push_line(out: &mut Vec<u8>, line: &[u8]) {
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// Rewrites the `parentId` of an entry line, keeping every other byte of meaning.
fn reparent(line: &[u8], parent: Option<&EntryId>) -> Vec<u8> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(mut map)) => {
            map.insert(
                "parentId".into(),
                parent.map_or(Value::Null, |p| Value::from(p.as_str())),
            );
            serde_json::to_vec(&map).unwrap_or_else(|_| line.to_vec())
        }
        _ => line.to_vec(),
    }
}

fn new_header(
    ids: &mut IdSource,
    cwd: &Path,
    parent_session: Option<String>,
    id: Option<SessionId>,
) -> (SessionHeader, String) {
    let id = id.unwrap_or_else(|| ids.session_id());
    let timestamp = now_iso();
    let header = SessionHeader::new(
        id.to_string(),
        timestamp,
        cwd.to_string_lossy().into_owned(),
        parent_session,
    );
    let line = serde_json::to_string(&header).unwrap_or_default();
    (header, line)
}

impl SessionManager {
    /// `/export file.jsonl` (pi's `exportToJsonl`): the current path as a session file of
    /// its own, written atomically to `out` — a new header (this session's id, the current
    /// time, the cwd), then the path's entries from the root to the leaf, each one's
    /// `parentId` re-chained to the entry before it so the copy is a straight line.
    pub fn export_path_jsonl(&self, out: &Path) -> Result<()> {
        let header = SessionHeader::new(
            self.session_id().as_str().to_string(),
            now_iso(),
            self.cwd().display().to_string(),
            None,
        );
        let mut text = serde_json::to_string(&header).unwrap_or_default();
        text.push('\n');
        let mut previous: Option<String> = None;
        for entry in self.path(None) {
            let mut value = serde_json::to_value(entry).unwrap_or(Value::Null);
            if let Value::Object(fields) = &mut value {
                fields.insert(
                    "parentId".into(),
                    previous.clone().map_or(Value::Null, Value::String),
                );
            }
            previous = Some(entry.id().to_string());
            text.push_str(&value.to_string());
            text.push('\n');
        }
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| SessionError::io(IoOp::Write, dir, e))?;
        }
        write_file_atomically(out, text.as_bytes())
    }

    /// Makes a new session holding only the path root → `leaf_id` (same entry ids, labels
    /// of that path re-created at the end), with `parentSession` = this session's file, and
    /// switches to it. The new file is written now if it holds an assistant message, else
    /// with the first one (as pi). Returns the new file, `None` in memory.
    pub fn create_branched_session(&mut self, leaf_id: &EntryId) -> Result<Option<PathBuf>> {
        let leaf = self
            .index
            .lookup(leaf_id.as_str())
            .ok_or_else(|| SessionError::EntryNotFound(leaf_id.clone()))?;
        let path = self.index.path_to(leaf);
        let parent_session = self
            .session_file()
            .map(|p| p.to_string_lossy().into_owned());
        let (header, header_line) = new_header(&mut self.ids, &self.cwd, parent_session, None);

        let mut text = Vec::new();
        push_line(&mut text, header_line.as_bytes());
        let mut kept_ids: HashSet<String> = HashSet::new();
        let mut last_kept: Option<EntryId> = None;
        for &idx in &path {
            let node = &self.index.nodes[idx as usize];
            if node.kind == EntryKind::Label {
                continue;
            }
            let line = self.store.line(node.line());
            let line = line.as_ref();
            let parent_dropped = node
                .parent()
                .is_some_and(|p| self.index.nodes[p as usize].kind == EntryKind::Label);
            if parent_dropped {
                push_line(&mut text, &reparent(line, last_kept.as_ref()));
            } else {
                push_line(&mut text, line);
            }
            let id = self.index.id_of(idx);
            kept_ids.insert(id.0.clone());
            last_kept = Some(id);
        }
        let mut parent = last_kept;
        for (target, state) in self.index.labels_in_order() {
            if !kept_ids.contains(target.as_str()) {
                continue;
            }
            let id = self.ids.entry_id(|c| kept_ids.contains(c));
            kept_ids.insert(id.0.clone());
            let line = LabelLine {
                kind: "label",
                id: &id,
                parent_id: parent.as_ref(),
                timestamp: &state.timestamp,
                target_id: target,
                label: &state.label,
            };
            push_line(
                &mut text,
                serde_json::to_string(&line).unwrap_or_default().as_bytes(),
            );
            parent = Some(id);
        }

        let header_len = header_line.len() + 1;
        let (index, _) = Index::build(&text, header_len, 2);
        let new_file = match &self.disk {
            Some(_) => {
                let dir = self.session_dir.clone().unwrap_or_default();
                Some(dir.join(session_file_name(
                    &header.timestamp,
                    &SessionId::from(header.id.clone()),
                )))
            }
            None => None,
        };
        let store = LineStore::new(text);
        let disk = match &new_file {
            Some(file) if index.has_conversation => {
                write_file_atomically(file, store.memory_base().unwrap_or_default())?;
                Some(DiskState::loaded(file.clone(), &store))
            }
            Some(file) => Some(DiskState::pending(file.clone())),
            None => None,
        };
        self.install_text(header, store, index);
        self.disk = disk;
        self.warnings.clear();
        Ok(new_file)
    }

    /// Copies every entry of the session at `source` into a new session for `target_cwd`
    /// in `session_dir` (header `parentSession` = `source`), writes it, and opens it. An
    /// older-format source is upgraded in the copy; the source file is never changed.
    pub fn fork_from(
        source: impl AsRef<Path>,
        target_cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
    ) -> Result<Self> {
        Self::fork_from_with_id(source, target_cwd, session_dir, None)
    }

    /// [`SessionManager::fork_from`] with the new session's id given (`--fork` with
    /// `--session-id`) instead of a fresh one.
    pub fn fork_from_with_id(
        source: impl AsRef<Path>,
        target_cwd: impl Into<PathBuf>,
        session_dir: impl Into<PathBuf>,
        id: Option<SessionId>,
    ) -> Result<Self> {
        let source = source.as_ref();
        let target_cwd = target_cwd.into();
        let session_dir = session_dir.into();
        let mut ids = IdSource::Random;
        let loaded = match load_file(source, LoadMode::ReadOnly, &mut ids)? {
            Opened::Loaded(loaded) => loaded,
            Opened::Missing | Opened::Invalid { .. } => {
                return Err(SessionError::InvalidForkSource(source.to_path_buf()));
            }
        };
        std::fs::create_dir_all(&session_dir)
            .map_err(|e| SessionError::io(IoOp::CreateDir, &session_dir, e))?;
        let (header, header_line) = new_header(
            &mut ids,
            &target_cwd,
            Some(source.to_string_lossy().into_owned()),
            id,
        );
        let mut text = Vec::with_capacity(loaded.store.base_len() + header_line.len() + 1);
        push_line(&mut text, header_line.as_bytes());
        loaded
            .store
            .visit(loaded.index.nodes.iter().map(|n| n.line()), |line| {
                push_line(&mut text, line)
            });
        let file = session_dir.join(session_file_name(
            &header.timestamp,
            &SessionId::from(header.id.clone()),
        ));
        write_file_atomically(&file, &text)?;
        SessionManager::open_with_cwd(&file, Some(&session_dir), Some(&target_cwd))
    }
}
