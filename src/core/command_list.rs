//! `get_commands`: the slash commands a client can send in a `prompt` — extension
//! commands, then prompt templates, then skills (as `skill:<name>`) — each with pi's
//! `sourceInfo` saying where it was found.
//!
//! pi's `sourceInfo` distinguishes resources found in the automatic folders (`source:
//! "auto"`, with the folder's `baseDir`) from those listed in settings (`source: "local"`)
//! and those given on the command line (`scope: "temporary"`). pi-rs's loaders keep only
//! the scope, so "auto" is recognised here by where the file lies: under
//! `<agent_dir>/{extensions,prompts,skills}`, `<cwd>/.pi/{…}` or a `.agents/skills`
//! folder. (A settings entry that points into one of those folders is reported as "auto";
//! pi would say "local".)
//!
//! Used by RPC `get_commands` and by the state extensions read (`pi.getCommands()`).
//!
//! Not here: running the commands (the session's prompt does that).

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::core::agent_session::AgentSession;
use crate::core::paths::CONFIG_DIR_NAME;
use crate::core::resource_paths::ResourceScope;

/// The kinds of resources `get_commands` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Extension,
    Prompt,
    Skill,
}

impl Kind {
    /// The folder name this kind is discovered in, under the agent dir and `.pi/`.
    fn folder(self) -> &'static str {
        match self {
            Kind::Extension => "extensions",
            Kind::Prompt => "prompts",
            Kind::Skill => "skills",
        }
    }
}

/// The folders pi scans by itself.
struct AutoDirs {
    /// `<agent_dir>`: the `baseDir` of user resources found automatically.
    user: PathBuf,
    /// `<cwd>/.pi`: the same for project resources.
    project: PathBuf,
}

impl AutoDirs {
    fn base(&self, scope: ResourceScope) -> Option<&Path> {
        match scope {
            ResourceScope::User => Some(&self.user),
            ResourceScope::Project => Some(&self.project),
            ResourceScope::Cli => None,
        }
    }

    /// Whether `path` was found by scanning (rather than listed in settings).
    fn found_automatically(&self, path: &Path, kind: Kind, scope: ResourceScope) -> bool {
        let Some(base) = self.base(scope) else {
            return false;
        };
        path.starts_with(base.join(kind.folder()))
            || (kind == Kind::Skill && in_agents_skills_folder(path))
    }
}

/// `…/.agents/skills/…`: the skill folders pi shares with other agents.
fn in_agents_skills_folder(path: &Path) -> bool {
    let parts: Vec<Component<'_>> = path.components().collect();
    parts
        .windows(2)
        .any(|pair| pair[0].as_os_str() == ".agents" && pair[1].as_os_str() == Kind::Skill.folder())
}

/// pi's `sourceInfo` object (keys in pi's order). `cli_base_dir` is the `baseDir` pi
/// reports for a template or skill given on the command line.
fn source_info(
    dirs: &AutoDirs,
    path: &Path,
    kind: Kind,
    scope: ResourceScope,
    cli_base_dir: Option<&Path>,
) -> Value {
    let mut info = Map::new();
    info.insert("path".into(), path.display().to_string().into());
    let (source, scope_name, base_dir) = match scope {
        ResourceScope::Cli => {
            // pi's `-e` extensions are "cli"; `--prompt-template` / `--skill` are "local".
            let source = if kind == Kind::Extension {
                "cli"
            } else {
                "local"
            };
            (source, "temporary", cli_base_dir.map(Path::to_path_buf))
        }
        ResourceScope::User | ResourceScope::Project => {
            let scope_name = if scope == ResourceScope::User {
                "user"
            } else {
                "project"
            };
            if dirs.found_automatically(path, kind, scope) {
                ("auto", scope_name, dirs.base(scope).map(Path::to_path_buf))
            } else {
                ("local", scope_name, None)
            }
        }
    };
    info.insert("source".into(), source.into());
    info.insert("scope".into(), scope_name.into());
    info.insert("origin".into(), "top-level".into());
    if let Some(base_dir) = base_dir {
        info.insert("baseDir".into(), base_dir.display().to_string().into());
    }
    Value::Object(info)
}

/// pi's `sourceInfo` of an extension (its commands and tools).
pub fn extension_source_info(session: &AgentSession, path: &Path, scope: ResourceScope) -> Value {
    let dirs = AutoDirs {
        user: session.paths().agent_dir.clone(),
        project: session.cwd().join(CONFIG_DIR_NAME),
    };
    source_info(&dirs, path, Kind::Extension, scope, None)
}

