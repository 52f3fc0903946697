//! Sessions written by the real pi 1.6.0 (`tests/fixtures/corpus-1.6`, with every request
//! body pi sent): every file loads fully typed, and for every conversation request pi sent
//! there is an entry whose context gives the same request body, byte for byte: the same
//! messages, the same system prompt (replayed from the file's system messages and
//! compaction checkpoints), the same tools and the same output budget.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::fs;
use std::path::{Path, PathBuf};

use pi::ai::message::Context;
use pi::ai::model::{Api, InputKind, Model, ThinkingLevel};
use pi::ai::providers::{StreamOptions, openai_completions};
use pi::messages::{AgentMessage, convert_to_llm};
use pi::session::entry::{EntryId, SessionEntry};
use pi::session::manager::SessionManager;
use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus-1.6")
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && !p.ends_with("requests.jsonl")
                && !p.ends_with("rpc-transcript.jsonl")
        })
        .collect();
    files.sort();
    files
}

fn scenarios() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn open_copy(file: &Path, dir: &Path) -> SessionManager {
    let copy = dir.join(file.file_name().unwrap());
    fs::copy(file, &copy).unwrap();
    SessionManager::open(&copy, None).unwrap()
}

/// The scenario's model as its models.json declares it (provider `mock`,
/// openai-completions, `supportsDeveloperRole:false`).
fn model(scenario: &Path, id: &str) -> Model {
    let config: Value = serde_json::from_str(
        &fs::read_to_string(scenario.join("pi-agent-config/models.json")).unwrap(),
    )
    .unwrap();
    let provider = &config["providers"]["mock"];
    let entry = provider["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap();
    let input = match entry["input"].as_array() {
        Some(kinds) if kinds.iter().any(|k| k == "image") => {
            vec![InputKind::Text, InputKind::Image]
        }
        _ => vec![InputKind::Text],
    };
    Model {
        id: id.into(),
        name: id.into(),
        api: Api::OpenAiCompletions,
        provider: "mock".into(),
        base_url: provider["baseUrl"].as_str().unwrap().into(),
        reasoning: entry["reasoning"].as_bool().unwrap_or(false),
        thinking_level_map: None,
        input,
        cost: Default::default(),
        context_window: entry["contextWindow"].as_u64().unwrap(),
        max_tokens: entry["maxTokens"].as_u64().unwrap(),
        headers: Default::default(),
        compat: Some(provider["compat"].clone()),
        extras: Default::default(),
    }
}

/// The request body pi-rs builds from the context at the session's current leaf (the
/// prompt and tools replayed from the system messages), and its tools.
fn our_request(session: &SessionManager, model: &Model) -> (Value, Vec<Value>) {
    let context = session.build_session_context();
    let system = context
        .system_state()
        .expect("a pi 1.6 context has a prompt");
    let ctx = Context {
        system_prompt: Some(system.prompt()),
        messages: convert_to_llm(&context.messages),
        tools: system.tool_specs(),
    };
    let options = StreamOptions {
        thinking: ThinkingLevel::Off,
        ..StreamOptions::default()
    };
    let body = openai_completions::build_body(
        model,
        &ctx,
        &options,
        &openai_completions::Compat::for_model(model),
    );
    let tools = system
        .tools
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name, "description": t.description, "parameters": t.parameters
            })
        })
        .collect();
    (body, tools)
}

/// pi's tools as `{name, description, parameters}`.
fn their_tools(body: &Value) -> Vec<Value> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = &t["function"];
            serde_json::json!({
                "name": f["name"], "description": f["description"], "parameters": f["parameters"]
            })
        })
        .collect()
}

