//! The package manager: installs, removes and updates pi packages with the user's `npm`
//! and `git`, keeps the `packages` lists of the settings files, and resolves the
//! configured packages to resource files (installing missing ones first, as pi does at
//! startup).
//!
//! Where packages live (pi 1.6's layout, so pi and pi-rs share them):
//!
//! | source | user (global) | project (`-l`) | temporary (`-e`) |
//! |---|---|---|---|
//! | npm | `<agent_dir>/npm/node_modules/<name>` (before pi 0.74: `npm install -g`, still found there when not in the agent folder) | `<cwd>/.pi/npm/node_modules/<name>` | `<agent_dir>/tmp/extensions/npm/<hash>/node_modules/<name>` |
//! | git | `<agent_dir>/git/<host>/<path>` | `<cwd>/.pi/git/<host>/<path>` | `<agent_dir>/tmp/extensions/git-<host>/<hash>/<path>` |
//! | path | used where it is | same | same |

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::collect::{PackageFile, ResourceKind, collect_package};
use super::run::{CommandOutput, PackageError, capture, dim, run};
use super::source::{GitSource, NpmSource, PackageSource};
use crate::core::resource_paths::{ResolvedPath, ResourceScope, canonical, resolve_from};
use crate::core::settings::{Settings, write_json_atomic};

/// Whose package it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageScope {
    /// `~/.pi/agent/settings.json`.
    User,
    /// `<cwd>/.pi/settings.json`.
    Project,
    /// `-e npm:…` / `-e git:…`: this run only.
    Temporary,
}

impl PackageScope {
    fn resource_scope(self) -> ResourceScope {
        match self {
            PackageScope::User => ResourceScope::User,
            PackageScope::Project => ResourceScope::Project,
            PackageScope::Temporary => ResourceScope::Cli,
        }
    }
}

/// One resource file of a resolved package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageResource {
    pub kind: ResourceKind,
    pub path: PathBuf,
    pub enabled: bool,
    pub scope: PackageScope,
    /// The package's source as written in the settings (or on the command line).
    pub source: String,
    /// The package's root (a single-file local package: its folder); `pi config`'s
    /// filter patterns are relative to it.
    pub base_dir: PathBuf,
}

/// The resources of the configured packages, and what was wrong without stopping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedPackages {
    pub resources: Vec<PackageResource>,
    pub warnings: Vec<String>,
}

impl ResolvedPackages {
    /// The enabled files of `kind`, in precedence order.
    pub fn enabled(&self, kind: ResourceKind) -> Vec<ResolvedPath> {
        self.resources
            .iter()
            .filter(|r| r.kind == kind && r.enabled)
            .map(|r| ResolvedPath {
                path: r.path.clone(),
                scope: r.scope.resource_scope(),
            })
            .collect()
    }

    /// The enabled files of `kind` from the package `source`.
    pub fn enabled_of(&self, kind: ResourceKind, source: &str) -> Vec<PathBuf> {
        self.resources
            .iter()
            .filter(|r| r.kind == kind && r.enabled && r.source == source)
            .map(|r| r.path.clone())
            .collect()
    }

    fn add(&mut self, file: PackageFile, scope: PackageScope, source: &str, base_dir: &Path) {
        let known = self
            .resources
            .iter()
            .any(|r| r.kind == file.kind && canonical(&r.path) == canonical(&file.path));
        if !known {
            self.resources.push(PackageResource {
                kind: file.kind,
                path: file.path,
                enabled: file.enabled,
                scope,
                source: source.to_string(),
                base_dir: base_dir.to_path_buf(),
            });
        }
    }
}

/// A `packages` entry for `pi list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredPackage {
    pub source: String,
    pub scope: PackageScope,
    /// Written in the object form (with filters).
    pub filtered: bool,
    /// Where it is installed, if it is.
    pub installed_path: Option<PathBuf>,
}

/// `PI_OFFLINE` as pi reads it.
pub fn offline_from_env() -> bool {
    std::env::var("PI_OFFLINE")
        .map(|v| matches!(v.to_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// See the module documentation.
#[derive(Debug)]
pub struct PackageManager {
    cwd: PathBuf,
    agent_dir: PathBuf,
    npm_command: Option<Vec<String>>,
    output: CommandOutput,
    progress: bool,
    offline: bool,
    npm_root: RefCell<Option<PathBuf>>,
    /// From the settings' [`crate::core::trust::ProjectTrust`].
    project_trusted: bool,
}

fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("source").and_then(Value::as_str),
        _ => None,
    }
}

fn entries(value: Option<&Value>) -> Vec<Value> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|e| entry_source(e).is_some())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// `path` relative to `base` the way Node's `path.relative` writes it.
fn relative(base: &Path, path: &Path) -> String {
    let b: Vec<_> = base.components().collect();
    let p: Vec<_> = path.components().collect();
    let common = b.iter().zip(&p).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for part in &p[common..] {
        out.push(part);
    }
    out.to_string_lossy().into_owned()
}

