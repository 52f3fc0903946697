//! The rest of pi's ExtensionAPI context for TypeScript extensions, through the built
//! binary: the getters answer pi-rs's real state (`ctx.model`, `getContextUsage`,
//! `getSystemPrompt`, `getAllTools`, `getCommands`, the session name another extension
//! set, …), the command context switches sessions (`waitForIdle`, `newSession` with
//! `withSession`, `switchSession`, `fork`, `navigateTree`), tools registered after
//! loading are offered to the model, `setActiveTools` changes the tools, the event bus
//! crosses extensions, and `ctx.compact` calls its callbacks. pi's own examples
//! (`dynamic-tools`, `plan-mode`, `custom-compaction`, `question`) run as in pi.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};

use crate::support::pi_project::{Project, conversation, system_prompt, tool_names};
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

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn with_extensions(p: &RpcProject, extensions: &[&Path]) -> RpcClient {
    let mut cmd = p.command();
    for e in extensions {
        cmd.arg("-e").arg(e);
    }
    RpcClient::spawn(cmd)
}

/// The JSON object a tool result starts with `marker` and continues with.
fn tagged_json(text: &str, marker: &str) -> Value {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {text}"))
        + marker.len();
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    stream.next().unwrap().unwrap()
}

/// Reads `get_state` until `done` holds (actions are applied in the background).
fn state_until(c: &mut RpcClient, done: impl Fn(&Value) -> bool) -> Value {
    let mut state = Value::Null;
    for _ in 0..100 {
        state = c.ok(json!({"type": "get_state"}));
        if done(&state) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    state
}

fn session_entries(file: &Value) -> Vec<Value> {
    json_lines(&PathBuf::from(file.as_str().unwrap()))
}

const PROBE: &str = r#"import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
    pi.registerCommand("probe-cmd", { description: "probe command", handler: async () => {} });
    pi.registerTool({
        name: "probe",
        label: "Probe",
        description: "Reports what the context says",
        parameters: { type: "object", properties: {} },
        async execute(_id, _params, _signal, _onUpdate, ctx) {
            const info = {
                model: `${ctx.model?.provider}/${ctx.model?.id}`,
                window: ctx.getContextUsage()?.contextWindow,
                tokens: typeof ctx.getContextUsage()?.tokens,
                prompt: ctx.getSystemPrompt().includes("PROBE-APPEND"),
                pending: ctx.hasPendingMessages(),
                idle: ctx.isIdle(),
                thinking: pi.getThinkingLevel(),
                name: pi.getSessionName(),
                file: ctx.sessionManager.getSessionFile() !== undefined,
                active: pi.getActiveTools(),
                all: pi.getAllTools().map((t) => `${t.name}:${t.sourceInfo.source}`),
                commands: pi.getCommands().map((c) => `${c.name}:${c.source}`),
                found: ctx.modelRegistry.find("mock", "mock-model")?.contextWindow,
                available: ctx.modelRegistry.getAvailable().some((m) => m.id === "mock-model"),
                key: await ctx.modelRegistry.getApiKey(ctx.model),
            };
            return { content: [{ type: "text", text: `PROBE ${JSON.stringify(info)}` }] };
        },
    });
}
"#;

const NAMER: &str = r#"export default function (pi) {
    pi.on("session_start", () => { pi.setSessionName("named elsewhere"); });
}
"#;

