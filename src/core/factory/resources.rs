//! A session's resources as the configuration and the settings select them: the system
//! prompt's parts (context files, `SYSTEM.md`, `APPEND_SYSTEM.md` or their flags), prompt
//! templates, skills, the built-in tools, and the extensions (found here, started by the
//! factory), with the checks of the flags extensions may claim and of the tools they add.
//!
//! Everything that goes wrong here is a warning — a broken skill never stops pi-rs from
//! starting — except an extension that fails to load, which stops it as in pi.

use std::path::Path;
use std::sync::Arc;

use super::StartupError;
use super::config::{ExtensionHosting, ResourceSelection, SessionConfig};
use crate::core::agent_session::PromptResources;
use crate::core::extension_discovery::{DiscoveredExtensions, discover_extensions};
use crate::core::packages::{PackageManager, ResolvedPackages, ResourceKind, is_package_source};
use crate::core::prompt_templates::{LoadedPromptTemplates, load_prompt_templates};
use crate::core::resource_paths::ResourceOptions;
use crate::core::resources::{
    discover_append_system_prompt_file, discover_system_prompt_file, load_context_files,
    resolve_prompt_input,
};
use crate::core::settings::Settings;
use crate::core::skills::{LoadedSkills, load_skills};
use crate::core::{builtin_extensions, tool_selection};
use crate::extensions::protocol::FlagType;
use crate::extensions::{ExtensionHost, HostChannels, LoadOptions};
use crate::tools::{Tool, builtin_tool_names};

/// Where resources are looked for: the project, the agent directory, the settings and
/// the pi packages they (and `-e`) name.
pub(super) struct Place<'a> {
    pub settings: &'a Settings,
    pub cwd: &'a Path,
    pub agent_dir: &'a Path,
    pub packages: &'a SessionPackages,
}

impl Place<'_> {
    fn options(&self, key: &str, selection: &ResourceSelection) -> ResourceOptions {
        let kind = match key {
            "extensions" => ResourceKind::Extensions,
            "skills" => ResourceKind::Skills,
            "prompts" => ResourceKind::Prompts,
            _ => ResourceKind::Themes,
        };
        let mut paths = selection.paths.clone();
        let mut cli_packages = self.packages.temporary.enabled(kind);
        if kind == ResourceKind::Extensions {
            // `-e npm:…` stands for its package's extensions, in the `-e` order.
            paths = paths
                .into_iter()
                .flat_map(|p| {
                    if is_package_source(&p) {
                        self.packages
                            .temporary
                            .enabled_of(kind, &p)
                            .into_iter()
                            .map(|f| f.to_string_lossy().into_owned())
                            .collect()
                    } else {
                        vec![p]
                    }
                })
                .collect();
            cli_packages.clear();
        }
        let mut options = ResourceOptions::from_settings(
            self.settings,
            key,
            self.cwd,
            self.agent_dir,
            paths,
            selection.discover,
        );
        options.packages = self.packages.configured.enabled(kind);
        options.cli_packages = cli_packages;
        options
    }
}

/// The pi packages of a session: those of the settings and those of `-e`.
#[derive(Debug, Clone, Default)]
pub(super) struct SessionPackages {
    pub configured: ResolvedPackages,
    pub temporary: ResolvedPackages,
}

impl SessionPackages {
    /// Resolves (installing what is missing, unless offline) the packages of `settings`
    /// and the `-e` package sources. A package that cannot be installed is an error
    /// naming it; anything left out is among the warnings.
    pub fn resolve(
        config: &SessionConfig,
        settings: &Settings,
        cwd: &Path,
        agent_dir: &Path,
    ) -> Result<(SessionPackages, Vec<String>), String> {
        let manager = PackageManager::new(cwd, agent_dir, settings).with_offline(config.offline);
        let configured = manager.resolve(settings).map_err(|e| e.to_string())?;
        let sources: Vec<String> = config
            .extensions
            .paths
            .iter()
            .filter(|p| is_package_source(p))
            .cloned()
            .collect();
        let temporary = if sources.is_empty() {
            ResolvedPackages::default()
        } else {
            manager
                .resolve_temporary(&sources)
                .map_err(|e| e.to_string())?
        };
        let warnings = configured
            .warnings
            .iter()
            .chain(&temporary.warnings)
            .cloned()
            .collect();
        Ok((
            SessionPackages {
                configured,
                temporary,
            },
            warnings,
        ))
    }
}