fn read_settings_file(path: &Path) -> Result<Map<String, Value>, PackageError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => {
            return Err(PackageError::Settings {
                path: path.to_path_buf(),
                reason: format!("cannot read it ({e})"),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(PackageError::Settings {
            path: path.to_path_buf(),
            reason: "it is not a JSON object".into(),
        }),
        Err(e) => Err(PackageError::Settings {
            path: path.to_path_buf(),
            reason: format!("it is not valid JSON ({e})"),
        }),
    }
}

impl PackageManager {
    /// A manager for `cwd` and the agent directory; `settings` gives `npmCommand`.
    pub fn new(cwd: &Path, agent_dir: &Path, settings: &Settings) -> PackageManager {
        let npm_command = settings
            .get("npmCommand")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            });
        PackageManager {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            npm_command,
            output: CommandOutput::Capture,
            progress: false,
            offline: offline_from_env(),
            npm_root: RefCell::new(None),
            project_trusted: settings.project_trust().is_trusted(),
        }
    }

    /// The project's settings and package folders are used only when it is trusted.
    fn allow(&self, scope: PackageScope) -> Result<(), PackageError> {
        if scope == PackageScope::Project && !self.project_trusted {
            return Err(PackageError::ProjectNotTrusted);
        }
        Ok(())
    }

    /// `npm` and `git` print to the terminal and progress lines go to stdout (the
    /// package commands).
    pub fn with_terminal_output(mut self) -> PackageManager {
        self.output = CommandOutput::Inherit;
        self.progress = true;
        self
    }

    /// No installs or updates over the network (`--offline`, `PI_OFFLINE`).
    pub fn with_offline(mut self, offline: bool) -> PackageManager {
        self.offline = self.offline || offline;
        self
    }

    fn say(&self, line: &str) {
        if self.progress {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", dim(line));
            let _ = out.flush();
        }
    }

    fn npm(&self) -> Result<(String, Vec<String>), PackageError> {
        match &self.npm_command {
            Some(cmd) if !cmd.is_empty() => {
                let program = cmd[0].clone();
                if program.is_empty() {
                    return Err(PackageError::InvalidNpmCommand);
                }
                Ok((program, cmd[1..].to_vec()))
            }
            _ => Ok(("npm".to_string(), Vec::new())),
        }
    }

    fn run_npm(&self, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let (program, mut all) = self.npm()?;
        all.extend(args.iter().map(|s| s.to_string()));
        run(&program, &all, cwd, self.output)
    }

    fn capture_npm(&self, args: &[&str]) -> Result<String, PackageError> {
        let (program, mut all) = self.npm()?;
        all.extend(args.iter().map(|s| s.to_string()));
        capture(&program, &all, Some(&self.cwd), &[])
    }

    fn git(&self, args: &[&str], cwd: Option<&Path>) -> Result<(), PackageError> {
        let all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        run("git", &all, cwd, self.output)
    }

    fn git_capture(&self, args: &[&str], cwd: &Path) -> Result<String, PackageError> {
        let all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        capture("git", &all, Some(cwd), &[("GIT_TERMINAL_PROMPT", "0")])
    }

    /// `npm root -g` (for bun: next to `bun pm bin -g`), asked once.
    fn global_npm_root(&self) -> Result<PathBuf, PackageError> {
        if let Some(root) = self.npm_root.borrow().as_ref() {
            return Ok(root.clone());
        }
        let (program, _) = self.npm()?;
        let root = if program == "bun" {
            let bin = PathBuf::from(self.capture_npm(&["pm", "bin", "-g"])?);
            bin.parent()
                .unwrap_or(Path::new("/"))
                .join("install/global/node_modules")
        } else {
            PathBuf::from(self.capture_npm(&["root", "-g"])?)
        };
        *self.npm_root.borrow_mut() = Some(root.clone());
        Ok(root)
    }

    /// Where pi 1.6 keeps `-e` packages: `<agent_dir>/tmp/extensions/<prefix>/<hash>/<suffix>`,
    /// the hash being the first 8 hex digits of sha256 of `<prefix>-<suffix>[@<ref>]` (so
    /// each pinned git ref has its own checkout, and pi and pi-rs share the folders).
    fn temporary_dir(
        agent_dir: &Path,
        prefix: &str,
        suffix: &str,
        git_ref: Option<&str>,
    ) -> PathBuf {
        let key = match git_ref {
            Some(r) => format!("{prefix}-{suffix}@{r}"),
            None => format!("{prefix}-{suffix}"),
        };
        let digest = Sha256::digest(key.as_bytes());
        let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        let dir = Self::temporary_root(agent_dir).join(prefix).join(hash);
        if suffix.is_empty() {
            dir
        } else {
            dir.join(suffix)
        }
    }

    /// `<agent_dir>/tmp/extensions`, created private to the user (as pi 1.6 does).
    fn temporary_root(agent_dir: &Path) -> PathBuf {
        let root = agent_dir.join("tmp").join("extensions");
        if !root.exists() {
            let _ = std::fs::create_dir_all(&root);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700));
            }
        }
        root
    }

    fn project_dir(&self) -> PathBuf {
        crate::core::paths::project_config_dir(&self.cwd)
    }

    fn npm_install_root(&self, scope: PackageScope) -> Result<PathBuf, PackageError> {
        Ok(match scope {
            PackageScope::Temporary => Self::temporary_dir(&self.agent_dir, "npm", "", None),
            PackageScope::Project => self.project_dir().join("npm"),
            PackageScope::User => self.agent_dir.join("npm"),
        })
    }

    fn npm_install_path(
        &self,
        npm: &NpmSource,
        scope: PackageScope,
    ) -> Result<PathBuf, PackageError> {
        Ok(match scope {
            PackageScope::Temporary => Self::temporary_dir(&self.agent_dir, "npm", "", None)
                .join("node_modules")
                .join(&npm.name),
            PackageScope::Project => self.project_dir().join("npm/node_modules").join(&npm.name),
            PackageScope::User => {
                let managed = self.agent_dir.join("npm/node_modules").join(&npm.name);
                if managed.exists() {
                    return Ok(managed);
                }
                // Installed by pi before 0.74 (or pi-rs before it followed 1.6) with
                // `npm install -g`: used where it is until it is installed again.
                match self.global_npm_root() {
                    Ok(root) if root.join(&npm.name).exists() => root.join(&npm.name),
                    _ => managed,
                }
            }
        })
    }

    /// The package manager `npmCommand` runs (`npm`, `pnpm`, `bun`, …): the program's
    /// name, or the one it wraps (`["mise", "exec", "--", "pnpm"]`).
    fn package_manager_name(&self) -> String {
        let name = |s: &str| {
            let base = Path::new(s)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            base.trim_end_matches(".exe")
                .trim_end_matches(".cmd")
                .to_string()
        };
        let Ok((program, args)) = self.npm() else {
            return "npm".into();
        };
        if let Some(i) = args.iter().rposition(|a| a == "--") {
            return args.get(i + 1).map_or_else(|| name(&program), |a| name(a));
        }
        let direct = name(&program);
        if ["npm", "pnpm", "bun"].contains(&direct.as_str()) {
            return direct;
        }
        args.iter()
            .map(|a| name(a))
            .find(|a| ["npm", "pnpm", "bun"].contains(&a.as_str()))
            .unwrap_or(direct)
    }

    /// Installs `spec` into the managed folder `root` as pi 1.6 does: peers are not
    /// installed (pi provides its own packages to extensions), no audit or funding notes.
    fn npm_install_into(&self, spec: &str, root: &Path) -> Result<(), PackageError> {
        Self::ensure_npm_project(root)?;
        // npm writes broken lock file paths when --prefix goes through a symlink.
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let root = root.to_string_lossy().into_owned();
        let args: Vec<&str> = match self.package_manager_name().as_str() {
            "bun" => vec!["install", spec, "--cwd", &root, "--omit=peer"],
            "pnpm" => vec![
                "install",
                spec,
                "--prefix",
                &root,
                "--config.auto-install-peers=false",
                "--config.strict-peer-dependencies=false",
                "--config.strict-dep-builds=false",
            ],
            _ => vec![
                "install",
                spec,
                "--prefix",
                &root,
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
            ],
        };
        self.run_npm(&args, None)
    }

    fn git_install_path(&self, git: &GitSource, scope: PackageScope) -> PathBuf {
        match scope {
            PackageScope::Temporary => Self::temporary_dir(
                &self.agent_dir,
                &format!("git-{}", git.host),
                &git.path,
                git.git_ref.as_deref(),
            ),
            PackageScope::Project => self
                .project_dir()
                .join("git")
                .join(&git.host)
                .join(&git.path),
            PackageScope::User => self.agent_dir.join("git").join(&git.host).join(&git.path),
        }
    }

    fn git_install_root(&self, scope: PackageScope) -> Option<PathBuf> {
        match scope {
            PackageScope::Temporary => None,
            PackageScope::Project => Some(self.project_dir().join("git")),
            PackageScope::User => Some(self.agent_dir.join("git")),
        }
    }

    fn base_dir(&self, scope: PackageScope) -> PathBuf {
        match scope {
            PackageScope::Project => self.project_dir(),
            PackageScope::User => self.agent_dir.clone(),
            PackageScope::Temporary => self.cwd.clone(),
        }
    }

    fn settings_path(&self, scope: PackageScope) -> PathBuf {
        self.base_dir(scope).join("settings.json")
    }

    fn io(e: std::io::Error, what: &Path) -> PackageError {
        PackageError::Io(format!("{}: {e}", what.display()))
    }

    fn ensure_git_ignore(dir: &Path) -> Result<(), PackageError> {
        std::fs::create_dir_all(dir).map_err(|e| Self::io(e, dir))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n!.gitignore\n").map_err(|e| Self::io(e, &ignore))?;
        }
        Ok(())
    }

    fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
        Self::ensure_git_ignore(root)?;
        let manifest = root.join("package.json");
        if !manifest.exists() {
            let text = "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}";
            std::fs::write(&manifest, text).map_err(|e| Self::io(e, &manifest))?;
        }
        Ok(())
    }

    fn install_npm(&self, npm: &NpmSource, scope: PackageScope) -> Result<(), PackageError> {
        let root = self.npm_install_root(scope)?;
        self.npm_install_into(&npm.spec, &root)
    }

    /// How the dependencies of a git package are installed (pi 1.6: production ones
    /// only, no peers).
    fn git_dependency_args(&self) -> Vec<&'static str> {
        match self.package_manager_name().as_str() {
            "bun" => vec!["install", "--omit=dev", "--omit=peer"],
            "pnpm" => vec![
                "install",
                "--prod",
                "--config.auto-install-peers=false",
                "--config.strict-peer-dependencies=false",
                "--config.strict-dep-builds=false",
            ],
            "npm" => vec![
                "install",
                "--omit=dev",
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
            ],
            _ => vec!["install"],
        }
    }

    fn install_git(&self, git: &GitSource, scope: PackageScope) -> Result<(), PackageError> {
        let target = self.git_install_path(git, scope);
        if target.exists() {
            return Ok(());
        }
        if let Some(root) = self.git_install_root(scope) {
            Self::ensure_git_ignore(&root)?;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Self::io(e, parent))?;
        }
        let target_text = target.to_string_lossy().into_owned();
        self.git(&["clone", &git.repo, &target_text], None)?;
        if let Some(r) = &git.git_ref {
            self.git(&["checkout", r], Some(&target))?;
        }
        if target.join("package.json").exists() {
            self.run_npm(&self.git_dependency_args(), Some(&target))?;
        }
        Ok(())
    }

    fn install_parsed(
        &self,
        parsed: &PackageSource,
        scope: PackageScope,
    ) -> Result<(), PackageError> {
        match parsed {
            PackageSource::Npm(npm) => self.install_npm(npm, scope),
            PackageSource::Git(git) => self.install_git(git, scope),
            PackageSource::Local { path } => {
                let resolved = resolve_from(&self.cwd, path);
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(PackageError::PathMissing(resolved))
                }
            }
        }
    }

    fn scope_of(local: bool) -> PackageScope {
        if local {
            PackageScope::Project
        } else {
            PackageScope::User
        }
    }

    /// The value of `key` in the settings file of `scope` as it is on disk now.
    pub fn setting(&self, scope: PackageScope, key: &str) -> Result<Option<Value>, PackageError> {
        self.allow(scope)?;
        let map = read_settings_file(&self.settings_path(scope))?;
        Ok(map.get(key).cloned())
    }

    /// Writes `key` into the settings file of `scope`, keeping everything else in it
    /// (pi `config`'s writes).
    pub fn set_setting(
        &self,
        scope: PackageScope,
        key: &str,
        value: Value,
    ) -> Result<(), PackageError> {
        self.allow(scope)?;
        let path = self.settings_path(scope);
        let mut map = read_settings_file(&path)?;
        map.insert(key.to_string(), value);
        write_json_atomic(&path, &Value::Object(map)).map_err(|e| PackageError::Settings {
            path: path.clone(),
            reason: format!("cannot write it ({e})"),
        })
    }

    /// `pi install <source> [-l]`: installs and adds it to the settings' `packages`
    /// (once; a source already listed is left as written).
    pub fn install_and_persist(&self, source: &str, local: bool) -> Result<(), PackageError> {
        let scope = Self::scope_of(local);
        self.allow(scope)?;
        self.say(&format!("Installing {source}..."));
        self.install_parsed(&PackageSource::parse(source), scope)?;
        self.add_to_settings(source, scope)
    }

    /// `pi remove <source> [-l]`: uninstalls and drops it from the settings. `false`
    /// when no settings entry matched.
    pub fn remove_and_persist(&self, source: &str, local: bool) -> Result<bool, PackageError> {
        let scope = Self::scope_of(local);
        self.allow(scope)?;
        self.say(&format!("Removing {source}..."));
        match PackageSource::parse(source) {
            PackageSource::Npm(npm) => {
                let root = self.npm_install_root(scope)?;
                if root.exists() {
                    let root = std::fs::canonicalize(&root).unwrap_or(root);
                    let root_text = root.to_string_lossy().into_owned();
                    match self.package_manager_name().as_str() {
                        "bun" => {
                            self.run_npm(&["uninstall", &npm.name, "--cwd", &root_text], None)?
                        }
                        "pnpm" => {
                            self.run_npm(&["uninstall", &npm.name, "--prefix", &root_text], None)?
                        }
                        _ => self.run_npm(
                            &[
                                "uninstall",
                                &npm.name,
                                "--prefix",
                                &root_text,
                                "--legacy-peer-deps",
                                "--no-audit",
                                "--no-fund",
                            ],
                            None,
                        )?,
                    }
                }
            }
            PackageSource::Git(git) => {
                let target = self.git_install_path(&git, scope);
                if target.exists() {
                    std::fs::remove_dir_all(&target).map_err(|e| Self::io(e, &target))?;
                    if let Some(root) = self.git_install_root(scope) {
                        prune_empty_parents(&target, &root);
                    }
                }
            }
            PackageSource::Local { .. } => {}
        }
        self.remove_from_settings(source, scope)
    }

    fn match_key_for_input(&self, source: &str) -> String {
        match PackageSource::parse(source) {
            PackageSource::Npm(n) => format!("npm:{}", n.name),
            PackageSource::Git(g) => format!("git:{}/{}", g.host, g.path),
            PackageSource::Local { path } => {
                format!("local:{}", resolve_from(&self.cwd, &path).display())
            }
        }
    }

    /// pi's package identity: npm name, git host and path, or the absolute path.
    fn identity(&self, source: &str, scope: PackageScope) -> String {
        match PackageSource::parse(source) {
            PackageSource::Local { path } => {
                format!(
                    "local:{}",
                    resolve_from(&self.base_dir(scope), &path).display()
                )
            }
            _ => self.match_key_for_input(source),
        }
    }

    fn add_to_settings(&self, source: &str, scope: PackageScope) -> Result<(), PackageError> {
        let path = self.settings_path(scope);
        let mut map = read_settings_file(&path)?;
        let mut list = entries(map.get("packages"));
        let key = self.match_key_for_input(source);
        if list
            .iter()
            .filter_map(entry_source)
            .any(|s| self.identity(s, scope) == key)
        {
            return Ok(());
        }
        let written = match PackageSource::parse(source) {
            PackageSource::Local { path: p } => {
                let rel = relative(&self.base_dir(scope), &resolve_from(&self.cwd, &p));
                if rel.is_empty() { ".".to_string() } else { rel }
            }
            _ => source.to_string(),
        };
        list.push(Value::String(written));
        map.insert("packages".into(), Value::Array(list));
        write_json_atomic(&path, &Value::Object(map)).map_err(|e| PackageError::Settings {
            path: path.clone(),
            reason: format!("cannot write it ({e})"),
        })
    }

    fn remove_from_settings(
        &self,
        source: &str,
        scope: PackageScope,
    ) -> Result<bool, PackageError> {
        let path = self.settings_path(scope);
        let mut map = read_settings_file(&path)?;
        let list = entries(map.get("packages"));
        let key = self.match_key_for_input(source);
        let kept: Vec<Value> = list
            .iter()
            .filter(|e| entry_source(e).is_none_or(|s| self.identity(s, scope) != key))
            .cloned()
            .collect();
        if kept.len() == list.len() {
            return Ok(false);
        }
        map.insert("packages".into(), Value::Array(kept));
        write_json_atomic(&path, &Value::Object(map)).map_err(|e| PackageError::Settings {
            path: path.clone(),
            reason: format!("cannot write it ({e})"),
        })?;
        Ok(true)
    }

    fn configured(&self) -> Result<Vec<(Value, PackageScope)>, PackageError> {
        let mut out = Vec::new();
        for scope in [PackageScope::User, PackageScope::Project] {
            if self.allow(scope).is_err() {
                continue;
            }
            let map = read_settings_file(&self.settings_path(scope))?;
            out.extend(entries(map.get("packages")).into_iter().map(|e| (e, scope)));
        }
        Ok(out)
    }

    fn installed_path(
        &self,
        source: &str,
        scope: PackageScope,
    ) -> Result<Option<PathBuf>, PackageError> {
        let path = match PackageSource::parse(source) {
            PackageSource::Npm(n) => self.npm_install_path(&n, scope)?,
            PackageSource::Git(g) => self.git_install_path(&g, scope),
            PackageSource::Local { path } => resolve_from(&self.base_dir(scope), &path),
        };
        Ok(path.exists().then_some(path))
    }

    /// `pi list`: the `packages` of the user's settings, then the project's.
    pub fn list_configured(&self) -> Result<Vec<ConfiguredPackage>, PackageError> {
        let mut out = Vec::new();
        for (entry, scope) in self.configured()? {
            let Some(source) = entry_source(&entry) else {
                continue;
            };
            out.push(ConfiguredPackage {
                source: source.to_string(),
                scope,
                filtered: entry.is_object(),
                installed_path: self.installed_path(source, scope)?,
            });
        }
        Ok(out)
    }

    fn no_match_message(&self, source: &str, configured: &[(Value, PackageScope)]) -> String {
        let wanted = source.trim();
        let suggestion = configured
            .iter()
            .filter_map(|(e, _)| entry_source(e))
            .find(|s| match PackageSource::parse(s) {
                PackageSource::Npm(n) => wanted == n.name || wanted == n.spec,
                PackageSource::Git(g) => {
                    let short = format!("{}/{}", g.host, g.path);
                    wanted == short
                        || g.git_ref
                            .as_ref()
                            .is_some_and(|r| wanted == format!("{short}@{r}"))
                }
                PackageSource::Local { .. } => false,
            });
        match suggestion {
            Some(s) => format!("No matching package found for {source}. Did you mean {s}?"),
            None => format!("No matching package found for {source}"),
        }
    }

    /// `pi update [source]`: updates every configured package that is not pinned (or the
    /// one `source` names). Nothing happens offline.
    pub fn update(&self, source: Option<&str>) -> Result<(), PackageError> {
        let configured = self.configured()?;
        let wanted = source.map(|s| self.match_key_for_input(s));
        let mut targets = Vec::new();
        for (entry, scope) in &configured {
            let Some(s) = entry_source(entry) else {
                continue;
            };
            if wanted
                .as_ref()
                .is_none_or(|w| *w == self.identity(s, *scope))
            {
                targets.push((s.to_string(), *scope));
            }
        }
        if let Some(s) = source
            && targets.is_empty()
        {
            return Err(PackageError::NoMatch(self.no_match_message(s, &configured)));
        }
        if self.offline {
            return Ok(());
        }
        for (s, scope) in targets {
            let parsed = PackageSource::parse(&s);
            if parsed.pinned_or_local() {
                continue;
            }
            match parsed {
                PackageSource::Npm(npm) => self.update_npm(&s, &npm, scope)?,
                PackageSource::Git(git) => {
                    self.say(&format!("Updating {s}..."));
                    self.update_git(&git, scope)?;
                }
                PackageSource::Local { .. } => {}
            }
        }
        Ok(())
    }

    fn update_npm(
        &self,
        source: &str,
        npm: &NpmSource,
        scope: PackageScope,
    ) -> Result<(), PackageError> {
        let path = self.npm_install_path(npm, scope)?;
        let installed = installed_version(&path);
        if let Some(current) = &installed {
            // A failed lookup updates anyway, as pi does.
            let latest = self
                .capture_npm(&["view", &npm.name, "version", "--json"])
                .ok()
                .and_then(|out| serde_json::from_str::<String>(out.trim()).ok());
            if latest.as_ref() == Some(current) {
                return Ok(());
            }
        }
        self.say(&format!("Updating {source}..."));
        let spec = format!("{}@latest", npm.name);
        let root = self.npm_install_root(scope)?;
        self.npm_install_into(&spec, &root)
    }

    /// Fetches the checkout's upstream branch (or origin's HEAD) and resets to it.
    fn update_git(&self, git: &GitSource, scope: PackageScope) -> Result<(), PackageError> {
        let dir = self.git_install_path(git, scope);
        if !dir.exists() {
            return self.install_git(git, scope);
        }
        let upstream = self
            .git_capture(&["rev-parse", "--abbrev-ref", "@{upstream}"], &dir)
            .ok()
            .and_then(|u| u.strip_prefix("origin/").map(str::to_string))
            .filter(|b| !b.is_empty());
        let (target, refspec) = match upstream {
            Some(branch) => (
                "@{upstream}".to_string(),
                format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            ),
            None => {
                let _ = self.git_capture(&["remote", "set-head", "origin", "-a"], &dir);
                let branch = self
                    .git_capture(&["symbolic-ref", "refs/remotes/origin/HEAD"], &dir)
                    .ok()
                    .map(|r| r.trim_start_matches("refs/remotes/origin/").to_string())
                    .filter(|b| !b.is_empty());
                let refspec = match branch {
                    Some(b) => format!("+refs/heads/{b}:refs/remotes/origin/{b}"),
                    None => "+HEAD:refs/remotes/origin/HEAD".to_string(),
                };
                ("origin/HEAD".to_string(), refspec)
            }
        };
        self.git(
            &["fetch", "--prune", "--no-tags", "origin", &refspec],
            Some(&dir),
        )?;
        let head = self.git_capture(&["rev-parse", "HEAD"], &dir)?;
        let wanted = self.git_capture(&["rev-parse", &target], &dir)?;
        if head == wanted {
            return Ok(());
        }
        self.git(&["reset", "--hard", &target], Some(&dir))?;
        self.git(&["clean", "-fdx"], Some(&dir))?;
        if dir.join("package.json").exists() {
            self.run_npm(&self.git_dependency_args(), Some(&dir))?;
        }
        Ok(())
    }

    /// The resources of the `packages` in `settings` (the project's entries first; a
    /// package in both files counts once, as the project's). Missing packages are
    /// installed first; offline they are left out with a warning. A package that cannot
    /// be installed is an error naming it.
    pub fn resolve(&self, settings: &Settings) -> Result<ResolvedPackages, PackageError> {
        let mut all: Vec<(Value, PackageScope)> = Vec::new();
        for (value, scope) in [
            (settings.project_value("packages"), PackageScope::Project),
            (settings.global_value("packages"), PackageScope::User),
        ] {
            all.extend(entries(value).into_iter().map(|e| (e, scope)));
        }
        let mut seen: Vec<String> = Vec::new();
        let mut unique = Vec::new();
        for (entry, scope) in all {
            let Some(source) = entry_source(&entry) else {
                continue;
            };
            let id = self.identity(source, scope);
            if !seen.contains(&id) {
                seen.push(id);
                unique.push((entry, scope));
            }
        }
        let mut out = ResolvedPackages::default();
        for (entry, scope) in unique {
            self.resolve_one(&entry, scope, &mut out)?;
        }
        Ok(out)
    }

    /// The resources of `-e npm:…` / `-e git:…` sources, installed into the temporary
    /// folder when missing (an unpinned git checkout there is refreshed, as in pi).
    pub fn resolve_temporary(&self, sources: &[String]) -> Result<ResolvedPackages, PackageError> {
        let mut out = ResolvedPackages::default();
        for source in sources {
            self.resolve_one(
                &Value::String(source.clone()),
                PackageScope::Temporary,
                &mut out,
            )?;
        }
        Ok(out)
    }

    fn resolve_one(
        &self,
        entry: &Value,
        scope: PackageScope,
        out: &mut ResolvedPackages,
    ) -> Result<(), PackageError> {
        let Some(source) = entry_source(entry) else {
            return Ok(());
        };
        let filter = entry.is_object().then_some(entry);
        let parsed = PackageSource::parse(source);
        let installed = match &parsed {
            PackageSource::Local { path } => {
                let resolved = resolve_from(&self.base_dir(scope), path);
                return self.resolve_local(source, &resolved, filter, scope, out);
            }
            PackageSource::Npm(npm) => {
                let path = self.npm_install_path(npm, scope)?;
                let pinned = npm.spec.get(npm.name.len() + 1..).filter(|_| npm.pinned);
                let stale = pinned.is_some_and(|v| installed_version(&path).as_deref() != Some(v));
                if (!path.exists() || stale)
                    && !self.install_missing(source, &parsed, scope, out)?
                {
                    None
                } else {
                    Some(path)
                }
            }
            PackageSource::Git(git) => {
                let path = self.git_install_path(git, scope);
                if !path.exists() {
                    self.install_missing(source, &parsed, scope, out)?
                        .then_some(path)
                } else {
                    if scope == PackageScope::Temporary && !git.pinned() && !self.offline {
                        // A failed refresh keeps the cached checkout, as in pi.
                        let _ = self.update_git(git, scope);
                    }
                    Some(path)
                }
            }
        };
        if let Some(root) = installed {
            for file in collect_package(&root, filter).unwrap_or_default() {
                out.add(file, scope, source, &root);
            }
        }
        Ok(())
    }

    /// Installs a configured package that is missing; `false` when offline (with a
    /// warning: a configured package is never dropped without a word).
    fn install_missing(
        &self,
        source: &str,
        parsed: &PackageSource,
        scope: PackageScope,
        out: &mut ResolvedPackages,
    ) -> Result<bool, PackageError> {
        if self.offline {
            out.warnings.push(format!(
                "Package {source} is not installed (or not at its pinned version) and was not loaded: offline mode does not install packages. Run `pi install {source}` or start without --offline."
            ));
            return Ok(false);
        }
        self.install_parsed(parsed, scope).map_err(|cause| {
            PackageError::Io(format!("Failed to install package {source}: {cause}"))
        })?;
        Ok(true)
    }

    fn resolve_local(
        &self,
        source: &str,
        resolved: &Path,
        filter: Option<&Value>,
        scope: PackageScope,
        out: &mut ResolvedPackages,
    ) -> Result<(), PackageError> {
        match std::fs::metadata(resolved) {
            Err(_) => out.warnings.push(format!(
                "Package {source} was not loaded: path does not exist: {}",
                resolved.display()
            )),
            Ok(m) if m.is_file() => out.add(
                PackageFile {
                    kind: ResourceKind::Extensions,
                    path: resolved.to_path_buf(),
                    enabled: true,
                },
                scope,
                source,
                resolved.parent().unwrap_or(resolved),
            ),
            Ok(_) => match collect_package(resolved, filter) {
                Some(files) => {
                    for file in files {
                        out.add(file, scope, source, resolved);
                    }
                }
                None => out.add(
                    PackageFile {
                        kind: ResourceKind::Extensions,
                        path: resolved.to_path_buf(),
                        enabled: true,
                    },
                    scope,
                    source,
                    resolved,
                ),
            },
        }
        Ok(())
    }
}

