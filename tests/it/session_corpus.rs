//! Sessions written by the real pi 0.73.1: every one loads, old formats migrate the way pi
//! migrates them, and for every request pi sent to its model the context we build at the
//! same point of the session is the same conversation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use pi::ai::message::{AssistantBlock, Message, StopReason, UserBlock, UserContent};
use pi::messages::{AgentMessage, convert_to_llm};
use pi::session::entry::{EntryId, SessionEntry};
use pi::session::manager::SessionManager;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !p.ends_with("requests.jsonl"))
        .collect();
    files.sort();
    files
}

fn all_session_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in fs::read_dir(fixtures().join("corpus")).unwrap() {
        files.extend(session_files(&dir.unwrap().path()));
    }
    files.extend(session_files(&fixtures().join("pi-fixtures")));
    files.sort();
    files
}

/// Opens a copy (opening migrates old files in place).
fn open_copy(file: &Path, dir: &Path) -> SessionManager {
    let copy = dir.join(file.file_name().unwrap());
    fs::copy(file, &copy).unwrap();
    SessionManager::open(&copy, None).unwrap()
}

#[test]
fn every_corpus_and_pi_fixture_session_loads_cleanly_and_fully_typed() {
    let dir = tempfile::tempdir().unwrap();
    let files = all_session_files();
    assert_eq!(files.len(), 18);
    let mut summary = String::new();
    for file in &files {
        let s = open_copy(file, dir.path());
        assert!(
            s.load_warnings().is_empty(),
            "{}: {:?}",
            file.display(),
            s.load_warnings()
        );
        let original_entries = fs::read_to_string(file).unwrap().lines().count() - 1;
        assert_eq!(s.entry_count(), original_entries, "{}", file.display());
        for entry in s.entries() {
            assert!(
                !matches!(entry, SessionEntry::Unknown(_)),
                "{}: {entry:?}",
                file.display()
            );
            if let Some(message) = entry.message() {
                assert!(
                    !matches!(message, AgentMessage::Unknown(_)),
                    "{}: {message:?}",
                    file.display()
                );
            }
        }
        let context = s.build_session_context();
        summary.push_str(&format!(
            "{} v{} entries={} context={} model={} thinking={}\n",
            file.file_name().unwrap().to_string_lossy(),
            s.header().version(),
            s.entry_count(),
            context.messages.len(),
            context.model.map_or("-".into(), |m| m.model_id),
            context.thinking_level,
        ));
    }
    insta::assert_snapshot!(summary, @r#"
    2026-11-22T03-39-21-546Z_01a20156-4849-716a-9ef4-cfcfd767c6ff.jsonl v3 entries=19 context=17 model=mock-model thinking=off
    2026-11-22T03-43-28-096Z_01a2015a-0b5f-765d-934d-dc261a34084b.jsonl v3 entries=19 context=5 model=mock-model thinking=off
    2026-11-22T03-44-57-702Z_01a2015b-6965-7555-867f-3b9a3d00151e.jsonl v3 entries=13 context=11 model=mock-model thinking=off
    2026-11-22T03-44-58-209Z_01a2015b-6b61-76a3-b0d4-68d5cd14aa6f.jsonl v3 entries=8 context=6 model=mock-model thinking=off
    2026-11-22T03-44-58-239Z_01a2015b-6b7f-7576-8317-7bb7aea99527.jsonl v3 entries=10 context=8 model=mock-model thinking=off
    hand-made-v1.jsonl v3 entries=11 context=5 model=mock-model thinking=low
    hand-made-v1.migrated-by-pi.jsonl v3 entries=13 context=7 model=mock-model thinking=low
    hand-made-v2.jsonl v3 entries=12 context=6 model=mock-model thinking=off
    hand-made-v2.migrated-by-pi.jsonl v3 entries=14 context=8 model=mock-model thinking=off
    real-v1-before-compaction.jsonl v3 entries=1002 context=446 model=claude-opus-4-5 thinking=off
    real-v1-large-session.jsonl v3 entries=1018 context=914 model=claude-sonnet-4-5 thinking=off
    2026-11-22T03-45-22-509Z_01a2015b-ca4c-70cf-9100-dce6dda6456a.jsonl v3 entries=4 context=2 model=mock-model thinking=off
    2026-11-22T03-45-25-155Z_01a2015b-d4a2-7041-a018-463393c4024d.jsonl v3 entries=5 context=2 model=mock-model thinking=off
    2026-11-22T03-45-27-826Z_01a2015b-df11-71be-b227-62ac91678e24.jsonl v3 entries=6 context=4 model=mock-model thinking=off
    2026-11-22T03-45-11-504Z_01a2015b-9f4f-7245-b2c2-63396575e974.jsonl v3 entries=15 context=6 model=mock-model thinking=off
    2026-11-22T03-39-48-634Z_01a20156-b21a-742a-b0a5-c040b17d3b47.jsonl v3 entries=17 context=5 model=mock-model thinking=off
    before-compaction.jsonl v3 entries=1002 context=446 model=claude-opus-4-5 thinking=off
    large-session.jsonl v3 entries=1018 context=914 model=claude-sonnet-4-5 thinking=off
    "#);
}

/// Replaces every entry id in a file's lines with `#<line number>` so files whose ids were
/// generated randomly can be compared.
fn normalize_ids(lines: &[String]) -> Vec<String> {
    let mut ids: HashMap<String, String> = HashMap::new();
    let values: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, v) in values.iter().enumerate() {
        if v["type"] != "session"
            && let Some(id) = v["id"].as_str()
        {
            ids.insert(id.to_string(), format!("#{i}"));
        }
    }
    values
        .into_iter()
        .map(|mut v| {
            if v["type"] != "session" {
                for key in ["id", "parentId", "firstKeptEntryId", "targetId", "fromId"] {
                    if let Some(id) = v.get(key).and_then(Value::as_str)
                        && let Some(token) = ids.get(id)
                    {
                        v[key] = Value::from(token.clone());
                    }
                }
            }
            serde_json::to_string(&v).unwrap()
        })
        .collect()
}

