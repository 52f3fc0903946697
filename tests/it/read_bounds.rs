//! The `read` tool on files far larger than what it returns, through the built binary and
//! the loopback model server: a 3 GB sparse file is answered in seconds with a bounded
//! peak memory and pi's notices (total line count included), and an abort stops a read in
//! progress instead of letting it run on in the background.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::support::pi_project::Project;
use crate::support::rpc_client::{RpcProject, json_lines};
use serde_json::{Value, json};

const GIB: u64 = 1024 * 1024 * 1024;
/// Peak resident memory allowed for reading a file of any size.
const MAX_PEAK_RSS: u64 = 300 * 1024 * 1024;

/// Ten short lines, then zeros (a hole, costing no disk) up to `size`, ending with
/// `last line\n`: twelve lines in all, the eleventh nearly `size` bytes long.
fn sparse_log(path: &Path, size: u64) {
    let mut file = std::fs::File::create(path).unwrap();
    for i in 1..=10 {
        writeln!(file, "line {i}").unwrap();
    }
    file.set_len(size).unwrap();
    file.seek(SeekFrom::Start(size - 10)).unwrap();
    file.write_all(b"last line\n").unwrap();
}

/// Every message of the project's one session file.
fn messages(p: &Project) -> Vec<Value> {
    session_messages(&p.agent_dir().join("sessions"))
}

fn session_messages(sessions: &Path) -> Vec<Value> {
    let dirs: Vec<PathBuf> = std::fs::read_dir(sessions)
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    let files: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().map(|f| f.unwrap().path()))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    json_lines(&files[0])
        .into_iter()
        .filter(|entry| entry["type"] == "message")
        .map(|entry| entry["message"].clone())
        .collect()
}

fn tool_results(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["role"] == "toolResult")
        .collect()
}

/// How a child process ended, as the kernel accounted it for that process alone.
struct Finished {
    status: ExitStatus,
    /// Peak resident set size in bytes.
    peak_rss: u64,
    user_cpu: Duration,
    system_cpu: Duration,
}

fn cpu_time(time: libc::timeval) -> Duration {
    Duration::from_secs(u64::try_from(time.tv_sec).unwrap())
        + Duration::from_micros(u64::try_from(time.tv_usec).unwrap())
}

