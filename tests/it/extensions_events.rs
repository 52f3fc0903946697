//! Events and their powers with purpose-built extensions: chaining across two
//! extensions in load order (`input`, `before_agent_start`, `context`, `tool_call`,
//! `tool_result`, `session_before_tree`), notifications with pi's turn indexes, the
//! handshake and flags, dialogs without a UI, `exec`, tool cancellation and stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::support::extensions::{self as ext_support, drain, load, next_action, options, script};
use pi::agent::AgentEvent;
use pi::ai::message::{ToolResultMessage, UserBlock, UserContent};
use pi::extensions::{
    ActionKind, InputOutcome, InputSource, SessionStartReason, ShutdownReason, ToolCallDecision,
    ToolResultEvent, TreeDecision, TreePreparation,
};
use pi::messages::AgentMessage;
use pi::tools::ToolCallArgs;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A Python extension named `tag` that answers the chainable events and leaves a trace
/// of what it saw in its answers.
fn chainer(dir: &Path, tag: &str) -> PathBuf {
    let text = r#"#!/usr/bin/env python3
import json, sys

TAG = "@TAG@"

def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()

sys.stdin.readline()
send({"type": "register", "name": TAG, "events": [
    "input", "before_agent_start", "context", "tool_call", "tool_result", "session_before_tree"]})
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") != "event" or "id" not in m:
        continue
    e = m["event"]
    t = e["type"]
    r = None
    if t == "input":
        if e["text"] == "ping":
            r = {"action": "handled"}
        elif e["text"].startswith("?"):
            r = {"action": "transform", "text": e["text"] + " [" + TAG + "]"}
    elif t == "before_agent_start":
        r = {"message": {"customType": TAG, "content": TAG + " saw: " + e["prompt"], "display": False},
             "systemPrompt": e["systemPrompt"] + "\n" + TAG + " rules"}
    elif t == "context":
        msgs = e["messages"]
        msgs.append({"role": "custom", "customType": TAG, "content": TAG + " saw %d messages" % len(msgs),
                     "display": False, "timestamp": 0})
        r = {"messages": msgs}
    elif t == "tool_call":
        if e["toolName"] == "read":
            r = {"input": dict(e["input"], path=e["input"]["path"] + "." + TAG)}
        if e["input"].get("path", "").endswith(".a.b") and TAG == "b":
            r = {"block": True, "reason": "b blocks " + e["input"]["path"]}
    elif t == "tool_result":
        text = "".join(c.get("text", "") for c in e["content"])
        r = {"content": [{"type": "text", "text": text + " +" + TAG}]}
        if TAG == "b":
            r["isError"] = not e["isError"]
    elif t == "session_before_tree":
        p = e["preparation"]
        r = {"summary": {"summary": TAG + ": %d entries left behind" % len(p["entriesToSummarize"]),
                         "details": {"by": TAG}}, "label": TAG}
    send({"type": "response", "id": m["id"], "result": r})
"#
    .replace("@TAG@", tag);
    script(dir, tag, &text)
}

async fn two_chainers(dir: &Path) -> (pi::extensions::ExtensionHost, pi::extensions::HostChannels) {
    let a = chainer(dir, "a");
    let b = chainer(dir, "b");
    load(&[a, b], options(dir)).await
}

#[tokio::test]
async fn input_transforms_chain_and_handled_stops() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    assert_eq!(
        host.input("?tidy up", None, InputSource::Interactive).await,
        InputOutcome::Transform {
            text: "?tidy up [a] [b]".into(),
            images: None
        }
    );
    assert_eq!(
        host.input("ping", None, InputSource::Rpc).await,
        InputOutcome::Handled
    );
    assert_eq!(
        host.input("plain", None, InputSource::Extension).await,
        InputOutcome::Continue
    );
}

#[tokio::test]
async fn before_agent_start_collects_messages_and_chains_the_system_prompt() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    let outcome = host
        .before_agent_start("fix the bug", None, "BASE", &json!({"cwd": "/p"}))
        .await;
    assert_eq!(
        outcome.system_prompt.as_deref(),
        Some("BASE\na rules\nb rules")
    );
    let messages: Vec<(String, String)> = outcome
        .messages
        .iter()
        .map(|m| (m.custom_type.clone(), m.content.text()))
        .collect();
    assert_eq!(
        messages,
        [
            ("a".to_string(), "a saw: fix the bug".to_string()),
            ("b".to_string(), "b saw: fix the bug".to_string())
        ]
    );
}

