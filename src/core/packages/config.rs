//! `pi config` (pi's config selector): every extension, skill, prompt template and theme
//! of the settings' folders and entries and of the configured packages, and pi 1.6's
//! built-in extensions, enabled or not ([`list_resources`]), and the settings edit for
//! switching one ([`apply_toggle`]).
//!
//! Switching one resource on or off adds a `+path` / `-path` entry for it, replacing any earlier entry naming the
//! same path (`!`, `+`, `-` or plain).
//!
//! - a resource of the settings' folders or entries (`extensions`, `skills`, `prompts`,
//!   `themes` of the same settings file) gets the entry in that list, relative to the
//!   settings' base (`<cwd>/.pi` or the agent directory);
//! - a package resource gets it in the filter of its `packages` entry (a plain string
//!   entry becomes the object form), relative to the package's root;
//! - a built-in extension (the "Built-in" group) gets `+builtin:<name>` /
//!   `-builtin:<name>` in the user's `extensions` list, as pi 1.6 writes it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{PackageError, PackageManager, PackageScope, ResourceKind};
use crate::core::builtin_extensions;
use crate::core::resource_paths::{FoundResource, ResourceOptions, ResourceScope, canonical};
use crate::core::settings::Settings;

/// Where a listed resource comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A configured package (`source` as written in the settings; its root).
    Package { source: String, base_dir: PathBuf },
    /// An entry of the kind's settings list (pi's source `local`).
    SettingsEntry,
    /// An automatically scanned folder (pi's source `auto`).
    Folder,
    /// One of pi 1.6's built-in extensions (`builtin:<name>`; pi-rs has them in a
    /// later version, but switching them is kept in the settings as pi writes it).
    Builtin,
}

/// One resource `pi config` lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigResource {
    pub kind: ResourceKind,
    pub path: PathBuf,
    pub enabled: bool,
    /// From the project's settings (else the user's).
    pub project: bool,
    pub origin: Origin,
}

impl ConfigResource {
    /// The heading of its group (pi's `getGroupLabel`).
    pub fn group_label(&self) -> String {
        let scope = if self.project { "project" } else { "user" };
        match (&self.origin, self.project) {
            (Origin::Package { source, .. }, _) => format!("{source} ({scope})"),
            (Origin::Folder, false) => "User (~/.pi/agent/)".to_string(),
            (Origin::Folder, true) => "Project (.pi/)".to_string(),
            (Origin::SettingsEntry, false) => "User settings".to_string(),
            (Origin::SettingsEntry, true) => "Project settings".to_string(),
            (Origin::Builtin, false) => "Built-in".to_string(),
            (Origin::Builtin, true) => "Built-in (project override)".to_string(),
        }
    }

    /// How the list names it: a skill by its folder, an extension outside an
    /// `extensions/` folder as `folder/file`, anything else by its file name.
    pub fn display_name(&self) -> String {
        if self.origin == Origin::Builtin {
            let path = self.path.to_string_lossy();
            return path
                .strip_prefix(builtin_extensions::PREFIX)
                .unwrap_or(&path)
                .to_string();
        }
        let file = file_name(&self.path);
        let parent = self.path.parent().map(file_name).unwrap_or_default();
        match self.kind {
            ResourceKind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
            ResourceKind::Skills if file == "SKILL.md" => parent,
            _ => file,
        }
    }

