//! Extensions through the session API, set up by the same startup code the binary uses:
//! what print mode cannot reach (pi sends `/compact` in print mode to the model as text;
//! `/tree`, `/new`, `/resume`, `/fork` and dialogs belong to the interactive and RPC front
//! ends). An extension that records every event it gets shows when each one fires.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;

use crate::support::extensions::{example, script};
use crate::support::pi_project::{Project, conversation, jsonl};
use pi::cli::args::parse;
use pi::cli::startup::session_config;
use pi::core::agent_session::{AgentSession, NavigateOptions, PromptOptions};
use pi::core::events::{EventJsonEncoder, SessionEvent};
use pi::core::factory::{ExtensionHosting, ResourceLoading, SessionFactory};
use pi::core::paths::AgentPaths;
use pi::extensions::{HostMode, SessionStartReason, UiMethod, UiResponse};
use pi::session::SessionManager;
use serde_json::{Value, json};

/// Builds the session the way `pi` does, for print mode (or with a UI), with `argv`.
fn start(
    p: &Project,
    runtime: &tokio::runtime::Runtime,
    argv: &[&str],
    has_ui: bool,
) -> AgentSession {
    let mut full: Vec<&str> = vec!["--provider", "mock", "--model", "mock-model"];
    full.extend_from_slice(argv);
    let args = parse(full).unwrap();
    let hosting = ExtensionHosting {
        mode: if has_ui {
            HostMode::Interactive
        } else {
            HostMode::Print
        },
        has_ui,
    };
    let factory = std::sync::Arc::new(SessionFactory::new(
        session_config(&args),
        p.cwd(),
        AgentPaths::new(p.agent_dir()),
        hosting,
    ));
    let manager = SessionManager::create(p.cwd(), p.dir.path().join("sessions")).unwrap();
    let built = runtime
        .block_on(factory.build(manager, ResourceLoading::Full))
        .unwrap();
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    built.session
}

