//! Which session file a session runs on: the session directory, the [`SessionSource`]
//! the front end decided on (from its flags, after asking the user where pi asks), and
//! opening it — the part that may read a big file.

use std::path::{Path, PathBuf};

use super::error::StartupError;
use crate::core::paths::{AgentPaths, expand_tilde};
use crate::core::settings::Settings;
use crate::session::SessionManager;
use crate::session::error::SessionError;
use crate::session::ids::SessionId;
use crate::session::paths::default_session_dir;
use crate::session::refusal::{MissingCwd, read_only_refusal};

/// The session to run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionSource {
    /// Nothing is saved (`--no-session`).
    InMemory,
    /// A new session file.
    Create,
    /// An existing session file.
    Open(PathBuf),
    /// Open a session file but continue it in the current directory instead of the one
    /// its header names (which no longer exists; the user agreed).
    OpenHere(PathBuf),
    /// A new session file that starts as a copy of this one.
    Fork(PathBuf),
    /// The most recent session of the directory, or a new one (`--continue`).
    ContinueRecent,
}

/// The session directory: `--session-dir`, `PI_CODING_AGENT_SESSION_DIR`, the `sessionDir`
/// setting (the project's too while its trust is not decided yet, as in pi), else
/// `<agent>/sessions/--<cwd>--`.
pub fn session_dir_for(
    flag: Option<&str>,
    settings: &Settings,
    paths: &AgentPaths,
    cwd: &Path,
) -> PathBuf {
    if let Some(dir) = flag {
        return expand_tilde(dir);
    }
    if let Ok(dir) = std::env::var("PI_CODING_AGENT_SESSION_DIR")
        && !dir.is_empty()
    {
        return expand_tilde(&dir);
    }
    if let Some(dir) = settings.session_dir_before_trust(cwd) {
        return dir;
    }
    default_session_dir(&paths.sessions_root(), cwd)
}

/// Opens (or creates) the session `source` names. Blocking: reads the whole file.
/// `session_id` (`--session-id`) is the id of a new, in-memory or forked session.
///
/// An existing session is refused (nothing in its file changed) when its header names a
/// working directory that no longer exists (pi's message and how to go on; the
/// interactive front end asks first, see [`missing_session_cwd`]) or when it accepts no
/// appends (a newer format version): pi-rs never runs a turn it cannot save.
pub fn open_session_source(
    source: &SessionSource,
    cwd: &Path,
    session_dir: &Path,
    session_id: Option<&str>,
) -> Result<SessionManager, StartupError> {
    let failed = |e: SessionError| StartupError(e.to_string());
    let id = session_id.map(SessionId::from);
    let manager = match (source, id) {
        (SessionSource::InMemory, Some(id)) => {
            return Ok(SessionManager::in_memory_with_id(cwd, id));
        }
        (SessionSource::InMemory, None) => return Ok(SessionManager::in_memory(cwd)),
        (SessionSource::Create, Some(id)) => {
            SessionManager::create_with_id(cwd, session_dir, id).map_err(failed)?
        }
        (SessionSource::Create, None) => {
            SessionManager::create(cwd, session_dir).map_err(failed)?
        }
        (SessionSource::Open(path), _) => {
            if let Some(issue) = missing_session_cwd(source, cwd) {
                return Err(StartupError(format!("{issue}\n{}", issue.hint())));
            }
            SessionManager::open(path, Some(session_dir)).map_err(failed)?
        }
        (SessionSource::OpenHere(path), _) => {
            SessionManager::open_with_cwd(path, Some(session_dir), Some(cwd)).map_err(failed)?
        }
        (SessionSource::Fork(path), id) => {
            SessionManager::fork_from_with_id(path, cwd, session_dir, id).map_err(failed)?
        }
        (SessionSource::ContinueRecent, _) => {
            SessionManager::continue_recent(cwd, session_dir).map_err(failed)?
        }
    };
    if let (Some(reason), Some(file)) = (manager.read_only_reason(), manager.session_file()) {
        return Err(StartupError(read_only_refusal(file, reason)));
    }
    Ok(manager)
}

/// The session file `source` opens, when its header names a working directory that no
/// longer exists (only [`SessionSource::Open`]: `--continue` and forks run in the current
/// directory anyway). Reads only the file's first line.
pub fn missing_session_cwd(source: &SessionSource, cwd: &Path) -> Option<MissingCwd> {
    match source {
        SessionSource::Open(path) => MissingCwd::check(path, cwd),
        _ => None,
    }
}