#[test]
fn every_pi16_session_loads_fully_typed_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let mut summary = String::new();
    for scenario in scenarios() {
        for file in session_files(&scenario) {
            let s = open_copy(&file, dir.path());
            assert!(
                s.load_warnings().is_empty(),
                "{file:?}: {:?}",
                s.load_warnings()
            );
            let lines = fs::read_to_string(&file).unwrap().lines().count() - 1;
            assert_eq!(s.entry_count(), lines, "{file:?}");
            let mut systems = 0;
            for entry in s.entries() {
                assert!(!matches!(entry, SessionEntry::Unknown(_)), "{entry:?}");
                if let Some(message) = entry.message() {
                    assert!(!matches!(message, AgentMessage::Unknown(_)), "{message:?}");
                    systems += usize::from(matches!(message, AgentMessage::System(_)));
                }
            }
            let context = s.build_session_context();
            let state = context.system_state().unwrap();
            summary.push_str(&format!(
                "{}/{}: entries={} system={} context={} sections={} tools={}\n",
                scenario.file_name().unwrap().to_string_lossy(),
                &file.file_name().unwrap().to_string_lossy()[..24],
                s.entry_count(),
                systems,
                context.messages.len(),
                state.sections.keys().cloned().collect::<Vec<_>>().join(","),
                state.tool_names().join(","),
            ));
        }
    }
    insta::assert_snapshot!(summary, @r"
    aborted-stream/2026-12-01T22-04-21-903Z: entries=13 system=1 context=11 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    basic-tools/2026-12-01T21-58-49-775Z: entries=20 system=1 context=18 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    compaction-manual/2026-12-01T22-00-55-787Z: entries=20 system=1 context=6 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    fork-clone/2026-12-01T22-03-19-477Z: entries=14 system=1 context=12 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    fork-clone/2026-12-01T22-03-20-867Z: entries=9 system=1 context=7 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    fork-clone/2026-12-01T22-03-21-029Z: entries=11 system=1 context=9 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    system-patches/2026-12-01T22-05-41-245Z: entries=14 system=4 context=12 sections=preamble,cwd tools=read,bash
    thinking/2026-12-01T22-00-13-056Z: entries=9 system=1 context=7 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    tree-branch-summary/2026-12-01T22-02-36-014Z: entries=19 system=1 context=6 sections=preamble,tools,rules,docs,cwd tools=read,bash,edit,write
    ");
}

