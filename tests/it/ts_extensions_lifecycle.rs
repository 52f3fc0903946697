//! pi's ExtensionAPI around a message's and a runtime's life, through the built binary
//! with the loopback model: `message_end` handlers replace the finished message (what
//! RPC clients see, the session stores and the model gets next), chained across
//! extensions, a wrong role reported and ignored; `ctx.reload()` (pi's
//! `reload-runtime` example and a command running code after it) reloads the
//! extensions in RPC and print mode; `newSession({ setup })` stores what the setup
//! callback appends in the new session, with the ids it was given.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::pi_project::{Project, conversation};
use crate::support::rpc_client::{RpcClient, RpcProject, json_lines};
use crate::ts_extensions::examples_dir;
use serde_json::{Value, json};

macro_rules! need_node {
    () => {
        if !crate::support::extensions::have("node") {
            eprintln!("skipped: node is not installed");
            return;
        }
    };
}

fn with_extensions(p: &RpcProject, extensions: &[&Path]) -> RpcClient {
    let mut cmd = p.command();
    for e in extensions {
        cmd.arg("-e").arg(e);
    }
    RpcClient::spawn(cmd)
}

fn text_blocks(message: &Value) -> String {
    message["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("")
        })
        .unwrap_or_default()
}

/// Prefixes assistant text with `[A] `; answers a user message with another role.
const REPLACE_A: &str = r#"export default function (pi) {
    pi.on("message_end", async (event) => {
        const m = event.message;
        if (m.role === "assistant") {
            return { message: { ...m, content: m.content.map((b) => b.type === "text" ? { ...b, text: `[A] ${b.text}` } : b) } };
        }
        if (m.role === "user") return { message: { ...m, role: "assistant" } };
    });
}
"#;

/// Appends ` [B]` to the assistant text it gets (after `[A]`'s change) and marks tool
/// results by changing the result object in place.
const REPLACE_B: &str = r#"export default function (pi) {
    pi.on("message_end", async (event) => {
        const m = event.message;
        if (m.role === "assistant") {
            return { message: { ...m, content: m.content.map((b) => b.type === "text" ? { ...b, text: `${b.text} [B]` } : b) } };
        }
        if (m.role === "toolResult") m.content = [{ type: "text", text: "replaced result" }];
    });
}
"#;

/// Two extensions replace `message_end`'s message in load order: the RPC event, the
/// session file and the next model request carry the replacement; the user message an
/// extension tried to turn into an assistant message stays as it was, with pi's error;
/// a tool result changed in place reaches the model changed.
#[test]
fn message_end_replacements_chain_and_reach_the_session_and_the_model() {
    need_node!();
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "ls", "arguments": {}}]},
            {"text": "hello"},
            {"text": "second"}
        ]}),
        None,
        None,
    );
    let a = p.cwd().join("a.js");
    let b = p.cwd().join("b.js");
    std::fs::write(&a, REPLACE_A).unwrap();
    std::fs::write(&b, REPLACE_B).unwrap();
    let mut c = with_extensions(&p, &[&a, &b]);
    let run = c.prompt("first");
    let ends: Vec<&Value> = run.iter().filter(|m| m["type"] == "message_end").collect();
    let roles: Vec<&str> = ends
        .iter()
        .map(|m| m["message"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "assistant"],
        "{ends:?}"
    );
    assert_eq!(text_blocks(&ends[0]["message"]), "first");
    assert_eq!(text_blocks(&ends[2]["message"]), "replaced result");
    assert_eq!(text_blocks(&ends[3]["message"]), "[A] hello [B]");
    let errors: Vec<&Value> = run
        .iter()
        .filter(|m| m["type"] == "extension_error")
        .collect();
    assert!(
        errors.iter().any(|e| e["event"] == "message_end"
            && e["error"] == "message_end handlers must return a message with the same role"
            && e["extensionPath"].as_str().unwrap().ends_with("a.js")),
        "{run:?}"
    );
    // agent_end lists the replaced messages too.
    let end = run.iter().rfind(|e| e["type"] == "agent_end").unwrap();
    assert_eq!(
        text_blocks(end["messages"].as_array().unwrap().last().unwrap()),
        "[A] hello [B]"
    );

    c.prompt("again");
    let requests = p.server.requests();
    let last = conversation(&requests.last().unwrap().body);
    assert!(last.contains("[A] hello [B]"), "{last}");
    assert!(last.contains("replaced result"), "{last}");
    let file = c.ok(json!({"type": "get_state"}))["sessionFile"].clone();
    let stored: Vec<Value> = json_lines(&PathBuf::from(file.as_str().unwrap()))
        .into_iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"].clone())
        .collect();
    assert_eq!(stored[0]["role"], "user");
    assert_eq!(text_blocks(&stored[0]), "first");
    assert_eq!(text_blocks(&stored[3]), "[A] hello [B]");
    assert_eq!(text_blocks(&stored[5]), "[A] second [B]");
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}

