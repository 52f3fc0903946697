//! `<agent_dir>/extensions.log`: what extensions write to stderr, plus the host's notes on
//! them (started, exited, errors). Extensions must never write to the user's screen, so
//! their stderr goes here, each line prefixed with the time and the extension's name.
//!
//! The file is kept small: when a write would take it past the size limit, it is renamed
//! to `extensions.log.1` (replacing the previous one) and a new file is started. Logging
//! never fails loudly: if the file cannot be written, lines are dropped.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Default size at which the log is rotated.
pub const DEFAULT_LOG_LIMIT: u64 = 1024 * 1024;

/// The shared log file of all extensions.
#[derive(Debug)]
pub struct ExtensionLog {
    path: PathBuf,
    limit: u64,
    state: Mutex<Option<(File, u64)>>,
}

impl ExtensionLog {
    pub fn new(path: PathBuf, limit: u64) -> ExtensionLog {
        ExtensionLog {
            path,
            limit: limit.max(1024),
            state: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line for `source` (an extension name, or `host`).
    pub fn line(&self, source: &str, text: &str) {
        let stamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        let text = text.trim_end_matches(['\n', '\r']);
        let entry = format!("{stamp} [{source}] {text}\n");
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.is_none() {
            *state = self.open();
        }
        let needs_rotation = state
            .as_ref()
            .is_some_and(|(_, size)| size + entry.len() as u64 > self.limit);
        if needs_rotation {
            *state = None;
            let _ = std::fs::rename(&self.path, self.rotated_path());
            *state = self.open();
        }
        if let Some((file, size)) = state.as_mut()
            && file.write_all(entry.as_bytes()).is_ok()
        {
            *size += entry.len() as u64;
        }
    }

    /// `extensions.log.1`.
    pub fn rotated_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".1");
        PathBuf::from(name)
    }

    fn open(&self) -> Option<(File, u64)> {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .ok()?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Some((file, size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed_and_the_file_rotates_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let log = ExtensionLog::new(dir.path().join("extensions.log"), 1024);
        for i in 0..40 {
            log.line("gate", &format!("line {i}\n"));
        }
        let current = std::fs::read_to_string(log.path()).unwrap();
        let rotated = std::fs::read_to_string(log.rotated_path()).unwrap();
        assert!(current.len() <= 1024 && rotated.len() <= 1024);
        assert!(current.ends_with("[gate] line 39\n"), "{current}");
        assert!(rotated.contains("[gate] line"));
        let first = current.lines().next().unwrap();
        assert!(first.contains("Z [gate] line "), "{first}");
    }
}
