//! `/reload` as pi 0.73 does it, for a running session: the extensions get
//! `session_shutdown` (reason `reload`) and stop; settings, models.json / auth.json,
//! context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, prompt templates, skills and
//! extensions are read again with the same command-line flags as at startup; the new
//! extensions start and get `session_start` (reason `reload`). The conversation, the model
//! and the thinking level stay as they are.
//!
//! Keybindings, the theme and editor settings belong to the front end, which reloads them
//! itself after this returns.

use std::path::{Path, PathBuf};

use crate::cli::args::Args;
use crate::cli::resources::{self, ExtensionStartup, SessionInfo};
use crate::cli::startup::{builtin_tools, prompt_resources};
use crate::core::agent_session::{AgentSession, ReloadedResources};
use crate::core::paths::AgentPaths;
use crate::core::settings::Settings;
use crate::extensions::SessionStartReason;

/// Everything needed to read the resources again the way startup read them.
#[derive(Debug, Clone)]
pub struct Reloader {
    pub args: Args,
    pub cwd: PathBuf,
    pub paths: AgentPaths,
    pub extensions: ExtensionStartup,
}

impl Reloader {
    /// Reloads `session` in place and returns the warnings to show (problems with the
    /// settings, models.json, skills, templates or extensions; none of them stops the
    /// reload). Blocks on the runtime while extensions stop and start: call it from a
    /// blocking thread, never from inside an async task. The caller checks
    /// [`AgentSession::reload_refusal`] first.
    pub fn reload(&self, session: &AgentSession) -> Vec<String> {
        let runtime = &self.extensions.runtime;
        runtime.block_on(session.detach_extensions_for_reload());

        let args = &self.args;
        let cwd: &Path = &self.cwd;
        let agent_dir: &Path = &self.paths.agent_dir;
        let settings = Settings::load(agent_dir, cwd);
        let mut warnings: Vec<String> = settings.problems().iter().map(|p| p.to_string()).collect();

        let (file, id) = session.with_session(|m| {
            (
                m.session_file().map(Path::to_path_buf),
                m.session_id().to_string(),
            )
        });
        let extensions = resources::start_extensions(
            args,
            &settings,
            cwd,
            agent_dir,
            SessionInfo {
                file: file.as_deref(),
                id,
            },
            &self.extensions,
            &mut warnings,
        );
        let tool_names = builtin_tools(args, extensions.as_ref().map(|e| &e.host), &mut warnings);
        let prompt = prompt_resources(args, cwd, agent_dir, &mut warnings);
        let templates = resources::prompt_templates(args, &settings, cwd, agent_dir);
        let skills = resources::skills(args, &settings, cwd, agent_dir);
        warnings.extend(templates.diagnostics.iter().map(ToString::to_string));
        warnings.extend(skills.diagnostics.iter().map(ToString::to_string));

        session.reload_resources(ReloadedResources {
            settings,
            tool_names,
            prompt,
            prompt_templates: templates.templates,
            skills: skills.skills,
        });
        if let Some(error) = session.models_error() {
            warnings.push(format!("models.json error: {error}"));
        }
        if let Some(loaded) = extensions {
            let tools = resources::extension_tools(args, &loaded.host);
            // Spawning the session's action task needs the runtime.
            let _entered = runtime.enter();
            session.attach_extensions(loaded.host, loaded.channels, tools);
        }
        runtime.block_on(session.start_extensions(SessionStartReason::Reload));
        warnings
    }
}
