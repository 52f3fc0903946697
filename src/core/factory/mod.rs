//! The session factory: from a [`SessionConfig`] (what the command line asked for) and
//! the settings to a running [`AgentSession`], following pi's startup order — which
//! session file, which model and thinking level, the tools, the system prompt's
//! resources, prompt templates, skills and extensions — and `/reload`, which reads the
//! same resources again into a running session.
//!
//! Every mode builds its session here. The factory is async and never blocks the runtime:
//! reading files (a session file may be big) runs on tokio's blocking threads, and the
//! extensions start as tasks. Front ends share it as an `Arc<SessionFactory>`: the
//! interactive UI draws at once with a [`SessionFactory::placeholder`] and asks the
//! factory to [`SessionFactory::load`] the real session, to open what its `--resume`
//! picker chose, and to [`SessionFactory::reload`].
//!
//! Not here: parsing flags, reading stdin and asking the user anything (which session to
//! resume, whether to fork another project's session) — that is the front end's, which
//! hands over its decision as a [`SessionSource`].

mod config;
mod error;
mod model;
mod reload;
mod resources;
mod source;
mod trust;
mod trust_gate;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use self::config::{
    ExtensionHosting, NoTools, ResourceSelection, SessionConfig, ToolSelection,
};
pub use self::error::StartupError;
pub use self::source::{SessionSource, missing_session_cwd, open_session_source, session_dir_for};
pub use self::trust_gate::TrustPrompter;

use self::model::{ModelContext, choose_model};
use self::resources::{
    LoadedExtensions, Place, SessionInfo, SessionPackages, TemplatesAndSkills,
    check_extension_flags, extension_tools, find_extensions, plan_tools, prompt_resources,
    start_extensions,
};
use self::trust_gate::TrustGate;
use crate::ai::auth::ApiKey;
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::ModelRegistry;
use crate::ai::models::resolve::{ScopedModel, resolve_model_scope};
use crate::core::agent_session::{
    AgentSession, AgentSessionOptions, DEFAULT_THINKING_LEVEL, PromptResources,
};
use crate::core::extension_discovery::DiscoveredExtensions;
use crate::core::paths::AgentPaths;
use crate::core::settings::Settings;
use crate::core::trust::ProjectTrust;
use crate::extensions::{SessionStartReason, ShutdownReason};
use crate::session::SessionManager;
use crate::session::tree::EntryKind;

/// How long exiting waits for extensions to handle `session_shutdown` and stop.
pub const EXTENSION_SHUTDOWN_LIMIT: Duration = Duration::from_secs(5);

/// Which resources a build loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceLoading {
    /// Only what the settings give (the interactive placeholder session drawn while the
    /// real one loads): no prompt templates, skills or extensions.
    Minimal,
    /// Prompt templates, skills and extensions too.
    Full,
}

/// A session just built.
pub struct BuiltSession {
    pub session: AgentSession,
    /// Non-fatal problems to show before starting (settings, models.json, flags, skills,
    /// extensions, …).
    pub warnings: Vec<String>,
}

/// Builds sessions for one command line in one directory. See the module documentation.
#[derive(Debug)]
pub struct SessionFactory {
    config: SessionConfig,
    cwd: PathBuf,
    paths: AgentPaths,
    /// The settings read at startup (`/reload` reads them again for the session it
    /// reloads). They include the project's only when its trust is known without asking
    /// (see [`SessionFactory::build`]).
    settings: Settings,
    session_dir: PathBuf,
    hosting: ExtensionHosting,
    /// The project trust decisions of this process (shared by the factories made for
    /// other directories).
    gate: Arc<TrustGate>,
    /// The folder that had no protected resources at startup and was trusted for it:
    /// resources created there during the session are trusted on `/reload`, and the
    /// decision is then saved (pi's implicit trust).
    implicit_trust: Arc<std::sync::Mutex<Option<PathBuf>>>,
}

/// Everything before the extensions start, read on a blocking thread.
struct Prepared {
    manager: SessionManager,
    registry: ModelRegistry,
    model: Option<Model>,
    thinking: ThinkingLevel,
    scoped: Vec<ScopedModel>,
    /// The command line's, the settings', models.json's and the model choice's warnings.
    warnings: Vec<String>,
    /// The extensions to start (a full build only).
    found: Option<DiscoveredExtensions>,
    prompt: PromptResources,
    prompt_warnings: Vec<String>,
    /// A full build only.
    templates_and_skills: Option<TemplatesAndSkills>,
    /// `--model` named no known model, but extensions may still register its provider:
    /// the choice is made again once they loaded, and this error stands if it fails again.
    model_pending: Option<StartupError>,
}