/// The `commands` array of `get_commands`.
pub fn command_list(session: &AgentSession) -> Vec<Value> {
    let dirs = AutoDirs {
        user: session.paths().agent_dir.clone(),
        project: session.cwd().join(CONFIG_DIR_NAME),
    };
    let resources = session.loaded_resources();
    let mut commands = Vec::new();
    for command in session.extension_commands() {
        let mut entry = Map::new();
        entry.insert("name".into(), command.invocation_name.into());
        if let Some(description) = command.description {
            entry.insert("description".into(), description.into());
        }
        entry.insert("source".into(), "extension".into());
        entry.insert(
            "sourceInfo".into(),
            source_info(
                &dirs,
                &command.extension_path,
                Kind::Extension,
                command.scope,
                None,
            ),
        );
        commands.push(Value::Object(entry));
    }
    for template in &resources.prompt_templates {
        commands.push(json!({
            "name": template.name,
            "description": template.description,
            "source": "prompt",
            "sourceInfo": source_info(
                &dirs,
                &template.path,
                Kind::Prompt,
                template.scope,
                template.path.parent(),
            ),
        }));
    }
    for skill in &resources.skills {
        commands.push(json!({
            "name": format!("skill:{}", skill.name),
            "description": skill.description,
            "source": "skill",
            "sourceInfo": source_info(
                &dirs,
                &skill.path,
                Kind::Skill,
                skill.scope,
                Some(&skill.base_dir),
            ),
        }));
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> AutoDirs {
        AutoDirs {
            user: PathBuf::from("/h/.pi/agent"),
            project: PathBuf::from("/p/.pi"),
        }
    }

    fn info(path: &str, kind: Kind, scope: ResourceScope, cli_base: Option<&str>) -> String {
        source_info(
            &dirs(),
            Path::new(path),
            kind,
            scope,
            cli_base.map(Path::new),
        )
        .to_string()
    }

    #[test]
    fn source_info_matches_what_pi_reports_for_each_origin() {
        use ResourceScope::{Cli, Project, User};
        let lines = [
            info(
                "/h/.pi/agent/prompts/fix.md",
                Kind::Prompt,
                User,
                Some("/h/.pi/agent/prompts"),
            ),
            info(
                "/p/.pi/skills/local/SKILL.md",
                Kind::Skill,
                Project,
                Some("/p/.pi/skills/local"),
            ),
            info(
                "/p/.agents/skills/shared/SKILL.md",
                Kind::Skill,
                Project,
                None,
            ),
            info("/p/.pi/extensions/gate.py", Kind::Extension, Project, None),
            info(
                "/elsewhere/st.md",
                Kind::Prompt,
                Project,
                Some("/elsewhere"),
            ),
            info("/elsewhere/ext.py", Kind::Extension, User, None),
            info("/cli/ct.md", Kind::Prompt, Cli, Some("/cli")),
            info("/cli/cs/SKILL.md", Kind::Skill, Cli, Some("/cli/cs")),
            info("/cli/ext.py", Kind::Extension, Cli, None),
        ];
        insta::assert_snapshot!(lines.join("\n"), @r#"
        {"path":"/h/.pi/agent/prompts/fix.md","source":"auto","scope":"user","origin":"top-level","baseDir":"/h/.pi/agent"}
        {"path":"/p/.pi/skills/local/SKILL.md","source":"auto","scope":"project","origin":"top-level","baseDir":"/p/.pi"}
        {"path":"/p/.agents/skills/shared/SKILL.md","source":"auto","scope":"project","origin":"top-level","baseDir":"/p/.pi"}
        {"path":"/p/.pi/extensions/gate.py","source":"auto","scope":"project","origin":"top-level","baseDir":"/p/.pi"}
        {"path":"/elsewhere/st.md","source":"local","scope":"project","origin":"top-level"}
        {"path":"/elsewhere/ext.py","source":"local","scope":"user","origin":"top-level"}
        {"path":"/cli/ct.md","source":"local","scope":"temporary","origin":"top-level","baseDir":"/cli"}
        {"path":"/cli/cs/SKILL.md","source":"local","scope":"temporary","origin":"top-level","baseDir":"/cli/cs"}
        {"path":"/cli/ext.py","source":"cli","scope":"temporary","origin":"top-level"}
        "#);
    }
}
