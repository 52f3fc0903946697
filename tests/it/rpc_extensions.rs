//! Extensions, templates, skills and export in RPC mode: the built `pi` binary driven as a
//! client would drive it, with the example extensions and small ones written here,
//! against the loopback model server. Dialogs travel as `extension_ui_request` /
//! `extension_ui_response`, `get_commands` lists what a prompt can invoke, `export_html`
//! writes the page, the extensions see `session_start` and `session_shutdown` around the
//! mode, and a failing extension is reported as `extension_error`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::time::Duration;

use crate::support::extensions::{self as ext_support, example, script};
use crate::support::reference_pi;
use crate::support::rpc_client::{RpcClient, RpcProject, brief};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn with_extension(p: &RpcProject, extension: &Path) -> RpcClient {
    let mut cmd = p.command();
    cmd.arg("-e").arg(extension);
    RpcClient::spawn(cmd)
}

fn anonymize(p: &RpcProject, text: &str) -> String {
    text.replace(&p.dir.path().display().to_string(), "<tmp>")
        .replace(env!("CARGO_MANIFEST_DIR"), "<repo>")
}

/// Reads up to the next `extension_ui_request`: everything read, and the request.
fn until_ui_request(c: &mut RpcClient) -> (Vec<Value>, Value) {
    let read = c.read_until(|m| m["type"] == "extension_ui_request");
    let request = read.last().unwrap().clone();
    (read, request)
}

fn answer(c: &mut RpcClient, request: &Value, fields: Value) {
    let mut response = json!({"type": "extension_ui_response", "id": request["id"]});
    for (key, value) in fields.as_object().unwrap() {
        response[key] = value.clone();
    }
    c.send(&response);
}

#[test]
fn permission_gate_asks_the_client_and_runs_or_blocks_the_command_as_answered() {
    require!("python3");
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf first"}}]},
            {"text": "first is gone."},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf second"}}]},
            {"text": "second stays."}
        ]}),
        None,
        None,
    );
    for dir in ["first", "second"] {
        std::fs::create_dir_all(p.cwd().join(dir)).unwrap();
    }
    let mut c = with_extension(&p, &example("permission-gate"));

    c.send(&json!({"type": "prompt", "message": "remove first", "id": "p1"}));
    let (_, request) = until_ui_request(&mut c);
    insta::assert_snapshot!(request.to_string(), @r#"{"type":"extension_ui_request","id":"ui-1","method":"select","title":"Dangerous command:\n\n  rm -rf first\n\nRun it?","options":["Block","Allow"]}"#);
    answer(&mut c, &request, json!({"value": "Allow"}));
    let first = c.read_until(|m| m["type"] == "agent_settled");
    assert!(!p.cwd().join("first").exists(), "the allowed command ran");
    let result = first
        .iter()
        .find(|m| m["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(result["isError"], false, "{result}");

    c.send(&json!({"type": "prompt", "message": "remove second", "id": "p2"}));
    let (mut second, request) = until_ui_request(&mut c);
    assert_eq!(request["method"], "select");
    answer(&mut c, &request, json!({"value": "Block"}));
    second.extend(c.read_until(|m| m["type"] == "agent_end"));
    assert!(p.cwd().join("second").exists(), "the blocked command ran");
    let result = second
        .iter()
        .find(|m| m["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["result"]["content"][0]["text"],
        "Blocked by the user"
    );
    // The dialog sits between the tool call and its execution; nothing else is waited on.
    insta::assert_snapshot!(brief(&second), @r#"
    response prompt
    agent_start
    turn_start
    message_start user "remove second"
    message_end user "remove second"
    message_start assistant "stop"
    message_end assistant "toolUse"
    tool_execution_start bash
    extension_ui_request
    tool_execution_end bash
    message_start toolResult
    message_end toolResult
    turn_end
    turn_start
    message_start assistant "stop"
    message_end assistant "stop"
    turn_end
    agent_end
    "#);
    let (status, _) = c.close();
    assert!(status.success());
}

#[test]
fn a_cancelled_dialog_blocks_like_a_refusal() {
    require!("python3");
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "sudo true"}}]},
            {"text": "not run."}
        ]}),
        None,
        None,
    );
    let mut c = with_extension(&p, &example("permission-gate"));
    c.send(&json!({"type": "prompt", "message": "go"}));
    let (_, request) = until_ui_request(&mut c);
    answer(&mut c, &request, json!({"cancelled": true}));
    let events = c.read_until(|m| m["type"] == "agent_end");
    let result = events
        .iter()
        .find(|m| m["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"],
        "Blocked by the user"
    );
}

