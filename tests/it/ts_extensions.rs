//! pi's own TypeScript extensions — the examples shipped in the reference pi's npm
//! package, read from where `tests/support/reference-pi.sh` installs it — run unchanged
//! in the node host, driven through the built binary in print and RPC mode against the
//! loopback model server: safety hooks block as in pi, tools and commands work, dialogs
//! reach the RPC client, a module that fails to load stops startup, and without a JS/TS
//! extension no node is needed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};

use crate::support::pi_project::{Project, conversation, system_prompt, tool_names};
use crate::support::reference_pi;
use crate::support::rpc_client::{RpcClient, RpcProject};
use serde_json::{Value, json};

/// The reference pi 0.73.1's `examples/extensions/` folder (installed on first use), or
/// why it is not there. Pinned to 0.73.1: these tests drive the extension API of 0.73
/// example by example; pi 1.6's API (its own examples' new calls) is issue 28, and
/// `extensions_pi16_examples.rs` checks that pi 1.6's examples start.
pub(crate) fn examples_dir() -> Result<PathBuf, String> {
    reference_pi::available_073()?;
    let dir = reference_pi::node_modules_of(reference_pi::OLD_VERSION)
        .join("@mariozechner/pi-coding-agent/examples/extensions");
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!("{} is missing", dir.display()))
    }
}

/// The path of one of pi's examples; skips the test (saying why) when they are not
/// installed and cannot be (no node/npm).
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

fn run_print(p: &Project, extension: &Path, prompt: &str) -> std::process::Output {
    p.pi()
        .arg("-e")
        .arg(extension)
        .args(["-p", prompt])
        .output()
        .unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Sends `text` as a prompt and reads up to the first message `until` accepts.
fn prompt_until(c: &mut RpcClient, text: &str, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    c.send(&json!({"type": "prompt", "message": text, "id": "cmd"}));
    c.read_until(until)
}

fn with_extension(p: &RpcProject, extension: &Path) -> RpcClient {
    let mut cmd = p.command();
    cmd.arg("-e").arg(extension);
    RpcClient::spawn(cmd)
}

#[test]
fn permission_gate_blocks_rm_rf_without_a_ui() {
    let gate = pi_example!("permission-gate.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf victim"}}]},
        {"text": "It was blocked."}
    ]}));
    std::fs::create_dir_all(p.cwd().join("victim")).unwrap();
    let out = run_print(&p, &gate, "clean up");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(p.cwd().join("victim").is_dir(), "rm -rf ran");
    let requests = p.requests();
    let seen = conversation(&requests[1]);
    assert!(
        seen.contains("Dangerous command blocked (no UI for confirmation)"),
        "{seen}"
    );
}

#[test]
fn protected_paths_blocks_writing_env() {
    let guard = pi_example!("protected-paths.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "write", "arguments": {"path": ".env", "content": "KEY=1\n"}}]},
        {"tool_calls": [{"name": "write", "arguments": {"path": "notes.txt", "content": "ok\n"}}]},
        {"text": "Done."}
    ]}));
    let out = run_print(&p, &guard, "write the files");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!p.cwd().join(".env").exists(), ".env was written");
    assert_eq!(
        std::fs::read_to_string(p.cwd().join("notes.txt")).unwrap(),
        "ok\n"
    );
    let seen = conversation(&p.requests()[1]);
    assert!(seen.contains("Path \".env\" is protected"), "{seen}");
}

#[test]
fn hello_registers_a_tool_the_model_calls() {
    let hello = pi_example!("hello.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "hello", "arguments": {"name": "Ada"}}]},
        {"text": "Greeted."}
    ]}));
    let out = run_print(&p, &hello, "greet Ada");
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = p.requests();
    assert!(
        tool_names(&requests[0]).contains(&"hello".to_string()),
        "{:?}",
        tool_names(&requests[0])
    );
    let tools = requests[0]["tools"].as_array().unwrap();
    let hello_tool = tools
        .iter()
        .find(|t| t["function"]["name"] == "hello")
        .unwrap();
    assert_eq!(
        hello_tool["function"]["parameters"]["properties"]["name"]["description"],
        "Name to greet"
    );
    let seen = conversation(&requests[1]);
    assert!(seen.contains("Hello, Ada!"), "{seen}");
}

