//! Where prompt templates, skills and extensions are looked for, in pi's order.
//!
//! pi 0.73 resolves every kind of resource the same way: the entries of the `prompts` /
//! `skills` / `extensions` settings (project entries relative to `<cwd>/.pi`, global ones
//! relative to the agent directory; a file, a folder to scan, or a pattern: `!glob`
//! excludes, `+path` forces in, `-path` forces out, a plain glob keeps only matches),
//! then the automatically scanned folders of the project and of the user. The result is
//! ordered project settings → project folders → user settings → user folders, and a file
//! reached twice (also through a symlink) is kept once, at its first place. Paths given
//! on the command line come first (extensions) or last (skills, prompt templates) and are
//! merged by the caller with [`merge_paths`].
//!
//! This module only finds files; parsing them is the job of `prompt_templates`, `skills`
//! and `extension_discovery`, which also supply the per-kind folder scanners. Scans skip
//! dot files, `node_modules` and whatever `.gitignore` / `.ignore` / `.fdignore` files in
//! the scanned folders exclude, as pi does.

use std::path::{Component, Path, PathBuf};

use globset::{Glob, GlobMatcher};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::core::paths::home_dir;

/// Whose configuration a resource comes from (defined with the extension sources, the
/// lowest layer that keeps it).
pub use crate::extensions::ResourceScope;

/// Something wrong with a resource, to be shown as a warning at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    pub kind: DiagnosticKind,
    pub message: String,
    pub path: PathBuf,
}

/// How serious a [`ResourceDiagnostic`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// The resource loads, but something about it is off (or it was skipped).
    Warning,
    /// A path given explicitly could not be used.
    Error,
    /// Two resources have the same name; the first one (`winner`) is used.
    Collision { winner: PathBuf, loser: PathBuf },
}

impl std::fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            DiagnosticKind::Collision { winner, loser } => write!(
                f,
                "{}: {} is ignored, {} is used",
                self.message,
                loser.display(),
                winner.display()
            ),
            DiagnosticKind::Warning | DiagnosticKind::Error => {
                write!(f, "{} ({})", self.message, self.path.display())
            }
        }
    }
}

/// A file found by [`resolve`], with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    pub path: PathBuf,
    pub scope: ResourceScope,
}

/// A folder scanned automatically, and how to scan it.
pub struct AutoDir {
    pub dir: PathBuf,
    pub scan: fn(&Path) -> Vec<PathBuf>,
}

/// Everything [`resolve`] needs for one kind of resource.
pub struct ResolveInput<'a> {
    /// The kind's entries in the project settings, relative to `project_base`.
    pub project_entries: &'a [String],
    pub project_base: &'a Path,
    /// The kind's entries in the global settings, relative to `user_base`.
    pub user_entries: &'a [String],
    pub user_base: &'a Path,
    /// How a folder named in the settings is scanned.
    pub scan_entry_dir: fn(&Path) -> Vec<PathBuf>,
    pub project_auto: Vec<AutoDir>,
    pub user_auto: Vec<AutoDir>,
    /// Untrusted, the project's entries and folders are left out.
    pub project_trusted: bool,
}

/// What the loaders of one kind of resource are given: where to look, the settings
/// entries, the command-line paths and whether discovery is on (`--no-skills` etc. turn it
/// off; command-line paths still load).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceOptions {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The kind's entries in `<cwd>/.pi/settings.json`.
    pub project_entries: Vec<String>,
    /// The kind's entries in `<agent_dir>/settings.json`.
    pub user_entries: Vec<String>,
    /// Paths from the command line (`--skill`, `--prompt-template`, `-e`).
    pub cli_paths: Vec<String>,
    /// Settings entries and automatic folders are used (not with `--no-…`).
    pub discover: bool,
    /// The kind's files from the pi packages of the settings (used with `discover`).
    pub packages: Vec<ResolvedPath>,
    /// The kind's files from `-e npm:…` / `-e git:…` packages (used always).
    pub cli_packages: Vec<ResolvedPath>,
    /// The project is trusted: its settings entries and `.pi` folders (and, for skills,
    /// `.agents/skills` folders) are searched. Untrusted, only the user's and the command
    /// line's are.
    pub project_trusted: bool,
}

