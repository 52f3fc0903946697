//! Which files of an installed package are extensions, skills, prompt templates and
//! themes (pi 0.73's `collectPackageResources`):
//!
//! - with a settings filter (the object form of a `packages` entry), each kind named in it
//!   is narrowed by its patterns (`[]`: none; plain globs keep matches, `!glob` drops,
//!   `+path` / `-path` force an exact path in / out) on top of what the package offers;
//!   kinds it does not name load as without a filter;
//! - else the `pi` key of `package.json` lists paths and globs per kind (`!`, `+`, `-`
//!   entries apply to what they find; a kind it does not list loads nothing);
//! - else the conventional folders: `extensions/` (`.ts` / `.js` files, subfolders with
//!   an `index.ts` / `index.js` or their own `pi` manifest), `skills/` (`SKILL.md` folders
//!   and top-level `.md` files), `prompts/` (`.md`), `themes/` (`.json`).
//!
//! Every file found is reported, enabled or not, so `pi config`-style listings can show
//! what a filter turned off.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::core::resource_paths::{
    IgnoreRules, apply_patterns, normalize, read_dir_sorted, visible_entries,
};
use crate::core::skills::pi_skill_files;

/// The four kinds of resources a package can hold, in pi's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    Extensions,
    Skills,
    Prompts,
    Themes,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; 4] = [
        ResourceKind::Extensions,
        ResourceKind::Skills,
        ResourceKind::Prompts,
        ResourceKind::Themes,
    ];

    /// The key in settings, in the `pi` manifest, and the conventional folder's name.
    pub fn key(self) -> &'static str {
        match self {
            ResourceKind::Extensions => "extensions",
            ResourceKind::Skills => "skills",
            ResourceKind::Prompts => "prompts",
            ResourceKind::Themes => "themes",
        }
    }
}

/// A file of a package and whether the filters leave it on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    pub kind: ResourceKind,
    pub path: PathBuf,
    pub enabled: bool,
}

/// The `pi` key of `<dir>/package.json`, if it is there and parses.
fn manifest(dir: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    match value.get("pi")? {
        Value::Object(map) => Some(map.clone()),
        _ => None,
    }
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    })
}

fn is_override(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-'])
}

fn has_glob(entry: &str) -> bool {
    entry.contains(['*', '?'])
}

/// The extension entry files of a folder: those its `pi` manifest lists, else its
/// `index.ts` / `index.js` (pi's `resolveExtensionEntries`).
fn extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    if let Some(listed) = manifest(dir).and_then(|m| strings(m.get("extensions"))) {
        let found: Vec<PathBuf> = listed
            .iter()
            .map(|e| normalize(&dir.join(e)))
            .filter(|p| p.exists())
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// pi's extension scan of a folder: its own entries if it has any, else its `.ts` /
/// `.js` files and the entries of its subfolders.
fn extension_files(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    if let Some(entries) = extension_entries(dir) {
        return entries;
    }
    let rules = IgnoreRules::default().enter(dir);
    let mut out = Vec::new();
    for e in visible_entries(dir, &rules) {
        if e.is_file && (e.name.ends_with(".ts") || e.name.ends_with(".js")) {
            out.push(e.path);
        } else if e.is_dir
            && let Some(entries) = extension_entries(&e.path)
        {
            out.extend(entries);
        }
    }
    out
}

/// Files with `suffix` in `dir` and below (dot files, `node_modules` and ignored paths
/// skipped).
fn files_recursive(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, rules: &IgnoreRules, suffix: &str, out: &mut Vec<PathBuf>) {
        let rules = rules.enter(dir);
        for e in visible_entries(dir, &rules) {
            if e.is_dir {
                walk(&e.path, &rules, suffix, out);
            } else if e.is_file && e.name.ends_with(suffix) {
                out.push(e.path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &IgnoreRules::default(), suffix, &mut out);
    out
}

/// The files of `kind` in a folder (pi's `collectResourceFiles`).
fn kind_files(dir: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Extensions => extension_files(dir),
        ResourceKind::Skills => pi_skill_files(dir),
        ResourceKind::Prompts => files_recursive(dir, ".md"),
        ResourceKind::Themes => files_recursive(dir, ".json"),
    }
}

/// Files and folders under `root` matching a glob (no dot entries; `node_modules` only
/// when the glob names it).
fn glob_paths(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let Ok(glob) = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
    else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    // Walk from the part of the pattern without wildcards.
    let fixed: Vec<&str> = pattern
        .split('/')
        .take_while(|part| !has_glob(part) && !part.contains(['[', '{']))
        .collect();
    let start = root.join(fixed.join("/"));
    let mut out = Vec::new();
    let mut stack = vec![start];
    while let Some(dir) = stack.pop() {
        for e in read_dir_sorted(&dir) {
            if e.name.starts_with('.') {
                continue;
            }
            let Ok(rel) = e.path.strip_prefix(root) else {
                continue;
            };
            if matcher.is_match(rel) {
                out.push(e.path.clone());
            }
            if e.is_dir && (e.name != "node_modules" || pattern.contains("node_modules")) {
                stack.push(e.path);
            }
        }
    }
    out.sort();
    out
}

/// The files manifest entries reach (patterns aside): plain paths and glob matches,
/// folders scanned for `kind`.
fn files_of_entries(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|e| !is_override(e)) {
        if has_glob(entry) {
            paths.extend(glob_paths(root, entry));
        } else {
            paths.push(normalize(&root.join(entry)));
        }
    }
    let mut files = Vec::new();
    for path in paths {
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => files.push(path),
            Ok(m) if m.is_dir() => files.extend(kind_files(&path, kind)),
            _ => {}
        }
    }
    files
}

