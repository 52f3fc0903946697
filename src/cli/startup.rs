//! From command-line arguments to a ready `AgentSession`, following pi's startup order:
//! settings, which session file (`--no-session`, `--fork`, `--session`, `--resume`,
//! `--continue`, or a new one), which model (`--model`, the `--models` scope, the one the
//! session last used, the saved default, the first with a key), the thinking level, the
//! tools, the system prompt's resources, and the prompt templates, skills and extensions
//! (`resources.rs`).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::ai::auth::ApiKey;
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::ModelRegistry;
use crate::ai::models::resolve::{
    ScopedModel, closest_matches, initial_model, resolve_cli_model, resolve_model_scope,
};
use crate::cli::args::Args;
use crate::cli::resources::{self, ResourceLoading, SessionInfo};
use crate::core::agent_session::{
    AgentSession, AgentSessionOptions, DEFAULT_THINKING_LEVEL, PromptResources,
};
use crate::core::paths::{AgentPaths, expand_tilde};
use crate::core::resources::{
    discover_append_system_prompt_file, discover_system_prompt_file, load_context_files,
    resolve_prompt_input,
};
use crate::core::settings::Settings;
use crate::session::SessionManager;
use crate::session::entry::SessionEntry;
use crate::session::listing::{list, list_all};
use crate::session::paths::default_session_dir;
use crate::session::refusal::{MissingCwd, read_only_refusal};
use crate::tools::{builtin_tool_names, default_tool_names};

/// A fatal startup problem: printed as `Error: …` and the process exits with 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupError(pub String);

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What startup produced.
pub struct Startup {
    pub session: AgentSession,
    /// Non-fatal problems to show before starting.
    pub warnings: Vec<String>,
}

