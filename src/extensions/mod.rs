//! Extensions: separate programs, in any language, that add slash commands, tools, CLI
//! flags and event handlers to pi. pi's own extensions are TypeScript modules loaded into
//! its process; ours are executables speaking JSON lines over stdin/stdout (see
//! `docs/extensions.md` for the protocol), with pi's event names and powers.
//!
//! - `core::extension_discovery` finds them (`-e`, settings, `.pi/extensions/`,
//!   `<agent_dir>/extensions/`) and hands over [`ExtensionSource`]s ([`source`]).
//! - [`ExtensionHost`] starts them, keeps their registrations (tools, commands, flags),
//!   sends events and combines the answers into typed outcomes ([`events`]), and shuts
//!   them down. [`ExtensionHooks`] plugs it into the agent loop.
//! - What extensions do on their own arrives as [`ExtensionAction`]s, what they ask of the
//!   user as [`UiRequest`]s; both on channels returned by [`ExtensionHost::load`].
//!
//! Isolation: an extension that exits, breaks the protocol or cannot be written to is
//! reported once and disabled; a slow answer counts as "no change"; stderr goes to
//! `<agent_dir>/extensions.log`. Nothing an extension does can take the session down.
//!
//! Not here: applying actions to a session, rendering UI requests, or wiring the host
//! into `AgentSession` (the coordinator does that).

pub mod actions;
mod builtin_tools;
mod connection;
mod dispatch;
mod dispatch_more;
pub mod events;
mod exec;
mod extend;
pub mod hooks;
pub mod host;
mod link;
pub mod log;
pub mod node;
mod oauth_bridge;
pub mod overlay_options;
pub mod protocol;
pub(crate) mod provider_stream;
pub mod render;
pub mod source;
pub mod state;
mod streams;
pub mod tool;
mod trust_event;
pub mod typescript;
pub mod ui;

pub use actions::{ActionKind, DeliverAs, ExtensionAction, ExtensionError};
pub use dispatch_more::{
    DiscoverReason, DiscoveredResources, ExtensionResourcePath, UserBashResult,
};
pub use events::{
    BeforeAgentStartOutcome, CompactDecision, EventName, ExtensionBranchSummary,
    ExtensionCompaction, ForkPosition, InputOutcome, InputSource, ModelSelectSource,
    SessionStartReason, ShutdownReason, SwitchReason, ToolCallDecision, ToolResultEvent,
    ToolResultPatch, TreeDecision, TreePreparation,
};
pub use exec::ExecResult;
pub use hooks::ExtensionHooks;
pub use host::{
    CommandError, CommandInfo, ExtensionHost, ExtensionInfo, FlagInfo, HostChannels, HostMode,
    LoadError, LoadOptions, ShortcutInfo,
};
pub use render::{ItemRenderer, RENDER_TIMEOUT, ToolRendering};
pub use source::{ExtensionSource, Launch, ResourceScope, is_node_module, launch_for};
pub use tool::ExtensionTool;
pub use trust_event::{TrustAnswer, TrustContext, TrustEventOutcome, TrustNotice};
pub use ui::{
    NotifyLevel, OverlayAction, OverlaySpec, UiInput, UiMethod, UiReply, UiRequest, UiResponse,
};
