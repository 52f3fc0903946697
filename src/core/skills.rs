//! Skills in the Agent Skills layout: a folder with a `SKILL.md` whose YAML frontmatter
//! gives a `name` and a `description`. The system prompt lists the skills so the model can
//! read one when a task matches; `/skill:name args` pastes a skill into the prompt.
//!
//! Found, in pi 0.73's order (first of a name wins, later ones are reported as
//! collisions, the same file reached through a symlink is silently kept once): the
//! project settings' `skills` entries, `<cwd>/.pi/skills/`, `.agents/skills/` in the
//! working directory and each parent up to the git root, the global settings' entries,
//! `<agent_dir>/skills/`, `~/.agents/skills/`, then `--skill` paths. In `.pi` and agent
//! folders a loose `.md` file at the top is a skill too; everywhere else only `SKILL.md`
//! files count, searched recursively (a folder with a `SKILL.md` is not searched deeper;
//! `node_modules` and dot folders are skipped).
//!
//! Validation is pi's: a missing description means the skill is not loaded; name problems
//! (not matching the folder, too long, characters outside `a-z0-9-`, hyphens at the ends
//! or doubled) are warnings and the skill still loads.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::core::frontmatter;
use crate::core::paths::home_dir;
use crate::core::resource_paths::{
    AutoDir, DiagnosticKind, FoundResource, IgnoreRules, ResolveInput, ResolvedPath,
    ResourceDiagnostic, ResourceOptions, ResourceScope, canonical, merge_resolved, read_dir_sorted,
    resolve, resolve_all, visible_entries,
};

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The skill's markdown file (usually `…/SKILL.md`).
    pub path: PathBuf,
    /// The folder of `path`; relative references in the skill start here.
    pub base_dir: PathBuf,
    pub scope: ResourceScope,
    /// `disable-model-invocation: true`: not listed in the system prompt, only usable
    /// through `/skill:name`.
    pub disable_model_invocation: bool,
}

/// The skills found, and what went wrong on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedSkills {
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

impl LoadedSkills {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

const MAX_NAME_LENGTH: usize = 64;
const MAX_DESCRIPTION_LENGTH: usize = 1024;

fn warning(path: &Path, message: String) -> ResourceDiagnostic {
    ResourceDiagnostic {
        kind: DiagnosticKind::Warning,
        message,
        path: path.to_path_buf(),
    }
}

fn name_problems(name: &str, folder: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name != folder {
        problems.push(format!(
            "name \"{name}\" does not match parent directory \"{folder}\""
        ));
    }
    let length = name.chars().count();
    if length > MAX_NAME_LENGTH {
        problems.push(format!(
            "name exceeds {MAX_NAME_LENGTH} characters ({length})"
        ));
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        problems.push(
            "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)".into(),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("name must not start or end with a hyphen".into());
    }
    if name.contains("--") {
        problems.push("name must not contain consecutive hyphens".into());
    }
    problems
}

/// Reads one skill file. Returns the skill (unless its description is missing or the file
/// is unreadable) and the warnings about it.
pub fn load_skill_file(
    path: &Path,
    scope: ResourceScope,
) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let raw = match std::fs::read_to_string(path) {
        Ok(raw) => raw,
        Err(e) => {
            return (
                None,
                vec![warning(path, format!("could not read skill file: {e}"))],
            );
        }
    };
    let parsed = match frontmatter::parse(&raw) {
        Ok(parsed) => parsed,
        Err(e) => return (None, vec![warning(path, e.to_string())]),
    };
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let folder = base_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut diagnostics = Vec::new();
    let description = match parsed.fields.get("description") {
        Some(Value::String(d)) if !d.trim().is_empty() => {
            let length = d.chars().count();
            if length > MAX_DESCRIPTION_LENGTH {
                diagnostics.push(warning(
                    path,
                    format!("description exceeds {MAX_DESCRIPTION_LENGTH} characters ({length})"),
                ));
            }
            Some(d.clone())
        }
        Some(Value::String(_)) | Some(Value::Null) | None => {
            diagnostics.push(warning(path, "description is required".into()));
            None
        }
        Some(_) => {
            diagnostics.push(warning(path, "description must be a string".into()));
            None
        }
    };
    let name = match parsed.fields.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => folder.clone(),
    };
    diagnostics.extend(
        name_problems(&name, &folder)
            .into_iter()
            .map(|m| warning(path, m)),
    );
    let skill = description.map(|description| Skill {
        name,
        description,
        path: path.to_path_buf(),
        base_dir,
        scope,
        disable_model_invocation: parsed.fields.get("disable-model-invocation")
            == Some(&Value::Bool(true)),
    });
    (skill, diagnostics)
}

