//! Startup's share of prompt templates, skills and extensions: where the flags and
//! settings say to look (`--prompt-template` / `--no-prompt-templates`, `--skill` /
//! `--no-skills`, `-e` / `--no-extensions`), starting the extensions, checking the
//! command-line flags nobody else knew against the flags extensions registered, and which
//! extension tools the tool flags keep.
//!
//! Everything that goes wrong here is a warning: a broken skill or extension never stops
//! pi-rs from starting.

use std::path::Path;
use std::sync::Arc;

use crate::cli::args::Args;
use crate::core::extension_discovery::discover_extensions;
use crate::core::prompt_templates::{LoadedPromptTemplates, load_prompt_templates};
use crate::core::resource_paths::ResourceOptions;
use crate::core::settings::Settings;
use crate::core::skills::{LoadedSkills, load_skills};
use crate::extensions::protocol::FlagType;
use crate::extensions::{ExtensionHost, HostChannels, HostMode, LoadOptions};
use crate::tools::Tool;

/// How startup runs extensions: the mode they are told about, whether a user interface
/// answers their dialogs, and the runtime their processes are driven by.
#[derive(Debug, Clone)]
pub struct ExtensionStartup {
    pub mode: HostMode,
    pub has_ui: bool,
    pub runtime: tokio::runtime::Handle,
}

/// Which resources startup loads.
#[derive(Debug, Clone)]
pub enum ResourceLoading {
    /// Only what the settings give (the interactive placeholder session drawn while the
    /// real one loads): no templates, skills or extensions.
    Minimal,
    /// Prompt templates, skills and extensions.
    Full(ExtensionStartup),
}

/// Loads the prompt templates (unless `--no-prompt-templates` leaves only the
/// `--prompt-template` paths).
pub fn prompt_templates(
    args: &Args,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
) -> LoadedPromptTemplates {
    load_prompt_templates(&ResourceOptions::from_settings(
        settings,
        "prompts",
        cwd,
        agent_dir,
        args.cli.prompt_templates.clone(),
        !args.cli.no_prompt_templates,
    ))
}

/// Loads the skills (unless `--no-skills` leaves only the `--skill` paths).
pub fn skills(args: &Args, settings: &Settings, cwd: &Path, agent_dir: &Path) -> LoadedSkills {
    load_skills(&ResourceOptions::from_settings(
        settings,
        "skills",
        cwd,
        agent_dir,
        args.cli.skills.clone(),
        !args.cli.no_skills,
    ))
}

/// Running extensions, ready to attach to a session.
pub struct LoadedExtensions {
    pub host: ExtensionHost,
    pub channels: HostChannels,
}

/// Where the session file is, for `hello`.
pub struct SessionInfo<'a> {
    pub file: Option<&'a Path>,
    pub id: String,
}

/// Finds and starts the extensions. `None` when there are none to run; problems go to
/// `warnings`.
pub fn start_extensions(
    args: &Args,
    settings: &Settings,
    cwd: &Path,
    agent_dir: &Path,
    session: SessionInfo<'_>,
    startup: &ExtensionStartup,
    warnings: &mut Vec<String>,
) -> Option<LoadedExtensions> {
    let found = discover_extensions(&ResourceOptions::from_settings(
        settings,
        "extensions",
        cwd,
        agent_dir,
        args.cli.extensions.clone(),
        !args.cli.no_extensions,
    ));
    warnings.extend(found.diagnostics.iter().map(ToString::to_string));
    if found.extensions.is_empty() {
        return None;
    }
    let mut options = LoadOptions::new(cwd, agent_dir, startup.mode, startup.has_ui);
    options.session_file = session.file.map(Path::to_path_buf);
    options.session_id = Some(session.id);
    options.cli_flags = args.unknown_flags.clone();
    let (host, channels) = startup
        .runtime
        .block_on(ExtensionHost::load(found.extensions, options));
    warnings.extend(host.load_errors().iter().map(|e| {
        format!(
            "Failed to load extension \"{}\": {}",
            e.path.display(),
            e.error
        )
    }));
    Some(LoadedExtensions { host, channels })
}

/// Checks the command-line flags pi did not know against the flags extensions
/// registered, with pi's messages. pi stops on these; pi-rs warns and goes on.
pub fn check_extension_flags(args: &Args, host: Option<&ExtensionHost>) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut unknown = Vec::new();
    for (name, value) in &args.unknown_flags {
        let flag = host.and_then(|h| h.flags().iter().find(|f| &f.name == name));
        match (flag.map(|f| f.kind), value) {
            (None, _) => unknown.push(format!("--{name}")),
            (Some(FlagType::String), None) => {
                warnings.push(format!("Extension flag \"--{name}\" requires a value"));
            }
            (Some(FlagType::Boolean), Some(v)) if args.detached_flag_values.contains(name) => {
                warnings.push(format!(
                    "\"--{name}\" is a flag without a value, so \"{v}\" after it was not sent as a message; put messages before such flags"
                ));
            }
            (Some(_), _) => {}
        }
    }
    if !unknown.is_empty() {
        let plural = if unknown.len() == 1 { "" } else { "s" };
        warnings.push(format!("Unknown option{plural}: {}", unknown.join(", ")));
    }
    warnings
}

/// The extension tools the tool flags keep, as pi decides: all of them by default and
/// with `--no-builtin-tools`, none with `--no-tools`, and with `--tools a,b` only those
/// named.
pub fn extension_tools(args: &Args, host: &ExtensionHost) -> Vec<Arc<dyn Tool>> {
    let tools = host.agent_tools();
    match args.tool_names() {
        Some(names) => tools
            .into_iter()
            .filter(|t| names.iter().any(|n| n == t.name()))
            .collect(),
        None if args.cli.no_tools => Vec::new(),
        None => tools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(argv: &[&str]) -> Args {
        match crate::cli::args::parse(argv) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn flags_nobody_registered_are_reported_together() {
        let args = parsed(&["--plan", "--depth=3", "hello"]);
        assert_eq!(
            check_extension_flags(&args, None),
            ["Unknown options: --plan, --depth"]
        );
        assert!(check_extension_flags(&parsed(&["hello"]), None).is_empty());
    }
}
