//! Project trust in the terminal UI once a session is open: `/trust` (save a decision
//! for this folder or its parent; it takes effect at the next start, as in pi) and the
//! warning shown when an untrusted project's resources were left out. The startup
//! question itself is asked by the session factory through the extension dialogs.

use super::overlay::Overlay;
use super::state::App;
use crate::core::trust::{TrustChoice, TrustStore, has_protected_resources};
use crate::modes::interactive::components::trust_selector::TrustSelector;
use crate::modes::interactive::theme::ThemeToken;

impl App {
    /// `/trust`: the selector, with the decision trust.json holds for this folder.
    pub(super) fn open_trust_selector(&mut self) {
        let store = TrustStore::new(&self.session.paths().agent_dir);
        let cwd = self.session.cwd().to_path_buf();
        let saved = match store.entry(&cwd) {
            Ok(saved) => saved,
            Err(e) => {
                self.show_error(e);
                return;
            }
        };
        let trusted = self.session.settings().project_trust().is_trusted();
        self.overlay = Some(Overlay::Trust(TrustSelector::new(&cwd, saved, trusted)));
    }

    /// Saves what `/trust` chose; the running session keeps its resources until restart.
    pub(super) fn save_trust_choice(&mut self, choice: &TrustChoice) {
        let store = TrustStore::new(&self.session.paths().agent_dir);
        match store.set_many(&choice.updates) {
            Ok(()) => {
                let state = if choice.trusted {
                    "trusted"
                } else {
                    "untrusted"
                };
                self.show_status(format!(
                    "Saved trust decision: {state}. Restart pi for this to take effect."
                ));
            }
            Err(e) => self.show_error(e),
        }
    }

    /// pi's notice after the conversation when the project is not trusted and has
    /// resources that were therefore left out.
    pub(super) fn warn_if_project_untrusted(&mut self) {
        let cwd = self.session.cwd();
        // While the session loads, trust is being decided.
        if self.loading
            || self.session.settings().project_trust().is_trusted()
            || !has_protected_resources(cwd)
        {
            return;
        }
        self.note(
            crate::core::trust::untrusted_project_warning(),
            ThemeToken::Warning,
            false,
        );
    }
}
