//! Terminal modes for the interactive UI: raw mode, bracketed paste and, so Shift+Enter
//! is distinguishable, the kitty keyboard protocol where the terminal supports it and
//! xterm modifyOtherKeys (`CSI > 4;2 m`, what tmux and xterm understand) where it does
//! not, as pi does; and restoring all of it on exit, on panic, and around Ctrl+Z.
//!
//! Probes that need a terminal round trip (keyboard-protocol support) run here, once,
//! before the event reader starts, so they never race with key input.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// supported, else modifyOtherKeys. Installs a panic hook that restores the terminal before the panic
    /// message is printed.
    pub fn enter() -> io::Result<TerminalGuard> {
        install_panic_hook();
        enable_modes()?;
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
    // The support probe reads a reply from the terminal; do it only with a real tty.
    let enhanced = matches!(terminal::supports_keyboard_enhancement(), Ok(true));
    if enhanced {
        execute!(
            out,
            PushKeyboardEnhancementFlags(
                KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
                    | KeyboardEnhancementFlags::REPORT_ALTERNATE_KEYS
            )
        )?;
    } else {
        out.write_all(MODIFY_OTHER_KEYS_ON)?;
        out.flush()?;
    }
    MODIFY_OTHER_KEYS.store(!enhanced, Ordering::SeqCst);
    ENHANCED.store(enhanced, Ordering::SeqCst);
    ACTIVE.store(true, Ordering::SeqCst);
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