impl ResourceOptions {
    /// Options for the settings key `key` (`"skills"`, `"prompts"`, `"extensions"`).
    pub fn from_settings(
        settings: &crate::core::settings::Settings,
        key: &str,
        cwd: &Path,
        agent_dir: &Path,
        cli_paths: Vec<String>,
        discover: bool,
    ) -> ResourceOptions {
        ResourceOptions {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            project_entries: settings.project_strings(key),
            user_entries: settings.global_strings(key),
            cli_paths,
            discover,
            packages: Vec::new(),
            cli_packages: Vec::new(),
            project_trusted: settings.project_trust().is_trusted(),
        }
    }

    /// Options with discovery in `cwd` / `agent_dir` (the project trusted) and nothing
    /// else configured.
    pub fn new(cwd: &Path, agent_dir: &Path) -> ResourceOptions {
        ResourceOptions {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            project_entries: Vec::new(),
            user_entries: Vec::new(),
            cli_paths: Vec::new(),
            discover: true,
            packages: Vec::new(),
            cli_packages: Vec::new(),
            project_trusted: true,
        }
    }

    /// `resolved` (the settings' and folders' files) with the files of pi packages, as
    /// pi orders them: `-e` packages first, the settings' packages last (lowest
    /// precedence, and only with discovery). A file reached twice stays at its first place.
    pub fn with_packages(&self, resolved: Vec<ResolvedPath>) -> Vec<ResolvedPath> {
        let settings_packages = if self.discover {
            self.packages.clone()
        } else {
            Vec::new()
        };
        let mut seen = std::collections::HashSet::new();
        self.cli_packages
            .iter()
            .cloned()
            .chain(resolved)
            .chain(settings_packages)
            .filter(|r| seen.insert(canonical(&r.path)))
            .collect()
    }

    /// `<cwd>/.pi`, the base of project settings entries.
    pub fn project_base(&self) -> PathBuf {
        crate::core::paths::project_config_dir(&self.cwd)
    }
}

/// A path made absolute without touching the file system: `~` expanded, relative paths
/// joined to `base`, `.` and `..` folded (like Node's `path.resolve`).
pub fn resolve_from(base: &Path, input: &str) -> PathBuf {
    let trimmed = input.trim();
    let expanded = if trimmed == "~" {
        home_dir()
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home_dir().join(rest)
    } else if let Some(rest) = trimmed.strip_prefix('~') {
        home_dir().join(rest)
    } else {
        base.join(trimmed)
    };
    normalize(&expanded)
}

/// Folds `.` and `..` components lexically.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The real path of `path` (symlinks resolved), or `path` itself if it cannot be resolved.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `primary` followed by `additional` (resolved against `cwd`), each real file once.
pub fn merge_paths(primary: Vec<PathBuf>, additional: &[String], cwd: &Path) -> Vec<PathBuf> {
    let primary = primary
        .into_iter()
        .map(|path| ResolvedPath {
            path,
            scope: ResourceScope::Cli,
        })
        .collect();
    merge_resolved(primary, additional, cwd)
        .into_iter()
        .map(|r| r.path)
        .collect()
}

/// [`merge_paths`] keeping each path's scope; the `additional` (command-line) paths
/// are [`ResourceScope::Cli`]. A file listed twice keeps its first scope.
pub fn merge_resolved(
    primary: Vec<ResolvedPath>,
    additional: &[String],
    cwd: &Path,
) -> Vec<ResolvedPath> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let extra = additional.iter().map(|p| ResolvedPath {
        path: resolve_from(cwd, p),
        scope: ResourceScope::Cli,
    });
    for r in primary.into_iter().chain(extra) {
        let path = normalize(&if r.path.is_absolute() {
            r.path
        } else {
            cwd.join(r.path)
        });
        if seen.insert(canonical(&path)) {
            out.push(ResolvedPath {
                path,
                scope: r.scope,
            });
        }
    }
    out
}

