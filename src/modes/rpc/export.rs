//! `export_html`: the live session (every branch, the system prompt and the active tools)
//! as one HTML page, in the colours of the theme chosen in settings, written to
//! `outputPath` or to pi's default `pi-session-<session file name>.html`.
//!
//! The session is copied when the command is handled, so the page shows the session as
//! it was then; rendering and writing happen afterwards, off the async threads.
//! Rendering is `crate::export`; this only gathers its input and reports as pi does.

use std::path::{Path, PathBuf};

use crate::ai::message::ToolSpec;
use crate::core::agent_session::AgentSession;
use crate::export::{
    ExportInput, ExportTheme, IN_MEMORY_SESSION_ERROR, NOTHING_TO_EXPORT_ERROR,
    default_output_name, export_html, write_export,
};
use crate::modes::theme::{ColorMode, Theme, resolve_theme_setting, resolved_hex_colors};
use crate::session::entry::{EntryId, SessionEntry, SessionHeader};

/// Everything one export needs, copied from the session.
pub struct ExportJob {
    header: SessionHeader,
    entries: Vec<SessionEntry>,
    leaf_id: Option<EntryId>,
    system_prompt: String,
    tools: Vec<ToolSpec>,
    theme_name: String,
    themes_dir: PathBuf,
    /// Where the page is written.
    target: PathBuf,
    /// The `path` answered: the client's `outputPath` or the default name, as given
    /// (pi answers a relative path relative, to the working directory).
    reported: String,
}

impl ExportJob {
    /// Copies what the page shows. Fails as pi does for a session without a file
    /// (`--no-session`) or whose file is not written yet (no answer so far).
    pub fn prepare(session: &AgentSession, output_path: Option<&str>) -> Result<Self, String> {
        let (file, header, entries, leaf_id) = session.with_session(|m| {
            (
                m.session_file().map(Path::to_path_buf),
                m.header().clone(),
                m.owned_entries(),
                m.leaf_id().cloned(),
            )
        });
        let Some(file) = file else {
            return Err(IN_MEMORY_SESSION_ERROR.to_string());
        };
        if !file.exists() {
            return Err(NOTHING_TO_EXPORT_ERROR.to_string());
        }
        let reported = match output_path {
            Some(path) if !path.is_empty() => path.to_string(),
            _ => default_output_name(&file).display().to_string(),
        };
        let setting = session.settings().theme().map(str::to_string);
        let theme_name = resolve_theme_setting(setting.as_deref(), |key| std::env::var(key).ok())
            .unwrap_or_else(|(_, fallback)| fallback);
        Ok(ExportJob {
            header,
            entries,
            leaf_id,
            system_prompt: session.system_prompt(),
            tools: session.tools().iter().map(|t| t.spec()).collect(),
            theme_name,
            themes_dir: session.paths().themes(),
            target: session.cwd().join(&reported),
            reported,
        })
    }

    /// Renders and writes the page (blocking); returns the `path` to answer.
    pub fn run(self) -> Result<String, String> {
        let theme = self.theme();
        let html = export_html(&ExportInput {
            header: &self.header,
            entries: &self.entries,
            leaf_id: self.leaf_id.as_ref(),
            system_prompt: Some(&self.system_prompt),
            tools: &self.tools,
            theme: &theme,
        });
        write_export(&self.target, &html).map_err(|e| e.to_string())?;
        Ok(self.reported)
    }

    /// The settings' theme in export colours; the built-in dark one when it cannot be
    /// loaded (said on stderr, which is where an RPC host looks for diagnostics).
    fn theme(&self) -> ExportTheme {
        match Theme::load_named(&self.theme_name, &self.themes_dir, ColorMode::TrueColor) {
            Ok(theme) => {
                let backgrounds = theme.export_colors();
                ExportTheme::from_colors(resolved_hex_colors(&theme)).with_backgrounds(
                    backgrounds.page_bg.as_deref(),
                    backgrounds.card_bg.as_deref(),
                    backgrounds.info_bg.as_deref(),
                )
            }
            Err(e) => {
                eprintln!("Warning: {e}; the HTML export uses the built-in dark theme");
                ExportTheme::dark()
            }
        }
    }
}