#[test]
fn every_request_pi16_sent_is_the_request_of_some_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = String::new();
    for scenario in scenarios() {
        let name = scenario.file_name().unwrap().to_string_lossy().to_string();
        let mut sessions: Vec<SessionManager> = session_files(&scenario)
            .iter()
            .map(|f| open_copy(f, dir.path()))
            .collect();
        let requests: Vec<Value> = fs::read_to_string(scenario.join("requests.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        report.push_str(&format!("{name}:"));
        for request in &requests {
            let body = &request["body"];
            // Summarization requests carry no tools and are not a session context.
            if body.get("tools").is_none() {
                continue;
            }
            let model = model(&scenario, body["model"].as_str().unwrap());
            // The whole body: messages, prompt, tools (no `strict`), output budget.
            let wanted = (body.clone(), their_tools(body));
            let mut found: Option<EntryId> = None;
            'search: for s in sessions.iter_mut() {
                let ids: Vec<EntryId> = s.heads().map(|h| h.id).collect();
                for id in ids {
                    s.branch(&id).unwrap();
                    if s.build_session_context().system_state().is_none() {
                        continue;
                    }
                    if our_request(s, &model) == wanted {
                        found = Some(id);
                        break 'search;
                    }
                }
            }
            match found {
                Some(_) => report.push_str(&format!(" {}", request["n"])),
                None => {
                    // Show the closest candidate: the last entry of the first file.
                    let s = &mut sessions[0];
                    let last = s.heads().last().unwrap().id;
                    s.branch(&last).unwrap();
                    let (messages, tools) = our_request(s, &model);
                    pretty_assertions::assert_eq!(
                        (&messages, &tools),
                        (&wanted.0, &wanted.1),
                        "{name}: request {} matches no entry",
                        request["n"]
                    );
                    panic!("{name}: request {} matches no entry", request["n"]);
                }
            }
        }
        report.push('\n');
    }
    // Requests 8 of compaction-manual and 6 of tree-branch-summary are summarizations.
    insta::assert_snapshot!(report, @r"
    aborted-stream: 1 2 3 4
    basic-tools: 1 2 3 4 5 6 7 8
    compaction-manual: 1 2 3 4 5 6 7 9
    fork-clone: 1 2 3 4 5 6 7
    system-patches: 1 2 3 4
    thinking: 1 2 3
    tree-branch-summary: 1 2 3 4 5 7 8
    ");
}

#[test]
fn unknown_kinds_and_malformed_system_messages_are_kept_and_named_once_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"01a233a4-63fb-75ba-93e4-232775086e0f","timestamp":"2026-12-01T22:05:41.245Z","cwd":"/x"}"#,
        r#"{"type":"message","id":"aa000001","parentId":null,"timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"system","content":"","sections":{"preamble":"P"},"timestamp":1}}"#,
        r#"{"type":"hologram","id":"aa000002","parentId":"aa000001","timestamp":"2026-12-01T22:05:41.381Z","z":[1]}"#,
        r#"{"type":"message","id":"aa000003","parentId":"aa000002","timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"oracle","content":"?"}}"#,
        r#"{"type":"hologram","id":"aa000004","parentId":"aa000003","timestamp":"2026-12-01T22:05:41.381Z"}"#,
        r#"{"type":"message","id":"aa000005","parentId":"aa000004","timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"system","content":"","sections":{"preamble":["not","text"]},"timestamp":2}}"#,
        r#"{"type":"message","id":"aa000006","parentId":"aa000005","timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"user","content":"hi","timestamp":3}}"#,
    ];
    let text = lines.join("\n") + "\n";
    fs::write(&file, &text).unwrap();
    let mut s = SessionManager::open(&file, None).unwrap();
    let warnings: Vec<String> = s.load_warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("3 entry(ies)") && warnings[0].contains("hologram, message/oracle"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("1 system message(s)"), "{warnings:?}");
    let context = s.build_session_context();
    let roles: Vec<&str> = context.messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["system", "oracle", "user"]);
    assert_eq!(context.system_state().unwrap().prompt(), "P");
    assert_eq!(convert_to_llm(&context.messages).len(), 1);
    // Appending keeps every byte of the lines we did not understand.
    s.append_message(crate::support::session::user("more"))
        .unwrap();
    let after = fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&text));
}

/// Copies the system-patches session of pi 1.6 into `p` (its cwd made `p`'s) and returns
/// the copy's path.
fn resumable_system_patches(p: &crate::support::pi_project::Project) -> PathBuf {
    let scenario = corpus().join("system-patches");
    let file = session_files(&scenario).remove(0);
    let text = fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut header: Value = serde_json::from_str(&lines[0]).unwrap();
    header["cwd"] = Value::from(p.cwd().display().to_string());
    lines[0] = header.to_string();
    let copy = p.dir.path().join("resumed.jsonl");
    fs::write(&copy, lines.join("\n") + "\n").unwrap();
    copy
}

#[test]
fn resuming_a_pi16_branch_keeps_the_tools_it_recorded_with_tools_modifiers_on_top() {
    use crate::support::pi_project::{Project, succeeded, tool_names};
    let p = Project::new(serde_json::json!({"default": {"text": "ok"}}));
    let copy = resumable_system_patches(&p);
    let run = |extra: &[&str]| {
        let before = p.requests().len();
        let out = p
            .pi()
            .arg("--session")
            .arg(&copy)
            .args(extra)
            .args(["-p", "next"])
            .output()
            .unwrap();
        succeeded(&out);
        let requests = p.requests();
        assert_eq!(requests.len(), before + 1);
        tool_names(&requests[before])
    };
    // pi 1.6 recorded `--tools read,bash` in turn 2; turns 3 and 4 kept them.
    assert_eq!(run(&[]), ["read", "bash"]);
    assert_eq!(run(&["--tools", "+grep"]), ["read", "bash", "grep"]);
    // An allowlist fixes the tools whatever the branch recorded.
    assert_eq!(run(&["--tools", "read,edit"]), ["read", "edit"]);
}