#[test]
fn hand_made_v1_and_v2_files_migrate_exactly_like_pi_apart_from_random_ids() {
    let dir = tempfile::tempdir().unwrap();
    let legacy = fixtures().join("corpus/legacy");
    for version in ["v1", "v2"] {
        let s = open_copy(
            &legacy.join(format!("hand-made-{version}.jsonl")),
            dir.path(),
        );
        let ours: Vec<String> = fs::read_to_string(s.session_file().unwrap())
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let pis: Vec<String> =
            fs::read_to_string(legacy.join(format!("hand-made-{version}.migrated-by-pi.jsonl")))
                .unwrap()
                .lines()
                .take(ours.len())
                .map(str::to_string)
                .collect();
        // Same keys in the same order, same values, same tree.
        assert_eq!(normalize_ids(&ours), normalize_ids(&pis), "{version}");
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(
            leftovers,
            if version == "v1" { 1 } else { 2 },
            "backups removed"
        );
    }
}

#[test]
fn real_v1_fixtures_map_first_kept_entry_index_to_the_entry_on_that_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    for file in [
        fixtures().join("corpus/legacy/real-v1-before-compaction.jsonl"),
        fixtures().join("pi-fixtures/before-compaction.jsonl"),
        fixtures().join("corpus/legacy/real-v1-large-session.jsonl"),
    ] {
        let original: Vec<Value> = fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let s = open_copy(&file, dir.path());
        let migrated: Vec<Value> = fs::read_to_string(s.session_file().unwrap())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(migrated.len(), original.len());
        assert_eq!(migrated[0]["version"], 3);
        let by_id: HashMap<&str, usize> = migrated
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, v)| (v["id"].as_str().unwrap(), i))
            .collect();
        for (i, entry) in migrated.iter().enumerate().skip(1) {
            let id = entry["id"].as_str().unwrap();
            assert!(id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()));
            let expected_parent = if i == 1 {
                Value::Null
            } else {
                migrated[i - 1]["id"].clone()
            };
            assert_eq!(entry["parentId"], expected_parent, "a linear chain");
            if let Some(index) = original[i]["firstKeptEntryIndex"].as_u64() {
                let kept = entry["firstKeptEntryId"].as_str().unwrap();
                let line = by_id[kept];
                assert_eq!(line as u64, index, "index {index} points at line {index}");
                assert_eq!(
                    migrated[line]["timestamp"],
                    original[index as usize]["timestamp"]
                );
                assert!(entry.get("firstKeptEntryIndex").is_none());
                checked.push(index);
            }
        }
    }
    assert_eq!(checked, [293, 551, 293, 551]);
}