#[test]
fn tool_override_replaces_read_and_denies_env_files() {
    let override_ts = pi_example!("tool-override.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "read", "arguments": {"path": ".env"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
        {"text": "Read."}
    ]}));
    std::fs::write(p.cwd().join(".env"), "SECRET=1\n").unwrap();
    std::fs::write(p.cwd().join("a.txt"), "visible text\n").unwrap();
    let out = run_print(&p, &override_ts, "read them");
    assert!(out.status.success(), "{}", stderr(&out));
    // Replacing a built-in tool is what the module means to do: no warning, as in pi.
    assert_eq!(stderr(&out), "");
    let requests = p.requests();
    let seen = conversation(&requests[2]);
    assert!(seen.contains("Access denied: \".env\""), "{seen}");
    assert!(!seen.contains("SECRET=1"), "{seen}");
    assert!(seen.contains("visible text"), "{seen}");
    let log = std::fs::read_to_string(p.agent_dir().join("read-access.log")).unwrap();
    assert!(
        log.contains("BLOCKED:") && log.contains("ALLOWED:"),
        "{log}"
    );
}

#[test]
fn pirate_command_changes_the_system_prompt_and_notifies_the_client() {
    let pirate = pi_example!("pirate.ts");
    let p = RpcProject::new(&json!({"sequence": [{"text": "Arrr."}]}), None, None);
    let mut c = with_extension(&p, &pirate);
    let seen = prompt_until(&mut c, "/pirate", |m| m["type"] == "extension_ui_request");
    let notice = seen.last().unwrap();
    assert_eq!(notice["method"], "notify", "{notice}");
    assert_eq!(notice["message"], "Arrr! Pirate mode enabled!");
    c.prompt("hello");
    let requests = p.server.requests();
    let prompt = system_prompt(&requests[0].body);
    assert!(
        prompt.contains("IMPORTANT: You are now in PIRATE MODE"),
        "{prompt}"
    );
}

#[test]
fn commands_lists_the_extension_commands_in_a_select_dialog() {
    let commands = pi_example!("commands.ts");
    let p = RpcProject::new(&json!({"sequence": []}), None, None);
    let mut c = with_extension(&p, &commands);
    let seen = prompt_until(&mut c, "/commands", |m| m["type"] == "extension_ui_request");
    let request = seen.last().unwrap();
    assert_eq!(request["method"], "select", "{request}");
    assert_eq!(request["title"], "Available Commands");
    let options: Vec<String> = request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap().to_string())
        .collect();
    assert!(
        options.contains(&"/commands - List available slash commands".to_string()),
        "{options:?}"
    );
    c.send(&json!({"type": "extension_ui_response", "id": request["id"], "cancelled": true}));
}

#[test]
fn a_module_that_fails_to_load_stops_startup_naming_the_file_and_the_cause() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"sequence": [{"text": "never"}]}));
    let bad = p.write(
        "bad.ts",
        "export default function (pi) {\n  const x = ;\n}\n",
    );
    let thrower = p.write(
        "thrower.ts",
        "export default function (pi: unknown) { throw new Error(\"no config\"); }\n",
    );
    let out = run_print(&p, &bad, "hi");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let expected = format!(
        "Error: Failed to load extension \"{}\": Failed to load extension: {}:2:13: ",
        bad.display(),
        bad.display()
    );
    assert!(err.contains(&expected), "{err}");
    assert!(p.requests().is_empty(), "the model was asked");

    let out = run_print(&p, &thrower, "hi");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "Error: Failed to load extension \"{}\": Failed to load extension: no config",
            thrower.display()
        )),
        "{err}"
    );

    // The same in RPC mode: pi-rs exits before answering anything.
    let rpc = RpcProject::new(&json!({"sequence": []}), None, None);
    let c = with_extension(&rpc, &thrower);
    let (status, err) = c.wait_exit();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("Failed to load extension: no config"), "{err}");
}

#[test]
fn without_node_a_module_is_a_clear_error_and_other_extensions_need_none() {
    let p = Project::new(json!({"sequence": [{"text": "fine"}, {"text": "fine"}]}));
    let module = p.write("ext.ts", "export default function () {}\n");
    let out = p
        .pi()
        .env("PI_RS_NODE", "/nonexistent/node")
        .arg("-e")
        .arg(&module)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("TypeScript/JavaScript extensions need Node.js 20 or newer")
            && err.contains("/nonexistent/node"),
        "{err}"
    );

    // A program extension and no module: node is never looked for.
    let program = p.write(
        "ext.sh",
        "#!/bin/sh\nread hello\necho '{\"type\":\"register\"}'\ncat >/dev/null\n",
    );
    let out = p
        .pi()
        .env("PI_RS_NODE", "/nonexistent/node")
        .arg("-e")
        .arg(&program)
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
}