#[test]
fn get_commands_lists_extension_commands_templates_and_skills_with_their_sources() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    std::fs::create_dir_all(p.cwd().join(".pi/prompts")).unwrap();
    std::fs::write(
        p.cwd().join(".pi/prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1.\n",
    )
    .unwrap();
    let skill = p.agent_dir().join("skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes\n---\nRead CHANGELOG.md.\n",
    )
    .unwrap();
    let mut c = with_extension(&p, &example("greet"));
    let data = c.ok(json!({"type": "get_commands"}));
    let lines: Vec<String> = data["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| anonymize(&p, &command.to_string()))
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r#"
    {"name":"greet","description":"Add a greeting to the session","source":"extension","sourceInfo":{"path":"<repo>/examples/extensions/greet/extension.sh","source":"cli","scope":"temporary","origin":"top-level"}}
    {"name":"review","description":"Review a file","source":"prompt","sourceInfo":{"path":"<tmp>/proj/.pi/prompts/review.md","source":"auto","scope":"project","origin":"top-level","baseDir":"<tmp>/proj/.pi"}}
    {"name":"skill:release-notes","description":"Write release notes","source":"skill","sourceInfo":{"path":"<tmp>/home/.pi/agent/skills/release-notes/SKILL.md","source":"auto","scope":"user","origin":"top-level","baseDir":"<tmp>/home/.pi/agent"}}
    "#);
    // What it lists works in a prompt: the extension command runs without the model.
    c.send(&json!({"type": "prompt", "message": "/greet RPC", "id": "g"}));
    let response = c
        .read_until(|m| m["type"] == "response" && m["id"] == "g")
        .pop()
        .unwrap();
    // pi 1.6: no run starts for it, so a client must not wait for `agent_settled`.
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    // An extension command cannot be queued.
    let queued = c.request(json!({"type": "steer", "message": "/greet later"}));
    assert_eq!(
        queued["error"],
        "Extension command \"/greet\" cannot be queued. Use prompt() or execute the command when not streaming."
    );
    let messages = c.ok(json!({"type": "get_messages"}));
    assert_eq!(messages["messages"][0]["content"], "Hello, RPC!");
    assert!(p.server.requests().is_empty());
}

#[test]
fn export_html_writes_the_conversation_to_the_default_or_given_path() {
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "Bonjour from the scripted model"}]}),
        None,
        None,
    );
    let mut c = p.start();
    let early = c.request(json!({"type": "export_html"}));
    assert_eq!(
        early["error"],
        "Nothing to export yet - start a conversation first"
    );
    c.prompt("Please greet the exporter");

    let data = c.ok(json!({"type": "export_html"}));
    let session_file = p.session_files().pop().unwrap();
    let stem = session_file.file_stem().unwrap().to_string_lossy();
    let default_name = format!("pi-session-{stem}.html");
    assert_eq!(data, json!({"path": default_name}));
    let page = std::fs::read_to_string(p.cwd().join(&default_name)).unwrap();
    assert!(page.contains("Please greet the exporter"), "user text");
    assert!(page.contains("Bonjour from the scripted model"), "answer");

    let chosen = p.dir.path().join("exports/page.html");
    std::fs::create_dir_all(chosen.parent().unwrap()).unwrap();
    let data = c.ok(json!({"type": "export_html", "outputPath": chosen}));
    assert_eq!(data, json!({"path": chosen}));
    assert_eq!(std::fs::read_to_string(&chosen).unwrap(), page);

    let missing = p.dir.path().join("no/such/dir/page.html");
    let failed = c.request(json!({"type": "export_html", "outputPath": missing}));
    assert_eq!(failed["success"], false);
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .starts_with("failed to write the HTML export to "),
        "{failed}"
    );
}

