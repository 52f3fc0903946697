//! The built `pi` binary in RPC mode, driven as a client program would: a prompt with
//! tool calls, steering and follow-ups while streaming, abort, bash, compaction, the tree
//! extensions, session and settings commands, bad input, and shutdown at the end of
//! input. (pi's own transcripts are replayed in `rpc_corpus.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::support::rpc_client::{RpcProject, brief, json_lines, last_user_text, messages_of};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[test]
fn a_prompt_with_a_tool_call_is_answered_first_then_streams_pi_events() {
    let p = RpcProject::new(
        &json!({"sequence": [
            {"text": "Reading.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
            {"text": "It says hi."}
        ]}),
        None,
        None,
    );
    std::fs::write(p.cwd().join("a.txt"), "hi\n").unwrap();
    let mut c = p.start();
    let events = c.prompt("what is in a.txt?");
    insta::assert_snapshot!(brief(&events), @r#"
    response prompt
    agent_start
    turn_start
    message_start user "what is in a.txt?"
    message_end user "what is in a.txt?"
    message_start assistant "stop"
    message_end assistant "toolUse"
    tool_execution_start read
    tool_execution_end read
    message_start toolResult
    message_end toolResult
    turn_end
    turn_start
    message_start assistant "stop"
    message_end assistant "stop"
    turn_end
    agent_end
    agent_settled
    "#);
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "hi\n");
    let text = c.ok(json!({"type": "get_last_assistant_text"}));
    assert_eq!(text, json!({"text": "It says hi."}));
    let (status, _) = c.close();
    assert!(status.success());
    let files = p.session_files();
    assert_eq!(files.len(), 1);
    let roles: Vec<String> = messages_of(&files[0])
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
}

#[test]
fn steering_and_follow_ups_sent_while_streaming_reach_the_model_in_order() {
    let p = RpcProject::new(
        &json!({"sequence": [
            {"text": "Working on it, slowly and carefully.", "chunk_size": 3, "delay_ms": 80,
             "tool_calls": [{"name": "bash", "arguments": {"command": "echo step"}}]},
            {"text": "steered"},
            {"text": "first follow-up done"},
            {"text": "second follow-up done"}
        ]}),
        None,
        None,
    );
    let mut c = p.start();
    c.send(&json!({"type": "prompt", "message": "start", "id": "p"}));
    c.read_until(|m| m["type"] == "message_update");
    let refused = c.request(json!({"type": "prompt", "message": "no behaviour"}));
    c.request(json!({"type": "prompt", "message": "steer me", "streamingBehavior": "steer"}));
    c.request(json!({"type": "follow_up", "message": "then this"}));
    c.request(json!({"type": "prompt", "message": "and this", "streamingBehavior": "followUp"}));
    let state = c.ok(json!({"type": "get_state"}));
    assert_eq!(
        (&state["isStreaming"], &state["pendingMessageCount"]),
        (&json!(true), &json!(3))
    );
    assert_eq!(
        refused["error"],
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );
    c.read_until(|m| m["type"] == "agent_end");
    let queue: Vec<Value> = c
        .seen
        .iter()
        .filter(|m| m["type"] == "queue_update" || m["type"] == "response")
        .cloned()
        .collect();
    insta::assert_snapshot!(brief(&queue), @r#"
    response prompt
    response prompt error: Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.
    queue_update ["steer me"] []
    response prompt
    queue_update ["steer me"] ["then this"]
    response follow_up
    queue_update ["steer me"] ["then this","and this"]
    response prompt
    response get_state
    queue_update [] ["then this","and this"]
    queue_update [] ["and this"]
    queue_update [] []
    "#);
    let sent: Vec<String> = p
        .server
        .requests()
        .iter()
        .map(|r| last_user_text(&r.body))
        .collect();
    assert_eq!(sent, ["start", "steer me", "then this", "and this"]);
}

#[test]
fn abort_right_after_a_prompt_stops_it_and_answers_once_idle() {
    let p = RpcProject::new(
        &json!({"rules": [
            {"match": "ALPHA", "reply": {"text": "a long answer that streams slowly", "chunk_size": 2, "delay_ms": 100}},
            {"match": "BRAVO", "reply": {"text": "next answer"}}
        ]}),
        None,
        None,
    );
    let mut c = p.start();
    // Pipelined, as a client reacting to Esc would: the abort must not overtake the prompt.
    c.send(&json!({"type": "prompt", "message": "ALPHA", "id": "p"}));
    c.send(&json!({"type": "abort", "id": "a"}));
    let got = c.read_until(|m| m["id"] == "a");
    insta::assert_snapshot!(brief(&got), @r#"
    response prompt
    agent_start
    turn_start
    message_start user "ALPHA"
    message_end user "ALPHA"
    message_start assistant "stop"
    message_end assistant "aborted"
    turn_end
    agent_end
    agent_settled
    response abort
    "#);
    let state = c.ok(json!({"type": "get_state"}));
    assert_eq!(state["isStreaming"], false);
    // The next prompt runs normally.
    let events = c.prompt("BRAVO");
    assert_eq!(
        events.iter().rfind(|e| e["type"] == "agent_end").unwrap()["messages"][1]["content"][0]["text"],
        "next answer"
    );
    let (status, _) = c.close();
    assert!(status.success());
    let messages = messages_of(&p.session_files()[0]);
    let stops: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| &m["stopReason"])
        .collect();
    assert_eq!(stops, [&json!("aborted"), &json!("stop")]);
}

#[test]
fn bash_results_reach_the_next_request_and_abort_bash_cancels_a_running_command() {
    let p = RpcProject::new(&json!({"sequence": [{"text": "seen"}]}), None, None);
    let mut c = p.start();
    let data = c.ok(json!({"type": "bash", "command": "printf 'one\\ntwo\\n'"}));
    assert_eq!(
        data,
        json!({"output": "one\ntwo\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    // abort_bash arrives while the command runs.
    let started = std::time::Instant::now();
    c.send(&json!({"type": "bash", "command": "sleep 30", "id": "long"}));
    let stop = c.request(json!({"type": "abort_bash"}));
    assert_eq!(stop["success"], true);
    let cancelled = c.read_until(|m| m["id"] == "long").pop().unwrap();
    assert_eq!(
        cancelled["data"],
        json!({"output": "", "cancelled": true, "truncated": false})
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    c.prompt("did you see?");
    let body = &p.server.requests()[0].body;
    let texts: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            m["content"][0]["text"]
                .as_str()
                .or(m["content"].as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(
        texts[0],
        "Ran `printf 'one\\ntwo\\n'`\n```\none\ntwo\n\n```"
    );
    assert_eq!(texts.last().unwrap(), &"did you see?");
    let (status, _) = c.close();
    assert!(status.success());
    let roles: Vec<String> = messages_of(&p.session_files()[0])
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles,
        ["bashExecution", "bashExecution", "user", "assistant"]
    );
}

#[test]
fn compact_answers_with_the_compaction_result_and_the_next_request_starts_from_the_summary() {
    let p = RpcProject::new(
        &json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "## Goal\nKeep x."}}],
            "sequence": [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "after"}]
        }),
        None,
        Some(json!({"compaction": {"keepRecentTokens": 10}})),
    );
    let mut c = p.start();
    c.prompt("first");
    c.prompt("second");
    c.prompt("third");
    let response = c.request(json!({"type": "compact", "customInstructions": "Focus on x"}));
    let start = c
        .seen
        .iter()
        .position(|m| m["type"] == "compaction_start")
        .unwrap();
    insta::assert_snapshot!(brief(&c.seen[start..]), @r"
    compaction_start manual
    compaction_end manual
    response compact
    ");
    let data = &response["data"];
    let keys: Vec<&String> = data.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "estimatedTokensAfter",
            "details"
        ]
    );
    assert!(
        data["summary"]
            .as_str()
            .unwrap()
            .starts_with("## Goal\nKeep x.")
    );
    let end = &c.seen[start + 1];
    assert_eq!(&end["result"], data);
    let summary_request = p
        .server
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("<conversation>"))
        .unwrap();
    assert!(summary_request.body.to_string().contains("Focus on x"));
    c.prompt("fourth");
    let last = p.server.requests().last().unwrap().body.clone();
    let first_message = &last["messages"][1];
    assert!(
        first_message.to_string().contains("Keep x."),
        "{first_message}"
    );
    let (status, _) = c.close();
    assert!(status.success());
    let file = json_lines(&p.session_files()[0]);
    assert!(file.iter().any(|e| e["type"] == "compaction"));
}

