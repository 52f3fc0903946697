//! The command line's share of startup: mapping the flags to the session factory's
//! [`SessionConfig`], deciding which session to run on from `--no-session`, `--fork`,
//! `--session`, `--resume` and `--continue` (asking on the terminal where pi asks), and
//! reading piped stdin. Building the session is `core::factory`'s job.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::cli::args::Args;
use crate::core::factory::{
    ResourceSelection, SessionConfig, SessionSource, StartupError, ToolSelection,
};
use crate::core::paths::{AgentPaths, expand_tilde};
use crate::session::listing::{list, list_all};
use crate::session::refusal::MissingCwd;

/// What building the session takes from the flags.
pub fn session_config(args: &Args) -> SessionConfig {
    let cli = &args.cli;
    let tools = match args.tool_names() {
        Some(names) => ToolSelection::Only(names),
        None if cli.no_tools => ToolSelection::Disabled,
        None if cli.no_builtin_tools => ToolSelection::ExtensionsOnly,
        None => ToolSelection::Default,
    };
    let selection = |paths: &[String], no_discovery: bool| ResourceSelection {
        paths: paths.to_vec(),
        discover: !no_discovery,
    };
    SessionConfig {
        provider: cli.provider.clone(),
        model: cli.model.clone(),
        model_scope: args.model_patterns(),
        thinking: args.thinking,
        api_key: cli.api_key.clone(),
        tools,
        system_prompt: cli.system_prompt.clone(),
        append_system_prompt: cli.append_system_prompt.clone(),
        skip_context_files: cli.no_context_files,
        prompt_templates: selection(&cli.prompt_templates, cli.no_prompt_templates),
        skills: selection(&cli.skills, cli.no_skills),
        extensions: selection(&cli.extensions, cli.no_extensions),
        extension_flags: args.unknown_flags.clone(),
        detached_flag_values: args.detached_flag_values.clone(),
        session_dir: cli.session_dir.clone(),
        warnings: args.warnings.clone(),
        offline: cli.offline,
        project_trust: args.project_trust,
    }
}

/// Where `--session <arg>` / `--fork <arg>` points.
enum SessionRef {
    Path(PathBuf),
    Local(PathBuf),
    Global { path: PathBuf, cwd: String },
}

fn resolve_session_arg(
    arg: &str,
    session_dir: &Path,
    paths: &AgentPaths,
) -> Result<SessionRef, StartupError> {
    if arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl") {
        return Ok(SessionRef::Path(expand_tilde(arg)));
    }
    if let Ok(local) = list(session_dir)
        && let Some(s) = local.iter().find(|s| s.id.to_string().starts_with(arg))
    {
        return Ok(SessionRef::Local(s.path.clone()));
    }
    if let Ok(all) = list_all(&paths.sessions_root())
        && let Some(s) = all.iter().find(|s| s.id.to_string().starts_with(arg))
    {
        return Ok(SessionRef::Global {
            path: s.path.clone(),
            cwd: s.cwd.clone(),
        });
    }
    Err(StartupError(format!("No session found matching '{arg}'")))
}

fn confirm(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_lowercase().as_str(), "y" | "yes")
}

/// A plain-text session chooser for `--resume` when no terminal UI is available.
fn pick_session_plain(session_dir: &Path) -> Result<Option<PathBuf>, StartupError> {
    let sessions = list(session_dir).map_err(|e| StartupError(e.to_string()))?;
    if sessions.is_empty() {
        return Ok(None);
    }
    for (i, s) in sessions.iter().enumerate().take(30) {
        let title = s.name.clone().unwrap_or_else(|| s.first_message.clone());
        let title: String = title.chars().take(70).collect();
        eprintln!("{:>3}. {title}  ({} messages)", i + 1, s.message_count);
    }
    eprint!("Session number (Enter to cancel): ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    Ok(line
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| sessions.get(n.wrapping_sub(1)))
        .map(|s| s.path.clone()))
}

/// Chooses a session file for `--resume` (`Ok(None)`: cancelled).
pub type SessionPicker = dyn Fn(&Path) -> Result<Option<PathBuf>, StartupError>;

