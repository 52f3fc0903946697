//! Why a session file is not continued as it is, in words that say what to do instead.
//!
//! Two cases stop pi-rs from running turns in an existing session file:
//!
//! - its header names a working directory that no longer exists ([`MissingCwd`]). pi
//!   0.73.1 refuses such a session outside the terminal UI and asks inside it; the texts
//!   here are pi's, plus a line on how to go on.
//! - the session accepts no appends ([`read_only_refusal`]): a newer format version, an
//!   unreadable one, or an upgrade that could not be saved. pi would append to a newer
//!   file regardless; pi-rs never writes to it and never runs a turn it cannot save, and
//!   points to `--fork`, which copies the conversation into a new file.
//!
//! Everything here only reads the start of the file: nothing is changed by checking.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::session::error::ReadOnlyReason;
use crate::session::load::first_line_header;

/// A session whose header `cwd` does not exist (pi's `MissingSessionCwdIssue`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingCwd {
    /// The session file (absolute).
    pub file: PathBuf,
    /// The working directory its header names.
    pub session_cwd: String,
    /// Where pi-rs runs now, and would continue the session if asked to.
    pub current_cwd: PathBuf,
}

impl MissingCwd {
    /// The problem with the session file at `file`, if its header names a working
    /// directory that does not exist. A file without a header, or a header without a
    /// `cwd`, is not this problem (pi: `!sessionCwd || existsSync(sessionCwd)`).
    pub fn check(file: &Path, current_cwd: &Path) -> Option<MissingCwd> {
        let header = first_line_header(file)?;
        let cwd = header.cwd;
        if cwd.is_empty() || Path::new(&cwd).exists() {
            return None;
        }
        Some(MissingCwd {
            file: std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()),
            session_cwd: cwd,
            current_cwd: current_cwd.to_path_buf(),
        })
    }

    /// pi's question in the terminal UI (its `formatMissingSessionCwdPrompt`), answered
    /// with "continue in the current directory" or "cancel".
    pub fn prompt_text(&self) -> String {
        format!(
            "cwd from session file does not exist\n{}\n\ncontinue in current cwd\n{}",
            self.session_cwd,
            self.current_cwd.display()
        )
    }

    /// What to do about it without a dialog: fork the session into the current directory
    /// (the source stays as it is).
    pub fn hint(&self) -> String {
        format!(
            "To continue this conversation in the current directory, fork it into a new session: pi --fork {}",
            shell_word(&self.file)
        )
    }
}

/// pi's `MissingSessionCwdError` text (RPC clients may match on its first line).
impl fmt::Display for MissingCwd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}",
            self.session_cwd,
            self.file.display(),
            self.current_cwd.display()
        )
    }
}

/// Why the session at `file` is not continued although it opened: it accepts no appends
/// (`reason`), so a turn there would not be saved. Names the file and, for a newer
/// format, the version; ends with the command that continues in a new file.
pub fn read_only_refusal(file: &Path, reason: &ReadOnlyReason) -> String {
    format!(
        "Cannot continue session {}: {reason}.\nTo continue this conversation in a new session file: pi --fork {}",
        file.display(),
        shell_word(file)
    )
}

/// `path` as one shell word: as it is when that is safe, else in single quotes.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@,%=~".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_cwd_that_is_gone_is_reported_with_pis_texts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let gone = dir.path().join("gone");
        std::fs::write(
            &file,
            format!(
                "{{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"{}\"}}\n",
                gone.display()
            ),
        )
        .unwrap();
        let issue = MissingCwd::check(&file, Path::new("/here")).unwrap();
        let text = issue
            .to_string()
            .replace(&dir.path().display().to_string(), "<tmp>");
        assert_eq!(
            text,
            "Stored session working directory does not exist: <tmp>/gone\n\
             Session file: <tmp>/s.jsonl\nCurrent working directory: /here"
        );
        assert!(
            issue
                .prompt_text()
                .starts_with("cwd from session file does not exist\n")
        );
        std::fs::create_dir(&gone).unwrap();
        assert_eq!(MissingCwd::check(&file, Path::new("/here")), None);
    }

    #[test]
    fn files_without_a_header_cwd_are_not_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, "{\"type\":\"session\",\"id\":\"s\"}\n").unwrap();
        assert_eq!(MissingCwd::check(&file, dir.path()), None);
        std::fs::write(&file, "not json\n").unwrap();
        assert_eq!(MissingCwd::check(&file, dir.path()), None);
        assert_eq!(
            MissingCwd::check(&dir.path().join("none"), dir.path()),
            None
        );
    }

    #[test]
    fn paths_with_spaces_are_quoted_in_the_fork_hint() {
        let text = read_only_refusal(
            Path::new("/a b/it's.jsonl"),
            &ReadOnlyReason::NewerVersion(99),
        );
        assert!(text.contains("version 99"), "{text}");
        assert!(text.ends_with(r"pi --fork '/a b/it'\''s.jsonl'"), "{text}");
        assert_eq!(shell_word(Path::new("/x/y-1.jsonl")), "/x/y-1.jsonl");
    }
}
