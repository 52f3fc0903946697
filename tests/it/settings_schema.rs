//! settings.json checked against pi 1.6's own `schemas/settings.schema.json`: documents
//! made from the schema (every key with each value shape it allows) start pi-rs without
//! a warning and survive a write untouched, a wrong value of any key is named with the
//! file, the key and what was expected (and only that value is dropped), keys pi-rs does
//! not act on are named in one line, and docs/settings.md lists every key.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::support::pi16_schema::{self, Leaf, Schema, set_path};
use crate::support::rpc_client::RpcProject;

/// The schema, or `None` (printing why) where the pi 1.6 package is not installed.
fn schema() -> Option<Schema> {
    match pi16_schema::load("settings.schema.json") {
        Ok(schema) => Some(schema),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// Keys whose values name things that must exist for a quiet start (a model, a tool, a
/// package folder), with values of the schema's shape that do.
fn overrides(path: &str) -> Option<Vec<Value>> {
    Some(match path {
        "enabledModels" => vec![json!(["mock/mock-model"]), json!([])],
        "defaultTools" => vec![
            json!(["read", "bash"]),
            json!(["+grep", "-write"]),
            json!([]),
        ],
        "defaultProvider" => vec![json!("mock")],
        "defaultModel" => vec![json!("mock-model")],
        "theme" => vec![json!("dark"), json!("system"), json!("light/dark")],
        "httpProxy" => vec![json!("http://127.0.0.1:9")],
        "packages" => vec![
            json!([{"source": "./local-pkg", "autoload": false, "extensions": [], "skills": [],
                    "prompts": [], "themes": []}]),
            json!(["./local-pkg"]),
            json!([]),
        ],
        _ => return None,
    })
}

/// Whether a key has keys of its own in the schema (walked into separately).
fn is_parent(leaf: &Leaf) -> bool {
    leaf.schema["type"] == "object" && leaf.schema["properties"].is_object()
}

/// The schema's samples for a key; `current` leaves out the deprecated forms.
fn samples(schema: &Schema, leaf: &Leaf, current: bool) -> Vec<Value> {
    if let Some(values) = overrides(&leaf.path) {
        return values;
    }
    match leaf.schema["anyOf"].as_array() {
        Some(branches) if current => branches
            .iter()
            .filter(|b| b["deprecated"] != json!(true))
            .flat_map(|b| schema.samples(b))
            .collect(),
        _ => schema.samples(&leaf.schema),
    }
}

/// Documents that together use every sample of every key: document `i` gives each key
/// its sample `i` (cycling through shorter lists).
fn documents(schema: &Schema, current: bool) -> Vec<Map<String, Value>> {
    let leaves: Vec<(Leaf, Vec<Value>)> = schema
        .leaves()
        .into_iter()
        .filter(|l| !(is_parent(l) || current && l.deprecated))
        .map(|l| {
            let values = samples(schema, &l, current);
            assert!(!values.is_empty(), "no sample for {}", l.path);
            (l, values)
        })
        .collect();
    let rounds = leaves.iter().map(|(_, v)| v.len()).max().unwrap_or(1);
    (0..rounds)
        .map(|round| {
            let mut doc = Map::new();
            for (leaf, values) in &leaves {
                // Each sample must be valid for the schema itself.
                let value = values[round % values.len()].clone();
                assert!(schema.valid(&value, &leaf.schema), "{}: {value}", leaf.path);
                set_path(&mut doc, &leaf.path, value);
            }
            doc
        })
        .collect()
}

/// A project whose user settings are `settings`.
fn project(settings: &Map<String, Value>) -> RpcProject {
    let project = RpcProject::new(&json!({"sequence": []}), None, None);
    std::fs::create_dir_all(project.agent_dir().join("local-pkg")).unwrap();
    write_settings(&project.agent_dir(), settings);
    project
}

fn write_settings(agent_dir: &Path, settings: &Map<String, Value>) {
    std::fs::write(
        agent_dir.join("settings.json"),
        serde_json::to_string_pretty(settings).unwrap(),
    )
    .unwrap();
}

/// The `Warning:` lines pi-rs printed about settings files (not the notice).
fn settings_warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("settings.json"))
        .filter(|l| !l.contains("does not support yet"))
        .map(str::to_string)
        .collect()
}

fn notices(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("settings pi-rs does not support yet"))
        .collect()
}

#[test]
fn every_value_shape_pi_1_6_allows_starts_pi_rs_without_a_warning() {
    let Some(schema) = schema() else { return };
    let docs = documents(&schema, false);
    assert!(docs.len() >= 7, "thinking levels alone have 7 values");
    for doc in docs {
        let project = project(&doc);
        let c = project.start();
        let (status, stderr) = c.close();
        assert!(status.success(), "{stderr}");
        assert_eq!(
            settings_warnings(&stderr),
            Vec::<String>::new(),
            "settings:\n{}",
            serde_json::to_string_pretty(&doc).unwrap()
        );
        assert!(notices(&stderr).len() <= 1, "{stderr}");
    }
}

