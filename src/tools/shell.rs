//! Running one shell command the way pi does, shared by the `bash` tool and the user's
//! `!cmd` (and RPC `bash`): which shell, with which `PATH`, in its own process group with
//! stdin closed and stdout+stderr merged into one byte stream, stopped by cancellation or
//! a timeout with SIGKILL to the whole group so no child outlives it.
//!
//! This module only moves bytes; decoding, truncation and the texts a model reads live in
//! `output`, `bash` and `bash_exec`.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::fsio::errno_code;

/// How long to keep reading after the shell exited: a background job (`cmd &`) may hold
/// the output pipes open forever, and pi stops waiting for them after this grace period.
const EXIT_GRACE: Duration = Duration::from_millis(100);

/// Process groups of commands still running, so the application can kill them when it is
/// itself told to stop (SIGHUP, SIGTERM).
static RUNNING_GROUPS: LazyLock<Mutex<HashSet<i32>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// Kills every command started by [`run_process`] that is still running. For the
/// application's shutdown path.
pub fn kill_all_running() {
    let groups: Vec<i32> = RUNNING_GROUPS
        .lock()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        kill_process_group(pgid);
    }
}

/// SIGKILL to the process group `pgid`; if that fails, to the process itself (pi's
/// fallback for a child that did not become a group leader).
pub fn kill_process_group(pgid: i32) {
    if !kill_group(pgid) && pgid > 0 {
        // SAFETY: kill(2) with integer arguments; a stale pid only yields ESRCH.
        unsafe {
            libc::kill(pgid, libc::SIGKILL);
        }
    }
}

/// SIGKILL to every process in the group `pgid` (a child started with
/// `process_group(0)`), and nothing else. Whether any process got the signal: `false` for
/// a group that is already empty. For callers that may have reaped the leader already,
/// whose pid may have been reused, and so must not fall back to the pid.
pub fn kill_group(pgid: i32) -> bool {
    // 0 and negative ids would name our own group or every process we may signal.
    if pgid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with integer arguments has no memory effects; a group that is
    // already gone yields ESRCH.
    unsafe { libc::kill(-pgid, libc::SIGKILL) == 0 }
}

/// The shell commands run with: the `shellPath` setting if given (it must exist), else
/// `/bin/bash`, else `bash` from `PATH`, else `sh`.
pub fn resolve_shell(custom: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(custom) = custom {
        if custom.exists() {
            return Ok(custom.to_path_buf());
        }
        return Err(format!("Custom shell path not found: {}", custom.display()));
    }
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.exists() {
        return Ok(bin_bash.to_path_buf());
    }
    if let Some(found) = find_on_path("bash") {
        return Ok(found);
    }
    Ok(PathBuf::from("sh"))
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// `PATH` with `bin_dir` in front (unless already on it), like pi's shell environment.
pub fn path_with_bin_dir(bin_dir: Option<&Path>) -> Option<OsString> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let Some(bin_dir) = bin_dir else {
        return Some(current);
    };
    let mut entries: Vec<PathBuf> = std::env::split_paths(&current)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    if entries.iter().any(|p| p == bin_dir) {
        return Some(current);
    }
    entries.insert(0, bin_dir.to_path_buf());
    std::env::join_paths(entries).ok()
}

/// What to run and where.
#[derive(Debug, Clone)]
pub struct ProcessSpec<'a> {
    pub shell: &'a Path,
    pub command: &'a str,
    pub cwd: &'a Path,
    pub path_env: Option<OsString>,
    /// `None` or a non-positive duration: no timeout.
    pub timeout: Option<Duration>,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessEnd {
    /// The shell exited; `None` when it was killed by a signal.
    Exited(Option<i32>),
    /// Cancelled through the token; the process group was killed.
    Cancelled,
    /// The timeout expired; the process group was killed.
    TimedOut,
}

/// Kills the group if the command is abandoned half-way (its future dropped).
struct GroupGuard {
    pgid: i32,
    armed: bool,
}

impl GroupGuard {
    fn new(pgid: i32) -> Self {
        if let Ok(mut groups) = RUNNING_GROUPS.lock() {
            groups.insert(pgid);
        }
        Self { pgid, armed: true }
    }

    fn kill(&mut self) {
        kill_process_group(self.pgid);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_process_group(self.pgid);
        }
        if let Ok(mut groups) = RUNNING_GROUPS.lock() {
            groups.remove(&self.pgid);
        }
    }
}

/// Runs `spec.command` with `spec.shell -c`, passing every chunk of output (stdout and
/// stderr as they arrive) to `on_data`. Errors are pi's texts for a missing working
/// directory or a shell that cannot be started.
pub async fn run_process(
    spec: &ProcessSpec<'_>,
    cancel: &CancellationToken,
    mut on_data: impl FnMut(&[u8]),
) -> Result<ProcessEnd, String> {
    if !spec.cwd.exists() {
        return Err(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            spec.cwd.display()
        ));
    }
    let mut command = Command::new(spec.shell);
    command
        .arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(path) = &spec.path_env {
        command.env("PATH", path);
    }
    let mut child = command.spawn().map_err(|e| {
        let code = errno_code(&e).map_or_else(|| e.to_string(), str::to_string);
        format!("spawn {} {code}", spec.shell.display())
    })?;
    let pgid = child.id().map_or(0, |id| id as i32);
    let mut guard = GroupGuard::new(pgid);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();

    let deadline = spec
        .timeout
        .filter(|t| !t.is_zero())
        .map(|t| Instant::now() + t);
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    let mut exit: Option<Option<i32>> = None;
    let mut grace_until: Option<Instant> = None;
    let mut killed_by: Option<ProcessEnd> = None;

    loop {
        if exit.is_some() && stdout.is_none() && stderr.is_none() {
            break;
        }
        tokio::select! {
            read = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => match read {
                Some(n) => on_data(&out_buf[..n]),
                None => stdout = None,
            },
            read = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => match read {
                Some(n) => on_data(&err_buf[..n]),
                None => stderr = None,
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.ok().and_then(|s| s.code()));
                grace_until = Some(Instant::now() + EXIT_GRACE);
            }
            () = sleep_until_opt(grace_until), if grace_until.is_some() => break,
            () = cancel.cancelled(), if killed_by.is_none() => {
                killed_by = Some(ProcessEnd::Cancelled);
                guard.kill();
            }
            () = sleep_until_opt(deadline), if deadline.is_some() && killed_by.is_none() => {
                killed_by = Some(ProcessEnd::TimedOut);
                guard.kill();
            }
        }
    }
    guard.armed = false;
    Ok(match killed_by {
        Some(end) => end,
        None if cancel.is_cancelled() => ProcessEnd::Cancelled,
        None => ProcessEnd::Exited(exit.flatten()),
    })
}

/// Reads one chunk; `None` at end of stream or on a read error.
async fn read_some<R: AsyncReadExt + Unpin>(
    reader: &mut Option<R>,
    buf: &mut [u8],
) -> Option<usize> {
    let reader = reader.as_mut()?;
    match reader.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
