//! pi 0.73.1's own RPC transcripts (`tests/fixtures/rpc/`, recorded against the corpus
//! mock model) replayed against the built `pi` binary: every response and event must be
//! the same modulo ids, times, paths and token counts, and the session files the run
//! leaves must have the same shape as pi's (same entries, same ids shared between a
//! session, its fork and the fork's clone).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::rpc_client::{RpcProject, json_lines};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

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

/// What pi 0.73.1 (which recorded these transcripts) would have written for one of our
/// pi 1.6 lines: no `agent_settled` or `bash_execution_update`, no `willRetry` on
/// `agent_end`, no `durationMs` on `tool_execution_end`, no `disposition` on prompt answers.
/// (The 1.6 additions themselves are checked in `rpc_pi16.rs`.)
fn as_pi_073(m: &Value) -> Option<Value> {
    let mut m = m.clone();
    match m["type"].as_str() {
        Some("agent_settled" | "bash_execution_update") => return None,
        Some("agent_end") => {
            m.as_object_mut()?.remove("willRetry");
        }
        Some("tool_execution_end") => {
            m.as_object_mut()?.remove("durationMs");
        }
        Some("response")
            if matches!(
                m["command"].as_str(),
                Some("prompt" | "steer" | "follow_up")
            ) && m["data"].get("disposition").is_some() =>
        {
            m.as_object_mut()?.remove("data");
        }
        _ => {}
    }
    Some(m)
}

/// Replays the `in` lines of one of pi's RPC transcripts against our binary and returns
/// (pi's transcript, ours), both normalized.
fn replay(scenario: &str, prepare: impl Fn(&Path)) -> (String, String, RpcProject) {
    let dir = fixtures().join("rpc").join(scenario);
    let script = read_json(&dir.join("script.json"));
    let models = read_json(&dir.join("models.json"));
    // The session files must equal pi's entry for entry, so pi-rs's own file checkpoints
    // (custom entries pi ignores; covered by checkpoints::reference_pi_opens_…) are off.
    // `defaultThinkingLevel: medium` gives pi 0.73's level on a switch to a reasoning model
    // (pi 1.6 keeps the current level unless a default is set).
    let settings =
        serde_json::json!({"checkpoints": {"enabled": false}, "defaultThinkingLevel": "medium"});
    let project = RpcProject::new(&script, Some(models), Some(settings));
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
                // pi 1.6's write tool no longer gives the length (these are 0.73's).
                their_text += &pi16_write_text(&l);
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
            if let Some(l) = as_pi_073(&m).and_then(|m| ours.line("<<", &m)) {
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
    // The corpus comes from pi 0.73.1, which saved every RPC `set_model` and
    // `set_thinking_level` as the default; pi 1.6 keeps them to the session.
    let settings = read_json(&project.agent_dir().join("settings.json"));
    assert_eq!(settings.get("defaultModel"), None, "{settings}");
    assert_eq!(
        settings.get("defaultThinkingLevel"),
        Some(&json!("medium")),
        "{settings}"
    );
}

/// `Successfully wrote N bytes to` (pi 0.73) as pi 1.6 words it.
fn pi16_write_text(line: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"Successfully wrote \d+ bytes to ").unwrap())
        .replace_all(line, "Successfully wrote to ")
        .into_owned()
}