#[test]
fn a_write_keeps_every_key_pi_rs_does_not_change_including_unknown_ones() {
    let Some(schema) = schema() else { return };
    for mut doc in documents(&schema, true) {
        doc.insert(
            "zzKeyOfANewerPi".into(),
            json!({"nested": [1, {"x": null}]}),
        );
        let project = project(&doc);
        let mut c = project.start();
        c.ok(json!({"type": "set_steering_mode", "mode": "all"}));
        let (status, stderr) = c.close();
        assert!(status.success(), "{stderr}");
        let written: Value = serde_json::from_str(
            &std::fs::read_to_string(project.agent_dir().join("settings.json")).unwrap(),
        )
        .unwrap();
        doc.insert("steeringMode".into(), json!("all"));
        assert_eq!(written, Value::Object(doc));
    }
}

#[test]
fn a_wrong_value_of_any_key_is_named_alone_with_the_file_key_and_expectation() {
    let Some(schema) = schema() else { return };
    let leaves = schema.leaves();
    // Every key pi 1.6 lists gets a value its schema rejects (parents stay objects)...
    let mut doc = Map::new();
    let mut expected = Vec::new();
    for leaf in leaves.iter().filter(|l| !is_parent(l)) {
        set_path(&mut doc, &leaf.path, schema.invalid(&leaf.schema));
        // pi drops a `retry.maxDelayMs` that is not a number when it migrates the key;
        // `followUpMode` gets a good value below.
        if leaf.path != "retry.maxDelayMs" && leaf.path != "followUpMode" {
            expected.push(leaf.path.clone());
        }
    }
    // ... and one key pi-rs knows keeps a good value next to them.
    doc.insert("followUpMode".into(), json!("all"));
    let project = project(&doc);
    let mut c = project.start();
    let state = c.ok(json!({"type": "get_state"}));
    let (_, stderr) = c.close();
    let file = project.agent_dir().join("settings.json");
    let warnings = settings_warnings(&stderr);
    for path in &expected {
        let prefix = format!("{}: {path}: expected ", file.display());
        assert!(
            warnings.iter().any(|w| w.contains(&prefix)),
            "no warning for {path}:\n{}",
            warnings.join("\n")
        );
    }
    assert_eq!(warnings.len(), expected.len(), "{}", warnings.join("\n"));
    // The good value among the bad ones applies; a bad one falls back to pi's default.
    assert_eq!(state["followUpMode"], "all");
    assert_eq!(state["steeringMode"], "one-at-a-time");
    // Objects of the wrong shape are named the same way.
    let mut parents = Map::new();
    let parent_paths: Vec<&str> = leaves
        .iter()
        .filter(|l| is_parent(l))
        .map(|l| l.path.as_str())
        .filter(|p| !p.contains('.'))
        .collect();
    for path in &parent_paths {
        parents.insert((*path).to_string(), json!("§not-an-object§"));
    }
    write_settings(&project.agent_dir(), &parents);
    let (_, stderr) = project.start().close();
    let warnings = settings_warnings(&stderr);
    for path in &parent_paths {
        let line = format!(
            "{}: {path}: expected an object, got \"§not-an-object§\"",
            file.display()
        );
        assert!(
            warnings.iter().any(|w| w.contains(&line)),
            "{line}\n{stderr}"
        );
    }
}

#[test]
fn keys_pi_rs_does_not_act_on_yet_are_named_once_in_one_line() {
    let settings = json!({
        "tuiMode": "fullscreen",
        "markdown": {"mermaid": "final"},
        "extensions": ["builtin:mcp"],
        "fullscreenScrollbar": "always",
    });
    let project = project(settings.as_object().unwrap());
    let (status, stderr) = project.start().close();
    assert!(status.success(), "{stderr}");
    let lines = notices(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].ends_with(
            "settings pi-rs does not support yet (kept in settings.json, no effect): markdown.mermaid, tuiMode, fullscreenScrollbar, extensions builtin:mcp — see docs/settings.md"
        ),
        "{}",
        lines[0]
    );
}

#[test]
fn docs_settings_md_has_a_row_for_every_pi_1_6_key() {
    let Some(schema) = schema() else { return };
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/settings.md"))
            .unwrap();
    let rows: Vec<&str> = docs.lines().filter(|l| l.starts_with("| `")).collect();
    for leaf in schema.leaves().iter().filter(|l| !is_parent(l)) {
        let cell = format!("| `{}` |", leaf.path);
        assert!(
            rows.iter().any(|r| r.starts_with(&cell)),
            "docs/settings.md has no row for {}",
            leaf.path
        );
    }
}

#[test]
fn a_byte_order_mark_and_pi_1_6_values_start_quietly() {
    let project = RpcProject::new(&json!({"sequence": []}), None, None);
    let text = "\u{feff}{\"$schema\": \"https://pi.dev/schemas/settings.schema.json\", \"quietStartup\": \"header\", \"httpIdleTimeoutMs\": \"disabled\", \"steeringMode\": \"all\"}";
    std::fs::write(project.agent_dir().join("settings.json"), text).unwrap();
    let mut c = project.start();
    let state = c.ok(json!({"type": "get_state"}));
    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    assert_eq!(state["steeringMode"], "all");
    assert!(settings_warnings(&stderr).is_empty(), "{stderr}");
}