#[tokio::test]
async fn context_rewrites_feed_the_next_extension() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    let messages = vec![AgentMessage::User(pi::ai::message::UserMessage::text(
        "hello", 5,
    ))];
    let rewritten = host.context(messages).await;
    let rendered: Vec<String> = rewritten
        .iter()
        .map(|m| match m {
            AgentMessage::User(u) => format!("user: {}", u.content.text()),
            AgentMessage::Custom(c) => format!("custom {}: {}", c.custom_type, c.content.text()),
            other => other.role().to_string(),
        })
        .collect();
    assert_eq!(
        rendered,
        [
            "user: hello",
            "custom a: a saw 1 messages",
            "custom b: b saw 2 messages"
        ]
    );
}

#[tokio::test]
async fn tool_call_input_changes_chain_and_the_first_block_wins() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    assert_eq!(
        host.tool_call("c1", "read", &json!({"path": "src/x.rs"}))
            .await,
        ToolCallDecision::Allow {
            input: Some(json!({"path": "src/x.rs.a.b"}))
        }
    );
    assert_eq!(
        host.tool_call("c2", "write", &json!({"path": "y.a.b"}))
            .await,
        ToolCallDecision::Block {
            reason: "b blocks y.a.b".into()
        }
    );
    assert_eq!(
        host.tool_call("c3", "bash", &json!({"command": "ls"}))
            .await,
        ToolCallDecision::Allow { input: None }
    );
}

#[tokio::test]
async fn tool_result_patches_chain_and_the_hooks_adapter_applies_them() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    let event = ToolResultEvent {
        tool_call_id: "c1".into(),
        tool_name: "bash".into(),
        input: json!({"command": "ls"}),
        content: vec![UserBlock::text("out")],
        details: Some(json!({"exitCode": 0})),
        is_error: false,
    };
    let patch = host.tool_result(&event).await.unwrap();
    assert_eq!(patch.content, vec![UserBlock::text("out +a +b")]);
    assert_eq!(patch.details, Some(json!({"exitCode": 0})));
    assert!(patch.is_error);

    let hooks = host.hooks();
    let call = pi::ai::message::ToolCall {
        id: "c2".into(),
        name: "bash".into(),
        arguments: json!({"command": "ls"}),
        ..Default::default()
    };
    let (output, is_error) = hooks
        .after_tool_call(&call, pi::tools::ToolOutput::text("x"), true)
        .await;
    assert_eq!(output.content, vec![UserBlock::text("x +a +b")]);
    assert!(!is_error);
    assert_eq!(hooks.before_tool_call(&call).await, None);
}

#[tokio::test]
async fn session_before_tree_takes_the_last_answer() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = two_chainers(dir.path()).await;
    let preparation = TreePreparation {
        target_id: "t".into(),
        old_leaf_id: Some("l".into()),
        common_ancestor_id: None,
        entries_to_summarize: Vec::new(),
        user_wants_summary: true,
        custom_instructions: None,
        replace_instructions: None,
        label: None,
    };
    let decision = host
        .session_before_tree(&preparation, &CancellationToken::new())
        .await;
    assert_eq!(
        decision,
        TreeDecision {
            cancel: false,
            summary: Some(pi::extensions::ExtensionBranchSummary {
                summary: "b: 0 entries left behind".into(),
                details: Some(json!({"by": "b"})),
            }),
            custom_instructions: None,
            replace_instructions: None,
            label: Some("b".into()),
        }
    );
}