/// `get_tree` as text: `<n> <- <parent>: type/role "preview" [label] *leaf*`.
fn render_tree(tree: &Value) -> String {
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut out = String::new();
    for e in tree["entries"].as_array().unwrap() {
        let n = ids.len() + 1;
        ids.insert(e["id"].as_str().unwrap().to_string(), n);
        let parent = e["parentId"]
            .as_str()
            .map_or("-".to_string(), |p| ids[p].to_string());
        let mut kind = e["type"].as_str().unwrap().to_string();
        if let Some(role) = e["role"].as_str() {
            kind = format!("{kind}/{role}");
        }
        out += &format!("{n} <- {parent}: {kind} {}", e["preview"]);
        if let Some(label) = e["label"].as_str() {
            out += &format!(" [{label}]");
        }
        if e["id"] == tree["leafId"] {
            out += " *leaf*";
        }
        out.push('\n');
    }
    out
}

#[test]
fn tree_extensions_label_navigate_with_a_summary_and_show_the_branch() {
    let p = RpcProject::new(
        &json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "Explored: said hello twice."}}],
            "sequence": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]
        }),
        None,
        None,
    );
    let mut c = p.start();
    c.prompt("first");
    c.prompt("second\nwith a second line");
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    let entries = tree["entries"].as_array().unwrap().clone();
    let first_user = entries[2]["id"].as_str().unwrap().to_string();
    c.ok(json!({"type": "set_label", "entryId": first_user, "label": "start"}));

    let refused =
        c.request(json!({"type": "navigate_tree", "targetId": first_user, "summarize": "custom"}));
    assert_eq!(
        refused["error"],
        "summarize \"custom\" needs non-empty customInstructions (or use \"default\")"
    );
    let missing = c.request(json!({"type": "navigate_tree", "targetId": "nope"}));
    assert_eq!(missing["error"], "Entry nope not found");

    let result =
        c.ok(json!({"type": "navigate_tree", "targetId": first_user, "summarize": "default"}));
    assert_eq!(result["editorText"], "first");
    assert_eq!(result["cancelled"], false);
    let summary_id = result["summaryEntryId"].as_str().unwrap().to_string();
    let entry = c.ok(json!({"type": "get_entry", "entryId": summary_id}));
    assert_eq!(entry["type"], "branch_summary");
    assert_eq!(entry["parentId"], entries[1]["id"]);
    assert!(
        entry["summary"]
            .as_str()
            .unwrap()
            .contains("Explored: said hello twice.")
    );

    c.prompt("alternative");
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    insta::assert_snapshot!(render_tree(&tree), @r#"
    1 <- -: model_change "mock/mock-model"
    2 <- 1: thinking_level_change "off"
    3 <- 2: message/user "first" [start]
    4 <- 3: message/assistant "a1"
    5 <- 4: message/user "second with a second line"
    6 <- 5: message/assistant "a2"
    7 <- 6: label "start"
    8 <- 2: branch_summary "The user worked on another branch of this conversation and then came back to this point. What happen…"
    9 <- 8: message/user "alternative"
    10 <- 9: message/assistant "a3" *leaf*
    "#);
    // The next request starts from the summary, not the abandoned branch.
    let last = p.server.requests().last().unwrap().body.clone();
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{last}");
    assert!(
        messages[1]
            .to_string()
            .contains("Explored: said hello twice.")
    );
    assert_eq!(last_user_text(&last), "alternative");

    // Clearing a label; unknown entries are errors.
    c.ok(json!({"type": "set_label", "entryId": first_user, "label": null}));
    let tree = c.ok(json!({"type": "get_tree_outline"}));
    assert!(tree["entries"][2].get("label").is_none());
    let bad = c.request(json!({"type": "set_label", "entryId": "nope", "label": "x"}));
    assert_eq!(bad["error"], "Entry nope not found");
    let bad = c.request(json!({"type": "get_entry", "entryId": "nope"}));
    assert_eq!(bad["error"], "Entry nope not found");
}

