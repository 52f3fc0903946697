//! Deleting text: characters, words and line parts (kills go to the kill ring), and
//! yanking them back.

use super::layout::{is_marker, is_punct, is_space};
use super::{Editor, LastAction};

impl Editor {
    pub(super) fn backspace(&mut self) {
        self.history_index = None;
        self.last_action = LastAction::None;
        if self.cursor_col > 0 {
            self.push_undo();
            let before = &self.current()[..self.cursor_col];
            let start = self.segs(before).last().map_or(0, |s| s.start);
            self.lines[self.cursor_line].replace_range(start..self.cursor_col, "");
            self.set_col(start);
        } else if self.cursor_line > 0 {
            self.push_undo();
            self.join_with_previous();
        }
        self.after_delete();
    }

    pub(super) fn delete_forward(&mut self) {
        self.history_index = None;
        self.last_action = LastAction::None;
        let len = self.current().len();
        if self.cursor_col < len {
            self.push_undo();
            let after = &self.current()[self.cursor_col..];
            let seg_len = self.segs(after).first().map_or(1, |s| s.end);
            let end = self.cursor_col + seg_len;
            self.lines[self.cursor_line].replace_range(self.cursor_col..end, "");
        } else if self.cursor_line + 1 < self.lines.len() {
            self.push_undo();
            let next = self.lines.remove(self.cursor_line + 1);
            self.lines[self.cursor_line].push_str(&next);
        }
        self.after_delete();
    }

    pub(super) fn join_with_previous(&mut self) {
        let current = self.lines.remove(self.cursor_line);
        self.cursor_line -= 1;
        let prev_len = self.lines[self.cursor_line].len();
        self.lines[self.cursor_line].push_str(&current);
        self.set_col(prev_len);
    }

    pub(super) fn kill_to_line_start(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == LastAction::Kill;
        if self.cursor_col > 0 {
            self.push_undo();
            let killed: String = self.lines[self.cursor_line]
                .drain(..self.cursor_col)
                .collect();
            self.kill_ring.push(&killed, true, accumulate);
            self.set_col(0);
        } else if self.cursor_line > 0 {
            self.push_undo();
            self.kill_ring.push("\n", true, accumulate);
            self.join_with_previous();
        }
        self.last_action = LastAction::Kill;
    }

    pub(super) fn kill_to_line_end(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == LastAction::Kill;
        if self.cursor_col < self.current().len() {
            self.push_undo();
            let killed: String = self.lines[self.cursor_line]
                .drain(self.cursor_col..)
                .collect();
            self.kill_ring.push(&killed, false, accumulate);
        } else if self.cursor_line + 1 < self.lines.len() {
            self.push_undo();
            self.kill_ring.push("\n", false, accumulate);
            let next = self.lines.remove(self.cursor_line + 1);
            self.lines[self.cursor_line].push_str(&next);
        }
        self.last_action = LastAction::Kill;
    }

    pub(super) fn kill_word_backward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == LastAction::Kill;
        if self.cursor_col == 0 {
            if self.cursor_line > 0 {
                self.push_undo();
                self.kill_ring.push("\n", true, accumulate);
                self.join_with_previous();
            }
        } else {
            self.push_undo();
            let end = self.cursor_col;
            let start = self.word_start_before(end);
            let killed: String = self.lines[self.cursor_line].drain(start..end).collect();
            self.kill_ring.push(&killed, true, accumulate);
            self.set_col(start);
        }
        self.last_action = LastAction::Kill;
    }

    pub(super) fn kill_word_forward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == LastAction::Kill;
        if self.cursor_col >= self.current().len() {
            if self.cursor_line + 1 < self.lines.len() {
                self.push_undo();
                self.kill_ring.push("\n", false, accumulate);
                let next = self.lines.remove(self.cursor_line + 1);
                self.lines[self.cursor_line].push_str(&next);
            }
        } else {
            self.push_undo();
            let start = self.cursor_col;
            let end = self.word_end_after(start);
            let killed: String = self.lines[self.cursor_line].drain(start..end).collect();
            self.kill_ring.push(&killed, false, accumulate);
        }
        self.last_action = LastAction::Kill;
    }

    pub(super) fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        self.push_undo();
        self.history_index = None;
        self.insert_raw(&text);
        self.last_action = LastAction::Yank;
    }

    /// Replaces the text just yanked with the previous kill-ring entry.
    pub(super) fn yank_pop(&mut self) {
        if self.last_action != LastAction::Yank || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        if let Some(previous) = self.kill_ring.peek().map(str::to_string) {
            self.delete_before_cursor(&previous);
        }
        self.kill_ring.rotate();
        if let Some(text) = self.kill_ring.peek().map(str::to_string) {
            self.insert_raw(&text);
        }
        self.last_action = LastAction::Yank;
    }

    /// Removes `text`, which ends at the cursor (it was just inserted).
    pub(super) fn delete_before_cursor(&mut self, text: &str) {
        let parts: Vec<&str> = text.split('\n').collect();
        if parts.len() == 1 {
            let start = self.cursor_col.saturating_sub(text.len());
            self.lines[self.cursor_line].replace_range(start..self.cursor_col, "");
            self.set_col(start);
            return;
        }
        let first_len = parts[0].len();
        let start_line = self.cursor_line.saturating_sub(parts.len() - 1);
        let start_col = self.lines[start_line].len().saturating_sub(first_len);
        let after = self.lines[self.cursor_line][self.cursor_col..].to_string();
        let merged = format!("{}{after}", &self.lines[start_line][..start_col]);
        self.lines.splice(start_line..=self.cursor_line, [merged]);
        self.cursor_line = start_line;
        self.set_col(start_col);
    }

    /// Start of the word before `end`: skip whitespace, then a run of punctuation or of
    /// word characters (a paste marker is one word).
    pub(super) fn word_start_before(&self, end: usize) -> usize {
        let line = self.current();
        let segs = self.segs(&line[..end]);
        let text = |i: usize| &line[segs[i].clone()];
        let mut i = segs.len();
        while i > 0 && !is_marker(text(i - 1)) && is_space(text(i - 1)) {
            i -= 1;
        }
        if i > 0 {
            let last = text(i - 1);
            if is_marker(last) {
                i -= 1;
            } else if is_punct(last) {
                while i > 0 && is_punct(text(i - 1)) && !is_marker(text(i - 1)) {
                    i -= 1;
                }
            } else {
                while i > 0
                    && !is_space(text(i - 1))
                    && !is_punct(text(i - 1))
                    && !is_marker(text(i - 1))
                {
                    i -= 1;
                }
            }
        }
        segs.get(i).map_or(end, |s| s.start)
    }

    /// End of the word after `start` (mirror of [`Self::word_start_before`]).
    pub(super) fn word_end_after(&self, start: usize) -> usize {
        let line = self.current();
        let rest = &line[start..];
        let segs = self.segs(rest);
        let text = |i: usize| &rest[segs[i].clone()];
        let mut i = 0;
        while i < segs.len() && !is_marker(text(i)) && is_space(text(i)) {
            i += 1;
        }
        if i < segs.len() {
            if is_marker(text(i)) {
                i += 1;
            } else if is_punct(text(i)) {
                while i < segs.len() && is_punct(text(i)) && !is_marker(text(i)) {
                    i += 1;
                }
            } else {
                while i < segs.len()
                    && !is_space(text(i))
                    && !is_punct(text(i))
                    && !is_marker(text(i))
                {
                    i += 1;
                }
            }
        }
        start + segs.get(i).map_or(rest.len(), |s| s.start)
    }
}