/// An extension that writes every line it receives to `log` and answers what needs an
/// answer.
fn recorder(dir: &Path, log: &Path) -> PathBuf {
    let text = r#"#!/bin/sh
IFS= read -r hello
printf '%s\n' "$hello" > "@LOG@"
echo '{"type":"register","name":"recorder","events":["session_start","agent_start","turn_start","turn_end","agent_end","model_select","message_end","session_shutdown"],"flags":[{"name":"plan","type":"boolean","default":false},{"name":"depth","type":"string","default":"1"}]}'
while IFS= read -r line; do
    printf '%s\n' "$line" >> "@LOG@"
    case "$line" in
    '{"type":"event","id":'*)
        id=${line#*\"id\":}; id=${id%%,*}
        echo "{\"type\":\"response\",\"id\":$id}" ;;
    esac
done
"#
    .replace("@LOG@", &log.display().to_string());
    script(dir, "recorder", &text)
}

#[tokio::test]
async fn notifications_carry_pis_shapes_and_turn_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("received.jsonl");
    let ext = recorder(dir.path(), &log);
    let mut opts = options(dir.path());
    opts.session_file = Some(dir.path().join("s.jsonl"));
    opts.session_id = Some("sid".into());
    opts.cli_flags = vec![("plan".into(), None), ("other".into(), Some("x".into()))];
    let (host, _channels) = load(&[ext], opts).await;
    assert_eq!(host.flag_value("plan"), Some(json!(true)));
    assert_eq!(host.flag_value("depth"), Some(json!("1")));
    assert_eq!(host.flag_value("other"), None);
    let flags: Vec<String> = host.flags().iter().map(|f| f.name.clone()).collect();
    assert_eq!(flags, ["plan", "depth"]);

    host.session_start(SessionStartReason::Startup, None).await;
    let reply = AgentMessage::Assistant(Default::default());
    for event in [
        AgentEvent::AgentStart,
        AgentEvent::TurnStart,
        AgentEvent::TurnEnd {
            message: reply.clone(),
            tool_results: vec![ToolResultMessage::default()],
        },
        AgentEvent::TurnStart,
        AgentEvent::MessageEnd {
            message: reply.clone(),
        },
        AgentEvent::TurnEnd {
            message: reply.clone(),
            tool_results: vec![],
        },
        AgentEvent::AgentEnd {
            messages: vec![],
            will_retry: false,
        },
        // Not subscribed: never sent.
        AgentEvent::ToolExecutionStart {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: json!({}),
        },
    ] {
        if let AgentEvent::MessageEnd { message } = event {
            // Waited for (it may replace the message), never a notification.
            host.agent_event(&AgentEvent::MessageEnd {
                message: message.clone(),
            });
            assert_eq!(host.message_end(message.clone()).await, message);
        } else {
            host.agent_event(&event);
        }
    }
    host.notify("agent_start", json!({"extra": 1}));
    host.notify("input", json!({})); // expects an answer: not sendable this way
    host.shutdown(ShutdownReason::Quit, None).await;

    let root = dir.path().display().to_string();
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            // Make the record stable: no timestamps, no temp paths.
            if let Some(e) = v.get_mut("event") {
                if e.get("timestamp").is_some() {
                    e["timestamp"] = json!("<ts>");
                }
                if let Some(m) = e.get_mut("message").filter(|m| m.is_object()) {
                    *m = json!(m["role"]);
                }
                if let Some(r) = e.get_mut("toolResults").and_then(Value::as_array_mut) {
                    r.iter_mut().for_each(|m| *m = json!(m["role"]));
                }
            }
            v.to_string().replace(&root, "<dir>")
        })
        .collect();
    insta::assert_snapshot!(lines.join("\n"), @r#"
    {"type":"hello","protocolVersion":1,"piVersion":"0.1.0","extensionPath":"<dir>/recorder","cwd":"<dir>","agentDir":"<dir>/agent","sessionFile":"<dir>/s.jsonl","sessionId":"sid","mode":"print","hasUI":false,"flags":{"other":"x","plan":true}}
    {"type":"event","id":1,"event":{"type":"session_start","reason":"startup","sessionFile":"<dir>/s.jsonl","sessionId":"sid"}}
    {"type":"event","event":{"type":"agent_start"}}
    {"type":"event","event":{"type":"turn_start","turnIndex":0,"timestamp":"<ts>"}}
    {"type":"event","event":{"type":"turn_end","turnIndex":0,"message":"assistant","toolResults":["toolResult"]}}
    {"type":"event","event":{"type":"turn_start","turnIndex":1,"timestamp":"<ts>"}}
    {"type":"event","id":2,"event":{"type":"message_end","message":"assistant"}}
    {"type":"event","event":{"type":"turn_end","turnIndex":1,"message":"assistant","toolResults":[]}}
    {"type":"event","event":{"type":"agent_end","messages":[],"willRetry":false}}
    {"type":"event","event":{"extra":1,"type":"agent_start"}}
    {"type":"event","id":3,"event":{"type":"session_shutdown","reason":"quit"}}
    "#);
}