impl SessionFactory {
    /// A factory for `config` in `cwd`; reads the settings (the user's, and the project's
    /// when its trust is known without asking).
    pub fn new(
        config: SessionConfig,
        cwd: PathBuf,
        paths: AgentPaths,
        hosting: ExtensionHosting,
    ) -> SessionFactory {
        let gate = Arc::new(TrustGate::new(config.project_trust, &paths.agent_dir));
        let trust = gate.known(&cwd).unwrap_or_default();
        let settings = Settings::load(&paths.agent_dir, &cwd, trust);
        let implicit_trust = (config.project_trust.is_none()
            && trust.is_trusted()
            && !crate::core::trust::has_protected_resources(&cwd))
        .then(|| cwd.clone());
        let session_dir = session_dir_for(config.session_dir.as_deref(), &settings, &paths, &cwd);
        // As pi, paths on the command line are relative to where pi was started, also
        // when the session runs in its own directory.
        let mut config = config;
        for selection in [
            &mut config.extensions,
            &mut config.skills,
            &mut config.prompt_templates,
        ] {
            absolutize_cli_paths(&mut selection.paths, &cwd);
        }
        SessionFactory {
            config,
            cwd,
            paths,
            settings,
            session_dir,
            hosting,
            gate,
            implicit_trust: Arc::new(std::sync::Mutex::new(implicit_trust)),
        }
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn paths(&self) -> &AgentPaths {
        &self.paths
    }

    /// The settings read when the factory was made.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Where sessions are stored and looked up (see [`session_dir_for`]).
    pub fn session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// Opens (or creates) the session file `source` names, on a blocking thread, and
    /// records `--name` in it. See [`open_session_source`] for the sessions it refuses.
    pub async fn open(&self, source: SessionSource) -> Result<SessionManager, StartupError> {
        let cwd = self.cwd.clone();
        let dir = self.session_dir.clone();
        let id = self.config.session_id.clone();
        let name = self.config.session_name.clone();
        blocking(move || {
            let mut manager = open_session_source(&source, &cwd, &dir, id.as_deref())?;
            // pi writes the name as the session's next entry, before the model is chosen.
            if let Some(name) = name {
                manager
                    .append_session_info(&name)
                    .map_err(|e| StartupError(e.to_string()))?;
            }
            Ok(manager)
        })
        .await?
    }

    /// Builds the session on `manager`. With [`ResourceLoading::Full`] the project trust
    /// is decided first (without asking anyone: see [`SessionFactory::build_asking`]), then
    /// its extensions are started and attached; `session_start` is left to the caller,
    /// once it listens ([`AgentSession::start_extensions`]).
    ///
    /// The session runs in the manager's directory: an opened session file in the `cwd`
    /// its header records, when that directory exists (pi's runtime takes the session
    /// manager's cwd). Its settings, context files, resources, extensions and tools are
    /// then those of that directory, and so are a `/reload`'s.
    pub async fn build(
        self: &Arc<Self>,
        manager: SessionManager,
        loading: ResourceLoading,
    ) -> Result<BuiltSession, StartupError> {
        self.build_asking(manager, loading, None).await
    }

    /// [`SessionFactory::build`], asking `prompter` (the terminal UI) where pi asks about
    /// project trust.
    pub async fn build_asking(
        self: &Arc<Self>,
        manager: SessionManager,
        loading: ResourceLoading,
        prompter: Option<TrustPrompter>,
    ) -> Result<BuiltSession, StartupError> {
        let session_cwd = manager.cwd().to_path_buf();
        if session_cwd != self.cwd && session_cwd.is_dir() {
            let rebased = Arc::new(self.in_directory(session_cwd, None).await?);
            return rebased.build_here(manager, loading, prompter).await;
        }
        self.build_here(manager, loading, prompter).await
    }

    /// This factory for sessions that run in `cwd` (the settings read again there, with
    /// `trust` or the trust known there; the session directory, the command line, the
    /// hosting and the trust decisions stay).
    async fn in_directory(
        &self,
        cwd: PathBuf,
        trust: Option<ProjectTrust>,
    ) -> Result<SessionFactory, StartupError> {
        let trust = trust.or_else(|| self.gate.known(&cwd)).unwrap_or_default();
        let agent_dir = self.paths.agent_dir.clone();
        let settings_cwd = cwd.clone();
        let settings = blocking(move || Settings::load(&agent_dir, &settings_cwd, trust)).await?;
        Ok(SessionFactory {
            config: self.config.clone(),
            cwd,
            paths: self.paths.clone(),
            settings,
            session_dir: self.session_dir.clone(),
            hosting: self.hosting,
            gate: self.gate.clone(),
            implicit_trust: self.implicit_trust.clone(),
        })
    }

    /// [`SessionFactory::build`] in this factory's directory: the trust decision, then
    /// the build with the settings it allows.
    async fn build_here(
        self: &Arc<Self>,
        manager: SessionManager,
        loading: ResourceLoading,
        prompter: Option<TrustPrompter>,
    ) -> Result<BuiltSession, StartupError> {
        if loading == ResourceLoading::Minimal {
            return self.build_decided(manager, loading, None, Vec::new()).await;
        }
        let info = SessionInfo {
            file: manager.session_file().map(Path::to_path_buf),
            id: manager.session_id().to_string(),
        };
        let decided = self.decide_trust(&info, prompter.as_ref()).await?;
        if decided.trust == self.settings.project_trust() {
            return self
                .build_decided(manager, loading, decided.early, decided.warnings)
                .await;
        }
        let decided_factory = Arc::new(
            self.in_directory(self.cwd.clone(), Some(decided.trust))
                .await?,
        );
        decided_factory
            .build_decided(manager, loading, decided.early, decided.warnings)
            .await
    }

    /// Builds the session once trust is decided (`self.settings` hold the decision).
    /// `early`: the extensions started for the trust question; `trust_warnings` come first.
    async fn build_decided(
        self: &Arc<Self>,
        manager: SessionManager,
        loading: ResourceLoading,
        early: Option<resources::LoadedExtensions>,
        trust_warnings: Vec<String>,
    ) -> Result<BuiltSession, StartupError> {
        let this = self.clone();
        let full = loading == ResourceLoading::Full;
        let mut prepared = blocking(move || this.prepare(manager, full)).await??;
        prepared.warnings.splice(0..0, trust_warnings);

        let mut extension_warnings = Vec::new();
        let extensions = match prepared.found.take() {
            Some(found) => {
                let info = SessionInfo {
                    file: prepared.manager.session_file().map(Path::to_path_buf),
                    id: prepared.manager.session_id().to_string(),
                };
                let place = (self.cwd.as_path(), self.paths.agent_dir.as_path());
                start_extensions(
                    found,
                    &self.config,
                    place,
                    self.hosting,
                    info,
                    &mut extension_warnings,
                    early,
                )
                .await?
            }
            None => None,
        };
        if full {
            let host = extensions.as_ref().map(|e| &e.host);
            match check_extension_flags(&self.config, host) {
                Ok(warnings) => extension_warnings.extend(warnings),
                Err(e) => {
                    if let Some(loaded) = &extensions {
                        loaded.host.shutdown(ShutdownReason::Quit, None).await;
                    }
                    return Err(e);
                }
            }
        }

        if full {
            let this = self.clone();
            let host = extensions.as_ref().map(|e| e.host.clone());
            let (applied, provider_warnings) = blocking(move || {
                let mut warnings = Vec::new();
                let applied =
                    this.apply_extension_providers(prepared, host.as_ref(), &mut warnings);
                (applied, warnings)
            })
            .await?;
            extension_warnings.extend(provider_warnings);
            prepared = match applied {
                Ok(p) => p,
                Err(e) => {
                    if let Some(loaded) = &extensions {
                        loaded.host.shutdown(ShutdownReason::Quit, None).await;
                    }
                    return Err(e);
                }
            };
        }

        let this = self.clone();
        let (session, warnings, extensions, active_tools) =
            blocking(move || this.assemble(prepared, extension_warnings, extensions)).await?;
        if let Some(loaded) = extensions {
            let tools = extension_tools(&active_tools, &loaded.host);
            session.attach_extensions(loaded.host, loaded.channels, tools);
            // The declaration order pi gives them (extension tools may come first).
            session.set_tools_in_order(&active_tools);
        }
        // A resumed branch keeps the tools it recorded (pi 1.6).
        session.set_transcript_tool_modifiers(crate::core::tool_selection::transcript_modifiers(
            &self.config.tools,
        ));
        session.restore_tools_from_transcript(true);
        if full {
            session.set_reload_handler(self.reload_handler());
        }
        Ok(BuiltSession { session, warnings })
    }

    /// The session the interactive UI draws first, while the real one loads: an unsaved
    /// one with the model and settings, without templates, skills or extensions.
    pub async fn placeholder(self: &Arc<Self>) -> Result<BuiltSession, StartupError> {
        let manager = SessionManager::in_memory(&self.cwd);
        self.build(manager, ResourceLoading::Minimal).await
    }

    /// Opens `source`, builds its session with every resource and starts its extensions
    /// (`session_start`, reason `startup`): the session the interactive UI switches to.
    pub async fn load(
        self: &Arc<Self>,
        source: SessionSource,
    ) -> Result<BuiltSession, StartupError> {
        self.load_asking(source, None).await
    }

    /// [`SessionFactory::load`], asking `prompter` (the terminal UI) where pi asks about
    /// project trust.
    pub async fn load_asking(
        self: &Arc<Self>,
        source: SessionSource,
        prompter: Option<TrustPrompter>,
    ) -> Result<BuiltSession, StartupError> {
        let manager = self.open(source).await?;
        let built = self
            .build_asking(manager, ResourceLoading::Full, prompter)
            .await?;
        built
            .session
            .start_extensions(SessionStartReason::Startup)
            .await;
        Ok(built)
    }

    fn place<'a>(&'a self, packages: &'a SessionPackages) -> Place<'a> {
        Place {
            settings: &self.settings,
            cwd: &self.cwd,
            agent_dir: &self.paths.agent_dir,
            packages,
        }
    }

    /// The model, the thinking level (recorded in the session file as pi does), and the
    /// resources read from files. Blocking.
    fn prepare(&self, mut manager: SessionManager, full: bool) -> Result<Prepared, StartupError> {
        let settings = &self.settings;
        let mut warnings: Vec<String> = self.config.warnings.clone();
        warnings.extend(settings.problems().iter().map(|p| p.to_string()));
        // Keys set but not acted on: one line, named at startup only (not on `/reload`).
        warnings.extend(settings.unsupported_notice());
        let mut registry = ModelRegistry::load(&self.paths.agent_dir);
        if let Some(e) = registry.error() {
            warnings.push(e.to_string());
        }

        // Scoped models for Ctrl+P.
        let patterns = match &self.config.model_scope {
            Some(patterns) => patterns.clone(),
            None => settings.enabled_models(),
        };
        let scoped = if patterns.is_empty() {
            Vec::new()
        } else {
            let pattern_refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let (scoped, scope_warnings) =
                resolve_model_scope(&pattern_refs, &registry.available());
            warnings.extend(scope_warnings);
            scoped
        };

        let mut choice_warnings = Vec::new();
        let (model, thinking, model_pending) =
            match self.pick_model(&mut registry, &mut manager, &scoped, &mut choice_warnings) {
                Ok((model, thinking)) => {
                    warnings.extend(choice_warnings);
                    (model, thinking, None)
                }
                // A provider from an extension may make the model known (see `build`).
                Err(e) if full && self.config.model.is_some() => {
                    (None, ThinkingLevel::Off, Some(e))
                }
                Err(e) => return Err(e),
            };

        // pi packages: missing ones are installed now; one that cannot be stops startup.
        let packages = if full {
            let (packages, package_warnings) =
                SessionPackages::resolve(&self.config, settings, &self.cwd, &self.paths.agent_dir)
                    .map_err(StartupError)?;
            warnings.extend(package_warnings);
            packages
        } else {
            SessionPackages::default()
        };
        let place = self.place(&packages);
        let mut prompt_warnings = Vec::new();
        let prompt = prompt_resources(&self.config, &place, &mut prompt_warnings);
        Ok(Prepared {
            manager,
            registry,
            model,
            thinking,
            scoped,
            warnings,
            found: full.then(|| find_extensions(&self.config, &place)),
            prompt,
            prompt_warnings,
            templates_and_skills: full.then(|| TemplatesAndSkills::load(&self.config, &place)),
            model_pending,
        })
    }

    /// The model and thinking level of the session on `manager` (recorded in a new session
    /// file as pi does). Blocking.
    fn pick_model(
        &self,
        registry: &mut ModelRegistry,
        manager: &mut SessionManager,
        scoped: &[ScopedModel],
        warnings: &mut Vec<String>,
    ) -> Result<(Option<Model>, ThinkingLevel), StartupError> {
        let settings = &self.settings;
        let context = manager.build_session_context();
        let has_existing = !context.messages.is_empty();
        let has_thinking_entry = manager
            .walk_back(None, |head| {
                if head.kind == EntryKind::ThinkingLevelChange {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })
            .is_some();
        let cx = ModelContext {
            config: &self.config,
            registry,
            settings,
            scoped,
            session: manager,
            has_existing,
        };
        let choice = choose_model(&cx, warnings)?;
        let model = choice.model;

        if let Some(key) = &self.config.api_key {
            let Some(m) = &model else {
                return Err(StartupError(
                    "--api-key needs a model: use --model or --provider to choose one".into(),
                ));
            };
            registry.set_runtime_api_key(&m.provider, ApiKey::new(key.clone()));
        }

        let thinking = self
            .config
            .thinking
            .or(choice.thinking)
            .or_else(|| {
                (has_existing && has_thinking_entry)
                    .then(|| ThinkingLevel::parse(&context.thinking_level))
                    .flatten()
            })
            .or_else(|| {
                model
                    .as_ref()
                    .and_then(|m| settings.model_thinking_level(&m.provider, &m.id))
            })
            .or(settings.default_thinking_level())
            .unwrap_or(DEFAULT_THINKING_LEVEL);
        let thinking = match &model {
            Some(m) => m.clamp_thinking(thinking),
            None => ThinkingLevel::Off,
        };

        // pi records the starting model and level in a new session (and the level in an
        // old one that has none).
        if manager.read_only_reason().is_none() {
            if !has_existing {
                if let Some(m) = &model {
                    let _ = manager.append_model_change(&m.provider, &m.id);
                }
                let _ = manager.append_thinking_level_change(thinking.as_str());
            } else if !has_thinking_entry {
                let _ = manager.append_thinking_level_change(thinking.as_str());
            }
        }

        Ok((model, thinking))
    }

    /// Puts the providers the extensions registered into the registry, then makes a
    /// model choice that waited for them. Blocking.
    fn apply_extension_providers(
        &self,
        mut prepared: Prepared,
        host: Option<&crate::extensions::ExtensionHost>,
        warnings: &mut Vec<String>,
    ) -> Result<Prepared, StartupError> {
        for (path, provider) in host.map(|h| h.providers()).unwrap_or_default() {
            if let Err(e) = prepared
                .registry
                .register_provider(&provider.name, &provider.config)
            {
                warnings.push(format!("Extension \"{}\": {e}", path.display()));
            }
        }
        if let Some(pending) = prepared.model_pending.take() {
            if prepared.registry.registered_providers().is_empty() {
                return Err(pending);
            }
            let (model, thinking) = self.pick_model(
                &mut prepared.registry,
                &mut prepared.manager,
                &prepared.scoped,
                &mut prepared.warnings,
            )?;
            prepared.model = model;
            prepared.thinking = thinking;
        }
        Ok(prepared)
    }

    /// Makes the session from what [`SessionFactory::prepare`] read and the started
    /// extensions (handed back, to be attached). Blocking: builds the conversation's
    /// context. The warnings come out in pi's order. Also returns the active tools in
    /// the order they are declared.
    fn assemble(
        &self,
        prepared: Prepared,
        extension_warnings: Vec<String>,
        extensions: Option<LoadedExtensions>,
    ) -> (
        AgentSession,
        Vec<String>,
        Option<LoadedExtensions>,
        Vec<String>,
    ) {
        let mut warnings = prepared.warnings;
        warnings.extend(extension_warnings);
        let host = extensions.as_ref().map(|e| &e.host);
        let plan = plan_tools(&self.config, &self.settings, host, &mut warnings);
        warnings.extend(prepared.prompt_warnings);

        let session = AgentSession::new(AgentSessionOptions {
            cwd: self.cwd.clone(),
            paths: self.paths.clone(),
            settings: self.settings.clone(),
            registry: prepared.registry,
            session: prepared.manager,
            model: prepared.model,
            thinking: prepared.thinking,
            scoped_models: prepared.scoped,
            tool_names: plan.builtin,
            extra_tools: Vec::new(),
            resources: prepared.prompt,
            hooks: None,
        });
        session.set_tool_filter(plan.filter);
        if let Some(loaded) = prepared.templates_and_skills {
            warnings.extend(loaded.warnings());
            session.set_prompt_templates(loaded.templates.templates);
            session.set_skills(loaded.skills.skills);
        }
        (session, warnings, extensions, plan.active)
    }
}

/// Makes the relative local paths among `paths` (`-e`, `--skill`, `--prompt-template`
/// values) absolute against `cwd`; package sources and `~` paths stay as they are.
fn absolutize_cli_paths(paths: &mut [String], cwd: &Path) {
    for path in paths {
        let local = crate::core::packages::source::is_local_path(path);
        if local && !path.starts_with('~') && Path::new(path.as_str()).is_relative() {
            let relative = path.strip_prefix("./").unwrap_or(path);
            *path = cwd.join(relative).display().to_string();
        }
    }
}

/// Runs blocking work (file reading) off the runtime's worker threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, StartupError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StartupError(format!("startup was interrupted: {e}")))
}
