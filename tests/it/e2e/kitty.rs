//! The built `pi` in a terminal that speaks the kitty keyboard protocol: a pseudo
//! terminal whose other end answers pi-rs's kitty query as kitty, Ghostty or WezTerm do
//! and then sends what such a terminal sends, key releases included. No tmux needed.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::env::{Env, WAIT};

/// The child on the far side of a pseudo terminal, with everything it wrote so far.
struct Pty {
    child: Child,
    master: std::fs::File,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn start(env: &Env, width: u16, height: u16) -> Pty {
        let mut master: libc::c_int = -1;
        let mut slave: libc::c_int = -1;
        let size = libc::winsize {
            ws_row: height,
            ws_col: width,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: valid pointers to locals; the name and termios arguments may be null.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two open descriptors that nothing else owns.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let home = env.home();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pi"));
        cmd.args(["--provider", "mock", "--model", "mock-model"])
            .current_dir(env.cwd())
            .env("HOME", &home)
            .env("PI_CODING_AGENT_DIR", "")
            .env("TERM", "xterm-kitty")
            .env_remove("TMUX")
            .env_remove("CI")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let master = std::fs::File::from(master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            child,
            master,
            output,
        }
    }

    fn output(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits until the output contains `needle`, failing after [`WAIT`].
    fn wait_for_bytes(&self, needle: &[u8]) {
        let until = Instant::now() + WAIT;
        while Instant::now() < until {
            if self.output().windows(needle.len()).any(|w| w == needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "{:?} never came; output: {:?}",
            String::from_utf8_lossy(needle),
            String::from_utf8_lossy(&self.output())
        );
    }

    /// The screen as a terminal shows the output so far.
    fn screen(&self, width: u16, height: u16) -> String {
        let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
        let mut parser = vt100::Parser::new(nz(height), nz(width), 0);
        parser.process(&self.output());
        parser.screen().contents()
    }

    fn wait_for_screen(&self, width: u16, height: u16, what: impl Fn(&str) -> bool) -> String {
        let until = Instant::now() + WAIT;
        loop {
            let screen = self.screen(width, height);
            if what(&screen) {
                return screen;
            }
            assert!(Instant::now() < until, "screen never matched:\n{screen}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The row of the editor: the one between the two rules above the footer.
fn editor_row(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().collect();
    let rules: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.starts_with("────"))
        .map(|(i, _)| i)
        .collect();
    match rules.as_slice() {
        [.., a, b] if b - a == 2 => rows[a + 1].trim_end().to_string(),
        _ => panic!("no editor on screen:\n{screen}"),
    }
}

/// With a kitty terminal pi-rs pushes pi's flags 7 (so the terminal reports releases),
/// and the release the terminal sends after every key neither types nor acts: each key
/// below arrives as press + release and does its work once.
#[test]
fn kitty_flags_7_and_key_releases_do_nothing() {
    let env = Env::new(json!({"sequence": [{"text": "the only reply"}]}));
    let (w, h) = (80, 24);
    let mut pty = Pty::start(&env, w, h);
    // The kitty query; the answer turns the protocol on with pi's flags.
    pty.wait_for_bytes(b"\x1b[?u");
    pty.send(b"\x1b[?0u\x1b[?62;22c");
    pty.wait_for_bytes(b"\x1b[>7u");
    pty.wait_for_screen(w, h, |s| s.contains("mock-model"));

    // Typing, with the releases kitty sends for flag 2.
    pty.send(b"a\x1b[97;1:3ub\x1b[98;1:3uc\x1b[99;1:3u");
    let screen = pty.wait_for_screen(w, h, |s| s.contains("abc"));
    assert_eq!(editor_row(&screen), "abc", "{screen}");
    // Backspace and Left with their releases: one character deleted, one step left.
    pty.send(b"\x7f\x1b[127;1:3u\x1b[D\x1b[1;1:3DX\x1b[88;2:3u");
    let screen = pty.wait_for_screen(w, h, |s| s.contains("Xb"));
    assert_eq!(editor_row(&screen), "aXb", "{screen}");
    // Ctrl+C clears once; had its release counted as a second press, pi-rs would quit.
    pty.send(b"\x1b[99;5u\x1b[99;5:3u");
    pty.wait_for_screen(w, h, |s| editor_row(s).is_empty());
    std::thread::sleep(Duration::from_millis(600));
    assert!(pty.child.try_wait().unwrap().is_none(), "pi-rs quit");
    // Enter submits once (a release submitting again would ask the model twice).
    pty.send(b"hi\x1b[104;1:3u\x1b[105;1:3u\r\x1b[13;1:3u");
    pty.wait_for_screen(w, h, |s| s.contains("the only reply"));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(env.requests().len(), 1, "one prompt, one request");
    // Ctrl+D on the empty editor quits, and the flags are popped again.
    pty.send(b"\x1b[100;5u\x1b[100;5:3u");
    let until = Instant::now() + WAIT;
    while pty.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < until, "pi-rs did not quit");
        std::thread::sleep(Duration::from_millis(20));
    }
    pty.wait_for_bytes(b"\x1b[<1u");
}