/// Prompt templates and skills, with their problems as warnings (templates' first).
pub(super) struct TemplatesAndSkills {
    pub templates: LoadedPromptTemplates,
    pub skills: LoadedSkills,
}

impl TemplatesAndSkills {
    pub fn load(config: &SessionConfig, place: &Place<'_>) -> TemplatesAndSkills {
        TemplatesAndSkills {
            templates: load_prompt_templates(&place.options("prompts", &config.prompt_templates)),
            skills: load_skills(&place.options("skills", &config.skills)),
        }
    }

    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        let templates = self.templates.diagnostics.iter().map(ToString::to_string);
        templates.chain(self.skills.diagnostics.iter().map(ToString::to_string))
    }
}

/// Finds the extensions to run (none to find without discovery and `-e` paths).
pub(super) fn find_extensions(config: &SessionConfig, place: &Place<'_>) -> DiscoveredExtensions {
    discover_extensions(&place.options("extensions", &config.extensions))
}

/// Running extensions, ready to attach to a session.
pub(super) struct LoadedExtensions {
    pub host: ExtensionHost,
    pub channels: HostChannels,
}

/// The session the extensions are told about in `hello`.
pub(super) struct SessionInfo {
    pub file: Option<std::path::PathBuf>,
    pub id: String,
}

/// How the extensions of a session in `place` (its folder and the agent directory) are
/// started.
pub(super) fn load_options(
    config: &SessionConfig,
    place: (&Path, &Path),
    hosting: ExtensionHosting,
    session: &SessionInfo,
) -> LoadOptions {
    let (cwd, agent_dir) = place;
    let mut options = LoadOptions::new(cwd, agent_dir, hosting.mode, hosting.has_ui);
    options.session_file = session.file.clone();
    options.session_id = Some(session.id.clone());
    options.cli_flags = config.extension_flags.clone();
    options
}

/// Starts the extensions `found` names. `None` when there are none; their discovery
/// problems and registration conflicts go to `warnings`. An extension that fails to
/// load stops the start, as in pi: the error names each such file and its cause.
/// `early`: extensions already running for the trust question, which keep running and
/// take their place among `found`.
pub(super) async fn start_extensions(
    found: DiscoveredExtensions,
    config: &SessionConfig,
    place: (&Path, &Path),
    hosting: ExtensionHosting,
    session: SessionInfo,
    warnings: &mut Vec<String>,
    early: Option<LoadedExtensions>,
) -> Result<Option<LoadedExtensions>, StartupError> {
    warnings.extend(found.diagnostics.iter().map(ToString::to_string));
    if found.extensions.is_empty() {
        if let Some(early) = early {
            early
                .host
                .shutdown(crate::extensions::ShutdownReason::Quit, None)
                .await;
        }
        return Ok(None);
    }
    let (host, channels) = match early {
        Some(early) => (early.host.extend(found.extensions).await, early.channels),
        None => {
            let options = load_options(config, place, hosting, &session);
            ExtensionHost::load(found.extensions, options).await
        }
    };
    let describe = |e: &crate::extensions::LoadError| {
        format!(
            "Failed to load extension \"{}\": {}",
            e.path.display(),
            e.error
        )
    };
    let (fatal, other): (Vec<_>, Vec<_>) = host.load_errors().iter().partition(|e| e.fatal);
    warnings.extend(
        other
            .into_iter()
            .map(|e| format!("Extension \"{}\": {}", e.path.display(), e.error)),
    );
    if !fatal.is_empty() {
        let message = fatal
            .into_iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\nError: ");
        host.shutdown(crate::extensions::ShutdownReason::Quit, None)
            .await;
        return Err(StartupError(message));
    }
    Ok(Some(LoadedExtensions { host, channels }))
}

