//! The built `pi` binary in RPC mode, driven as a client program would: pi 0.73.1's own
//! RPC transcripts replayed (same responses and events, modulo ids, times and paths),
//! the session files those runs leave, steering and follow-up while streaming, abort,
//! bash, compaction, the tree extensions, bad input, and shutdown on end of input.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::rpc_client::{RpcProject, json_lines};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

// ----- normalizing transcripts -----

/// Gives ids, times, paths and token counts stable placeholders, so two runs (pi's and
/// ours) compare equal when they behave the same. Entry ids become `<e1>`, `<e2>` … in
/// order of first appearance, consistently across one transcript.
struct Normalizer {
    entry_ids: HashMap<String, String>,
}

impl Normalizer {
    fn new() -> Self {
        Normalizer {
            entry_ids: HashMap::new(),
        }
    }

    fn entry_id(&mut self, id: &str) -> String {
        let next = format!("<e{}>", self.entry_ids.len() + 1);
        self.entry_ids.entry(id.to_string()).or_insert(next).clone()
    }

    fn value(&mut self, key: &str, v: &Value) -> Value {
        match (key, v) {
            ("timestamp", _) => json!("<time>"),
            ("usage", _) => json!("<usage>"),
            ("baseUrl", _) => json!("<url>"),
            ("sessionFile", _) => json!("<file>"),
            ("sessionId", _) => json!("<session id>"),
            ("id" | "toolCallId", Value::String(s)) if s.starts_with("call_") => json!("<call>"),
            ("entryId" | "firstKeptEntryId", Value::String(s)) => json!(self.entry_id(s)),
            (_, Value::Object(map)) => {
                let mut out = serde_json::Map::new();
                for (k, v) in map {
                    // pi 0.73.1 does not record the provider's response id.
                    if k == "responseId" {
                        continue;
                    }
                    out.insert(k.clone(), self.value(k, v));
                }
                Value::Object(out)
            }
            (_, Value::Array(items)) => {
                Value::Array(items.iter().map(|i| self.value("", i)).collect())
            }
            _ => v.clone(),
        }
    }

    /// One line of a transcript rendering; streaming deltas are left out (their chunking
    /// is the mock server's choice).
    fn line(&mut self, direction: &str, message: &Value) -> Option<String> {
        if message["type"] == "message_update" {
            return None;
        }
        Some(format!("{direction} {}", self.value("", message)))
    }
}

/// Replays the `in` lines of one of pi's RPC transcripts against our binary and returns
/// (pi's transcript, ours), both normalized.
fn replay(scenario: &str, prepare: impl Fn(&Path)) -> (String, String, RpcProject) {
    let dir = fixtures().join("rpc").join(scenario);
    let script = read_json(&dir.join("script.json"));
    let models = read_json(&dir.join("models.json"));
    let project = RpcProject::new(&script, Some(models), None);
    prepare(&project.cwd());
    let transcript: Vec<Value> = json_lines(&dir.join("rpc-transcript.jsonl"));

    // pi's side, split into segments: one command and what followed it.
    let mut segments: Vec<(Value, Vec<Value>)> = Vec::new();
    for record in &transcript {
        match record["dir"].as_str() {
            Some("in") => segments.push((record["msg"].clone(), Vec::new())),
            _ => segments.last_mut().unwrap().1.push(record["msg"].clone()),
        }
    }

    let mut theirs = Normalizer::new();
    let mut ours = Normalizer::new();
    let mut their_text = String::new();
    let mut our_text = String::new();
    // pi's entry ids → ours, learned from `get_fork_messages`, to replay `fork`.
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut client = project.start();
    for (command, outputs) in &segments {
        their_text += &theirs.line(">>", command).unwrap();
        their_text.push('\n');
        for m in outputs {
            if let Some(l) = theirs.line("<<", m) {
                their_text += &l;
                their_text.push('\n');
            }
        }

        let mut ours_command = command.clone();
        if let Some(pi_id) = command["entryId"].as_str() {
            ours_command["entryId"] = json!(id_map[pi_id]);
        }
        our_text += &ours.line(">>", &ours_command).unwrap();
        our_text.push('\n');
        client.send(&ours_command);
        let id = command["id"].clone();
        let waits_for_run = outputs.iter().any(|m| m["type"] == "agent_end");
        let mut responded = false;
        let mut ended = !waits_for_run;
        while !(responded && ended) {
            let m = client.next();
            responded |= m["type"] == "response" && m["id"] == id;
            ended |= m["type"] == "agent_end";
            if let Some(l) = ours.line("<<", &m) {
                our_text += &l;
                our_text.push('\n');
            }
            if m["command"] == "get_fork_messages" {
                let pi_response = outputs.iter().find(|o| o["type"] == "response").unwrap();
                let theirs = pi_response["data"]["messages"].as_array().unwrap();
                let mine = m["data"]["messages"].as_array().unwrap();
                for (t, o) in theirs.iter().zip(mine) {
                    id_map.insert(
                        t["entryId"].as_str().unwrap().into(),
                        o["entryId"].as_str().unwrap().into(),
                    );
                }
            }
        }
    }
    let (status, stderr) = client.close();
    assert!(status.success(), "exit {status:?}: {stderr}");
    (their_text, our_text, project)
}

