//! `AgentSession` end to end against the loopback model server: real tools on a temp
//! project, the session file on disk, retries, compaction and tree navigation.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::session::mock_agent_session;
use pi::ai::message::StopReason;
use pi::ai::model::ThinkingLevel;
use pi::ai::models::ModelRegistry;
use pi::core::agent_session::{AgentSession, AgentSessionOptions, NavigateOptions, PromptOptions};
use pi::core::events::SessionEvent;
use pi::core::paths::AgentPaths;
use pi::core::settings::Settings;
use pi::messages::AgentMessage;
use pi::session::SessionManager;
use pi::session::entry::SessionEntry;
use serde_json::{Value, json};

struct Env {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
    sessions: PathBuf,
    server: MockLlm,
}

fn env(script: Value, settings: Value) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", server.url()), "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    let sessions = dir.path().join("sessions");
    Env {
        _dir: dir,
        agent,
        cwd,
        sessions,
        server,
    }
}

fn session(env: &Env) -> AgentSession {
    mock_agent_session(
        &env.agent,
        &env.cwd,
        &env.sessions,
        &["read", "bash", "edit", "write"],
    )
}

fn session_file_entries(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn roles(messages: &[AgentMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.role()).collect()
}

#[tokio::test]
async fn read_edit_bash_task_changes_files_and_writes_a_v3_session() {
    let e = env(
        json!({"sequence": [
            {"text": "Let me read the file first.", "tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
            {"text": "I'll fix the greeting.", "tool_calls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}}]},
            {"tool_calls": [{"name": "bash", "arguments": {"command": "cat a.txt && wc -l a.txt"}}]},
            {"text": "Done: a.txt now says 'hello world'."}
        ]}),
        json!({}),
    );
    std::fs::write(e.cwd.join("a.txt"), "hello wrld\nsecond line\n").unwrap();
    let s = session(&e);
    let mut events = s.subscribe();
    s.prompt("Please fix the typo in a.txt", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(e.cwd.join("a.txt")).unwrap(),
        "hello world\nsecond line\n"
    );
    assert_eq!(
        s.last_assistant_text().as_deref(),
        Some("Done: a.txt now says 'hello world'.")
    );
    let file = s.with_session(|m| m.session_file().unwrap().to_path_buf());
    let lines = session_file_entries(&file);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["version"], 3);
    let kinds: Vec<String> = lines[1..]
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "message" => l["message"]["role"].as_str().unwrap().to_string(),
            other => other.to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "toolResult",
            // The edit's file checkpoint (docs/checkpoints.md); read and bash changed nothing.
            "custom",
            "assistant",
            "toolResult",
            "assistant"
        ]
    );
    assert_eq!(lines[6]["customType"], "pi-rs.checkpoint");
    // The bash result holds the edited file's content.
    assert!(
        lines[8]["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello world")
    );
    // Four requests; the last carried the whole history.
    let requests = e.server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[3].body["messages"].as_array().unwrap().len(), 8);
    // Events end with agent_end, then pi 1.6's agent_settled.
    let mut tail = Vec::new();
    while let Ok(ev) = events.try_recv() {
        tail.push(ev);
        if tail.len() > 2 {
            tail.remove(0);
        }
    }
    assert!(
        matches!(
            tail.as_slice(),
            [
                SessionEvent::Agent(pi::agent::AgentEvent::AgentEnd { .. }),
                SessionEvent::AgentSettled { aborted: false }
            ]
        ),
        "{tail:?}"
    );
}

#[tokio::test]
async fn transient_error_is_retried_and_the_reply_becomes_a_child_of_the_failed_one() {
    let e = env(
        json!({"sequence": [
            {"text": "partial", "drop_after_bytes": 120},
            {"text": "recovered answer"}
        ]}),
        json!({"retry": {"baseDelayMs": 10}}),
    );
    let s = session(&e);
    let mut events = s.subscribe();
    s.prompt("hi", PromptOptions::default()).await.unwrap();
    assert_eq!(s.last_assistant_text().as_deref(), Some("recovered answer"));
    // The failed answer stays in the file; the retry is its child; the agent's context
    // does not contain it.
    let (path, leaf_parent_is_error) = s.with_session(|m| {
        let path = m.path(None);
        let leaf = path.last().unwrap();
        let parent = m
            .entry(&pi::session::entry::EntryId::from(leaf.parent_id().unwrap()))
            .unwrap();
        let is_error = matches!(parent, SessionEntry::Message(p) if matches!(&p.message, AgentMessage::Assistant(a) if a.stop_reason == StopReason::Error));
        (path.len(), is_error)
    });
    assert_eq!(path, 3);
    assert!(leaf_parent_is_error);
    assert_eq!(roles(&s.messages()), ["user", "assistant"]);
    let mut saw_start = false;
    let mut saw_end_success = false;
    while let Ok(ev) = events.try_recv() {
        match ev {
            SessionEvent::AutoRetryStart { attempt: 1, .. } => saw_start = true,
            SessionEvent::AutoRetryEnd { success: true, .. } => saw_end_success = true,
            _ => {}
        }
    }
    assert!(saw_start && saw_end_success);
}