fn is_override(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-'])
}

fn is_pattern(entry: &str) -> bool {
    is_override(entry) || entry.contains(['*', '?'])
}

fn posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// `path` relative to `base` with `/` separators, walking up with `..` when needed
/// (Node's `path.relative`).
pub fn relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) => posix(rel),
        Err(_) => {
            // Node's path.relative walks up with `..`; only needed for pattern matching.
            let base_parts: Vec<_> = base.components().collect();
            let path_parts: Vec<_> = path.components().collect();
            let common = base_parts
                .iter()
                .zip(&path_parts)
                .take_while(|(a, b)| a == b)
                .count();
            let mut rel = PathBuf::new();
            for _ in common..base_parts.len() {
                rel.push("..");
            }
            for part in &path_parts[common..] {
                rel.push(part);
            }
            posix(&rel)
        }
    }
}

fn matcher(pattern: &str) -> Option<GlobMatcher> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
        .map(|g: Glob| g.compile_matcher())
}

/// The strings a pattern is tried against: path relative to the base, file name and
/// absolute path; for a `SKILL.md` also the same three for its folder.
fn candidates(path: &Path, base: &Path) -> Vec<String> {
    let mut out = vec![
        relative(base, path),
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        posix(path),
    ];
    if path.file_name().is_some_and(|n| n == "SKILL.md")
        && let Some(parent) = path.parent()
    {
        out.push(relative(base, parent));
        out.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        out.push(posix(parent));
    }
    out
}

fn matches_any_glob(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let names = candidates(path, base);
    patterns
        .iter()
        .filter_map(|p| matcher(p))
        .any(|m| names.iter().any(|n| m.is_match(n)))
}

fn matches_any_exact(path: &Path, patterns: &[&str], base: &Path) -> bool {
    let rel = relative(base, path);
    let abs = posix(path);
    let skill_parent = (path.file_name().is_some_and(|n| n == "SKILL.md"))
        .then(|| path.parent())
        .flatten();
    patterns.iter().any(|p| {
        let p = p.strip_prefix("./").unwrap_or(p).replace('\\', "/");
        p == rel
            || p == abs
            || skill_parent.is_some_and(|parent| p == relative(base, parent) || p == posix(parent))
    })
}

/// Which of `files` the settings patterns enable (pi's `applyPatterns`): plain globs
/// keep matches (all files when there are none), `!glob` drops, `+path` / `-path` force an
/// exact path (relative to `base`) in / out.
pub fn apply_patterns(files: &[PathBuf], patterns: &[&str], base: &Path) -> Vec<bool> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for p in patterns {
        if let Some(rest) = p.strip_prefix('+') {
            force_in.push(rest);
        } else if let Some(rest) = p.strip_prefix('-') {
            force_out.push(rest);
        } else if let Some(rest) = p.strip_prefix('!') {
            excludes.push(rest);
        } else {
            includes.push(*p);
        }
    }
    files
        .iter()
        .map(|f| {
            let mut on = includes.is_empty() || matches_any_glob(f, &includes, base);
            if on && !excludes.is_empty() && matches_any_glob(f, &excludes, base) {
                on = false;
            }
            if !on && matches_any_exact(f, &force_in, base) {
                on = true;
            }
            if matches_any_exact(f, &force_out, base) {
                on = false;
            }
            on
        })
        .collect()
}