fn entries_of(path: &Path) -> Vec<Value> {
    jsonl(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn custom_compaction_is_stored_from_hook_without_a_model_call() {
    require!("python3");
    let p = Project::new(json!({"sequence": [
        {"text": "Read it."}, {"text": "Changed it."}, {"text": "Tested it."},
        {"text": "Carrying on."}
    ]}));
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"compaction": {"keepRecentTokens": 10}}).to_string(),
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let extension = example("custom-compaction").display().to_string();
    let session = start(&p, &runtime, &["-e", &extension], false);
    let compaction_end = runtime.block_on(async {
        let mut events = session.subscribe();
        session.start_extensions(SessionStartReason::Startup).await;
        for prompt in ["Read a.txt", "Change a.txt", "Test it"] {
            session
                .prompt(prompt, PromptOptions::default())
                .await
                .unwrap();
        }
        let result = session.compact(None).await.unwrap();
        assert!(
            result
                .summary
                .starts_with("## Summary of the earlier conversation")
        );
        session
            .prompt("And now?", PromptOptions::default())
            .await
            .unwrap();
        session.shutdown().await;
        let mut encoder = EventJsonEncoder::new();
        let mut end = None;
        while let Ok(event) = events.try_recv() {
            if matches!(event, SessionEvent::CompactionEnd { .. }) {
                end = encoder.encode(&event);
            }
        }
        end.unwrap()
    });
    // Only the prompts reached the model: the summary came from the extension, and the
    // request after the compaction starts with it.
    let requests = p.requests();
    assert_eq!(requests.len(), 4);
    let after = conversation(&requests[3]);
    assert!(
        after.starts_with("user: The conversation history before this point was compacted"),
        "{after}"
    );
    assert!(
        after.contains("## Summary of the earlier conversation"),
        "{after}"
    );
    let file = session.with_session(|m| m.session_file().unwrap().to_path_buf());
    let entries = entries_of(&file);
    let compaction = entries.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(compaction["fromHook"], true);
    assert_eq!(
        compaction["details"],
        json!({"writtenBy": "custom-compaction example", "requests": 1})
    );
    insta::assert_snapshot!(compaction["summary"].as_str().unwrap(), @r"
    ## Summary of the earlier conversation

    The user asked (1 requests):
    - Read a.txt

    Files read: none
    Files changed: none
    ");
    assert_eq!(compaction_end["result"]["details"], compaction["details"]);
    assert_eq!(compaction_end["aborted"], false);
}

/// Logs one line per event to `events.log` in the working folder and writes the branch
/// summary of `/tree` itself.
const RECORDER: &str = r##"#!/usr/bin/env python3
import json, sys

log = open("events.log", "a")

def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()

def describe(e):
    t = e["type"]
    if t == "session_start":
        return f"{e['reason']} previous={'previousSessionFile' in e}"
    if t == "session_shutdown":
        return f"{e['reason']} target={'targetSessionFile' in e}"
    if t == "session_before_switch":
        return e["reason"]
    if t == "session_before_fork":
        return e["position"]
    if t == "session_before_tree":
        p = e["preparation"]
        return f"summary={p['userWantsSummary']} entries={len(p['entriesToSummarize'])}"
    if t == "session_tree":
        return f"fromExtension={e.get('fromExtension')} summary={'summaryEntry' in e}"
    if t in ("turn_start", "turn_end"):
        return f"#{e['turnIndex']}"
    if t == "context":
        return f"{len(e['messages'])} messages"
    if t in ("tool_call", "tool_result"):
        return e["toolName"]
    if t == "model_select":
        previous = (e.get("previousModel") or {}).get("id")
        return f"{previous} -> {e['model']['id']} ({e['source']})"
    if t == "thinking_level_select":
        return f"{e['previousLevel']} -> {e['level']}"
    return ""

sys.stdin.readline()
send({"type": "register", "events": [
    "session_start", "session_shutdown", "session_before_switch", "session_before_fork",
    "session_before_tree", "session_tree", "agent_start", "agent_end", "turn_start",
    "turn_end", "context", "tool_call", "tool_result", "model_select",
    "thinking_level_select"]})
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") != "event":
        continue
    e = m["event"]
    log.write((e["type"] + " " + describe(e)).strip() + "\n")
    log.flush()
    result = None
    if e["type"] == "session_before_tree":
        result = {"summary": {"summary": "Left a branch about listing files.",
                              "details": {"by": "recorder"}}}
    if "id" in m:
        send({"type": "response", "id": m["id"], "result": result})
"##;

#[test]
fn lifecycle_events_fire_where_pi_fires_them() {
    require!("python3");
    let p = Project::new(json!({
        "sequence": [
            {"text": "Listing.", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
            {"text": "Listed."},
            {"text": "Second answer."}
        ],
        "default": {"text": "ok"}
    }));
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", p.server.url()), "api": "openai-completions",
        "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [
            {"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000},
            {"id": "mock-thinker", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000}
        ]
    }}});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    let recorder = script(&p.dir.path().join("home"), "recorder", RECORDER);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let session = start(&p, &runtime, &["-e", recorder.to_str().unwrap()], false);
    let file = runtime.block_on(async {
        session.start_extensions(SessionStartReason::Startup).await;
        session
            .prompt("List the files", PromptOptions::default())
            .await
            .unwrap();
        session
            .prompt("Again", PromptOptions::default())
            .await
            .unwrap();
        let first_user = session.fork_messages()[0].0.clone();
        let navigated = session
            .navigate_tree(
                &first_user,
                NavigateOptions {
                    summarize: true,
                    ..NavigateOptions::default()
                },
            )
            .await
            .unwrap();
        assert!(!navigated.cancelled);
        let thinker = session.find_model("mock", "mock-thinker").unwrap();
        session.set_model(thinker).unwrap();
        let file = session.with_session(|m| m.session_file().unwrap().to_path_buf());
        session.new_session(None).await.unwrap();
        let plain = session.find_model("mock", "mock-model").unwrap();
        session.set_model(plain).unwrap();
        session.switch_session(&file).await.unwrap();
        session.fork(&first_user).await.unwrap();
        session.shutdown().await;
        file
    });
    let log = std::fs::read_to_string(p.cwd().join("events.log")).unwrap();
    // `entries=6`: the recorder writes events.log in the project while the run's `bash`
    // call runs, so a file checkpoint entry follows its result (docs/checkpoints.md).
    insta::assert_snapshot!(log, @r"
    session_start startup previous=False
    agent_start
    turn_start #0
    context 1 messages
    tool_call bash
    tool_result bash
    turn_end #0
    turn_start #1
    context 3 messages
    turn_end #1
    agent_end
    agent_start
    turn_start #0
    context 5 messages
    turn_end #0
    agent_end
    session_before_tree summary=True entries=6
    session_tree fromExtension=True summary=True
    model_select mock-model -> mock-thinker (set)
    session_before_switch new
    session_shutdown new target=False
    session_start new previous=True
    model_select mock-thinker -> mock-model (set)
    session_before_switch resume
    session_shutdown resume target=True
    session_start resume previous=True
    model_select mock-model -> mock-thinker (restore)
    session_before_fork before
    session_shutdown fork target=False
    session_start fork previous=True
    session_shutdown quit target=False
    ");
    // The extension's branch summary is stored like pi stores one from a hook.
    let summary = entries_of(&file)
        .into_iter()
        .find(|e| e["type"] == "branch_summary")
        .unwrap();
    assert_eq!(summary["summary"], "Left a branch about listing files.");
    assert_eq!(summary["fromHook"], true);
    assert_eq!(summary["details"], json!({"by": "recorder"}));
}

#[test]
fn dialogs_reach_the_front_end_that_takes_the_ui_requests() {
    require!("python3");
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf sentinel"}}]},
        {"text": "Removed."}
    ]}));
    p.write("sentinel", "x");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let gate = example("permission-gate").display().to_string();
    let session = start(&p, &runtime, &["-e", &gate], true);
    let titles = runtime.block_on(async {
        let mut requests = session.take_ui_requests().unwrap();
        assert!(session.take_ui_requests().is_none());
        let front_end = tokio::spawn(async move {
            let mut titles = Vec::new();
            while let Some(request) = requests.recv().await {
                if let UiMethod::Select { title, options, .. } = &request.method {
                    titles.push(format!("{title} {options:?}"));
                    request
                        .reply
                        .unwrap()
                        .send(UiResponse::Value("Allow".into()));
                }
            }
            titles
        });
        session.start_extensions(SessionStartReason::Startup).await;
        session
            .prompt("Remove the sentinel", PromptOptions::default())
            .await
            .unwrap();
        session.shutdown().await;
        drop(session);
        front_end.await.unwrap()
    });
    assert_eq!(
        titles,
        ["Dangerous command:\n\n  rm -rf sentinel\n\nRun it? [\"Block\", \"Allow\"]"]
    );
    assert!(!p.cwd().join("sentinel").exists(), "the user allowed it");
}