/// A session file as text: header fields, then one line per entry with ids replaced by
/// `<n>` (the same id gets the same number in every file of one run), so files written
/// by pi and by us can be compared whole.
fn session_shape(files: &[PathBuf]) -> String {
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut paths: HashMap<String, usize> = HashMap::new();
    let mut out = String::new();
    let num = |ids: &mut HashMap<String, usize>, id: &str| {
        let n = ids.len();
        *ids.entry(id.to_string()).or_insert(n)
    };
    for (i, file) in files.iter().enumerate() {
        paths.insert(file.file_name().unwrap().to_string_lossy().into_owned(), i);
        let lines = json_lines(file);
        let header = &lines[0];
        let parent = header["parentSession"].as_str().map(|p| {
            let name = Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            format!(" parentSession=file{}", paths[&name])
        });
        out += &format!(
            "file{i}: version {} {}\n",
            header["version"],
            parent.unwrap_or_default()
        );
        for e in &lines[1..] {
            let id = num(&mut ids, e["id"].as_str().unwrap());
            let parent = e["parentId"]
                .as_str()
                .map_or("-".to_string(), |p| num(&mut ids, p).to_string());
            let what = match e["type"].as_str().unwrap() {
                "message" => {
                    let m = &e["message"];
                    let text = match m["role"].as_str().unwrap() {
                        "user" => m["content"][0]["text"].to_string(),
                        "bashExecution" => format!("{} → {}", m["command"], m["output"]),
                        "assistant" => format!(
                            "{} {}",
                            m["stopReason"],
                            m["content"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|b| b["type"].as_str().unwrap())
                                .collect::<Vec<_>>()
                                .join("+")
                        ),
                        _ => String::new(),
                    };
                    format!("message {} {text}", m["role"].as_str().unwrap())
                }
                "model_change" => format!("model_change {}", e["modelId"]),
                "thinking_level_change" => format!("thinking_level_change {}", e["thinkingLevel"]),
                "session_info" => format!("session_info {}", e["name"]),
                other => other.to_string(),
            };
            out += &format!("  {id} <- {parent}: {what}\n");
        }
    }
    out
}

