//! The non-UI part of pi's ExtensionAPI in the node host, with pi's own example
//! extensions driven through the built binary in RPC mode against the loopback model
//! server: `ctx.compact()` compacts the session with the extension's instructions and
//! `ctx.abort()` reaches the session without breaking the protocol.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::rpc_client::{RpcClient, RpcProject};
use crate::ts_extensions::examples_dir;
use serde_json::{Value, json};

/// The path of one of pi's examples; skips the test when they are not installed.
macro_rules! pi_example {
    ($name:expr) => {
        match examples_dir() {
            Ok(dir) => dir.join($name),
            Err(why) => {
                eprintln!("skipped: pi's example extensions are not available: {why}");
                return;
            }
        }
    };
}

fn with_extension(p: &RpcProject, extension: &std::path::Path) -> RpcClient {
    let mut cmd = p.command();
    cmd.arg("-e").arg(extension);
    RpcClient::spawn(cmd)
}

/// trigger-compact.ts's `/trigger-compact <instructions>` calls `ctx.compact()`: the
/// session compacts (RPC `compaction_start` / `compaction_end`), the summary request
/// carries the instructions and the next prompt starts from the summary.
#[test]
fn trigger_compact_compacts_the_session_with_the_command_instructions() {
    let ext = pi_example!("trigger-compact.ts");
    let p = RpcProject::new(
        &json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "## Goal\nKeep x."}}],
            "sequence": [{"text": "one"}, {"text": "two"}, {"text": "after"}]
        }),
        None,
        Some(json!({"compaction": {"keepRecentTokens": 10}})),
    );
    let mut c = with_extension(&p, &ext);
    c.prompt("first");
    c.prompt("second");
    c.send(&json!({"type": "prompt", "message": "/trigger-compact Focus on x", "id": "cmd"}));
    let seen = c.read_until(|m| m["type"] == "compaction_end");
    let end = seen.last().unwrap();
    assert!(
        end["result"]["summary"]
            .as_str()
            .unwrap_or_default()
            .starts_with("## Goal\nKeep x."),
        "{end}"
    );
    let summary_request = p
        .server
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("<conversation>"))
        .unwrap();
    assert!(summary_request.body.to_string().contains("Focus on x"));
    c.prompt("third");
    let last = p.server.requests().last().unwrap().body.clone();
    assert!(
        last["messages"][1].to_string().contains("Keep x."),
        "{last}"
    );
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}

/// `ctx.abort()` from a `tool_call` handler aborts the run (the model's tool call is
/// never answered by another request), and the extension keeps working afterwards: a
/// second prompt runs through the same handler.
#[test]
fn abort_from_a_handler_stops_the_run_and_the_extension_stays_loaded() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 5"}}]},
            {"text": "never"},
            {"text": "second answer"}
        ]}),
        None,
        None,
    );
    let ext = p.cwd().join("stopper.ts");
    std::fs::write(
        &ext,
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
    let calls = 0;
    pi.on("tool_call", async (_event, ctx) => {
        calls += 1;
        ctx.abort();
        return { block: true, reason: `stopped ${calls}` };
    });
    pi.registerCommand("calls", {
        handler: async (_args, ctx) => ctx.ui.notify(`calls: ${calls}`, "info"),
    });
}
"#,
    )
    .unwrap();
    let mut c = with_extension(&p, &ext);
    let run = c.prompt("go");
    let end = run.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    let messages = end["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "assistant", "{end}");
    assert_eq!(last["stopReason"], "aborted", "{end}");
    assert_eq!(p.server.requests().len(), 1);
    c.send(&json!({"type": "prompt", "message": "/calls", "id": "cmd"}));
    let seen = c.read_until(|m: &Value| m["method"] == "notify");
    assert_eq!(seen.last().unwrap()["message"], "calls: 1");
    assert!(
        !seen.iter().any(|m| m["type"] == "extension_error"),
        "{seen:?}"
    );
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}
