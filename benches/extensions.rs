//! Host overhead of extension events: one `tool_call` round trip (event out, answer back,
//! decision made) and one `context` round trip with a 20-message conversation, against a
//! trivial extension compiled into this benchmark (the binary runs itself with
//! `--as-extension`, so there is no interpreter start-up or parsing noise), and the same
//! `tool_call` round trip against a trivial Python extension. Also the cost of posting a
//! notification (`turn_start`), which never waits. Target: ≤ 1 ms per round trip.
#![allow(clippy::expect_used)] // a benchmark that cannot set up should stop loudly

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use pi::agent::AgentEvent;
use pi::ai::message::UserMessage;
use pi::core::resource_paths::ResourceScope;
use pi::extensions::{ExtensionHost, ExtensionSource, HostMode, Launch, LoadOptions};
use pi::messages::AgentMessage;
use serde_json::json;

const AS_EXTENSION: &str = "--as-extension";

/// The trivial extension: registers, then answers every event that has an id with an
/// empty result. Reads the id by scanning the line (the host writes `"id":N,` right after
/// the type), so the extension side costs next to nothing.
fn run_as_extension() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut lines = stdin.lock().lines();
    if lines.next().is_none() {
        return;
    }
    let register =
        r#"{"type":"register","name":"bench","events":["tool_call","context","turn_start"]}"#;
    if writeln!(stdout, "{register}")
        .and_then(|_| stdout.flush())
        .is_err()
    {
        return;
    }
    for line in lines.map_while(Result::ok) {
        let Some(rest) = line.strip_prefix(r#"{"type":"event","id":"#) else {
            continue;
        };
        let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if writeln!(stdout, r#"{{"type":"response","id":{id}}}"#)
            .and_then(|_| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

const PYTHON_EXTENSION: &str = r#"#!/usr/bin/env python3
import json, sys
sys.stdin.readline()
sys.stdout.write(json.dumps({"type": "register", "name": "bench-py", "events": ["tool_call"]}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "event" and "id" in m:
        sys.stdout.write(json.dumps({"type": "response", "id": m["id"], "result": None}) + "\n")
        sys.stdout.flush()
"#;

fn options(dir: &std::path::Path) -> LoadOptions {
    let mut o = LoadOptions::new(dir, &dir.join("agent"), HostMode::Print, false);
    o.event_timeout = Duration::from_secs(30);
    o
}

fn has_python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("benchmark path");
    let compiled = ExtensionSource {
        path: PathBuf::from("bench-extension"),
        launch: Launch {
            program: exe,
            args: vec![AS_EXTENSION.to_string()],
            node_module: false,
        },
        scope: ResourceScope::Cli,
    };
    let (host, _channels) =
        runtime.block_on(ExtensionHost::load(vec![compiled], options(dir.path())));
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());

    let input = json!({"command": "cargo test --workspace"});
    c.bench_function(
        "extensions/tool_call round trip (compiled extension)",
        |b| b.iter(|| runtime.block_on(host.tool_call("call_1", "bash", &input))),
    );
    let messages: Vec<AgentMessage> = (0..20)
        .map(|i| {
            AgentMessage::User(UserMessage::text(
                format!("message {i}: {}", "x".repeat(200)),
                i,
            ))
        })
        .collect();
    c.bench_function(
        "extensions/context round trip, 20 messages (compiled extension)",
        |b| b.iter(|| runtime.block_on(host.context(messages.clone()))),
    );
    c.bench_function("extensions/turn_start notification (no wait)", |b| {
        b.iter(|| host.agent_event(&AgentEvent::TurnStart))
    });
    runtime.block_on(host.shutdown(pi::extensions::ShutdownReason::Quit, None));

    if !has_python() {
        eprintln!("skipping the Python benchmark: python3 is not installed");
        return;
    }
    let script = dir.path().join("bench.py");
    std::fs::write(&script, PYTHON_EXTENSION).expect("write python extension");
    let python = ExtensionSource {
        path: script.clone(),
        launch: Launch {
            program: PathBuf::from("python3"),
            args: vec![script.display().to_string()],
            node_module: false,
        },
        scope: ResourceScope::Cli,
    };
    let (host, _channels) =
        runtime.block_on(ExtensionHost::load(vec![python], options(dir.path())));
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    c.bench_function("extensions/tool_call round trip (python extension)", |b| {
        b.iter(|| runtime.block_on(host.tool_call("call_1", "bash", &input)))
    });
    runtime.block_on(host.shutdown(pi::extensions::ShutdownReason::Quit, None));
}

criterion_group!(benches, bench);

fn main() {
    if std::env::args().any(|a| a == AS_EXTENSION) {
        run_as_extension();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