/// Every getter answers the session's state: the model, the context usage, the system
/// prompt with `--append-system-prompt`, the thinking level from the command line, the
/// name another extension gave the session, all tools (built-in and extension, with pi's
/// `sourceInfo.source`), the commands and the model registry.
#[test]
fn context_getters_answer_the_sessions_real_state() {
    need_node!();
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "probe", "arguments": {}}]},
        {"text": "Probed."}
    ]}));
    // A reasoning model, so `--thinking high` is kept rather than clamped to `off`.
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", p.server.url()), "api": "openai-completions",
        "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000}]
    }}});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    let probe = p.write("probe.ts", PROBE);
    let namer = p.write("namer.js", NAMER);
    p.write(
        ".pi/prompts/review.md",
        "---\ndescription: Review\n---\nReview $1\n",
    );
    let out = p
        .pi()
        .arg("-e")
        .arg(&probe)
        .arg("-e")
        .arg(&namer)
        .args([
            "--thinking",
            "high",
            "--append-system-prompt",
            "PROBE-APPEND",
        ])
        .args(["-p", "probe it"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = p.requests();
    let info = tagged_json(&conversation(&requests[1]), "PROBE ");
    assert_eq!(info["model"], "mock/mock-model", "{info}");
    assert_eq!(info["window"], 200000, "{info}");
    assert_eq!(info["tokens"], "number", "{info}");
    assert_eq!(info["prompt"], true, "{info}");
    assert_eq!(info["pending"], false, "{info}");
    assert_eq!(info["idle"], false, "{info}");
    assert_eq!(info["thinking"], "high", "{info}");
    assert_eq!(info["name"], "named elsewhere", "{info}");
    assert_eq!(info["file"], true, "{info}");
    assert_eq!(
        info["active"],
        json!(["read", "bash", "edit", "write", "probe"]),
        "{info}"
    );
    assert_eq!(
        info["all"],
        json!([
            "read:builtin",
            "bash:builtin",
            "edit:builtin",
            "write:builtin",
            "grep:builtin",
            "find:builtin",
            "ls:builtin",
            "probe:cli"
        ]),
        "{info}"
    );
    assert_eq!(
        info["commands"],
        json!(["probe-cmd:extension", "review:prompt"]),
        "{info}"
    );
    assert_eq!(info["found"], 200000, "{info}");
    assert_eq!(info["available"], true, "{info}");
    assert_eq!(info["key"], "mock", "{info}");
}

const SESSION_OPS: &str = r#"export default function (pi) {
    pi.registerCommand("run-then-new", { handler: async (_args, ctx) => {
        const before = ctx.sessionManager.getSessionFile();
        pi.sendUserMessage("first question");
        await ctx.waitForIdle();
        const messages = ctx.sessionManager.getEntries().filter((e) => e.type === "message").length;
        const result = await ctx.newSession({
            withSession: async (fresh) => {
                await fresh.sendMessage({ customType: "hello-new", content: "fresh start", display: true });
            },
        });
        ctx.ui.notify(JSON.stringify({
            messages, result, changed: before !== ctx.sessionManager.getSessionFile(),
        }), "info");
    } });
    pi.registerCommand("switch-to", { handler: async (args, ctx) => {
        const result = await ctx.switchSession(args.trim());
        ctx.ui.notify(JSON.stringify({ result, file: ctx.sessionManager.getSessionFile() }), "info");
    } });
    pi.registerCommand("fork-at", { handler: async (args, ctx) => {
        const result = await ctx.fork(args.trim(), { position: "at" });
        ctx.ui.notify(JSON.stringify({ result }), "info");
    } });
    pi.registerCommand("go-to", { handler: async (args, ctx) => {
        const result = await ctx.navigateTree(args.trim(), { label: "marked" });
        ctx.ui.notify(JSON.stringify({ result, leaf: ctx.sessionManager.getLeafId() }), "info");
    } });
}
"#;

