//! The one process-group kill the `bash` tool, `!cmd` and the extension host share
//! (`pi::tools::shell`): it ends every process of the group, grandchildren included, and
//! never signals anything outside it: not our own group for a pid of 0, and not a pid
//! that names no group (the extension host relies on that after reaping); only
//! `kill_process_group`, the tools' variant, falls back to the pid itself, as pi does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pi::tools::shell::{kill_group, kill_process_group};

/// Whether a process with this id is running (a zombie waiting to be reaped is dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// A shell in a new process group that starts a background `sleep` and reports its pid.
fn group_with_grandchild() -> (Child, i32) {
    let mut child = Command::new("sh")
        .args(["-c", "sleep 30 & echo $!; wait"])
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let grandchild: i32 = line.trim().parse().unwrap();
    assert!(alive(grandchild));
    (child, grandchild)
}

/// Waits until `pid` is gone.
fn gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn killing_the_group_ends_the_grandchildren_too() {
    let (mut child, grandchild) = group_with_grandchild();
    let pgid = child.id() as i32;
    assert!(
        kill_group(pgid),
        "the group existed, so the signal was delivered"
    );
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(
        gone_within(grandchild, Duration::from_secs(5)),
        "the background sleep {grandchild} outlived its group"
    );
}

#[test]
fn the_fallback_kill_reaches_a_process_that_leads_no_group() {
    // Not started with process_group(0): its pid names no group, so only the fallback
    // to the pid itself can end it.
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = child.id() as i32;
    // The group-only kill leaves a pid that names no group alone: the extension host
    // relies on that once it has reaped an extension whose pid may have been reused.
    assert!(!kill_group(pid));
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        alive(pid),
        "kill_group signalled a process outside the group"
    );
    kill_process_group(pid);
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
}

#[test]
fn a_pid_of_zero_is_not_our_own_group() {
    // kill(-0) would hit this test's own process group: had it been sent, the test would
    // not live to see the assertion.
    assert!(!kill_group(0));
    kill_process_group(0);
    assert!(alive(std::process::id() as i32));
}
