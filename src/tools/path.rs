//! How tools turn the path a model wrote into a file system path, the way pi does it:
//! a leading `@` is dropped (models copy it from `@file` mentions), unusual Unicode spaces
//! become plain spaces, `~` means the home directory, and relative paths are resolved
//! against the session's working directory.
//!
//! `read` additionally tries the spellings macOS uses in screenshot file names (a narrow
//! no-break space before AM/PM, decomposed accents, a curly apostrophe) when the path as
//! written does not exist. Nothing here checks permissions or touches file contents.

use std::path::{Component, Path, PathBuf};

use icu_normalizer::DecomposingNormalizerBorrowed;

/// Spaces a model (or a copy-paste from a web page) may put where a file name has a
/// plain space.
fn is_unusual_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Drops a leading `@`, normalizes unusual spaces and expands `~` / `~/…`.
pub fn expand_path(path: &str) -> String {
    let without_at = path.strip_prefix('@').unwrap_or(path);
    let normalized: String = without_at
        .chars()
        .map(|c| if is_unusual_space(c) { ' ' } else { c })
        .collect();
    if normalized == "~" {
        return home_dir_string();
    }
    if let Some(rest) = normalized.strip_prefix("~/") {
        return format!("{}/{rest}", home_dir_string());
    }
    normalized
}

fn home_dir_string() -> String {
    dirs::home_dir()
        .map(|home| home.to_string_lossy().into_owned())
        .unwrap_or_else(|| "~".to_string())
}

/// Resolves `path` (as a model wrote it) against `cwd`. Absolute paths are kept as
/// written; relative ones are joined to `cwd` and normalized lexically (`.`, `..`,
/// repeated slashes), like Node's `path.resolve`.
pub fn resolve_to_cwd(path: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(path);
    let candidate = Path::new(&expanded);
    if candidate.is_absolute() {
        return candidate.to_path_buf();
    }
    normalize_lexically(&cwd.join(candidate))
}

/// Removes `.` components, resolves `..` against the preceding component and drops
/// trailing separators, without touching the file system (symlinks are not resolved).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `..` at the root stays at the root, as in Node.
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            Component::RootDir | Component::Prefix(_) | Component::Normal(_) => {
                out.push(component.as_os_str());
            }
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Like [`resolve_to_cwd`], but when that path does not exist, tries the spellings macOS
/// gives screenshot files and returns the first one that exists (else the plain one).
pub fn resolve_read_path(path: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(path, cwd);
    if resolved.exists() {
        return resolved;
    }
    let Some(text) = resolved.to_str() else {
        return resolved;
    };
    let am_pm = narrow_space_before_am_pm(text);
    let nfd = DecomposingNormalizerBorrowed::new_nfd()
        .normalize(text)
        .into_owned();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    for variant in [am_pm, nfd, curly, nfd_curly] {
        if variant != text && Path::new(&variant).exists() {
            return PathBuf::from(variant);
        }
    }
    resolved
}

/// macOS writes `Screenshot 2024-01-01 at 10.00.00 AM.png` with U+202F before `AM`/`PM`.
fn narrow_space_before_am_pm(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(index) = rest.find(' ') {
        let after = &rest[index + 1..];
        let is_am_pm = after.len() >= 3
            && after.is_char_boundary(2)
            && matches!(after[..2].to_ascii_uppercase().as_str(), "AM" | "PM")
            && after[2..].starts_with('.');
        out.push_str(&rest[..index]);
        out.push(if is_am_pm { '\u{202F}' } else { ' ' });
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn relative_paths_resolve_against_cwd_and_normalize() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            resolve_to_cwd("src/../a.txt", cwd),
            PathBuf::from("/work/project/a.txt")
        );
        assert_eq!(
            resolve_to_cwd("./x//y/", cwd),
            PathBuf::from("/work/project/x/y")
        );
        assert_eq!(resolve_to_cwd(".", cwd), PathBuf::from("/work/project"));
        assert_eq!(resolve_to_cwd("../../../..", cwd), PathBuf::from("/"));
        assert_eq!(
            resolve_to_cwd("/etc/hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
    }

    #[test]
    fn at_prefix_and_unusual_spaces_are_normalized() {
        let cwd = Path::new("/p");
        assert_eq!(
            resolve_to_cwd("@src/a.rs", cwd),
            PathBuf::from("/p/src/a.rs")
        );
        assert_eq!(
            resolve_to_cwd("my\u{00A0}file\u{3000}name", cwd),
            PathBuf::from("/p/my file name")
        );
    }

    #[test]
    fn tilde_expands_to_home() {
        let home = dirs::home_dir().unwrap_or_default();
        assert_eq!(resolve_to_cwd("~", Path::new("/p")), home);
        assert_eq!(resolve_to_cwd("~/x", Path::new("/p")), home.join("x"));
        // Only a leading `~/` is special.
        assert_eq!(
            resolve_to_cwd("a~/x", Path::new("/p")),
            PathBuf::from("/p/a~/x")
        );
    }

    #[test]
    fn read_path_finds_macos_screenshot_spellings() {
        let dir = tempfile::tempdir().unwrap();
        let real = "Screenshot 2024-01-02 at 10.11.12\u{202F}PM.png";
        std::fs::write(dir.path().join(real), b"x").unwrap();
        let typed = "Screenshot 2024-01-02 at 10.11.12 PM.png";
        assert_eq!(resolve_read_path(typed, dir.path()), dir.path().join(real));

        let curly = "Capture d\u{2019}e\u{301}cran.png";
        std::fs::write(dir.path().join(curly), b"x").unwrap();
        assert_eq!(
            resolve_read_path("Capture d'\u{e9}cran.png", dir.path()),
            dir.path().join(curly)
        );

        // A path that exists nowhere comes back as written.
        assert_eq!(
            resolve_read_path("missing.txt", dir.path()),
            dir.path().join("missing.txt")
        );
    }
}
