//! Serializes changes to one file. Tool calls of one model response run in parallel, and
//! two `edit` calls on the same file would otherwise both read the old contents and the
//! second write would silently undo the first. Like pi's file mutation queue, callers for
//! the same file (by its real path) take turns in arrival order; different files proceed
//! in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

type Queues = HashMap<PathBuf, Arc<AsyncMutex<()>>>;

static QUEUES: LazyLock<Mutex<Queues>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Held while a file is being changed; the next caller for the same file proceeds when it
/// is dropped.
pub struct FileMutationGuard {
    key: PathBuf,
    guard: Option<OwnedMutexGuard<()>>,
}

/// Waits for earlier mutations of `path` to finish and returns the turn for this one.
pub async fn lock_file(path: &Path) -> FileMutationGuard {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let queue = {
        let mut queues = QUEUES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        queues.entry(key.clone()).or_default().clone()
    };
    // tokio's mutex is fair: waiters are served in the order they arrived.
    let guard = queue.lock_owned().await;
    FileMutationGuard {
        key,
        guard: Some(guard),
    }
}

impl Drop for FileMutationGuard {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut queues = QUEUES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Only the map still holds the queue: nobody is waiting, forget the file.
        if queues
            .get(&self.key)
            .is_some_and(|queue| Arc::strong_count(queue) == 1)
        {
            queues.remove(&self.key);
        }
    }
}

#[cfg(test)]
fn is_queued(path: &Path) -> bool {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    QUEUES
        .lock()
        .map(|q| q.contains_key(&key))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn same_file_mutations_take_turns_in_arrival_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "").unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..5 {
            let path = path.clone();
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let _turn = lock_file(&path).await;
                log.lock().unwrap().push(format!("start {i}"));
                tokio::time::sleep(Duration::from_millis(5)).await;
                log.lock().unwrap().push(format!("end {i}"));
            }));
            // Let each task queue up before the next one is spawned.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        for task in tasks {
            task.await.unwrap();
        }
        let log = log.lock().unwrap().clone();
        let expected: Vec<String> = (0..5)
            .flat_map(|i| [format!("start {i}"), format!("end {i}")])
            .collect();
        assert_eq!(log, expected);
        assert!(!is_queued(&path));
    }
}