#[test]
fn bad_lines_get_error_responses_and_the_process_keeps_serving() {
    let p = RpcProject::new(&json!({"sequence": [{"text": "ok"}]}), None, None);
    let mut c = p.start();
    for line in [
        "{not json",
        "",
        "[1,2]",
        r#"{"id":"x"}"#,
        r#"{"id":"u","type":"frobnicate"}"#,
        r#"{"id":"m","type":"prompt"}"#,
        r#"{"id":"i","type":"prompt","message":"hi","images":[{"type":"text"}]}"#,
        r#"{"id":"n","type":"set_session_name","name":"   "}"#,
        r#"{"id":"e","type":"export_html"}"#,
    ] {
        c.send_raw(line);
    }
    let errors = c.read_until(|m| m["id"] == "e");
    insta::assert_snapshot!(brief(&errors), @r#"
    response parse error: Failed to parse command: key must be a string at line 1 column 2
    response parse error: Failed to parse command: EOF while parsing a value at line 1 column 0
    response parse error: Failed to parse command: expected a JSON object
    response parse error: Failed to parse command: missing string field "type"
    response frobnicate error: Unknown command: frobnicate
    response prompt error: Invalid prompt command: missing field `message`
    response prompt error: images[0] has type "text"; only "image" is supported
    response set_session_name error: Session name cannot be empty
    response export_html error: Nothing to export yet - start a conversation first
    "#);
    assert_eq!(errors[4]["id"], "u", "errors keep the request id");
    // CRLF is accepted; U+2028/U+2029 inside a string are not line breaks.
    c.send_raw("{\"type\":\"get_state\",\"id\":\"crlf\"}\r");
    let state = c.read_until(|m| m["id"] == "crlf").pop().unwrap();
    assert_eq!(state["success"], true);
    let text = "line\u{2028}separator\u{2029}paragraph";
    let raw = json!({"type": "prompt", "message": text, "id": "u2028"}).to_string();
    assert!(raw.contains('\u{2028}'), "sent unescaped");
    c.send_raw(&raw);
    let events = c.read_until(|m| m["type"] == "agent_end");
    assert_eq!(events[0]["id"], "u2028");
    assert_eq!(last_user_text(&p.server.requests()[0].body), text);
    let (status, _) = c.close();
    assert!(status.success());
    let messages = messages_of(&p.session_files()[0]);
    assert_eq!(messages[0]["content"][0]["text"], text);
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn end_of_input_aborts_the_run_kills_commands_saves_the_partial_answer_and_exits_0() {
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "a long answer that streams slowly", "chunk_size": 2, "delay_ms": 100}]}),
        None,
        None,
    );
    let mut c = p.start();
    c.send(&json!({"type": "bash", "command": "echo $$ > shell.pid; sleep 30", "id": "b"}));
    c.send(&json!({"type": "prompt", "message": "go", "id": "p"}));
    c.read_until(|m| {
        m["type"] == "message_update" && m["assistantMessageEvent"]["type"] == "text_delta"
    });
    let pid_file = p.cwd().join("shell.pid");
    let shell = loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && let Ok(pid) = text.trim().parse::<i32>()
        {
            break pid;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let started = std::time::Instant::now();
    let (status, stderr) = c.close();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!alive(shell), "the running command was killed");
    // Both were recorded: the partial answer and the killed command.
    let messages = messages_of(&p.session_files()[0]);
    let answer = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(answer["stopReason"], "aborted");
    assert!(!answer["content"][0]["text"].as_str().unwrap().is_empty());
    let bash = messages
        .iter()
        .find(|m| m["role"] == "bashExecution")
        .unwrap();
    assert_eq!(bash["cancelled"], true);
}

