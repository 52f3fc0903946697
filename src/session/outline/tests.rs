//! The skimmer is checked against an oracle that reads the same line the way pi's
//! JavaScript does: `JSON.parse` (here serde_json's `Value`) and then plain field access.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Value, json};

use super::skim::outline_line;
use super::*;
use crate::ai::js::{is_js_whitespace, js_number_to_string};
use crate::session::manager::SessionManager;
use crate::session::tree::{EntryKind, MessageRole};

fn units(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// JavaScript's `s.slice(0, cap)`, leaving out a character that would be split.
fn js_slice(s: &str, cap: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in s.chars() {
        n += c.len_utf16();
        if n > cap {
            break;
        }
        out.push(c);
    }
    out
}

/// pi's `extractContent` (with the cap as a parameter).
fn extract_content(content: &Value, cap: usize) -> String {
    match content {
        Value::String(s) => js_slice(s, cap),
        Value::Array(blocks) => {
            let mut result = String::new();
            for block in blocks {
                if block.get("type").and_then(Value::as_str) == Some("text")
                    && let Some(text) = block.get("text").and_then(Value::as_str)
                {
                    result.push_str(text);
                    if units(&result) >= cap {
                        return js_slice(&result, cap);
                    }
                }
            }
            result
        }
        _ => String::new(),
    }
}

/// pi's `hasTextContent`.
fn has_text_content(content: &Value) -> bool {
    let non_blank = |s: &str| s.chars().any(|c| !is_js_whitespace(c));
    match content {
        Value::String(s) => non_blank(s),
        Value::Array(blocks) => blocks.iter().any(|b| {
            b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text").and_then(Value::as_str).is_some_and(non_blank)
        }),
        _ => false,
    }
}

fn str_field(v: &Value, key: &str, cap: usize) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(|s| js_slice(s, cap))
}

fn js_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(js_slice(s, LONG_TEXT_UNITS)),
        Value::Number(n) => n
            .as_f64()
            .filter(|n| *n != 0.0 && !n.is_nan())
            .map(js_number_to_string),
        Value::Bool(true) => Some("true".into()),
        Value::Object(_) => Some("[object Object]".into()),
        Value::Array(_) => Some(String::new()),
        _ => None,
    }
}

fn arg_number(v: Option<&Value>) -> Option<ArgNumber> {
    v.map(|v| match v.as_f64() {
        Some(n) => ArgNumber::Number(n),
        None => ArgNumber::NotNumber,
    })
}

fn oracle_args(args: &Value) -> ToolArgsOutline {
    let json = serde_json::to_string(args).unwrap();
    ToolArgsOutline {
        path: js_string(args.get("path")),
        file_path: js_string(args.get("file_path")),
        command: js_string(args.get("command")),
        pattern: js_string(args.get("pattern")),
        offset: arg_number(args.get("offset")),
        limit: arg_number(args.get("limit")),
        json_head: js_slice(&json, ARGS_JSON_UNITS),
        json_cut: units(&json) > ARGS_JSON_UNITS,
    }
}

fn oracle_message(m: &Value) -> MessageOutline {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let content = m.get("content").unwrap_or(&Value::Null);
    let text = extract_content(content, MESSAGE_TEXT_UNITS);
    match role {
        "user" => MessageOutline::User { text },
        "assistant" => {
            let tool_calls = content
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|b| ToolCallOutline {
                    id: str_field(b, "id", LONG_TEXT_UNITS).unwrap_or_default(),
                    name: str_field(b, "name", LONG_TEXT_UNITS).unwrap_or_default(),
                    args: b.get("arguments").map(oracle_args).unwrap_or_default(),
                })
                .collect();
            let ending = match m.get("stopReason").and_then(Value::as_str) {
                None | Some("" | "stop" | "toolUse") => TurnEnding::Normal,
                Some("aborted") => TurnEnding::Aborted,
                Some(_) => TurnEnding::Failed,
            };
            let has_text = has_text_content(content);
            // The ending and error only matter (and are only read) when no text shows.
            let shows_text = has_text && text.chars().any(|c| !is_js_whitespace(c));
            MessageOutline::Assistant(AssistantOutline {
                text,
                has_text,
                ending: if shows_text {
                    TurnEnding::Normal
                } else {
                    ending
                },
                error_message: str_field(m, "errorMessage", ERROR_TEXT_UNITS)
                    .filter(|e| !e.is_empty() && !shows_text),
                tool_calls,
            })
        }
        "toolResult" => MessageOutline::ToolResult {
            tool_call_id: str_field(m, "toolCallId", LONG_TEXT_UNITS),
            tool_name: str_field(m, "toolName", LONG_TEXT_UNITS),
            text,
        },
        "bashExecution" => MessageOutline::BashExecution {
            command: str_field(m, "command", LONG_TEXT_UNITS).unwrap_or_default(),
        },
        _ => MessageOutline::Other {
            role: role.to_string(),
            text,
        },
    }
}

