//! The command line's share of startup: mapping the flags to the session factory's
//! [`SessionConfig`], deciding which session to run on from `--no-session`, `--fork`,
//! `--session`, `--resume` and `--continue` (asking on the terminal where pi asks), and
//! reading piped stdin. Building the session is `core::factory`'s job.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::cli::args::Args;
use crate::core::builtin_extensions::{self, BuiltinRef};
use crate::core::factory::{
    NoTools, ResourceSelection, SessionConfig, SessionSource, StartupError, ToolSelection,
};
use crate::core::paths::{AgentPaths, expand_tilde};
use crate::session::ids::{INVALID_SESSION_ID, is_valid_session_id};
use crate::session::listing::{list, list_all};
use crate::session::refusal::MissingCwd;

/// What building the session takes from the flags.
pub fn session_config(args: &Args) -> SessionConfig {
    let cli = &args.cli;
    let no_tools = if cli.no_tools {
        NoTools::All
    } else if cli.no_builtin_tools {
        NoTools::Builtin
    } else {
        NoTools::Off
    };
    let tools = ToolSelection {
        tools: args.tool_names(),
        exclude: args.excluded_tools(),
        no_tools,
    };
    let selection = |paths: &[String], no_discovery: bool| ResourceSelection {
        paths: paths.to_vec(),
        discover: !no_discovery,
    };
    // `-e builtin:<name>` names one of pi 1.6's built-in extensions, never a path.
    let (builtin, extension_paths): (Vec<String>, Vec<String>) = cli
        .extensions
        .iter()
        .cloned()
        .partition(|p| builtin_extensions::parse(p).is_some());
    let builtin: Vec<String> = builtin
        .iter()
        .filter_map(|p| match builtin_extensions::parse(p) {
            Some(BuiltinRef::Known(name)) => Some(name.to_string()),
            _ => None,
        })
        .collect();
    let mut warnings = args.warnings.clone();
    if !builtin.is_empty() {
        let names: Vec<String> = builtin.iter().map(|n| format!("builtin:{n}")).collect();
        warnings.push(format!(
            "pi 1.6's built-in extension{} {} come{} with a later version of pi-rs; this session runs without {}",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            if names.len() == 1 { "s" } else { "" },
            if names.len() == 1 { "it" } else { "them" },
        ));
    }
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
        extensions: selection(&extension_paths, cli.no_extensions),
        extension_flags: args.unknown_flags.clone(),
        detached_flag_values: args.detached_flag_values.clone(),
        session_dir: cli.session_dir.clone(),
        warnings,
        offline: cli.offline,
        session_id: cli.session_id.clone(),
        session_name: args.session_name(),
        builtin_extensions: builtin,
        project_trust: args.project_trust,
    }
}

/// pi's error for `flag` given with any of the `others` that are on.
fn refuse_combined(flag: &str, others: &[(bool, &str)]) -> Result<(), StartupError> {
    let given: Vec<&str> = others
        .iter()
        .filter_map(|(on, other)| on.then_some(*other))
        .collect();
    if given.is_empty() {
        return Ok(());
    }
    Err(StartupError(format!(
        "{flag} cannot be combined with {}",
        given.join(", ")
    )))
}

