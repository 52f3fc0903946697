//! The built `pi` binary in print mode with an expired Anthropic OAuth login in
//! auth.json: the token is refreshed at the (loopback) token endpoint before the model
//! request, the request carries the new token, and auth.json keeps the new tokens. A
//! refused refresh is a clear error with exit code 1.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support::mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

struct Project {
    dir: tempfile::TempDir,
    server: MockLlm,
}

impl Project {
    fn new(script: Value, auth: Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let models = json!({"providers": {"anthropic": {
            "baseUrl": server.url(), "api": "anthropic-messages",
            "models": [{"id": "mock-claude", "contextWindow": 200000, "maxTokens": 4000}]
        }}});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        std::fs::write(agent.join("auth.json"), auth.to_string()).unwrap();
        Project { dir, server }
    }

    fn auth_path(&self) -> PathBuf {
        self.dir.path().join("home/.pi/agent/auth.json")
    }

    fn command(&self, prompt: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.current_dir(self.dir.path().join("proj"))
            .env("HOME", self.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_OAUTH_TOKEN")
            .env("PI_RS_OAUTH_TEST_SERVER", self.server.url())
            .args(["--offline", "--no-session", "--provider", "anthropic"])
            .args(["--model", "mock-claude", "-p", prompt])
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, prompt: &str) -> Output {
        self.command(prompt).output().unwrap()
    }
}

fn expired_login() -> Value {
    json!({
        "openai": {"type": "api_key", "key": "sk-openai-kept"},
        "anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-old", "access": "sk-ant-oat01-old",
            "expires": 1_700_000_000_000_i64}
    })
}

#[test]
fn an_expired_anthropic_login_is_refreshed_used_and_saved() {
    let project = Project::new(
        json!({
            "default": {"text": "hello from claude"},
            "oauth_token": {"status": 200, "body": {"token_type": "Bearer",
                "access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new",
                "expires_in": 28800}}
        }),
        expired_login(),
    );
    let before = chrono::Utc::now().timestamp_millis();
    let out = project.run("hi");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "hello from claude"
    );

    let requests = project.server.requests();
    let paths: Vec<_> = requests
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        paths,
        [
            "POST /platform.claude.com/v1/oauth/token",
            "POST /v1/messages"
        ]
    );
    assert_eq!(
        requests[0].body,
        json!({"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
            "refresh_token": "sk-ant-ort01-old"})
    );
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer sk-ant-oat01-new")
    );

    let mut saved: Value =
        serde_json::from_str(&std::fs::read_to_string(project.auth_path()).unwrap()).unwrap();
    let expires = saved["anthropic"]["expires"].as_i64().unwrap();
    let lifetime = 28_800_000 - 300_000;
    assert!(
        (before + lifetime..=before + lifetime + 60_000).contains(&expires),
        "expires {expires} is not about now + 7h55m"
    );
    saved["anthropic"]["expires"] = json!("<now + 7h55m>");
    assert_eq!(
        saved,
        json!({
            "openai": {"type": "api_key", "key": "sk-openai-kept"},
            "anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-new",
                "access": "sk-ant-oat01-new", "expires": "<now + 7h55m>"}
        })
    );

    // The next run finds a valid token and asks the token endpoint nothing.
    let out = project.run("again");
    assert!(out.status.success());
    let requests = project.server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].path, "/v1/messages");
    assert_eq!(
        requests[2].header("authorization"),
        Some("Bearer sk-ant-oat01-new")
    );
}

#[test]
fn a_refused_refresh_exits_1_with_what_to_do_and_sends_no_model_request() {
    let project = Project::new(
        json!({
            "default": {"text": "never"},
            "oauth_token": {"status": 400, "body": {"error": "invalid_grant",
                "error_description": "Refresh token expired"}}
        }),
        expired_login(),
    );
    let out = project.run("hi");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr)
        .replace(&project.server.url(), "<mock>")
        .replace(&project.dir.path().display().to_string(), "<tmp>");
    insta::assert_snapshot!(stderr.trim(), @r#"
    Failed to refresh OAuth token for anthropic: <mock>/platform.claude.com/v1/oauth/token answered HTTP 400: {"error":"invalid_grant","error_description":"Refresh token expired"}

    Run /login in pi to sign in again, or remove the "anthropic" entry from <tmp>/home/.pi/agent/auth.json and set ANTHROPIC_API_KEY.
    "#);
    let paths: Vec<_> = project
        .server
        .requests()
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(paths, ["/platform.claude.com/v1/oauth/token"]);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(project.auth_path()).unwrap()).unwrap();
    assert_eq!(saved, expired_login());
}

#[test]
fn while_another_process_holds_the_lock_pi_waits_then_uses_the_token_that_process_saved() {
    let project = Project::new(
        json!({
            "default": {"text": "ok"},
            "oauth_token": {"status": 200, "body": {"access_token": "sk-ant-oat01-ours",
                "refresh_token": "r", "expires_in": 28800}}
        }),
        expired_login(),
    );
    // Another pi holds the lock (proper-lockfile's directory) while it refreshes.
    let lock = project.dir.path().join("home/.pi/agent/auth.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let child = project
        .command("hi")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(project.server.requests().is_empty());
    let mut theirs = expired_login();
    theirs["anthropic"] = json!({"type": "oauth", "refresh": "r-theirs",
        "access": "sk-ant-oat01-theirs", "expires": chrono::Utc::now().timestamp_millis() + 3_600_000});
    std::fs::write(project.auth_path(), theirs.to_string()).unwrap();
    std::fs::remove_dir(&lock).unwrap();

    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = project.server.requests();
    let paths: Vec<_> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/v1/messages"]);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-ant-oat01-theirs")
    );
}
