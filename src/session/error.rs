//! What can go wrong in the session store, in words a user can act on.
//!
//! [`SessionError`] is returned by operations that failed; [`LoadWarning`] describes
//! something odd found while opening a file that was handled without losing anything
//! (the UI shows these). [`ReadOnlyReason`] says why a session refuses appends.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::session::entry::EntryId;

/// The file-system operation that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Create,
    Append,
    Write,
    Backup,
    Replace,
    SyncDir,
    ReadDir,
    CreateDir,
}

impl fmt::Display for IoOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoOp::Read => "read session file",
            IoOp::Create => "create session file",
            IoOp::Append => "append to session file",
            IoOp::Write => "write session file",
            IoOp::Backup => "back up session file",
            IoOp::Replace => "replace session file",
            IoOp::SyncDir => "sync session directory",
            IoOp::ReadDir => "read session directory",
            IoOp::CreateDir => "create session directory",
        })
    }
}

/// Why a session accepts no appends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyReason {
    /// The header says a newer format than we understand.
    NewerVersion(u64),
    /// The header's `version` is not a positive whole number.
    UnreadableVersion(String),
    /// The file needed a format migration but could not be rewritten.
    MigrationNotSaved(String),
}

impl fmt::Display for ReadOnlyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadOnlyReason::NewerVersion(v) => write!(
                f,
                "it uses session format version {v}, newer than the version 3 this pi understands. \
                 Nothing in it was changed. Upgrade pi, or fork it into a new session to continue"
            ),
            ReadOnlyReason::UnreadableVersion(v) => write!(
                f,
                "its header has an unreadable format version ({v}). Nothing in it was changed. \
                 Fork it into a new session to continue"
            ),
            ReadOnlyReason::MigrationNotSaved(err) => write!(
                f,
                "it is in an older format and could not be upgraded on disk ({err}). \
                 The file is unchanged. Fix the problem (permissions, disk space) and reopen it, \
                 or fork it into a new session"
            ),
        }
    }
}

/// An operation on a session failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("failed to {op} {path}: {source}")]
    Io {
        op: IoOp,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("session {path} is read-only: {reason}")]
    ReadOnly {
        path: PathBuf,
        reason: ReadOnlyReason,
    },
    /// pi's wording, which extensions and RPC clients may match on.
    #[error("Entry {0} not found")]
    EntryNotFound(EntryId),
    /// pi's wording.
    #[error("Cannot fork: source session file is empty or invalid: {}", .0.display())]
    InvalidForkSource(PathBuf),
}

