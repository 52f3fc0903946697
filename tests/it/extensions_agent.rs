//! Extensions, prompt templates and skills in the running agent: the built `pi` binary in
//! print and JSON mode with the example extensions (and a few small ones written here)
//! against the loopback model server, checking what reached the model, what the session
//! file holds, and what the user sees. What only the session API reaches (compaction,
//! tree navigation, session switches, dialogs) is in `extensions_session.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use crate::support::extensions::{example, script};
use crate::support::pi_project::{
    Project, conversation, entry_lines, jsonl, succeeded, system_prompt, text_of, tool_names,
};
use serde_json::json;

#[test]
fn permission_gate_blocks_rm_rf_and_the_model_reads_why_while_other_commands_run() {
    require!("python3");
    let p = Project::new(json!({"sequence": [
        {"text": "Cleaning up.", "tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf sentinel"}}]},
        {"text": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
        {"text": "The file is still there."}
    ]}));
    p.write("sentinel", "keep me\n");
    let gate = example("permission-gate");
    let out = p
        .pi()
        .arg("-e")
        .arg(&gate)
        .args(["-p", "Remove the sentinel"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "The file is still there.\n");
    assert!(p.cwd().join("sentinel").exists(), "rm -rf ran");
    let requests = p.requests();
    insta::assert_snapshot!(conversation(&requests[2]), @r#"
    user: Remove the sentinel
    assistant: Cleaning up. → bash({"command":"rm -rf sentinel"})
    tool: Dangerous command blocked (no UI to confirm it)
    assistant: Looking. → bash({"command":"ls"})
    tool: sentinel
    "#);
    let blocked = p
        .entries()
        .into_iter()
        .find(|e| e["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(blocked["message"]["isError"], true);
}

#[test]
fn greet_command_stores_a_custom_message_that_the_next_request_carries_as_user_text() {
    let p = Project::new(json!({"sequence": [{"text": "It greeted Ada."}]}));
    let out = p
        .pi()
        .arg("-e")
        .arg(example("greet"))
        .args(["-p", "/greet Ada", "What did the extension do?"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "It greeted Ada.\n");
    // The command itself never reached the model.
    let requests = p.requests();
    assert_eq!(requests.len(), 1);
    insta::assert_snapshot!(conversation(&requests[0]), @r"
    user: Hello, Ada!
    user: What did the extension do?
    ");
    let entries = p.entries();
    insta::assert_snapshot!(entry_lines(&entries), @r"
    model_change
    thinking_level_change
    custom_message greet: Hello, Ada!
    message user: What did the extension do?
    message assistant: It greeted Ada.
    ");
    let custom = entries
        .iter()
        .find(|e| e["type"] == "custom_message")
        .unwrap();
    assert_eq!(custom["display"], true);
    assert_eq!(custom["details"], json!({"greeted": "Ada"}));
}

#[test]
fn word_count_tool_is_offered_to_the_model_runs_and_follows_the_tool_flags() {
    require!("node");
    let p = Project::new(json!({
        "sequence": [
            {"tool_calls": [{"name": "word_count", "arguments": {"text": "one two three"}}]},
            {"text": "Three words."}
        ],
        "default": {"text": "ok"}
    }));
    let word_count = example("word-count");
    let out = p
        .pi()
        .arg("-e")
        .arg(&word_count)
        .args(["-p", "Count: one two three"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "Three words.\n");
    let requests = p.requests();
    assert_eq!(
        tool_names(&requests[0]),
        ["read", "bash", "edit", "write", "word_count"]
    );
    let offered = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "word_count")
        .unwrap();
    assert_eq!(
        offered["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );
    assert!(
        system_prompt(&requests[0])
            .contains("- word_count: Count lines, words and characters of a text or file")
    );
    insta::assert_snapshot!(conversation(&requests[1]), @r#"
    user: Count: one two three
    assistant:  → word_count({"text":"one two three"})
    tool: 1 lines, 3 words, 13 characters
    "#);

    // `--tools` names extension tools like built-in ones; `--no-builtin-tools` keeps
    // them; `--no-tools` drops them.
    let runs: [&[&str]; 3] = [
        &["--tools", "read,word_count"],
        &["--no-builtin-tools"],
        &["--no-tools"],
    ];
    for flags in runs {
        succeeded(
            &p.pi()
                .arg("-e")
                .arg(&word_count)
                .args(flags)
                .args(["--no-session", "-p", "hi"])
                .output()
                .unwrap(),
        );
    }
    let tools: Vec<Vec<String>> = p.requests()[2..].iter().map(tool_names).collect();
    assert_eq!(
        tools,
        [
            vec!["read".to_string(), "word_count".to_string()],
            vec!["word_count".to_string()],
            vec![]
        ]
    );
}

const CRASH_ON_START: &str = r#"#!/bin/sh
IFS= read -r hello
printf '%s\n' '{"type":"register","events":["session_start"]}'
IFS= read -r event
exit 3
"#;

const CRASH_BEFORE_AGENT_START: &str = r#"#!/bin/sh
IFS= read -r hello
printf '%s\n' '{"type":"register","events":["session_start","before_agent_start"]}'
while IFS= read -r line; do
    case "$line" in
    *before_agent_start*) exit 4 ;;
    *'"id":'*) id=${line#*\"id\":}; printf '{"type":"response","id":%s}\n' "${id%%,*}" ;;
    esac
done
"#;

#[test]
fn crashed_extensions_are_reported_as_extension_error_events_and_the_session_goes_on() {
    let p = Project::new(json!({"sequence": [{"text": "Still here."}]}));
    let tools = p.dir.path().join("ext");
    std::fs::create_dir_all(&tools).unwrap();
    let on_start = script(&tools, "crash-on-start", CRASH_ON_START);
    let mid_event = script(&tools, "crash-mid-event", CRASH_BEFORE_AGENT_START);
    let out = p
        .pi()
        .arg("-e")
        .arg(&on_start)
        .arg("-e")
        .arg(&mid_event)
        .args(["--mode", "json", "Are you there?"])
        .output()
        .unwrap();
    let events = jsonl(&succeeded(&out));
    let errors: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "extension_error")
        .map(|e| p.anonymize(&e.to_string()))
        .collect();
    insta::assert_snapshot!(errors.join("\n"), @r#"
    {"type":"extension_error","extensionPath":"<tmp>/ext/crash-on-start","event":"session_start","error":"the extension exited (exit code 3)"}
    {"type":"extension_error","extensionPath":"<tmp>/ext/crash-mid-event","event":"before_agent_start","error":"the extension exited (exit code 4)"}
    "#);
    let last = events
        .iter()
        .rev()
        .find(|e| e["type"] == "message_end")
        .unwrap();
    assert_eq!(text_of(&last["message"]["content"]), "Still here.");

    // Text mode reports the same failures on stderr, as pi does.
    let p = Project::new(json!({"sequence": [{"text": "Still here."}]}));
    let out = p
        .pi()
        .arg("-e")
        .arg(&on_start)
        .args(["-p", "Are you there?"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "Still here.\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "Extension error ({}): the extension exited (exit code 3)\n",
            on_start.display()
        )
    );
}

const LIFECYCLE: &str = r#"#!/usr/bin/env python3
import json, sys

def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()

sys.stdin.readline()
send({"type": "register", "events": ["session_start", "input", "before_agent_start"],
      "flags": [{"name": "tone", "type": "string"}]})
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") != "event":
        continue
    e = m["event"]
    result = None
    if e["type"] == "session_start":
        send({"type": "send_message", "options": {"deliverAs": "nextTurn"},
              "message": {"customType": "note", "content": "queued at start"}})
    elif e["type"] == "input" and e["text"].startswith("shout:"):
        result = {"action": "transform", "text": e["text"][6:].strip().upper()}
    elif e["type"] == "input" and e["text"] == "ignore me":
        result = {"action": "handled"}
    elif e["type"] == "before_agent_start":
        result = {"message": {"customType": "context", "content": "tone: " + e["prompt"].lower()},
                  "systemPrompt": e["systemPrompt"] + "\nSpeak softly."}
    send({"type": "response", "id": m["id"], "result": result})
"#;

#[test]
fn input_transform_next_turn_and_before_agent_start_messages_follow_the_prompt_in_pis_order() {
    require!("python3");
    let p = Project::new(json!({"default": {"text": "ok"}}));
    let ext = script(&p.dir.path().join("home"), "lifecycle", LIFECYCLE);
    let out = p
        .pi()
        .arg("-e")
        .arg(&ext)
        .args(["--tone", "soft", "-p", "shout: hello", "ignore me"])
        .output()
        .unwrap();
    assert_eq!(succeeded(&out), "ok\n");
    // `--tone` belongs to the extension.
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // "ignore me" was handled by the extension: one request only.
    let requests = p.requests();
    assert_eq!(requests.len(), 1);
    insta::assert_snapshot!(conversation(&requests[0]), @r"
    user: HELLO
    user: queued at start
    user: tone: hello
    ");
    assert!(system_prompt(&requests[0]).ends_with("\nSpeak softly."));
    insta::assert_snapshot!(entry_lines(&p.entries()), @r"
    model_change
    thinking_level_change
    message user: HELLO
    custom_message note: queued at start
    custom_message context: tone: hello
    message assistant: ok
    ");
}

#[test]
fn templates_and_skills_expand_before_sending_and_skills_are_listed_only_with_read() {
    let p = Project::new(json!({"default": {"text": "ok"}}));
    p.write(
        ".pi/prompts/review.md",
        "---\ndescription: Review a file\n---\nReview $1 with care. Focus on: ${@:2}.\n",
    );
    p.write(
        ".pi/skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: Write release notes from the changelog\n---\n# Release notes\n\nRead CHANGELOG.md first.\n",
    );
    let out = p
        .pi()
        .args([
            "-p",
            "/review src/lib.rs errors naming",
            "/skill:release-notes for v2",
            "/unknown stays as typed",
        ])
        .output()
        .unwrap();
    succeeded(&out);
    let requests = p.requests();
    let last_user: Vec<String> = requests
        .iter()
        .map(|r| {
            let messages = r["messages"].as_array().unwrap();
            p.anonymize(&text_of(&messages.last().unwrap()["content"]))
        })
        .collect();
    insta::assert_snapshot!(last_user.join("\n---\n"), @r#"
    Review src/lib.rs with care. Focus on: errors naming.
    ---
    <skill name="release-notes" location="<tmp>/proj/.pi/skills/release-notes/SKILL.md">
    Paths in this skill are relative to <tmp>/proj/.pi/skills/release-notes.

    # Release notes

    Read CHANGELOG.md first.
    </skill>

    for v2
    ---
    /unknown stays as typed
    "#);
    let listed = system_prompt(&requests[0]);
    assert!(listed.contains("<name>release-notes</name>"), "{listed}");
    assert!(listed.contains("<description>Write release notes from the changelog</description>"));

    // Without `read` the model could not open a skill, so none is listed; `--no-skills`
    // turns discovery off and the command is sent as typed.
    let runs: [&[&str]; 2] = [
        &["--tools", "bash", "-p", "hi"],
        &["--no-skills", "-p", "/skill:release-notes now"],
    ];
    for flags in runs {
        succeeded(&p.pi().arg("--no-session").args(flags).output().unwrap());
    }
    let requests = p.requests();
    assert!(!system_prompt(&requests[3]).contains("<available_skills>"));
    assert!(!system_prompt(&requests[4]).contains("<available_skills>"));
    assert_eq!(conversation(&requests[4]), "user: /skill:release-notes now");
}