#[test]
fn sigterm_shuts_down_like_end_of_input_and_exits_143() {
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "a long answer that streams slowly", "chunk_size": 2, "delay_ms": 100}]}),
        None,
        None,
    );
    let mut c = p.start();
    c.send(&json!({"type": "prompt", "message": "go", "id": "p"}));
    c.read_until(|m| {
        m["type"] == "message_update" && m["assistantMessageEvent"]["type"] == "text_delta"
    });
    // SAFETY: sending SIGTERM to our own child process.
    unsafe {
        libc::kill(c.pid() as i32, libc::SIGTERM);
    }
    let (status, stderr) = c.wait_exit();
    assert_eq!(status.code(), Some(143), "{stderr}");
    let messages = messages_of(&p.session_files()[0]);
    assert_eq!(messages.last().unwrap()["stopReason"], "aborted");
}

#[test]
fn at_file_arguments_are_refused_in_rpc_mode() {
    let p = RpcProject::new(&json!({"sequence": []}), None, None);
    let out = p.command().arg("@notes.md").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: @file arguments are not supported in RPC mode\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn get_messages_returns_the_messages_exactly_as_the_session_file_stores_them() {
    let p = RpcProject::new(
        &json!({"sequence": [
            {"text": "Listing.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "Done."}
        ]}),
        None,
        None,
    );
    let mut c = p.start();
    c.ok(json!({"type": "bash", "command": "true"}));
    c.prompt("list");
    let data = c.ok(json!({"type": "get_messages"}));
    let stats = c.ok(json!({"type": "get_session_stats"}));
    let (status, _) = c.close();
    assert!(status.success());
    let file = p.session_files()[0].clone();
    assert_eq!(data["messages"], json!(messages_of(&file)));
    let keys: Vec<&String> = stats.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "sessionFile",
            "sessionId",
            "userMessages",
            "assistantMessages",
            "toolCalls",
            "toolResults",
            "totalMessages",
            "tokens",
            "cost",
            "contextUsage"
        ]
    );
    assert_eq!(stats["sessionFile"], file.display().to_string());
    assert_eq!(
        (
            &stats["userMessages"],
            &stats["assistantMessages"],
            &stats["toolCalls"]
        ),
        (&json!(1), &json!(2), &json!(1))
    );
    assert_eq!(
        stats["totalMessages"], 5,
        "bashExecution counts as a message"
    );
    assert_eq!(stats["cost"], json!(0), "a JavaScript number, not 0.0");
}