    /// Package resources sort before the settings' own; user before project; then by
    /// source (pi's group order).
    pub fn group_order(&self) -> (u8, u8, String) {
        let source = match &self.origin {
            Origin::Package { source, .. } => source.clone(),
            Origin::SettingsEntry => "local".to_string(),
            Origin::Folder => "auto".to_string(),
            Origin::Builtin => "builtin".to_string(),
        };
        (
            u8::from(!matches!(self.origin, Origin::Package { .. })),
            u8::from(self.project),
            source,
        )
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// pi's precedence rank: project entries, project folders, user entries, user folders,
/// packages.
fn rank(r: &ConfigResource) -> u8 {
    match (&r.origin, r.project) {
        (Origin::SettingsEntry, true) => 0,
        (Origin::Folder, true) => 1,
        (Origin::SettingsEntry, false) => 2,
        (Origin::Folder, false) => 3,
        (Origin::Package { .. }, _) => 4,
        (Origin::Builtin, _) => 5,
    }
}

/// The settings' own resources of `kind`, enabled or not.
fn top_level(
    settings: &Settings,
    kind: ResourceKind,
    cwd: &Path,
    agent_dir: &Path,
) -> Vec<FoundResource> {
    use crate::core::{extension_discovery, prompt_templates, resource_paths, skills};
    let options =
        ResourceOptions::from_settings(settings, kind.key(), cwd, agent_dir, Vec::new(), true);
    match kind {
        ResourceKind::Extensions => extension_discovery::all_extension_files(&options),
        ResourceKind::Skills => skills::all_skill_files(&options),
        ResourceKind::Prompts => prompt_templates::all_prompt_files(&options),
        ResourceKind::Themes => resource_paths::all_theme_files(&options),
    }
}

/// Everything `pi config` lists (configured packages are installed first when missing,
/// as pi does), and the warnings of resolving the packages.
pub fn list_resources(
    manager: &PackageManager,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
) -> Result<(Vec<ConfigResource>, Vec<String>), PackageError> {
    let packages = manager.resolve(settings)?;
    let mut out = Vec::new();
    for kind in ResourceKind::ALL {
        let mut of_kind: Vec<ConfigResource> = packages
            .resources
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| ConfigResource {
                kind,
                path: r.path.clone(),
                enabled: r.enabled,
                project: r.scope == PackageScope::Project,
                origin: Origin::Package {
                    source: r.source.clone(),
                    base_dir: r.base_dir.clone(),
                },
            })
            .collect();
        for f in top_level(settings, kind, cwd, agent_dir) {
            if of_kind.iter().any(|r| r.path == f.path) {
                continue;
            }
            of_kind.push(ConfigResource {
                kind,
                path: f.path,
                enabled: f.enabled,
                project: f.scope == ResourceScope::Project,
                origin: if f.from_settings {
                    Origin::SettingsEntry
                } else {
                    Origin::Folder
                },
            });
        }
        if kind == ResourceKind::Extensions {
            of_kind.extend(builtin_resources(settings));
        }
        of_kind.sort_by_key(rank);
        let mut seen = std::collections::HashSet::new();
        out.extend(
            of_kind
                .into_iter()
                .filter(|r| seen.insert(canonical(&r.path))),
        );
    }
    Ok((out, packages.warnings))
}

/// pi 1.6's built-in extensions, switched on or off by the `extensions` settings.
fn builtin_resources(settings: &Settings) -> Vec<ConfigResource> {
    let user = settings.global_strings("extensions");
    let project = settings.project_strings("extensions");
    builtin_extensions::BUILTIN_EXTENSIONS
        .iter()
        .map(|name| ConfigResource {
            kind: ResourceKind::Extensions,
            path: PathBuf::from(format!("{}{name}", builtin_extensions::PREFIX)),
            enabled: builtin_extensions::enabled_by_settings(&user, &project, name),
            project: false,
            origin: Origin::Builtin,
        })
        .collect()
}

/// Writes the settings edit that switches `resource` on (`enabled`) or off.
pub fn apply_toggle(
    manager: &PackageManager,
    resource: &ConfigResource,
    enabled: bool,
    cwd: &Path,
    agent_dir: &Path,
) -> Result<(), PackageError> {
    let scope = if resource.project {
        PackageScope::Project
    } else {
        PackageScope::User
    };
    match &resource.origin {
        Origin::Package { source, base_dir } => {
            let pattern = pattern_for(base_dir, &resource.path);
            let current = manager.setting(scope, "packages")?;
            match toggle_package(current.as_ref(), source, resource.kind, &pattern, enabled) {
                Some(list) => manager.set_setting(scope, "packages", Value::Array(list)),
                None => Ok(()),
            }
        }
        // As pi writes it: `+builtin:<name>` / `-builtin:<name>` in `extensions`.
        Origin::Builtin => {
            let pattern = resource.path.to_string_lossy().into_owned();
            let current = manager.setting(scope, "extensions")?;
            let list = toggle_entries(current.as_ref(), &pattern, enabled);
            manager.set_setting(scope, "extensions", Value::Array(list))
        }
        Origin::SettingsEntry | Origin::Folder => {
            let base = if resource.project {
                crate::core::paths::project_config_dir(cwd)
            } else {
                agent_dir.to_path_buf()
            };
            let pattern = pattern_for(&base, &resource.path);
            let key = resource.kind.key();
            let current = manager.setting(scope, key)?;
            let list = toggle_entries(current.as_ref(), &pattern, enabled);
            manager.set_setting(scope, key, Value::Array(list))
        }
    }
}

/// `path` relative to `base` with `/` separators (pi's `relative`).
pub fn pattern_for(base: &Path, path: &Path) -> String {
    crate::core::resource_paths::relative(base, path)
}

/// `entries` (a settings list of `kind`) with the entry for `pattern` replaced by `+pattern`
/// (`enabled`) or `-pattern`.
pub fn toggle_entries(entries: Option<&Value>, pattern: &str, enabled: bool) -> Vec<Value> {
    let mut out: Vec<Value> = entries
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|v| {
                    v.as_str()
                        .is_none_or(|p| p.strip_prefix(['!', '+', '-']).unwrap_or(p) != pattern)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let sign = if enabled { '+' } else { '-' };
    out.push(Value::String(format!("{sign}{pattern}")));
    out
}

/// The `packages` list with the filter of the entry whose source is `source` switched for
/// `pattern`; `None` when no entry has that source (nothing to write, as in pi).
pub fn toggle_package(
    packages: Option<&Value>,
    source: &str,
    kind: ResourceKind,
    pattern: &str,
    enabled: bool,
) -> Option<Vec<Value>> {
    let mut list: Vec<Value> = packages.and_then(Value::as_array).cloned()?;
    let index = list.iter().position(|entry| {
        let s = match entry {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("source").and_then(Value::as_str),
            _ => None,
        };
        s == Some(source)
    })?;
    let mut object = match &list[index] {
        Value::Object(o) => o.clone(),
        _ => {
            let mut o = Map::new();
            o.insert("source".into(), Value::String(source.to_string()));
            o
        }
    };
    let updated = toggle_entries(object.get(kind.key()), pattern, enabled);
    object.insert(kind.key().into(), Value::Array(updated));
    list[index] = Value::Object(object);
    Some(list)
}

/// The theme files a session can select, in pi's precedence (the `themes` settings
/// entries and folders, project before user, then the configured packages' themes). The
/// packages are looked up as installed, without installing anything (startup did that).
pub fn theme_files(settings: &Settings, cwd: &Path, agent_dir: &Path) -> Vec<PathBuf> {
    let manager = PackageManager::new(cwd, agent_dir, settings).with_offline(true);
    let mut options =
        ResourceOptions::from_settings(settings, "themes", cwd, agent_dir, Vec::new(), true);
    if let Ok(packages) = manager.resolve(settings) {
        options.packages = packages.enabled(ResourceKind::Themes);
    }
    crate::core::resource_paths::theme_files(&options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_replace_earlier_ones_for_the_same_path() {
        let current = json!(["!skills/a/SKILL.md", "other", "+skills/a/SKILL.md"]);
        assert_eq!(
            toggle_entries(Some(&current), "skills/a/SKILL.md", false),
            [json!("other"), json!("-skills/a/SKILL.md")]
        );
        assert_eq!(toggle_entries(None, "x.md", true), [json!("+x.md")]);
    }

    #[test]
    fn package_entries_take_the_object_form() {
        let packages = json!(["npm:a", {"source": "npm:b", "prompts": ["-p.md"]}]);
        let out = toggle_package(
            Some(&packages),
            "npm:a",
            ResourceKind::Themes,
            "themes/t.json",
            false,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                json!({"source": "npm:a", "themes": ["-themes/t.json"]}),
                json!({"source": "npm:b", "prompts": ["-p.md"]}),
            ]
        );
        let out = toggle_package(
            Some(&packages),
            "npm:b",
            ResourceKind::Prompts,
            "p.md",
            true,
        )
        .unwrap();
        assert_eq!(out[1], json!({"source": "npm:b", "prompts": ["+p.md"]}));
        assert!(
            toggle_package(Some(&packages), "npm:c", ResourceKind::Prompts, "p", true).is_none()
        );
    }
}