/// A pi 1.6 file with usage outside assistant turns: a `usage` entry, a compaction and a
/// branch summary with usage, a tool result with usage, and an abandoned branch.
fn usage_rich_session(cwd: &Path) -> String {
    let usage = |input: u64, output: u64, cost: f64| {
        serde_json::json!({"input": input, "output": output, "cacheRead": 1, "cacheWrite": 2,
            "totalTokens": input + output + 3,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}})
    };
    let ts = "2026-12-01T22:05:41.381Z";
    let assistant = |id: &str, parent: &str, text: &str, u: Value| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts,
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                "api": "openai-completions", "provider": "mock", "model": "mock-model",
                "usage": u, "stopReason": "stop", "timestamp": 2}})
    };
    let user = |id: &str, parent: Value, text: &str| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts,
            "message": {"role": "user", "content": text, "timestamp": 1}})
    };
    let lines = [
        serde_json::json!({"type": "session", "version": 3,
            "id": "01a233a4-63fb-75ba-93e4-232775086e0f", "timestamp": ts,
            "cwd": cwd.display().to_string()}),
        user("aa000001", Value::Null, "one"),
        assistant("aa000002", "aa000001", "abandoned", usage(100, 10, 0.5)),
        assistant("aa000003", "aa000001", "kept", usage(200, 20, 0.25)),
        serde_json::json!({"type": "message", "id": "aa000004", "parentId": "aa000003",
            "timestamp": ts, "message": {"role": "toolResult", "toolCallId": "c1",
                "toolName": "codemode", "content": [{"type": "text", "text": "r"}],
                "isError": false, "usage": usage(30, 3, 0.125), "timestamp": 3}}),
        serde_json::json!({"type": "usage", "id": "aa000005", "parentId": "aa000004",
            "timestamp": ts, "kind": "cache_warm", "provider": "mock", "model": "mock-model",
            "usage": usage(40, 0, 0.0625)}),
        serde_json::json!({"type": "compaction", "id": "aa000006", "parentId": "aa000005",
            "timestamp": ts, "summary": "S", "firstKeptEntryId": "aa000003",
            "tokensBefore": 300, "usage": usage(50, 5, 0.03125)}),
        serde_json::json!({"type": "branch_summary", "id": "aa000007", "parentId": "aa000006",
            "timestamp": ts, "fromId": "aa000002", "summary": "B",
            "usage": usage(60, 6, 0.015625)}),
        user("aa000008", Value::from("aa000007"), "two"),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

#[test]
fn session_stats_count_the_whole_file_with_usage_entries_summaries_and_tool_usage() {
    use crate::support::rpc_client::RpcProject;
    let p = RpcProject::new(&serde_json::json!({"sequence": []}), None, None);
    let file = p.dir.path().join("usage.jsonl");
    fs::write(&file, usage_rich_session(&p.cwd())).unwrap();
    let mut cmd = p.command();
    cmd.arg("--session").arg(&file);
    let mut c = crate::support::rpc_client::RpcClient::spawn(cmd);
    let stats = c.ok(serde_json::json!({"type": "get_session_stats"}));
    let (status, _) = c.close();
    assert!(status.success());
    let fields = |s: &Value| {
        (
            s["userMessages"].clone(),
            s["assistantMessages"].clone(),
            s["toolResults"].clone(),
            s["totalMessages"].clone(),
            s["tokens"].clone(),
            s["cost"].clone(),
        )
    };
    // Inputs 100+200+30+40+50+60, outputs 10+20+3+0+5+6, six usages with cacheRead 1 and
    // cacheWrite 2; costs add up to 0.984375.
    assert_eq!(
        fields(&stats),
        (
            2.into(),
            2.into(),
            1.into(),
            5.into(),
            serde_json::json!({"input": 480, "output": 44, "cacheRead": 6, "cacheWrite": 12, "total": 542}),
            0.984375.into()
        )
    );
}
