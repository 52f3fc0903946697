//! Bytes from the terminal → key, paste and focus events.
//!
//! Understands the legacy encodings (control bytes, `ESC x` for Alt, SS3 and CSI
//! cursor/function keys with `1;<mod>` modifiers), the kitty keyboard protocol
//! (`CSI <code>[:<shifted>[:<base>]];<mod>[:<kind>]u`), xterm modifyOtherKeys
//! (`CSI 27;<mod>;<code>~`, what tmux and xterm send for Shift+Enter once asked with
//! `CSI > 4;2 m`) and bracketed paste. Terminal replies (device attributes, cursor
//! position, kitty flags), mouse reports and OSC/DCS/APC strings are skipped.
//!
//! Events use crossterm's types with crossterm's conventions (Ctrl+letter is the
//! lowercase letter with CONTROL, Shift+Tab is `BackTab` with SHIFT, an uppercase
//! letter carries SHIFT), so key matching does not care which decoder produced them.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";
/// A CSI longer than this without its final byte is garbage, not a sequence in flight.
const MAX_CSI: usize = 64;

/// Incremental decoder: feed it what `read()` returned, get the complete events; an
/// incomplete tail (a lone `ESC`, half a UTF-8 character) waits for the next read or
/// for [`InputDecoder::flush`] after a short timeout.
#[derive(Debug, Default)]
pub struct InputDecoder {
    pending: Vec<u8>,
    /// Inside a bracketed paste: the text so far.
    paste: Option<Vec<u8>>,
    /// The kitty protocol is on: `ESC CR` and a bare LF are Shift+Enter mappings
    /// (kitty's `send_text`, Ghostty's `text:\n`), as pi reads them.
    kitty: bool,
    /// The terminal answered the kitty keyboard query (`CSI ? flags u`) since the last
    /// [`InputDecoder::take_kitty_reply`].
    kitty_reply: bool,
    /// The terminal answered a primary device attributes query (`CSI ? … c`) since
    /// the last [`InputDecoder::take_device_attributes`].
    device_attributes: bool,
    /// Pass key release events on (kitty's `CSI …;<mod>:3u`). Off by default: with the
    /// kitty flags pi-rs pushes (7, as pi) the terminal reports every release, and no
    /// part of the UI acts on one, so they are dropped here, before anything sees them.
    key_releases: bool,
    /// The terminal's cell size in pixels (its answer to `CSI 16 t`), not yet taken.
    cell_size: Option<(u32, u32)>,
}

/// One step of decoding the front of the buffer.
#[derive(Debug, PartialEq)]
enum Step {
    /// More bytes are needed.
    Incomplete,
    /// An event and how many bytes it used.
    Event(Event, usize),
    /// Bytes that are no event (replies, mouse reports, unknown sequences).
    Skip(usize),
    /// The start of a bracketed paste, and its length.
    PasteStart(usize),
    /// The terminal's answer to the kitty keyboard query, and its length.
    KittyReply(usize),
    /// The terminal's primary device attributes, and their length.
    DeviceAttributes(usize),
    /// The terminal's cell size in pixels (width, height), and the answer's length.
    CellSize((u32, u32), usize),
}

impl InputDecoder {
    pub fn new() -> InputDecoder {
        InputDecoder::default()
    }

    /// Tells the decoder whether the kitty keyboard protocol is on.
    pub fn set_kitty(&mut self, on: bool) {
        self.kitty = on;
    }

    /// Whether key release events are passed on (they are dropped by default).
    pub fn set_key_releases(&mut self, on: bool) {
        self.key_releases = on;
    }

    /// Whether the terminal has answered the kitty keyboard query (`CSI ? u`) since the
    /// last call: it supports the protocol.
    pub fn take_kitty_reply(&mut self) -> bool {
        std::mem::take(&mut self.kitty_reply)
    }

    /// Whether the terminal has answered a primary device attributes query (`CSI c`)
    /// since the last call.
    pub fn take_device_attributes(&mut self) -> bool {
        std::mem::take(&mut self.device_attributes)
    }

    /// The cell size the terminal reported (`CSI 6 ; height ; width t`) since the last
    /// call, as (width, height) in pixels.
    pub fn take_cell_size(&mut self) -> Option<(u32, u32)> {
        self.cell_size.take()
    }