/// Waits for `child` to exit, killing it after `timeout`.
fn wait_with_usage(child: &mut Child, timeout: Duration) -> Finished {
    use std::os::unix::process::ExitStatusExt;
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let deadline = Instant::now() + timeout;
    loop {
        let mut status = 0;
        // SAFETY: plain out-parameters for wait4 on our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let waited = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if waited == pid {
            return Finished {
                status: ExitStatus::from_raw(status),
                peak_rss: u64::try_from(usage.ru_maxrss).unwrap() * 1024,
                user_cpu: cpu_time(usage.ru_utime),
                system_cpu: cpu_time(usage.ru_stime),
            };
        }
        assert_eq!(waited, 0, "wait4 failed");
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pi did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_3_gb_file_is_answered_in_seconds_within_300_mb() {
    let p = Project::new(json!({"sequence": [
        {"tool_calls": [{"name": "read", "arguments": {"path": "huge.log"}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "huge.log", "offset": 11}}]},
        {"tool_calls": [{"name": "read", "arguments": {"path": "huge.log", "offset": 12, "limit": 1}}]},
        {"text": "read it"}
    ]}));
    let size = 3 * GIB;
    sparse_log(&p.cwd().join("huge.log"), size);
    // The first read of a new sparse file makes the kernel fill the page cache with 3 GB
    // of zeros, which takes longer than reading it; that is the fixture's cost, paid
    // before the clock starts, as a log file read twice would be.
    let warm = Instant::now();
    let mut file = std::fs::File::open(p.cwd().join("huge.log")).unwrap();
    std::io::copy(&mut file, &mut std::io::sink()).unwrap();
    eprintln!("page cache filled in {:?}", warm.elapsed());

    let started = Instant::now();
    let mut child = p
        .pi()
        .args(["-p", "What is in huge.log?"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let finished = wait_with_usage(&mut child, Duration::from_secs(120));
    let peak_rss = finished.peak_rss;
    let elapsed = started.elapsed();
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    eprintln!(
        "three reads of a 3 GB file: {elapsed:?} (CPU: user {:?}, system {:?}), peak RSS {:.1} MB",
        finished.user_cpu,
        finished.system_cpu,
        peak_rss as f64 / 1e6
    );
    assert!(finished.status.success(), "{stderr}");
    assert_eq!(stdout, "read it\n");

    let messages = messages(&p);
    let results = tool_results(&messages);
    // Each read's duration: from the assistant message asking for it to its result.
    let durations: Vec<i64> = messages
        .windows(2)
        .filter(|pair| pair[1]["role"] == "toolResult")
        .map(|pair| pair[1]["timestamp"].as_i64().unwrap() - pair[0]["timestamp"].as_i64().unwrap())
        .collect();
    eprintln!("each read, in ms: {durations:?}");
    let texts: Vec<&str> = results
        .iter()
        .map(|r| r["content"][0]["text"].as_str().unwrap())
        .collect();
    let first_lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    assert_eq!(
        texts,
        [
            format!(
                "{}\n\n[Showing lines 1-10 of 12 (50.0KB limit). Use offset=11 to continue.]",
                first_lines.trim_end()
            ),
            "[Line 11 is 3072.0MB, exceeds 50.0KB limit. Use bash: sed -n '11p' huge.log | head -c 51200]".to_string(),
            String::new(),
        ]
    );
    // The totals in `details` cover the whole selection, counted while streaming.
    let truncation = &results[0]["details"]["truncation"];
    assert_eq!(truncation["totalLines"], 12);
    assert_eq!(truncation["totalBytes"], size);
    assert_eq!(truncation["outputLines"], 10);
    let huge_line = size - first_lines.len() as u64 - 1;
    assert_eq!(
        results[1]["details"]["truncation"]["totalBytes"],
        huge_line + 1
    );
    assert_eq!(results[1]["details"]["truncation"]["totalLines"], 2);

    assert!(
        peak_rss <= MAX_PEAK_RSS,
        "peak RSS {peak_rss} bytes reading a {size}-byte file"
    );
    // Three passes over 3 GB of page cache (about a second each on two busy cores);
    // generous for a loaded machine.
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
}

/// Bytes the process has read so far (`rchar` of /proc/<pid>/io).
fn bytes_read(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|line| line.strip_prefix("rchar: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn abort_stops_a_read_in_progress() {
    let p = RpcProject::new(
        &json!({"sequence": [
            {"tool_calls": [{"name": "read", "arguments": {"path": "endless.log"}}]},
            {"text": "never asked for"}
        ]}),
        None,
        None,
    );
    // Far more than can be read during the test.
    sparse_log(&p.cwd().join("endless.log"), 4096 * GIB);
    let mut c = p.start();
    let pid = c.pid();
    c.send(&json!({"type": "prompt", "message": "read endless.log", "id": "p"}));
    c.read_until(|m| m["type"] == "tool_execution_start" && m["toolName"] == "read");

    // The read is under way: the process is reading the file.
    let before = bytes_read(pid);
    let deadline = Instant::now() + Duration::from_secs(20);
    while bytes_read(pid) < before + 256 * 1024 * 1024 {
        assert!(Instant::now() < deadline, "the read did not get going");
        std::thread::sleep(Duration::from_millis(10));
    }

    let aborted_at = Instant::now();
    c.send(&json!({"type": "abort", "id": "a"}));
    let events = c.read_until(|m| m["type"] == "response" && m["id"] == "a");
    let answered_in = aborted_at.elapsed();
    let end = events
        .iter()
        .find(|m| m["type"] == "tool_execution_end")
        .expect("the read ended");
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"]["content"][0]["text"], "Operation aborted");
    assert!(events.iter().any(|m| m["type"] == "agent_end"));

    // Reading has stopped, not just been disowned: a reader left running would add
    // gigabytes per second here.
    std::thread::sleep(Duration::from_millis(200));
    let settled = bytes_read(pid);
    std::thread::sleep(Duration::from_millis(500));
    let drift = bytes_read(pid) - settled;
    eprintln!("abort answered in {answered_in:?}; read {drift} bytes in 500 ms after");
    assert!(drift < 4 * 1024 * 1024, "still reading: {drift} bytes");
    assert!(answered_in < Duration::from_secs(1), "{answered_in:?}");

    let (status, stderr) = c.close();
    assert!(status.success(), "{stderr}");
    assert_eq!(p.server.requests().len(), 1);
}
