use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::InputDecoder;

const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SUPER: KeyModifiers = KeyModifiers::SUPER;

fn k(code: KeyCode, mods: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, mods))
}

fn c(ch: char, mods: KeyModifiers) -> Event {
    k(KeyCode::Char(ch), mods)
}

/// Everything `bytes` decodes to, with a flush at the end (as after the ESC timeout).
fn decode(bytes: &[u8]) -> Vec<Event> {
    let mut d = InputDecoder::new();
    let mut events = d.feed(bytes);
    events.extend(d.flush());
    events
}

#[test]
fn byte_sequences_decode_to_keys() {
    let table: &[(&[u8], Event)] = &[
        // Plain and control bytes.
        (b"a", c('a', NONE)),
        (b"A", c('A', SHIFT)),
        (b" ", c(' ', NONE)),
        ("é".as_bytes(), c('é', NONE)),
        ("日".as_bytes(), c('日', NONE)),
        ("😀".as_bytes(), c('😀', NONE)),
        (b"\r", k(KeyCode::Enter, NONE)),
        (b"\n", c('j', CTRL)),
        (b"\t", k(KeyCode::Tab, NONE)),
        (b"\x7f", k(KeyCode::Backspace, NONE)),
        (b"\x08", c('h', CTRL)),
        (b"\x03", c('c', CTRL)),
        (b"\x04", c('d', CTRL)),
        (b"\x1a", c('z', CTRL)),
        (b"\x00", c(' ', CTRL)),
        (b"\x1d", c('5', CTRL)),
        (b"\x1f", c('7', CTRL)),
        (b"\x1b", k(KeyCode::Esc, NONE)),
        // Alt as an ESC prefix.
        (b"\x1bb", c('b', ALT)),
        (b"\x1bB", c('B', ALT | SHIFT)),
        (b"\x1b\r", k(KeyCode::Enter, ALT)),
        (b"\x1b\x7f", k(KeyCode::Backspace, ALT)),
        (b"\x1b\x1d", c('5', CTRL | ALT)),
        // Cursor and editing keys, legacy encodings.
        (b"\x1b[A", k(KeyCode::Up, NONE)),
        (b"\x1b[B", k(KeyCode::Down, NONE)),
        (b"\x1b[C", k(KeyCode::Right, NONE)),
        (b"\x1b[D", k(KeyCode::Left, NONE)),
        (b"\x1bOA", k(KeyCode::Up, NONE)),
        (b"\x1bOD", k(KeyCode::Left, NONE)),
        (b"\x1b[H", k(KeyCode::Home, NONE)),
        (b"\x1b[F", k(KeyCode::End, NONE)),
        (b"\x1bOH", k(KeyCode::Home, NONE)),
        (b"\x1bOF", k(KeyCode::End, NONE)),
        (b"\x1b[1~", k(KeyCode::Home, NONE)),
        (b"\x1b[4~", k(KeyCode::End, NONE)),
        (b"\x1b[7~", k(KeyCode::Home, NONE)),
        (b"\x1b[8~", k(KeyCode::End, NONE)),
        (b"\x1b[2~", k(KeyCode::Insert, NONE)),
        (b"\x1b[3~", k(KeyCode::Delete, NONE)),
        (b"\x1b[5~", k(KeyCode::PageUp, NONE)),
        (b"\x1b[6~", k(KeyCode::PageDown, NONE)),
        (b"\x1b[Z", k(KeyCode::BackTab, SHIFT)),
        (b"\x1bOP", k(KeyCode::F(1), NONE)),
        (b"\x1b[15~", k(KeyCode::F(5), NONE)),
        (b"\x1b[24~", k(KeyCode::F(12), NONE)),
        (b"\x1b[[A", k(KeyCode::F(1), NONE)),
        (b"\x1bOM", k(KeyCode::Enter, NONE)),
        // xterm modifier parameters.
        (b"\x1b[1;3D", k(KeyCode::Left, ALT)),
        (b"\x1b[1;5C", k(KeyCode::Right, CTRL)),
        (b"\x1b[1;3A", k(KeyCode::Up, ALT)),
        (b"\x1b[1;2H", k(KeyCode::Home, SHIFT)),
        (b"\x1b[3;3~", k(KeyCode::Delete, ALT)),
        (b"\x1b[5;5~", k(KeyCode::PageUp, CTRL)),
        // xterm modifyOtherKeys (tmux with extended-keys, xterm).
        (b"\x1b[27;2;13~", k(KeyCode::Enter, SHIFT)),
        (b"\x1b[27;3;13~", k(KeyCode::Enter, ALT)),
        (b"\x1b[27;5;13~", k(KeyCode::Enter, CTRL)),
        (b"\x1b[27;2;9~", k(KeyCode::BackTab, SHIFT)),
        (b"\x1b[27;5;9~", k(KeyCode::Tab, CTRL)),
        (b"\x1b[27;5;127~", k(KeyCode::Backspace, CTRL)),
        (b"\x1b[27;3;127~", k(KeyCode::Backspace, ALT)),
        (b"\x1b[27;5;97~", c('a', CTRL)),
        (b"\x1b[27;6;80~", c('P', CTRL | SHIFT)),
        (b"\x1b[27;6;112~", c('P', CTRL | SHIFT)),
        (b"\x1b[27;5;45~", c('-', CTRL)),
        (b"\x1b[27;7;93~", c(']', CTRL | ALT)),
        (b"\x1b[27;5;32~", c(' ', CTRL)),
        (b"\x1b[27;2;27~", k(KeyCode::Esc, SHIFT)),
        // kitty keyboard protocol / CSI u.
        (b"\x1b[13u", k(KeyCode::Enter, NONE)),
        (b"\x1b[13;2u", k(KeyCode::Enter, SHIFT)),
        (b"\x1b[13;3u", k(KeyCode::Enter, ALT)),
        (b"\x1b[57414;2u", k(KeyCode::Enter, SHIFT)),
        (b"\x1b[27u", k(KeyCode::Esc, NONE)),
        (b"\x1b[9;2u", k(KeyCode::BackTab, SHIFT)),
        (b"\x1b[127;5u", k(KeyCode::Backspace, CTRL)),
        (b"\x1b[99;5u", c('c', CTRL)),
        (b"\x1b[112;6u", c('P', CTRL | SHIFT)),
        (b"\x1b[112:80;6u", c('P', CTRL)),
        (b"\x1b[108:76;2u", c('L', NONE)),
        (b"\x1b[49:33;2u", c('!', NONE)),
        (b"\x1b[97;9u", c('a', SUPER)),
        (b"\x1b[1089::99;5u", c('c', CTRL)),
        (b"\x1b[1089::99u", c('с', NONE)),
        (b"\x1b[1;2R", k(KeyCode::F(3), SHIFT)),
        (b"\x1b[57399u", c('0', NONE)),
        (b"\x1b[57417;5u", k(KeyCode::Left, CTRL)),
        (b"\x1b[57376u", k(KeyCode::F(13), NONE)),
        // Caps Lock and Num Lock do not change the key.
        (b"\x1b[97;69u", c('a', CTRL)),
        (b"\x1b[97;129u", c('a', NONE)),
        // Focus reports.
        (b"\x1b[I", Event::FocusGained),
        (b"\x1b[O", Event::FocusLost),
    ];
    let mut failures = Vec::new();
    for (bytes, want) in table {
        let got = decode(bytes);
        if got != vec![want.clone()] {
            failures.push(format!(
                "{:?}: want {want:?}, got {got:?}",
                bytes.escape_ascii().to_string()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_kitty_query_answer_is_noted_and_keys_around_it_are_kept() {
    let mut decoder = InputDecoder::new();
    assert!(!decoder.take_kitty_reply());
    // Typed before and after the answer, which comes split across two reads.
    let mut events = decoder.feed(b"ab\x1b[?");
    assert!(!decoder.take_kitty_reply());
    events.extend(decoder.feed(b"0uc"));
    assert_eq!(events, vec![c('a', NONE), c('b', NONE), c('c', NONE)]);
    assert!(decoder.take_kitty_reply());
    assert!(!decoder.take_kitty_reply(), "taken once");
    // Other private replies are not the answer; device attributes are noted apart.
    assert!(!decoder.take_device_attributes());
    let events = decoder.feed(b"x\x1b[?62;22c\x1b[?1;2uy");
    assert_eq!(events, vec![c('x', NONE), c('y', NONE)]);
    assert!(!decoder.take_kitty_reply());
    assert!(decoder.take_device_attributes());
    assert!(!decoder.take_device_attributes(), "taken once");
}

#[test]
fn kitty_release_and_repeat_are_marked() {
    let mut d = InputDecoder::new();
    d.set_key_releases(true);
    let release = d.feed(b"\x1b[13;2:3u");
    let Some(Event::Key(key)) = release.first() else {
        panic!("no key: {release:?}");
    };
    assert_eq!(
        (key.code, key.modifiers, key.kind),
        (KeyCode::Enter, SHIFT, KeyEventKind::Release)
    );
    let repeat = decode(b"\x1b[1;1:2A");
    let Some(Event::Key(key)) = repeat.first() else {
        panic!("no key: {repeat:?}");
    };
    assert_eq!((key.code, key.kind), (KeyCode::Up, KeyEventKind::Repeat));
}

#[test]
fn replies_mouse_and_strings_are_skipped() {
    let noise: &[&[u8]] = &[
        b"\x1b[?1u",              // kitty flags reply
        b"\x1b[?62;22c",          // device attributes
        b"\x1b[12;40R",           // cursor position
        b"\x1b[<0;10;5M",         // SGR mouse
        b"\x1b[M abc",            // X10 mouse (6 bytes) ...
        b"\x1b]11;rgb:0/0/0\x07", // OSC colour reply
        b"\x1bP>|xterm(1)\x1b\\", // DCS version reply
        b"\x1b_Gi=1;OK\x1b\\",    // APC kitty graphics reply
        b"\x1b[201~",             // stray paste end
        b"\x1b[99x",              // unknown
    ];
    for bytes in noise {
        let got = decode(bytes);
        // ... whose 6th byte is X10's last; "bc" are typed keys after it.
        let want = if bytes.starts_with(b"\x1b[M") {
            vec![c('c', NONE)]
        } else {
            vec![]
        };
        assert_eq!(got, want, "{}", bytes.escape_ascii());
    }
}

#[test]
fn several_keys_in_one_read() {
    let got = decode(b"hi\x1b[27;2;13~\x1b[Ax\x1b[13;2u\x03");
    assert_eq!(
        got,
        vec![
            c('h', NONE),
            c('i', NONE),
            k(KeyCode::Enter, SHIFT),
            k(KeyCode::Up, NONE),
            c('x', NONE),
            k(KeyCode::Enter, SHIFT),
            c('c', CTRL),
        ]
    );
}

#[test]
fn a_sequence_split_across_reads_waits_for_its_rest() {
    let mut d = InputDecoder::new();
    assert_eq!(d.feed(b"\x1b"), vec![]);
    assert!(d.has_pending());
    assert_eq!(d.feed(b"[27;2"), vec![]);
    assert_eq!(d.feed(b";13~"), vec![k(KeyCode::Enter, SHIFT)]);
    assert!(!d.has_pending());
    // Half a UTF-8 character.
    let bytes = "é".as_bytes();
    assert_eq!(d.feed(&bytes[..1]), vec![]);
    assert_eq!(d.feed(&bytes[1..]), vec![c('é', NONE)]);
}

#[test]
fn a_lone_escape_is_the_escape_key_only_after_the_timeout() {
    let mut d = InputDecoder::new();
    assert_eq!(
        d.feed(b"\x1b"),
        vec![],
        "could still be the start of a sequence"
    );
    assert_eq!(d.flush(), vec![k(KeyCode::Esc, NONE)]);
    assert!(!d.has_pending());
    // Escape pressed twice arrives as two keys, not Alt+Escape.
    assert_eq!(
        decode(b"\x1b\x1b"),
        vec![k(KeyCode::Esc, NONE), k(KeyCode::Esc, NONE)]
    );
    // An unfinished CSI at the timeout: Escape, then the rest as typed keys.
    assert_eq!(decode(b"\x1b["), vec![k(KeyCode::Esc, NONE), c('[', NONE)]);
}

#[test]
fn bracketed_paste_is_one_event_even_across_reads() {
    assert_eq!(
        decode(b"\x1b[200~line 1\nline \x1b[A 2\x1b[201~x"),
        vec![Event::Paste("line 1\nline \x1b[A 2".into()), c('x', NONE)]
    );
    let mut d = InputDecoder::new();
    assert_eq!(d.feed(b"a\x1b[200~one\r"), vec![c('a', NONE)]);
    assert!(!d.has_pending(), "a paste in progress does not time out");
    assert_eq!(d.flush(), vec![]);
    assert_eq!(d.feed(b"two\x1b[20"), vec![]);
    assert_eq!(d.feed(b"1~"), vec![Event::Paste("one\rtwo".into())]);
}

#[test]
fn with_the_kitty_protocol_on_legacy_shift_enter_mappings_are_shift_enter() {
    let mut d = InputDecoder::new();
    d.set_kitty(true);
    assert_eq!(d.feed(b"\x1b\r"), vec![k(KeyCode::Enter, SHIFT)]);
    assert_eq!(d.feed(b"\n"), vec![k(KeyCode::Enter, SHIFT)]);
    assert_eq!(d.feed(b"\r"), vec![k(KeyCode::Enter, NONE)]);
}

/// With kitty flag 2 (report event types, which pi-rs pushes as pi does) the terminal
/// follows every key press with a release; none of them reaches the UI, so a release
/// never types a character or triggers an action a second time.
#[test]
fn kitty_key_releases_are_dropped() {
    let releases: &[&[u8]] = &[
        b"\x1b[97;1:3u",       // a
        b"\x1b[65;2:3u",       // Shift+a
        b"\x1b[97:65;2:3u",    // Shift+a with the alternate key
        b"\x1b[99;5:3u",       // Ctrl+C
        b"\x1b[100;5:3u",      // Ctrl+D
        b"\x1b[27;1:3u",       // Escape
        b"\x1b[13;1:3u",       // Enter
        b"\x1b[13;3:3u",       // Alt+Enter
        b"\x1b[9;2:3u",        // Shift+Tab
        b"\x1b[127;1:3u",      // Backspace
        b"\x1b[1;1:3A",        // Up
        b"\x1b[1;3:3A",        // Alt+Up
        b"\x1b[1;1:3H",        // Home
        b"\x1b[3;1:3~",        // Delete
        b"\x1b[6;1:3~",        // Page Down
        b"\x1b[15;1:3~",       // F5
        b"\x1b[57399;1:3u",    // keypad 0
        b"\x1b[1080;5:3u",     // Ctrl+и (Cyrillic, no base key)
        b"\x1b[1089::99;5:3u", // Ctrl+с with base key c
    ];
    for bytes in releases {
        assert_eq!(
            decode(bytes),
            vec![],
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    // What a kitty terminal sends for typing "ab", Ctrl+C and Escape with flags 7: the
    // presses alone come out, in order, also when split across reads.
    let typed = b"a\x1b[97;1:3ub\x1b[98;1:3u\x1b[99;5u\x1b[99;5:3u\x1b[27u\x1b[27;1:3u";
    let want = vec![
        c('a', NONE),
        c('b', NONE),
        c('c', CTRL),
        k(KeyCode::Esc, NONE),
    ];
    assert_eq!(decode(typed), want);
    for split in 1..typed.len() {
        let mut d = InputDecoder::new();
        let mut got = d.feed(&typed[..split]);
        got.extend(d.feed(&typed[split..]));
        got.extend(d.flush());
        assert_eq!(got, want, "split at {split}");
    }
    // Repeats are presses (a held key types again), as in pi.
    let repeat = decode(b"\x1b[1;1:2B\x1b[1;1:3B");
    assert_eq!(repeat.len(), 1, "{repeat:?}");
    let Some(Event::Key(key)) = repeat.first() else {
        panic!("no key: {repeat:?}");
    };
    assert_eq!((key.code, key.kind), (KeyCode::Down, KeyEventKind::Repeat));
}
