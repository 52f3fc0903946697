//! Where session files live and what they are called, exactly as pi names them, so pi and
//! pi-rs find each other's sessions.
//!
//! `<sessions_root>/--<cwd with / \ : turned into ->--/<ISO time with : and . turned into
//! ->_<session id>.jsonl`. This module only computes paths; it never reads settings or
//! environment variables (the caller passes the sessions root, usually
//! `~/.pi/agent/sessions`) and never touches the disk.

use std::path::{Path, PathBuf};

use crate::session::ids::SessionId;

/// The directory name pi uses for a working directory: the leading `/` (or `\`) removed,
/// every `/`, `\` and `:` replaced by `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let trimmed = text
        .strip_prefix('/')
        .or_else(|| text.strip_prefix('\\'))
        .unwrap_or(&text);
    let mut out = String::with_capacity(trimmed.len() + 4);
    out.push_str("--");
    for c in trimmed.chars() {
        out.push(if matches!(c, '/' | '\\' | ':') {
            '-'
        } else {
            c
        });
    }
    out.push_str("--");
    out
}

/// The session directory pi uses for `cwd` under `sessions_root`.
pub fn default_session_dir(sessions_root: &Path, cwd: &Path) -> PathBuf {
    sessions_root.join(encode_cwd(cwd))
}

/// The file name of a new session: the header timestamp with `:` and `.` replaced by `-`,
/// then `_`, the session id and `.jsonl`.
pub fn session_file_name(header_timestamp: &str, id: &SessionId) -> String {
    let stamp: String = header_timestamp
        .chars()
        .map(|c| if c == ':' || c == '.' { '-' } else { c })
        .collect();
    format!("{stamp}_{id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_cwd_like_pi() {
        assert_eq!(encode_cwd(Path::new("/Users/x/proj")), "--Users-x-proj--");
        assert_eq!(
            encode_cwd(Path::new("/home/user/proj-basic")),
            "--home-user-proj-basic--"
        );
        assert_eq!(encode_cwd(Path::new(r"C:\Users\x")), "--C--Users-x--");
        assert_eq!(encode_cwd(Path::new("/")), "----");
        assert_eq!(
            default_session_dir(Path::new("/h/.pi/agent/sessions"), Path::new("/a/b")),
            PathBuf::from("/h/.pi/agent/sessions/--a-b--")
        );
    }

    #[test]
    fn names_files_like_the_corpus() {
        let id = SessionId::from("01a20156-4849-716a-9ef4-cfcfd767c6ff");
        assert_eq!(
            session_file_name("2026-11-22T03:39:21.546Z", &id),
            "2026-11-22T03-39-21-546Z_01a20156-4849-716a-9ef4-cfcfd767c6ff.jsonl"
        );
    }
}