/// Decides the session from the flags, asking the user where pi asks (`--resume`, a
/// session of another project). `Ok(None)`: the user cancelled.
pub fn resolve_session_source(
    args: &Args,
    session_dir: &Path,
    paths: &AgentPaths,
    picker: Option<&SessionPicker>,
) -> Result<Option<SessionSource>, StartupError> {
    let cli = &args.cli;
    if cli.fork.is_some() {
        let mut conflicting = Vec::new();
        if cli.session.is_some() {
            conflicting.push("--session");
        }
        if cli.continue_session {
            conflicting.push("--continue");
        }
        if cli.resume {
            conflicting.push("--resume");
        }
        if cli.no_session {
            conflicting.push("--no-session");
        }
        if !conflicting.is_empty() {
            return Err(StartupError(format!(
                "--fork cannot be combined with {}",
                conflicting.join(", ")
            )));
        }
    }
    if cli.no_session {
        return Ok(Some(SessionSource::InMemory));
    }
    if let Some(arg) = &cli.fork {
        let source = match resolve_session_arg(arg, session_dir, paths)? {
            SessionRef::Path(p) | SessionRef::Local(p) => p,
            SessionRef::Global { path, .. } => path,
        };
        return Ok(Some(SessionSource::Fork(source)));
    }
    if let Some(arg) = &cli.session {
        return match resolve_session_arg(arg, session_dir, paths)? {
            SessionRef::Path(p) | SessionRef::Local(p) => Ok(Some(SessionSource::Open(p))),
            SessionRef::Global { path, cwd: other } => {
                eprintln!("Session found in different project: {other}");
                if !confirm("Fork this session into current directory?") {
                    eprintln!("Aborted.");
                    return Ok(None);
                }
                Ok(Some(SessionSource::Fork(path)))
            }
        };
    }
    if cli.resume {
        let chosen = match picker {
            Some(p) => p(session_dir)?,
            None => pick_session_plain(session_dir)?,
        };
        return match chosen {
            Some(path) => Ok(Some(SessionSource::Open(path))),
            None => {
                println!("No session selected");
                Ok(None)
            }
        };
    }
    if cli.continue_session {
        return Ok(Some(SessionSource::ContinueRecent));
    }
    Ok(Some(SessionSource::Create))
}

/// Asks on the terminal whether to continue a session whose directory is gone in the
/// current one (pi asks the same in its UI). `false`: the user declined.
pub fn confirm_continue_here(issue: &MissingCwd) -> bool {
    eprintln!("{}", issue.prompt_text());
    confirm("Continue in the current directory?")
}

/// Reads piped stdin (when stdin is not a terminal), trimmed; `None` when empty.
pub fn read_piped_stdin() -> Option<String> {
    use std::io::{IsTerminal, Read};
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return None;
    }
    let mut text = String::new();
    stdin.read_to_string(&mut text).ok()?;
    let trimmed = text.trim();
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(argv: &[&str]) -> SessionConfig {
        match crate::cli::args::parse(argv) {
            Ok(args) => session_config(&args),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn tool_flags_map_to_one_selection_with_tools_winning() {
        assert_eq!(config(&[]).tools, ToolSelection::Default);
        assert_eq!(config(&["-nbt"]).tools, ToolSelection::ExtensionsOnly);
        assert_eq!(config(&["-nt", "-nbt"]).tools, ToolSelection::Disabled);
        assert_eq!(
            config(&["-nt", "--tools", "read, ls"]).tools,
            ToolSelection::Only(vec!["read".into(), "ls".into()])
        );
    }

    #[test]
    fn resource_flags_keep_explicit_paths_without_discovery() {
        let c = config(&["--no-skills", "--skill", "a", "-e", "x.sh", "--plan", "now"]);
        assert_eq!(
            (c.skills.paths, c.skills.discover),
            (vec!["a".to_string()], false)
        );
        assert!(c.prompt_templates.discover && c.extensions.discover);
        assert_eq!(c.extensions.paths, ["x.sh"]);
        assert_eq!(
            c.extension_flags,
            [("plan".to_string(), Some("now".to_string()))]
        );
        assert_eq!(c.detached_flag_values, ["plan"]);
    }
}