/// The session directory: `--session-dir`, `PI_CODING_AGENT_SESSION_DIR`, the `sessionDir`
/// setting, else `<agent>/sessions/--<cwd>--`.
pub fn session_dir_for(
    args: &Args,
    settings: &Settings,
    paths: &AgentPaths,
    cwd: &Path,
) -> PathBuf {
    if let Some(dir) = &args.cli.session_dir {
        return expand_tilde(dir);
    }
    if let Ok(dir) = std::env::var("PI_CODING_AGENT_SESSION_DIR")
        && !dir.is_empty()
    {
        return expand_tilde(&dir);
    }
    if let Some(dir) = settings.session_dir() {
        return dir;
    }
    default_session_dir(&paths.sessions_root(), cwd)
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

fn open_session(path: &Path, session_dir: &Path) -> Result<SessionManager, StartupError> {
    SessionManager::open(path, Some(session_dir)).map_err(|e| StartupError(e.to_string()))
}

fn fork_session(
    source: &Path,
    cwd: &Path,
    session_dir: &Path,
) -> Result<SessionManager, StartupError> {
    SessionManager::fork_from(source, cwd, session_dir).map_err(|e| StartupError(e.to_string()))
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

/// Which session to use, decided from the flags (cheap; may ask the user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionSource {
    InMemory,
    Create,
    Open(PathBuf),
    /// Open a session file but continue it in the current directory instead of the one
    /// its header names (which no longer exists; the user agreed).
    OpenHere(PathBuf),
    Fork(PathBuf),
    ContinueRecent,
}

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

/// Opens (or creates) the session: the part that reads big files.
///
/// An existing session is refused (nothing in its file changed) when its header names a
/// working directory that no longer exists (pi's message and how to go on; the
/// interactive UI asks first, see [`missing_session_cwd`]) or when it accepts no appends
/// (a newer format version): pi-rs never runs a turn it cannot save.
pub fn open_session_source(
    source: &SessionSource,
    cwd: &Path,
    session_dir: &Path,
) -> Result<SessionManager, StartupError> {
    let manager = match source {
        SessionSource::InMemory => return Ok(SessionManager::in_memory(cwd)),
        SessionSource::Create => {
            SessionManager::create(cwd, session_dir).map_err(|e| StartupError(e.to_string()))?
        }
        SessionSource::Open(path) => {
            if let Some(issue) = missing_session_cwd(source, cwd) {
                return Err(StartupError(format!("{issue}\n{}", issue.hint())));
            }
            open_session(path, session_dir)?
        }
        SessionSource::OpenHere(path) => {
            SessionManager::open_with_cwd(path, Some(session_dir), Some(cwd))
                .map_err(|e| StartupError(e.to_string()))?
        }
        SessionSource::Fork(path) => fork_session(path, cwd, session_dir)?,
        SessionSource::ContinueRecent => SessionManager::continue_recent(cwd, session_dir)
            .map_err(|e| StartupError(e.to_string()))?,
    };
    if let (Some(reason), Some(file)) = (manager.read_only_reason(), manager.session_file()) {
        return Err(StartupError(read_only_refusal(file, reason)));
    }
    Ok(manager)
}

/// The session file `source` opens, when its header names a working directory that no
/// longer exists (only [`SessionSource::Open`]: `--continue` and forks run in the current
/// directory anyway). Reads only the file's first line.
pub fn missing_session_cwd(source: &SessionSource, cwd: &Path) -> Option<MissingCwd> {
    match source {
        SessionSource::Open(path) => MissingCwd::check(path, cwd),
        _ => None,
    }
}

/// Asks on the terminal whether to continue a session whose directory is gone in the
/// current one (pi asks the same in its UI). `false`: the user declined.
pub fn confirm_continue_here(issue: &MissingCwd) -> bool {
    eprintln!("{}", issue.prompt_text());
    confirm("Continue in the current directory?")
}

/// Picks and opens the session manager from the flags. `picker` chooses for `--resume`;
/// `Ok(None)` means the user cancelled.
pub fn create_session_manager(
    args: &Args,
    cwd: &Path,
    session_dir: &Path,
    paths: &AgentPaths,
    picker: Option<&SessionPicker>,
) -> Result<Option<SessionManager>, StartupError> {
    match resolve_session_source(args, session_dir, paths, picker)? {
        Some(source) => open_session_source(&source, cwd, session_dir).map(Some),
        None => Ok(None),
    }
}

/// Model choice for a session.
struct ModelChoice {
    model: Option<Model>,
    thinking: Option<ThinkingLevel>,
}

fn choose_model(
    args: &Args,
    registry: &ModelRegistry,
    settings: &Settings,
    scoped: &[ScopedModel],
    session: &SessionManager,
    has_existing: bool,
    warnings: &mut Vec<String>,
) -> Result<ModelChoice, StartupError> {
    let cli = &args.cli;
    if let Some(pattern) = &cli.model {
        return match resolve_cli_model(cli.provider.as_deref(), pattern, registry.all()) {
            Ok(found) => {
                if let Some(w) = found.warning {
                    warnings.push(w);
                }
                Ok(ModelChoice {
                    model: Some(found.model),
                    thinking: found.thinking,
                })
            }
            Err(message) => {
                let near = closest_matches(pattern, registry.all(), 5);
                let hint = if near.is_empty() {
                    String::new()
                } else {
                    format!("\nClosest matches: {}", near.join(", "))
                };
                Err(StartupError(format!(
                    "{message}{hint}\nUse --list-models to see all models."
                )))
            }
        };
    }
    if !scoped.is_empty() && !has_existing {
        let saved = match (settings.default_provider(), settings.default_model()) {
            (Some(p), Some(m)) => registry.find(p, m),
            _ => None,
        };
        let pick = saved
            .and_then(|s| {
                scoped
                    .iter()
                    .find(|x| x.model.provider == s.provider && x.model.id == s.id)
            })
            .unwrap_or(&scoped[0]);
        return Ok(ModelChoice {
            model: Some(pick.model.clone()),
            thinking: pick.thinking,
        });
    }
    if has_existing {
        let context = session.build_session_context();
        if let Some(m) = context.model {
            match registry.find(&m.provider, &m.model_id) {
                Some(model) if registry.has_configured_auth(model) => {
                    return Ok(ModelChoice {
                        model: Some(model.clone()),
                        thinking: None,
                    });
                }
                _ => warnings.push(format!(
                    "Could not restore model {}/{}",
                    m.provider, m.model_id
                )),
            }
        }
    }
    if let (Some(p), Some(m)) = (settings.default_provider(), settings.default_model())
        && let Some(model) = registry.find(p, m)
        && registry.has_configured_auth(model)
    {
        return Ok(ModelChoice {
            model: Some(model.clone()),
            thinking: None,
        });
    }
    let available = registry.available();
    Ok(ModelChoice {
        model: initial_model(&available).cloned(),
        thinking: None,
    })
}

/// The built-in tools the tool flags ask for (`--no-tools`, `--no-builtin-tools`,
/// `--tools a,b`); names that are neither built-in nor tools of `extensions` are
/// reported in `warnings`.
pub fn builtin_tools(
    args: &Args,
    extensions: Option<&crate::extensions::ExtensionHost>,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let extension_tool_names: Vec<String> = extensions
        .map(|host| {
            host.agent_tools()
                .iter()
                .map(|t| t.name().to_string())
                .collect()
        })
        .unwrap_or_default();
    let Some(list) = args.tool_names() else {
        if args.cli.no_tools || args.cli.no_builtin_tools {
            return Vec::new();
        }
        return default_tool_names().iter().map(|s| s.to_string()).collect();
    };
    let mut tool_names = Vec::new();
    for name in list {
        if builtin_tool_names().contains(&name.as_str()) {
            tool_names.push(name);
        } else if !extension_tool_names.contains(&name) {
            warnings.push(format!(
                "Unknown tool \"{name}\" ignored. Built-in tools: {}",
                builtin_tool_names().join(", ")
            ));
        }
    }
    tool_names
}

/// The system prompt's parts besides tools and skills: the context files (AGENTS.md /
/// CLAUDE.md, unless `--no-context-files`), `--system-prompt` or `SYSTEM.md`, and
/// `--append-system-prompt` or `APPEND_SYSTEM.md`. Problems go to `warnings`.
pub fn prompt_resources(
    args: &Args,
    cwd: &Path,
    agent_dir: &Path,
    warnings: &mut Vec<String>,
) -> PromptResources {
    let context_files = if args.cli.no_context_files {
        Vec::new()
    } else {
        load_context_files(cwd, agent_dir, warnings)
    };
    let custom_prompt = match &args.cli.system_prompt {
        Some(p) => Some(resolve_prompt_input(p, warnings)),
        None => discover_system_prompt_file(cwd, agent_dir)
            .and_then(|f| std::fs::read_to_string(f).ok()),
    };
    let append: Vec<String> = if args.cli.append_system_prompt.is_empty() {
        discover_append_system_prompt_file(cwd, agent_dir)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .into_iter()
            .collect()
    } else {
        args.cli
            .append_system_prompt
            .iter()
            .map(|a| resolve_prompt_input(a, warnings))
            .collect()
    };
    PromptResources {
        custom_prompt,
        append,
        context_files,
        skills_block: None,
    }
}

/// Builds the session for the given (already validated) arguments. With
/// [`ResourceLoading::Full`] the extensions are started and attached (must not be called
/// from inside an async task: it blocks on the runtime while they start); `session_start`
/// is left to the mode, once it listens ([`AgentSession::start_extensions`]).
pub fn build_session(
    args: &Args,
    cwd: &Path,
    paths: AgentPaths,
    settings: Settings,
    session: SessionManager,
    loading: &ResourceLoading,
) -> Result<Startup, StartupError> {
    let mut warnings: Vec<String> = args.warnings.clone();
    warnings.extend(settings.problems().iter().map(|p| p.to_string()));
    let mut registry = ModelRegistry::load(&paths.agent_dir);
    if let Some(e) = registry.error() {
        warnings.push(e.to_string());
    }
    let mut session = session;

    // Scoped models for Ctrl+P.
    let patterns: Vec<String> = args
        .model_patterns()
        .unwrap_or_else(|| settings.enabled_models());
    let scoped = if patterns.is_empty() {
        Vec::new()
    } else {
        let pattern_refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let (scoped, scope_warnings) = resolve_model_scope(&pattern_refs, &registry.available());
        warnings.extend(scope_warnings);
        scoped
    };

    let context = session.build_session_context();
    let has_existing = !context.messages.is_empty();
    let has_thinking_entry = session
        .path(None)
        .iter()
        .any(|e| matches!(e, SessionEntry::ThinkingLevelChange(_)));
    let choice = choose_model(
        args,
        &registry,
        &settings,
        &scoped,
        &session,
        has_existing,
        &mut warnings,
    )?;
    let model = choice.model;

    if let Some(key) = &args.cli.api_key {
        let Some(m) = &model else {
            return Err(StartupError(
                "--api-key needs a model: use --model or --provider to choose one".into(),
            ));
        };
        registry.set_runtime_api_key(&m.provider, ApiKey::new(key.clone()));
    }

    let thinking = args
        .thinking
        .or(choice.thinking)
        .or_else(|| {
            (has_existing && has_thinking_entry)
                .then(|| ThinkingLevel::parse(&context.thinking_level))
                .flatten()
        })
        .or(settings.default_thinking_level())
        .unwrap_or(DEFAULT_THINKING_LEVEL);
    let thinking = match &model {
        Some(m) => m.clamp_thinking(thinking),
        None => ThinkingLevel::Off,
    };

    // pi records the starting model and level in a new session (and the level in an old
    // one that has none).
    if session.read_only_reason().is_none() {
        if !has_existing {
            if let Some(m) = &model {
                let _ = session.append_model_change(&m.provider, &m.id);
            }
            let _ = session.append_thinking_level_change(thinking.as_str());
        } else if !has_thinking_entry {
            let _ = session.append_thinking_level_change(thinking.as_str());
        }
    }

    let extensions = match loading {
        ResourceLoading::Full(startup) => resources::start_extensions(
            args,
            &settings,
            cwd,
            &paths.agent_dir,
            SessionInfo {
                file: session.session_file(),
                id: session.session_id().to_string(),
            },
            startup,
            &mut warnings,
        ),
        ResourceLoading::Minimal => None,
    };
    if matches!(loading, ResourceLoading::Full(_)) {
        warnings.extend(resources::check_extension_flags(
            args,
            extensions.as_ref().map(|e| &e.host),
        ));
    }
    let tool_names = builtin_tools(args, extensions.as_ref().map(|e| &e.host), &mut warnings);

    let prompt_resources = prompt_resources(args, cwd, &paths.agent_dir, &mut warnings);

    let (templates, skills) = match loading {
        ResourceLoading::Full(_) => {
            let templates = resources::prompt_templates(args, &settings, cwd, &paths.agent_dir);
            let skills = resources::skills(args, &settings, cwd, &paths.agent_dir);
            warnings.extend(templates.diagnostics.iter().map(ToString::to_string));
            warnings.extend(skills.diagnostics.iter().map(ToString::to_string));
            (templates.templates, skills.skills)
        }
        ResourceLoading::Minimal => (Vec::new(), Vec::new()),
    };

    let session = AgentSession::new(AgentSessionOptions {
        cwd: cwd.to_path_buf(),
        paths,
        settings,
        registry,
        session,
        model,
        thinking,
        scoped_models: scoped,
        tool_names,
        extra_tools: Vec::new(),
        resources: prompt_resources,
        hooks: None,
    });
    session.set_prompt_templates(templates);
    session.set_skills(skills);
    if let (Some(loaded), ResourceLoading::Full(startup)) = (extensions, loading) {
        let tools = resources::extension_tools(args, &loaded.host);
        // Spawning the session's action task needs the runtime.
        let _runtime = startup.runtime.enter();
        session.attach_extensions(loaded.host, loaded.channels, tools);
    }
    Ok(Startup { session, warnings })
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