fn notice(c: &mut RpcClient, command: &str) -> Value {
    c.send(&json!({"type": "prompt", "message": command, "id": "cmd"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    serde_json::from_str(seen.last().unwrap()["message"].as_str().unwrap()).unwrap()
}

/// The command context's session control runs in pi-rs's session: `waitForIdle` waits
/// for the run a command started, `newSession` switches files and hands `withSession` a
/// context on the new one, `switchSession` goes back, `fork` at an entry makes a new
/// file ending there, `navigateTree` moves the leaf and labels it; each answers pi's
/// `{cancelled}`.
#[test]
fn command_context_switches_forks_and_navigates_sessions() {
    need_node!();
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "First answer."}]}),
        None,
        None,
    );
    let ext = p.cwd().join("ops.js");
    std::fs::write(&ext, SESSION_OPS).unwrap();
    let mut c = with_extensions(&p, &[&ext]);
    let first_file = c.ok(json!({"type": "get_state"}))["sessionFile"].clone();

    let ran = notice(&mut c, "/run-then-new");
    // waitForIdle returned after the user message and its answer were stored.
    assert_eq!(ran["messages"], 2, "{ran}");
    assert_eq!(ran["result"], json!({"cancelled": false}), "{ran}");
    assert_eq!(ran["changed"], true, "{ran}");
    let state = state_until(&mut c, |s| s["sessionFile"] != first_file);
    let second_file = state["sessionFile"].clone();
    assert_ne!(second_file, first_file);
    // withSession's message went to the new session (not written to its file before
    // the first answer, as in pi).
    let messages = c.ok(json!({"type": "get_messages"}))["messages"].clone();
    let custom: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "user" && m["role"] != "assistant")
        .collect();
    assert_eq!(custom.len(), 1, "{messages}");
    assert_eq!(custom[0]["customType"], "hello-new", "{messages}");
    let old = session_entries(&first_file);
    assert!(!old.iter().any(|e| e["customType"] == "hello-new"));

    let switched = notice(
        &mut c,
        &format!("/switch-to {}", first_file.as_str().unwrap()),
    );
    assert_eq!(
        switched["result"],
        json!({"cancelled": false}),
        "{switched}"
    );
    assert_eq!(switched["file"], first_file, "{switched}");

    let messages: Vec<&Value> = old.iter().filter(|e| e["type"] == "message").collect();
    let user_id = messages[0]["id"].as_str().unwrap().to_string();
    let forked = notice(&mut c, &format!("/fork-at {user_id}"));
    assert_eq!(forked["result"], json!({"cancelled": false}), "{forked}");
    // The new file holds the path up to the user message (pi writes it to disk with
    // the first answer, so the session manager does not read it from there yet).
    let messages = c.ok(json!({"type": "get_messages"}))["messages"].clone();
    let roles: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["role"])
        .collect();
    assert_eq!(roles, [&json!("user")], "{messages}");
    let state = state_until(&mut c, |s| s["sessionFile"] != first_file);
    assert_ne!(state["sessionFile"], first_file);
    assert_ne!(state["sessionFile"], second_file);

    let switched = notice(
        &mut c,
        &format!("/switch-to {}", first_file.as_str().unwrap()),
    );
    assert_eq!(switched["file"], first_file, "{switched}");
    let moved = notice(&mut c, &format!("/go-to {user_id}"));
    assert_eq!(moved["result"], json!({"cancelled": false}), "{moved}");
    let entries = session_entries(&first_file);
    assert!(
        entries.iter().any(|e| e["type"] == "label"
            && e["targetId"] == user_id.as_str()
            && e["label"] == "marked"),
        "{entries:?}"
    );
}

