//! Terminal modes for the interactive UI: raw mode, bracketed paste and, so Shift+Enter
//! is distinguishable, the kitty keyboard protocol where the terminal supports it and
//! xterm modifyOtherKeys (`CSI > 4;2 m`, what tmux and xterm understand) where it does
//! not, as pi does; and restoring all of it on exit, on panic, and around Ctrl+Z.
//!
//! Whether the terminal speaks the kitty protocol is asked as pi asks it, without
//! waiting: entering the modes writes the query `CSI ? u`, followed by the primary
//! device attributes query `CSI c` that every terminal answers, in order. The input
//! reader sees the answers among the keys: the kitty answer ([`on_kitty_reply`] turns
//! the protocol on), or the attributes without it before them, or nothing within
//! 150 ms (then [`on_kitty_silence`] turns modifyOtherKeys on, as pi does after its
//! 150 ms wait). Keys typed meanwhile are
//! read as usual, none is lost, and a terminal that never answers costs no wait. What
//! was learnt is kept, so re-entering the modes (after Ctrl+Z, the external editor)
//! sets them at once.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{disable_raw_mode, enable_raw_mode};
use crossterm::{execute, terminal};

/// Whether the terminal is currently in our modes (read by the panic hook).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether we pushed keyboard enhancement flags (so we pop them again).
static ENHANCED: AtomicBool = AtomicBool::new(false);
/// Whether we turned on modifyOtherKeys (so we turn it off again).
static MODIFY_OTHER_KEYS: AtomicBool = AtomicBool::new(false);
/// What is known of the terminal's kitty protocol support: [`UNKNOWN`], [`KITTY`] or
/// [`NO_KITTY`].
static SUPPORT: AtomicU8 = AtomicU8::new(UNKNOWN);
/// The query was written and neither an answer nor the timeout has come yet.
static QUERY_OPEN: AtomicBool = AtomicBool::new(false);
const UNKNOWN: u8 = 0;
const KITTY: u8 = 1;
const NO_KITTY: u8 = 2;

/// How long the terminal has to answer the kitty keyboard query before modifyOtherKeys
/// is used instead (pi waits 150 ms).
pub const KITTY_QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(150);

/// Asks the terminal whether it speaks the kitty keyboard protocol, then for its
/// device attributes (whose answer, coming second, says that no kitty answer is coming).
const KITTY_QUERY: &[u8] = b"\x1b[?u\x1b[c";

/// The kitty flags pi-rs pushes, pi's 7: disambiguate escape codes (1), report event
/// types (2) and report alternate keys (4). With 2 the terminal also reports key
/// releases and marks repeats; the input decoder drops the releases before anything
/// sees them (see `InputDecoder::set_key_releases`), so they never act twice.
fn kitty_flags() -> PushKeyboardEnhancementFlags {
    PushKeyboardEnhancementFlags(
        KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
            | KeyboardEnhancementFlags::REPORT_EVENT_TYPES
            | KeyboardEnhancementFlags::REPORT_ALTERNATE_KEYS,
    )
}

/// Whether the kitty keyboard query is waiting for its answer (the input reader then
/// calls [`on_kitty_silence`] once [`KITTY_QUERY_TIMEOUT`] has passed without one).
pub fn kitty_query_open() -> bool {
    QUERY_OPEN.load(Ordering::SeqCst)
}

/// The terminal answered the kitty keyboard query: the protocol goes on (in place of
/// modifyOtherKeys if the answer came late). Returns whether it was turned on now.
pub fn on_kitty_reply() -> bool {
    QUERY_OPEN.store(false, Ordering::SeqCst);
    SUPPORT.store(KITTY, Ordering::SeqCst);
    if !ACTIVE.load(Ordering::SeqCst) || ENHANCED.load(Ordering::SeqCst) {
        return false;
    }
    let mut out = io::stdout();
    if MODIFY_OTHER_KEYS.swap(false, Ordering::SeqCst) {
        let _ = out.write_all(MODIFY_OTHER_KEYS_OFF);
    }
    let on = execute!(out, kitty_flags()).is_ok();
    ENHANCED.store(on, Ordering::SeqCst);
    on
}