#[tokio::test]
async fn manual_compaction_summarizes_and_the_next_request_starts_with_the_summary() {
    let e = env(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "## Goal\nTest compaction."}}],
            "sequence": [
                {"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"}, {"text": "after compaction"}
            ]
        }),
        json!({"compaction": {"keepRecentTokens": 10}}),
    );
    let s = session(&e);
    for p in ["one", "two", "three"] {
        s.prompt(p, PromptOptions::default()).await.unwrap();
    }
    let result = s.compact(Some("Focus on X")).await.unwrap();
    assert!(result.summary.starts_with("## Goal\nTest compaction."));
    let summary_request = e.server.requests().last().unwrap().body.clone();
    let text = summary_request.to_string();
    assert!(text.contains("Additional focus: Focus on X"), "{text}");
    assert_eq!(roles(&s.messages())[0], "compactionSummary");
    s.prompt("four", PromptOptions::default()).await.unwrap();
    let last = e.server.requests().last().unwrap().body.clone();
    let first_user = &last["messages"][1]["content"][0]["text"];
    assert!(
        first_user
            .as_str()
            .unwrap()
            .starts_with("The conversation history before this point was compacted"),
        "{first_user}"
    );
}

#[tokio::test]
async fn navigating_to_the_first_user_message_with_a_summary_branches_in_place() {
    let e = env(
        json!({
            "rules": [{"match": "<conversation>", "reply": {"text": "Explored: said hello twice."}}],
            "sequence": [{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]
        }),
        json!({}),
    );
    let s = session(&e);
    s.prompt("first", PromptOptions::default()).await.unwrap();
    s.prompt("second", PromptOptions::default()).await.unwrap();
    let first_user = s.with_session(|m| {
        m.path(None)
            .iter()
            .find(|e| matches!(e, SessionEntry::Message(x) if x.message.role() == "user"))
            .unwrap()
            .id()
            .to_string()
    });
    let result = s
        .navigate_tree(
            &first_user,
            NavigateOptions {
                summarize: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(result.editor_text.as_deref(), Some("first"));
    assert!(result.summary_entry_id.is_some());
    assert_eq!(roles(&s.messages()), ["branchSummary"]);
    s.prompt("alternative", PromptOptions::default())
        .await
        .unwrap();
    let last = e.server.requests().last().unwrap().body.clone();
    let msgs = last["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{last}");
    assert!(
        msgs[1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Explored: said hello twice.")
    );
    assert_eq!(msgs[2]["content"][0]["text"], "alternative");
}

#[tokio::test]
async fn missing_key_is_a_clear_error_naming_the_variable() {
    let e = env(json!({"sequence": []}), json!({}));
    let registry = ModelRegistry::builtin_only();
    let model = registry
        .all()
        .iter()
        .find(|m| m.provider == "anthropic")
        .cloned();
    let s = AgentSession::new(AgentSessionOptions {
        cwd: e.cwd.clone(),
        paths: AgentPaths::new(e.agent.clone()),
        settings: Settings::in_memory(json!({})),
        registry,
        session: SessionManager::in_memory(&e.cwd),
        model,
        thinking: ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tool_names: Vec::new(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    });
    // SAFETY-free check: only fails if the machine running tests has the key set.
    if std::env::var("ANTHROPIC_API_KEY").is_ok() || std::env::var("ANTHROPIC_OAUTH_TOKEN").is_ok()
    {
        return;
    }
    let err = s.prompt("hi", PromptOptions::default()).await.unwrap_err();
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(err.contains("/login"), "{err}");
}

#[tokio::test]
async fn abort_mid_stream_keeps_the_partial_answer() {
    let e = env(
        json!({"sequence": [{"text": "a long answer that streams slowly", "chunk_size": 2, "delay_ms": 50}]}),
        json!({}),
    );
    let s = session(&e);
    let s2 = s.clone();
    let mut events = s.subscribe();
    let task = tokio::spawn(async move { s2.prompt("go", PromptOptions::default()).await });
    // Abort once some text has arrived.
    loop {
        match tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap()
        {
            Some(SessionEvent::Agent(pi::agent::AgentEvent::MessageUpdate { .. })) => break,
            Some(_) => {}
            None => panic!("events ended"),
        }
    }
    tokio::time::sleep(Duration::from_millis(120)).await;
    s.abort();
    task.await.unwrap().unwrap();
    let messages = s.messages();
    let AgentMessage::Assistant(a) = messages.last().unwrap() else {
        panic!("expected assistant")
    };
    assert_eq!(a.stop_reason, StopReason::Aborted);
    assert!(!a.text().is_empty(), "partial text kept");
}

#[tokio::test]
async fn a_new_model_scope_is_cycled_at_once_and_keeps_the_levels_already_given() {
    use pi::ai::models::resolve::ScopedModel;
    use pi::core::agent_session::Direction;
    let env = env(json!({"sequence": [{"text": "unused"}]}), json!({}));
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("{}/v1", env.server.url()), "api": "openai-completions", "apiKey": "mock",
        "models": [
            {"id": "alpha", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000},
            {"id": "beta", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000},
            {"id": "gamma", "reasoning": true, "contextWindow": 200000, "maxTokens": 4000}
        ]
    }}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let registry = ModelRegistry::load(&env.agent);
    let find = |id: &str| registry.find("mock", id).cloned().unwrap();
    let (alpha, beta, gamma) = (find("alpha"), find("beta"), find("gamma"));
    let session = AgentSession::new(AgentSessionOptions {
        cwd: env.cwd.clone(),
        paths: AgentPaths::new(env.agent.clone()),
        settings: Settings::load(&env.agent, &env.cwd, pi::core::trust::ProjectTrust::Trusted),
        registry,
        session: SessionManager::create(&env.cwd, &env.sessions).unwrap(),
        model: Some(alpha.clone()),
        thinking: ThinkingLevel::Low,
        // As from `--models alpha:high,beta`.
        scoped_models: vec![
            ScopedModel {
                model: alpha.clone(),
                thinking: Some(ThinkingLevel::High),
            },
            ScopedModel {
                model: beta,
                thinking: None,
            },
        ],
        tool_names: Vec::new(),
        extra_tools: Vec::new(),
        resources: Default::default(),
        hooks: None,
    });
    // What /scoped-models applies: gamma, then alpha (beta left out).
    session.set_scoped_models(vec![gamma, alpha]);
    let ids =
        |s: &AgentSession| -> Vec<String> { s.scoped_models().into_iter().map(|m| m.id).collect() };
    assert_eq!(ids(&session), ["gamma", "alpha"]);
    let cycled = |s: &AgentSession| {
        let c = s.cycle_model(Direction::Forward).unwrap().unwrap();
        (c.model.id, c.thinking, c.is_scoped)
    };
    // alpha → gamma (no level of its own: the current one stays) → alpha at its `high`.
    assert_eq!(
        cycled(&session),
        ("gamma".to_string(), ThinkingLevel::Low, true)
    );
    assert_eq!(
        cycled(&session),
        ("alpha".to_string(), ThinkingLevel::High, true)
    );
    // An empty scope means every model with credentials again.
    session.set_scoped_models(Vec::new());
    assert!(session.scoped_models().is_empty());
    assert_eq!(
        cycled(&session),
        ("beta".to_string(), ThinkingLevel::High, false)
    );
}

/// A client that sends its next prompt the moment it sees `agent_end` (the RPC bench
/// does) must find the session idle. The loop used to return, and mark the session idle,
/// only after `agent_end` was out, so now and then such a prompt was refused as "already
/// processing" and the client waited forever for its answer (issue 19: the "stall" at
/// 50,000 turns). A race, so many rounds on worker threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_on_agent_end_is_accepted() {
    let e = env(json!({"default": {"text": "ok"}}), json!({}));
    let s = session(&e);
    let mut events = s.subscribe();
    for round in 0..40 {
        // The session must already be idle when a subscriber gets `agent_end`.
        let task = {
            let s = s.clone();
            tokio::spawn(async move {
                s.prompt(&format!("question {round}"), PromptOptions::default())
                    .await
            })
        };
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .expect("agent_end within 20 s")
                .expect("event stream open");
            if matches!(
                ev,
                SessionEvent::Agent(pi::agent::AgentEvent::AgentEnd { .. })
            ) {
                break;
            }
        }
        assert!(
            !s.is_streaming(),
            "round {round}: still streaming after agent_end"
        );
        let next = s.clone();
        let probe =
            tokio::spawn(async move { next.prompt("probe", PromptOptions::default()).await });
        assert_eq!(
            probe.await.unwrap(),
            Ok(()),
            "round {round}: prompt refused"
        );
        task.await.unwrap().unwrap();
        // Drain the probe's own events up to its agent_end.
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(20), events.recv())
                .await
                .unwrap()
                .unwrap();
            if matches!(
                ev,
                SessionEvent::Agent(pi::agent::AgentEvent::AgentEnd { .. })
            ) {
                break;
            }
        }
    }
    assert_eq!(e.server.requests().len(), 80);
}
