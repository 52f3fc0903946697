//! Drives a program in a real terminal: a private tmux server (its own socket, so tests
//! never touch the user's tmux), one window of a fixed size, keys sent with `send-keys`,
//! the screen read with `capture-pane`.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server with one pane running a command.
pub struct Tmux {
    socket: String,
    session: String,
}

/// Whether tmux is installed (tests that need it print why they are skipped otherwise).
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

impl Tmux {
    /// Starts `command` (run by `sh -c`) in a `width`×`height` pane with the given working
    /// directory and environment.
    pub fn start(command: &str, cwd: &Path, env: &[(&str, &str)], width: u16, height: u16) -> Tmux {
        Tmux::start_configured(command, cwd, env, (width, height), "/dev/null")
    }

    /// [`Tmux::start`] with a tmux configuration file (e.g. `set -g extended-keys on`),
    /// read before the command starts.
    pub fn start_configured(
        command: &str,
        cwd: &Path,
        env: &[(&str, &str)],
        (width, height): (u16, u16),
        config: &str,
    ) -> Tmux {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let socket = format!("pi-rs-test-{}-{n}", std::process::id());
        let session = "t".to_string();
        let mut exports = String::new();
        for (k, v) in env {
            exports.push_str(&format!("export {k}={}; ", shell_quote(v)));
        }
        let full = format!("{exports}exec {command}");
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", config, "new-session", "-d"])
            .args([
                "-s",
                &session,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .arg("-c")
            .arg(cwd)
            .args(["sh", "-c", &full])
            .env("TERM", "xterm-256color")
            // A terminal as a user has it: CI machines set `CI`, which makes chalk (pi's
            // styles for bold, italic, underline) write no styles at all in reference pi.
            .env_remove("CI")
            .status()
            .expect("start tmux");
        assert!(status.success(), "tmux new-session failed");
        // Keep the pane after the program exits so its last screen can still be read.
        let _ = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "set-option",
                "-t",
                &session,
                "remain-on-exit",
                "on",
            ])
            .status();
        Tmux { socket, session }
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// Types literal text.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", &self.session, "-l", text]);
    }

    /// Sends key names (`Enter`, `Escape`, `C-c`, `Up`, `S-Tab`…).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Pastes `text` as the terminal would: in bracketed-paste markers when the program
    /// asked for them.
    pub fn paste(&self, text: &str) {
        self.tmux(&["set-buffer", "-b", "pi-test", text]);
        self.tmux(&[
            "paste-buffer",
            "-p",
            "-d",
            "-b",
            "pi-test",
            "-t",
            &self.session,
        ]);
    }

    /// The visible screen, trailing blank lines removed.
    pub fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", &self.session]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.trim_end().to_string()
    }

    /// The visible screen with its colours and styles as escape sequences (tmux's
    /// `capture-pane -e`), trailing blank lines removed.
    pub fn screen_ansi(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-e", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Scrollback plus screen.
    pub fn history(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-S", "-", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// Waits until the screen contains `needle`; panics with the screen after `timeout`.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {needle:?}; screen was:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until `pred` holds for the screen.
    pub fn wait_until(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; screen was:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Resizes the window.
    pub fn resize(&self, width: u16, height: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            &self.session,
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// Copies everything the program writes to the terminal from now on into `path`
    /// (tmux's `pipe-pane`).
    pub fn record(&self, path: &Path) {
        let command = format!("cat >> '{}'", path.display());
        self.tmux(&["pipe-pane", "-o", "-t", &self.session, &command]);
    }

    /// The terminal cursor: (column, row, visible).
    pub fn cursor(&self) -> (u16, u16, bool) {
        let out = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            &self.session,
            "#{cursor_x} #{cursor_y} #{cursor_flag}",
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text
            .split_whitespace()
            .map(|p| p.parse::<u16>().unwrap_or(0));
        let (x, y, flag) = (parts.next(), parts.next(), parts.next());
        (x.unwrap_or(0), y.unwrap_or(0), flag == Some(1))
    }

    /// Whether the program in the pane has exited.
    pub fn exited(&self) -> bool {
        let out = self.tmux(&["display-message", "-p", "-t", &self.session, "#{pane_dead}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }

    /// PID of the program in the pane.
    pub fn pane_pid(&self) -> Option<u32> {
        let out = self.tmux(&["display-message", "-p", "-t", &self.session, "#{pane_pid}"]);
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