/// pi's checks of the command line made before anything starts: `--fork` and
/// `--session-id` combinations and the id's form, `--provider` without `--model`, and
/// `-e builtin:<name>` of a name pi does not have. Each is an error (exit code 1).
pub fn check_flags(args: &Args) -> Result<(), StartupError> {
    let cli = &args.cli;
    if cli.fork.is_some() {
        refuse_combined(
            "--fork",
            &[
                (cli.session.is_some(), "--session"),
                (cli.continue_session, "--continue"),
                (cli.resume, "--resume"),
                (cli.no_session, "--no-session"),
            ],
        )?;
    }
    if let Some(id) = &cli.session_id {
        refuse_combined(
            "--session-id",
            &[
                (cli.session.is_some(), "--session"),
                (cli.continue_session, "--continue"),
                (cli.resume, "--resume"),
            ],
        )?;
        if !is_valid_session_id(id) {
            return Err(StartupError(INVALID_SESSION_ID.to_string()));
        }
    }
    for path in &cli.extensions {
        if let Some(BuiltinRef::Unknown(_)) = builtin_extensions::parse(path) {
            return Err(StartupError(format!(
                "{}\n{}",
                builtin_extensions::unknown_error(path),
                builtin_extensions::LOAD_FAILURE_HINT
            )));
        }
    }
    if let (Some(provider), None) = (&cli.provider, &cli.model) {
        return Err(StartupError(format!(
            "--provider requires --model (for example: --provider {provider} --model <pattern>)"
        )));
    }
    Ok(())
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
    (session_dir, cwd): (&Path, &Path),
    paths: &AgentPaths,
    picker: Option<&SessionPicker>,
) -> Result<Option<SessionSource>, StartupError> {
    let cli = &args.cli;
    if cli.no_session {
        return Ok(Some(SessionSource::InMemory));
    }
    if let Some(arg) = &cli.fork {
        if let Some(id) = &cli.session_id
            && find_here_by_id(id, session_dir, paths, cwd).is_some()
        {
            return Err(StartupError(format!(
                "Session already exists with id '{id}'"
            )));
        }
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
    if let Some(id) = &cli.session_id {
        if let Some(path) = find_here_by_id(id, session_dir, paths, cwd) {
            return Ok(Some(SessionSource::Open(path)));
        }
        eprintln!(
            "Warning: No project session found with id '{id}'; creating a new session with that id."
        );
    }
    Ok(Some(SessionSource::Create))
}

/// The current directory's session with exactly `id` (pi's `findById`): in a session
/// directory of its own any session counts, in a shared one (`--session-dir`, the
/// `sessionDir` setting) only one whose header names `cwd`.
fn find_here_by_id(
    id: &str,
    session_dir: &Path,
    paths: &AgentPaths,
    cwd: &Path,
) -> Option<PathBuf> {
    let own = crate::session::paths::default_session_dir(&paths.sessions_root(), cwd);
    let shared = own != session_dir;
    crate::session::listing::find_by_id(session_dir, id, shared.then_some(cwd))
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
    fn tool_flags_map_to_one_selection() {
        assert_eq!(config(&[]).tools, ToolSelection::default());
        assert_eq!(config(&["-nbt"]).tools.no_tools, NoTools::Builtin);
        assert_eq!(config(&["-nt", "-nbt"]).tools.no_tools, NoTools::All);
        let t = config(&["-nt", "--tools", "read, ls", "-xt", "b*"]).tools;
        assert_eq!(t.tools, Some(vec!["read".into(), "ls".into()]));
        assert_eq!(t.exclude, ["b*"]);
    }

    #[test]
    fn builtin_extensions_are_not_paths() {
        let c = config(&["-e", "builtin:mcp", "-e", "x.ts"]);
        assert_eq!(c.builtin_extensions, ["mcp"]);
        assert!(c.extensions.paths[0].ends_with("x.ts"));
        assert!(
            c.warnings[0].contains("builtin:mcp comes with a later version"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn flag_combinations_pi_refuses() {
        let check = |argv: &[&str]| {
            check_flags(&crate::cli::args::parse(argv).unwrap())
                .err()
                .map(|e| e.0)
        };
        assert_eq!(
            check(&["--session-id", "a", "-c"]).unwrap(),
            "--session-id cannot be combined with --continue"
        );
        assert_eq!(check(&["--session-id", "a b"]).unwrap(), INVALID_SESSION_ID);
        assert_eq!(
            check(&["--fork", "x", "--no-session"]).unwrap(),
            "--fork cannot be combined with --no-session"
        );
        assert_eq!(
            check(&["--session-id", "a", "--fork", "x", "--no-session"]).unwrap(),
            "--fork cannot be combined with --no-session"
        );
        assert!(
            check(&["--provider", "p"])
                .unwrap()
                .starts_with("--provider requires --model")
        );
        assert!(
            check(&["-e", "builtin:nope"])
                .unwrap()
                .contains("Unknown built-in extension: builtin:nope")
        );
        assert_eq!(
            check(&[
                "--session-id",
                "a",
                "--no-session",
                "--provider",
                "p",
                "--model",
                "m"
            ]),
            None
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