/// Checks the command-line flags nobody else knew against the flags extensions
/// registered, with pi's messages. Unknown flags and string flags without a value are
/// errors that stop the start, as in pi: `Err` holds them (one message per line).
/// Returns the warnings otherwise.
pub(super) fn check_extension_flags(
    config: &SessionConfig,
    host: Option<&ExtensionHost>,
) -> Result<Vec<String>, StartupError> {
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut unknown = Vec::new();
    for (name, value) in &config.extension_flags {
        let flag = host.and_then(|h| h.flags().iter().find(|f| &f.name == name));
        match (flag.map(|f| f.kind), value) {
            (None, _) => unknown.push(format!("--{name}")),
            (Some(FlagType::String), None) => {
                errors.push(format!("Extension flag \"--{name}\" requires a value"));
            }
            (Some(FlagType::Boolean), Some(v)) if config.detached_flag_values.contains(name) => {
                warnings.push(format!(
                    "\"--{name}\" is a flag without a value, so \"{v}\" after it was not sent as a message; put messages before such flags"
                ));
            }
            (Some(_), _) => {}
        }
    }
    if !unknown.is_empty() {
        let plural = if unknown.len() == 1 { "" } else { "s" };
        errors.push(format!("Unknown option{plural}: {}", unknown.join(", ")));
    }
    if errors.is_empty() {
        Ok(warnings)
    } else {
        Err(StartupError(errors.join("\nError: ")))
    }
}

/// The tools a session runs with, as the flags and the `defaultTools` setting select
/// them (`core::tool_selection`): the built-in tools to create and every active tool in
/// the order they are declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ToolPlan {
    pub builtin: Vec<String>,
    pub active: Vec<String>,
    /// What extensions may activate later.
    pub filter: tool_selection::ToolFilter,
}

impl ToolPlan {
    fn of(
        active: Vec<String>,
        extension: &[String],
        filter: tool_selection::ToolFilter,
    ) -> ToolPlan {
        // An extension tool replaces the built-in tool of its name.
        let builtin = active
            .iter()
            .filter(|n| builtin_tool_names().contains(&n.as_str()) && !extension.contains(n))
            .cloned()
            .collect();
        ToolPlan {
            builtin,
            active,
            filter,
        }
    }
}

fn extension_tool_names(host: Option<&ExtensionHost>) -> Vec<String> {
    host.map(|h| {
        h.agent_tools()
            .iter()
            .map(|t| t.name().to_string())
            .collect()
    })
    .unwrap_or_default()
}

/// The resolved `defaultTools` of `settings` (the user's file, then the project's);
/// malformed values were named when the settings were read.
pub(super) fn settings_default_tools(settings: &Settings) -> Option<Vec<String>> {
    settings
        .default_tools()
        .map(|entries| tool_selection::resolve_default_tools(&entries))
}

/// Whether pi 1.6 would load its built-in extension `name` here (for the tools pi-rs
/// has in a later version).
fn builtin_extension_on(config: &SessionConfig, settings: &Settings, name: &str) -> bool {
    config.builtin_extensions.iter().any(|n| n == name)
        || (config.extensions.discover
            && builtin_extensions::enabled_by_settings(
                &settings.global_strings("extensions"),
                &settings.project_strings("extensions"),
                name,
            ))
}

/// The tools a new session starts with. Names that are no tool, and tools pi 1.6 has
/// that pi-rs does not have yet, are named in `warnings`.
pub(super) fn plan_tools(
    config: &SessionConfig,
    settings: &Settings,
    host: Option<&ExtensionHost>,
    warnings: &mut Vec<String>,
) -> ToolPlan {
    let extension = extension_tool_names(host);
    let defaults = settings_default_tools(settings);
    let selection = &config.tools;
    let builtin = builtin_tool_names();
    let asked = selection.tools.clone().unwrap_or_default();
    for name in tool_selection::unknown_names(&asked, builtin, &extension) {
        warnings.push(format!(
            "Unknown tool \"{name}\" ignored. Built-in tools: {}",
            builtin.join(", ")
        ));
    }
    let configured = defaults.clone().unwrap_or_default();
    for name in tool_selection::unknown_names(&configured, builtin, &extension) {
        warnings.push(format!(
            "Unknown tool \"{name}\" in the defaultTools setting ignored. Built-in tools: {}",
            builtin.join(", ")
        ));
    }
    let later = tool_selection::later_tools(
        selection,
        defaults.as_deref(),
        builtin,
        &extension,
        |name| builtin_extension_on(config, settings, name),
    );
    let entries: Vec<String> = asked.into_iter().chain(configured).collect();
    warnings.extend(tool_selection::later_note(&later, &entries));
    let active = tool_selection::startup_tools(selection, defaults.as_deref(), builtin, &extension);
    ToolPlan::of(active, &extension, selection.filter(defaults.as_deref()))
}

