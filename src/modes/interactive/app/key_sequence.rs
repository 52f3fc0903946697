//! Keys as the bytes a terminal sends for them, for extensions that read input the way
//! pi-tui does (custom components, editors, terminal input listeners).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as the bytes a terminal sends for it (what pi-tui's `matchesKey` reads); `None`
/// for keys with no such encoding.
pub fn key_sequence(key: &KeyEvent) -> Option<String> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let base = match key.code {
        KeyCode::Char(c) if ctrl && c.is_ascii_alphabetic() => {
            ((c.to_ascii_lowercase() as u8 - b'a' + 1) as char).to_string()
        }
        KeyCode::Char(c) => c.to_string(),
        KeyCode::Enter => "\r".to_string(),
        KeyCode::Tab => "\t".to_string(),
        KeyCode::BackTab => "\x1b[Z".to_string(),
        KeyCode::Backspace => "\x7f".to_string(),
        KeyCode::Esc => "\x1b".to_string(),
        KeyCode::Up if shift => "\x1b[1;2A".to_string(),
        KeyCode::Down if shift => "\x1b[1;2B".to_string(),
        KeyCode::Up => "\x1b[A".to_string(),
        KeyCode::Down => "\x1b[B".to_string(),
        KeyCode::Right => "\x1b[C".to_string(),
        KeyCode::Left => "\x1b[D".to_string(),
        KeyCode::Home => "\x1b[H".to_string(),
        KeyCode::End => "\x1b[F".to_string(),
        KeyCode::Delete => "\x1b[3~".to_string(),
        KeyCode::PageUp => "\x1b[5~".to_string(),
        KeyCode::PageDown => "\x1b[6~".to_string(),
        _ => return None,
    };
    Some(if alt { format!("\x1b{base}") } else { base })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_terminal_sequences() {
        let key = |code, modifiers| KeyEvent::new(code, modifiers);
        assert_eq!(
            key_sequence(&key(KeyCode::Up, KeyModifiers::NONE)).as_deref(),
            Some("\x1b[A")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)).as_deref(),
            Some("\x03")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Esc, KeyModifiers::NONE)).as_deref(),
            Some("\x1b")
        );
        assert_eq!(
            key_sequence(&key(KeyCode::Char('x'), KeyModifiers::ALT)).as_deref(),
            Some("\x1bx")
        );
        assert_eq!(key_sequence(&key(KeyCode::F(5), KeyModifiers::NONE)), None);
    }
}
