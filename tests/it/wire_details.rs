//! Wire details found side by side with the reference pi (0.73.1), checked on the loopback
//! server: the client headers every request carries, OpenRouter's attribution headers,
//! what the model is told after a tool call cut by the output limit, and where
//! `auto_retry_end` falls in `--mode json`. The reference runs are skipped, with the
//! reason printed, without node/npm; the pi-rs side is checked either way.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::{Command, Stdio};

use crate::support::mock_llm::RecordedRequest;
use crate::support::pi_project::{Project, jsonl, succeeded};
use crate::support::reference_pi;

// The reference comparisons of this file are pinned to pi 0.73.1: pi 1.6's client headers, its handling of a cut tool call and its RPC/JSON events
// (`entry_appended`, `agent_settled`) are issue 27 (items 3 and 4).
use serde_json::{Value, json};

macro_rules! require_reference_pi {
    () => {
        if let Err(why) = reference_pi::available_073() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// A project whose models.json has one provider per wire API (and OpenRouter moved onto
/// the server), all answered by the same script.
fn project_with_every_api(script: Value) -> Project {
    let p = Project::new(script);
    let url = p.server.url();
    let models = json!({"providers": {
        "c": {"baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "k",
              "compat": {"supportsDeveloperRole": false}, "models": [{"id": "m"}]},
        "r": {"baseUrl": format!("{url}/v1"), "api": "openai-responses", "apiKey": "k", "models": [{"id": "m"}]},
        "a": {"baseUrl": url.as_str(), "api": "anthropic-messages", "apiKey": "k", "models": [{"id": "m"}]},
        "g": {"baseUrl": format!("{url}/v1beta"), "api": "google-generative-ai", "apiKey": "k", "models": [{"id": "m"}]},
        "mi": {"baseUrl": format!("{url}/mistral"), "api": "mistral-conversations", "apiKey": "k", "models": [{"id": "m"}]},
        "az": {"baseUrl": format!("{url}/openai/v1"), "api": "azure-openai-responses", "apiKey": "k", "models": [{"id": "m"}]},
        "vx": {"baseUrl": url.as_str(), "api": "google-vertex", "apiKey": "k", "models": [{"id": "m"}]},
        "openrouter": {"baseUrl": format!("{url}/api/v1"), "apiKey": "k"},
        "mock": {"baseUrl": format!("{url}/v1"), "api": "openai-completions", "apiKey": "mock",
                 "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                 "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]}
    }});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        p.agent_dir().join("settings.json"),
        json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 10,
                         "provider": {"maxRetries": 0}}})
        .to_string(),
    )
    .unwrap();
    p
}

/// `pi -p hi` (ours or the reference) on `provider/model` of `p`, with extra env vars.
fn run(p: &Project, reference: bool, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = if reference {
        reference_pi::command_073()
    } else {
        Command::new(env!("CARGO_BIN_EXE_pi"))
    };
    cmd.current_dir(p.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.dir.path().join("home"))
        .envs(env.iter().copied())
        .arg("--offline")
        .args(args)
        .stdin(Stdio::null());
    succeeded(&cmd.output().unwrap())
}

/// The identity headers of a request (lower-cased names), without the SDKs' telemetry.
fn identity(r: &RecordedRequest) -> Vec<(String, String)> {
    let keep = [
        "user-agent",
        "x-goog-api-client",
        "http-referer",
        "x-openrouter-title",
        "x-openrouter-categories",
    ];
    let mut out: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .cloned()
        .collect();
    out.sort();
    out
}

const PROVIDERS: [(&str, &str); 8] = [
    ("c", "m"),
    ("r", "m"),
    ("a", "m"),
    ("g", "m"),
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("mi", "m"),
    ("az", "m"),
    ("vx", "m"),
];

fn identities(p: &Project, reference: bool, env: &[(&str, &str)]) -> Vec<Vec<(String, String)>> {
    for (provider, model) in PROVIDERS {
        run(
            p,
            reference,
            &["--provider", provider, "--model", model, "-p", "hi"],
            env,
        );
    }
    p.server.requests().iter().map(identity).collect()
}