/// Without a `message_end` subscriber nothing waits: the event is not even sent (an
/// extension listening to `message_start` only sees that one).
#[test]
fn message_end_is_not_sent_to_extensions_that_do_not_listen() {
    need_node!();
    let p = RpcProject::new(&json!({"sequence": [{"text": "plain"}]}), None, None);
    let log = p.cwd().join("events.log");
    let ext = p.cwd().join("starts.js");
    std::fs::write(
        &ext,
        format!(
            r#"import {{ appendFileSync }} from "node:fs";
export default function (pi) {{
    pi.on("message_start", async (event) => appendFileSync({log:?}, `start ${{event.message.role}}\n`));
}}
"#,
            log = log.display().to_string()
        ),
    )
    .unwrap();
    let mut c = with_extensions(&p, &[&ext]);
    let run = c.prompt("hi");
    let end = run
        .iter()
        .rev()
        .find(|m| m["type"] == "message_end")
        .unwrap();
    assert_eq!(text_blocks(&end["message"]), "plain");
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text, "start user\nstart assistant\n");
}

/// Logs its lifecycle (with its process id) to `log`; `/reload-after` reloads and then
/// writes `after <pid>` from the old runtime, as pi's docs describe.
fn lifecycle_probe(log: &Path) -> String {
    format!(
        r#"import {{ appendFileSync }} from "node:fs";
const log = (line) => appendFileSync({log:?}, `${{line}}\n`);
export default function (pi) {{
    log(`load ${{process.pid}}`);
    pi.on("session_start", async (event) => log(`start ${{event.reason}} ${{process.pid}}`));
    pi.on("session_shutdown", async (event) => log(`shutdown ${{event.reason}} ${{process.pid}}`));
    pi.registerCommand("reload-after", {{ handler: async (_args, ctx) => {{
        await ctx.reload();
        log(`after ${{process.pid}}`);
    }} }});
}}
"#,
        log = log.display().to_string()
    )
}