/// The files the manifest's entries for `kind` enable.
fn manifest_files(entries: &[String], root: &Path, kind: ResourceKind) -> Vec<PathBuf> {
    let all = files_of_entries(entries, root, kind);
    let overrides: Vec<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|e| is_override(e))
        .collect();
    let on = apply_patterns(&all, &overrides, root);
    all.into_iter()
        .zip(on)
        .filter_map(|(f, on)| on.then_some(f))
        .collect()
}

/// What the package offers of `kind` without a settings filter: the manifest's entries,
/// else the conventional folder.
fn default_files(
    root: &Path,
    manifest: Option<&serde_json::Map<String, Value>>,
    kind: ResourceKind,
) -> Vec<PathBuf> {
    match manifest.and_then(|m| strings(m.get(kind.key()))) {
        Some(entries) => manifest_files(&entries, root, kind),
        None => {
            let dir = root.join(kind.key());
            if dir.exists() {
                kind_files(&dir, kind)
            } else {
                Vec::new()
            }
        }
    }
}

/// The resources of the package at `root`. `filter` is the object form of its settings
/// entry, if any. `None` when the package has neither a manifest nor a conventional
/// folder (and no filter): a local folder like that is one extension itself.
pub fn collect_package(root: &Path, filter: Option<&Value>) -> Option<Vec<PackageFile>> {
    let manifest = manifest(root);
    let mut out = Vec::new();
    let mut push = |kind: ResourceKind, files: Vec<PathBuf>, enabled: &dyn Fn(usize) -> bool| {
        for (i, path) in files.into_iter().enumerate() {
            if !out
                .iter()
                .any(|f: &PackageFile| f.kind == kind && f.path == path)
            {
                out.push(PackageFile {
                    kind,
                    path,
                    enabled: enabled(i),
                });
            }
        }
    };
    if let Some(filter) = filter {
        for kind in ResourceKind::ALL {
            match strings(filter.get(kind.key())) {
                Some(patterns) => {
                    // A non-empty manifest list bounds what exists; else the folder.
                    let all = match manifest
                        .as_ref()
                        .and_then(|m| strings(m.get(kind.key())))
                        .filter(|e| !e.is_empty())
                    {
                        Some(entries) => manifest_files(&entries, root, kind),
                        None => kind_files(&root.join(kind.key()), kind),
                    };
                    let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
                    let on = if patterns.is_empty() {
                        vec![false; all.len()]
                    } else {
                        apply_patterns(&all, &refs, root)
                    };
                    push(kind, all, &|i| on.get(i).copied().unwrap_or(false));
                }
                None => push(kind, default_files(root, manifest.as_ref(), kind), &|_| {
                    true
                }),
            }
        }
        return Some(out);
    }
    if let Some(m) = &manifest {
        // With a manifest only what it lists loads (no folder fallback, as in pi).
        for kind in ResourceKind::ALL {
            if let Some(entries) = strings(m.get(kind.key())) {
                push(kind, manifest_files(&entries, root, kind), &|_| true);
            }
        }
        return Some(out);
    }
    let mut any_dir = false;
    for kind in ResourceKind::ALL {
        let dir = root.join(kind.key());
        if dir.exists() {
            any_dir = true;
            push(kind, kind_files(&dir, kind), &|_| true);
        }
    }
    any_dir.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn touch(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn listing(root: &Path, files: &[PackageFile]) -> Vec<String> {
        files
            .iter()
            .map(|f| {
                let rel = f.path.strip_prefix(root).unwrap().display();
                format!(
                    "{} {rel}{}",
                    f.kind.key(),
                    if f.enabled { "" } else { " (off)" }
                )
            })
            .collect()
    }

    #[test]
    fn conventional_folders_without_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("package.json"), r#"{"name":"x"}"#);
        touch(&root.join("extensions/a.ts"), "");
        touch(&root.join("extensions/sub/index.js"), "");
        touch(&root.join("extensions/notes.md"), "");
        touch(&root.join("skills/hello/SKILL.md"), "");
        touch(&root.join("skills/loose.md"), "");
        touch(&root.join("prompts/deep/review.md"), "");
        touch(&root.join("themes/t.json"), "{}");
        let files = collect_package(root, None).unwrap();
        assert_eq!(
            listing(root, &files),
            [
                "extensions extensions/a.ts",
                "extensions extensions/sub/index.js",
                "skills skills/hello/SKILL.md",
                "skills skills/loose.md",
                "prompts prompts/deep/review.md",
                "themes themes/t.json",
            ]
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(collect_package(empty.path(), None), None);
    }

    #[test]
    fn manifest_entries_globs_and_exclusions() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(
            &root.join("package.json"),
            &json!({"pi": {"extensions": ["src/*.ts", "!src/old.ts"], "prompts": ["p"]}})
                .to_string(),
        );
        touch(&root.join("src/new.ts"), "");
        touch(&root.join("src/old.ts"), "");
        touch(&root.join("p/a.md"), "");
        touch(&root.join("skills/ignored/SKILL.md"), "");
        let files = collect_package(root, None).unwrap();
        // A filter that names no kind loads the folders the manifest does not cover.
        let unfiltered = collect_package(root, Some(&json!({"source": "x"}))).unwrap();
        assert!(unfiltered.iter().any(|f| f.kind == ResourceKind::Skills));
        assert_eq!(
            listing(root, &files),
            ["extensions src/new.ts", "prompts p/a.md"]
        );
    }

    #[test]
    fn settings_filters_narrow_and_force() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("extensions/a.ts"), "");
        touch(&root.join("extensions/legacy.ts"), "");
        touch(&root.join("skills/s/SKILL.md"), "");
        touch(&root.join("prompts/review.md"), "");
        touch(&root.join("prompts/other.md"), "");
        touch(&root.join("themes/t.json"), "{}");
        let filter = json!({
            "source": "npm:x",
            "extensions": ["!extensions/legacy.ts"],
            "skills": [],
            "prompts": ["prompts/review.md"],
        });
        let files = collect_package(root, Some(&filter)).unwrap();
        assert_eq!(
            listing(root, &files),
            [
                "extensions extensions/a.ts",
                "extensions extensions/legacy.ts (off)",
                "skills skills/s/SKILL.md (off)",
                "prompts prompts/other.md (off)",
                "prompts prompts/review.md",
                "themes themes/t.json",
            ]
        );
        let forced = json!({"source": "x", "extensions": ["!**", "+extensions/legacy.ts"]});
        let files = collect_package(root, Some(&forced)).unwrap();
        let on: Vec<_> = files
            .iter()
            .filter(|f| f.kind == ResourceKind::Extensions && f.enabled)
            .collect();
        assert_eq!(on.len(), 1);
        assert!(on[0].path.ends_with("extensions/legacy.ts"));
    }
}
