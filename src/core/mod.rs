//! What ties the layers together for a running pi: where files live, settings, project
//! context and the system prompt (and, later, `AgentSession`).

pub mod agent_session;
pub mod events;
pub mod paths;
pub mod resources;
pub mod settings;
pub mod system_prompt;
pub mod timing;
