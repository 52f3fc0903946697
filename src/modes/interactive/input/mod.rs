//! Terminal input: raw bytes from the terminal decoded by our own [`InputDecoder`], plus
//! resize events from SIGWINCH.
//!
//! crossterm's event reader drops xterm modifyOtherKeys sequences (`CSI 27;2;13~`, what
//! tmux and xterm send for Shift+Enter when the kitty protocol is not available), so the
//! UI reads the terminal itself. A reader thread waits for input with `poll` and sends the
//! bytes to the event loop; it can be paused while another program owns the terminal
//! (the external editor), so it never steals that program's keystrokes. A lone `ESC`
//! becomes the Escape key when nothing follows it within [`ESC_TIMEOUT`], as in pi.

pub mod decoder;

use std::time::Duration;

pub use self::decoder::InputDecoder;

/// How long a lone `ESC` waits for the rest of a sequence (pi's stdin buffer waits 10 ms).
pub const ESC_TIMEOUT: Duration = Duration::from_millis(10);

#[cfg(unix)]
pub use self::unix::TerminalInput;

#[cfg(unix)]
mod unix {
    use std::collections::VecDeque;
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use crossterm::event::Event;
    use tokio::signal::unix::{Signal, SignalKind, signal};
    use tokio::sync::mpsc;

    use super::*;

    /// How often the reader thread looks at its pause and stop flags.
    const POLL_SLICE: i32 = 50;

    /// Flags shared with the reader thread.
    #[derive(Default)]
    struct Control {
        /// Asked to stop reading (another program owns the terminal).
        pause: AtomicBool,
        /// The thread has seen `pause` and is not reading.
        parked: AtomicBool,
        /// Asked to end.
        stop: AtomicBool,
    }

    /// Key, paste, focus and resize events from the controlling terminal.
    pub struct TerminalInput {
        bytes: mpsc::UnboundedReceiver<Vec<u8>>,
        decoder: InputDecoder,
        queue: VecDeque<Event>,
        winch: Option<Signal>,
        control: Arc<Control>,
        closed: bool,
        /// When the kitty keyboard query counts as unanswered (see
        /// `terminal::on_kitty_silence`), while it is open.
        kitty_deadline: Option<tokio::time::Instant>,
    }

    impl TerminalInput {
        /// Starts reading stdin (or `/dev/tty` when stdin is not a terminal). `kitty`:
        /// whether the kitty keyboard protocol was turned on.
        pub fn start(kitty: bool) -> io::Result<TerminalInput> {
            let fd = open_tty()?;
            let (tx, bytes) = mpsc::unbounded_channel();
            let control = Arc::new(Control::default());
            let thread_control = control.clone();
            std::thread::Builder::new()
                .name("pi-terminal-input".into())
                .spawn(move || read_loop(&fd, &tx, &thread_control))?;
            let mut decoder = InputDecoder::new();
            decoder.set_kitty(kitty);
            Ok(TerminalInput {
                bytes,
                decoder,
                queue: VecDeque::new(),
                winch: signal(SignalKind::window_change()).ok(),
                control,
                closed: false,
                kitty_deadline: crate::modes::interactive::terminal::kitty_query_open().then(
                    || {
                        tokio::time::Instant::now()
                            + crate::modes::interactive::terminal::KITTY_QUERY_TIMEOUT
                    },
                ),
            })
        }