#[test]
fn export_html_without_a_session_file_says_so() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    let mut cmd = p.command();
    cmd.arg("--no-session");
    let mut c = RpcClient::spawn(cmd);
    c.prompt("hi");
    let response = c.request(json!({"type": "export_html"}));
    assert_eq!(response["error"], "Cannot export in-memory session to HTML");
}

/// An extension that asks for a name at `session_start`, announces itself, and logs the
/// answer, `session_shutdown` and the end of its stdin to `$LIFECYCLE_LOG`.
const LIFECYCLE: &str = r#"#!/bin/sh
IFS= read -r hello || exit 0
printf '%s\n' '{"type":"register","name":"lifecycle","events":["session_start","session_shutdown"]}'
while IFS= read -r line; do
    case "$line" in
    '{"type":"event","id":'*)
        id=${line#*\"id\":}
        id=${id%%,*}
        case "$line" in
        *'"type":"session_start"'*)
            printf '%s\n' '{"type":"ui","method":"notify","message":"lifecycle loaded","notifyType":"info"}'
            printf '%s\n' '{"type":"ui","id":"q1","method":"input","title":"Your name?","placeholder":"name"}'
            while IFS= read -r reply; do
                case "$reply" in '{"type":"response","id":"q1"'*) break ;; esac
            done
            printf 'session_start answered: %s\n' "$reply" >> "$LIFECYCLE_LOG"
            ;;
        *'"type":"session_shutdown"'*)
            printf 'session_shutdown: %s\n' "$line" >> "$LIFECYCLE_LOG"
            ;;
        esac
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    esac
done
printf 'stdin closed\n' >> "$LIFECYCLE_LOG"
"#;

#[test]
fn a_session_start_dialog_is_answered_before_commands_run_and_shutdown_reaches_the_extension() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    let extension = script(p.dir.path(), "lifecycle.sh", LIFECYCLE);
    let log = p.dir.path().join("lifecycle.log");
    let mut cmd = p.command();
    cmd.arg("-e").arg(&extension).env("LIFECYCLE_LOG", &log);
    let mut c = RpcClient::spawn(cmd);

    let notice = c.next();
    assert_eq!(
        notice,
        json!({"type": "extension_ui_request", "id": "ui-1", "method": "notify",
               "message": "lifecycle loaded", "notifyType": "info"})
    );
    let request = c.next();
    assert_eq!(
        request,
        json!({"type": "extension_ui_request", "id": "ui-2", "method": "input",
               "title": "Your name?", "placeholder": "name"})
    );
    // Commands wait until the extensions have handled session_start.
    c.send(&json!({"type": "get_state", "id": "s"}));
    c.assert_silent(Duration::from_millis(300));
    answer(&mut c, &request, json!({"value": "Ada"}));
    let state = c.next();
    assert_eq!(state["id"], "s");
    assert_eq!(state["success"], true);

    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    let log = std::fs::read_to_string(&log).unwrap();
    insta::assert_snapshot!(log, @r#"
    session_start answered: {"type":"response","id":"q1","result":{"value":"Ada"}}
    session_shutdown: {"type":"event","id":2,"event":{"type":"session_shutdown","reason":"quit"}}
    stdin closed
    "#);
}