#[test]
fn new_and_switch_session_move_between_files_and_new_session_records_its_parent() {
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "one"}, {"text": "two"}]}),
        None,
        None,
    );
    let mut c = p.start();
    c.prompt("in the first session");
    let first = c.ok(json!({"type": "get_state"}))["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let data = c.ok(json!({"type": "new_session", "parentSession": first}));
    assert_eq!(data, json!({"cancelled": false}));
    let state = c.ok(json!({"type": "get_state"}));
    assert_eq!(state["messageCount"], 0);
    assert_ne!(state["sessionFile"], json!(first));
    c.prompt("in the second session");
    let second = c.ok(json!({"type": "get_state"}))["sessionFile"]
        .as_str()
        .unwrap()
        .to_string();
    let lines = json_lines(Path::new(&second));
    assert_eq!(lines[0]["parentSession"], json!(first));
    // As in pi, the new session starts with the model and thinking level in use.
    let kinds: Vec<&str> = lines[1..]
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message"
        ]
    );

    let data = c.ok(json!({"type": "switch_session", "sessionPath": first}));
    assert_eq!(data, json!({"cancelled": false}));
    let messages = c.ok(json!({"type": "get_messages"}))["messages"].clone();
    assert_eq!(messages[0]["content"][0]["text"], "in the first session");
    assert_eq!(messages.as_array().unwrap().len(), 2);
    let text = c.ok(json!({"type": "get_last_assistant_text"}));
    assert_eq!(text, json!({"text": "one"}));
}

