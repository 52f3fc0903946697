//! A large session through the built binary: `pi -p --session <file>` on a synthetic
//! session of 5,000 turns (about 22 MB, with branches, labels, compactions and tool
//! results) answers with memory that does not follow the file's size, sends the context
//! the library builds from the file, and only appends to the file.

use std::io::Read;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::pi_project::{Project, conversation, text_of};
use pi::messages::AgentMessage;
use pi::session::SessionManager;

/// Peak resident set size (bytes) and exit status of a `pi` run.
#[allow(clippy::zombie_processes)] // Reaped by `wait4`, which also reports the peak memory.
fn run(p: &Project, args: &[&str]) -> (ExitStatus, u64, String) {
    use std::os::unix::process::ExitStatusExt;
    let mut child = p
        .pi()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut status = 0;
        // SAFETY: plain out-parameters for wait4 on our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if waited == pid {
            let rss = u64::try_from(usage.ru_maxrss).unwrap() * 1024;
            return (ExitStatus::from_raw(status), rss, stdout);
        }
        assert_eq!(waited, 0, "wait4 failed");
        assert!(Instant::now() < deadline, "pi did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Writes a synthetic session of `turns` turns at `path` whose header names `cwd`.
fn synthetic_session(path: &Path, turns: usize, cwd: &Path) {
    let raw = path.with_extension("raw");
    pi::session::synth::generate(&raw, turns, 7).unwrap();
    let text = std::fs::read_to_string(&raw).unwrap();
    let (header, body) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    header["cwd"] = json!(cwd.display().to_string());
    std::fs::write(path, format!("{header}\n{body}")).unwrap();
    std::fs::remove_file(raw).unwrap();
}

/// The text of the last user message of a context.
fn last_user_text(messages: &[AgentMessage]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            AgentMessage::User(u) => Some(text_of(&serde_json::to_value(&u.content).unwrap())),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_22_mb_session_is_answered_with_memory_that_does_not_follow_the_file_size() {
    let p = Project::new(json!({"default": {"text": "Done."}}));
    let file = p.dir.path().join("big.jsonl");
    synthetic_session(&file, 5_000, &p.cwd());
    let original = std::fs::read(&file).unwrap();
    let size = original.len() as u64;
    assert!(size > 20_000_000, "{size} bytes");
    let context = SessionManager::open(&file, None)
        .unwrap()
        .build_session_context();

    let (status, baseline_rss, _) = run(&p, &["--no-session", "-p", "hello"]);
    assert!(status.success());
    let file_arg = file.display().to_string();
    let (status, rss, stdout) = run(&p, &["--session", &file_arg, "-p", "One more question"]);
    assert!(status.success(), "{stdout}");
    assert_eq!(stdout.trim(), "Done.");

    // Memory: the index and the context, not the file (before: the whole file in one
    // buffer plus every entry of the path parsed, well over twice its size).
    let grown = rss.saturating_sub(baseline_rss);
    eprintln!(
        "file {} MB, peak RSS {} MB (no session: {} MB)",
        size >> 20,
        rss >> 20,
        baseline_rss >> 20
    );
    assert!(
        grown < size / 2,
        "peak RSS grew by {} MB for a {} MB session",
        grown >> 20,
        size >> 20
    );

    // The context sent is the one the library builds, followed by the new prompt.
    let requests = p.requests();
    assert_eq!(requests.len(), 2, "the baseline run's and this one's");
    let sent = conversation(&requests[1]);
    let last_line = sent.lines().last().unwrap();
    assert_eq!(last_line, "user: One more question");
    let previous = last_user_text(&context.messages);
    assert!(
        sent.contains(&previous),
        "the session's last prompt is not in the request"
    );
    let sent_messages = requests[1]["messages"].as_array().unwrap().len();
    assert!(
        sent_messages > context.messages.len() / 2,
        "{sent_messages} messages sent for a context of {}",
        context.messages.len()
    );

    // Append-only: the old bytes are untouched, the new turn follows them.
    let after = std::fs::read(&file).unwrap();
    assert_eq!(&after[..original.len()], &original[..]);
    let added: Vec<Value> = String::from_utf8(after[original.len()..].to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let roles: Vec<&str> = added
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let leaf = context.messages.len();
    let reopened = SessionManager::open(&file, None)
        .unwrap()
        .build_session_context();
    assert_eq!(reopened.messages.len(), leaf + 2);
}