fn wait_for_lines(log: &Path, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let lines: Vec<String> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        if done(&lines) || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pid_of(line: &str) -> &str {
    line.rsplit(' ').next().unwrap()
}

/// pi's `reload-runtime` example in RPC mode: `/reload-runtime` reloads every extension
/// (new processes get `session_start` with reason `reload`, the old ones
/// `session_shutdown`); a command's code after `await ctx.reload()` runs in the old
/// process once the new ones have started; the session goes on with the new ones.
#[test]
fn reload_runtime_reloads_the_extensions_in_rpc_mode() {
    need_node!();
    let example = match examples_dir() {
        Ok(dir) => dir.join("reload-runtime.ts"),
        Err(why) => {
            eprintln!("skipped: pi's example extensions are not available: {why}");
            return;
        }
    };
    let p = RpcProject::new(&json!({"sequence": [{"text": "still here"}]}), None, None);
    let log = p.cwd().join("life.log");
    let probe = p.cwd().join("probe.js");
    std::fs::write(&probe, lifecycle_probe(&log)).unwrap();
    let mut c = with_extensions(&p, &[&example, &probe]);
    let first = wait_for_lines(&log, |l| l.iter().any(|x| x.starts_with("start startup")));
    let first_pid = pid_of(&first[0]).to_string();

    c.send(&json!({"type": "prompt", "message": "/reload-runtime", "id": "r1"}));
    let lines = wait_for_lines(&log, |l| l.iter().any(|x| x.starts_with("start reload")));
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0)
        .collect();
    assert_eq!(
        kinds,
        [
            "load",
            "start startup",
            "shutdown reload",
            "load",
            "start reload"
        ],
        "{lines:?}"
    );
    let second_pid = pid_of(&lines[3]).to_string();
    assert_ne!(first_pid, second_pid);
    assert_eq!(pid_of(&lines[2]), first_pid);

    c.send(&json!({"type": "prompt", "message": "/reload-after", "id": "r2"}));
    let lines = wait_for_lines(&log, |l| l.iter().any(|x| x.starts_with("after")));
    let tail: Vec<String> = lines[5..].to_vec();
    let kinds: Vec<&str> = tail.iter().map(|l| l.rsplit_once(' ').unwrap().0).collect();
    assert_eq!(
        kinds,
        ["shutdown reload", "load", "start reload", "after"],
        "{lines:?}"
    );
    // The code after the reload ran in the process that asked, not in the new one.
    assert_eq!(pid_of(&tail[3]), second_pid, "{lines:?}");
    assert_ne!(pid_of(&tail[1]), second_pid, "{lines:?}");

    let run = c.prompt("are you there");
    assert!(
        !run.iter().any(|m| m["type"] == "extension_error"),
        "{run:?}"
    );
    let commands = c.ok(json!({"type": "get_commands"}));
    let names: Vec<&str> = commands["commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"reload-runtime"), "{commands}");
    assert!(names.contains(&"reload-after"), "{commands}");
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    let lines = wait_for_lines(&log, |l| l.iter().any(|x| x.starts_with("shutdown quit")));
    assert!(
        lines.last().unwrap().starts_with("shutdown quit"),
        "{lines:?}"
    );
}

/// Print mode reloads too (pi's print mode runs the same reload): the command's
/// extension is started again and the code after the reload runs before pi-rs exits.
#[test]
fn reload_from_a_command_works_in_print_mode() {
    need_node!();
    let p = Project::new(json!({"sequence": []}));
    let log = p.cwd().join("life.log");
    let probe = p.write("probe.js", &lifecycle_probe(&log));
    let out = p
        .pi()
        .args(["-p", "/reload-after", "-e"])
        .arg(&probe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = wait_for_lines(&log, |l| l.iter().any(|x| x.starts_with("shutdown quit")));
    let kinds: Vec<&str> = lines
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0)
        .collect();
    assert_eq!(
        kinds,
        [
            "load",
            "start startup",
            "shutdown reload",
            "load",
            "start reload",
            "after",
            "shutdown quit"
        ],
        "{lines:?}"
    );
    assert_eq!(pid_of(&lines[5]), pid_of(&lines[0]));
    assert_eq!(pid_of(&lines[6]), pid_of(&lines[3]));
}

const SETUP: &str = r#"export default function (pi) {
    pi.registerCommand("seeded", { handler: async (_args, ctx) => {
        const parentSession = ctx.sessionManager.getSessionFile();
        let ids = {};
        const result = await ctx.newSession({
            parentSession,
            setup: async (sm) => {
                ids.message = sm.appendMessage({
                    role: "user",
                    content: [{ type: "text", text: "Context from previous session" }],
                    timestamp: Date.now(),
                });
                ids.custom = sm.appendCustomEntry("seed-state", { step: 1 });
                ids.label = sm.appendLabelChange(ids.message, "seed");
                ids.info = sm.appendSessionInfo("seeded session");
                ids.note = sm.appendCustomMessageEntry("seed-note", "remember this", true, { n: 1 });
                ids.leafSeen = sm.getLeafId();
                ids.branch = sm.getBranch().length;
            },
            withSession: async (fresh) => {
                await fresh.sendUserMessage("go on");
            },
        });
        ctx.ui.notify(JSON.stringify({ result, ids }), "info");
    } });
}
"#;

