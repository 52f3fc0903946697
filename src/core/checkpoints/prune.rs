//! Pruning the blob store: removing contents nothing needs any more, keeping what the
//! caller names (the sessions' checkpoints) and what the store's own records need (the
//! scan index and the record of the last restore).

use std::collections::HashSet;

use super::scan::Index;
use super::{FileState, PruneReport, Store};

/// Every hash the store's own records still need: the scan index and the record of the
/// last restore.
fn store_references(store: &Store) -> HashSet<String> {
    let mut keep: HashSet<String> = Index::load(&store.index_path())
        .files
        .into_values()
        .map(|e| e.hash)
        .collect();
    if let Ok(text) = std::fs::read_to_string(store.last_restore_path())
        && let Ok(saved) = serde_json::from_str::<FileState>(&text)
    {
        keep.extend(saved.into_values().flatten());
    }
    keep
}

/// Removes every blob of `store` that is neither in `keep` nor needed by the scan index
/// or the last restore record, and was not written or reused within `grace`.
pub fn prune(
    store: &Store,
    keep: &HashSet<String>,
    grace: std::time::Duration,
) -> std::io::Result<PruneReport> {
    let mut all = store_references(store);
    all.extend(keep.iter().cloned());
    store.prune(&all, grace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::checkpoints::{IndexEntry, store};
    use std::time::{Duration, SystemTime};

    fn age(store: &Store, hash: &str, secs: u64) {
        let f = std::fs::File::options()
            .append(true)
            .open(store.root().join("blobs").join(&hash[..2]).join(hash))
            .unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }

    #[test]
    fn prune_removes_only_old_unreferenced_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_project(dir.path(), dir.path());
        let [kept, indexed, restored, young, old, reused] =
            ["kept", "indexed", "restored", "young", "old", "reused"]
                .map(|s| store.put(s.as_bytes()).unwrap());
        for h in [&kept, &indexed, &restored, &old, &reused] {
            age(&store, h, 7200);
        }
        age(&store, &young, 60);
        // Storing the same content again restarts its grace period.
        store.put(b"reused").unwrap();
        let mut index = Index::default();
        index.files.insert(
            "f".into(),
            IndexEntry {
                size: 1,
                mtime_ns: 1,
                ino: 1,
                hash: indexed.clone(),
            },
        );
        index.save(&store.index_path()).unwrap();
        let saved: FileState = [
            ("r".to_string(), Some(restored.clone())),
            ("x".into(), None),
        ]
        .into();
        store::write_atomic(
            &store.last_restore_path(),
            serde_json::to_string(&saved).unwrap().as_bytes(),
        )
        .unwrap();

        let keep: HashSet<String> = [kept.clone()].into();
        let report = prune(&store, &keep, Duration::from_secs(3600)).unwrap();
        assert_eq!(report.removed_files, 1);
        assert_eq!(report.freed_bytes, 3);
        assert_eq!(report.kept_files, 5);
        assert!(store.get(&old).is_err());
        for h in [&kept, &indexed, &restored, &young, &reused] {
            assert!(store.get(h).is_ok(), "{h}");
        }
        // No grace and nothing kept by the caller: only the store's own records stay.
        let report = prune(&store, &HashSet::new(), Duration::ZERO).unwrap();
        assert_eq!(report.removed_files, 3);
        assert_eq!(report.kept_files, 2);
    }
}