/// No answer to the kitty keyboard query in time: modifyOtherKeys goes on, as pi does
/// (tmux forwards modified Enter keys with it but does not answer the query).
pub fn on_kitty_silence() {
    if !QUERY_OPEN.swap(false, Ordering::SeqCst) {
        return;
    }
    let _ = SUPPORT.compare_exchange(UNKNOWN, NO_KITTY, Ordering::SeqCst, Ordering::SeqCst);
    if !ACTIVE.load(Ordering::SeqCst) || ENHANCED.load(Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if out.write_all(MODIFY_OTHER_KEYS_ON).is_ok() && out.flush().is_ok() {
        MODIFY_OTHER_KEYS.store(true, Ordering::SeqCst);
    }
}

/// Turns xterm modifyOtherKeys mode 2 on / off.
const MODIFY_OTHER_KEYS_ON: &[u8] = b"\x1b[>4;2m";
const MODIFY_OTHER_KEYS_OFF: &[u8] = b"\x1b[>4;0m";

/// Whether the kitty keyboard protocol is on (the input decoder reads a few legacy
/// sequences differently then).
pub fn kitty_active() -> bool {
    ENHANCED.load(Ordering::SeqCst)
}

/// Puts the terminal into the UI's modes; restores it when dropped.
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    /// Enters raw mode, enables bracketed paste and the kitty keyboard protocol if
    /// supported, else modifyOtherKeys (the first time: asks, see the module docs).
    /// Installs a panic hook that restores the terminal before the panic message is
    /// printed.
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_modes()?;
        // The cell size in pixels sizes inline images; asked only where they are drawn,
        // as pi-tui asks (the answer is read with the keys).
        if super::images::protocol().is_some() {
            let mut out = io::stdout();
            out.write_all(super::images::CELL_SIZE_QUERY.as_bytes())?;
            out.flush()?;
        }
        Ok(TerminalGuard { _private: () })
    }

    /// Terminal size as (columns, rows), with a sane fallback when unknown.
    pub fn size() -> (u16, u16) {
        terminal::size().unwrap_or((80, 24))
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn enable_modes() -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnableBracketedPaste)?;
    ACTIVE.store(true, Ordering::SeqCst);
    match SUPPORT.load(Ordering::SeqCst) {
        KITTY => {
            execute!(out, kitty_flags())?;
            ENHANCED.store(true, Ordering::SeqCst);
        }
        NO_KITTY => {
            out.write_all(MODIFY_OTHER_KEYS_ON)?;
            out.flush()?;
            MODIFY_OTHER_KEYS.store(true, Ordering::SeqCst);
        }
        _ => {
            out.write_all(KITTY_QUERY)?;
            out.flush()?;
            QUERY_OPEN.store(true, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Restores the terminal (idempotent): leaves raw mode, disables bracketed paste and the
/// keyboard protocol, shows the cursor and ends any synchronized update.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    if MODIFY_OTHER_KEYS.swap(false, Ordering::SeqCst) {
        let _ = out.write_all(MODIFY_OTHER_KEYS_OFF);
    }
    let _ = execute!(out, DisableBracketedPaste);
    let _ = out.write_all(b"\x1b[?2026l\x1b[?25h\x1b[0m");
    let _ = out.flush();
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Ctrl+Z: restores the terminal, stops the process (SIGTSTP) and, once the shell
/// resumes it, re-enters the UI modes. The caller redraws everything afterwards.
#[cfg(unix)]
pub fn suspend() -> io::Result<()> {
    restore();
    // SAFETY: raising a signal on ourselves has no memory-safety implications.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    enable_modes()
}

#[cfg(not(unix))]
pub fn suspend() -> io::Result<()> {
    Ok(())
}