/// Whether an automatically found file survives the settings' override patterns.
fn enabled_by_overrides(path: &Path, entries: &[String], base: &Path) -> bool {
    let overrides: Vec<&str> = entries
        .iter()
        .map(String::as_str)
        .filter(|e| is_override(e))
        .collect();
    let pick = |prefix: char| -> Vec<&str> {
        overrides
            .iter()
            .filter_map(|o| o.strip_prefix(prefix))
            .collect()
    };
    let (excludes, force_in, force_out) = (pick('!'), pick('+'), pick('-'));
    let mut enabled = true;
    if !excludes.is_empty() && matches_any_glob(path, &excludes, base) {
        enabled = false;
    }
    if !force_in.is_empty() && matches_any_exact(path, &force_in, base) {
        enabled = true;
    }
    if !force_out.is_empty() && matches_any_exact(path, &force_out, base) {
        enabled = false;
    }
    enabled
}

/// A file [`resolve_all`] found, switched on or off by the settings' patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundResource {
    pub path: PathBuf,
    pub scope: ResourceScope,
    pub enabled: bool,
    /// Reached through a settings entry (pi's source `local`), not an automatic folder.
    pub from_settings: bool,
    rank: u8,
}

/// The enabled files of one kind of resource, in pi's precedence order.
pub fn resolve(input: &ResolveInput<'_>) -> Vec<ResolvedPath> {
    resolve_all(input)
        .into_iter()
        .filter(|f| f.enabled)
        .map(|f| ResolvedPath {
            path: f.path,
            scope: f.scope,
        })
        .collect()
}

/// Every file of one kind of resource, enabled or not, in pi's precedence order (what
/// `pi config` lists).
pub fn resolve_all(input: &ResolveInput<'_>) -> Vec<FoundResource> {
    let no_entries: &[String] = &[];
    let (project_entries, project_auto) = if input.project_trusted {
        (input.project_entries, input.project_auto.as_slice())
    } else {
        (no_entries, &[][..])
    };
    let mut found: Vec<FoundResource> = Vec::new();
    let mut add = |path: PathBuf, rank: u8, scope: ResourceScope, enabled: bool| {
        if !found.iter().any(|f| f.path == path) {
            found.push(FoundResource {
                path,
                rank,
                scope,
                enabled,
                from_settings: rank.is_multiple_of(2),
            });
        }
    };
    let settings_sets = [
        (
            project_entries,
            input.project_base,
            0,
            ResourceScope::Project,
        ),
        (input.user_entries, input.user_base, 2, ResourceScope::User),
    ];
    for (entries, base, rank, scope) in settings_sets {
        if entries.is_empty() {
            continue;
        }
        let (patterns, plain): (Vec<&str>, Vec<&str>) = entries
            .iter()
            .map(String::as_str)
            .partition(|e| is_pattern(e));
        let mut files = Vec::new();
        for entry in plain {
            let path = resolve_from(base, entry);
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => files.push(path),
                Ok(m) if m.is_dir() => files.extend((input.scan_entry_dir)(&path)),
                _ => {}
            }
        }
        let enabled = apply_patterns(&files, &patterns, base);
        for (file, on) in files.into_iter().zip(enabled) {
            add(file, rank, scope, on);
        }
    }
    let auto_sets = [
        (
            project_auto,
            project_entries,
            input.project_base,
            1,
            ResourceScope::Project,
        ),
        (
            input.user_auto.as_slice(),
            input.user_entries,
            input.user_base,
            3,
            ResourceScope::User,
        ),
    ];
    for (dirs, entries, base, rank, scope) in auto_sets {
        for auto in dirs {
            for file in (auto.scan)(&auto.dir) {
                let on = enabled_by_overrides(&file, entries, base);
                add(file, rank, scope, on);
            }
        }
    }
    found.sort_by_key(|f| f.rank);
    let mut seen = std::collections::HashSet::new();
    found
        .into_iter()
        .filter(|f| seen.insert(canonical(&f.path)))
        .collect()
}

/// A directory entry with symlinks followed.
#[derive(Debug, Clone)]
pub struct DirEntry {
    pub name: String,
    pub path: PathBuf,
    pub is_file: bool,
    pub is_dir: bool,
}

