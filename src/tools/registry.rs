//! The set of built-in tools and how to create them: which names exist and which are on
//! by default. Extension tools are registered elsewhere; this only knows the seven
//! built-ins. The settings they share are [`ToolConfig`] (in `config`, which the tools
//! use without depending on this list of them).

use std::sync::Arc;

use super::Tool;
use super::bash::BashTool;
use super::edit::EditTool;
use super::find::FindTool;
use super::grep::GrepTool;
use super::ls::LsTool;
use super::read::ReadTool;
use super::write::WriteTool;

// Defined in `config`; also offered here, where `read` imports it from.
pub use super::config::ToolConfig;

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