/// A command extension that asks `confirm`, runs `echo`, and reports both answers as
/// actions.
const ASKER: &str = r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","name":"asker","commands":[{"name":"ask"}]}'
while IFS= read -r line; do
    case "$line" in
    '{"type":"command",'*)
        cid=${line#*\"id\":}; cid=${cid%%,*}
        echo '{"type":"ui","id":"q1","method":"confirm","title":"Proceed?","message":"Really?"}'
        IFS= read -r answer
        result=${answer#*\"result\":}; result=${result%\}}
        printf '{"type":"append_entry","customType":"answer","data":%s}\n' "$result"
        echo '{"type":"exec","id":"x1","command":"sh","args":["-c","echo hi; echo oops >&2; exit 4"]}'
        IFS= read -r done
        result=${done#*\"result\":}; result=${result%\}}
        printf '{"type":"append_entry","customType":"exec","data":%s}\n' "$result"
        echo '{"type":"ui","method":"setStatus","statusKey":"asker","statusText":"done"}'
        echo "{\"type\":\"response\",\"id\":$cid}"
        ;;
    esac
done
"#;

fn entry_data(kind: &ActionKind) -> Value {
    match kind {
        ActionKind::AppendEntry { custom_type, data } => {
            json!({"customType": custom_type, "data": data})
        }
        other => panic!("expected append_entry, got {other:?}"),
    }
}

#[tokio::test]
async fn dialogs_are_cancelled_at_once_without_a_ui_and_exec_runs_programs() {
    let dir = tempfile::tempdir().unwrap();
    let ext = script(dir.path(), "asker", ASKER);
    let (host, mut channels) = load(&[ext], options(dir.path())).await;
    host.run_command("ask", "").await.unwrap();
    let answer = next_action(&mut channels).await;
    assert_eq!(
        entry_data(&answer.kind),
        json!({"customType": "answer", "data": {"cancelled": true}})
    );
    let exec = next_action(&mut channels).await;
    assert_eq!(
        entry_data(&exec.kind),
        json!({"customType": "exec", "data": {"stdout": "hi\n", "stderr": "oops\n", "code": 4, "killed": false}})
    );
    // Notices are dropped without a UI.
    assert!(channels.ui.try_recv().is_err());
}

async fn ui_request(channels: &mut pi::extensions::HostChannels) -> pi::extensions::UiRequest {
    tokio::time::timeout(Duration::from_secs(5), channels.ui.recv())
        .await
        .expect("no UI request within 5 s")
        .expect("UI channel closed")
}

#[tokio::test]
async fn dialogs_go_to_the_ui_channel_and_come_back_with_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ext = script(dir.path(), "asker", ASKER);
    let mut opts = options(dir.path());
    opts.has_ui = true;
    let (host, mut channels) = load(&[ext], opts).await;
    let run = {
        let host = host.clone();
        tokio::spawn(async move { host.run_command("ask", "").await })
    };
    let request = ui_request(&mut channels).await;
    assert_eq!(
        request.to_rpc_json(),
        json!({"type": "extension_ui_request", "id": "ui-1", "method": "confirm", "title": "Proceed?", "message": "Really?"})
    );
    request
        .reply
        .unwrap()
        .send(pi::extensions::UiResponse::Confirmed(true));
    let notice = ui_request(&mut channels).await;
    assert_eq!(
        notice.to_rpc_json(),
        json!({"type": "extension_ui_request", "id": "ui-2", "method": "setStatus", "statusKey": "asker", "statusText": "done"})
    );
    run.await.unwrap().unwrap();
    let answer = next_action(&mut channels).await;
    assert_eq!(
        entry_data(&answer.kind),
        json!({"customType": "answer", "data": {"confirmed": true}})
    );
}

/// A tool that never finishes on its own; `polite` decides whether it answers `cancel`.
fn slow_tool(dir: &Path, polite: bool) -> PathBuf {
    let on_cancel = if polite {
        r#"id=${line#*\"id\":}; id=${id%\}}; echo "{\"type\":\"response\",\"id\":$id,\"error\":\"stopped on request\"}""#
    } else {
        ":"
    };
    let text = format!(
        r#"#!/bin/sh
IFS= read -r hello
echo '{{"type":"register","tools":[{{"name":"slow","description":"Takes forever","executionMode":"sequential"}}]}}'
while IFS= read -r line; do
    case "$line" in
    '{{"type":"execute_tool",'*)
        id=${{line#*\"id\":}}; id=${{id%%,*}}
        echo "{{\"type\":\"tool_update\",\"id\":$id,\"content\":\"working\"}}" ;;
    '{{"type":"cancel",'*)
        {on_cancel} ;;
    esac
done
"#
    );
    script(dir, if polite { "slow" } else { "stubborn" }, &text)
}

#[tokio::test]
async fn cancelling_a_tool_call_tells_the_extension_and_ends_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.tool_cancel_grace = Duration::from_millis(300);
    for (polite, expected) in [(true, "stopped on request"), (false, "Aborted")] {
        let ext = slow_tool(dir.path(), polite);
        let (host, _channels) = load(&[ext], opts.clone()).await;
        let tool = host.agent_tools().pop().unwrap();
        assert_eq!(tool.execution_mode(), pi::tools::ExecutionMode::Sequential);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut call = ToolCallArgs::new("c", json!({}));
        call.on_update = Some(Arc::new(move |o| {
            let _ = tx.send(o);
        }));
        let cancel = call.cancel.clone();
        let running = tokio::spawn(async move { tool.execute(call).await });
        let update = rx.recv().await.unwrap();
        assert_eq!(update.content, vec![UserBlock::text("working")]);
        cancel.cancel();
        let err = tokio::time::timeout(Duration::from_secs(3), running)
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.message, expected);
    }
}