fn kind_of(v: &Value) -> EntryKind {
    EntryKind::from_type(
        v.get("type").and_then(Value::as_str).unwrap_or(""),
        v.get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str),
    )
}

/// How pi's tree view would read the entry on this line.
fn oracle(v: &Value) -> EntryOutline {
    let s = |key| str_field(v, key, LONG_TEXT_UNITS);
    match kind_of(v) {
        EntryKind::Message(_) => EntryOutline::Message(oracle_message(&v["message"])),
        EntryKind::ThinkingLevelChange => EntryOutline::ThinkingLevelChange {
            level: s("thinkingLevel"),
        },
        EntryKind::ModelChange => EntryOutline::ModelChange {
            model_id: s("modelId"),
        },
        EntryKind::Compaction => EntryOutline::Compaction {
            tokens_before: v.get("tokensBefore").and_then(Value::as_f64),
        },
        EntryKind::BranchSummary => EntryOutline::BranchSummary {
            summary: s("summary").unwrap_or_default(),
        },
        EntryKind::Custom => EntryOutline::Custom {
            custom_type: s("customType"),
        },
        EntryKind::CustomMessage => EntryOutline::CustomMessage {
            custom_type: s("customType"),
            text: extract_content(v.get("content").unwrap_or(&Value::Null), LONG_TEXT_UNITS),
        },
        EntryKind::Label => EntryOutline::Label { label: s("label") },
        EntryKind::SessionInfo => EntryOutline::SessionInfo { name: s("name") },
        EntryKind::ContextEdit => EntryOutline::ContextEdit {
            target_id: s("targetId"),
            omit: v.get("replacement") == Some(&Value::Null),
        },
        EntryKind::Usage | EntryKind::Other => EntryOutline::Other,
    }
}

fn skim(v: &Value) -> EntryOutline {
    outline_line(kind_of(v), serde_json::to_string(v).unwrap().as_bytes())
}

/// Opens a copy of a session file (opening migrates old formats in place) and checks
/// every entry's outline against the oracle reading of the same line.
fn check_session_file(path: &Path) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("s.jsonl");
    std::fs::copy(path, &copy).unwrap();
    let manager = SessionManager::open(&copy, Some(dir.path())).unwrap();
    let outlines = manager.outlines();
    assert_eq!(outlines.len(), manager.entry_count());
    for (node, outline) in manager.index.nodes.iter().zip(&outlines) {
        let line = manager.store.line(node.line());
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            outline,
            &oracle(&value),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&line)
        );
    }
    outlines.len()
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    for dir in ["corpus", "pi-fixtures"] {
        for entry in walk(&root.join(dir)) {
            let name = entry.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".jsonl") && name != "requests.jsonl" {
                files.push(entry);
            }
        }
    }
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn outlines_of_every_fixture_entry_match_a_full_json_reading() {
    let files = fixture_files();
    assert!(files.len() >= 15, "fixtures missing: {files:?}");
    let entries: usize = files.iter().map(|f| check_session_file(f)).sum();
    assert!(entries > 2000, "only {entries} entries checked");
}

#[test]
fn outlines_of_a_synthetic_session_match_a_full_json_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.jsonl");
    crate::session::synth::generate(&path, 300, 7).unwrap();
    assert!(check_session_file(&path) > 1000);
}

#[test]
fn a_tool_result_is_outlined_from_its_first_characters_only() {
    // Everything after the first 200 characters is garbage: reading stops before it.
    let mut line = String::from(
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":""#,
    );
    line.push_str(&"x".repeat(250));
    line.push_str("\u{0}not json at all");
    let outline = outline_line(EntryKind::Message(MessageRole::ToolResult), line.as_bytes());
    assert_eq!(
        outline,
        EntryOutline::Message(MessageOutline::ToolResult {
            tool_call_id: Some("c1".into()),
            tool_name: Some("read".into()),
            text: "x".repeat(200),
        })
    );
}

#[test]
fn broken_lines_give_what_was_read_before_the_damage() {
    let line = br#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"stopReason":"#;
    let outline = outline_line(EntryKind::Message(MessageRole::Assistant), line);
    assert_eq!(
        outline,
        EntryOutline::Message(MessageOutline::Assistant(AssistantOutline {
            text: "hi".into(),
            has_text: true,
            ..AssistantOutline::default()
        }))
    );
    for cut in 0..line.len() {
        // Never panics, whatever the cut.
        outline_line(EntryKind::Message(MessageRole::Assistant), &line[..cut]);
    }
}

#[test]
fn text_is_cut_in_utf16_units_without_splitting_a_surrogate_pair() {
    let text = format!("{}😀tail", "a".repeat(199));
    let v = json!({"type":"message","id":"a","message":{"role":"user","content":text}});
    assert_eq!(
        skim(&v),
        EntryOutline::Message(MessageOutline::User {
            text: "a".repeat(199)
        })
    );
    assert_eq!(skim(&v), oracle(&v));
}

