//! Moving the cursor: by grapheme, word, line, screen row (with a sticky column) and
//! page, through the prompt history, and to the next occurrence of a character.

use super::layout::{VisualLine, is_last_row, row_of, segments};
use super::{Editor, Jump, LastAction};
use crate::modes::interactive::text::str_width;

impl Editor {
    pub(super) fn move_line_start(&mut self) {
        self.last_action = LastAction::None;
        self.set_col(0);
    }

    pub(super) fn move_line_end(&mut self) {
        self.last_action = LastAction::None;
        self.set_col(self.current().len());
    }

    pub(super) fn move_word_backward(&mut self) {
        self.last_action = LastAction::None;
        if self.cursor_col == 0 {
            if self.cursor_line > 0 {
                self.cursor_line -= 1;
                self.set_col(self.current().len());
            }
            return;
        }
        let col = self.word_start_before(self.cursor_col);
        self.set_col(col);
    }

    pub(super) fn move_word_forward(&mut self) {
        self.last_action = LastAction::None;
        if self.cursor_col >= self.current().len() {
            if self.cursor_line + 1 < self.lines.len() {
                self.cursor_line += 1;
                self.set_col(0);
            }
            return;
        }
        let col = self.word_end_after(self.cursor_col);
        self.set_col(col);
    }

    pub(super) fn move_right(&mut self) {
        self.last_action = LastAction::None;
        let len = self.current().len();
        if self.cursor_col < len {
            let after = &self.current()[self.cursor_col..];
            let step = self.segs(after).first().map_or(1, |s| s.end);
            self.set_col(self.cursor_col + step);
        } else if self.cursor_line + 1 < self.lines.len() {
            self.cursor_line += 1;
            self.set_col(0);
        }
    }

    pub(super) fn move_left(&mut self) {
        self.last_action = LastAction::None;
        if self.cursor_col > 0 {
            let before = &self.current()[..self.cursor_col];
            let start = self.segs(before).last().map_or(0, |s| s.start);
            self.set_col(start);
        } else if self.cursor_line > 0 {
            self.cursor_line -= 1;
            self.set_col(self.current().len());
        }
    }

    pub(super) fn up(&mut self) {
        let rows = self.rows();
        let row = row_of(&rows, self.cursor_line, self.cursor_col);
        if self.is_empty() || (self.history_index.is_some() && row == 0) {
            self.navigate_history(true);
        } else if row == 0 {
            self.move_line_start();
        } else {
            self.move_to_row(&rows, row, row - 1);
        }
    }

    pub(super) fn down(&mut self) {
        let rows = self.rows();
        let row = row_of(&rows, self.cursor_line, self.cursor_col);
        let last = rows.len().saturating_sub(1);
        if self.history_index.is_some() && row == last {
            self.navigate_history(false);
        } else if row == last {
            self.move_line_end();
        } else {
            self.move_to_row(&rows, row, row + 1);
        }
    }

    pub(super) fn page(&mut self, down: bool) {
        self.last_action = LastAction::None;
        let rows = self.rows();
        let row = row_of(&rows, self.cursor_line, self.cursor_col);
        let target = if down {
            (row + self.max_rows).min(rows.len().saturating_sub(1))
        } else {
            row.saturating_sub(self.max_rows)
        };
        self.move_to_row(&rows, row, target);
    }