fn corpus_files(scenario: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("corpus").join(scenario))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !p.ends_with("requests.jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn pi_fork_transcript_replays_identically_and_leaves_the_same_session_files() {
    let (theirs, ours, project) = replay("fork", |cwd| {
        std::fs::write(cwd.join("conf.txt"), "x=1\n").unwrap();
    });
    assert_eq!(ours, theirs);
    // Original, fork (parentSession = original, same ids up to Prompt 2) and clone of the
    // fork (parentSession = fork, the whole branch with the same ids).
    let files = project.session_files();
    assert_eq!(files.len(), 3, "{files:?}");
    assert_eq!(session_shape(&files), session_shape(&corpus_files("fork")));
    // The bash output reached the model as pi sends it.
    let requests = project.server.requests();
    let pi_requests = json_lines(&fixtures().join("corpus/fork/requests.jsonl"));
    let bash_text = |body: &Value| {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|m| {
                let text = m["content"][0]["text"].as_str().or(m["content"].as_str())?;
                text.starts_with("Ran `ls`").then(|| text.to_string())
            })
            .unwrap()
    };
    assert_eq!(
        bash_text(&requests[4].body),
        bash_text(&pi_requests[4]["body"])
    );
}

#[test]
fn pi_session_name_and_model_transcript_replays_identically() {
    let (theirs, ours, project) = replay("session-name-and-model-change", |_| {});
    assert_eq!(ours, theirs);
    let files = project.session_files();
    assert_eq!(
        session_shape(&files),
        session_shape(&corpus_files("session-name-and-model-change"))
    );
    let settings = read_json(&project.agent_dir().join("settings.json"));
    assert_eq!(settings["defaultModel"], "mock-model");
    assert_eq!(settings["defaultThinkingLevel"], "high");
}

// ----- behaviour beyond the corpus -----

/// One line per message: responses with their outcome, events with what identifies them.
/// Streaming deltas are left out.
fn brief(messages: &[Value]) -> String {
    messages
        .iter()
        .filter(|m| m["type"] != "message_update")
        .map(|m| {
            let kind = m["type"].as_str().unwrap_or("?");
            match kind {
                "response" => match m["success"].as_bool() {
                    Some(true) => format!("response {}", m["command"].as_str().unwrap()),
                    _ => format!(
                        "response {} error: {}",
                        m["command"].as_str().unwrap_or("-"),
                        m["error"].as_str().unwrap()
                    ),
                },
                "message_start" | "message_end" => {
                    let message = &m["message"];
                    let role = message["role"].as_str().unwrap();
                    match role {
                        "user" => format!("{kind} user {}", message["content"][0]["text"]),
                        "assistant" => format!("{kind} assistant {}", message["stopReason"]),
                        _ => format!("{kind} {role}"),
                    }
                }
                "queue_update" => format!("queue_update {} {}", m["steering"], m["followUp"]),
                "tool_execution_start" | "tool_execution_end" => {
                    format!("{kind} {}", m["toolName"].as_str().unwrap())
                }
                "compaction_start" | "compaction_end" => {
                    format!("{kind} {}", m["reason"].as_str().unwrap())
                }
                _ => kind.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text of the last user message of a recorded request (OpenAI chat format).
fn last_user_text(body: &Value) -> String {
    let m = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    m["content"][0]["text"]
        .as_str()
        .or(m["content"].as_str())
        .unwrap()
        .to_string()
}

fn messages_of(file: &Path) -> Vec<Value> {
    json_lines(file)
        .into_iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"].clone())
        .collect()
}

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
    response abort
    "#);
    let state = c.ok(json!({"type": "get_state"}));
    assert_eq!(state["isStreaming"], false);
    // The next prompt runs normally.
    let events = c.prompt("BRAVO");
    assert_eq!(
        events.last().unwrap()["messages"][1]["content"][0]["text"],
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
        ["summary", "firstKeptEntryId", "tokensBefore", "details"]
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
    let tree = c.ok(json!({"type": "get_tree"}));
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
    let tree = c.ok(json!({"type": "get_tree"}));
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
    let tree = c.ok(json!({"type": "get_tree"}));
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
    response export_html error: HTML export is not available in pi-rs yet (export_html will work once the exporter lands)
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
