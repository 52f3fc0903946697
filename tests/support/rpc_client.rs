//! A client for the `pi` binary in RPC mode, as a program embedding pi would write one:
//! commands written to stdin as JSON lines, stdout split on `\n` only, every line parsed
//! and kept (so a failing test can show what the agent said).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::mock_llm::{MockLlm, Script};

/// How long to wait for any one message.
pub const WAIT: Duration = Duration::from_secs(15);

/// A temp HOME with `~/.pi/agent/models.json` pointing at a loopback mock model, and a
/// project directory to run in.
pub struct RpcProject {
    pub dir: tempfile::TempDir,
    pub server: MockLlm,
}

impl RpcProject {
    /// `models` is a models.json whose `baseUrl`s are replaced by the mock server's.
    pub fn new(script: &Value, models: Option<Value>, settings: Option<Value>) -> RpcProject {
        let dir = tempfile::tempdir().unwrap();
        let server = MockLlm::start(Script::from_json(&script.to_string()).unwrap());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        let mut models = models.unwrap_or_else(|| {
            json!({"providers": {"mock": {
                "baseUrl": "", "api": "openai-completions", "apiKey": "mock",
                "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
            }}})
        });
        for provider in models["providers"].as_object_mut().unwrap().values_mut() {
            provider["baseUrl"] = json!(format!("{}/v1", server.url()));
        }
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        if let Some(settings) = settings {
            std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
        }
        // The user trusts the project (its `.pi` resources load).
        super::pi_project::trust_folder(&agent, &dir.path().join("proj"));
        RpcProject { dir, server }
    }

    pub fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    pub fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("home/.pi/agent")
    }

    /// `pi --mode rpc` on the mock model, not started.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.current_dir(self.cwd())
            .env("HOME", self.dir.path().join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .args([
                "--mode",
                "rpc",
                "--offline",
                "--provider",
                "mock",
                "--model",
                "mock-model",
            ]);
        cmd
    }

    pub fn start(&self) -> RpcClient {
        RpcClient::spawn(self.command())
    }

    /// Session files, oldest name first.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for dir in std::fs::read_dir(self.agent_dir().join("sessions"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for f in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                files.push(f.path());
            }
        }
        files.sort();
        files
    }
}

/// Every JSON line of a file.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A running `pi --mode rpc`.
pub struct RpcClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: mpsc::Receiver<String>,
    /// Everything read from stdout so far.
    pub seen: Vec<Value>,
    next_id: u64,
}

