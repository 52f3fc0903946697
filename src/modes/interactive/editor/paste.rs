//! Bracketed paste: normalising pasted text and folding large pastes into markers.

use std::sync::LazyLock;

use regex::Regex;

use super::layout::MARKER;
use super::{Editor, LastAction, normalize};

/// Pastes with more lines than this become a marker.
const MAX_INLINE_LINES: usize = 10;
/// Pastes with more characters than this become a marker.
const MAX_INLINE_CHARS: usize = 1000;

/// `ESC [ <code> ; 5 u`: tmux (extended-keys csi-u) re-encodes control bytes inside a
/// paste this way; they are turned back into the bytes.
static CSI_U_CTRL: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\x1b\[(\d+);5u").ok());

fn decode_csi_u(text: &str) -> String {
    let Some(re) = CSI_U_CTRL.as_ref() else {
        return text.to_string();
    };
    re.replace_all(text, |caps: &regex::Captures<'_>| {
        let code: u32 = caps[1].parse().unwrap_or(0);
        let ctrl = match code {
            97..=122 => char::from_u32(code - 96),
            65..=90 => char::from_u32(code - 64),
            _ => None,
        };
        ctrl.map_or_else(|| caps[0].to_string(), |c| c.to_string())
    })
    .into_owned()
}

impl Editor {
    /// A bracketed paste (crossterm's `Event::Paste`). Inserted as one undo step;
    /// control characters are dropped, and a paste of more than 10 lines or 1000
    /// characters is shown as `[paste #N +L lines]` / `[paste #N C chars]`, which moves
    /// and deletes as a unit and is expanded on submit.
    pub fn handle_paste(&mut self, pasted: &str) {
        self.popup = None;
        self.history_index = None;
        self.last_action = LastAction::None;
        self.push_undo();
        let clean: String = normalize(&decode_csi_u(pasted))
            .chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .collect();
        if clean.is_empty() {
            return;
        }
        // A dropped file path right after a word gets a space in front.
        let mut text = clean;
        if text.starts_with(['/', '~', '.'])
            && self.current()[..self.cursor_col]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            text.insert(0, ' ');
        }
        let line_count = text.split('\n').count();
        let char_count = text.chars().count();
        if line_count > MAX_INLINE_LINES || char_count > MAX_INLINE_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            let marker = if line_count > MAX_INLINE_LINES {
                format!("[paste #{id} +{line_count} lines]")
            } else {
                format!("[paste #{id} {char_count} chars]")
            };
            self.pastes.insert(id, text);
            self.insert_raw(&marker);
        } else {
            self.insert_raw(&text);
        }
    }

    /// Replaces markers of known pastes with their content.
    pub(super) fn expand_markers(&self, text: &str) -> String {
        if self.pastes.is_empty() {
            return text.to_string();
        }
        let Some(re) = MARKER.as_ref() else {
            return text.to_string();
        };
        re.replace_all(text, |caps: &regex::Captures<'_>| {
            caps[1]
                .parse::<u32>()
                .ok()
                .and_then(|id| self.pastes.get(&id))
                .cloned()
                .unwrap_or_else(|| caps[0].to_string())
        })
        .into_owned()
    }
}