#[test]
fn every_request_names_its_client_and_openrouter_gets_attribution() {
    let p = project_with_every_api(json!({"default": {"text": "ok"}}));
    let ours = identities(&p, false, &[]);
    let ua = |i: usize| {
        ours[i]
            .iter()
            .find(|(k, _)| k == "user-agent")
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(ua(0), Some("OpenAI/JS 6.26.0"));
    assert_eq!(ua(1), Some("OpenAI/JS 6.26.0"));
    assert_eq!(ua(2), Some("Anthropic/JS 0.91.1"));
    assert_eq!(ua(3), Some("google-genai-sdk/1.52.0 gl-node/v20.20.2"));
    assert!(
        ours[4].contains(&("http-referer".into(), "https://pi.dev".into())),
        "{:?}",
        ours[4]
    );
    assert!(ours[4].contains(&("x-openrouter-title".into(), "pi".into())));
    assert_eq!(ua(5), Some("mistral-client-typescript/2.7.0"));
    assert_eq!(ua(6), Some("AzureOpenAI/JS 6.26.0"));
    assert_eq!(ua(7), Some("google-genai-sdk/1.52.0 gl-node/v20.20.2"));
    assert!(ours[7].contains(&(
        "x-goog-api-client".into(),
        "google-genai-sdk/1.52.0 gl-node/v20.20.2".into()
    )));

    // Telemetry off: no attribution.
    let quiet = project_with_every_api(json!({"default": {"text": "ok"}}));
    let off = identities(&quiet, false, &[("PI_TELEMETRY", "0")]);
    assert!(
        !off[4].iter().any(|(k, _)| k == "http-referer"),
        "{:?}",
        off[4]
    );
}

#[test]
fn client_and_attribution_headers_equal_the_reference_pis() {
    require_reference_pi!();
    for env in [vec![], vec![("PI_TELEMETRY", "0")]] {
        let ours = identities(
            &project_with_every_api(json!({"default": {"text": "ok"}})),
            false,
            &env,
        );
        let theirs = identities(
            &project_with_every_api(json!({"default": {"text": "ok"}})),
            true,
            &env,
        );
        assert_eq!(ours, theirs, "env {env:?}");
    }
}

/// The messages (system prompt left out) of the request after a `write` call cut by the
/// output limit, on `provider`'s wire API, and what was written.
fn after_cut_tool_call(provider: &str, model: &str, reference: bool) -> (Value, Option<String>) {
    let p = project_with_every_api(json!({"sequence": [
        {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "hello there, world"}}],
         "cut_by_max_tokens": true},
        {"text": "ok"}
    ]}));
    run(
        &p,
        reference,
        &["--provider", provider, "--model", model, "-p", "write it"],
        &[],
    );
    let requests = p.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let messages: Vec<Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "developer")
        .cloned()
        .collect();
    let written = std::fs::read_to_string(p.cwd().join("a.txt")).ok();
    (Value::Array(messages), written)
}

#[test]
fn a_tool_call_cut_by_max_tokens_is_handled_as_in_reference_pi() {
    for (provider, model) in [("mock", "mock-model"), ("a", "m")] {
        let (ours, written) = after_cut_tool_call(provider, model, false);
        // The model sees the arguments that arrived, not `{}`.
        assert!(ours.to_string().contains("a.txt"), "{provider}: {ours}");
        if reference_pi::available_073().is_err() {
            continue;
        }
        let (theirs, their_file) = after_cut_tool_call(provider, model, true);
        assert_eq!(ours, theirs, "{provider}");
        assert_eq!(written, their_file, "{provider}");
    }
}

/// Event types of `--mode json` for an overloaded answer, then a good one.
fn retry_events(reference: bool) -> Vec<String> {
    let p = project_with_every_api(json!({"sequence": [
        {"error": {"status": 529, "body": "{\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\"}}"}},
        {"text": "ok"}
    ]}));
    let out = run(
        &p,
        reference,
        &[
            "--provider",
            "mock",
            "--model",
            "mock-model",
            "--mode",
            "json",
            "-p",
            "hi",
        ],
        &[],
    );
    jsonl(out.trim())
        .into_iter()
        .filter_map(|e| e["type"].as_str().map(str::to_string))
        .filter(|t| t != "message_update" && t != "session")
        .collect()
}

#[test]
fn auto_retry_end_follows_the_answer_as_in_reference_pi() {
    let ours = retry_events(false);
    let end = ours.iter().position(|t| t == "auto_retry_end").unwrap();
    assert_eq!(ours[end - 1], "message_end", "{ours:?}");
    assert_eq!(ours[end + 1], "turn_end", "{ours:?}");
    assert_eq!(ours.last().map(String::as_str), Some("agent_settled"));
    require_reference_pi!();
    // The reference here is pi 0.73.1, which has no `agent_settled` (pi 1.6 does).
    let ours: Vec<String> = ours.into_iter().filter(|t| t != "agent_settled").collect();
    assert_eq!(ours, retry_events(true));
}
