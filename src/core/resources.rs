//! Project context the model is given besides the conversation: `AGENTS.md` / `CLAUDE.md`
//! files (global, then every ancestor of the working directory from the root down),
//! `SYSTEM.md` (replaces the default system prompt) and `APPEND_SYSTEM.md` (appended),
//! looked up in `<cwd>/.pi/` first (when the project is trusted) and then in the agent
//! directory, as pi does. Context files load whether the project is trusted or not.

use std::path::{Path, PathBuf};

use crate::core::trust::ProjectTrust;

/// One loaded context file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

/// Names tried in each directory, first match wins (one file per directory): pi 1.6 puts
/// `AGENTS.override.md` first, so it replaces the `AGENTS.md` or `CLAUDE.md` beside it.
const CONTEXT_FILE_NAMES: [&str; 5] = [
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
];

fn context_file_in(dir: &Path, warnings: &mut Vec<String>) -> Option<ContextFile> {
    for name in CONTEXT_FILE_NAMES {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(content) => return Some(ContextFile { path, content }),
            Err(e) => warnings.push(format!("could not read {}: {e}", path.display())),
        }
    }
    None
}

/// Context files in prompt order: the global one (`<agent_dir>/AGENTS.md`), then those of
/// every directory from the filesystem root down to `cwd`. Unreadable files are reported
/// in `warnings` and skipped.
pub fn load_context_files(
    cwd: &Path,
    agent_dir: &Path,
    warnings: &mut Vec<String>,
) -> Vec<ContextFile> {
    let mut files = Vec::new();
    if let Some(global) = context_file_in(agent_dir, warnings) {
        files.push(global);
    }
    let mut ancestors: Vec<ContextFile> = Vec::new();
    for dir in cwd.ancestors() {
        if let Some(file) = context_file_in(dir, warnings)
            && !files.iter().any(|f| f.path == file.path)
        {
            ancestors.push(file);
        }
    }
    ancestors.reverse();
    files.extend(ancestors);
    files
}

/// A `--system-prompt`-style value: the content of the file if it names one, else the text.
pub fn resolve_prompt_input(input: &str, warnings: &mut Vec<String>) -> String {
    let path = Path::new(input);
    if !input.contains('\n') && path.is_file() {
        match std::fs::read_to_string(path) {
            Ok(content) => return content,
            Err(e) => warnings.push(format!("could not read prompt file {input}: {e}")),
        }
    }
    input.to_string()
}

/// The project's `.pi/<name>` when the project is trusted and it exists, else the agent
/// directory's `<name>` when that exists.
fn project_or_agent_file(
    name: &str,
    cwd: &Path,
    agent_dir: &Path,
    trust: ProjectTrust,
) -> Option<PathBuf> {
    let project = crate::core::paths::project_config_dir(cwd).join(name);
    if trust.is_trusted() && project.is_file() {
        return Some(project);
    }
    Some(agent_dir.join(name)).filter(|p| p.is_file())
}

/// `.pi/SYSTEM.md` of a trusted project, else `<agent_dir>/SYSTEM.md`.
pub fn discover_system_prompt_file(
    cwd: &Path,
    agent_dir: &Path,
    trust: ProjectTrust,
) -> Option<PathBuf> {
    project_or_agent_file("SYSTEM.md", cwd, agent_dir, trust)
}

/// `.pi/APPEND_SYSTEM.md` of a trusted project, else `<agent_dir>/APPEND_SYSTEM.md`.
pub fn discover_append_system_prompt_file(
    cwd: &Path,
    agent_dir: &Path,
    trust: ProjectTrust,
) -> Option<PathBuf> {
    project_or_agent_file("APPEND_SYSTEM.md", cwd, agent_dir, trust)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_files_are_global_first_then_root_down_to_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let proj = dir.path().join("a/b");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::write(agent.join("AGENTS.md"), "global").unwrap();
        std::fs::write(dir.path().join("a/CLAUDE.md"), "outer").unwrap();
        std::fs::write(proj.join("AGENTS.md"), "inner").unwrap();
        std::fs::write(proj.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        let mut warnings = Vec::new();
        let files = load_context_files(&proj, &agent, &mut warnings);
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, ["global", "outer", "inner"]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn project_system_prompt_file_wins_over_global() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join(".pi")).unwrap();
        std::fs::write(agent.join("SYSTEM.md"), "g").unwrap();
        let trusted = ProjectTrust::Trusted;
        assert_eq!(
            discover_system_prompt_file(dir.path(), &agent, trusted),
            Some(agent.join("SYSTEM.md"))
        );
        std::fs::write(dir.path().join(".pi/SYSTEM.md"), "p").unwrap();
        assert_eq!(
            discover_system_prompt_file(dir.path(), &agent, trusted),
            Some(dir.path().join(".pi/SYSTEM.md"))
        );
        assert_eq!(
            discover_system_prompt_file(dir.path(), &agent, ProjectTrust::Untrusted),
            Some(agent.join("SYSTEM.md"))
        );
    }
}
