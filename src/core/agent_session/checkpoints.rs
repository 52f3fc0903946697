//! File checkpoints of the agent's tool calls (see `crate::core::checkpoints` and
//! `docs/checkpoints.md`): recording them as `custom` entries after tool results,
//! restoring the files of another entry on navigation, undoing the last restore, and
//! reporting disk use.

use serde_json::Value;

use super::{AgentSession, lock};
use crate::core::checkpoints::{
    self, CHECKPOINT_TYPE, Checkpoint, Checkpointer, FileState, Recorded, RestorePlan,
    RestoreReport, Store,
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

impl AgentSession {
    fn checkpointer(&self) -> std::sync::MutexGuard<'_, Option<Checkpointer>> {
        let mut guard = lock(&self.inner.checkpoints);
        if guard.is_none() {
            *guard = Some(Checkpointer::new(
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

    /// A run begins: the user may have edited files since the last scan.
    pub(crate) fn checkpoint_run_started(&self) {
        if let Some(c) = lock(&self.inner.checkpoints).as_mut() {
            c.mark_stale();
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

    /// Size of the project's checkpoint store: (bytes, files).
    pub fn checkpoint_disk_usage(&self) -> (u64, u64) {
        self.checkpoint_store().disk_usage()
    }
}
