//! `exec` requests: the host runs a program for an extension (pi's `pi.exec`) and answers
//! with its output. Like pi, the program is started directly (no shell), stdin is empty,
//! and on timeout or cancellation it gets SIGTERM, then SIGKILL five seconds later.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// Most bytes kept of each output stream (the rest is dropped).
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// The answer to an `exec` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecResult {
    pub stdout: String,
    pub stderr: String,
    /// The exit code (1 when the program could not be started or died from a signal).
    pub code: i32,
    /// Whether the host terminated it (timeout or cancellation).
    pub killed: bool,
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(mut reader: R) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return out,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(out.len());
                out.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

#[cfg(unix)]
fn terminate(child: &tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) with a pid we spawned and a valid signal number has no memory
        // effects; a stale pid at worst yields ESRCH.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
}

#[cfg(not(unix))]
fn terminate(child: &tokio::process::Child) {
    let _ = child;
}

/// Runs `command args…` in `cwd`.
pub async fn run(
    command: &str,
    args: &[String],
    cwd: &Path,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> ExecResult {
    let spawned = tokio::process::Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return ExecResult {
                stdout: String::new(),
                stderr: format!("could not start {command}: {e}"),
                code: 1,
                killed: false,
            };
        }
    };
    let stdout = child.stdout.take().map(|s| tokio::spawn(read_capped(s)));
    let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s)));
    let mut killed = false;
    let deadline = async {
        match timeout {
            Some(t) if !t.is_zero() => tokio::time::sleep(t).await,
            _ => std::future::pending::<()>().await,
        }
    };
    tokio::pin!(deadline);
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        _ = &mut deadline => None,
        _ = cancel.cancelled() => None,
    };
    let status = match status {
        Some(status) => Some(status),
        None => {
            killed = true;
            terminate(&child);
            match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    let _ = child.start_kill();
                    child.wait().await.ok()
                }
            }
        }
    };
    let collect = |handle: Option<tokio::task::JoinHandle<Vec<u8>>>| async move {
        match handle {
            Some(h) => String::from_utf8_lossy(&h.await.unwrap_or_default()).into_owned(),
            None => String::new(),
        }
    };
    ExecResult {
        stdout: collect(stdout).await,
        stderr: collect(stderr).await,
        code: status.and_then(|s| s.code()).unwrap_or(1),
        killed,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn captures_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(
            "sh",
            &["-c".into(), "echo out; echo err >&2; pwd; exit 3".into()],
            dir.path(),
            None,
            &CancellationToken::new(),
        )
        .await;
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(r.stdout, format!("out\n{}\n", cwd.display()));
        assert_eq!((r.stderr.as_str(), r.code, r.killed), ("err\n", 3, false));
    }

    #[tokio::test]
    async fn timeout_terminates_the_program() {
        let r = run(
            "sleep",
            &["5".into()],
            Path::new("."),
            Some(Duration::from_millis(50)),
            &CancellationToken::new(),
        )
        .await;
        assert!(r.killed);
        assert_eq!(r.code, 1);
    }

    #[tokio::test]
    async fn a_missing_program_is_reported_in_stderr() {
        let r = run(
            "definitely-not-a-program-xyz",
            &[],
            Path::new("."),
            None,
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(r.code, 1);
        assert!(
            r.stderr
                .starts_with("could not start definitely-not-a-program-xyz")
        );
    }
}
