//! How trust.json names and compares folders (pi's `canonicalizePath` and
//! `pathsEqual`).

use std::path::{Path, PathBuf};

/// `path` as trust.json names it: absolute, `.` and `..` folded, symlinks resolved when
/// it exists (pi's `canonicalizePath(resolvePath(…))`).
pub fn canonical_folder(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let folded = crate::core::resource_paths::normalize(&absolute);
    std::fs::canonicalize(&folded).unwrap_or(folded)
}

/// Whether two paths name the same folder (case-insensitively on Windows, as pi).
pub fn folders_equal(a: &Path, b: &Path) -> bool {
    let key = |p: &Path| {
        let folded = crate::core::resource_paths::normalize(p)
            .display()
            .to_string();
        if cfg!(windows) {
            folded.to_lowercase()
        } else {
            folded
        }
    };
    key(a) == key(b)
}
