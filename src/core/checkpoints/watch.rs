//! Knowing what changed in the working tree without walking it: inotify watches on every
//! directory a scan would walk (Linux), kept for the session by a background thread.
//!
//! The thread sets the watches up (adding a directory's watch before listing it, so a
//! directory created meanwhile is either listed or reported), then collects the names the
//! kernel reports: files created, written, deleted or renamed in a watched directory, and
//! directories created, deleted or renamed (whose whole subtree the next scan walks; new
//! ones are watched at once). A `bash` checkpoint then only looks at those
//! ([`super::scan::scan_changed`]).
//!
//! The news are trusted only relative to a full scan that began after the watches were in
//! place ([`Watcher::begin_full`] hands out a [`Trust`]). Whenever they could be
//! incomplete the next scan walks the tree again: the watches are still being set up, the
//! kernel's event queue overflowed, an ignore file changed (inside the project: the watches
//! are set up again, since other directories may now be walked; outside it, seen by its
//! metadata), the project directory itself moved, the dirty set outgrew its bound, or the
//! watches could not be set up at all (limit reached, too many directories, too slow).
//!
//! Bounds: at most [`MAX_WATCHES`] directories (and half the user's inotify watch limit),
//! set up within [`SETUP_TIME`]; at most [`MAX_DIRTY`] remembered names between two scans.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// At most this many watched directories (and half of `max_user_watches`).
pub const MAX_WATCHES: usize = 50_000;
/// Setting the watches up gives up after this long.
pub const SETUP_TIME: Duration = Duration::from_secs(10);
/// More changed names than this between two scans: the next scan walks the tree.
pub const MAX_DIRTY: usize = 20_000;
/// Changing one of these (in a watched directory) changes which files a scan walks.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".fdignore"];

/// What changed since the last scan, as relative paths (`/`-separated, `""` the root).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Dirty {
    /// Entries of watched directories that were created, written, deleted or renamed.
    pub files: HashSet<String>,
    /// Directories that were created, deleted or renamed: their whole subtree changed.
    pub trees: HashSet<String>,
}

impl Dirty {
    fn len(&self) -> usize {
        self.files.len() + self.trees.len()
    }
}

/// An ignore file outside the project and its metadata (length, modification time in
/// nanoseconds, inode), `None` while it does not exist.
type RuleFile = (PathBuf, Option<(u64, i128, u64)>);

/// The watcher's news are complete from the full scan that received this on: the watch
/// set's generation then, and the metadata of the ignore files outside the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    generation: u64,
    outside_rules: Vec<RuleFile>,
}

/// The ignore files outside the project that the walk reads (in the parent directories,
/// the git and fd user-wide ones), and their metadata now.
fn outside_rules(root: &Path) -> Vec<RuleFile> {
    let mut files = Vec::new();
    for dir in root.ancestors().skip(1) {
        for name in IGNORE_FILES {
            files.push(dir.join(name));
        }
        files.push(dir.join(".git/info/exclude"));
    }
    files.push(root.join(".git/info/exclude"));
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".config")));
    if let Some(config) = config {
        files.push(config.join("git/ignore"));
        files.push(config.join("git/config"));
        files.push(config.join("fd/ignore"));
    }
    if let Some(home) = dirs::home_dir() {
        files.push(home.join(".gitconfig"));
    }
    files
        .into_iter()
        .map(|f| {
            let key = std::fs::metadata(&f)
                .ok()
                .map(|m| super::stat::stat_key(&m));
            (f, key)
        })
        .collect()
}

/// Joins a directory's relative path and an entry name.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The visible (not ignored) children of `dir` (relative to `root`) as the tree walk would
/// see them: (name, is a directory).
pub fn list_dir(root: &Path, dir: &str) -> Vec<(String, bool)> {
    let base = if dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(dir)
    };
    let mut out = Vec::new();
    let walk = crate::tools::walk::walker(&base, crate::tools::walk::IgnoreRules::Fd)
        .max_depth(Some(1))
        .build();
    for entry in walk.flatten() {
        if entry.depth() != 1 {
            continue;
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            kind.is_dir(),
        ));
    }
    out
}

#[cfg(target_os = "linux")]
pub use linux::Watcher;

/// No watcher outside Linux: every `bash` checkpoint walks the tree.
#[cfg(not(target_os = "linux"))]
pub struct Watcher;

