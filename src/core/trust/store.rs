//! `~/.pi/agent/trust.json`: the project trust decisions saved for future processes, in
//! pi 1.6's format and with its lock, so pi and pi-rs share the file.
//!
//! The file maps a canonical folder path to `true` (trusted), `false` (not trusted) or
//! `null` (no decision, kept as written). The decision of the nearest folder that has one
//! applies to everything below it. Writes keep every other entry, sort the keys and use
//! 2-space JSON with a final newline, as pi writes them. Reads and writes hold pi's lock
//! (the `trust.json.lock` directory of proper-lockfile, stale after 10 s, ten tries 20 ms
//! apart), so two processes never interleave a read-modify-write.
//!
//! A file that does not parse is never overwritten: reading it is an error the caller
//! shows once, and pi-rs goes on as if no decision were saved.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::folder::{canonical_folder, folders_equal};

/// proper-lockfile's default `stale`: a lock older than this is left over by a crash.
const LOCK_STALE: Duration = Duration::from_secs(10);
/// pi's retries for a lock another process holds.
const LOCK_TRIES: u32 = 10;
const LOCK_RETRY_DELAY: Duration = Duration::from_millis(20);

/// What went wrong with trust.json.
#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    #[error("cannot read trust store {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "trust store {} is not valid JSON ({message}); expected an object mapping folder paths to true, false or null. Saved trust decisions are ignored until it is fixed",
        path.display()
    )]
    Syntax { path: PathBuf, message: String },
    #[error(
        "trust store {} is not a JSON object; expected an object mapping folder paths to true, false or null. Saved trust decisions are ignored until it is fixed",
        path.display()
    )]
    NotAnObject { path: PathBuf },
    #[error(
        "trust store {}: the value for {key} must be true, false or null. Saved trust decisions are ignored until it is fixed",
        path.display()
    )]
    BadValue { path: PathBuf, key: String },
    #[error("cannot lock trust store {}: {reason}", path.display())]
    Lock { path: PathBuf, reason: String },
    #[error("cannot write trust store {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A saved decision and the folder it was saved for (the folder itself or a parent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedDecision {
    pub path: PathBuf,
    pub trusted: bool,
}

/// One change to the file: `Some` saves a decision for `path`, `None` removes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustUpdate {
    pub path: PathBuf,
    pub decision: Option<bool>,
}

/// The trust.json of an agent directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

/// The file's entries in their order on disk; values are `true`, `false` or `null`.
type Entries = Vec<(String, Option<bool>)>;

