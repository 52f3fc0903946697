//! Cloudflare's providers on the loopback server — account and gateway ids filled into
//! the catalog base URLs from the environment, the AI Gateway key sent in
//! `cf-aig-authorization` — and what `--list-models` says without credentials; each
//! checked side by side with the reference pi (1.6.0) where node is available.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::{Command, Output, Stdio};

use crate::support::pi_project::Project;
use crate::support::reference_pi;
use serde_json::json;

/// `pi --offline ARGS` (ours or the reference) in `p` with only `env` set.
fn pi(p: &Project, reference: bool, args: &[&str], env: &[(&str, &str)]) -> Output {
    pi_with(p, reference.then(reference_pi::script_command), args, env)
}

/// [`pi`] with the reference command given (`None`: pi-rs).
fn pi_with(p: &Project, reference: Option<Command>, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = if let Some(reference) = reference {
        reference
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
    cmd.output().unwrap()
}

/// A project whose Cloudflare AI Gateway is moved onto the loopback server, keeping the
/// catalog's placeholders in the path.
fn gateway_project() -> Project {
    let p = Project::new(json!({"default": {"text": "ok"}}));
    let url = p.server.url();
    let models = json!({"providers": {"cloudflare-ai-gateway": {
        "baseUrl": format!("{url}/{{CLOUDFLARE_ACCOUNT_ID}}/{{CLOUDFLARE_GATEWAY_ID}}/openai")
    }}});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    p
}

const GATEWAY_ENV: [(&str, &str); 3] = [
    ("CLOUDFLARE_API_KEY", "cf-key"),
    ("CLOUDFLARE_ACCOUNT_ID", "acct-1"),
    ("CLOUDFLARE_GATEWAY_ID", "gw-1"),
];

/// Path, `cf-aig-authorization` and `authorization` of the one gateway request.
fn gateway_request(reference: bool) -> (String, Option<String>, Option<String>) {
    let p = gateway_project();
    let out = pi(
        &p,
        reference,
        &[
            "--provider",
            "cloudflare-ai-gateway",
            "--model",
            "gpt-4o",
            "-p",
            "hi",
        ],
        &GATEWAY_ENV,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    (
        r.path.clone(),
        r.header("cf-aig-authorization").map(str::to_string),
        r.header("authorization").map(str::to_string),
    )
}

#[test]
fn the_ai_gateway_url_and_key_come_from_the_environment() {
    let ours = gateway_request(false);
    assert_eq!(
        ours,
        (
            "/acct-1/gw-1/openai/responses".to_string(),
            Some("Bearer cf-key".to_string()),
            None
        )
    );
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    assert_eq!(ours, gateway_request(true));
}

#[test]
fn a_missing_gateway_id_means_no_key_as_in_pi_16() {
    // pi 1.6 only counts the gateway as configured with key, account id and gateway id.
    let args = [
        "--provider",
        "cloudflare-ai-gateway",
        "--model",
        "gpt-4o",
        "-p",
        "hi",
    ];
    let first_line = |reference: bool| {
        let p = gateway_project();
        let out = pi(&p, reference, &args, &GATEWAY_ENV[..2]);
        assert!(!out.status.success());
        assert!(p.server.requests().is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        stderr.lines().next().unwrap_or_default().to_string()
    };
    let ours = first_line(false);
    assert_eq!(ours, "No API key found for cloudflare-ai-gateway.");
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    assert_eq!(ours, first_line(true));
}

/// pi's words without a model, before pi-rs's longer guidance and doc paths.
const NO_MODELS: &str =
    "No models available. Use /login to log into a provider via OAuth or API key";

#[test]
fn list_models_without_credentials_says_what_pi_says() {
    let p = Project::new(json!({"default": {"text": "ok"}}));
    std::fs::write(p.agent_dir().join("models.json"), r#"{"providers": {}}"#).unwrap();
    let listed = pi(&p, false, &["--list-models"], &[]);
    assert!(listed.status.success());
    // On stdout, as pi 1.6 prints it, after the same words as a warning on stderr.
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.starts_with(NO_MODELS), "{stdout}");
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert!(
        stderr.starts_with(&format!("Warning: {NO_MODELS}")),
        "{stderr}"
    );
    // Absolute links to the docs.
    for doc in ["providers.md", "models.md"] {
        let line = stdout.lines().find(|l| l.ends_with(doc)).unwrap();
        assert!(line.trim().starts_with('/'), "{line}");
    }
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    let theirs = pi_with(
        &p,
        Some(reference_pi::script_command()),
        &["--list-models"],
        &[],
    );
    assert!(theirs.status.success());
    assert!(String::from_utf8_lossy(&theirs.stdout).starts_with(NO_MODELS));
    assert!(String::from_utf8_lossy(&theirs.stderr).starts_with(&format!("Warning: {NO_MODELS}")));
}