#[cfg(unix)]
#[test]
fn sigterm_also_sends_session_shutdown_before_exiting_143() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    let extension = script(p.dir.path(), "lifecycle.sh", LIFECYCLE);
    let log = p.dir.path().join("lifecycle.log");
    let mut cmd = p.command();
    cmd.arg("-e").arg(&extension).env("LIFECYCLE_LOG", &log);
    let mut c = RpcClient::spawn(cmd);
    let request = c.read_until(|m| m["method"] == "input").pop().unwrap();
    answer(&mut c, &request, json!({"value": "Bo"}));
    c.ok(json!({"type": "get_state"}));
    // SAFETY: sending SIGTERM to our own child process.
    unsafe {
        libc::kill(c.pid() as i32, libc::SIGTERM);
    }
    let (status, stderr) = c.wait_exit();
    assert_eq!(status.code(), Some(143), "{stderr}");
    let log = std::fs::read_to_string(&log).unwrap();
    insta::assert_snapshot!(log, @r#"
    session_start answered: {"type":"response","id":"q1","result":{"value":"Bo"}}
    session_shutdown: {"type":"event","id":2,"event":{"type":"session_shutdown","reason":"quit"}}
    stdin closed
    "#);
}

#[test]
fn input_ending_while_a_dialog_is_open_runs_nothing_and_exits_cleanly() {
    require!("python3");
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf keep"}}]},
            {"text": "done"}
        ]}),
        None,
        None,
    );
    std::fs::create_dir_all(p.cwd().join("keep")).unwrap();
    let mut c = with_extension(&p, &example("permission-gate"));
    c.send(&json!({"type": "prompt", "message": "clean"}));
    until_ui_request(&mut c);
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    assert!(
        p.cwd().join("keep").exists(),
        "an unanswered dialog let it run"
    );
}