/// `pi.events.emit` in one extension reaches `pi.events.on` in another (each runs in its
/// own node process).
#[test]
fn the_event_bus_crosses_extensions() {
    need_node!();
    let p = RpcProject::new(&json!({"sequence": []}), None, None);
    let listener = p.cwd().join("listener.js");
    std::fs::write(
        &listener,
        r#"export default function (pi) {
    pi.events.on("greeting", (data) => {
        pi.sendMessage({ customType: "heard", content: `heard ${data.who}`, display: true });
    });
}
"#,
    )
    .unwrap();
    let speaker = p.cwd().join("speaker.js");
    std::fs::write(
        &speaker,
        r#"export default function (pi) {
    let own = 0;
    pi.events.on("greeting", () => { own += 1; });
    pi.registerCommand("greet", { handler: async (_args, ctx) => {
        pi.events.emit("greeting", { who: "Ada" });
        ctx.ui.notify(`own handler ran ${own} time(s)`, "info");
    } });
}
"#,
    )
    .unwrap();
    let mut c = with_extensions(&p, &[&listener, &speaker]);
    c.send(&json!({"type": "prompt", "message": "/greet", "id": "g"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    assert_eq!(seen.last().unwrap()["message"], "own handler ran 1 time(s)");
    let mut texts = Vec::new();
    for _ in 0..100 {
        let messages = c.ok(json!({"type": "get_messages"}))["messages"].clone();
        texts = messages
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["customType"] == "heard")
            .map(|m| m["content"].clone())
            .collect();
        if !texts.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(texts, [json!("heard Ada")]);
}

/// `ctx.compact({onComplete, onError})`: a compaction whose summary request fails calls
/// `onError` with an `Error`; one that succeeds calls `onComplete` with pi's result.
#[test]
fn compact_calls_its_callbacks() {
    need_node!();
    let p = RpcProject::new(
        &json!({"sequence": [
            {"error": {"status": 400, "body": "{\"error\":{\"message\":\"bad request\"}}"}},
            {"text": "An answer."},
            {"text": "The summary."}
        ]}),
        None,
        None,
    );
    let ext = p.cwd().join("squeeze.js");
    std::fs::write(
        &ext,
        r#"export default function (pi) {
    pi.registerCommand("squeeze", { handler: async (_args, ctx) => {
        ctx.compact({
            customInstructions: "keep it short",
            onComplete: (r) => ctx.ui.notify(`complete: ${r.summary} / ${typeof r.tokensBefore}`, "info"),
            onError: (e) => ctx.ui.notify(`error: ${e instanceof Error}`, "info"),
        });
    } });
}
"#,
    )
    .unwrap();
    let mut c = with_extensions(&p, &[&ext]);
    c.send(&json!({"type": "prompt", "message": "/squeeze", "id": "s1"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    assert_eq!(seen.last().unwrap()["message"], "error: true");
    c.prompt("hello");
    c.send(&json!({"type": "prompt", "message": "/squeeze", "id": "s2"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    assert_eq!(
        seen.last().unwrap()["message"],
        "complete: The summary. / number"
    );
}

/// pi's `dynamic-tools` example: the tool it registers in `session_start` is offered
/// to the model (with its prompt snippet) and runs; one registered by its command is
/// offered from the next prompt on.
#[test]
fn dynamic_tools_registers_tools_after_loading() {
    let dynamic = pi_example!("dynamic-tools.ts");
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "echo_session", "arguments": {"message": "hi"}}]},
            {"text": "Echoed."},
            {"text": "Second."}
        ]}),
        None,
        None,
    );
    let mut c = with_extensions(&p, &[&dynamic]);
    c.prompt("echo hi");
    let requests = p.server.requests();
    assert!(
        tool_names(&requests[0].body).contains(&"echo_session".to_string()),
        "{:?}",
        tool_names(&requests[0].body)
    );
    assert!(
        system_prompt(&requests[0].body)
            .contains("Echo back user-provided text with [session] prefix"),
        "{}",
        system_prompt(&requests[0].body)
    );
    assert!(conversation(&requests[1].body).contains("[session] hi"));
    c.send(&json!({"type": "prompt", "message": "/add-echo-tool shout", "id": "a"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    assert_eq!(
        seen.last().unwrap()["message"],
        "Registered dynamic tool: shout"
    );
    c.prompt("again");
    let requests = p.server.requests();
    let names = tool_names(&requests[2].body);
    assert!(names.contains(&"shout".to_string()), "{names:?}");
    assert!(names.contains(&"echo_session".to_string()), "{names:?}");
}

/// pi's `plan-mode` example with `--plan`: `setActiveTools` in `session_start` leaves
/// the read-only tools (`questionnaire` is not registered, so it is left out as in pi),
/// and `/plan` turns the normal tools back on for the next prompt.
#[test]
fn plan_mode_switches_the_active_tools() {
    let plan = pi_example!("plan-mode");
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "Planned."}, {"text": "Done."}]}),
        None,
        None,
    );
    let mut cmd = p.command();
    cmd.arg("-e").arg(&plan).arg("--plan");
    let mut c = RpcClient::spawn(cmd);
    c.prompt("explore");
    // With a UI, plan mode asks what next after each answer.
    let seen = c.read_until(|m| m["method"] == "select");
    let select = seen.last().unwrap();
    assert_eq!(select["title"], "Plan mode - what next?", "{select}");
    c.send(&json!({"type": "extension_ui_response", "id": select["id"], "cancelled": true}));
    c.send(&json!({"type": "prompt", "message": "/plan", "id": "plan"}));
    let seen = c.read_until(|m| m["method"] == "notify");
    assert_eq!(
        seen.last().unwrap()["message"],
        "Plan mode disabled. Full access restored."
    );
    c.prompt("build it");
    let requests = p.server.requests();
    assert_eq!(
        tool_names(&requests[0].body),
        ["read", "bash", "grep", "find", "ls"]
    );
    assert_eq!(
        tool_names(&requests[1].body),
        ["read", "bash", "edit", "write"]
    );
}

