//! What identifies a file's content for the scans without reading it: its size,
//! modification time and inode (the walk and the watcher compare these).

/// Size, mtime (ns) and inode of a file.
pub fn stat_key(meta: &std::fs::Metadata) -> (u64, i128, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mtime = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
        (meta.len(), mtime, meta.ino())
    }
    #[cfg(not(unix))]
    {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        (meta.len(), mtime, 0)
    }
}