#[test]
fn abort_cancels_the_dialog_a_run_waits_for_and_the_command_is_blocked() {
    require!("python3");
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf keep"}}]},
            {"text": "never asked for"}
        ]}),
        None,
        None,
    );
    std::fs::create_dir_all(p.cwd().join("keep")).unwrap();
    let mut c = with_extension(&p, &example("permission-gate"));
    c.send(&json!({"type": "prompt", "message": "clean"}));
    until_ui_request(&mut c);
    let seen_before = c.seen.len();
    // pi's abort would wait for the client's answer; here it answers once the run is over.
    let response = c.request(json!({"type": "abort"}));
    assert_eq!(response["success"], true);
    let after: Vec<Value> = c.seen[seen_before..].to_vec();
    insta::assert_snapshot!(brief(&after), @r#"
    tool_execution_end bash
    message_start toolResult
    message_end toolResult
    turn_end
    turn_start
    message_start assistant "stop"
    message_end assistant "aborted"
    turn_end
    agent_end
    agent_settled
    response abort
    "#);
    let blocked = after
        .iter()
        .find(|m| m["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(
        blocked["result"]["content"][0]["text"],
        "Blocked by the user"
    );
    assert_eq!(
        p.server.requests().len(),
        1,
        "no model call after the abort"
    );
    assert!(p.cwd().join("keep").exists(), "the command ran");
}

#[test]
fn an_extension_that_dies_is_reported_as_an_extension_error_event() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    let quitter = script(
        p.dir.path(),
        "quitter.sh",
        "#!/bin/sh\nIFS= read -r hello || exit 0\nprintf '%s\\n' '{\"type\":\"register\",\"name\":\"quitter\"}'\nsleep 0.2\nexit 3\n",
    );
    let mut c = with_extension(&p, &quitter);
    let error = c
        .read_until(|m| m["type"] == "extension_error")
        .pop()
        .unwrap();
    insta::assert_snapshot!(anonymize(&p, &error.to_string()), @r#"{"type":"extension_error","extensionPath":"<tmp>/quitter.sh","event":"process","error":"the extension exited (exit code 3)"}"#);
    // The session carries on.
    assert_eq!(
        c.ok(json!({"type": "get_commands"})),
        json!({"commands": []})
    );
}

/// `get_commands` of the reference pi and of pi-rs for the same templates and skills
/// (found automatically, listed in settings, given on the command line).
#[test]
fn get_commands_lists_templates_and_skills_exactly_as_the_reference_pi() {
    // Pinned to pi 0.73.1: pi 1.6 also lists the commands of its built-in extensions
    // (`/mcp`, `/llama`), which come with later issues.
    if let Err(why) = reference_pi::available_073() {
        eprintln!("skipping: {why}");
        return;
    }
    let p = RpcProject::new(
        &json!({"default": {"text": "ok"}}),
        None,
        Some(json!({"prompts": ["../../../listed/listed.md"]})),
    );
    let write = |path: &Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let root = p.dir.path();
    write(
        &p.cwd().join(".pi/prompts/review.md"),
        "---\ndescription: Review a file\n---\nReview $1.\n",
    );
    write(
        &p.agent_dir().join("prompts/fix.md"),
        "---\ndescription: Fix the tests\n---\nFix them.\n",
    );
    write(
        &root.join("listed/listed.md"),
        "---\ndescription: Listed in settings\n---\nX\n",
    );
    write(
        &root.join("cli/ct.md"),
        "---\ndescription: From the CLI\n---\nY\n",
    );
    write(
        &p.cwd().join(".pi/skills/local/SKILL.md"),
        "---\nname: local\ndescription: A project skill\n---\nL\n",
    );
    write(
        &p.agent_dir().join("skills/brave/SKILL.md"),
        "---\nname: brave\ndescription: A user skill\n---\nB\n",
    );
    write(
        &root.join("cli/skills/cs/SKILL.md"),
        "---\nname: cs\ndescription: A CLI skill\n---\nC\n",
    );
    let flags = |cmd: &mut std::process::Command| {
        cmd.arg("--prompt-template")
            .arg(root.join("cli/ct.md"))
            .arg("--skill")
            .arg(root.join("cli/skills/cs"));
    };

    let mut ours = p.command();
    flags(&mut ours);
    let mut c = RpcClient::spawn(ours);
    let ours = c.ok(json!({"type": "get_commands"}));
    drop(c);

    let mut theirs = reference_pi::rpc_command(&root.join("home"), &p.cwd());
    theirs.env("PI_REFERENCE_VERSION", reference_pi::OLD_VERSION);
    flags(&mut theirs);
    let out = reference_pi::run(
        theirs,
        "{\"id\":\"c\",\"type\":\"get_commands\"}\n",
        Duration::from_secs(60),
    )
    .unwrap();
    let theirs = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == "c")
        .unwrap_or_else(|| panic!("no get_commands response from pi: {out}"))["data"]
        .clone();
    let lines = |data: &Value| -> String {
        data["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| anonymize(&p, &c.to_string()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(lines(&ours), lines(&theirs));
}

/// pi's `ctx.shutdown()` in RPC mode: the command's response is written, then the process
/// ends by itself (stdin still open) after telling the extensions `session_shutdown`.
#[test]
fn an_extension_shutdown_request_ends_rpc_mode_once_idle() {
    let p = RpcProject::new(&json!({"default": {"text": "ok"}}), None, None);
    let bye = script(p.dir.path(), "bye.sh", ext_support::BYE);
    let mut c = with_extension(&p, &bye);
    let response = c.request(json!({"type": "prompt", "message": "/bye"}));
    assert_eq!(response["success"], true, "{response}");
    let (status, stderr) = c.wait_exit();
    assert!(status.success(), "{stderr}");
    let log = std::fs::read_to_string(p.dir.path().join("shutdown.log")).unwrap();
    assert_eq!(log, "session_shutdown\n");
    assert!(p.server.requests().is_empty(), "/bye reached the model");
}