impl TrustStore {
    pub fn new(agent_dir: &Path) -> TrustStore {
        TrustStore {
            path: agent_dir.join("trust.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The decision that applies to `cwd`: the one saved for it or its nearest parent.
    pub fn get(&self, cwd: &Path) -> Result<Option<bool>, TrustStoreError> {
        Ok(self.entry(cwd)?.map(|d| d.trusted))
    }

    /// [`TrustStore::get`] with the folder the decision was saved for.
    pub fn entry(&self, cwd: &Path) -> Result<Option<SavedDecision>, TrustStoreError> {
        let _lock = self.lock()?;
        let entries = self.read()?;
        Ok(nearest(&entries, &canonical_folder(cwd)))
    }

    /// Applies `updates` in order, keeping every other entry (paths are canonicalised;
    /// an entry naming the same folder is replaced).
    pub fn set_many(&self, updates: &[TrustUpdate]) -> Result<(), TrustStoreError> {
        let _lock = self.lock()?;
        let mut entries = self.read()?;
        for update in updates {
            let key = canonical_folder(&update.path);
            entries.retain(|(k, _)| !folders_equal(Path::new(k), &key));
            if let Some(decision) = update.decision {
                entries.push((key.display().to_string(), Some(decision)));
            }
        }
        self.write(entries)
    }

    /// Saves one decision for `cwd`.
    pub fn set(&self, cwd: &Path, trusted: bool) -> Result<(), TrustStoreError> {
        self.set_many(&[TrustUpdate {
            path: cwd.to_path_buf(),
            decision: Some(trusted),
        }])
    }

    fn lock(&self) -> Result<crate::ai::oauth::lock::AuthFileLock, TrustStoreError> {
        let failed = |reason: String| TrustStoreError::Lock {
            path: self.path.clone(),
            reason,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| failed(e.to_string()))?;
        }
        for attempt in 1..=LOCK_TRIES {
            match crate::ai::oauth::lock::try_lock(&self.path, LOCK_STALE) {
                Ok(Some(lock)) => return Ok(lock),
                Ok(None) if attempt < LOCK_TRIES => std::thread::sleep(LOCK_RETRY_DELAY),
                Ok(None) => break,
                Err(e) => return Err(failed(e.to_string())),
            }
        }
        Err(failed(format!(
            "another pi process holds {}; if none is running, delete that directory",
            crate::ai::oauth::lock::lock_dir_for(&self.path).display()
        )))
    }

    fn read(&self) -> Result<Entries, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(TrustStoreError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        parse(&self.path, text.strip_prefix('\u{feff}').unwrap_or(&text))
    }

    fn write(&self, mut entries: Entries) -> Result<(), TrustStoreError> {
        // JavaScript's default sort: by UTF-16 code units.
        entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
        let map: Map<String, Value> = entries
            .into_iter()
            .map(|(k, v)| (k, v.map_or(Value::Null, Value::Bool)))
            .collect();
        let mut text = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default();
        text.push('\n');
        let failed = |source| TrustStoreError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        std::fs::write(&self.path, text).map_err(failed)
    }
}

/// The entries of a trust.json's text (`path` names it in errors).
fn parse(path: &Path, text: &str) -> Result<Entries, TrustStoreError> {
    let value: Value = serde_json::from_str(text).map_err(|e| TrustStoreError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let Value::Object(map) = value else {
        return Err(TrustStoreError::NotAnObject {
            path: path.to_path_buf(),
        });
    };
    map.into_iter()
        .map(|(key, value)| match value {
            Value::Bool(b) => Ok((key, Some(b))),
            Value::Null => Ok((key, None)),
            _ => Err(TrustStoreError::BadValue {
                path: path.to_path_buf(),
                key: Value::from(key).to_string(),
            }),
        })
        .collect()
}

/// The decision for `folder` or its nearest parent; `null` entries are skipped.
fn nearest(entries: &Entries, folder: &Path) -> Option<SavedDecision> {
    folder.ancestors().find_map(|dir| {
        entries.iter().find_map(|(key, value)| {
            let trusted = (*value)?;
            folders_equal(Path::new(key), dir).then(|| SavedDecision {
                path: PathBuf::from(key),
                trusted,
            })
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn nearest_saved_decision_wins_and_null_entries_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = canonical_folder(dir.path());
        let store = TrustStore::new(&root.join("agent"));
        let deep = root.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(store.get(&deep).unwrap(), None);
        store.set(&root.join("a"), true).unwrap();
        assert_eq!(store.get(&deep).unwrap(), Some(true));
        store.set(&root.join("a/b"), false).unwrap();
        assert_eq!(
            store.entry(&deep).unwrap(),
            Some(SavedDecision {
                path: root.join("a/b"),
                trusted: false
            })
        );
        let text = format!(
            "{{\"{}\": null, \"{}\": true}}",
            root.join("a/b/c").display(),
            root.join("a").display()
        );
        std::fs::write(store.path(), text).unwrap();
        assert_eq!(store.get(&deep).unwrap(), Some(true));
    }

    #[test]
    fn writes_are_sorted_two_space_json_and_keep_null_entries() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        std::fs::write(store.path(), "\u{feff}{\"/z\": null, \"/m\": false}").unwrap();
        store
            .set_many(&[
                TrustUpdate {
                    path: PathBuf::from("/b"),
                    decision: Some(true),
                },
                TrustUpdate {
                    path: PathBuf::from("/m"),
                    decision: None,
                },
            ])
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            "{\n  \"/b\": true,\n  \"/z\": null\n}\n"
        );
        assert!(!crate::ai::oauth::lock::lock_dir_for(store.path()).exists());
    }

    #[test]
    fn a_malformed_file_is_named_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        std::fs::write(store.path(), "{\"/a\": 1}").unwrap();
        let error = store.get(Path::new("/a")).unwrap_err().to_string();
        assert!(error.contains("trust.json"), "{error}");
        assert!(
            error.contains("\"/a\" must be true, false or null"),
            "{error}"
        );
        assert!(store.set(Path::new("/b"), true).is_err());
        assert_eq!(
            std::fs::read_to_string(store.path()).unwrap(),
            "{\"/a\": 1}"
        );
        std::fs::write(store.path(), "[]").unwrap();
        assert!(matches!(
            store.get(Path::new("/a")),
            Err(TrustStoreError::NotAnObject { .. })
        ));
    }

    #[test]
    fn a_lock_held_by_a_live_process_fails_after_pis_retries() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path());
        let lock_dir = crate::ai::oauth::lock::lock_dir_for(store.path());
        std::fs::create_dir(&lock_dir).unwrap();
        assert!(matches!(
            store.get(Path::new("/a")),
            Err(TrustStoreError::Lock { .. })
        ));
        std::fs::remove_dir(&lock_dir).unwrap();
        assert_eq!(store.get(Path::new("/a")).unwrap(), None);
    }
}
