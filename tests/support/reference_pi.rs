//! Runs the reference pi (TypeScript, installed from npm on first use by
//! `tests/support/reference-pi.sh`) for interop checks: pi 1.6.0 ([`VERSION`]) unless a
//! test pins one comparison to 0.73.1 ([`OLD_VERSION`], [`command_073`]) because the
//! difference belongs to a later issue. Tests call [`available`] (or [`available_073`])
//! first and skip, printing why, where node/npm are missing or pi cannot be installed.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The version the reference pi runs by default (that of `reference-pi.sh`).
pub const VERSION: &str = "1.6.0";
/// The last release under `@mariozechner` (the old corpus, and comparisons a later issue
/// brings to 1.6).
pub const OLD_VERSION: &str = "0.73.1";

pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/reference-pi.sh")
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `Err(reason)` when the reference pi cannot run here. Checked once per test process:
/// the first caller installs pi (if needed) while the others wait, so tests running in
/// parallel never start two installs into the same folder.
pub fn available() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED.get_or_init(|| check(None)).clone()
}

/// The reference pi of the default version (not yet started).
pub fn script_command() -> Command {
    Command::new(script())
}

/// The reference pi 0.73.1 (not yet started), for a comparison pinned to it. The version
/// is set by `env` on the command line, so a caller's `env_clear()` keeps it.
pub fn command_073() -> Command {
    let mut pi = Command::new("/usr/bin/env");
    pi.arg(format!("PI_REFERENCE_VERSION={OLD_VERSION}"))
        .arg(script());
    pi
}

/// [`available`] for the reference pi 0.73.1.
pub fn available_073() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED.get_or_init(|| check(Some(OLD_VERSION))).clone()
}

fn check(version: Option<&str>) -> Result<(), String> {
    if !on_path("node") || !on_path("npm") {
        return Err("node/npm not on PATH, cannot run the reference pi".into());
    }
    let mut pi = Command::new(script());
    if let Some(v) = version {
        pi.env("PI_REFERENCE_VERSION", v);
    }
    pi.arg("--version");
    run(pi, "", Duration::from_secs(300))
        .map(|_| ())
        .map_err(|why| format!("the reference pi could not be installed or started: {why}"))
}

/// Runs a command with `stdin`, killing it after `limit`. Returns its stdout.
pub fn run(mut command: Command, stdin: &str, limit: Duration) -> Result<String, String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            lines.push_str(&line);
            lines.push('\n');
        }
        lines
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let out = reader.join().unwrap_or_default();
            if status.success() {
                return Ok(out);
            }
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            return Err(format!("{status}: {err}"));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            return Err(format!("still running after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The reference pi in RPC mode on the `mock` provider configured under `home`, started
/// in `project` (not yet spawned: add flags, then [`run`] it).
pub fn rpc_command(home: &Path, project: &Path) -> Command {
    let mut pi = Command::new(script());
    pi.args([
        "--mode",
        "rpc",
        "--offline",
        "--provider",
        "mock",
        "--model",
        "mock-model",
    ])
    .current_dir(project)
    .env("HOME", home)
    .env_remove("PI_CODING_AGENT_DIR");
    pi
}

/// Opens `session` in the reference pi (RPC mode, provider `mock` as configured under
/// `home`) and returns the messages pi would send (`get_messages`).
pub fn messages_of(home: &Path, project: &Path, session: &Path) -> Value {
    let mut pi = rpc_command(home, project);
    pi.arg("--session").arg(session);
    let out = run(
        pi,
        "{\"id\":\"m\",\"type\":\"get_messages\"}\n",
        Duration::from_secs(60),
    )
    .unwrap();
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "response" && v["command"] == "get_messages")
        .unwrap_or_else(|| panic!("no get_messages response from pi: {out}"))["data"]["messages"]
        .clone()
}

/// The `node_modules` folder of the reference install (where `reference-pi.sh` puts it):
/// pi-coding-agent, pi-ai, pi-tui and typebox as the default version ships them
/// (`@earendil-works/*` for 1.6).
pub fn node_modules() -> PathBuf {
    let version = std::env::var("PI_REFERENCE_VERSION").unwrap_or_else(|_| VERSION.into());
    node_modules_of(&version)
}

/// The `node_modules` folder of the reference pi `version`.
pub fn node_modules_of(version: &str) -> PathBuf {
    let base = match std::env::var_os("PI_REFERENCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = Command::new("sh")
                .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|h| !h.is_empty())
                .or_else(|| std::env::var("HOME").ok())
                .unwrap_or_default();
            PathBuf::from(home).join(".cache/pi-reference")
        }
    };
    base.join(version).join("node_modules")
}
