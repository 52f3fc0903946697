//! `/reload` as pi does it, for a running session: the extensions get
//! `session_shutdown` (reason `reload`) and stop; settings, models.json / auth.json,
//! context files, `SYSTEM.md` / `APPEND_SYSTEM.md`, prompt templates, skills and
//! extensions are read again with the same configuration as at startup; the new
//! extensions start and get `session_start` (reason `reload`). The conversation, the
//! model and the thinking level stay as they are; the active tools too, plus the ones
//! newly added to `defaultTools` and the reloaded extensions' tools (pi 1.6).
//!
//! Keybindings, the theme and editor settings belong to the front end, which reloads them
//! itself after this returns.

use std::path::Path;
use std::sync::Arc;

use super::resources::{
    Place, SessionInfo, SessionPackages, TemplatesAndSkills, extension_tools, find_extensions,
    plan_reload_tools, prompt_resources, start_extensions,
};
use super::{SessionFactory, StartupError, blocking};
use crate::core::agent_session::{AgentSession, ReloadHandler, ReloadedResources};
use crate::core::settings::Settings;
use crate::extensions::SessionStartReason;

impl SessionFactory {
    /// `ctx.reload()` outside the interactive UI (print, JSON and RPC mode): refused
    /// while the agent answers or compacts, else [`SessionFactory::reload`]; its
    /// warnings become notices.
    pub fn reload_handler(self: &Arc<Self>) -> ReloadHandler {
        let factory = self.clone();
        Arc::new(move |session: AgentSession| {
            let factory = factory.clone();
            Box::pin(async move {
                if let Some(why) = session.reload_refusal() {
                    return Err(why.to_string());
                }
                let warnings = factory.reload(&session).await.map_err(|e| e.0)?;
                for warning in warnings {
                    session.emit(crate::core::events::SessionEvent::Notice {
                        message: format!("Warning: {warning}"),
                    });
                }
                Ok(())
            })
        })
    }

    /// Reloads `session` in place and returns the warnings to show (problems with the
    /// settings, models.json, skills, templates or extensions; none of them stops the
    /// reload). The caller checks [`AgentSession::reload_refusal`] first. `Err` only when
    /// reading the files was interrupted.
    pub async fn reload(
        self: &Arc<Self>,
        session: &AgentSession,
    ) -> Result<Vec<String>, StartupError> {
        // What `/reload` keeps: the tools active now, and the settings they came from.
        let active_before: Vec<String> = session
            .tools()
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        let settings_before = session.settings();
        session.detach_extensions_for_reload().await;

        // The session's own directory: a session opened from another project runs there
        // (see `SessionFactory::build`).
        let session_cwd = session.cwd().to_path_buf();
        let trust = self.reload_trust(session);
        let this = self.clone();
        let read_cwd = session_cwd.clone();
        let read = blocking(move || {
            let cwd = read_cwd.as_path();
            let agent_dir = this.paths.agent_dir.as_path();
            // A reload keeps the session's trust decision (pi does not ask again).
            let settings = Settings::load(agent_dir, cwd, trust);
            // pi resolves (and installs) the packages again; a failure is a warning here,
            // the session keeps running without that package's resources.
            let (packages, package_warnings) =
                SessionPackages::resolve(&this.config, &settings, cwd, agent_dir)
                    .unwrap_or_else(|e| (SessionPackages::default(), vec![e]));
            let place = Place {
                settings: &settings,
                cwd,
                agent_dir,
                packages: &packages,
            };
            let found = find_extensions(&this.config, &place);
            let loaded = TemplatesAndSkills::load(&this.config, &place);
            let mut prompt_warnings = Vec::new();
            let prompt = prompt_resources(&this.config, &place, &mut prompt_warnings);
            (
                settings,
                found,
                loaded,
                prompt,
                prompt_warnings,
                package_warnings,
            )
        });
        let (settings, found, loaded, prompt, prompt_warnings, package_warnings) = read.await?;
        let mut warnings: Vec<String> = settings.problems().iter().map(|p| p.to_string()).collect();
        warnings.extend(package_warnings);

        let info = session.with_session(|m| SessionInfo {
            file: m.session_file().map(Path::to_path_buf),
            id: m.session_id().to_string(),
        });
        let place = (session_cwd.as_path(), self.paths.agent_dir.as_path());
        let extensions = start_extensions(
            found,
            &self.config,
            place,
            self.hosting,
            info,
            &mut warnings,
            None,
        )
        .await
        // A module that fails to load stops a start, not a running session: reported,
        // and the session goes on without extensions.
        .unwrap_or_else(|e| {
            warnings.push(e.0);
            None
        });
        let host = extensions.as_ref().map(|e| &e.host);
        let plan = plan_reload_tools(
            &self.config,
            (&settings_before, &settings),
            &active_before,
            host,
        );
        warnings.extend(prompt_warnings);
        warnings.extend(loaded.warnings());

        session.set_tool_filter(plan.filter.clone());
        // Installing reads models.json and auth.json again.
        let reloading = session.clone();
        let models_error = blocking(move || {
            reloading.reload_resources(ReloadedResources {
                settings,
                tool_names: plan.builtin,
                prompt,
                prompt_templates: loaded.templates.templates,
                skills: loaded.skills.skills,
            });
            reloading.models_error()
        })
        .await?;
        if let Some(error) = models_error {
            warnings.push(format!("models.json error: {error}"));
        }
        if let Some(loaded) = extensions {
            warnings.extend(session.apply_extension_providers(&loaded.host));
            let tools = extension_tools(&plan.active, &loaded.host);
            session.attach_extensions(loaded.host, loaded.channels, tools);
            session.set_tools_in_order(&plan.active);
        }
        session.start_extensions(SessionStartReason::Reload).await;
        Ok(warnings)
    }
}