impl SessionError {
    pub(crate) fn io(op: IoOp, path: impl Into<PathBuf>, source: io::Error) -> Self {
        SessionError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;

/// Something unusual found while opening a session file, handled without losing data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadWarning {
    /// The last line was cut off (pi or pi-rs was stopped mid-write).
    TruncatedLastLine { path: PathBuf, line: usize },
    /// Lines that are not valid JSON, other than a cut-off last line.
    MalformedLines {
        path: PathBuf,
        count: usize,
        first_line: usize,
    },
    /// Valid JSON lines that are not entries (no string `id`, or not an object).
    NotEntries {
        path: PathBuf,
        count: usize,
        first_line: usize,
    },
    /// The file did not start with a session header; its content was moved aside.
    InvalidHeader { path: PathBuf, backup: PathBuf },
    /// Several entries share an id; lookups use the last one in the file.
    DuplicateIds {
        path: PathBuf,
        count: usize,
        example: EntryId,
    },
    /// Entries whose parents lead back to themselves; the cycle was cut.
    ParentCycles {
        path: PathBuf,
        count: usize,
        example: EntryId,
    },
    /// Entries of a type (or messages of a role) this version does not know: kept in the
    /// file as they are, left out of the model context.
    UnknownEntries {
        path: PathBuf,
        count: usize,
        first_line: usize,
        names: Vec<String>,
    },
    /// System messages whose `sections` or tool lists cannot be read: left out of the
    /// prompt and tools.
    MalformedSystemMessages {
        path: PathBuf,
        count: usize,
        first_line: usize,
    },
    /// The session accepts no appends.
    ReadOnly {
        path: PathBuf,
        reason: ReadOnlyReason,
    },
}

impl LoadWarning {
    /// A stable name for the kind of warning (RPC's `session_load_warning` `kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            LoadWarning::TruncatedLastLine { .. } => "truncated_last_line",
            LoadWarning::MalformedLines { .. } => "malformed_lines",
            LoadWarning::NotEntries { .. } => "not_entries",
            LoadWarning::InvalidHeader { .. } => "invalid_header",
            LoadWarning::DuplicateIds { .. } => "duplicate_ids",
            LoadWarning::ParentCycles { .. } => "parent_cycles",
            LoadWarning::UnknownEntries { .. } => "unknown_entries",
            LoadWarning::MalformedSystemMessages { .. } => "malformed_system_messages",
            LoadWarning::ReadOnly { .. } => "read_only",
        }
    }

    /// The session file the warning is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            LoadWarning::TruncatedLastLine { path, .. }
            | LoadWarning::MalformedLines { path, .. }
            | LoadWarning::NotEntries { path, .. }
            | LoadWarning::InvalidHeader { path, .. }
            | LoadWarning::DuplicateIds { path, .. }
            | LoadWarning::ParentCycles { path, .. }
            | LoadWarning::UnknownEntries { path, .. }
            | LoadWarning::MalformedSystemMessages { path, .. }
            | LoadWarning::ReadOnly { path, .. } => path,
        }
    }
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadWarning::TruncatedLastLine { path, line } => write!(
                f,
                "{}: line {line}, the last one, is incomplete (pi was probably stopped while \
                 writing it). It was skipped and kept in the file; new entries start on a fresh line.",
                path.display()
            ),
            LoadWarning::MalformedLines {
                path,
                count,
                first_line,
            } => write!(
                f,
                "{}: {count} line(s) are not valid JSON (first: line {first_line}). They were \
                 skipped and are kept in the file.",
                path.display()
            ),
            LoadWarning::NotEntries {
                path,
                count,
                first_line,
            } => write!(
                f,
                "{}: {count} line(s) are not session entries (no id; first: line {first_line}). \
                 They were skipped and are kept in the file.",
                path.display()
            ),
            LoadWarning::InvalidHeader { path, backup } => write!(
                f,
                "{} does not start with a session header, so a new session was started in its \
                 place. Its previous content was moved to {}.",
                path.display(),
                backup.display()
            ),
            LoadWarning::DuplicateIds {
                path,
                count,
                example,
            } => write!(
                f,
                "{}: {count} entries reuse an id of an earlier entry (e.g. {example}). Lookups \
                 and children use the later entry.",
                path.display()
            ),
            LoadWarning::ParentCycles {
                path,
                count,
                example,
            } => write!(
                f,
                "{}: {count} parent cycle(s) found; the first entry of each cycle in the file \
                 (e.g. {example}) is treated as a root.",
                path.display()
            ),
            LoadWarning::UnknownEntries {
                path,
                count,
                first_line,
                names,
            } => write!(
                f,
                "{}: {count} entry(ies) of a kind this version does not know ({}; first: line \
                 {first_line}). They are kept in the file and left out of the model context.",
                path.display(),
                names.join(", ")
            ),
            LoadWarning::MalformedSystemMessages {
                path,
                count,
                first_line,
            } => write!(
                f,
                "{}: {count} system message(s) with unreadable sections or tools (first: line \
                 {first_line}). They were skipped: the prompt and tools come from the others.",
                path.display()
            ),
            LoadWarning::ReadOnly { path, reason } => {
                write!(f, "{} is open read-only: {reason}.", path.display())
            }
        }
    }
}
