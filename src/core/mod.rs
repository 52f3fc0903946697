//! What ties the layers together for a running pi: where files live, settings, project
//! context, prompt templates, skills, finding extensions, the system prompt,
//! `AgentSession` with its events, and the session factory that builds one from what the
//! command line asked for.

pub mod agent_session;
pub mod auth_guidance;
pub mod builtin_extensions;
pub mod checkpoints;
pub mod command_list;
pub mod events;
pub mod extension_discovery;
pub mod factory;
pub mod frontmatter;
pub mod packages;
pub mod paths;
pub mod prompt_templates;
pub mod resource_paths;
pub mod resources;
pub mod settings;
pub mod skills;
pub mod system_prompt;
pub mod timing;
pub mod tool_selection;
pub mod trust;
