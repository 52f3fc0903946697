//! The set of built-in tools and how to create them: which names exist, which are on by
//! default, and the settings they share ([`ToolConfig`]). Extension tools are registered
//! elsewhere; this only knows the seven built-ins.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::Tool;
use super::bash::BashTool;
use super::edit::EditTool;
use super::find::FindTool;
use super::grep::GrepTool;
use super::ls::LsTool;
use super::read::ReadTool;
use super::write::WriteTool;

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

/// Every built-in tool, in pi's order.
pub fn builtin_tool_names() -> &'static [&'static str] {
    &["read", "bash", "edit", "write", "grep", "find", "ls"]
}

/// The tools enabled when no `--tools` list is given.
pub fn default_tool_names() -> &'static [&'static str] {
    &["read", "bash", "edit", "write"]
}

/// A tool name that is not a built-in tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown tool name: {name} (built-in tools: read, bash, edit, write, grep, find, ls)")]
pub struct UnknownToolError {
    pub name: String,
}

/// Creates one built-in tool.
pub fn create_tool(name: &str, config: &ToolConfig) -> Result<Arc<dyn Tool>, UnknownToolError> {
    let config = config.clone();
    Ok(match name {
        "read" => Arc::new(ReadTool::new(config)),
        "bash" => Arc::new(BashTool::new(config)),
        "edit" => Arc::new(EditTool::new(config)),
        "write" => Arc::new(WriteTool::new(config)),
        "grep" => Arc::new(GrepTool::new(config)),
        "find" => Arc::new(FindTool::new(config)),
        "ls" => Arc::new(LsTool::new(config)),
        _ => {
            return Err(UnknownToolError {
                name: name.to_string(),
            });
        }
    })
}

/// Creates the named built-in tools, in the order given.
pub fn create_tools<S: AsRef<str>>(
    names: &[S],
    config: &ToolConfig,
) -> Result<Vec<Arc<dyn Tool>>, UnknownToolError> {
    names
        .iter()
        .map(|name| create_tool(name.as_ref(), config))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_tools_in_order_and_rejects_unknown_names() {
        let config = ToolConfig::new("/tmp");
        let tools = create_tools(builtin_tool_names(), &config).unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, builtin_tool_names());
        let err = create_tools(&["read", "grepp"], &config).err().unwrap();
        insta::assert_snapshot!(err.to_string(), @"Unknown tool name: grepp (built-in tools: read, bash, edit, write, grep, find, ls)");
    }

    #[test]
    fn every_tool_has_a_prompt_snippet_and_an_object_schema() {
        let config = ToolConfig::new("/tmp");
        for tool in create_tools(builtin_tool_names(), &config).unwrap() {
            assert!(
                tool.prompt_snippet().is_some_and(|s| !s.is_empty()),
                "{}",
                tool.name()
            );
            assert_eq!(tool.parameters()["type"], "object", "{}", tool.name());
            assert_eq!(tool.label(), tool.name());
        }
    }
}
