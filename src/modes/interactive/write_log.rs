//! `PI_TUI_WRITE_LOG`: a copy of every frame written to the terminal, appended to a file,
//! as pi-tui keeps one (for debugging rendering). The variable names a file, or an
//! existing directory, which then gets `tui-YYYY-MM-DD_HH-MM-SS-<pid>.log` (local time).
//! As in pi, what goes through the renderer is logged (frames, the cell size query, the
//! final cursor move), not the terminal mode switches.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The log file `PI_TUI_WRITE_LOG` asks for (`None` when it is unset or empty).
pub fn log_path(
    value: Option<&str>,
    now: chrono::DateTime<chrono::Local>,
    pid: u32,
) -> Option<PathBuf> {
    let value = value.filter(|v| !v.is_empty())?;
    let path = Path::new(value);
    if path.is_dir() {
        let stamp = now.format("%Y-%m-%d_%H-%M-%S");
        return Some(path.join(format!("tui-{stamp}-{pid}.log")));
    }
    Some(path.to_path_buf())
}

/// Standard output, with every write also appended to the log file when there is one.
pub struct TermOut {
    log: Option<File>,
}

impl TermOut {
    /// Standard output, logged as `PI_TUI_WRITE_LOG` says. A log that cannot be opened
    /// is reported in the second value (the UI shows it as a warning) and not written.
    pub fn stdout() -> (TermOut, Option<String>) {
        let value = std::env::var("PI_TUI_WRITE_LOG").ok();
        let Some(path) = log_path(value.as_deref(), chrono::Local::now(), std::process::id())
        else {
            return (TermOut { log: None }, None);
        };
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => (TermOut { log: Some(file) }, None),
            Err(e) => (
                TermOut { log: None },
                Some(format!(
                    "PI_TUI_WRITE_LOG: cannot write {}: {e}; the terminal output is not logged",
                    path.display()
                )),
            ),
        }
    }
}

impl Write for TermOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = io::stdout().write(buf)?;
        if let Some(log) = &mut self.log
            && log.write_all(&buf[..n]).is_err()
        {
            // As pi: a failing log does not disturb the UI; it just stops.
            self.log = None;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_log_is_the_named_file_or_a_stamped_file_in_a_directory() {
        let now = chrono::Local.with_ymd_and_hms(2026, 3, 4, 5, 6, 7).unwrap();
        assert_eq!(log_path(None, now, 1), None);
        assert_eq!(log_path(Some(""), now, 1), None);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.log");
        assert_eq!(log_path(file.to_str(), now, 1), Some(file.clone()));
        assert_eq!(
            log_path(dir.path().to_str(), now, 42),
            Some(dir.path().join("tui-2026-03-04_05-06-07-42.log"))
        );
    }
}
