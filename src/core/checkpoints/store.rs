//! The content-addressed blob store of one project: `<root>/blobs/<aa>/<sha256>`, plus
//! the index of the last working-tree scan and the record of the last restore.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

/// Hex sha256 of `bytes`.
pub fn hash_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Hash of a file's content now; `None` when it does not exist or cannot be read.
pub fn read_hash(file: &Path) -> Option<String> {
    std::fs::read(file).ok().map(|b| hash_bytes(&b))
}

/// Writes `bytes` to `file` through a temporary file in the same directory and a rename,
/// creating missing parent directories.
pub fn write_atomic(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{name}.pi-tmp-{}-{nanos}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if let Ok(meta) = std::fs::metadata(file) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// What [`Store::prune`] removed and kept (blobs only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    pub removed_files: u64,
    pub freed_bytes: u64,
    pub kept_files: u64,
    pub kept_bytes: u64,
}

/// One project's checkpoint directory.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store of the project at `cwd` under `<agent_dir>/checkpoints/`.
    pub fn for_project(agent_dir: &Path, cwd: &Path) -> Store {
        let canonical = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let hash = hash_bytes(canonical.to_string_lossy().as_bytes());
        Store {
            root: agent_dir.join("checkpoints").join(&hash[..16]),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn blob_path(&self, hash: &str) -> PathBuf {
        let prefix = hash.get(..2).unwrap_or("00");
        self.root.join("blobs").join(prefix).join(hash)
    }

    /// Stores `bytes` (once per content) and returns its hash.
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let hash = hash_bytes(bytes);
        let path = self.blob_path(&hash);
        if path.exists() {
            // Used again now: a prune's grace period starts over.
            if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                let _ = f.set_modified(SystemTime::now());
            }
        } else {
            write_atomic(&path, bytes)?;
        }
        Ok(hash)
    }

    /// The content stored under `hash`.
    pub fn get(&self, hash: &str) -> std::io::Result<Vec<u8>> {
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not a checkpoint hash: {hash}"),
            ));
        }
        std::fs::read(self.blob_path(hash))
    }

    /// Where the scan index is kept.
    pub fn index_path(&self) -> PathBuf {
        self.root.join("index.tsv")
    }

    /// Where the files a restore overwrote are recorded (for `/undo-restore`).
    pub fn last_restore_path(&self) -> PathBuf {
        self.root.join("last-restore.json")
    }

    /// Removes every blob that is not in `keep` and was not written or reused within
    /// `grace` (a tool call in flight in another process may not have recorded it yet).
    /// See [`super::prune`], which adds what the store's own records need.
    pub fn prune(&self, keep: &HashSet<String>, grace: Duration) -> std::io::Result<PruneReport> {
        let cutoff = SystemTime::now().checked_sub(grace);
        let mut report = PruneReport::default();
        let blobs = self.root.join("blobs");
        let prefixes = match std::fs::read_dir(&blobs) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(report),
            Err(e) => return Err(e),
        };
        for prefix in prefixes.flatten() {
            let Ok(read) = std::fs::read_dir(prefix.path()) else {
                continue;
            };
            for blob in read.flatten() {
                let Ok(meta) = blob.metadata() else {
                    continue;
                };
                let name = blob.file_name().to_string_lossy().into_owned();
                let recent = match (meta.modified(), cutoff) {
                    (Ok(modified), Some(cutoff)) => modified > cutoff,
                    _ => true,
                };
                if keep.contains(&name) || recent || !meta.is_file() {
                    report.kept_files += 1;
                    report.kept_bytes += meta.len();
                    continue;
                }
                std::fs::remove_file(blob.path())?;
                report.removed_files += 1;
                report.freed_bytes += meta.len();
            }
            // Only removes the directory when it is empty.
            let _ = std::fs::remove_dir(prefix.path());
        }
        Ok(report)
    }

    /// Bytes and number of files under the store.
    pub fn disk_usage(&self) -> (u64, u64) {
        let mut bytes = 0;
        let mut files = 0;
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(read) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in read.flatten() {
                match entry.metadata() {
                    Ok(m) if m.is_dir() => stack.push(entry.path()),
                    Ok(m) => {
                        bytes += m.len();
                        files += 1;
                    }
                    Err(_) => {}
                }
            }
        }
        (bytes, files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_hashes_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::for_project(dir.path(), dir.path());
        let h = store.put(b"hello").unwrap();
        assert_eq!(store.get(&h).unwrap(), b"hello");
        assert!(store.get("../../etc/passwd").is_err());
        assert_eq!(store.disk_usage().1, 1);
    }
}