impl RpcClient {
    pub fn spawn(mut cmd: Command) -> RpcClient {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = match stdout.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                buf.extend_from_slice(&chunk[..n]);
                while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=pos).collect();
                    let text = String::from_utf8(line[..line.len() - 1].to_vec()).unwrap();
                    let value = serde_json::from_str(&text)
                        .unwrap_or_else(|e| json!({"NOT JSON": text, "error": e.to_string()}));
                    if tx.send(value).is_err() {
                        return;
                    }
                }
            }
            if !buf.is_empty() {
                let _ = tx.send(json!({"UNTERMINATED": String::from_utf8_lossy(&buf)}));
            }
        });
        let mut stderr_pipe = child.stderr.take().unwrap();
        let (etx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text);
            let _ = etx.send(text);
        });
        let stdin = child.stdin.take();
        RpcClient {
            child,
            stdin,
            lines,
            stderr,
            seen: Vec::new(),
            next_id: 0,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line (a `\n` is added).
    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, command: &Value) {
        self.send_raw(&command.to_string());
    }

    fn tail(&self) -> String {
        let start = self.seen.len().saturating_sub(8);
        self.seen[start..]
            .iter()
            .map(|v| {
                let s = v.to_string();
                s.chars().take(300).collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The next message (fails after [`WAIT`]).
    pub fn next(&mut self) -> Value {
        match self.lines.recv_timeout(WAIT) {
            Ok(v) => {
                self.seen.push(v.clone());
                v
            }
            Err(_) => panic!(
                "no message from pi within {WAIT:?}; last seen:\n{}",
                self.tail()
            ),
        }
    }

    /// Messages up to and including the first one `until` accepts.
    pub fn read_until(&mut self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let v = self.next();
            let done = until(&v);
            out.push(v);
            if done {
                return out;
            }
        }
    }

    /// Nothing arrives within `quiet`.
    pub fn assert_silent(&mut self, quiet: Duration) {
        if let Ok(v) = self.lines.recv_timeout(quiet) {
            panic!("unexpected message: {v}");
        }
    }

    /// Sends `command` with a fresh id and returns its response (events before it are
    /// kept in `seen`).
    pub fn request(&mut self, mut command: Value) -> Value {
        self.next_id += 1;
        let id = format!("t{}", self.next_id);
        command["id"] = json!(id);
        self.send(&command);
        self.read_until(|v| v["type"] == "response" && v["id"] == id)
            .pop()
            .unwrap()
    }

    /// [`RpcClient::request`] that must succeed; returns `data`.
    pub fn ok(&mut self, command: Value) -> Value {
        let response = self.request(command);
        assert_eq!(response["success"], true, "{response}");
        response.get("data").cloned().unwrap_or(Value::Null)
    }

    /// Sends a prompt and returns everything up to its `agent_settled` (pi 1.6: nothing
    /// more runs on its own after it).
    pub fn prompt(&mut self, text: &str) -> Vec<Value> {
        self.next_id += 1;
        let id = format!("t{}", self.next_id);
        self.send(&json!({"type": "prompt", "message": text, "id": id}));
        self.read_until(|v| v["type"] == "agent_settled")
    }

    /// Closes stdin and waits for the process to exit; returns its status and stderr.
    pub fn close(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        self.wait_exit()
    }

    /// Waits for the process to exit by itself (stdin stays open); returns its status
    /// and stderr.
    pub fn wait_exit(mut self) -> (ExitStatus, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("pi did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        while let Ok(v) = self.lines.recv_timeout(Duration::from_millis(200)) {
            self.seen.push(v);
        }
        let stderr = self.stderr.recv_timeout(WAIT).unwrap_or_default();
        (status, stderr)
    }
}

impl Drop for RpcClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One line per message: responses with their outcome, events with what identifies them.
/// Streaming deltas are left out.
pub fn brief(messages: &[Value]) -> String {
    messages
        .iter()
        .filter(|m| m["type"] != "message_update")
        .map(|m| {
            let kind = m["type"].as_str().unwrap_or("?");
            match kind {
                "response" => match m["success"].as_bool() {
                    Some(true) => format!("response {}", m["command"].as_str().unwrap()),
                    _ => format!(
                        "response {} error: {}",
                        m["command"].as_str().unwrap_or("-"),
                        m["error"].as_str().unwrap()
                    ),
                },
                "message_start" | "message_end" => {
                    let message = &m["message"];
                    let role = message["role"].as_str().unwrap();
                    match role {
                        "user" => format!("{kind} user {}", message["content"][0]["text"]),
                        "assistant" => format!("{kind} assistant {}", message["stopReason"]),
                        _ => format!("{kind} {role}"),
                    }
                }
                "queue_update" => format!("queue_update {} {}", m["steering"], m["followUp"]),
                "tool_execution_start" | "tool_execution_end" => {
                    format!("{kind} {}", m["toolName"].as_str().unwrap())
                }
                "compaction_start" | "compaction_end" => {
                    format!("{kind} {}", m["reason"].as_str().unwrap())
                }
                _ => kind.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Text of the last user message of a recorded request (OpenAI chat format).
pub fn last_user_text(body: &Value) -> String {
    let m = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    m["content"][0]["text"]
        .as_str()
        .or(m["content"].as_str())
        .unwrap()
        .to_string()
}

pub fn messages_of(file: &Path) -> Vec<Value> {
    json_lines(file)
        .into_iter()
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"].clone())
        .collect()
}
