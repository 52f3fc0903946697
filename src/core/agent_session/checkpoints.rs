//! File checkpoints of the agent's tool calls (see `crate::core::checkpoints` and
//! `docs/checkpoints.md`): recording them as `custom` entries after tool results,
//! restoring the files of another entry on navigation, undoing the last restore, and
//! reporting disk use.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{AgentSession, lock};
use crate::core::checkpoints::{
    self, CHECKPOINT_TYPE, Checkpoint, Checkpointer, FileDiff, FileState, PruneReport, Recorded,
    RestorePlan, RestoreReport, Side, Store,
};
use crate::session::SessionManager;
use crate::session::entry::{EntryId, SessionEntry};
use crate::session::tree::EntryKind;

/// Every checkpoint of the session, in file order.
pub(crate) fn recorded(session: &SessionManager) -> Vec<Recorded> {
    let mut out = Vec::new();
    session.scan_entries(
        |kind| kind == EntryKind::Custom,
        |entry| {
            if let SessionEntry::Custom(c) = entry
                && c.custom_type == CHECKPOINT_TYPE
                && let Some(data) = &c.data
                && let Ok(checkpoint) = serde_json::from_value::<Checkpoint>(data.clone())
            {
                out.push(Recorded {
                    entry_id: c.id.0.clone(),
                    parent_id: c.parent_id.as_ref().map(|p| p.0.clone()),
                    checkpoint,
                });
            }
        },
    );
    out
}

fn state_for(session: &SessionManager, all: &[Recorded], leaf: Option<&EntryId>) -> FileState {
    let path: Vec<String> = match leaf {
        Some(id) => session
            .path_ids(Some(id))
            .into_iter()
            .map(|i| i.0)
            .collect(),
        None => Vec::new(),
    };
    checkpoints::state_at(all, &path)
}

/// Blobs written or reused this recently are never pruned: another process's tool call
/// in flight may not have recorded them in its session yet.
pub const PRUNE_GRACE: Duration = Duration::from_secs(3600);

/// Every content hash a checkpoint entry of `text` (a session file) refers to.
fn hashes_in_session_text(text: &str, out: &mut HashSet<String>) {
    for line in text.lines().filter(|l| l.contains(CHECKPOINT_TYPE)) {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if entry.get("customType").and_then(Value::as_str) != Some(CHECKPOINT_TYPE) {
            continue;
        }
        let Some(changes) = entry.pointer("/data/changes").and_then(Value::as_array) else {
            continue;
        };
        for change in changes {
            for side in ["before", "after"] {
                if let Some(hash) = change.get(side).and_then(Value::as_str) {
                    out.insert(hash.to_string());
                }
            }
        }
    }
}

/// Every `.jsonl` file under `dir`, at any depth.
fn session_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => session_files(&path, out),
            Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "jsonl") => {
                out.push(path)
            }
            _ => {}
        }
    }
}

