//! Our tools against what pi 0.73.1 actually sent and stored in the `basic-tools` corpus
//! run: the parameter schemas must be identical apart from the prose descriptions, and
//! replaying the run's tool calls must give the stored result texts, errors and details.

// Fixture helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use crate::tools_common::Sandbox;
use pi::tools::{ToolConfig, builtin_tool_names, create_tools};
use serde_json::{Value, json};

/// `corpus` or `corpus-1.6`.
fn corpus_dir(corpus: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(corpus)
        .join("basic-tools");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: corpus not found at {}", dir.display());
        None
    }
}

/// The schema without `description` keys, serialized with its key order.
fn shape(schema: &Value) -> String {
    fn strip(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "description")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&strip(schema)).unwrap()
}

#[test]
fn tool_schemas_match_what_pi_sends() {
    let tools = create_tools(builtin_tool_names(), &ToolConfig::new("/tmp")).unwrap();
    let ours = |name: &str| {
        let tool = tools.iter().find(|t| t.name() == name).unwrap();
        shape(&tool.parameters())
    };

    // pi 1.6's schemas (the edit tool lost `additionalProperties: false`).
    if let Some(dir) = corpus_dir("corpus-1.6") {
        let first = std::fs::read_to_string(dir.join("requests.jsonl")).unwrap();
        let request: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        let sent = request["body"]["tools"].as_array().unwrap();
        let names: Vec<&str> = sent
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["read", "bash", "edit", "write"]);
        for tool in sent {
            let name = tool["function"]["name"].as_str().unwrap();
            assert_eq!(ours(name), shape(&tool["function"]["parameters"]), "{name}");
        }
    }

    // Not enabled in the corpus run; taken from pi 0.73.1's tool definitions.
    let pi_schemas = [
        (
            "grep",
            json!({"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string"},"path":{"type":"string"},"glob":{"type":"string"},"ignoreCase":{"type":"boolean"},"literal":{"type":"boolean"},"context":{"type":"number"},"limit":{"type":"number"}}}),
        ),
        (
            "find",
            json!({"type":"object","required":["pattern"],"properties":{"pattern":{"type":"string"},"path":{"type":"string"},"limit":{"type":"number"}}}),
        ),
        (
            "ls",
            json!({"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"number"}}}),
        ),
    ];
    for (name, schema) in pi_schemas {
        assert_eq!(ours(name), shape(&schema), "{name}");
    }
}

#[tokio::test]
async fn replaying_the_corpus_tool_calls_gives_the_stored_results() {
    let Some(dir) = corpus_dir("corpus") else {
        return;
    };
    let session = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("requests.jsonl"))
        .unwrap();
    let messages: Vec<Value> = std::fs::read_to_string(session)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"].clone())
        .collect();

    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "hello wrld\nsecond line\n");
    let mut compared = 0;
    for message in messages.iter().filter(|m| m["role"] == "assistant") {
        let mut calls: Vec<&Value> = message["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "toolCall")
            .collect();
        // pi ran `write b.txt` and `ls -1` in parallel and `ls` happened to finish first
        // (it listed only a.txt); run it first to get the same listing.
        calls.sort_by_key(|c| c["arguments"]["command"] != "ls -1");
        for call in calls {
            let stored = messages
                .iter()
                .find(|m| m["role"] == "toolResult" && m["toolCallId"] == call["id"])
                .unwrap();
            let name = call["name"].as_str().unwrap();
            let outcome = sandbox.run(name, call["arguments"].clone()).await;
            let stored_text = stored["content"][0]["text"].as_str().unwrap();
            // pi 1.6 no longer gives the length in the write tool's answer.
            let stored_text = write_text_of_pi16(stored_text);
            assert_eq!(outcome.text(), stored_text, "{name} {}", call["arguments"]);
            assert_eq!(outcome.result.is_err(), stored["isError"] == true, "{name}");
            if let Ok(output) = &outcome.result {
                let stored_details = stored.get("details").cloned();
                assert_eq!(output.details, stored_details, "{name}");
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 7);
    assert_eq!(sandbox.read("a.txt"), "hello world\nsecond line\n");
    assert_eq!(sandbox.read("b.txt"), "second file\nline two\n");
}

/// `Successfully wrote N bytes to p` (pi 0.73) as pi 1.6 words it.
fn write_text_of_pi16(text: &str) -> String {
    match text
        .strip_prefix("Successfully wrote ")
        .and_then(|rest| rest.split_once(" bytes to "))
    {
        Some((n, path)) if n.bytes().all(|b| b.is_ascii_digit()) => {
            format!("Successfully wrote to {path}")
        }
        _ => text.to_string(),
    }
}
