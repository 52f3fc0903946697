//! How work outside the event loop talks to it: the [`AppMsg`]s background tasks send
//! back, among them a session the factory [`Loaded`]. Shared by the loop and the parts of
//! the app that start such work.

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
    /// `/new` started a session: pi's `✓ New session started`.
    NewSession,
    /// pi's `showStatus` (a dim note the next status replaces).
    Status(String),
    /// A warning for the chat (`Warning: …`), kept across transcript rebuilds.
    Warning(String),
    Error(String),
    Redraw,
    /// Extensions answered a completion request of the editor.
    ExtensionCompletions(
        crate::modes::interactive::editor::CompletionQuery,
        Option<crate::modes::interactive::autocomplete::Suggestions>,
    ),
    FilesWalked(
        std::path::PathBuf,
        Arc<Vec<crate::modes::interactive::autocomplete::ProjectFile>>,
    ),
    /// The checked-out branch changed (`git switch` in another terminal).
    GitBranch(Option<String>),
    /// The session finished loading in the background.
    Loaded(Result<Loaded, String>),
    /// A dialog or notice from an extension.
    ExtensionUi(crate::extensions::UiRequest),
    /// The lines an extension drew for a chat item (or why not).
    HostRendered(super::host_render::HostRendered),
    /// `/share` finished: the links, or why not.
    ShareDone(Result<String, String>),
    /// `/reload` finished: its warnings, or why it failed.
    Reloaded(Result<Vec<String>, String>),
    /// An extension command called `ctx.reload()`: reload as `/reload` does, then
    /// answer on the channel.
    ReloadRequested(tokio::sync::oneshot::Sender<()>),
    /// A `/login` sign-in flow asks to show something, or finished.
    Login(LoginMsg),
}

/// A session opened in the background, with what the UI shows about it.
pub struct Loaded {
    pub session: AgentSession,
    pub warnings: Vec<String>,
    pub usage: crate::modes::interactive::components::footer::UsageTotals,
}

/// What a sign-in flow reports to the app.
pub enum LoginMsg {
    Event(crate::ai::oauth::login::LoginEvent),
    Done {
        provider: crate::ai::auth::OAuthProvider,
        result: Result<serde_json::Value, crate::ai::oauth::login::LoginError>,
    },
    /// The sign-in of a provider an extension registered with `oauth`.
    ExtensionDone {
        id: String,
        name: String,
        result: Result<serde_json::Value, crate::ai::oauth::login::LoginError>,
    },
}

/// `ctx.reload()` in the interactive UI: the app reloads as for `/reload` (with its
/// refusals while the agent answers or compacts) and the command goes on once it is done.
pub(super) fn ui_reload_handler(
    tx: tokio::sync::mpsc::UnboundedSender<AppMsg>,
) -> crate::core::agent_session::ReloadHandler {
    Arc::new(move |_session| {
        let tx = tx.clone();
        Box::pin(async move {
            let (done, wait) = tokio::sync::oneshot::channel();
            tx.send(AppMsg::ReloadRequested(done))
                .map_err(|_| "the interface has closed".to_string())?;
            wait.await
                .map_err(|_| "the interface has closed".to_string())
        })
    })
}