/// The hashes the session files under `dirs` refer to, leaving out sessions last written
/// before `expired_before`.
fn referenced_by_sessions(dirs: &[PathBuf], expired_before: Option<SystemTime>) -> HashSet<String> {
    let mut files = Vec::new();
    for dir in dirs {
        session_files(dir, &mut files);
    }
    files.sort();
    files.dedup();
    let mut out = HashSet::new();
    for file in files {
        if let Some(cutoff) = expired_before
            && std::fs::metadata(&file)
                .and_then(|m| m.modified())
                .is_ok_and(|m| m < cutoff)
        {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(&file) {
            hashes_in_session_text(&text, &mut out);
        }
    }
    out
}

impl AgentSession {
    fn checkpointer(&self) -> std::sync::MutexGuard<'_, Option<Checkpointer>> {
        let mut guard = lock(&self.inner.checkpoints);
        if guard.is_none() {
            *guard = Some(Checkpointer::deferred(
                &self.inner.paths.agent_dir,
                &self.inner.cwd,
            ));
        }
        guard
    }

    fn checkpoints_enabled(&self) -> bool {
        self.state().settings.checkpoints_enabled()
    }

    /// The project's checkpoint store.
    pub fn checkpoint_store(&self) -> Store {
        Store::for_project(&self.inner.paths.agent_dir, &self.inner.cwd)
    }

    /// A run begins: the user may have edited files since the last scan. The first run
    /// creates the checkpointer; its watcher waits for the first `bash` call.
    pub(crate) fn checkpoint_run_started(&self) {
        if !self.checkpoints_enabled() {
            return;
        }
        if let Some(c) = self.checkpointer().as_mut() {
            c.mark_stale();
        }
    }

    /// The model began a `bash` call: the watches can start setting up before it runs.
    pub(crate) fn checkpoint_bash_coming(&self) {
        if !self.checkpoints_enabled() {
            return;
        }
        if let Some(c) = self.checkpointer().as_mut() {
            c.bash_coming(&self.inner.cwd);
        }
    }

    /// A tool call starts: remember what its checkpoint compares against.
    pub(crate) fn checkpoint_tool_started(&self, tool_call_id: &str, tool: &str, args: &Value) {
        if !matches!(tool, "write" | "edit" | "bash") || !self.checkpoints_enabled() {
            return;
        }
        if let Some(c) = self.checkpointer().as_mut() {
            c.start(&self.inner.cwd, tool_call_id, tool, args);
        }
    }

    /// A tool result was written: append its checkpoint entry if it changed files.
    pub(crate) fn checkpoint_tool_finished(&self, tool_call_id: &str, tool: &str) {
        let checkpoint = {
            let mut guard = lock(&self.inner.checkpoints);
            match guard.as_mut() {
                Some(c) => c.finish(&self.inner.cwd, tool_call_id, tool),
                None => None,
            }
        };
        let Some(checkpoint) = checkpoint else {
            return;
        };
        let Ok(data) = serde_json::to_value(&checkpoint) else {
            return;
        };
        let result = self
            .state()
            .session
            .append_custom_entry(CHECKPOINT_TYPE, Some(data));
        if let Err(e) = result {
            self.emit(crate::core::events::SessionEvent::Notice {
                message: format!("The checkpoint could not be recorded: {e}"),
            });
        }
    }

    /// Ids of entries whose tool call changed files (the tool result a checkpoint hangs
    /// off, and the checkpoint entry itself).
    pub fn entries_with_checkpoints(&self) -> std::collections::HashSet<String> {
        let st = self.state();
        recorded(&st.session)
            .into_iter()
            .flat_map(|r| [Some(r.entry_id), r.parent_id])
            .flatten()
            .collect()
    }

    /// What restoring files would do when navigating to `target` (the leaf becomes the
    /// parent of a user message, the entry itself otherwise).
    pub fn restore_plan_for_target(&self, target: &str) -> RestorePlan {
        if !self.checkpoints_enabled() {
            return RestorePlan::default();
        }
        let leaf = {
            let st = self.state();
            match st.session.entry(&EntryId::from(target)) {
                Some(entry) => super::navigation::leaf_after_navigation(entry).0,
                None => return RestorePlan::default(),
            }
        };
        self.restore_plan(leaf.as_ref())
    }

    /// What restoring the files of `leaf` (the leaf after a navigation) would do.
    pub fn restore_plan(&self, leaf: Option<&EntryId>) -> RestorePlan {
        let st = self.state();
        let all = recorded(&st.session);
        if all.is_empty() {
            return RestorePlan::default();
        }
        let current = state_for(&st.session, &all, st.session.leaf_id());
        let target = state_for(&st.session, &all, leaf);
        drop(st);
        checkpoints::plan_restore(&self.inner.cwd, &current, &target)
    }

    /// Carries out `plan`, first recording the current content of every file it touches
    /// so [`AgentSession::undo_restore`] can put it back.
    pub fn apply_restore(&self, plan: &RestorePlan) -> Result<RestoreReport, String> {
        if plan.writes.is_empty() {
            return Ok(RestoreReport::default());
        }
        let store = self.checkpoint_store();
        let paths: Vec<String> = plan.writes.iter().map(|(p, _)| p.clone()).collect();
        let saved = checkpoints::capture(&store, &self.inner.cwd, &paths)
            .map_err(|e| format!("Could not save the current files before restoring: {e}"))?;
        let text = serde_json::to_string(&saved).map_err(|e| e.to_string())?;
        checkpoints::store::write_atomic(&store.last_restore_path(), text.as_bytes())
            .map_err(|e| format!("Could not save the current files before restoring: {e}"))?;
        checkpoints::apply(&store, &self.inner.cwd, &plan.writes)
            .map_err(|e| format!("Restoring files failed: {e}"))?;
        if let Some(c) = lock(&self.inner.checkpoints).as_mut() {
            c.mark_stale();
        }
        Ok(RestoreReport {
            restored_files: paths,
            overwritten_user_changes: plan.conflicts.clone(),
        })
    }

    /// Puts back the files the last restore overwrote (`/undo-restore`). Undoing twice
    /// redoes the restore.
    pub fn undo_restore(&self) -> Result<Vec<String>, String> {
        let store = self.checkpoint_store();
        let text = std::fs::read_to_string(store.last_restore_path())
            .map_err(|_| "There is no restore to undo".to_string())?;
        let saved: FileState = serde_json::from_str(&text)
            .map_err(|e| format!("The record of the last restore is damaged: {e}"))?;
        let plan = RestorePlan {
            writes: saved.into_iter().collect(),
            conflicts: Vec::new(),
        };
        Ok(self.apply_restore(&plan)?.restored_files)
    }

    /// The files that differ between `from` (`None`: the working tree) and `to`, as the
    /// agent left them at those entries (`docs/checkpoints.md#diff`).
    pub fn checkpoint_diff(&self, from: Option<&str>, to: &str) -> Result<Vec<FileDiff>, String> {
        let (all, from_state, to_state) = {
            let st = self.state();
            let mut ids = Vec::new();
            for id in from.into_iter().chain([to]) {
                let id = EntryId::from(id);
                if st.session.entry(&id).is_none() {
                    return Err(format!("Entry {id} not found"));
                }
                ids.push(id);
            }
            let all = recorded(&st.session);
            let states: Vec<FileState> = ids
                .iter()
                .map(|id| state_for(&st.session, &all, Some(id)))
                .collect();
            let mut states = states.into_iter();
            let first = states.next().unwrap_or_default();
            match states.next() {
                Some(second) => (all, Some(first), second),
                None => (all, None, first),
            }
        };
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let from_side = match &from_state {
            Some(state) => Side::Entry(state),
            None => Side::WorkingTree,
        };
        Ok(checkpoints::diff::diff_states(
            &self.checkpoint_store(),
            &self.inner.cwd,
            &from_side,
            &Side::Entry(&to_state),
        ))
    }

    /// Removes checkpoint contents no session still refers to (`/checkpoints prune`):
    /// the session files under `<agent_dir>/sessions/` and this session's directory are
    /// read, except those older than `checkpoints.keepDays`; this session always counts.
    pub fn prune_checkpoints(&self) -> Result<PruneReport, String> {
        let (mut keep, dirs) = {
            let st = self.state();
            let keep: HashSet<String> = recorded(&st.session)
                .into_iter()
                .flat_map(|r| r.checkpoint.changes)
                .flat_map(|c| [c.before, c.after])
                .flatten()
                .collect();
            let mut dirs = vec![self.inner.paths.agent_dir.join("sessions")];
            dirs.extend(st.session.session_dir().map(Path::to_path_buf));
            dirs.extend(
                st.session
                    .session_file()
                    .and_then(Path::parent)
                    .map(Path::to_path_buf),
            );
            (keep, dirs)
        };
        let expired_before = self.settings().checkpoints_keep_days().and_then(|d| {
            SystemTime::now().checked_sub(Duration::from_secs(d.saturating_mul(86_400)))
        });
        keep.extend(referenced_by_sessions(&dirs, expired_before));
        checkpoints::prune(&self.checkpoint_store(), &keep, PRUNE_GRACE)
            .map_err(|e| format!("Pruning checkpoints failed: {e}"))
    }

    /// Size of the project's checkpoint store: (bytes, files).
    pub fn checkpoint_disk_usage(&self) -> (u64, u64) {
        self.checkpoint_store().disk_usage()
    }
}