#[cfg(not(target_os = "linux"))]
impl Watcher {
    pub fn start(_root: &Path) -> Option<Watcher> {
        None
    }
    pub fn begin_full(&self) -> Option<Trust> {
        None
    }
    pub fn take(&self, _trust: &Trust) -> Result<Dirty, String> {
        Err("no watcher on this system".into())
    }
    pub fn wait_ready(&self, _timeout: Duration) -> Result<(), String> {
        Err("no watcher on this system".into())
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    use super::{Dirty, IGNORE_FILES, MAX_DIRTY, MAX_WATCHES, SETUP_TIME, Trust, join, list_dir};

    const MASK: u32 = libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MODIFY
        | libc::IN_CLOSE_WRITE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_ONLYDIR
        | libc::IN_DONT_FOLLOW
        | libc::IN_EXCL_UNLINK;

    /// Setting up again more often than this in one session: give up (the walk remains).
    const MAX_SETUPS: u32 = 20;

    /// The watches and what they reported.
    #[derive(Default)]
    struct State {
        fd: Option<OwnedFd>,
        /// Watch descriptor → its directory relative to the root.
        dirs: HashMap<i32, String>,
        /// Counts the watch sets: a [`Trust`] of an older one is void.
        generation: u64,
        ready: bool,
        /// Why the watcher gave up for good.
        failed: Option<String>,
        /// The watches may be incomplete or wrong: set them up again.
        reset: bool,
        /// News were lost since the last full scan (the dirty set outgrew its bound).
        saturated: bool,
        dirty: Dirty,
    }

    struct Shared {
        root: PathBuf,
        state: Mutex<State>,
        changed: Condvar,
        stop: AtomicBool,
        /// An eventfd the thread polls beside the inotify descriptor: written to wake it
        /// (to stop, or to set the watches up again) without any polling interval.
        wake: OwnedFd,
        max_watches: usize,
    }

    impl Shared {
        fn lock(&self) -> MutexGuard<'_, State> {
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        }

        /// Wakes the thread out of its `poll`.
        fn wake(&self) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a valid u64 to our own eventfd; a full counter
            // (EAGAIN) already means a pending wake-up.
            unsafe {
                libc::write(
                    self.wake.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }

        /// Clears pending wake-ups.
        fn clear_wake(&self) {
            let mut count: u64 = 0;
            // SAFETY: reads 8 bytes into a valid u64 from our own non-blocking eventfd.
            unsafe {
                libc::read(
                    self.wake.as_raw_fd(),
                    (&mut count as *mut u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }
    }

    /// The session's watches (see the module documentation). Dropping it stops the
    /// thread without waiting for it: the thread wakes at once, and nothing it owns needs
    /// more than closing, so an exit never waits on it.
    pub struct Watcher {
        shared: Arc<Shared>,
    }

    impl Watcher {
        /// Starts setting up the watches of `root` in the background.
        pub fn start(root: &Path) -> Option<Watcher> {
            let user_limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .unwrap_or(8192);
            // SAFETY: plain syscall; the result is checked.
            let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            if raw < 0 {
                return None;
            }
            // SAFETY: `raw` is a new descriptor owned by nobody else.
            let wake = unsafe { OwnedFd::from_raw_fd(raw) };
            let shared = Arc::new(Shared {
                root: root.to_path_buf(),
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
                stop: AtomicBool::new(false),
                wake,
                max_watches: MAX_WATCHES.min(user_limit / 2),
            });
            let for_thread = Arc::clone(&shared);
            // Detached: dropping the watcher stops it (see `Drop`).
            std::thread::Builder::new()
                .name("pi-checkpoint-watch".into())
                .spawn(move || run(&for_thread))
                .ok()?;
            Some(Watcher { shared })
        }

        /// A full scan begins: forget the news so far. `None` while the watches are not
        /// (yet) in place.
        pub fn begin_full(&self) -> Option<Trust> {
            let mut st = self.shared.lock();
            drain(&self.shared, &mut st);
            if !st.ready || st.reset || st.failed.is_some() {
                return None;
            }
            st.dirty = Dirty::default();
            st.saturated = false;
            Some(Trust {
                generation: st.generation,
                outside_rules: super::outside_rules(&self.shared.root),
            })
        }

        /// What changed since the full scan that got `trust` (or the last `take`), or why
        /// that is not known (then the caller walks the tree).
        pub fn take(&self, trust: &Trust) -> Result<Dirty, String> {
            let mut st = self.shared.lock();
            drain(&self.shared, &mut st);
            if let Some(why) = &st.failed {
                return Err(why.clone());
            }
            if !st.ready || st.reset || st.generation != trust.generation {
                return Err("the watches were set up again".into());
            }
            if st.saturated {
                return Err(format!("more than {MAX_DIRTY} changed names"));
            }
            if super::outside_rules(&self.shared.root) != trust.outside_rules {
                return Err("an ignore file outside the project changed".into());
            }
            Ok(std::mem::take(&mut st.dirty))
        }

        /// Waits until the watches are in place (for tests and the benchmark).
        pub fn wait_ready(&self, timeout: Duration) -> Result<(), String> {
            let deadline = Instant::now() + timeout;
            let mut st = self.shared.lock();
            loop {
                if let Some(why) = &st.failed {
                    return Err(why.clone());
                }
                if st.ready && !st.reset {
                    return Ok(());
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err("the watches are not set up yet".into());
                }
                st = match self.shared.changed.wait_timeout(st, left) {
                    Ok((g, _)) => g,
                    Err(e) => e.into_inner().0,
                };
            }
        }
    }

    impl Drop for Watcher {
        fn drop(&mut self) {
            self.shared.stop.store(true, Ordering::Relaxed);
            self.shared.wake();
        }
    }

    /// The background thread: set the watches up, then collect events until stopped,
    /// setting up again when the watches may be wrong.
    fn run(shared: &Shared) {
        let mut setups = 0;
        while !shared.stop.load(Ordering::Relaxed) {
            setups += 1;
            let outcome = if setups > MAX_SETUPS {
                Err(format!("the watches were set up {MAX_SETUPS} times"))
            } else {
                setup(shared)
            };
            let raw = {
                let mut st = shared.lock();
                match outcome {
                    Ok((fd, dirs)) => {
                        let raw = fd.as_raw_fd();
                        st.fd = Some(fd);
                        st.dirs = dirs;
                        st.generation += 1;
                        st.ready = true;
                        st.reset = false;
                        st.saturated = false;
                        st.dirty = Dirty::default();
                        shared.changed.notify_all();
                        raw
                    }
                    Err(why) => {
                        st.failed = Some(why);
                        st.ready = false;
                        st.fd = None;
                        st.dirs.clear();
                        shared.changed.notify_all();
                        return;
                    }
                }
            };
            loop {
                if shared.stop.load(Ordering::Relaxed) {
                    return;
                }
                let mut polls = [
                    libc::pollfd {
                        fd: raw,
                        events: libc::POLLIN,
                        revents: 0,
                    },
                    libc::pollfd {
                        fd: shared.wake.as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    },
                ];
                // No timeout: events and wake-ups (stop, set up again) end the wait.
                // SAFETY: two valid pollfds; the descriptors stay open while this thread
                // runs (only this thread replaces the inotify one, below).
                unsafe { libc::poll(polls.as_mut_ptr(), 2, -1) };
                if polls[1].revents != 0 {
                    shared.clear_wake();
                }
                if shared.stop.load(Ordering::Relaxed) {
                    return;
                }
                let mut st = shared.lock();
                drain(shared, &mut st);
                if st.failed.is_some() {
                    st.ready = false;
                    st.fd = None;
                    st.dirs.clear();
                    shared.changed.notify_all();
                    return;
                }
                if st.reset {
                    st.ready = false;
                    st.fd = None;
                    st.dirs.clear();
                    break;
                }
            }
        }
    }

    /// A new inotify instance watching every directory the walk would enter.
    fn setup(shared: &Shared) -> Result<(OwnedFd, HashMap<i32, String>), String> {
        // SAFETY: plain syscall; the result is checked.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(format!(
                "inotify unavailable: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: `raw` is a new descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut dirs = HashMap::new();
        let deadline = Instant::now() + SETUP_TIME;
        add_tree(shared, raw, "", &mut dirs, Some(deadline))?;
        Ok((fd, dirs))
    }

    /// Watches `dir` and every visible directory below it, each before listing it.
    fn add_tree(
        shared: &Shared,
        fd: i32,
        dir: &str,
        dirs: &mut HashMap<i32, String>,
        deadline: Option<Instant>,
    ) -> Result<(), String> {
        let mut stack = vec![dir.to_string()];
        while let Some(dir) = stack.pop() {
            if shared.stop.load(Ordering::Relaxed) {
                return Err("stopped".into());
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                return Err(format!(
                    "setting the watches up took over {} s",
                    SETUP_TIME.as_secs()
                ));
            }
            let path = if dir.is_empty() {
                shared.root.clone()
            } else {
                shared.root.join(&dir)
            };
            let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
                continue;
            };
            // The project directory itself may be a symbolic link (the walk follows it).
            let mask = if dir.is_empty() {
                MASK & !libc::IN_DONT_FOLLOW
            } else {
                MASK
            };
            // SAFETY: valid descriptor and NUL-terminated path.
            let wd = unsafe { libc::inotify_add_watch(fd, c_path.as_ptr(), mask) };
            if wd < 0 {
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::ENOSPC) => {
                        return Err("the inotify watch limit was reached".into());
                    }
                    // Gone, unreadable or not a directory any more: the walk skips it too.
                    _ if !dir.is_empty() => continue,
                    _ => return Err(format!("cannot watch the project: {err}")),
                }
            }
            if dirs.insert(wd, dir.clone()).is_none() && dirs.len() > shared.max_watches {
                return Err(format!(
                    "more than {} directories to watch",
                    shared.max_watches
                ));
            }
            for (name, is_dir) in list_dir(&shared.root, &dir) {
                if is_dir {
                    stack.push(join(&dir, &name));
                }
            }
        }
        Ok(())
    }

    /// Removes the watches of `dir` and below (it moved away).
    fn remove_tree(fd: i32, dir: &str, dirs: &mut HashMap<i32, String>) {
        let prefix = format!("{dir}/");
        dirs.retain(|wd, d| {
            let under = d.as_str() == dir || d.starts_with(&prefix);
            if under {
                // SAFETY: valid descriptor; a stale watch descriptor only fails.
                unsafe { libc::inotify_rm_watch(fd, *wd) };
            }
            !under
        });
    }

    /// Reads every queued event (without blocking) into the state.
    fn drain(shared: &Shared, st: &mut State) {
        let Some(fd) = st.fd.as_ref().map(AsRawFd::as_raw_fd) else {
            return;
        };
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: the buffer is valid for its length; the descriptor is open.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                // EAGAIN: nothing more queued (other errors: the next call tries again).
                return;
            }
            let n = n as usize;
            let mut at = 0;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n {
                // SAFETY: the kernel wrote a whole event header at `at`.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                let name_len = ev.len as usize;
                let end = (at + header + name_len).min(n);
                let raw_name = &buf[at + header..end];
                let name_end = raw_name.iter().position(|&b| b == 0).unwrap_or(name_len);
                let name =
                    String::from_utf8_lossy(&raw_name[..name_end.min(raw_name.len())]).into_owned();
                at = end;
                event(shared, st, fd, ev.wd, ev.mask, &name);
            }
        }
    }

    /// One event.
    fn event(shared: &Shared, st: &mut State, fd: i32, wd: i32, mask: u32, name: &str) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            st.reset = true;
            shared.wake();
            return;
        }
        let Some(dir) = st.dirs.get(&wd).cloned() else {
            return;
        };
        if mask & libc::IN_IGNORED != 0 {
            st.dirs.remove(&wd);
            if dir.is_empty() {
                st.reset = true;
                shared.wake();
            }
            return;
        }
        if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
            // The parent's event covers it; the root has none.
            if dir.is_empty() {
                st.reset = true;
                shared.wake();
            }
            return;
        }
        if name.is_empty() {
            return;
        }
        let path = join(&dir, name);
        if IGNORE_FILES.contains(&name) {
            st.reset = true;
            shared.wake();
        }
        if mask & libc::IN_ISDIR != 0 {
            if mask & (libc::IN_MOVED_FROM | libc::IN_DELETE) != 0 {
                remove_tree(fd, &path, &mut st.dirs);
            }
            if mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0
                && list_dir(&shared.root, &dir)
                    .iter()
                    .any(|(n, is_dir)| *is_dir && n == name)
                && add_tree(
                    shared,
                    fd,
                    &path,
                    &mut st.dirs,
                    Some(Instant::now() + SETUP_TIME),
                )
                .is_err()
            {
                // Too many directories or too slow: the next setup decides for good.
                st.reset = true;
                shared.wake();
            }
            if !st.saturated {
                st.dirty.trees.insert(path);
            }
        } else if !st.saturated {
            st.dirty.files.insert(path);
        }
        if st.dirty.len() > MAX_DIRTY {
            st.saturated = true;
            st.dirty = Dirty::default();
        }
    }
}
