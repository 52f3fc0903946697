//! Opening a session once the UI is up: what startup asks for ([`StartupOpen`]: a
//! session, or the `--resume` picker first) and loading one through the session factory
//! in a task, whose result comes back to the event loop as `AppMsg::Loaded`.

use crate::core::factory::SessionSource;

use super::msg::{AppMsg, Loaded};
use super::state::{self, App, Status};

/// What the interactive mode opens once the UI is up (the session it was given is then a
/// placeholder the UI draws at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupOpen {
    /// Load this session in the background.
    Source(SessionSource),
    /// `--resume`: show the session picker first and load what the user picks.
    Picker,
}

/// Starts what the UI opens at startup: loading a session, or the `--resume` picker.
pub(super) fn start_opening(app: &mut App, open: StartupOpen) {
    match open {
        StartupOpen::Source(source) => start_loading(app, source),
        StartupOpen::Picker => {
            let Some(dir) = app.factory.as_ref().map(|f| f.session_dir().to_path_buf()) else {
                return;
            };
            app.loading = true;
            app.startup_pick = true;
            app.open_session_picker(dir, None, false, true);
        }
    }
}

/// Has the factory load `source` (with its resources and extensions) in a task; the
/// result arrives as `AppMsg::Loaded`.
pub(super) fn start_loading(app: &mut App, source: SessionSource) {
    let Some(factory) = app.factory.clone() else {
        return;
    };
    app.loading = true;
    app.status = Status::Message("Loading session...".into());
    let load_tx = app.tx.clone();
    // The trust prompt (and the dialogs of extensions deciding trust) show as extension
    // dialogs do.
    let (prompter, mut prompts) = tokio::sync::mpsc::unbounded_channel();
    let dialogs_tx = app.tx.clone();
    tokio::spawn(async move {
        while let Some(request) = prompts.recv().await {
            if dialogs_tx.send(AppMsg::ExtensionUi(request)).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let result = match factory.load_asking(source, Some(prompter)).await {
            Ok(built) => {
                // Adding up a long session's usage reads every entry.
                let session = built.session.clone();
                tokio::task::spawn_blocking(move || state::usage_totals(&session))
                    .await
                    .map(|usage| Loaded {
                        session: built.session,
                        warnings: built.warnings,
                        usage,
                    })
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        let _ = load_tx.send(AppMsg::Loaded(result));
    });
}
