//! pi-rs's built-in tools offered to pi's TypeScript modules: their definitions travel in
//! `hello.builtinTools` (so `createReadTool(cwd)` & co. work while the module loads), and a
//! `run_tool` request runs one (the factories' `execute`). Custom `operations` never reach
//! pi-rs: the node host runs those tools itself.

use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::protocol::RunToolRequest;
use crate::tools::registry::{ToolConfig, builtin_tool_names, create_tool};
use crate::tools::{Tool, ToolCallArgs};

/// Every built-in tool as pi's tool definitions describe it.
pub(super) fn definitions(cwd: &Path) -> Vec<Value> {
    let config = ToolConfig::new(cwd);
    builtin_tool_names()
        .iter()
        .filter_map(|name| create_tool(name, &config).ok())
        .map(|tool| definition(tool.as_ref()))
        .collect()
}

fn definition(tool: &dyn Tool) -> Value {
    let mut value = json!({
        "name": tool.name(),
        "label": tool.label(),
        "description": tool.description(),
        "parameters": tool.parameters(),
        "promptGuidelines": tool.prompt_guidelines(),
    });
    if let Some(snippet) = tool.prompt_snippet() {
        value["promptSnippet"] = json!(snippet);
    }
    value
}

/// Runs the requested tool in `cwd`. A failing tool is an answer (`isError: true` with
/// the message the model would read), not an error; only an unknown tool is.
pub(super) async fn run(
    request: &RunToolRequest,
    cwd: &Path,
    stop: &CancellationToken,
) -> Result<Value, String> {
    let tool = create_tool(&request.name, &ToolConfig::new(cwd)).map_err(|e| e.to_string())?;
    let mut call = ToolCallArgs::new(
        request.tool_call_id.clone().unwrap_or_default(),
        tool.prepare_arguments(request.input.clone()),
    );
    call.cancel = stop.child_token();
    Ok(match tool.execute(call).await {
        Ok(output) => json!({"content": output.content, "details": output.details}),
        Err(error) => json!({
            "content": [{"type": "text", "text": error.message}],
            "details": error.details,
            "isError": true,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_describe_the_seven_tools_with_their_schemas() {
        let defs = definitions(Path::new("/tmp"));
        let names: Vec<&str> = defs.iter().filter_map(|d| d["name"].as_str()).collect();
        assert_eq!(
            names,
            ["read", "bash", "edit", "write", "grep", "find", "ls"]
        );
        assert_eq!(defs[1]["parameters"]["required"][0], "command");
        assert!(
            defs[0]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty())
        );
    }

    #[tokio::test]
    async fn run_answers_results_and_tool_failures() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
        let stop = CancellationToken::new();
        let request = |name: &str, input: Value| RunToolRequest {
            id: json!(1),
            name: name.into(),
            cwd: None,
            input,
            tool_call_id: None,
        };
        let read = run(
            &request("read", json!({"path": "a.txt"})),
            dir.path(),
            &stop,
        )
        .await
        .unwrap();
        assert!(
            read["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("alpha")
        );
        assert!(read.get("isError").is_none());
        let missing = run(
            &request("read", json!({"path": "nope.txt"})),
            dir.path(),
            &stop,
        )
        .await
        .unwrap();
        assert_eq!(missing["isError"], true);
        assert!(
            run(&request("fly", json!({})), dir.path(), &stop)
                .await
                .is_err()
        );
    }
}