#[test]
fn escapes_and_surrogates_are_decoded() {
    let line = br#"{"type":"message","message":{"role":"user","content":"tab\there \"q\" \u00e9 \ud83d\ude00 \ud800x"}}"#;
    assert_eq!(
        outline_line(EntryKind::Message(MessageRole::User), line),
        EntryOutline::Message(MessageOutline::User {
            text: "tab\there \"q\" é 😀 \u{fffd}x".into()
        })
    );
}

fn text_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,30}",
        Just("\n\t\"\\/".to_string()),
        Just("😀中文".to_string()),
        Just("\u{2028}\u{feff}\u{a0}".to_string()),
        Just(" ".repeat(150)),
        Just("y".repeat(180)),
        any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(text_piece(), 0..6).prop_map(|v| v.concat())
}

fn arg_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::String),
        (-5i64..100).prop_map(|n| json!(n)),
        Just(json!(true)),
        Just(json!(false)),
        Just(Value::Null),
        Just(json!({"nested": [1, "two"]})),
        Just(json!([])),
    ]
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        text().prop_map(|t| json!({"text": t, "type": "text"})),
        text().prop_map(|t| json!({"type": "thinking", "thinking": t})),
        Just(json!({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})),
        (
            "[a-z_0-9]{1,8}",
            prop_oneof![Just("read"), Just("bash"), Just("mcp_tool")],
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("path"),
                        Just("file_path"),
                        Just("command"),
                        Just("pattern"),
                        Just("offset"),
                        Just("limit"),
                        Just("other"),
                    ],
                    arg_value()
                ),
                0..5
            )
        )
            .prop_map(|(id, name, args)| {
                let args: serde_json::Map<String, Value> =
                    args.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
            }),
        Just(json!("not a block")),
    ]
}

fn content() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::String),
        prop::collection::vec(block(), 0..5).prop_map(Value::Array),
        Just(Value::Null),
    ]
}

fn message_value() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("user"),
            Just("assistant"),
            Just("toolResult"),
            Just("bashExecution"),
            Just("custom"),
            Just("someNewRole"),
        ],
        content(),
        prop_oneof![
            Just(None),
            Just(Some("stop")),
            Just(Some("toolUse")),
            Just(Some("aborted")),
            Just(Some("error")),
            Just(Some("length")),
        ],
        prop::option::of(text()),
        prop::option::of(text()),
        any::<bool>(),
    )
        .prop_map(|(role, content, stop, error, command, content_first)| {
            let mut m = serde_json::Map::new();
            if content_first {
                m.insert("content".into(), content.clone());
            }
            m.insert("role".into(), json!(role));
            m.insert("toolCallId".into(), json!("call_1"));
            m.insert("toolName".into(), json!("read"));
            if !content_first {
                m.insert("content".into(), content);
            }
            if let Some(stop) = stop {
                m.insert("stopReason".into(), json!(stop));
            }
            if let Some(error) = error {
                m.insert("errorMessage".into(), json!(error));
            }
            if let Some(command) = command {
                m.insert("command".into(), json!(command));
            }
            json!({"type": "message", "id": "e1", "parentId": null, "timestamp": "t", "message": m})
        })
}

fn other_entry_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({"type": "branch_summary", "id": "b", "fromId": "x", "summary": t})),
        content().prop_map(|c| json!({"type": "custom_message", "id": "c", "customType": "ext", "content": c, "display": true})),
        prop::option::of(text()).prop_map(|l| json!({"type": "label", "id": "l", "targetId": "x", "label": l})),
        prop::option::of(text()).prop_map(|n| json!({"type": "session_info", "id": "s", "name": n})),
        (0u32..1_000_000).prop_map(|n| json!({"type": "compaction", "id": "k", "summary": "s", "tokensBefore": n})),
        text().prop_map(|t| json!({"type": "model_change", "id": "m", "provider": "p", "modelId": t})),
        text().prop_map(|t| json!({"type": "thinking_level_change", "id": "t", "thinkingLevel": t})),
        text().prop_map(|t| json!({"type": "custom", "id": "u", "customType": t, "data": {"k": t}})),
        Just(json!({"type": "hologram", "id": "h"})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn skimming_agrees_with_a_full_json_reading(v in prop_oneof![message_value(), other_entry_value()]) {
        prop_assert_eq!(skim(&v), oracle(&v));
    }
}

#[test]
fn outlines_of_a_big_session_read_in_parts_keep_file_order() {
    // Big enough to be read in parts on several threads (when the machine has them).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.jsonl");
    crate::session::synth::generate(&path, 2_000, 11).unwrap();
    assert!(check_session_file(&path) > 8_000);
}
