//! How work outside the event loop talks to it: [`AppMsg`]s sent back by background
//! tasks, and the hooks the caller hands in to open a session ([`SessionLoader`],
//! [`SessionOpener`]) and to reload resources ([`Reloader`]). Shared by the loop and the
//! parts of the app that start such work.

use std::sync::Arc;

use crate::core::agent_session::AgentSession;

/// Results of background work, sent back to the event loop.
pub enum AppMsg {
    PromptDone(Result<(), String>),
    BashChunk(String),
    BashDone(Result<crate::core::agent_session::BashOutcome, String>),
    /// `/tree` moved the leaf; the text goes into the editor.
    Navigated(Option<String>),
    /// `/fork` made a new session; the selected message goes into the editor.
    Forked(String),
    /// The branch summary of a `/tree` move was cancelled: back to the tree on `target`.
    SummaryCancelled(crate::session::entry::EntryId),
    Info(String),
    Error(String),
    Redraw,
    FilesWalked(Arc<Vec<crate::modes::interactive::autocomplete::ProjectFile>>),
    /// The session finished loading in the background.
    Loaded(Result<Loaded, String>),
    /// A dialog or notice from an extension.
    ExtensionUi(crate::extensions::UiRequest),
    /// `/share` finished: the links, or why not.
    ShareDone(Result<String, String>),
    /// `/reload` finished: its warnings, or why it failed.
    Reloaded(Result<Vec<String>, String>),
}

/// A session opened in the background, with what the UI shows about it.
pub struct Loaded {
    pub session: AgentSession,
    pub warnings: Vec<String>,
    pub usage: crate::modes::interactive::components::footer::UsageTotals,
}

/// Opens the real session (reading a big file can take a while): the UI is drawn with a
/// placeholder session first and switches over when this returns.
pub type SessionLoader = Box<dyn FnOnce() -> Result<(AgentSession, Vec<String>), String> + Send>;

/// `--resume`: makes the loader for the session file the user picks.
pub type SessionOpener = Box<dyn FnOnce(std::path::PathBuf) -> SessionLoader + Send>;

/// `/reload`: reads settings and resources again into the session and restarts its
/// extensions, returning the warnings to show. Blocks: it runs on a blocking thread.
pub type Reloader = Arc<dyn Fn(&AgentSession) -> Vec<String> + Send + Sync>;
