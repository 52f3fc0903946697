//! Where pi keeps its files: `~/.pi/agent/` (overridable with `PI_CODING_AGENT_DIR`) and
//! the project's `.pi/` folder. Only this module reads those environment variables; lower
//! layers get directories as parameters.

use std::path::{Path, PathBuf};

/// Name of the per-project config folder (`<cwd>/.pi`).
pub const CONFIG_DIR_NAME: &str = ".pi";

/// The user's home directory (falls back to `/` so we never panic without `$HOME`).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Expands a leading `~` or `~/` to the home directory.
pub fn expand_tilde(path: &str) -> PathBuf {
    if path == "~" {
        return home_dir();
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return home_dir().join(rest);
    }
    PathBuf::from(path)
}

/// The agent directory: `$PI_CODING_AGENT_DIR` or `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(dir) if !dir.is_empty() => expand_tilde(&dir),
        _ => home_dir().join(CONFIG_DIR_NAME).join("agent"),
    }
}

/// Resolved locations of every file pi reads under the agent directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPaths {
    pub agent_dir: PathBuf,
}

impl AgentPaths {
    pub fn new(agent_dir: PathBuf) -> Self {
        Self { agent_dir }
    }

    /// Paths from the environment (`PI_CODING_AGENT_DIR` or `~/.pi/agent`).
    pub fn from_env() -> Self {
        Self::new(agent_dir())
    }

    pub fn settings(&self) -> PathBuf {
        self.agent_dir.join("settings.json")
    }
    pub fn models(&self) -> PathBuf {
        self.agent_dir.join("models.json")
    }
    pub fn auth(&self) -> PathBuf {
        self.agent_dir.join("auth.json")
    }
    pub fn keybindings(&self) -> PathBuf {
        self.agent_dir.join("keybindings.json")
    }
    pub fn themes(&self) -> PathBuf {
        self.agent_dir.join("themes")
    }
    pub fn prompts(&self) -> PathBuf {
        self.agent_dir.join("prompts")
    }
    pub fn skills(&self) -> PathBuf {
        self.agent_dir.join("skills")
    }
    pub fn extensions(&self) -> PathBuf {
        self.agent_dir.join("extensions")
    }
    /// Root of all session folders (`<agent>/sessions`).
    pub fn sessions_root(&self) -> PathBuf {
        self.agent_dir.join("sessions")
    }
    pub fn debug_log(&self) -> PathBuf {
        self.agent_dir.join("pi-debug.log")
    }
}

/// The project config folder of `cwd` (`<cwd>/.pi`).
pub fn project_config_dir(cwd: &Path) -> PathBuf {
    cwd.join(CONFIG_DIR_NAME)
}

/// `path` with the home directory shown as `~` (for display only).
pub fn tildify(path: &Path) -> String {
    let home = home_dir();
    if home != Path::new("/")
        && let Ok(rest) = path.strip_prefix(&home)
    {
        if rest.as_os_str().is_empty() {
            return "~".to_string();
        }
        return format!("~/{}", rest.display());
    }
    path.display().to_string()
}
