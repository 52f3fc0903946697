//! The settings the built-in tools of one session share ([`ToolConfig`]): the working
//! directory, the shell settings, image handling and where `bash` puts its files.
//! Every tool reads it; it knows no tool.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Settings shared by the built-in tools of one session.
#[derive(Debug, Clone)]
pub struct ToolConfig {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// The `shellPath` setting: the shell `bash` runs commands with.
    pub shell_path: Option<PathBuf>,
    /// The `shellCommandPrefix` setting: a line run before every command.
    pub command_prefix: Option<String>,
    /// The `images.autoResize` setting: shrink images `read` returns to 2000×2000.
    pub auto_resize_images: bool,
    /// Directory put first on `PATH` for commands (`~/.pi/agent/bin`); `None` uses
    /// [`default_bin_dir`].
    pub bin_dir: Option<PathBuf>,
    /// Where `bash` saves full outputs it had to truncate; `None` is the system temp dir.
    pub temp_dir: Option<PathBuf>,
    /// Whether the current model accepts images. Shared with the session, which updates
    /// it when the model changes; `read` then adds pi's note that the image is omitted.
    pub model_accepts_images: Arc<AtomicBool>,
}

impl ToolConfig {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            shell_path: None,
            command_prefix: None,
            auto_resize_images: true,
            bin_dir: None,
            temp_dir: None,
            model_accepts_images: Arc::new(AtomicBool::new(true)),
        }
    }

    pub(crate) fn accepts_images(&self) -> bool {
        self.model_accepts_images.load(Ordering::Relaxed)
    }

    pub(crate) fn effective_bin_dir(&self) -> Option<PathBuf> {
        self.bin_dir.clone().or_else(default_bin_dir)
    }

    pub(crate) fn effective_temp_dir(&self) -> PathBuf {
        self.temp_dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// `$PI_CODING_AGENT_DIR/bin`, else `~/.pi/agent/bin`.
pub fn default_bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PI_CODING_AGENT_DIR").filter(|d| !d.is_empty()) {
        let dir = super::path::expand_path(&dir.to_string_lossy());
        return Some(PathBuf::from(dir).join("bin"));
    }
    dirs::home_dir().map(|home| home.join(".pi").join("agent").join("bin"))
}