    /// Whether bytes are held back waiting for the rest of a sequence.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty() && self.paste.is_none()
    }

    /// Decodes `bytes` (appended to what is pending) into events.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        self.drain(&mut events, false);
        events
    }

    /// Gives up waiting: a lone `ESC` is the Escape key, any other incomplete tail is
    /// decoded as far as it goes (the rest is dropped). A paste in progress waits on.
    pub fn flush(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        self.drain(&mut events, true);
        events
    }

    fn drain(&mut self, events: &mut Vec<Event>, flushing: bool) {
        let mut at = 0;
        loop {
            if let Some(text) = self.paste.as_mut() {
                let rest = &self.pending[at..];
                match find(rest, PASTE_END) {
                    Some(end) => {
                        text.extend_from_slice(&rest[..end]);
                        at += end + PASTE_END.len();
                        let text = self.paste.take().unwrap_or_default();
                        events.push(Event::Paste(paste_text(&text)));
                        continue;
                    }
                    None => {
                        // Keep a possible partial end marker for the next read.
                        let keep = partial_suffix(rest, PASTE_END);
                        text.extend_from_slice(&rest[..rest.len() - keep]);
                        at = self.pending.len() - keep;
                        break;
                    }
                }
            }
            let rest = &self.pending[at..];
            if rest.is_empty() {
                break;
            }
            match decode(rest, self.kitty) {
                Step::Event(event, used) => {
                    let release = matches!(
                        &event,
                        Event::Key(key) if key.kind == KeyEventKind::Release
                    );
                    if !release || self.key_releases {
                        events.push(event);
                    }
                    at += used;
                }
                Step::Skip(used) => at += used,
                Step::KittyReply(used) => {
                    self.kitty_reply = true;
                    at += used;
                }
                Step::DeviceAttributes(used) => {
                    self.device_attributes = true;
                    at += used;
                }
                Step::CellSize(size, used) => {
                    self.cell_size = Some(size);
                    at += used;
                }
                Step::PasteStart(used) => {
                    at += used;
                    self.paste = Some(Vec::new());
                }
                Step::Incomplete if flushing => {
                    if rest[0] == ESC {
                        events.push(key(KeyCode::Esc, KeyModifiers::NONE));
                        at += 1;
                    } else {
                        // Half a UTF-8 character that never completed.
                        at = self.pending.len();
                    }
                }
                Step::Incomplete => break,
            }
        }
        self.pending.drain(..at);
    }
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// How many bytes at the end of `hay` could be the start of `marker`.
fn partial_suffix(hay: &[u8], marker: &[u8]) -> usize {
    (1..marker.len())
        .rev()
        .find(|&n| hay.len() >= n && hay[hay.len() - n..] == marker[..n])
        .unwrap_or(0)
}

/// Pasted text as the terminal sent it (the editor normalizes line endings).
fn paste_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, modifiers))
}

/// Decodes the event at the front of `buf`.
fn decode(buf: &[u8], kitty: bool) -> Step {
    match buf[0] {
        ESC => decode_escape(buf, kitty),
        b'\n' if kitty => Step::Event(key(KeyCode::Enter, KeyModifiers::SHIFT), 1),
        _ => decode_plain(buf),
    }
}

/// A byte or character without a leading `ESC`.
fn decode_plain(buf: &[u8]) -> Step {
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let event = match buf[0] {
        b'\r' => key(KeyCode::Enter, none),
        b'\t' => key(KeyCode::Tab, none),
        0x7f => key(KeyCode::Backspace, none),
        0 => key(KeyCode::Char(' '), ctrl),
        c @ 0x01..=0x1a => key(KeyCode::Char((c - 1 + b'a') as char), ctrl),
        c @ 0x1c..=0x1f => key(KeyCode::Char((c - 0x1c + b'4') as char), ctrl),
        _ => return decode_utf8(buf),
    };
    Step::Event(event, 1)
}

fn decode_utf8(buf: &[u8]) -> Step {
    let len = match buf[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Step::Skip(1),
    };
    if buf.len() < len {
        return Step::Incomplete;
    }
    match std::str::from_utf8(&buf[..len])
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(c) => {
            let mods = if c.is_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            Step::Event(key(KeyCode::Char(c), mods), len)
        }
        None => Step::Skip(1),
    }
}

fn decode_escape(buf: &[u8], kitty: bool) -> Step {
    let Some(&second) = buf.get(1) else {
        return Step::Incomplete;
    };
    match second {
        b'[' => decode_csi(buf),
        b'O' => decode_ss3(buf),
        b']' | b'P' | b'_' | b'^' | b'X' => skip_string(buf),
        // Escape pressed twice: two Escapes (the second is decoded on its own).
        ESC => Step::Event(key(KeyCode::Esc, KeyModifiers::NONE), 1),
        b'\r' if kitty => Step::Event(key(KeyCode::Enter, KeyModifiers::SHIFT), 2),
        _ => match decode_plain(&buf[1..]) {
            Step::Event(Event::Key(mut k), used) => {
                k.modifiers |= KeyModifiers::ALT;
                Step::Event(Event::Key(k), used + 1)
            }
            Step::Incomplete => Step::Incomplete,
            _ => Step::Skip(2),
        },
    }
}