// ----- context interop with pi's requests -----

/// One message as an OpenAI chat-completions request carries it, reduced to what matters.
#[derive(Debug, Clone, PartialEq)]
enum Wire {
    User(Vec<String>),
    Assistant {
        text: String,
        calls: Vec<(String, String, Value)>,
    },
    Tool {
        call_id: String,
        text: String,
    },
}

fn wire_from_request(message: &Value) -> Option<Wire> {
    let text_parts = |content: &Value| -> Vec<String> {
        match content {
            Value::String(s) => vec![s.clone()],
            Value::Array(parts) => parts
                .iter()
                .map(|p| {
                    p["text"]
                        .as_str()
                        .map_or("[image]".to_string(), str::to_string)
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    match message["role"].as_str()? {
        "user" => Some(Wire::User(text_parts(&message["content"]))),
        "assistant" => Some(Wire::Assistant {
            text: text_parts(&message["content"]).join(""),
            calls: message["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| {
                            let args = c["function"]["arguments"].as_str().unwrap();
                            (
                                c["id"].as_str().unwrap().to_string(),
                                c["function"]["name"].as_str().unwrap().to_string(),
                                serde_json::from_str(args).unwrap(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }),
        "tool" => Some(Wire::Tool {
            call_id: message["tool_call_id"].as_str()?.to_string(),
            text: message["content"].as_str()?.to_string(),
        }),
        _ => None,
    }
}

/// What pi's provider layer does to a context before it becomes an OpenAI request
/// (pi-ai `transformMessages` + `convertMessages`), reduced to [`Wire`]:
/// - assistant messages that ended in `error` or `aborted` are dropped (this, not context
///   building, is where failed turns disappear);
/// - thinking of the same model goes into a separate field (not compared); thinking of
///   another model becomes plain text in place, so it is glued to the reply text;
/// - text blocks are joined without a separator; a message with neither text nor tool
///   calls is not sent;
/// - a tool call with no result before the next user or assistant message gets a
///   synthetic "No result provided" result.
fn wire_from_context(messages: &[Message], request_model: &str) -> Vec<Wire> {
    let mut out = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    let flush = |out: &mut Vec<Wire>, pending: &mut Vec<String>, answered: &mut Vec<String>| {
        for id in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(Wire::Tool {
                    call_id: id,
                    text: "No result provided".into(),
                });
            }
        }
        answered.clear();
    };
    for message in messages {
        match message {
            Message::User(u) => {
                flush(&mut out, &mut pending, &mut answered);
                let blocks = match &u.content {
                    UserContent::Text(s) => vec![s.clone()],
                    UserContent::Blocks(b) => b
                        .iter()
                        .map(|b| match b {
                            UserBlock::Text(t) => t.text.clone(),
                            UserBlock::Image(_) => "[image]".into(),
                        })
                        .collect(),
                };
                out.push(Wire::User(blocks));
            }
            Message::Assistant(a) => {
                flush(&mut out, &mut pending, &mut answered);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let same_model = a.provider == "mock" && a.model == request_model;
                let mut text = String::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.trim().is_empty() => {
                            text.push_str(&t.text)
                        }
                        AssistantBlock::Thinking(t)
                            if !same_model && !t.thinking.trim().is_empty() =>
                        {
                            text.push_str(&t.thinking)
                        }
                        AssistantBlock::ToolCall(c) => {
                            calls.push((c.id.clone(), c.name.clone(), c.arguments.clone()));
                            pending.push(c.id.clone());
                        }
                        _ => {}
                    }
                }
                if !text.is_empty() || !calls.is_empty() {
                    out.push(Wire::Assistant { text, calls });
                }
            }
            Message::ToolResult(t) => {
                answered.push(t.tool_call_id.clone());
                out.push(Wire::Tool {
                    call_id: t.tool_call_id.clone(),
                    text: t.text(),
                });
            }
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    out
}

struct Request {
    n: u64,
    model: String,
    messages: Vec<Wire>,
}

/// The requests that carried a conversation (summarization requests have no tools).
fn conversation_requests(scenario: &Path) -> Vec<Request> {
    fs::read_to_string(scenario.join("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["body"].get("tools").is_some())
        .map(|r| Request {
            n: r["n"].as_u64().unwrap(),
            model: r["body"]["model"].as_str().unwrap().to_string(),
            messages: r["body"]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(wire_from_request)
                .collect(),
        })
        .collect()
}

/// For each request, the entry whose context is that request's conversation.
fn match_requests(scenario: &str, sessions: &mut [SessionManager]) -> String {
    let requests = conversation_requests(&fixtures().join("corpus").join(scenario));
    assert!(!requests.is_empty());
    let mut report = String::new();
    for request in &requests {
        let mut found = None;
        'search: for s in sessions.iter_mut() {
            let ids: Vec<EntryId> = s.heads().map(|h| h.id).collect();
            for id in ids {
                s.branch(&id).unwrap();
                let context = s.build_session_context();
                if wire_from_context(&convert_to_llm(&context.messages), &request.model)
                    == request.messages
                {
                    found = Some(id);
                    break 'search;
                }
            }
        }
        match found {
            Some(id) => report.push_str(&format!(
                "request {} ({} messages) = context at {id}\n",
                request.n,
                request.messages.len()
            )),
            None => panic!(
                "{scenario}: no entry gives the conversation of request {}: {:#?}",
                request.n, request.messages
            ),
        }
    }
    report
}

fn open_scenario(scenario: &str, dir: &Path) -> Vec<SessionManager> {
    session_files(&fixtures().join("corpus").join(scenario))
        .iter()
        .map(|f| open_copy(f, dir))
        .collect()
}

#[test]
fn contexts_match_what_pi_sent_in_every_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = String::new();
    for scenario in [
        "basic-tools",
        "tree-branch-summary",
        "compaction-manual",
        "fork",
        "session-name-and-model-change",
        "resume-listing",
    ] {
        let mut sessions = open_scenario(scenario, dir.path());
        report.push_str(&format!(
            "{scenario}:\n{}",
            match_requests(scenario, &mut sessions)
        ));
    }
    insta::assert_snapshot!(report, @r#"
    basic-tools:
    request 1 (1 messages) = context at 36b27173
    request 2 (3 messages) = context at e49b1654
    request 3 (5 messages) = context at ddebb17f
    request 4 (7 messages) = context at cacfaf10
    request 5 (9 messages) = context at 50c4073b
    request 6 (12 messages) = context at cb302859
    request 7 (14 messages) = context at ee358a9b
    request 8 (16 messages) = context at 4a4d2525
    tree-branch-summary:
    request 1 (1 messages) = context at 1a73f3c8
    request 2 (3 messages) = context at ea59b5de
    request 3 (5 messages) = context at a13c725e
    request 4 (7 messages) = context at a0445cb0
    request 5 (9 messages) = context at 59794941
    request 7 (2 messages) = context at 4159d05b
    request 8 (4 messages) = context at dd4fd5aa
    compaction-manual:
    request 1 (1 messages) = context at 9925ba9c
    request 2 (3 messages) = context at 62f39c3a
    request 3 (5 messages) = context at a831c6f3
    request 4 (7 messages) = context at 8c537d5d
    request 5 (9 messages) = context at b9f70f47
    request 6 (11 messages) = context at 0f284f84
    request 7 (13 messages) = context at 90279f84
    request 9 (4 messages) = context at 4885ae8d
    fork:
    request 1 (1 messages) = context at 772b3018
    request 2 (3 messages) = context at 379ed990
    request 3 (5 messages) = context at 74f9726c
    request 4 (7 messages) = context at 8e42264a
    request 5 (10 messages) = context at 85e57247
    request 6 (5 messages) = context at 4e883810
    request 7 (7 messages) = context at 33f2b523
    session-name-and-model-change:
    request 1 (1 messages) = context at f750913d
    request 2 (3 messages) = context at 55728cde
    request 3 (5 messages) = context at f2f3f7ad
    resume-listing:
    request 1 (1 messages) = context at 0e395908
    request 2 (1 messages) = context at 8c0f92a4
    request 3 (1 messages) = context at ccc80c7e
    request 4 (3 messages) = context at b3060842
    "#);
}

#[test]
fn contexts_of_migrated_legacy_files_match_what_pi_sent_after_migrating_them() {
    let dir = tempfile::tempdir().unwrap();
    let legacy = fixtures().join("corpus/legacy");
    let mut sessions = Vec::new();
    for version in ["v1", "v2"] {
        // pi's own migrated file, and ours with the same follow-up prompt pi then sent.
        sessions.push(open_copy(
            &legacy.join(format!("hand-made-{version}.migrated-by-pi.jsonl")),
            dir.path(),
        ));
        let mut ours = open_copy(
            &legacy.join(format!("hand-made-{version}.jsonl")),
            dir.path(),
        );
        ours.append_message(crate::support::session::user(&format!(
            "Prompt after loading legacy {version} file"
        )))
        .unwrap();
        let requests = conversation_requests(&legacy);
        let context = ours.build_session_context();
        let wire = wire_from_context(&convert_to_llm(&context.messages), "mock-model");
        assert!(
            requests.iter().any(|r| r.messages == wire),
            "{version}: {wire:#?}"
        );
    }
    let report = match_requests("legacy", &mut sessions);
    insta::assert_snapshot!(report.lines().count(), @r#"2"#);
}

#[test]
fn summary_wrappers_sent_by_pi_match_ours_exactly() {
    let dir = tempfile::tempdir().unwrap();
    for (scenario, prefix) in [
        ("compaction-manual", pi::messages::COMPACTION_SUMMARY_PREFIX),
        ("tree-branch-summary", pi::messages::BRANCH_SUMMARY_PREFIX),
    ] {
        let sessions = open_scenario(scenario, dir.path());
        let context = sessions[0].build_session_context();
        let first = convert_to_llm(&context.messages)
            .into_iter()
            .next()
            .unwrap();
        let Message::User(first) = first else {
            panic!("summary is a user message")
        };
        let text = first.content.text();
        assert!(text.starts_with(prefix));
        let sent = fs::read_to_string(
            fixtures()
                .join("corpus")
                .join(scenario)
                .join("requests.jsonl"),
        )
        .unwrap();
        let sent_texts: Vec<String> = sent
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .flat_map(|r| r["body"]["messages"].as_array().unwrap().clone())
            .filter_map(|m| {
                m["content"]
                    .as_array()
                    .and_then(|c| c[0]["text"].as_str().map(str::to_string))
            })
            .collect();
        assert!(
            sent_texts.contains(&text),
            "{scenario}: our wrapped summary was sent verbatim by pi"
        );
    }
}