/// Skills in `dir`: its `SKILL.md` if it has one (nothing deeper then), otherwise its
/// top-level `.md` files and the `SKILL.md` files of its subfolders.
pub fn load_skills_from_dir(
    dir: &Path,
    scope: ResourceScope,
) -> (Vec<Skill>, Vec<ResourceDiagnostic>) {
    let mut skills = Vec::new();
    let mut diagnostics = Vec::new();
    for file in skill_files(dir, true) {
        let (skill, diags) = load_skill_file(&file, scope);
        skills.extend(skill);
        diagnostics.extend(diags);
    }
    (skills, diagnostics)
}

/// The skill files under `dir`; `top_level_md`: loose `.md` files directly in `dir` count.
fn skill_files(dir: &Path, top_level_md: bool) -> Vec<PathBuf> {
    fn walk(dir: &Path, rules: &IgnoreRules, top: bool, out: &mut Vec<PathBuf>) {
        let rules = rules.enter(dir);
        let entries = read_dir_sorted(dir);
        if let Some(skill) = entries.iter().find(|e| e.name == "SKILL.md" && e.is_file)
            && !rules.ignores(&skill.path, false)
        {
            out.push(skill.path.clone());
            return;
        }
        for e in visible_entries(dir, &rules) {
            if e.is_dir {
                walk(&e.path, &rules, false, out);
            } else if top && e.is_file && e.name.ends_with(".md") {
                out.push(e.path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &IgnoreRules::default(), top_level_md, &mut out);
    out
}

/// pi's skill scan of a folder: its `SKILL.md`, else its top-level `.md` files and the
/// `SKILL.md` files below it.
pub fn pi_skill_files(dir: &Path) -> Vec<PathBuf> {
    skill_files(dir, true)
}

fn agents_skill_files(dir: &Path) -> Vec<PathBuf> {
    skill_files(dir, false)
}

/// `.agents/skills` of `cwd` and each parent, stopping at the git root (the folder with a
/// `.git` entry) or the file system root.
fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let git_root = cwd.ancestors().find(|d| d.join(".git").exists());
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if Some(dir) == git_root {
            break;
        }
    }
    dirs
}

/// Where skills are looked for (settings entries, `skills/` folders, `.agents/skills`).
fn skill_resolve_input<'a>(
    options: &'a ResourceOptions,
    project_base: &'a Path,
) -> ResolveInput<'a> {
    let user_agents = home_dir().join(".agents").join("skills");
    let mut project_auto = vec![AutoDir {
        dir: project_base.join("skills"),
        scan: pi_skill_files,
    }];
    project_auto.extend(
        ancestor_agents_skill_dirs(&options.cwd)
            .into_iter()
            .filter(|d| *d != user_agents)
            .map(|dir| AutoDir {
                dir,
                scan: agents_skill_files,
            }),
    );
    ResolveInput {
        project_entries: &options.project_entries,
        project_base,
        user_entries: &options.user_entries,
        user_base: &options.agent_dir,
        scan_entry_dir: pi_skill_files,
        project_auto,
        user_auto: vec![
            AutoDir {
                dir: options.agent_dir.join("skills"),
                scan: pi_skill_files,
            },
            AutoDir {
                dir: user_agents,
                scan: agents_skill_files,
            },
        ],
        project_trusted: options.project_trusted,
    }
}