    /// Moves the cursor to another screen row, keeping its display column (sticky
    /// through shorter rows) and never landing inside a paste marker.
    pub(super) fn move_to_row(&mut self, rows: &[VisualLine], from: usize, to: usize) {
        self.last_action = LastAction::None;
        let (Some(src), Some(dst)) = (rows.get(from), rows.get(to)) else {
            return;
        };
        let line = &self.lines[src.line];
        let current_col = str_width(&line[src.start..self.cursor_col.clamp(src.start, src.end)]);
        let src_max = row_max_col(&self.lines, rows, from, &self.valid_paste());
        let dst_max = row_max_col(&self.lines, rows, to, &self.valid_paste());
        let col = match self.preferred_col {
            Some(preferred) if current_col >= src_max => {
                if dst_max < preferred {
                    dst_max
                } else {
                    self.preferred_col = None;
                    preferred
                }
            }
            _ if dst_max < current_col => {
                self.preferred_col = Some(current_col);
                dst_max
            }
            _ => {
                self.preferred_col = None;
                current_col
            }
        };
        let target_line = &self.lines[dst.line];
        let segs = self.segs(target_line);
        let mut byte = dst.start;
        let mut width = 0;
        for seg in segs
            .iter()
            .filter(|s| s.start >= dst.start && s.start < dst.end)
        {
            let w = str_width(&target_line[seg.clone()]);
            if width + w > col {
                break;
            }
            width += w;
            byte = seg.end;
        }
        // A marker that began on an earlier row: land on its start, or when moving
        // down, skip past the rest of it (otherwise Down would never get past it).
        if let Some(seg) = segs.iter().find(|s| s.start < byte && byte < s.end) {
            if to > from
                && let Some(next) = (to + 1..rows.len())
                    .find(|i| rows[*i].line != dst.line || rows[*i].start >= seg.end)
            {
                self.move_to_row(rows, from, next);
                return;
            }
            byte = seg.start;
        }
        self.cursor_line = dst.line;
        self.cursor_col = byte.min(dst.end).min(target_line.len());
    }

    pub(super) fn navigate_history(&mut self, older: bool) {
        self.last_action = LastAction::None;
        if self.history.len() == 0 {
            return;
        }
        let next = match (self.history_index, older) {
            (None, true) => Some(0),
            (None, false) => return,
            (Some(i), true) if i + 1 < self.history.len() => Some(i + 1),
            (Some(_), true) => return,
            (Some(0), false) => None,
            (Some(i), false) => Some(i - 1),
        };
        if self.history_index.is_none() {
            self.push_undo();
        }
        self.history_index = next;
        let text = next
            .and_then(|i| self.history.get(i))
            .unwrap_or("")
            .to_string();
        self.replace_text(&text);
    }

    pub(super) fn jump_to(&mut self, c: char, direction: Jump) {
        self.last_action = LastAction::None;
        let mut buf = [0u8; 4];
        let needle: &str = c.encode_utf8(&mut buf);
        match direction {
            Jump::Forward => {
                for line_idx in self.cursor_line..self.lines.len() {
                    let line = &self.lines[line_idx];
                    let from = if line_idx == self.cursor_line {
                        next_char_boundary(line, self.cursor_col)
                    } else {
                        0
                    };
                    if let Some(pos) = line.get(from..).and_then(|s| s.find(needle)) {
                        self.cursor_line = line_idx;
                        self.set_col(from + pos);
                        return;
                    }
                }
            }
            Jump::Backward => {
                for line_idx in (0..=self.cursor_line).rev() {
                    let line = &self.lines[line_idx];
                    let until = if line_idx == self.cursor_line {
                        self.cursor_col
                    } else {
                        line.len()
                    };
                    if let Some(pos) = line[..until].rfind(needle) {
                        self.cursor_line = line_idx;
                        self.set_col(pos);
                        return;
                    }
                }
            }
        }
    }
}

/// The rightmost display column the cursor may take on a row: the end for a line's
/// last row, before the last segment otherwise (that spot belongs to the next row).
fn row_max_col(
    lines: &[String],
    rows: &[VisualLine],
    i: usize,
    valid: &dyn Fn(u32) -> bool,
) -> usize {
    let row = &rows[i];
    let text = &lines[row.line][row.start..row.end];
    let full = str_width(text);
    if is_last_row(rows, i) {
        return full;
    }
    let last = segments(text, valid)
        .last()
        .map_or(0, |s| str_width(&text[s.clone()]));
    full.saturating_sub(last)
}

fn next_char_boundary(s: &str, i: usize) -> usize {
    s[i.min(s.len())..]
        .chars()
        .next()
        .map_or(s.len(), |c| i + c.len_utf8())
}