/// Relative `.ts` imports (written `./x.js` as TypeScript wants) and the extension's own
/// `node_modules` resolve; a folder with `index.ts` in `.pi/extensions/` is found.
#[test]
fn a_folder_extension_with_relative_imports_and_its_own_node_modules_loads() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "shout", "arguments": {"text": "hi"}}]},
        {"text": "Done."}
    ]}));
    p.write(
        ".pi/extensions/shouter/index.ts",
        r#"import { shout } from "./lib/shout.js";
import pad from "left-pad-lite";
interface Params { text: string }
export default function (pi: any) {
    pi.registerTool({
        name: "shout", label: "Shout", description: "Shouts",
        parameters: { type: "object", properties: { text: { type: "string" } } },
        async execute(_id: string, params: Params) {
            return { content: [{ type: "text", text: pad(shout(params.text)) }], details: {} };
        },
    });
}
"#,
    );
    p.write(
        ".pi/extensions/shouter/lib/shout.ts",
        "export const shout = (text: string): string => `${text.toUpperCase()}!`;\n",
    );
    p.write(
        ".pi/extensions/shouter/node_modules/left-pad-lite/package.json",
        r#"{"name":"left-pad-lite","version":"1.0.0","main":"index.js"}"#,
    );
    p.write(
        ".pi/extensions/shouter/node_modules/left-pad-lite/index.js",
        "module.exports = (s) => `>> ${s}`;\n",
    );
    let out = p.pi().args(["-p", "shout"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = conversation(&p.requests()[1]);
    assert!(seen.contains(">> HI!"), "{seen}");
}

#[test]
fn preset_flag_selects_a_preset_whose_instructions_reach_the_system_prompt() {
    let preset = pi_example!("preset.ts");
    let p = Project::new(json!({"sequence": [{"text": "Planned."}]}));
    p.write(
        ".pi/presets.json",
        r#"{"plan": {"instructions": "PLAN-ONLY: do not edit files."}}"#,
    );
    let out = p
        .pi()
        .arg("-e")
        .arg(&preset)
        .args(["--preset", "plan", "-p", "make a plan"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let prompt = system_prompt(&p.requests()[0]);
    assert!(
        prompt.ends_with("\n\nPLAN-ONLY: do not edit files."),
        "{prompt}"
    );

    // A flag nobody registered stops pi-rs before the model is asked, as in pi.
    let out = p
        .pi()
        .arg("-e")
        .arg(&preset)
        .args(["--presett", "plan", "-p", "make a plan"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "Error: Unknown option: --presett\n");
    assert_eq!(p.requests().len(), 1);
}

#[test]
fn todo_keeps_its_list_in_tool_results_and_rebuilds_it_from_the_session() {
    let todo = pi_example!("todo.ts");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "todo", "arguments": {"action": "add", "text": "buy milk"}}]},
        {"tool_calls": [{"name": "todo", "arguments": {"action": "toggle", "id": 1}}]},
        {"text": "Noted."},
        {"tool_calls": [{"name": "todo", "arguments": {"action": "list"}}]},
        {"text": "Listed."}
    ]}));
    let out = run_print(&p, &todo, "remember milk, then tick it off");
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = conversation(&p.requests()[2]);
    assert!(seen.contains("Added todo #1: buy milk"), "{seen}");
    // A new process continues the session: session_start rebuilds the list from the
    // tool results' details in the session file.
    let out = p
        .pi()
        .arg("-e")
        .arg(&todo)
        .args(["-c", "-p", "what is left?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = conversation(&p.requests()[4]);
    assert!(seen.contains("[x] #1: buy milk"), "{seen}");
}

/// A `~/.pi/agent` that pi-rs uses — a TypeScript extension in `extensions/`, a program
/// extension in `rs-extensions/` — still starts the reference pi, and pi-rs loads both.
#[test]
fn a_home_shared_with_pi_keeps_programs_in_rs_extensions_where_pi_does_not_look() {
    let gate = pi_example!("permission-gate.ts");
    let p = Project::new(json!({"default": {"text": "fine"}}));
    let agent = p.agent_dir();
    std::fs::create_dir_all(agent.join("extensions")).unwrap();
    std::fs::copy(&gate, agent.join("extensions/permission-gate.ts")).unwrap();
    let program = agent.join("rs-extensions/marker.js");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    std::fs::write(
        &program,
        "#!/usr/bin/env node\nconst fs = require('fs');\nfs.writeFileSync('marker-ran', 'yes');\nprocess.stdout.write(JSON.stringify({type: 'register'}) + '\\n');\nprocess.stdin.resume();\n",
    )
    .unwrap();

    let out = p.pi().args(["-p", "hi"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
    assert_eq!(stderr(&out), "");
    assert!(
        p.cwd().join("marker-ran").exists(),
        "the program extension did not run"
    );

    let out = std::process::Command::new(reference_pi::script())
        .args([
            "--offline",
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "-p",
            "hi",
        ])
        .current_dir(p.cwd())
        .env("HOME", p.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "pi: {}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "fine");
}

/// The same program in pi's `extensions/` folder breaks pi; pi-rs still runs it and
/// says where it belongs.
#[test]
fn a_program_where_pi_would_load_it_runs_with_a_warning_to_move_it() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"default": {"text": "fine"}}));
    let program = p.agent_dir().join("extensions/marker/index.js");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    std::fs::write(
        &program,
        "#!/usr/bin/env node\nprocess.stdout.write(JSON.stringify({type: 'register'}) + '\\n');\nprocess.stdin.resume();\n",
    )
    .unwrap();
    let out = p.pi().args(["-p", "hi"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        p.anonymize(&stderr(&out)),
        "Warning: pi loads this program as a TypeScript/JavaScript module and fails to start; move it to <tmp>/home/.pi/agent/rs-extensions (pi-rs only) (<tmp>/home/.pi/agent/extensions/marker/index.js)\n"
    );
}

#[test]
fn confirm_destructive_asks_before_a_new_session_and_a_no_keeps_the_old_one() {
    let confirm = pi_example!("confirm-destructive.ts");
    let p = RpcProject::new(&json!({"sequence": [{"text": "Hi."}]}), None, None);
    let mut c = with_extension(&p, &confirm);
    c.prompt("hello");
    let before = c.ok(json!({"type": "get_state"}))["sessionFile"].clone();
    c.send(&json!({"type": "new_session", "id": "n1"}));
    let seen = c.read_until(|m| m["type"] == "extension_ui_request");
    let request = seen.last().unwrap().clone();
    assert_eq!(request["method"], "confirm", "{request}");
    assert_eq!(request["title"], "Clear session?");
    assert_eq!(
        request["message"],
        "This will delete all messages in the current session."
    );
    c.send(&json!({"type": "extension_ui_response", "id": request["id"], "confirmed": false}));
    let rest = c.read_until(|m| m["type"] == "response" && m["id"] == "n1");
    let response = rest.last().unwrap();
    // pi answers `success` with `data.cancelled`; pi-rs's RPC mode answers an error.
    let cancelled = response["data"]["cancelled"] == true
        || response["error"].as_str() == Some("Cancelled by an extension");
    assert!(cancelled, "{response}");
    // The notice travels apart from the command's answer: it may come before or after.
    let is_notice = |m: &Value| m["method"] == "notify" && m["message"] == "Clear cancelled";
    if !rest.iter().any(is_notice) {
        c.read_until(is_notice);
    }
    assert_eq!(c.ok(json!({"type": "get_state"}))["sessionFile"], before);
}

#[test]
fn status_line_sets_its_footer_status_on_each_turn() {
    let status = pi_example!("status-line.ts");
    let p = RpcProject::new(&json!({"sequence": [{"text": "Hi."}]}), None, None);
    let mut c = with_extension(&p, &status);
    c.send(&json!({"type": "prompt", "message": "hello", "id": "p1"}));
    // Notifications do not hold the agent up: the last status may come after agent_end.
    let seen = c.read_until(|m| {
        m["method"] == "setStatus"
            && m["statusText"]
                .as_str()
                .is_some_and(|t| t.contains("complete"))
    });
    let statuses: Vec<String> = seen
        .iter()
        .filter(|m| m["type"] == "extension_ui_request" && m["method"] == "setStatus")
        .map(|m| format!("{}={}", m["statusKey"], m["statusText"]))
        .collect();
    assert_eq!(
        statuses,
        [
            "\"status-demo\"=\"Ready\"",
            "\"status-demo\"=\"● Turn 1...\"",
            "\"status-demo\"=\"✓ Turn 1 complete\""
        ],
        "{seen:?}"
    );
}

/// `pi.setModel` and `pi.setThinkingLevel` from a command switch the session's model
/// and thinking level (the protocol's `set_model` / `set_thinking_level`).
#[test]
fn set_model_and_thinking_level_from_a_command_change_the_session() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let models = json!({"providers": {"mock": {
        "baseUrl": "", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [
            {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "deep-model", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000}
        ]
    }}});
    let p = RpcProject::new(&json!({"sequence": []}), Some(models), None);
    let ext = p.cwd().join("switch.ts");
    std::fs::write(
        &ext,
        r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
    pi.registerCommand("deep", {
        description: "Think hard with the deep model",
        handler: async (_args: string, ctx) => {
            const ok = await pi.setModel({ provider: "mock", id: "deep-model" } as any);
            pi.setThinkingLevel("high");
            ctx.ui.notify(`switched: ${ok}, level ${pi.getThinkingLevel()}`, "info");
        },
    });
}
"#,
    )
    .unwrap();
    let mut c = with_extension(&p, &ext);
    let seen = prompt_until(&mut c, "/deep", |m| m["method"] == "notify");
    assert_eq!(
        seen.last().unwrap()["message"],
        "switched: true, level high"
    );
    let mut state = Value::Null;
    for _ in 0..50 {
        state = c.ok(json!({"type": "get_state"}));
        if state["thinkingLevel"] == "high" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(state["model"]["id"], "deep-model", "{state}");
    assert_eq!(state["thinkingLevel"], "high", "{state}");
}