        /// The next event; `None` once the terminal is gone.
        pub async fn next(&mut self) -> Option<Event> {
            loop {
                if let Some(event) = self.queue.pop_front() {
                    return Some(event);
                }
                if self.closed {
                    return None;
                }
                let waiting = self.decoder.has_pending();
                let kitty_deadline = self.kitty_deadline;
                tokio::select! {
                    chunk = self.bytes.recv() => match chunk {
                        Some(chunk) => {
                            self.queue.extend(self.decoder.feed(&chunk));
                            use crate::modes::interactive::terminal;
                            let attributes = self.decoder.take_device_attributes();
                            if let Some((w, h)) = self.decoder.take_cell_size()
                                && crate::modes::interactive::images::set_cell_size(w, h)
                            {
                                // Images already drawn had the wrong size: everything
                                // is drawn again, as pi does.
                                let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
                                self.queue.push_back(Event::Resize(w, h));
                            }
                            if self.decoder.take_kitty_reply() {
                                self.kitty_deadline = None;
                                if terminal::on_kitty_reply() {
                                    self.decoder.set_kitty(true);
                                }
                            } else if attributes {
                                // Terminals answer in order: the attributes came
                                // without a kitty answer before them.
                                self.kitty_deadline = None;
                                terminal::on_kitty_silence();
                            }
                        }
                        None => {
                            self.queue.extend(self.decoder.flush());
                            self.closed = true;
                        }
                    },
                    Some(()) = recv_winch(&mut self.winch) => {
                        let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
                        self.queue.push_back(Event::Resize(w, h));
                    }
                    _ = tokio::time::sleep(ESC_TIMEOUT), if waiting => {
                        self.queue.extend(self.decoder.flush());
                    }
                    _ = sleep_until(kitty_deadline), if kitty_deadline.is_some() => {
                        self.kitty_deadline = None;
                        crate::modes::interactive::terminal::on_kitty_silence();
                    }
                }
            }
        }

        /// Stops reading until [`TerminalInput::resume`], for a program that takes the
        /// terminal over. Returns once the reader no longer reads (or after 200 ms).
        pub fn pause(&self) {
            self.control.pause.store(true, Ordering::SeqCst);
            let until = Instant::now() + Duration::from_millis(200);
            while !self.control.parked.load(Ordering::SeqCst) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(2));
            }
        }

        /// Reads again after [`TerminalInput::pause`].
        pub fn resume(&self) {
            self.control.pause.store(false, Ordering::SeqCst);
        }
    }

    impl Drop for TerminalInput {
        fn drop(&mut self) {
            self.control.stop.store(true, Ordering::SeqCst);
        }
    }

    async fn sleep_until(deadline: Option<tokio::time::Instant>) {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    async fn recv_winch(winch: &mut Option<Signal>) -> Option<()> {
        match winch {
            Some(s) => s.recv().await,
            None => std::future::pending().await,
        }
    }

    /// The terminal to read: stdin when it is one, else the controlling terminal.
    fn open_tty() -> io::Result<OwnedFd> {
        let stdin = io::stdin();
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(stdin.as_raw_fd()) } == 1 {
            return stdin.as_fd().try_clone_to_owned();
        }
        Ok(std::fs::File::open("/dev/tty")?.into())
    }

    fn read_loop(fd: &OwnedFd, tx: &mpsc::UnboundedSender<Vec<u8>>, control: &Control) {
        let raw = fd.as_raw_fd();
        let mut buf = [0u8; 4096];
        loop {
            if control.stop.load(Ordering::SeqCst) {
                return;
            }
            if control.pause.load(Ordering::SeqCst) {
                control.parked.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
            control.parked.store(false, Ordering::SeqCst);
            let mut pfd = libc::pollfd {
                fd: raw,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut pfd, 1, POLL_SLICE) };
            if ready < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            if ready == 0 || control.pause.load(Ordering::SeqCst) {
                continue;
            }
            // SAFETY: reads into a buffer we own, at most its length.
            let n = unsafe { libc::read(raw, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let err = io::Error::last_os_error().kind();
                if matches!(err, io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) {
                    continue;
                }
                return;
            }
            if n == 0 || tx.send(buf[..n as usize].to_vec()).is_err() {
                return;
            }
        }
    }
}

#[cfg(not(unix))]
pub use self::other::TerminalInput;

/// Elsewhere crossterm reads the console (there are no modifyOtherKeys sequences to lose).
#[cfg(not(unix))]
mod other {
    use std::io;

    use crossterm::event::{Event, EventStream};
    use futures::StreamExt;

    pub struct TerminalInput {
        events: EventStream,
    }

    impl TerminalInput {
        pub fn start(_kitty: bool) -> io::Result<TerminalInput> {
            Ok(TerminalInput {
                events: EventStream::new(),
            })
        }

        pub async fn next(&mut self) -> Option<Event> {
            self.events.next().await.and_then(Result::ok)
        }

        pub fn pause(&self) {}

        pub fn resume(&self) {}
    }
}
