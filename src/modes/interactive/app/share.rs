//! `/export` to HTML and `/share` (pi's secret-gist sharing through the GitHub CLI).
//!
//! Both render the whole session tree into one HTML page on a blocking thread
//! ([`HtmlJob`]); `/share` then uploads it with `gh gist create --public=false` and prints
//! the viewer link (`PI_SHARE_VIEWER_URL`, default pi's viewer) with the gist's id.
//! Escape while the gist is being created kills `gh` ("Share cancelled").

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::msg::AppMsg;
use super::state::{App, Status};
use crate::ai::message::ToolSpec;
use crate::session::entry::{EntryId, SessionEntry, SessionHeader};

/// pi's share viewer; `PI_SHARE_VIEWER_URL` replaces it.
const DEFAULT_SHARE_VIEWER_URL: &str = "https://pi.dev/session/";

/// Everything needed to render the session as HTML, taken from the app at once so the
/// rendering can run on another thread.
pub struct HtmlJob {
    header: SessionHeader,
    entries: Vec<SessionEntry>,
    leaf: Option<EntryId>,
    system_prompt: String,
    tools: Vec<ToolSpec>,
    colors: std::collections::HashMap<&'static str, String>,
    backgrounds: crate::modes::interactive::theme::ExportColors,
    /// The session file (for the default output name).
    pub file: PathBuf,
}

impl HtmlJob {
    /// Renders and writes the page to `out`.
    pub fn write(self, out: &Path) -> Result<(), String> {
        let theme = crate::export::ExportTheme::from_colors(self.colors).with_backgrounds(
            self.backgrounds.page_bg.as_deref(),
            self.backgrounds.card_bg.as_deref(),
            self.backgrounds.info_bg.as_deref(),
        );
        let html = crate::export::export_html(&crate::export::ExportInput {
            header: &self.header,
            entries: &self.entries,
            leaf_id: self.leaf.as_ref(),
            system_prompt: Some(&self.system_prompt),
            tools: &self.tools,
            theme: &theme,
        });
        crate::export::file::write_export(out, &html).map_err(|e| e.to_string())
    }
}

impl App {
    /// The session as an [`HtmlJob`], or pi's error when there is nothing to export.
    pub fn html_job(&self) -> Result<HtmlJob, String> {
        let (file, header, entries, leaf) = self.session.with_session(|m| {
            (
                m.session_file().map(|p| p.to_path_buf()),
                m.header().clone(),
                m.owned_entries(),
                m.leaf_id().cloned(),
            )
        });
        let Some(file) = file else {
            return Err(crate::export::file::IN_MEMORY_SESSION_ERROR.into());
        };
        if entries.is_empty() {
            return Err(crate::export::file::NOTHING_TO_EXPORT_ERROR.into());
        }
        Ok(HtmlJob {
            header,
            entries,
            leaf,
            system_prompt: self.session.system_prompt(),
            tools: self.session.tools().iter().map(|t| t.spec()).collect(),
            colors: crate::modes::interactive::theme::resolved_hex_colors(&self.theme),
            backgrounds: self.theme.export_colors().clone(),
            file,
        })
    }

    /// `/export [file.html]`.
    pub fn export_html(&mut self, path: &str) {
        let job = match self.html_job() {
            Ok(job) => job,
            Err(e) => return self.show_error(format!("Failed to export session: {e}")),
        };
        // Shown as pi shows it: the default file by its name (it is written to the
        // working directory), a given path as it was typed.
        let (out, shown) = if path.is_empty() {
            let name = crate::export::file::default_output_name(&job.file);
            (self.cwd.join(&name), name.display().to_string())
        } else {
            (crate::core::paths::expand_tilde(path), path.to_string())
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let msg = match job.write(&out) {
                Ok(()) => AppMsg::Status(format!("Session exported to: {shown}")),
                Err(e) => AppMsg::Error(format!("Failed to export session: {e}")),
            };
            let _ = tx.send(msg);
        });
    }

    /// `/share`: a secret gist of the HTML export, through the GitHub CLI.
    pub fn share(&mut self) {
        let job = match self.html_job() {
            Ok(job) => job,
            Err(e) => return self.notice(format!("Error: Failed to export session: {e}")),
        };
        let cancel = CancellationToken::new();
        self.share_cancel = Some(cancel.clone());
        self.status = Status::Message(format!(
            "Creating gist... ({} to cancel)",
            self.keys
                .key_text(crate::modes::interactive::keys::Action::Interrupt)
        ));
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let msg = match create_gist(job, &cancel).await {
                Ok(Some(text)) => AppMsg::ShareDone(Ok(text)),
                Ok(None) => AppMsg::ShareDone(Err("Share cancelled".into())),
                Err(e) => AppMsg::ShareDone(Err(format!("Error: {e}"))),
            };
            let _ = tx.send(msg);
        });
    }

    /// Escape while sharing: stops `gh`. Returns whether a share was running.
    pub fn cancel_share(&mut self) -> bool {
        match self.share_cancel.take() {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// The share finished (or was cancelled): the link, or why not.
    pub fn share_done(&mut self, result: Result<String, String>) {
        self.share_cancel = None;
        if matches!(self.status, Status::Message(_)) {
            self.status = Status::Idle;
        }
        match result {
            Ok(text) | Err(text) => self.notice(text),
        }
    }
}

/// Checks `gh`, writes the page to a temporary `session.html` and uploads it. `Ok(None)`
/// when cancelled; `Ok(Some(text))` is the message with the links.
async fn create_gist(job: HtmlJob, cancel: &CancellationToken) -> Result<Option<String>, String> {
    let auth = tokio::process::Command::new("gh")
        .args(["auth", "status"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .await;
    match auth {
        Err(_) => {
            return Err(
                "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/".into(),
            );
        }
        Ok(status) if !status.success() => {
            return Err("GitHub CLI is not logged in. Run 'gh auth login' first.".into());
        }
        Ok(_) => {}
    }
    // The gist shows the file name, so it is `session.html` (as in pi), in a folder of
    // its own that is removed afterwards.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("pi-share-{}-{stamp}", std::process::id()));
    let result = upload(job, &dir, cancel).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn upload(
    job: HtmlJob,
    dir: &Path,
    cancel: &CancellationToken,
) -> Result<Option<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("Failed to export session: {e}"))?;
    let file = dir.join("session.html");
    let out = file.clone();
    tokio::task::spawn_blocking(move || job.write(&out))
        .await
        .map_err(|e| format!("Failed to export session: {e}"))?
        .map_err(|e| format!("Failed to export session: {e}"))?;
    let child = tokio::process::Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("Failed to create gist: {e}"))?;
    let output = tokio::select! {
        output = child.wait_with_output() => output.map_err(|e| format!("Failed to create gist: {e}"))?,
        () = cancel.cancelled() => return Ok(None),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let why = if stderr.is_empty() {
            "Unknown error".to_string()
        } else {
            stderr
        };
        return Err(format!("Failed to create gist: {why}"));
    }
    let gist_url = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let Some(gist_id) = gist_url.rsplit('/').next().filter(|id| !id.is_empty()) else {
        return Err("Failed to parse gist ID from gh output".into());
    };
    let base = std::env::var("PI_SHARE_VIEWER_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| DEFAULT_SHARE_VIEWER_URL.to_string());
    Ok(Some(format!(
        "Share URL: {base}#{gist_id}\nGist: {gist_url}"
    )))
}