/// Every skill file of the settings and folders, enabled or not (for `pi config`).
pub fn all_skill_files(options: &ResourceOptions) -> Vec<FoundResource> {
    resolve_all(&skill_resolve_input(options, &options.project_base()))
}

/// Finds and reads all skills.
pub fn load_skills(options: &ResourceOptions) -> LoadedSkills {
    let resolved = if options.discover {
        resolve(&skill_resolve_input(options, &options.project_base()))
    } else {
        Vec::new()
    };
    let resolved = options.with_packages(resolved);
    let paths = merge_resolved(resolved, &options.cli_paths, &options.cwd);

    let mut loaded = LoadedSkills::default();
    let mut collisions = Vec::new();
    let mut real_paths = HashSet::new();
    let mut add = |skills: Vec<Skill>, loaded: &mut LoadedSkills| {
        for skill in skills {
            let real = canonical(&skill.path);
            if real_paths.contains(&real) {
                continue;
            }
            match loaded.skills.iter().find(|s| s.name == skill.name) {
                Some(winner) => collisions.push(ResourceDiagnostic {
                    kind: DiagnosticKind::Collision {
                        winner: winner.path.clone(),
                        loser: skill.path.clone(),
                    },
                    message: format!("name \"{}\" collision", skill.name),
                    path: skill.path,
                }),
                None => {
                    real_paths.insert(real);
                    loaded.skills.push(skill);
                }
            }
        }
    };
    for ResolvedPath { path, scope } in paths {
        match std::fs::metadata(&path) {
            Err(_) => loaded
                .diagnostics
                .push(warning(&path, "skill path does not exist".into())),
            Ok(m) if m.is_dir() => {
                let (skills, diags) = load_skills_from_dir(&path, scope);
                loaded.diagnostics.extend(diags);
                add(skills, &mut loaded);
            }
            Ok(m) if m.is_file() && path.extension().is_some_and(|e| e == "md") => {
                let (skill, diags) = load_skill_file(&path, scope);
                loaded.diagnostics.extend(diags);
                add(skill.into_iter().collect(), &mut loaded);
            }
            Ok(_) => loaded
                .diagnostics
                .push(warning(&path, "skill path is not a markdown file".into())),
        }
    }
    loaded.diagnostics.extend(collisions);
    loaded
}

fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The system-prompt block listing the skills the model may use (empty when there are
/// none; skills with `disable-model-invocation` are left out). Starts with a blank line
/// so it can be appended to the prompt directly.
pub fn format_skills_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills
        .iter()
        .filter(|s| !s.disable_model_invocation)
        .collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "\n\nSkills are instruction files for particular kinds of tasks.".to_string(),
        "When a task fits a skill's description, read its file with the read tool before starting, and follow it.".to_string(),
        "Paths mentioned inside a skill are relative to the folder that contains the skill file; turn them into absolute paths before using them in tool calls.".to_string(),
        String::new(),
        "<available_skills>".to_string(),
    ];
    for skill in visible {
        lines.push("  <skill>".into());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&skill.description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.path.display().to_string())
        ));
        lines.push("  </skill>".into());
    }
    lines.push("</available_skills>".into());
    lines.join("\n")
}

/// The text `/skill:name args` becomes: the skill's body in a `<skill>` element, then the
/// arguments. `Ok(None)` when `text` is not a skill command or names no loaded skill (the
/// text is then sent as it is); `Err` when the skill file cannot be read any more.
pub fn expand_skill_command(
    text: &str,
    skills: &[Skill],
) -> Result<Option<String>, ResourceDiagnostic> {
    let Some(rest) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match rest.split_once(' ') {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        return Ok(None);
    };
    let raw = std::fs::read_to_string(&skill.path)
        .map_err(|e| warning(&skill.path, format!("could not read skill file: {e}")))?;
    let body = frontmatter::strip(&raw);
    let block = format!(
        "<skill name=\"{}\" location=\"{}\">\nPaths in this skill are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.path.display(),
        skill.base_dir.display(),
        body.trim()
    );
    Ok(Some(if args.is_empty() {
        block
    } else {
        format!("{block}\n\n{args}")
    }))
}

#[cfg(test)]
mod tests;