/// The entries of `dir` sorted by name (Node's `readdirSync` order), symlinks resolved;
/// broken symlinks and unreadable folders yield nothing.
pub fn read_dir_sorted(dir: &Path) -> Vec<DirEntry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<DirEntry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let meta = std::fs::metadata(&path).ok()?;
            Some(DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                path,
                is_file: meta.is_file(),
                is_dir: meta.is_dir(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    entries
}

/// The ignore rules of the folders from the scan root down to the current folder.
#[derive(Default, Clone)]
pub struct IgnoreRules {
    levels: Vec<Gitignore>,
}

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

impl IgnoreRules {
    /// The rules with those of `dir` added (deeper rules win, as in git).
    pub fn enter(&self, dir: &Path) -> IgnoreRules {
        let mut next = self.clone();
        let present: Vec<PathBuf> = IGNORE_FILE_NAMES
            .iter()
            .map(|n| dir.join(n))
            .filter(|p| p.is_file())
            .collect();
        if !present.is_empty() {
            let mut builder = GitignoreBuilder::new(dir);
            for file in &present {
                // An unreadable or partly invalid ignore file only loses its bad lines.
                let _ = builder.add(file);
            }
            if let Ok(gi) = builder.build() {
                next.levels.push(gi);
            }
        }
        next
    }

    /// Whether `path` is excluded.
    pub fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        for level in self.levels.iter().rev() {
            match level.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }
}

/// Entries of `dir` a scan may look at: no dot files, no `node_modules`, nothing ignored.
pub fn visible_entries(dir: &Path, rules: &IgnoreRules) -> Vec<DirEntry> {
    read_dir_sorted(dir)
        .into_iter()
        .filter(|e| !e.name.starts_with('.') && e.name != "node_modules")
        .filter(|e| !rules.ignores(&e.path, e.is_dir))
        .collect()
}

/// `.md` files directly in `dir` (prompt folders are not scanned recursively).
pub fn markdown_files_flat(dir: &Path) -> Vec<PathBuf> {
    let rules = IgnoreRules::default().enter(dir);
    visible_entries(dir, &rules)
        .into_iter()
        .filter(|e| e.is_file && e.name.ends_with(".md"))
        .map(|e| e.path)
        .collect()
}

/// `.md` files in `dir` and its subfolders.
pub fn markdown_files_recursive(dir: &Path) -> Vec<PathBuf> {
    files_recursive(dir, ".md")
}

/// Files ending in `suffix` in `dir` and its subfolders.
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

/// `.json` files directly in `dir` (the automatic `themes/` folders).
pub fn theme_files_flat(dir: &Path) -> Vec<PathBuf> {
    let rules = IgnoreRules::default().enter(dir);
    visible_entries(dir, &rules)
        .into_iter()
        .filter(|e| e.is_file && e.name.ends_with(".json"))
        .map(|e| e.path)
        .collect()
}

/// `.json` files in a folder named by a `themes` settings entry, and its subfolders.
pub fn theme_files_recursive(dir: &Path) -> Vec<PathBuf> {
    files_recursive(dir, ".json")
}

/// Where themes are looked for: the `themes` settings entries and the `themes/` folders
/// of the project (`.pi/themes`) and the user (`<agent dir>/themes`).
fn theme_resolve_input<'a>(
    options: &'a ResourceOptions,
    project_base: &'a Path,
) -> ResolveInput<'a> {
    ResolveInput {
        project_entries: &options.project_entries,
        project_base,
        user_entries: &options.user_entries,
        user_base: &options.agent_dir,
        scan_entry_dir: theme_files_recursive,
        project_auto: vec![AutoDir {
            dir: project_base.join("themes"),
            scan: theme_files_flat,
        }],
        user_auto: vec![AutoDir {
            dir: options.agent_dir.join("themes"),
            scan: theme_files_flat,
        }],
        project_trusted: options.project_trusted,
    }
}

/// Every theme file of the settings and folders, enabled or not (for `pi config`).
pub fn all_theme_files(options: &ResourceOptions) -> Vec<FoundResource> {
    resolve_all(&theme_resolve_input(options, &options.project_base()))
}

