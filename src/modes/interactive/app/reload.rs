//! `/reload` in the interactive UI, as in pi 0.73: refused while the agent answers or
//! compacts (with pi's warnings); otherwise the session factory reloads the session's
//! settings and resources and restarts its extensions in a task
//! ([`crate::core::factory::SessionFactory::reload`]), and then the UI reloads what it
//! owns itself: keybindings, the theme, editor and display settings, the `/` completion,
//! the extensions' UI channel, the chat and the resource listing of the header.
//!
//! Submits typed meanwhile wait, as they do while a session loads.
//!
//! Also here, because startup reads them the same way: [`load_theme`] and
//! [`load_keybindings`].

use std::sync::Arc;

use super::msg::AppMsg;
use super::state::{App, Status, header_resources};
use crate::core::agent_session::AgentSession;
use crate::core::packages::config::theme_files;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::theme::{ColorMode, Theme, ThemeCatalog, resolve_theme_setting};

/// What the status line shows while reloading (pi's text).
const RELOADING: &str = "Reloading keybindings, extensions, skills, prompts, themes...";
/// The note once done (pi's text).
const RELOADED: &str = "Reloaded keybindings, extensions, skills, prompts, themes";

impl App {
    /// `/reload`.
    pub fn start_reload(&mut self) {
        if let Some(why) = self.session.reload_refusal() {
            self.notice(format!("Warning: {why}"));
            self.answer_reload_waiters();
            return;
        }
        let Some(factory) = self.factory.clone() else {
            self.session.reload_models();
            self.refresh_usage();
            self.footer_cache = None;
            self.notice("Reloaded models and keys");
            self.answer_reload_waiters();
            return;
        };
        // As pi: what the old extensions put on screen goes with them.
        self.reset_extension_ui();
        self.loading = true;
        self.status = Status::Message(RELOADING.into());
        self.dirty = true;
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let result = factory.reload(&session).await.map_err(|e| e.to_string());
            let _ = tx.send(AppMsg::Reloaded(result));
        });
    }

    /// The session has reloaded (or failed to): reload the UI's own parts and show the
    /// outcome.
    pub fn finish_reload(&mut self, result: Result<Vec<String>, String>) {
        self.loading = false;
        if matches!(self.status, Status::Message(_)) {
            self.status = Status::Idle;
        }
        let warnings = match result {
            Ok(warnings) => warnings,
            Err(e) => {
                self.notice(format!("Error: Reload failed: {e}"));
                self.answer_reload_waiters();
                self.run_queued_submits();
                return;
            }
        };
        let ui_warnings = self.apply_ui_settings();
        // Resources the session created in a folder trusted for having none are trusted
        // from now on (pi's implicit trust).
        let saved_trust = match self
            .factory
            .as_ref()
            .map(|f| f.save_implicit_trust(&self.session))
        {
            Some(Ok(saved)) => saved,
            Some(Err(e)) => {
                self.show_warning(format!("Could not save project trust after reload: {e}"));
                false
            }
            None => false,
        };
        self.header.resources = header_resources(&self.session);
        self.header.resources.themes = self.themes.custom_names();
        self.refresh_autocomplete();
        self.forward_extension_ui();
        self.refresh_usage();
        self.footer_cache = None;
        // Redraws everything: the header with the resources now loaded, then the chat
        // and the warnings of this reload, which replace those of startup.
        self.pinned_warnings = warnings
            .into_iter()
            .chain(ui_warnings)
            .map(|w| format!("Warning: {w}"))
            .collect();
        self.rebuild_transcript();
        if saved_trust {
            self.notice(format!("{RELOADED}; saved project trust"));
        } else {
            self.notice(RELOADED);
        }
        self.answer_reload_waiters();
        self.run_queued_submits();
    }

    /// Reads the parts of the settings the terminal UI itself uses again (keybindings,
    /// the theme, editor and display settings) and returns their problems.
    pub(super) fn apply_ui_settings(&mut self) -> Vec<String> {
        let mut ui_warnings = Vec::new();
        let (keys, key_warnings) = load_keybindings(self.session.paths());
        ui_warnings.extend(key_warnings);
        self.keys = keys;
        self.editor.set_keybindings(self.keys.clone());
        let (theme_name, hide_thinking, show_cursor, max_visible, padding, output_pad) = {
            let s = self.session.settings();
            (
                self.theme_override
                    .clone()
                    .or_else(|| s.theme().map(str::to_string)),
                s.hide_thinking_block(),
                s.show_hardware_cursor(),
                s.autocomplete_max_visible() as usize,
                s.editor_padding_x() as usize,
                s.output_pad(),
            )
        };
        crate::modes::interactive::markdown::set_code_block_indent(
            self.session.settings().code_block_indent(),
        );
        let (theme, themes, theme_warnings) = load_theme(theme_name, &self.session);
        self.theme = theme;
        self.themes = themes;
        ui_warnings.extend(theme_warnings);
        self.hide_thinking = hide_thinking;
        self.show_hardware_cursor = show_cursor;
        self.editor.set_autocomplete_max_visible(max_visible);
        self.editor.set_padding_x(padding);
        if self.output_pad != output_pad {
            self.output_pad = output_pad;
            self.full_redraw = true;
        }
        ui_warnings
    }

    /// Lets the extension commands that asked for this reload (`ctx.reload()`) go on.
    fn answer_reload_waiters(&mut self) {
        for done in std::mem::take(&mut self.reload_waiters) {
            let _ = done.send(());
        }
    }

    /// Sends what was typed while the session loaded or reloaded.
    pub(crate) fn run_queued_submits(&mut self) {
        for text in std::mem::take(&mut self.queued_submits) {
            self.on_submit(text);
        }
    }
}