/// OSC, DCS, APC, PM and SOS strings end with BEL or `ESC \`.
fn skip_string(buf: &[u8]) -> Step {
    let mut i = 2;
    while i < buf.len() {
        if buf[i] == 0x07 {
            return Step::Skip(i + 1);
        }
        if buf[i] == ESC && buf.get(i + 1) == Some(&b'\\') {
            return Step::Skip(i + 2);
        }
        i += 1;
    }
    Step::Incomplete
}

/// `ESC O x`: cursor keys in application mode, F1–F4, keypad Enter.
fn decode_ss3(buf: &[u8]) -> Step {
    let Some(&c) = buf.get(2) else {
        return Step::Incomplete;
    };
    match letter_key(c) {
        Some(code) => Step::Event(key(code, KeyModifiers::NONE), 3),
        None if c == b'M' => Step::Event(key(KeyCode::Enter, KeyModifiers::NONE), 3),
        None => Step::Skip(3),
    }
}

/// Keys named by the final letter of `CSI 1;<mod> x` and `ESC O x`.
fn letter_key(c: u8) -> Option<KeyCode> {
    Some(match c {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'E' => KeyCode::KeypadBegin,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

fn decode_csi(buf: &[u8]) -> Step {
    // The Linux console's F1–F5: `ESC [ [ A`..`E`.
    if buf.get(2) == Some(&b'[') {
        return match buf.get(3) {
            None => Step::Incomplete,
            Some(&c @ b'A'..=b'E') => {
                Step::Event(key(KeyCode::F(c - b'A' + 1), KeyModifiers::NONE), 4)
            }
            Some(_) => Step::Skip(4),
        };
    }
    // X10 mouse: `ESC [ M` and three raw bytes.
    if buf.get(2) == Some(&b'M') {
        return if buf.len() >= 6 {
            Step::Skip(6)
        } else {
            Step::Incomplete
        };
    }
    let Some(end) = buf[2..]
        .iter()
        .position(|b| (0x40..=0x7e).contains(b))
        .map(|i| i + 2)
    else {
        return if buf.len() > MAX_CSI {
            Step::Skip(buf.len())
        } else {
            Step::Incomplete
        };
    };
    let used = end + 1;
    if buf[..used] == *PASTE_START {
        return Step::PasteStart(used);
    }
    let params = &buf[2..end];
    // Private sequences (`?`, `>`, `<`, `=`) are replies or mouse reports; the kitty
    // keyboard query's answer (`CSI ? flags u`) says the protocol can be turned on.
    if params.first().is_some_and(|b| (b'<'..=b'?').contains(b)) {
        if buf[end] == b'u' && params[0] == b'?' && params[1..].iter().all(u8::is_ascii_digit) {
            return Step::KittyReply(used);
        }
        if buf[end] == b'c' && params[0] == b'?' {
            return Step::DeviceAttributes(used);
        }
        return Step::Skip(used);
    }
    let Ok(params) = std::str::from_utf8(params) else {
        return Step::Skip(used);
    };
    if buf[end] == b't' {
        // `CSI 6 ; height ; width t`: the cell size in pixels (pi-tui asks for it).
        let mut parts = params.split(';').map(str::parse::<u32>);
        return match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(Ok(6)), Some(Ok(h)), Some(Ok(w)), None) if h > 0 && w > 0 => {
                Step::CellSize((w, h), used)
            }
            _ => Step::Skip(used),
        };
    }
    match csi_event(params, buf[end]) {
        Some(event) => Step::Event(event, used),
        None => Step::Skip(used),
    }
}

/// The parameters of a CSI split at `;`, each split at `:` (empty fields are `None`).
fn fields(params: &str) -> Vec<Vec<Option<u32>>> {
    params
        .split(';')
        .map(|f| f.split(':').map(|n| n.parse().ok()).collect())
        .collect()
}

fn field(fields: &[Vec<Option<u32>>], i: usize, j: usize) -> Option<u32> {
    fields.get(i).and_then(|f| f.get(j)).copied().flatten()
}

fn csi_event(params: &str, last: u8) -> Option<Event> {
    let f = fields(params);
    let mods = field(&f, 1, 0).unwrap_or(1);
    let kind = field(&f, 1, 1).unwrap_or(1);
    match last {
        b'u' => {
            let code = field(&f, 0, 0)?;
            let shifted = field(&f, 0, 1);
            let base = field(&f, 0, 2);
            codepoint_key(shortcut_code(code, base, mods), shifted, mods, kind)
        }
        b'~' => {
            let first = field(&f, 0, 0)?;
            if first == 27 {
                // modifyOtherKeys: CSI 27 ; <mod> ; <code> ~
                return codepoint_key(field(&f, 2, 0)?, None, mods, 1);
            }
            let code = tilde_key(first)?;
            Some(with_kind(code, modifiers(mods), kind))
        }
        b'Z' => Some(with_kind(
            KeyCode::BackTab,
            modifiers(mods) | KeyModifiers::SHIFT,
            kind,
        )),
        // A cursor position report (`CSI row;col R`), not Shift+F3 (`CSI 1;2 R`).
        b'R' if field(&f, 0, 0).is_some_and(|row| row != 1) => None,
        b'I' if params.is_empty() => Some(Event::FocusGained),
        b'O' if params.is_empty() => Some(Event::FocusLost),
        _ => Some(with_kind(letter_key(last)?, modifiers(mods), kind)),
    }
}

/// With Ctrl, Alt or Super held, a non-Latin layout's letter is read as the key at the
/// same place on the base (US) layout kitty reports, so Ctrl+С on a Russian keyboard is
/// Ctrl+C as in pi.
fn shortcut_code(code: u32, base: Option<u32>, mods: u32) -> u32 {
    let chorded =
        modifiers(mods).intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER);
    match base {
        Some(b) if chorded && code > 0x7f && b <= 0x7f => b,
        _ => code,
    }
}

