//! The built-in catalogue against the reference pi (1.6.0): with a dummy key for every
//! provider's environment variable in a throwaway HOME, `--list-models` (whole, searched,
//! and with models.json overrides of built-in providers) prints what pi prints, character
//! for character. The reference runs are skipped, with the reason printed, without
//! node/npm; the counts pi shows are checked either way.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::reference_pi;

use serde_json::{Value, json};

/// Every key variable of the catalogue, plus an AWS profile (Bedrock has no key variable;
/// pi counts `AWS_PROFILE` as configured).
fn every_key() -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ai/catalog.json"))
            .unwrap();
    let catalog: Value = serde_json::from_str(&text).unwrap();
    let mut vars: Vec<(String, String)> = catalog["providers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["envVars"].as_array().unwrap().clone())
        .map(|v| (v.as_str().unwrap().to_string(), "dummy-key".to_string()))
        .collect();
    vars.sort();
    vars.dedup();
    vars.push(("AWS_PROFILE".into(), "dummy".into()));
    vars
}

/// A HOME with an agent folder (and `models.json` when given).
fn home(models_json: Option<Value>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    if let Some(m) = models_json {
        std::fs::write(agent.join("models.json"), m.to_string()).unwrap();
    }
    dir
}

/// `program args…` with only PATH, HOME and `env`; what it printed on stdout and stderr
/// (pi prints the table on stderr when stdin is not a terminal, pi-rs on stdout). Output
/// goes to files: node exits before a long output to a pipe is flushed.
fn printed(mut cmd: Command, home: &Path, env: &[(String, String)]) -> String {
    let out_dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = (out_dir.path().join("out"), out_dir.path().join("err"));
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let status = cmd.status().unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert!(
        status.success(),
        "{cmd:?} failed: {status}\n{}",
        read(&stderr)
    );
    format!("{}{}", read(&stdout), read(&stderr))
}

fn ours(args: &[&str], home: &Path, env: &[(String, String)]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
    cmd.args(args);
    printed(cmd, home, env)
}

fn theirs(args: &[&str], home: &Path, env: &[(String, String)]) -> String {
    let mut cmd = reference_pi::script_command();
    cmd.args(args);
    printed(cmd, home, env)
}

/// Compares line by line first, so a failure names the first differing row.
fn assert_same_listing(ours: &str, theirs: &str) {
    for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
        assert_eq!(a, b, "line {} differs", i + 1);
    }
    assert_eq!(ours.lines().count(), theirs.lines().count());
    assert_eq!(ours, theirs);
}

macro_rules! require_reference_pi {
    () => {
        if let Err(why) = reference_pi::available() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn every_key_lists_pis_thirty_nine_providers_and_1605_models() {
    let home = home(None);
    let out = ours(&["--list-models"], home.path(), &every_key());
    let rows: Vec<&str> = out.lines().skip(1).collect();
    let mut providers: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.split_whitespace().next())
        .collect();
    providers.dedup();
    assert_eq!((providers.len(), rows.len()), (39, 1605), "{out}");
    // openai-codex needs a ChatGPT sign-in, not a key; the Cloudflare providers also
    // need their account (and gateway) id; TypeSafe has no chat models.
    for absent in [
        "openai-codex",
        "cloudflare-workers-ai",
        "cloudflare-ai-gateway",
        "typesafe",
    ] {
        assert!(!providers.contains(&absent), "{absent}");
    }
    // pi 1.6's id of the Azure provider.
    assert!(providers.contains(&"azure"));
}

#[test]
fn list_models_with_every_key_matches_reference_pi() {
    require_reference_pi!();
    let home = home(None);
    let env = every_key();
    assert_same_listing(
        &ours(&["--list-models"], home.path(), &env),
        &theirs(&["--list-models"], home.path(), &env),
    );
}

#[test]
fn list_models_search_matches_reference_pi() {
    require_reference_pi!();
    let home = home(None);
    let env = every_key();
    for search in ["sonnet", "gpt 5", "opus4", "bedrock nova", "kimi", "zzzzqq"] {
        assert_same_listing(
            &ours(&["--list-models", search], home.path(), &env),
            &theirs(&["--list-models", search], home.path(), &env),
        );
    }
}

#[test]
fn list_models_with_some_keys_matches_reference_pi() {
    require_reference_pi!();
    let home = home(None);
    let env = vec![
        ("ZAI_API_KEY".to_string(), "k".to_string()),
        ("MOONSHOT_API_KEY".to_string(), "k".to_string()),
        ("COPILOT_GITHUB_TOKEN".to_string(), "k".to_string()),
    ];
    assert_same_listing(
        &ours(&["--list-models"], home.path(), &env),
        &theirs(&["--list-models"], home.path(), &env),
    );
}

#[test]
fn models_json_overrides_of_builtin_providers_list_as_in_reference_pi() {
    require_reference_pi!();
    let models = json!({"providers": {
        // A built-in provider proxied elsewhere, one model patched, one model added.
        "anthropic": {
            "baseUrl": "http://127.0.0.1:9/anthropic",
            "modelOverrides": {
                "claude-sonnet-4-5": {"contextWindow": 1000000, "maxTokens": 12345, "reasoning": false},
                "claude-opus-4-7": {"input": ["text"]}
            },
            "models": [{"id": "claude-next", "name": "Claude Next", "reasoning": true,
                        "input": ["text", "image"], "contextWindow": 500000, "maxTokens": 64000}]
        },
        // A built-in model replaced by a custom definition of the same id.
        "xiaomi": {"models": [{"id": "mimo-v2.5-pro", "contextWindow": 1234, "maxTokens": 999}]},
        // A custom provider with a key in models.json.
        "local": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "none",
                  "models": [{"id": "llama-3.3-70b"}, {"id": "Qwen3-Coder", "reasoning": true}]}
    }});
    let home = home(Some(models));
    let env = vec![
        ("ANTHROPIC_API_KEY".to_string(), "k".to_string()),
        ("XIAOMI_API_KEY".to_string(), "k".to_string()),
    ];
    let listing = ours(&["--list-models"], home.path(), &env);
    assert!(listing.contains("claude-next"), "{listing}");
    assert_same_listing(&listing, &theirs(&["--list-models"], home.path(), &env));
    for search in ["claude", "local q"] {
        assert_same_listing(
            &ours(&["--list-models", search], home.path(), &env),
            &theirs(&["--list-models", search], home.path(), &env),
        );
    }
}