#[test]
fn model_thinking_queue_and_toggle_commands_answer_like_pi_and_persist_settings() {
    // As pi 1.6: the model and the thinking level are the session's (not saved as the
    // defaults); the queue modes and the toggles are saved.
    let models = json!({"providers": {"mock": {
        "baseUrl": "", "api": "openai-completions", "apiKey": "mock",
        "models": [
            {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "mock-model-2", "name": "Mock Model Two", "reasoning": true,
             "contextWindow": 100000, "maxTokens": 2000}
        ]
    }}});
    let p = RpcProject::new(&json!({"sequence": []}), Some(models), None);
    let mut c = p.start();
    let available = c.ok(json!({"type": "get_available_models"}));
    let ids: Vec<&str> = available["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mock-model", "mock-model-2"]);
    let missing = c.request(json!({"type": "set_model", "provider": "mock", "modelId": "nope"}));
    assert_eq!(missing["error"], "Model not found: mock/nope");

    // Not a reasoning model: nothing to cycle.
    assert_eq!(c.ok(json!({"type": "cycle_thinking_level"})), Value::Null);
    let cycled = c.ok(json!({"type": "cycle_model"}));
    assert_eq!(cycled["model"]["id"], "mock-model-2");
    // pi 1.6 keeps the current level ("off" on the non-reasoning model) when no
    // `defaultThinkingLevel` or `modelThinkingLevels` entry says otherwise.
    assert_eq!(
        (&cycled["thinkingLevel"], &cycled["isScoped"]),
        (&json!("off"), &json!(false))
    );
    assert_eq!(
        c.ok(json!({"type": "cycle_thinking_level"})),
        json!({"level": "minimal"})
    );
    assert_eq!(
        c.ok(json!({"type": "set_thinking_level", "level": "low"})),
        Value::Null
    );

    for command in [
        json!({"type": "set_steering_mode", "mode": "all"}),
        json!({"type": "set_follow_up_mode", "mode": "all"}),
        json!({"type": "set_auto_compaction", "enabled": false}),
        json!({"type": "set_auto_retry", "enabled": false}),
        json!({"type": "abort_retry"}),
    ] {
        assert_eq!(c.ok(command), Value::Null);
    }
    let bad = c.request(json!({"type": "set_follow_up_mode", "mode": "sometimes"}));
    assert_eq!(
        bad["error"],
        "Invalid follow-up mode \"sometimes\": use \"all\" or \"one-at-a-time\""
    );
    let state = c.ok(json!({"type": "get_state"}));
    assert_eq!(
        [
            &state["thinkingLevel"],
            &state["steeringMode"],
            &state["followUpMode"],
            &state["autoCompactionEnabled"]
        ],
        [&json!("low"), &json!("all"), &json!("all"), &json!(false)]
    );
    assert_eq!(
        c.ok(json!({"type": "get_commands"})),
        json!({"commands": []})
    );
    let (status, _) = c.close();
    assert!(status.success());
    insta::assert_snapshot!(
        std::fs::read_to_string(p.agent_dir().join("settings.json")).unwrap(),
        @r#"
    {
      "steeringMode": "all",
      "followUpMode": "all",
      "compaction": {
        "enabled": false
      },
      "retry": {
        "enabled": false
      }
    }
    "#
    );
}

#[test]
fn prompt_images_reach_a_model_that_accepts_images() {
    let models = json!({"providers": {"mock": {
        "baseUrl": "", "api": "openai-completions", "apiKey": "mock",
        "models": [{"id": "mock-model", "input": ["text", "image"]}]
    }}});
    let p = RpcProject::new(
        &json!({"sequence": [{"text": "a red dot"}]}),
        Some(models),
        None,
    );
    let mut c = p.start();
    // A 1×1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    c.send(
        &json!({"type": "prompt", "message": "what is this?", "id": "img",
        "images": [{"type": "image", "data": png, "mimeType": "image/png"}]}),
    );
    c.read_until(|m| m["type"] == "agent_end");
    let body = &p.server.requests()[0].body;
    let user = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(user["content"][0]["text"], "what is this?");
    assert_eq!(
        user["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{png}")
    );
}

#[test]
fn a_compaction_whose_summary_request_fails_once_announces_pi_16s_summarization_retry() {
    let p = RpcProject::new(
        &json!({"sequence": [
            {"text": "first answer"},
            {"error": {"status": 503, "body": {"error": {"message": "overloaded"}}}},
            {"text": "## Goal\nThe summary."}
        ]}),
        None,
        Some(json!({
            "compaction": {"keepRecentTokens": 10},
            "retry": {"provider": {"maxRetries": 2}, "baseDelayMs": 20}
        })),
    );
    let mut c = p.start();
    c.prompt("hello there, a prompt long enough to be worth compacting");
    c.send(&json!({"type": "compact", "id": "c"}));
    let got = c.read_until(|m| m["id"] == "c");
    let response = got.last().unwrap();
    assert_eq!(response["success"], true, "{response}");
    let retry: Vec<Value> = got
        .iter()
        .filter(|m| {
            m["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("summarization_retry"))
        })
        .cloned()
        .collect();
    assert_eq!(retry.len(), 3, "{retry:?}");
    assert_eq!(retry[0]["type"], "summarization_retry_scheduled");
    assert_eq!(retry[0]["attempt"], 1);
    assert!(
        retry[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("overloaded")
    );
    assert_eq!(
        retry[1],
        json!({"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"})
    );
    assert_eq!(retry[2], json!({"type": "summarization_retry_finished"}));
    assert_eq!(p.server.requests().len(), 3);
}