/// The theme files to load, in pi's precedence order: `-e` packages, the settings'
/// entries and folders (project before user), the settings' packages, then the
/// command-line paths.
pub fn theme_files(options: &ResourceOptions) -> Vec<PathBuf> {
    let resolved = if options.discover {
        resolve(&theme_resolve_input(options, &options.project_base()))
    } else {
        Vec::new()
    };
    let resolved = options.with_packages(resolved);
    merge_resolved(resolved, &options.cli_paths, &options.cwd)
        .into_iter()
        .map(|r| r.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    fn names(paths: &[ResolvedPath], root: &Path) -> Vec<String> {
        paths
            .iter()
            .map(|p| posix(p.path.strip_prefix(root).unwrap()))
            .collect()
    }

    #[test]
    fn resolve_orders_project_settings_project_auto_user_settings_user_auto() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let project = root.join("proj/.pi");
        let user = root.join("agent");
        touch(&project.join("prompts/b.md"));
        touch(&project.join("extra/a.md"));
        touch(&user.join("prompts/c.md"));
        touch(&user.join("mine/d.md"));
        touch(&user.join("mine/sub/e.md"));
        let input = ResolveInput {
            project_entries: &["extra".to_string()],
            project_base: &project,
            user_entries: &["mine".to_string(), "!e.md".to_string()],
            user_base: &user,
            scan_entry_dir: markdown_files_recursive,
            project_auto: vec![AutoDir {
                dir: project.join("prompts"),
                scan: markdown_files_flat,
            }],
            user_auto: vec![AutoDir {
                dir: user.join("prompts"),
                scan: markdown_files_flat,
            }],
            project_trusted: true,
        };
        assert_eq!(
            names(&resolve(&input), root),
            [
                "proj/.pi/extra/a.md",
                "proj/.pi/prompts/b.md",
                "agent/mine/d.md",
                "agent/prompts/c.md"
            ]
        );
    }

    #[test]
    fn override_patterns_disable_and_force_auto_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("agent");
        touch(&base.join("prompts/keep.md"));
        touch(&base.join("prompts/drop.md"));
        touch(&base.join("prompts/back.md"));
        let entries: Vec<String> = ["!prompts/*", "+prompts/keep.md", "-prompts/back.md"]
            .map(String::from)
            .to_vec();
        let input = ResolveInput {
            project_entries: &[],
            project_base: dir.path(),
            user_entries: &entries,
            user_base: &base,
            scan_entry_dir: markdown_files_recursive,
            project_auto: vec![],
            user_auto: vec![AutoDir {
                dir: base.join("prompts"),
                scan: markdown_files_flat,
            }],
            project_trusted: true,
        };
        assert_eq!(
            names(&resolve(&input), dir.path()),
            ["agent/prompts/keep.md"]
        );
    }

    #[test]
    fn scans_skip_dot_files_node_modules_and_ignored_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("a.md"));
        touch(&root.join(".hidden.md"));
        touch(&root.join("node_modules/x.md"));
        touch(&root.join("skip/y.md"));
        touch(&root.join("sub/z.md"));
        touch(&root.join("sub/w.md"));
        std::fs::write(root.join(".gitignore"), "skip/\n").unwrap();
        std::fs::write(root.join("sub/.ignore"), "w.md\n").unwrap();
        let rel: Vec<String> = markdown_files_recursive(root)
            .iter()
            .map(|p| posix(p.strip_prefix(root).unwrap()))
            .collect();
        assert_eq!(rel, ["a.md", "sub/z.md"]);
    }

    #[test]
    fn merge_paths_resolves_against_cwd_and_drops_symlinked_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("real/a.md"));
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        let merged = merge_paths(
            vec![root.join("real/a.md")],
            &["link/a.md".to_string(), "./other/../b.md".to_string()],
            root,
        );
        #[cfg(unix)]
        assert_eq!(merged, [root.join("real/a.md"), root.join("b.md")]);
        let _ = merged;
    }
}