/// `CSI <n> ~` keys.
fn tilde_key(n: u32) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F((n - 10) as u8),
        17..=21 => KeyCode::F((n - 11) as u8),
        23..=26 => KeyCode::F((n - 12) as u8),
        28..=29 => KeyCode::F((n - 15) as u8),
        31..=34 => KeyCode::F((n - 17) as u8),
        _ => return None,
    })
}

/// A key given as a Unicode code point (kitty CSI-u and modifyOtherKeys), with the
/// shifted code point kitty reports alongside when asked to.
fn codepoint_key(code: u32, shifted: Option<u32>, mods: u32, kind: u32) -> Option<Event> {
    let mut modifiers = modifiers(mods);
    let shift = modifiers.contains(KeyModifiers::SHIFT);
    let keycode = match code {
        13 | 57414 => KeyCode::Enter,
        9 if shift => KeyCode::BackTab,
        9 => KeyCode::Tab,
        27 => KeyCode::Esc,
        8 | 127 => KeyCode::Backspace,
        57399..=57408 => KeyCode::Char(char::from_digit(code - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57415 => KeyCode::Char('='),
        57416 => KeyCode::Char(','),
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        57427 => KeyCode::KeypadBegin,
        57376..=57398 => KeyCode::F((code - 57376 + 13) as u8),
        // Lock and modifier keys on their own, media keys: nothing the UI uses.
        57344..=57454 => return None,
        _ => {
            let c = char::from_u32(code)?;
            match shifted.and_then(char::from_u32) {
                // kitty's alternate key: the character Shift produces.
                Some(s) if shift => {
                    modifiers.remove(KeyModifiers::SHIFT);
                    KeyCode::Char(s)
                }
                // Without it, Shift+letter is still the uppercase letter.
                _ if shift && c.is_ascii_lowercase() => KeyCode::Char(c.to_ascii_uppercase()),
                _ => KeyCode::Char(c),
            }
        }
    };
    Some(with_kind(keycode, modifiers, kind))
}

fn with_kind(code: KeyCode, modifiers: KeyModifiers, kind: u32) -> Event {
    let kind = match kind {
        2 => KeyEventKind::Repeat,
        3 => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    Event::Key(KeyEvent::new_with_kind_and_state(
        code,
        modifiers,
        kind,
        KeyEventState::NONE,
    ))
}

/// The xterm modifier parameter (1 + bits: Shift 1, Alt 2, Ctrl 4, Super 8, Hyper 16,
/// Meta 32; Caps Lock and Num Lock are ignored).
fn modifiers(param: u32) -> KeyModifiers {
    let bits = param.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    for (bit, flag) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if bits & bit != 0 {
            m |= flag;
        }
    }
    m
}

#[cfg(test)]
mod tests;