/// The theme the settings name (or the default for the terminal), chosen among the
/// built-in themes and the custom ones of the settings' folders, entries and packages
/// (also returned, for `/settings`); a theme that cannot be loaded falls back to the
/// built-in dark one, with a warning. Problems with custom theme files are warnings too.
pub(super) fn load_theme(
    name: Option<String>,
    session: &AgentSession,
) -> (Theme, ThemeCatalog, Vec<String>) {
    let env = |name: &str| std::env::var(name).ok();
    let mode = ColorMode::detect(env);
    let catalog = theme_catalog(session, mode);
    let mut warnings = catalog.warnings().to_vec();
    let name = match resolve_theme_setting(name.as_deref(), env) {
        Ok(name) => name,
        Err((warning, fallback)) => {
            warnings.push(warning);
            fallback
        }
    };
    let theme = match catalog.theme(&name, &session.paths().themes(), mode) {
        Ok(t) => t,
        Err(e) => {
            warnings.push(format!("{e}; using the built-in dark theme"));
            Theme::dark(mode)
        }
    };
    (theme, catalog, warnings)
}

/// The custom themes: those of the settings' folders, entries and packages, then those
/// the extensions named (`resources_discover`'s `themePaths`).
pub(super) fn theme_catalog(session: &AgentSession, mode: ColorMode) -> ThemeCatalog {
    let agent_dir = session.paths().agent_dir.clone();
    let mut files = theme_files(&session.settings(), session.cwd(), &agent_dir);
    files.extend(session.extension_theme_files().0);
    ThemeCatalog::load(&files, mode)
}

/// `keybindings.json` over the defaults, with warnings for what it got wrong.
pub(super) fn load_keybindings(
    paths: &crate::core::paths::AgentPaths,
) -> (Arc<Keybindings>, Vec<String>) {
    let file = paths.keybindings();
    match Keybindings::load(&file) {
        Ok(loaded) => (
            Arc::new(loaded.bindings),
            loaded
                .issues
                .iter()
                .map(|issue| format!("{}: {issue}", file.display()))
                .collect(),
        ),
        Err(e) => (Arc::new(Keybindings::defaults()), vec![e.to_string()]),
    }
}
