//! `/reload` inside a session: stopping the running extensions (with pi's
//! `session_shutdown` reason `reload`), and swapping in freshly read settings, models,
//! system prompt resources, prompt templates, skills and built-in tools without touching
//! the conversation. The new extensions are then attached with
//! [`AgentSession::attach_extensions`] and told `session_start` (reason `reload`) with
//! [`AgentSession::start_extensions`].
//!
//! Finding the files again (which flags and settings say where to look) is the caller's
//! job (`core::factory`); this module only installs what was found.

use std::path::PathBuf;

use super::{AgentSession, PromptResources, ReloadHandler, delivery, lock};
use crate::core::prompt_templates::PromptTemplate;
use crate::core::settings::Settings;
use crate::core::skills::Skill;
use crate::extensions::ShutdownReason;

/// The text pi shows when `/reload` is asked for while the agent answers.
pub const RELOAD_WHILE_STREAMING: &str =
    "Wait for the current response to finish before reloading.";
/// The text pi shows when `/reload` is asked for during a compaction.
pub const RELOAD_WHILE_COMPACTING: &str = "Wait for compaction to finish before reloading.";

/// Everything a reload reads again, ready to install.
pub struct ReloadedResources {
    pub settings: Settings,
    /// Names of the built-in tools to activate (extension tools come with the new host).
    pub tool_names: Vec<String>,
    /// System prompt parts; its `skills_block` is recomputed from `skills`.
    pub prompt: PromptResources,
    pub prompt_templates: Vec<PromptTemplate>,
    pub skills: Vec<Skill>,
}

impl AgentSession {
    /// Why a reload cannot happen now (pi's warning text), or `None` when it can.
    pub fn reload_refusal(&self) -> Option<&'static str> {
        let st = self.state();
        if st.streaming {
            Some(RELOAD_WHILE_STREAMING)
        } else if st.compacting {
            Some(RELOAD_WHILE_COMPACTING)
        } else {
            None
        }
    }

    /// Installs how this session reloads when an extension command asks
    /// (`ctx.reload()`); the last one installed wins.
    pub fn set_reload_handler(&self, handler: ReloadHandler) {
        *lock(&self.inner.reload_handler) = Some(handler);
    }

    /// pi's `ctx.reload()`: the same reload as `/reload`, by the handler installed for
    /// this session (which also decides what happens while the agent answers or
    /// compacts). An error when nothing can reload this session.
    pub async fn reload_from_extension(&self) -> Result<(), String> {
        let handler = lock(&self.inner.reload_handler).clone();
        match handler {
            Some(handler) => handler(self.clone()).await,
            None => Err("this session cannot reload".to_string()),
        }
    }

    /// Sends `session_shutdown` (reason `reload`) to the running extensions, stops them,
    /// applies what they reported on the way, and forgets them: their tools, hooks, UI
    /// channel and action loop. Afterwards [`AgentSession::attach_extensions`] can attach
    /// a new host. Does nothing without extensions.
    pub async fn detach_extensions_for_reload(&self) {
        let Some(host) = self.extension_host() else {
            return;
        };
        host.shutdown(ShutdownReason::Reload, None).await;
        self.flush_extension_actions().await;
        let old_tools = host.agent_tools();
        {
            let cwd = self.inner.cwd.clone();
            let mut st = self.state();
            st.extensions = None;
            st.hooks = None;
            // The new extensions name their themes again (or not).
            if !st.extension_themes.0.is_empty() {
                let revision = st.extension_themes.1 + 1;
                st.extension_themes = (Vec::new(), revision);
            }
            st.tools
                .retain(|t| !old_tools.iter().any(|old| std::sync::Arc::ptr_eq(t, old)));
            st.rebuild_system_prompt(&cwd);
        }
        *lock(&self.inner.ui_requests) = None;
        // Dropping the sender ends the old action loop.
        *lock(&self.inner.action_flush) = None;
    }

    /// Installs re-read settings and resources: the settings (and what the session derives
    /// from them: queue modes, auto-compaction, auto-retry, the shell), models.json and
    /// auth.json again, the built-in tools, the system prompt's parts, the prompt
    /// templates and the skills. The conversation, model and thinking level stay.
    pub fn reload_resources(&self, reloaded: ReloadedResources) {
        let ReloadedResources {
            settings,
            tool_names,
            prompt,
            prompt_templates,
            skills,
        } = reloaded;
        self.inner.queues.set_modes(
            delivery(settings.steering_mode()),
            delivery(settings.follow_up_mode()),
        );
        {
            let mut st = self.state();
            st.tool_config.shell_path = settings.shell_path().map(PathBuf::from);
            st.tool_config.command_prefix = settings.shell_command_prefix().map(str::to_string);
            st.tool_config.auto_resize_images = settings.image_auto_resize();
            st.auto_compaction = settings.compaction_enabled();
            st.auto_retry = settings.retry().enabled;
            st.settings = settings;
            st.registry.reload();
            // Tools still attached (an extension host that was not detached) stay.
            let kept: Vec<_> = st
                .tools
                .iter()
                .filter(|t| !crate::tools::builtin_tool_names().contains(&t.name()))
                .cloned()
                .collect();
            let mut tools =
                crate::tools::create_tools(&tool_names, &st.tool_config).unwrap_or_default();
            tools.retain(|t| !kept.iter().any(|k| k.name() == t.name()));
            tools.extend(kept);
            st.tools = tools;
            st.resources = prompt;
            st.prompt_templates = prompt_templates;
        }
        // Recomputes the skills block and the system prompt.
        self.set_skills(skills);
    }
}
