//! A temporary project for tests that run pi-rs against the loopback model server: a
//! `HOME` with an agent folder whose `models.json` points at the server, a working
//! folder, the `pi` command set up for them, and readable renderings of what the model
//! was sent and what the session file holds.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::mock_llm::{MockLlm, Script};

pub struct Project {
    pub dir: tempfile::TempDir,
    pub server: MockLlm,
}

/// Saves a "trusted" decision for `cwd` in the agent folder's trust.json, as a user who
/// works in the project has answered pi's trust question: its `.pi` resources load.
pub fn trust_folder(agent_dir: &std::path::Path, cwd: &std::path::Path) {
    let key = std::fs::canonicalize(cwd).unwrap().display().to_string();
    std::fs::create_dir_all(agent_dir).unwrap();
    std::fs::write(
        agent_dir.join("trust.json"),
        json!({ key: true }).to_string(),
    )
    .unwrap();
}

impl Project {
    /// A project the user trusts (see [`trust_folder`]); [`Project::untrusted`] for one
    /// with no trust decision.
    pub fn new(script: Value) -> Project {
        let project = Project::untrusted(script);
        trust_folder(&project.agent_dir(), &project.cwd());
        project
    }

    /// A project without a saved trust decision.
    pub fn untrusted(script: Value) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let project = Project { dir, server };
        std::fs::create_dir_all(project.agent_dir()).unwrap();
        std::fs::create_dir_all(project.cwd()).unwrap();
        let models = json!({"providers": {"mock": {
            "baseUrl": format!("{}/v1", project.server.url()), "api": "openai-completions",
            "apiKey": "mock",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
        }}});
        std::fs::write(project.agent_dir().join("models.json"), models.to_string()).unwrap();
        project
    }

    pub fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    pub fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("home/.pi/agent")
    }

    pub fn pi(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.current_dir(self.cwd())
            .env("HOME", self.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .args(["--offline", "--provider", "mock", "--model", "mock-model"])
            .stdin(Stdio::null());
        cmd
    }

    /// Writes a file under the project (creating folders).
    /// `pi --offline --provider mock --model mock-model <extra>` in a 110×40 tmux pane,
    /// with this project's home.
    pub fn tui(&self, extra: &str) -> super::tmux::Tmux {
        let home = self.dir.path().join("home");
        let cmd = format!(
            "{} --offline --provider mock --model mock-model {extra}",
            env!("CARGO_BIN_EXE_pi")
        );
        super::tmux::Tmux::start(
            &cmd,
            &self.cwd(),
            &[
                ("HOME", home.to_str().unwrap()),
                ("PI_CODING_AGENT_DIR", ""),
            ],
            110,
            40,
        )
    }

    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.cwd().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn session_file(&self) -> PathBuf {
        let root = self.agent_dir().join("sessions");
        let mut files = Vec::new();
        for dir in std::fs::read_dir(root).unwrap().flatten() {
            files.extend(
                std::fs::read_dir(dir.path())
                    .unwrap()
                    .flatten()
                    .map(|f| f.path()),
            );
        }
        assert_eq!(files.len(), 1, "{files:?}");
        files.remove(0)
    }

    pub fn entries(&self) -> Vec<Value> {
        jsonl(&std::fs::read_to_string(self.session_file()).unwrap())
    }

    pub fn requests(&self) -> Vec<Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
    }

    /// Replaces the temp folder in `text` so snapshots do not depend on it.
    pub fn anonymize(&self, text: &str) -> String {
        text.replace(&self.dir.path().display().to_string(), "<tmp>")
    }
}

pub fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn succeeded(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The conversation of a chat-completions request, one line per message (the system
/// prompt left out): `role: text`, with tool calls as `→ name(arguments)`.
pub fn conversation(body: &Value) -> String {
    let mut lines = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        let role = m["role"].as_str().unwrap_or("?");
        if role == "system" {
            continue;
        }
        let mut line = format!("{role}: {}", text_of(&m["content"]));
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            line.push_str(&format!(
                " → {}({})",
                call["function"]["name"].as_str().unwrap_or("?"),
                call["function"]["arguments"].as_str().unwrap_or("")
            ));
        }
        lines.push(line);
    }
    lines.join("\n")
}

pub fn system_prompt(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default()
}

pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// The session's entries as `type [detail]` lines (messages by role and text).
pub fn entry_lines(entries: &[Value]) -> String {
    entries[1..]
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap();
            match kind {
                "message" => format!(
                    "message {}: {}",
                    e["message"]["role"].as_str().unwrap(),
                    text_of(&e["message"]["content"])
                ),
                "custom_message" => format!(
                    "custom_message {}: {}",
                    e["customType"].as_str().unwrap(),
                    text_of(&e["content"])
                ),
                other => other.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