#[tokio::test]
async fn stderr_goes_to_the_extension_log_not_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let ext = script(
        dir.path(),
        "talker",
        "#!/bin/sh\nIFS= read -r hello\necho 'loading config' >&2\necho '{\"type\":\"register\"}'\nwhile IFS= read -r l; do :; done\n",
    );
    let (host, mut channels) = load(&[ext], options(dir.path())).await;
    host.shutdown(ShutdownReason::Quit, None).await;
    let log = std::fs::read_to_string(dir.path().join("agent/extensions.log")).unwrap();
    let lines: Vec<&str> = log
        .lines()
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest))
        .collect();
    assert!(lines.contains(&"[talker] loading config"), "{log}");
    assert!(
        lines.contains(&"[talker] the extension exited (exit code 0)"),
        "{log}"
    );
    assert!(drain(&mut channels).is_empty());
}

#[tokio::test]
async fn duplicate_command_names_get_pis_numbered_invocation_names() {
    let dir = tempfile::tempdir().unwrap();
    let greet = ext_support::example("greet").join("extension.sh");
    let copy_a = dir.path().join("greet-a");
    let copy_b = dir.path().join("greet-b");
    std::fs::create_dir_all(&copy_a).unwrap();
    std::fs::create_dir_all(&copy_b).unwrap();
    std::fs::copy(&greet, copy_a.join("extension")).unwrap();
    std::fs::copy(&greet, copy_b.join("extension")).unwrap();
    let (host, mut channels) = load(&[copy_a, copy_b.clone()], options(dir.path())).await;
    let names: Vec<String> = host
        .commands()
        .into_iter()
        .map(|c| c.invocation_name)
        .collect();
    assert_eq!(names, ["greet:1", "greet:2"]);
    host.run_command("greet:2", "two").await.unwrap();
    let action = next_action(&mut channels).await;
    assert_eq!(action.extension_path, copy_b.join("extension"));
    let ActionKind::SendMessage { message, .. } = action.kind else {
        panic!("expected send_message");
    };
    assert_eq!(message.content, UserContent::Text("Hello, two!".into()));
}
