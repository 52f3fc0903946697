//! The project trust decisions of one process (pi's cache by folder) and where they are
//! saved: what [`SessionFactory`](super::SessionFactory) asks before it reads a folder's
//! resources. Making a decision that needs extensions or the user is `trust.rs`'s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::sync::mpsc;

use crate::core::trust::{ProjectTrust, TrustStore, TrustUpdate, has_protected_resources};
use crate::extensions::UiRequest;

/// Where the terminal UI takes the dialogs of a trust decision: the built-in prompt and
/// the extensions' `project_trust` dialogs. Without one, nobody is asked.
pub type TrustPrompter = mpsc::UnboundedSender<UiRequest>;

/// The trust decisions of one process and the store they are saved in.
#[derive(Debug)]
pub(super) struct TrustGate {
    /// `--approve` (`true`) / `--no-approve` (`false`).
    flag: Option<bool>,
    store: TrustStore,
    /// Decisions made in this process, by canonical folder.
    decided: Mutex<HashMap<PathBuf, ProjectTrust>>,
    /// trust.json problems not shown yet, and every one shown (each is shown once).
    problems: Mutex<(Vec<String>, Vec<String>)>,
}

impl TrustGate {
    pub fn new(flag: Option<bool>, agent_dir: &Path) -> TrustGate {
        TrustGate {
            flag,
            store: TrustStore::new(agent_dir),
            decided: Mutex::new(HashMap::new()),
            problems: Mutex::new((Vec::new(), Vec::new())),
        }
    }

    /// The decision for `cwd` when no one needs to be asked: the flag, a decision made
    /// earlier in this process, or — for a folder without protected resources — the
    /// saved one, else trusted. `None`: extensions, trust.json, `defaultProjectTrust`
    /// or the user decide ([`SessionFactory::decide_trust`]).
    pub fn known(&self, cwd: &Path) -> Option<ProjectTrust> {
        if let Some(flag) = self.flag {
            return Some(ProjectTrust::from_bool(flag));
        }
        let key = crate::core::trust::canonical_folder(cwd);
        if let Some(decided) = lock(&self.decided).get(&key) {
            return Some(*decided);
        }
        if has_protected_resources(cwd) {
            return None;
        }
        Some(ProjectTrust::from_bool(self.saved(cwd).unwrap_or(true)))
    }

    /// The saved decision for `cwd` (a store that cannot be read has none).
    pub fn saved(&self, cwd: &Path) -> Option<bool> {
        self.store.get(cwd).unwrap_or_else(|e| {
            self.problem(e.to_string());
            None
        })
    }

    pub fn save(&self, updates: &[TrustUpdate]) {
        if updates.is_empty() {
            return;
        }
        if let Err(e) = self.store.set_many(updates) {
            self.problem(format!("the trust decision was not saved: {e}"));
        }
    }

    pub fn settle(&self, cwd: &Path, trust: ProjectTrust) {
        let key = crate::core::trust::canonical_folder(cwd);
        lock(&self.decided).insert(key, trust);
    }

    fn problem(&self, message: String) {
        let mut problems = lock(&self.problems);
        if !problems.1.contains(&message) {
            problems.1.push(message.clone());
            problems.0.push(message);
        }
    }

    /// The trust.json problems found since the last call, to show as warnings.
    pub fn take_problems(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.problems).0)
    }

    pub fn store(&self) -> &TrustStore {
        &self.store
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
