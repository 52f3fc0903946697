//! What can be wrong with a settings file: each problem is shown as a warning and the
//! rest of the file applies.

use std::path::{Path, PathBuf};

/// Something wrong with a settings file, shown as a warning; the rest of the file
/// applies.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsProblem {
    /// The file could not be read or is not a JSON object: none of it applies.
    #[error(
        "could not read settings file {}: {message} (fix or delete the file; it will not be overwritten)",
        path.display()
    )]
    Unreadable { path: PathBuf, message: String },
    /// One value has the wrong shape: it is left out and its default applies.
    #[error(
        "{}: {key}: expected {expected}, got {got}; this value is ignored",
        path.display()
    )]
    BadValue {
        path: PathBuf,
        key: String,
        expected: String,
        got: String,
    },
    /// A key pi reads only from the user's settings, found in a project's.
    #[error(
        "{}: {key} is read only from the user settings (~/.pi/agent/settings.json); ignored here",
        path.display()
    )]
    GlobalOnly { path: PathBuf, key: String },
}

impl SettingsProblem {
    /// The settings file concerned.
    pub fn path(&self) -> &Path {
        match self {
            SettingsProblem::Unreadable { path, .. }
            | SettingsProblem::BadValue { path, .. }
            | SettingsProblem::GlobalOnly { path, .. } => path,
        }
    }

    pub(super) fn unreadable(path: &Path, message: impl Into<String>) -> SettingsProblem {
        SettingsProblem::Unreadable {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