/// `newSession({ setup })`: what the callback appends lands in the new session file in
/// order, with the ids the SessionManager handed out (a label on one of them, the
/// session name), the new session's context starts with it, and `withSession`'s prompt
/// is sent after it.
#[test]
fn new_session_setup_fills_the_new_session() {
    need_node!();
    let p = RpcProject::new(&json!({"sequence": [{"text": "continued"}]}), None, None);
    let ext = p.cwd().join("setup.js");
    std::fs::write(&ext, SETUP).unwrap();
    let mut c = with_extensions(&p, &[&ext]);
    let old = c.ok(json!({"type": "get_state"}))["sessionFile"].clone();
    c.send(&json!({"type": "prompt", "message": "/seeded", "id": "cmd"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    let report: Value =
        serde_json::from_str(seen.last().unwrap()["message"].as_str().unwrap()).unwrap();
    assert_eq!(report["result"], json!({"cancelled": false}), "{report}");
    let ids = &report["ids"];
    assert_eq!(ids["leafSeen"], ids["note"], "{report}");
    assert_eq!(ids["branch"], 5, "{report}");
    // The prompt withSession sent is answered.
    c.read_until(|m| m["type"] == "agent_end");
    let state = c.ok(json!({"type": "get_state"}));
    assert_ne!(state["sessionFile"], old);
    assert_eq!(state["sessionName"], "seeded session");
    let all = json_lines(&PathBuf::from(state["sessionFile"].as_str().unwrap()));
    assert_eq!(all[0]["type"], "session");
    assert_eq!(all[0]["parentSession"], old, "{all:?}");
    // A new session starts with the model and thinking level, as in pi.
    let entries: Vec<Value> = std::iter::once(all[0].clone())
        .chain(
            all[1..]
                .iter()
                .filter(|e| e["type"] != "model_change" && e["type"] != "thinking_level_change")
                .cloned(),
        )
        .collect();
    let kinds: Vec<&str> = entries[1..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "custom",
            "label",
            "session_info",
            "custom_message",
            "message",
            "message"
        ],
        "{entries:?}"
    );
    assert_eq!(entries[1]["id"], ids["message"]);
    assert_eq!(entries[2]["id"], ids["custom"]);
    assert_eq!(entries[2]["data"], json!({"step": 1}));
    assert_eq!(entries[3]["id"], ids["label"]);
    assert_eq!(entries[3]["targetId"], ids["message"]);
    assert_eq!(entries[3]["label"], "seed");
    assert_eq!(entries[4]["name"], "seeded session");
    assert_eq!(entries[5]["id"], ids["note"]);
    assert_eq!(entries[6]["parentId"], ids["note"]);
    let body = p.server.requests().last().unwrap().body.clone();
    let sent = conversation(&body);
    let context = sent.find("Context from previous session").unwrap();
    let note = sent.find("remember this").unwrap();
    let go = sent.find("go on").unwrap();
    assert!(context < note && note < go, "{sent}");
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}

/// A setup entry pi-rs cannot store (a compaction without a summary) makes `newSession`
/// reject with the reason naming the entry.
#[test]
fn a_bad_setup_entry_rejects_new_session_with_the_reason() {
    need_node!();
    let p = RpcProject::new(&json!({"sequence": []}), None, None);
    let ext = p.cwd().join("bad.js");
    std::fs::write(
        &ext,
        r#"export default function (pi) {
    pi.registerCommand("bad-setup", { handler: async (_args, ctx) => {
        try {
            await ctx.newSession({ setup: async (sm) => {
                sm.appendCustomEntry("kept", {});
                sm.appendCompaction(undefined, "nowhere", 0);
            } });
            ctx.ui.notify("no error", "info");
        } catch (err) {
            ctx.ui.notify(`error: ${err.message}`, "info");
        }
    } });
}
"#,
    )
    .unwrap();
    let mut c = with_extensions(&p, &[&ext]);
    c.send(&json!({"type": "prompt", "message": "/bad-setup", "id": "cmd"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    let message = seen.last().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message == "error: setup entry 2: missing \"summary\"",
        "{message}"
    );
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
}