/// The tools after `/reload`: the `active` ones, the ones newly added to `defaultTools`
/// (`old` settings → `new`), and the reloaded extensions' tools.
pub(super) fn plan_reload_tools(
    config: &SessionConfig,
    (old, new): (&Settings, &Settings),
    active: &[String],
    host: Option<&ExtensionHost>,
) -> ToolPlan {
    let extension = extension_tool_names(host);
    let before = settings_default_tools(old);
    let after = settings_default_tools(new);
    let active = tool_selection::reload_tools(
        &config.tools,
        (before.as_deref(), after.as_deref()),
        active,
        builtin_tool_names(),
        &extension,
    );
    ToolPlan::of(active, &extension, config.tools.filter(after.as_deref()))
}

/// The extension tools among the active ones.
pub(super) fn extension_tools(active: &[String], host: &ExtensionHost) -> Vec<Arc<dyn Tool>> {
    host.agent_tools()
        .into_iter()
        .filter(|t| active.iter().any(|n| n == t.name()))
        .collect()
}

/// The system prompt's parts besides tools and skills: the context files (AGENTS.md /
/// CLAUDE.md, unless skipped), `--system-prompt` or `SYSTEM.md`, and
/// `--append-system-prompt` or `APPEND_SYSTEM.md`. Problems go to `warnings`.
pub(super) fn prompt_resources(
    config: &SessionConfig,
    place: &Place<'_>,
    warnings: &mut Vec<String>,
) -> PromptResources {
    let (cwd, agent_dir) = (place.cwd, place.agent_dir);
    let trust = place.settings.project_trust();
    let context_files = if config.skip_context_files {
        Vec::new()
    } else {
        load_context_files(cwd, agent_dir, warnings)
    };
    let custom_prompt = match &config.system_prompt {
        Some(p) => Some(resolve_prompt_input(p, warnings)),
        None => discover_system_prompt_file(cwd, agent_dir, trust)
            .and_then(|f| std::fs::read_to_string(f).ok()),
    };
    let append: Vec<String> = if config.append_system_prompt.is_empty() {
        discover_append_system_prompt_file(cwd, agent_dir, trust)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .into_iter()
            .collect()
    } else {
        config
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tool_selection::ToolSelection;

    #[test]
    fn flags_nobody_registered_are_reported_together() {
        let config = SessionConfig {
            extension_flags: vec![("plan".into(), None), ("depth".into(), Some("3".into()))],
            ..SessionConfig::default()
        };
        assert_eq!(
            check_extension_flags(&config, None).err().map(|e| e.0),
            Some("Unknown options: --plan, --depth".to_string())
        );
        assert_eq!(
            check_extension_flags(&SessionConfig::default(), None).ok(),
            Some(Vec::new())
        );
    }

    #[test]
    fn tool_plans_name_unknown_and_later_tools() {
        let config = SessionConfig {
            tools: ToolSelection {
                tools: Some(vec![
                    "read".into(),
                    "grep".into(),
                    "nope".into(),
                    "codemode".into(),
                ]),
                ..ToolSelection::default()
            },
            ..SessionConfig::default()
        };
        let settings = Settings::in_memory(serde_json::json!({}));
        let mut warnings = Vec::new();
        let plan = plan_tools(&config, &settings, None, &mut warnings);
        assert_eq!(plan.active, ["read", "grep"]);
        assert_eq!(plan.builtin, ["read", "grep"]);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("Unknown tool \"nope\" ignored"));
        assert!(
            warnings[1].contains("The tool codemode of pi 1.6"),
            "{warnings:?}"
        );
    }
}
