//! pi's lock on auth.json: the `auth.json.lock` directory of the `proper-lockfile`
//! package, stale after 30 s. Every writer of the file takes it, in pi and in pi-rs.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A lock older than this is left over by a crashed process (proper-lockfile's `stale`).
pub const LOCK_STALE: Duration = Duration::from_secs(30);

/// The lock on auth.json, held while it exists. The directory is removed on drop.
#[derive(Debug)]
pub struct AuthFileLock {
    dir: PathBuf,
}

impl Drop for AuthFileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The lock directory pi (proper-lockfile) uses for a file.
pub fn lock_dir_for(auth_path: &Path) -> PathBuf {
    let mut name = auth_path.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// One attempt at the lock: `None` while another live process holds it. A lock whose
/// directory was not touched for `stale` is taken over.
pub fn try_lock(auth_path: &Path, stale: Duration) -> std::io::Result<Option<AuthFileLock>> {
    let dir = lock_dir_for(auth_path);
    match std::fs::create_dir(&dir) {
        Ok(()) => return Ok(Some(AuthFileLock { dir })),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let age = std::fs::metadata(&dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok());
    if age.is_some_and(|a| a > stale) {
        // Gone already is fine: someone else took it over first, and mkdir decides.
        let _ = std::fs::remove_dir(&dir);
        return match std::fs::create_dir(&dir) {
            Ok(()) => Ok(Some(AuthFileLock { dir })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(e),
        };
    }
    Ok(None)
}

/// Waits for the lock, backing off like pi does, for at most `wait`.
pub async fn lock(auth_path: &Path, wait: Duration) -> Result<AuthFileLock, String> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut delay = Duration::from_millis(50);
    loop {
        match try_lock(auth_path, LOCK_STALE) {
            Ok(Some(lock)) => return Ok(lock),
            Ok(None) => {}
            Err(e) => {
                return Err(format!(
                    "cannot create the lock {} ({e})",
                    lock_dir_for(auth_path).display()
                ));
            }
        }
        if tokio::time::Instant::now() + delay > deadline {
            return Err(format!(
                "another pi process holds the lock {}; if none is running, delete that directory",
                lock_dir_for(auth_path).display()
            ));
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(1));
    }
}
