//! Session files in and out: `/export file.jsonl` writes the current path as a session
//! file of its own; `/import file.jsonl` copies a session file into this project's
//! session folder and resumes it (pi's `exportToJsonl` / `importFromJsonl`).

use std::path::{Path, PathBuf};

use super::AgentSession;
use crate::core::paths::expand_tilde;
use crate::session::refusal::MissingCwd;

impl AgentSession {
    /// Writes the current path (root to leaf, re-chained into a line) to `out`, or to
    /// `session-<time>.jsonl` in the working directory. Returns the file written.
    pub fn export_jsonl(&self, out: Option<&str>) -> Result<PathBuf, String> {
        let path = match out {
            Some(out) => self.resolve(out),
            None => {
                let stamp = crate::session::clock::now_iso().replace([':', '.'], "-");
                self.cwd().join(format!("session-{stamp}.jsonl"))
            }
        };
        self.state()
            .session
            .export_path_jsonl(&path)
            .map_err(|e| e.to_string())?;
        Ok(path)
    }

    /// `/import file.jsonl`: copies the file into this project's session folder (unless
    /// it is already there) and resumes it. Extensions may cancel, as for `/resume`. A
    /// file whose header names a directory that is gone is refused as `/resume` refuses
    /// it (see [`AgentSession::import_missing_cwd`] and [`AgentSession::import_jsonl_in`]).
    pub async fn import_jsonl(&self, input: &str) -> Result<PathBuf, String> {
        self.import_jsonl_in(input, None).await
    }

    /// Why `/import` of `input` would be refused for its directory: the file's header
    /// names a working directory that no longer exists. Reads only the first line.
    pub fn import_missing_cwd(&self, input: &str) -> Option<MissingCwd> {
        MissingCwd::check(&self.resolve(input), self.cwd())
    }

    /// [`AgentSession::import_jsonl`], continuing the session in `cwd` instead of the
    /// directory its header names (pi's `cwdOverride`, after the user agreed).
    pub async fn import_jsonl_in(
        &self,
        input: &str,
        cwd: Option<&Path>,
    ) -> Result<PathBuf, String> {
        let source = self.resolve(input);
        if !source.is_file() {
            return Err(format!("File not found: {}", source.display()));
        }
        // Checked before copying, so a refused file leaves nothing behind.
        if cwd.is_none()
            && let Some(issue) = MissingCwd::check(&source, self.cwd())
        {
            return Err(issue.to_string());
        }
        let Some(dir) = self.with_session(|m| m.session_dir().map(Path::to_path_buf)) else {
            return Err("This session is not saved (--no-session): there is no session folder to import into".into());
        };
        let name = source
            .file_name()
            .ok_or_else(|| format!("Not a file name: {}", source.display()))?;
        let destination = dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let same = std::fs::canonicalize(&source).ok() == std::fs::canonicalize(&destination).ok();
        if !same {
            std::fs::copy(&source, &destination).map_err(|e| {
                format!(
                    "cannot copy {} to {}: {e}",
                    source.display(),
                    destination.display()
                )
            })?;
        }
        self.switch_session_in(&destination, cwd).await?;
        Ok(destination)
    }

    /// A path the user typed: `~` expanded, relative to the working directory.
    fn resolve(&self, typed: &str) -> PathBuf {
        let path = expand_tilde(typed);
        if path.is_absolute() {
            path
        } else {
            self.cwd().join(path)
        }
    }
}