/// The `version` of an installed package's `package.json`.
fn installed_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_string)
}

/// Removes the empty folders between a removed checkout and its install root.
fn prune_empty_parents(target: &Path, root: &Path) {
    let mut current = target.parent();
    while let Some(dir) = current {
        if !dir.starts_with(root) || dir == root {
            break;
        }
        let empty = std::fs::read_dir(dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if dir.exists() && !empty {
            break;
        }
        if dir.exists() && std::fs::remove_dir(dir).is_err() {
            break;
        }
        current = dir.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn temporary_folders_use_pis_hashes() {
        // The hashes Node computes for pi's folders (sha256 of "npm-" and
        // "git-example.org-u/r", first 8 hex digits), so pi and pi-rs share the cache.
        let agent = tempfile::tempdir().unwrap();
        let npm = PackageManager::temporary_dir(agent.path(), "npm", "", None);
        assert_eq!(npm, agent.path().join("tmp/extensions/npm/f35b2129"));
        let git = PackageManager::temporary_dir(agent.path(), "git-example.org", "u/r", None);
        assert_eq!(
            git,
            agent
                .path()
                .join("tmp/extensions/git-example.org/79996e12/u/r")
        );
        // A pinned ref has its own checkout.
        let pinned =
            PackageManager::temporary_dir(agent.path(), "git-example.org", "u/r", Some("v1"));
        assert_ne!(pinned, git);
        assert!(pinned.ends_with("u/r"));
    }

    #[test]
    fn settings_keep_one_entry_per_identity_and_local_paths_relative() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(cwd.join("pkg")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(agent.join("settings.json"), r#"{"theme":"dark"}"#).unwrap();
        let pm = PackageManager::new(&cwd, &agent, &Settings::in_memory(json!({})));
        pm.add_to_settings("git:example.org/u/r@v1", PackageScope::User)
            .unwrap();
        pm.add_to_settings("https://example.org/u/r", PackageScope::User)
            .unwrap();
        pm.add_to_settings("./pkg", PackageScope::User).unwrap();
        pm.add_to_settings("./pkg", PackageScope::Project).unwrap();
        let global: Value =
            serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).unwrap())
                .unwrap();
        assert_eq!(
            global,
            json!({"theme": "dark", "packages": ["git:example.org/u/r@v1", "../proj/pkg"]})
        );
        let project = std::fs::read_to_string(cwd.join(".pi/settings.json")).unwrap();
        assert_eq!(project, "{\n  \"packages\": [\n    \"../pkg\"\n  ]\n}");
        assert!(
            pm.remove_from_settings("git:example.org/u/r", PackageScope::User)
                .unwrap()
        );
        assert!(
            !pm.remove_from_settings("npm:nope", PackageScope::User)
                .unwrap()
        );
    }

    #[test]
    fn local_packages_resolve_offline_with_filters_and_missing_ones_warn() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        let agent = dir.path().join("agent");
        let pkg = cwd.join("pkg");
        std::fs::create_dir_all(pkg.join("prompts")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(pkg.join("prompts/a.md"), "a").unwrap();
        std::fs::write(pkg.join("prompts/b.md"), "b").unwrap();
        let settings = Settings::in_memory(json!({"packages": [
            {"source": "../proj/pkg", "prompts": ["!b.md"]},
            "./gone",
        ]}));
        let pm = PackageManager::new(&cwd, &agent, &settings).with_offline(true);
        // in_memory settings are the global ones: paths are relative to the agent dir.
        let resolved = pm.resolve(&settings).unwrap();
        let on: Vec<_> = resolved.enabled(ResourceKind::Prompts);
        assert_eq!(on.len(), 1);
        assert!(on[0].path.ends_with("prompts/a.md"));
        assert_eq!(on[0].scope, ResourceScope::User);
        assert_eq!(resolved.warnings.len(), 1);
        assert!(
            resolved.warnings[0].contains("./gone"),
            "{:?}",
            resolved.warnings
        );
    }
}