/// pi's `custom-compaction` example finds its summary model in `ctx.modelRegistry`,
/// asks for its key, and without one leaves the compaction to pi-rs, saying so.
#[test]
fn custom_compaction_falls_back_without_a_key() {
    let custom = pi_example!("custom-compaction.ts");
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "An answer."}, {"text": "Default summary."}]}),
        None,
        None,
    );
    let mut cmd = p.command();
    cmd.env_remove("GEMINI_API_KEY")
        .env_remove("GOOGLE_API_KEY")
        .arg("-e")
        .arg(&custom);
    let mut c = RpcClient::spawn(cmd);
    c.prompt("hello");
    c.send(&json!({"type": "compact", "id": "c"}));
    let seen = c.read_until(|m| m["type"] == "response" && m["id"] == "c");
    let notices: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notify")
        .map(|m| &m["message"])
        .collect();
    assert_eq!(
        notices,
        [
            &json!("Custom compaction extension triggered"),
            &json!("No API key for google, using default compaction")
        ]
    );
    let response = seen.last().unwrap();
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(response["data"]["summary"], "Default summary.");
}

/// pi's `question` example: without a UI it says so; in RPC its `ctx.ui.custom` view
/// resolves nothing (pi's RPC mode has no custom components either), so the tool
/// reports a cancelled selection.
#[test]
fn question_reports_no_ui_in_print_and_a_cancelled_selection_in_rpc() {
    let question = pi_example!("question.ts");
    let call = json!({"tool_calls": [{"name": "question", "arguments": {
        "question": "Which color?",
        "options": [{"label": "Red"}, {"label": "Blue"}]
    }}]});
    let p = Project::new(json!({"sequence": [call, {"text": "OK."}]}));
    let out = p
        .pi()
        .arg("-e")
        .arg(&question)
        .args(["-p", "ask me"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = conversation(&p.requests()[1]);
    assert!(
        seen.contains("Error: UI not available (running in non-interactive mode)"),
        "{seen}"
    );

    let r = RpcProject::new(&json!({"sequence": [call, {"text": "OK."}]}), None, None);
    let mut c = with_extensions(&r, &[&question]);
    c.prompt("ask me");
    let seen = conversation(&r.server.requests()[1].body);
    assert!(seen.contains("User cancelled the selection"), "{seen}");
}

/// What happens when one of pi's examples answers one prompt in print mode.
fn run_example(example: &Path) -> Result<(), String> {
    let p = Project::new(json!({"sequence": [{"text": "Hello there."}]}));
    let mut child = p
        .pi()
        .arg("-e")
        .arg(example)
        .args(["-p", "hi"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            return Err("no answer within 90 s".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stdout.contains("Hello there.") {
        Ok(())
    } else {
        let err = stderr(&out);
        Err(err.lines().next().unwrap_or("no output").to_string())
    }
}

/// Every example of the reference pi's package loads and answers a prompt in print mode,
/// except those listed (each with the reason it cannot, checked against the error).
#[test]
fn every_example_loads_and_answers_a_prompt_except_the_known_ones() {
    let dir = pi_example!("");
    let mut examples: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "ts"))
        .collect();
    examples.sort();
    assert_eq!(examples.len(), 72, "{examples:?}");
    // name -> pieces of the error pi-rs stops with (one of them, `|`-separated).
    let known: &[(&str, &str)] = &[
        // Needs `npm install` in its folder first, in pi as well.
        (
            "sandbox",
            "Cannot find package '@anthropic-ai/sandbox-runtime'",
        ),
    ];
    let results: Vec<(String, Result<(), String>)> = std::thread::scope(|scope| {
        let chunks: Vec<&[PathBuf]> = examples.chunks(examples.len().div_ceil(4)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|e| {
                            let name = e.file_name().unwrap().to_string_lossy().into_owned();
                            (name, run_example(e))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut unexpected = Vec::new();
    for (name, result) in &results {
        match (known.iter().find(|(k, _)| k == name), result) {
            (None, Ok(())) => {}
            (Some((_, causes)), Err(e)) if causes.split('|').any(|c| e.contains(c)) => {}
            (expected, got) => {
                unexpected.push(format!("{name}: expected {expected:?}, got {got:?}"))
            }
        }
    }
    let working = results.iter().filter(|(_, r)| r.is_ok()).count();
    eprintln!("{working} of {} examples answer a prompt", results.len());
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
