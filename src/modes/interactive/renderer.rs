//! The inline renderer: finished history goes into the terminal's own scrollback (so
//! native scrolling, selection and copy keep working) and only a live region at the bottom
//! (streaming message, queued messages, editor, footer) is redrawn.
//!
//! Every frame is one synchronized update (DEC mode 2026), so the terminal never shows a
//! half-drawn frame. Within a frame: move to the first row of the live region, print the
//! new history lines there (pushing older rows up into scrollback), then print the live
//! region and clear whatever the previous, possibly taller, live region left below.
//! When only the live region changed, only the rows from the first changed one down are
//! rewritten. A resize re-prints everything at the new width (like pi), because terminals
//! disagree on how they reflow old rows and a guessed position would duplicate or lose lines.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use ratatui::text::Line;

use super::ansi::encode_line;

const SYNC_BEGIN: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
const HIDE_CURSOR: &str = "\x1b[?25l";
const SHOW_CURSOR: &str = "\x1b[?25h";
const CLEAR_LINE: &str = "\x1b[2K";
const CLEAR_BELOW: &str = "\x1b[J";
/// OSC 9;4 state 3: an indeterminate progress indicator (the tab shows "busy").
pub const PROGRESS_ACTIVE: &str = "\x1b]9;4;3\x07";
/// OSC 9;4 state 0: no progress.
pub const PROGRESS_CLEAR: &str = "\x1b]9;4;0;\x07";
/// How often the busy indicator is sent again while it is on (terminals drop it after
/// a while otherwise), as pi's terminal does.
pub const PROGRESS_KEEPALIVE: Duration = Duration::from_secs(1);

/// One frame to draw.
pub struct Frame<'a> {
    /// History lines finished since the last frame, to be written into scrollback.
    pub new_history: &'a [Line<'static>],
    /// The live region, top to bottom.
    pub live: &'a [Line<'static>],
    /// Where the hardware cursor goes, as (row, column) within the live region.
    pub cursor: Option<(usize, usize)>,
    /// Show the hardware cursor (otherwise it is positioned for IMEs but hidden).
    pub show_cursor: bool,
}

/// Writes rows top-down starting at the current row, then clears below.
fn write_rows(out: &mut String, rows: &[String]) {
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        out.push_str(CLEAR_LINE);
        out.push_str(row);
    }
    if rows.is_empty() {
        out.push_str(CLEAR_LINE);
    }
    out.push_str(CLEAR_BELOW);
}

/// What [`InlineRenderer::draw`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Drawn {
    /// The frame is on the screen (or nothing had changed).
    Done,
    /// Nothing was written: the frame would leave blank rows or stale copies in the
    /// scrollback; the caller draws everything with [`InlineRenderer::redraw_all`].
    NeedsFullRedraw,
}

/// Tracks what is on screen between frames.
#[derive(Debug)]
pub struct InlineRenderer {
    width: u16,
    height: u16,
    /// Encoded lines of the live region as last drawn, all of them (also the rows above
    /// the screen when it is taller than the screen).
    live: Vec<String>,
    /// Row of the cursor within the visible part of the live region after the last frame.
    cursor_row: usize,
    /// Nothing drawn yet: the cursor is where the shell left it.
    pristine: bool,
    /// Rows of history written above the live region since the first frame (or since the
    /// last full wipe): while they and the live region fit on the screen, all of it is
    /// still there and can be redrawn without touching what the shell printed before.
    history_rows: usize,
    /// The size changed since then: the terminal may have reflowed the rows.
    resized: bool,
    /// The last live region filled the whole screen (history pushed off it).
    live_filled: bool,
    /// Rows at the top of the last live region that did not fit on the screen.
    live_skipped: usize,
    /// Those rows are in the scrollback, in order, right above the screen: a live region
    /// that grew past the screen scrolled them there (as pi appends rows), so they can
    /// become history without being printed again.
    skipped_in_scrollback: bool,
    /// The terminal's progress indicator (`terminal.showTerminalProgress`).
    progress: Progress,
}

/// OSC 9;4 progress: on while the agent or a compaction runs, sent again every second.
#[derive(Debug, Default)]
struct Progress {
    /// When the busy indicator was last sent; `None` while it is off.
    active_since_write: Option<Instant>,
    /// Sequences still to write.
    pending: String,
}

impl InlineRenderer {
    pub fn new(width: u16, height: u16) -> Self {
        Self {
            width: width.max(1),
            height: height.max(1),
            live: Vec::new(),
            cursor_row: 0,
            pristine: true,
            history_rows: 0,
            resized: false,
            live_filled: false,
            live_skipped: 0,
            skipped_in_scrollback: true,
            progress: Progress::default(),
        }
    }

    /// Turns the terminal's progress indicator on (busy) or off. The sequence is written
    /// by the next [`Self::write_progress`]; while on, that repeats it every second.
    pub fn set_progress(&mut self, active: bool, now: Instant) {
        if active {
            self.progress.pending.push_str(PROGRESS_ACTIVE);
            self.progress.active_since_write = Some(now);
        } else {
            self.progress.active_since_write = None;
            self.progress.pending.push_str(PROGRESS_CLEAR);
        }
    }

    /// Whether the progress indicator is on.
    pub fn progress_active(&self) -> bool {
        self.progress.active_since_write.is_some()
    }

    /// When the busy indicator is next due again (the event loop wakes then).
    pub fn progress_due(&self) -> Option<Instant> {
        self.progress
            .active_since_write
            .map(|last| last + PROGRESS_KEEPALIVE)
    }

    /// Writes waiting progress sequences, and the busy one again when a second has
    /// passed since it was last sent.
    pub fn write_progress(&mut self, w: &mut impl Write, now: Instant) -> io::Result<()> {
        if let Some(last) = self.progress.active_since_write
            && now.duration_since(last) >= PROGRESS_KEEPALIVE
        {
            self.progress.pending.push_str(PROGRESS_ACTIVE);
            self.progress.active_since_write = Some(now);
        }
        if self.progress.pending.is_empty() {
            return Ok(());
        }
        let out = std::mem::take(&mut self.progress.pending);
        w.write_all(out.as_bytes())?;
        w.flush()
    }

    /// Whether drawing a live region of `live_rows` rows in place would leave the screen
    /// (partly) blank: the last one filled the whole screen, pushing the history above it
    /// off, and the new one is shorter than the screen (a tall dialog was closed). Then
    /// everything must be drawn again, as pi does when a change starts above its viewport.
    fn shrink_needs_redraw(&self, live_rows: usize) -> bool {
        !self.pristine && self.live_filled && live_rows < self.height as usize
    }

    pub fn size(&self) -> (u16, u16) {
        (self.width, self.height)
    }

    /// Records a new terminal size. The caller must follow with [`Self::redraw_all`].
    pub fn set_size(&mut self, width: u16, height: u16) {
        let (width, height) = (width.max(1), height.max(1));
        if (width, height) != (self.width, self.height) {
            self.resized = true;
        }
        self.width = width;
        self.height = height;
    }

    fn move_to_live_top(&self, out: &mut String) {
        out.push('\r');
        if !self.pristine && self.cursor_row > 0 {
            out.push_str(&format!("\x1b[{}A", self.cursor_row));
        }
    }

    /// New history lines that are already drawn as the first rows of the live region (a
    /// streamed paragraph that is now final) need not be drawn again: those rows just stop
    /// belonging to the live region, whether they are on the screen or were scrolled into
    /// the scrollback above it. Returns the history still to print.
    fn adopt_history<'a>(&mut self, history: &'a [Line<'static>]) -> &'a [Line<'static>] {
        if history.is_empty() || self.pristine {
            return history;
        }
        if self.live_skipped > 0 && !self.skipped_in_scrollback {
            return history;
        }
        let adopted = history
            .iter()
            .zip(&self.live)
            .take_while(|(line, drawn)| encode_line(line, self.width) == **drawn)
            .count();
        // Rows above the screen can only become history all together, and the cursor
        // must stay in what is left of the live region.
        let visible = adopted.saturating_sub(self.live_skipped);
        if adopted == 0 || adopted < self.live_skipped || visible > self.cursor_row {
            return history;
        }
        self.live.drain(..adopted);
        self.live_skipped -= adopted - visible;
        self.cursor_row -= visible;
        self.history_rows += adopted;
        if visible > 0 {
            // History is on the screen again above what is left of the live region.
            self.live_filled = false;
        }
        &history[adopted..]
    }

    /// Draws a frame. Writes nothing when nothing changed, and nothing when the frame
    /// cannot be drawn on what is there ([`Drawn::NeedsFullRedraw`]).
    pub fn draw(&mut self, w: &mut impl Write, frame: &Frame<'_>) -> io::Result<Drawn> {
        let new_history = self.adopt_history(frame.new_history);
        let encoded: Vec<String> = frame
            .live
            .iter()
            .map(|l| encode_line(l, self.width))
            .collect();
        let height = self.height as usize;
        let skipped = encoded.len().saturating_sub(height);
        let cursor = frame
            .cursor
            .and_then(|(r, c)| r.checked_sub(skipped).map(|r| (r, c)));
        let visible_len = encoded.len() - skipped;
        let target_row = cursor
            .map(|(r, _)| r)
            .unwrap_or(visible_len.saturating_sub(1));
        if new_history.is_empty()
            && encoded == self.live
            && !self.pristine
            && target_row == self.cursor_row
        {
            return Ok(Drawn::Done);
        }
        // Rows of the live region already in the scrollback that this frame would change
        // or show again: only drawing everything anew gets them right (pi does the same
        // when a change starts above its viewport).
        let old_skipped = self.live_skipped;
        let first_diff = encoded
            .iter()
            .zip(&self.live)
            .position(|(a, b)| a != b)
            .unwrap_or(encoded.len().min(self.live.len()));
        let scrollback_stale = !self.pristine
            && old_skipped > 0
            && self.skipped_in_scrollback
            && (!new_history.is_empty() || first_diff < old_skipped || skipped < old_skipped);
        if scrollback_stale || self.shrink_needs_redraw(visible_len) {
            return Ok(Drawn::NeedsFullRedraw);
        }

        let mut out = String::with_capacity(4096);
        out.push_str(SYNC_BEGIN);
        out.push_str(HIDE_CURSOR);
        // Row (within the visible live region) the terminal cursor is on after writing.
        let current_row = if new_history.is_empty() && !self.pristine {
            // A live region growing past the screen: write its new rows below the old
            // ones and let the terminal scroll the top ones into the scrollback, as pi
            // does, instead of rewriting every row of the screen shifted by one.
            let scroll = skipped > old_skipped
                && first_diff >= old_skipped
                && (old_skipped == 0 || self.skipped_in_scrollback);
            let from = if scroll { old_skipped } else { skipped };
            let row = self.draw_changes(&mut out, &encoded[from..]);
            // Rows above the screen stay what the scrollback holds when they were
            // scrolled there now, or were there and did not change.
            let kept = skipped == old_skipped && first_diff >= old_skipped;
            self.skipped_in_scrollback = scroll || (kept && self.skipped_in_scrollback);
            row - (from.max(skipped) - from)
        } else {
            self.move_to_live_top(&mut out);
            self.history_rows += new_history.len();
            for line in new_history {
                out.push_str(CLEAR_LINE);
                out.push_str(&encode_line(line, self.width));
                out.push_str("\r\n");
            }
            write_rows(&mut out, &encoded[skipped..]);
            self.skipped_in_scrollback = skipped == 0;
            visible_len.saturating_sub(1)
        };
        if skipped == 0 {
            self.skipped_in_scrollback = true;
        }
        self.live_filled = encoded.len() >= height;
        self.live_skipped = skipped;
        self.finish(&mut out, encoded, current_row, cursor, frame.show_cursor);
        w.write_all(out.as_bytes())?;
        w.flush()?;
        Ok(Drawn::Done)
    }

    /// Rewrites the rows of the visible live region that differ from the last frame, with
    /// `rows` counted from the top of the last visible region. Rows past the bottom of the
    /// screen scroll it. Returns the row (counted the same way) the cursor ends on.
    fn draw_changes(&self, out: &mut String, rows: &[String]) -> usize {
        let old = &self.live[self.live_skipped..];
        let first_diff = rows
            .iter()
            .zip(old)
            .position(|(a, b)| a != b)
            .unwrap_or(rows.len().min(old.len()));
        if first_diff == rows.len() && rows.len() == old.len() {
            // Nothing changed but where the cursor goes.
            return self.cursor_row;
        }
        out.push('\r');
        // Rows up to the old last row exist on screen, so relative moves are safe;
        // one row past it is reached with a newline (which may scroll).
        let old_last = old.len().saturating_sub(1);
        let reachable = first_diff.min(old_last);
        if reachable < self.cursor_row {
            out.push_str(&format!("\x1b[{}A", self.cursor_row - reachable));
        } else if reachable > self.cursor_row {
            out.push_str(&format!("\x1b[{}B", reachable - self.cursor_row));
        }
        if first_diff > old_last && !old.is_empty() {
            out.push_str("\r\n");
        }
        // Same height: only the rows from the first to the last changed one (a
        // streamed line growing leaves the editor and footer below it alone).
        let last_diff = (rows.len() == old.len())
            .then(|| (first_diff..rows.len()).rev().find(|&i| rows[i] != old[i]))
            .flatten();
        if let Some(last_diff) = last_diff {
            for (i, row) in rows[first_diff..=last_diff].iter().enumerate() {
                if i > 0 {
                    out.push_str("\r\n");
                }
                out.push_str(CLEAR_LINE);
                out.push_str(row);
            }
            return last_diff;
        }
        let changed = &rows[first_diff.min(rows.len())..];
        write_rows(out, changed);
        if changed.is_empty() {
            first_diff
        } else {
            rows.len() - 1
        }
    }

    fn finish(
        &mut self,
        out: &mut String,
        encoded: Vec<String>,
        current_row: usize,
        cursor: Option<(usize, usize)>,
        show: bool,
    ) {
        // The cursor goes to a row of the visible part (the rows above the screen
        // cannot be reached).
        let last = encoded.len().min(self.height as usize).saturating_sub(1);
        let (row, col) = cursor.unwrap_or((last, 0));
        let row = row.min(last);
        if current_row > row {
            out.push_str(&format!("\x1b[{}A", current_row - row));
        } else if row > current_row {
            out.push_str(&format!("\x1b[{}B", row - current_row));
        }
        out.push('\r');
        if col > 0 {
            out.push_str(&format!("\x1b[{col}C"));
        }
        if show && cursor.is_some() {
            out.push_str(SHOW_CURSOR);
        }
        out.push_str(SYNC_END);
        self.cursor_row = row;
        self.live = encoded;
        self.pristine = false;
    }

    /// Prints the whole history and the live region again (after a resize, or when the
    /// transcript was replaced). While everything drawn so far is still on the screen and
    /// the size did not change (e.g. the session finished loading right after start), only
    /// those rows are cleared, so the shell's earlier output and the scrollback stay, as
    /// in pi; otherwise the screen and the scrollback are cleared first.
    pub fn redraw_all(
        &mut self,
        w: &mut impl Write,
        history: &[Line<'static>],
        live: &[Line<'static>],
        cursor: Option<(usize, usize)>,
        show_cursor: bool,
    ) -> io::Result<()> {
        let mut out = String::new();
        out.push_str(SYNC_BEGIN);
        out.push_str(HIDE_CURSOR);
        let ours_on_screen =
            !self.resized && self.history_rows + self.live.len() <= self.height as usize;
        if ours_on_screen {
            // No "erase below" here: every row drawn next is cleared as it is written and
            // the frame ends with one. Erasing from the top-left corner makes tmux move
            // the whole screen into its scrollback, which would leave a stale copy of the
            // previous frame there.
            self.move_to_live_top(&mut out);
            if self.history_rows > 0 {
                out.push_str(&format!("\x1b[{}A", self.history_rows));
            }
        } else {
            out.push_str("\x1b[H\x1b[2J\x1b[3J");
        }
        self.history_rows = 0;
        self.resized = false;
        w.write_all(out.as_bytes())?;
        self.pristine = true;
        self.live.clear();
        self.cursor_row = 0;
        self.live_skipped = 0;
        self.skipped_in_scrollback = true;
        self.live_filled = false;
        let frame = Frame {
            new_history: history,
            live,
            cursor,
            show_cursor,
        };
        // From a pristine state every frame can be drawn.
        self.draw(w, &frame).map(|_| ())
    }

    /// Ends the session leaving the last frame on the screen, as pi does when it quits:
    /// the cursor goes one row below the live region (if the screen has one; pi-tui's
    /// `stop`) and then to a new line, where the shell's prompt follows. ([`InlineRenderer::finish_session`] erases the live region
    /// instead, for a suspend or an external editor that gives the screen back later.)
    pub fn leave_session(&mut self, w: &mut impl Write) -> io::Result<()> {
        let mut out = std::mem::take(&mut self.progress.pending);
        if self.progress.active_since_write.take().is_some() {
            out.push_str(PROGRESS_CLEAR);
        }
        if !self.pristine && !self.live.is_empty() {
            let last = self
                .live
                .len()
                .saturating_sub(self.live_skipped)
                .saturating_sub(1);
            out.push('\r');
            if last > self.cursor_row {
                out.push_str(&format!("\x1b[{}B", last - self.cursor_row));
            } else if last < self.cursor_row {
                out.push_str(&format!("\x1b[{}A", self.cursor_row - last));
            }
            // A downward move stops at the screen's last row.
            out.push_str("\x1b[1B\r\n");
        }
        out.push_str(SHOW_CURSOR);
        self.live.clear();
        self.cursor_row = 0;
        self.live_skipped = 0;
        self.skipped_in_scrollback = true;
        self.live_filled = false;
        self.pristine = true;
        // What is on the screen now stays there: none of it is ours to redraw.
        self.history_rows = 0;
        w.write_all(out.as_bytes())?;
        w.flush()
    }

    /// Leaves the terminal tidy: the live region is erased and the cursor sits at the
    /// start of the row below the history, ready for the shell prompt.
    /// A progress indicator still on is cleared, as pi's terminal does when it stops.
    pub fn finish_session(&mut self, w: &mut impl Write) -> io::Result<()> {
        let mut out = std::mem::take(&mut self.progress.pending);
        if self.progress.active_since_write.take().is_some() {
            out.push_str(PROGRESS_CLEAR);
        }
        out.push_str(SYNC_BEGIN);
        self.move_to_live_top(&mut out);
        out.push_str(CLEAR_BELOW);
        out.push_str(SHOW_CURSOR);
        out.push_str(SYNC_END);
        self.live.clear();
        self.cursor_row = 0;
        self.live_skipped = 0;
        self.skipped_in_scrollback = true;
        self.live_filled = false;
        self.pristine = true;
        w.write_all(out.as_bytes())?;
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: u16) -> std::num::NonZeroU16 {
        std::num::NonZeroU16::new(n).unwrap()
    }

    /// A terminal emulator screen fed with our bytes.
    struct Screen {
        parser: vt100::Parser,
        renderer: InlineRenderer,
    }

    impl Screen {
        fn new(w: u16, h: u16) -> Self {
            Self {
                parser: vt100::Parser::new(nz(h), nz(w), 1000),
                renderer: InlineRenderer::new(w, h),
            }
        }

        fn draw(&mut self, history: &[&str], live: &[&str], cursor: Option<(usize, usize)>) {
            let history: Vec<Line<'static>> =
                history.iter().map(|s| Line::from(s.to_string())).collect();
            let live: Vec<Line<'static>> = live.iter().map(|s| Line::from(s.to_string())).collect();
            let mut bytes = Vec::new();
            let drawn = self
                .renderer
                .draw(
                    &mut bytes,
                    &Frame {
                        new_history: &history,
                        live: &live,
                        cursor,
                        show_cursor: true,
                    },
                )
                .unwrap();
            assert_eq!(drawn, Drawn::Done, "{history:?} {live:?}");
            self.parser.process(&bytes);
        }

        /// Draws like the app: everything again when the renderer asks for it.
        fn draw_or_redraw(&mut self, all_history: &[&str], history: &[&str], live: &[&str]) {
            let new: Vec<Line<'static>> =
                history.iter().map(|s| Line::from(s.to_string())).collect();
            let lines: Vec<Line<'static>> =
                live.iter().map(|s| Line::from(s.to_string())).collect();
            let mut bytes = Vec::new();
            let drawn = self
                .renderer
                .draw(
                    &mut bytes,
                    &Frame {
                        new_history: &new,
                        live: &lines,
                        cursor: None,
                        show_cursor: true,
                    },
                )
                .unwrap();
            self.parser.process(&bytes);
            if drawn == Drawn::NeedsFullRedraw {
                self.redraw_all(all_history, live);
            }
        }

        fn redraw_all(&mut self, history: &[&str], live: &[&str]) {
            let history: Vec<Line<'static>> =
                history.iter().map(|s| Line::from(s.to_string())).collect();
            let live: Vec<Line<'static>> = live.iter().map(|s| Line::from(s.to_string())).collect();
            let mut bytes = Vec::new();
            self.renderer
                .redraw_all(&mut bytes, &history, &live, None, true)
                .unwrap();
            self.parser.process(&bytes);
        }

        /// Scrollback + screen, trailing blank rows removed.
        fn all_rows(&mut self) -> String {
            let (rows, cols) = self.parser.screen().size();
            let (rows, cols) = (rows.get(), cols.get());
            let sb = self.parser.screen().scrollback_len();
            let mut lines = Vec::new();
            for offset in (1..=sb).rev() {
                self.parser.screen_mut().set_scrollback(offset);
                let top = self
                    .parser
                    .screen()
                    .rows(0, cols)
                    .next()
                    .unwrap_or_default();
                lines.push(top);
            }
            self.parser.screen_mut().set_scrollback(0);
            for row in self.parser.screen().rows(0, cols).take(rows as usize) {
                lines.push(row);
            }
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            lines
                .iter()
                .map(|l| l.trim_end().to_string())
                .collect::<Vec<_>>()
                .join("\n")
        }
    }

    #[test]
    fn history_goes_above_the_live_region_and_the_live_region_is_redrawn_in_place() {
        let mut s = Screen::new(20, 6);
        s.draw(&["hello"], &["> typing", "footer"], Some((0, 8)));
        s.draw(&[], &["> typing more", "footer"], Some((0, 13)));
        s.draw(&["answer 1", "answer 2"], &["> ", "footer"], Some((0, 2)));
        insta::assert_snapshot!(s.all_rows(), @r"
        hello
        answer 1
        answer 2
        >
        footer
        ");
        assert_eq!(s.parser.screen().cursor_position(), (3, 2));
    }

    #[test]
    fn a_shrinking_live_region_leaves_no_stale_rows() {
        let mut s = Screen::new(20, 8);
        s.draw(&[], &["streaming 1", "streaming 2", "> ", "footer"], None);
        s.draw(&["done"], &["> ", "footer"], None);
        insta::assert_snapshot!(s.all_rows(), @r"
        done
        >
        footer
        ");
    }

    #[test]
    fn history_scrolls_into_scrollback_without_duplicates() {
        let mut s = Screen::new(10, 4);
        for i in 0..10 {
            s.draw(&[&format!("line {i}")], &["> ", "f"], Some((0, 2)));
        }
        insta::assert_snapshot!(s.all_rows(), @r"
        line 0
        line 1
        line 2
        line 3
        line 4
        line 5
        line 6
        line 7
        line 8
        line 9
        >
        f
        ");
    }

    #[test]
    fn redrawing_what_is_still_on_screen_keeps_the_shells_output() {
        let mut s = Screen::new(30, 10);
        s.parser
            .process(b"$ earlier command\r\nits output\r\n$ pi\r\n");
        s.redraw_all(&["header"], &["> ", "footer"]);
        // The real session loaded: the transcript is replaced and drawn again.
        s.redraw_all(&["header", "old question", "old answer"], &["> ", "footer"]);
        insta::assert_snapshot!(s.all_rows(), @r"
        $ earlier command
        its output
        $ pi
        header
        old question
        old answer
        >
        footer
        ");
    }

    /// tmux moves the screen into its scrollback on an "erase below" at the top-left
    /// corner: a redraw of what is still on the screen (the session finished loading)
    /// must erase only after the rows it wrote.
    #[test]
    fn redrawing_in_place_erases_nothing_before_the_first_row() {
        let mut r = InlineRenderer::new(30, 10);
        let lines = |v: &[&str]| -> Vec<Line<'static>> {
            v.iter().map(|s| Line::from(s.to_string())).collect()
        };
        let mut first = Vec::new();
        r.redraw_all(
            &mut first,
            &[],
            &lines(&["loading", "> ", "footer"]),
            None,
            true,
        )
        .unwrap();
        let mut bytes = Vec::new();
        r.redraw_all(
            &mut bytes,
            &lines(&["header"]),
            &lines(&["> ", "footer"]),
            None,
            true,
        )
        .unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let erase = text.find(CLEAR_BELOW).unwrap_or(usize::MAX);
        let last_row = text.find("footer").unwrap_or(0);
        assert!(erase > last_row, "{text:?}");
        let mut s = Screen::new(30, 10);
        s.parser.process(&first);
        s.parser.process(&bytes);
        insta::assert_snapshot!(s.all_rows(), @r"
        header
        >
        footer
        ");
    }

    #[test]
    fn redrawing_after_output_scrolled_away_starts_from_a_clean_screen() {
        let mut s = Screen::new(30, 4);
        s.parser.process(b"$ pi\r\n");
        s.redraw_all(&[], &["> ", "footer"]);
        s.draw(&["one", "two", "three"], &["> ", "footer"], None);
        s.redraw_all(&["one", "two", "three"], &["> ", "footer"]);
        insta::assert_snapshot!(s.all_rows(), @r"
        one
        two
        three
        >
        footer
        ");
    }

    #[test]
    fn redraw_all_reprints_everything_once_after_a_resize() {
        let mut s = Screen::new(20, 5);
        s.draw(&["a", "b"], &["> x", "footer"], Some((0, 3)));
        s.parser.set_size(nz(5), nz(12));
        s.renderer.set_size(12, 5);
        let history: Vec<Line<'static>> = vec![Line::from("a"), Line::from("b")];
        let live: Vec<Line<'static>> = vec![Line::from("> x"), Line::from("footer")];
        let mut bytes = Vec::new();
        s.renderer
            .redraw_all(&mut bytes, &history, &live, Some((0, 3)), true)
            .unwrap();
        s.parser.process(&bytes);
        insta::assert_snapshot!(s.all_rows(), @r"
        a
        b
        > x
        footer
        ");
    }

    #[test]
    fn live_region_edits_in_the_middle_and_shrinking_keep_the_cursor_right() {
        let mut s = Screen::new(20, 8);
        s.draw(
            &["h"],
            &["queued 1", "queued 2", "> ab", "footer"],
            Some((2, 4)),
        );
        s.draw(
            &[],
            &["queued 1", "QUEUED 2", "> ab", "footer"],
            Some((2, 4)),
        );
        s.draw(&[], &["queued 1", "QUEUED 2"], None);
        s.draw(
            &[],
            &["queued 1", "QUEUED 2", "> abc", "footer 2"],
            Some((2, 5)),
        );
        insta::assert_snapshot!(s.all_rows(), @r"
        h
        queued 1
        QUEUED 2
        > abc
        footer 2
        ");
        assert_eq!(s.parser.screen().cursor_position(), (3, 5));
    }

    #[test]
    fn unchanged_frames_write_nothing() {
        let mut r = InlineRenderer::new(20, 5);
        let live = vec![Line::from("> "), Line::from("f")];
        let frame = Frame {
            new_history: &[],
            live: &live,
            cursor: Some((0, 2)),
            show_cursor: false,
        };
        let mut first = Vec::new();
        assert_eq!(r.draw(&mut first, &frame).unwrap(), Drawn::Done);
        let mut second = Vec::new();
        assert_eq!(r.draw(&mut second, &frame).unwrap(), Drawn::Done);
        assert!(!first.is_empty());
        assert!(second.is_empty());
    }

    #[test]
    fn a_live_region_taller_than_the_screen_keeps_its_bottom() {
        let mut s = Screen::new(20, 3);
        s.draw(&[], &["1", "2", "3", "4", "5"], None);
        insta::assert_snapshot!(s.all_rows(), @r"
        3
        4
        5
        ");
    }

    #[test]
    fn closing_a_dialog_that_filled_the_screen_asks_for_a_full_redraw() {
        let mut s = Screen::new(20, 4);
        s.draw(&["one", "two", "three"], &["> ", "footer"], None);
        assert!(!s.renderer.shrink_needs_redraw(2), "nothing was pushed off");
        // A dialog taller than the screen pushes the history off it.
        s.draw(&[], &["d1", "d2", "d3", "d4", "d5", "footer"], None);
        assert!(s.renderer.shrink_needs_redraw(2));
        assert!(!s.renderer.shrink_needs_redraw(4), "a full screen again");
        // Drawn in place, the editor would sit on the first row over blank rows: the
        // renderer writes nothing and asks for everything instead.
        let live = vec![Line::from("> "), Line::from("footer")];
        let frame = Frame {
            new_history: &[],
            live: &live,
            cursor: None,
            show_cursor: true,
        };
        let mut bytes = Vec::new();
        let drawn = s.renderer.draw(&mut bytes, &frame).unwrap();
        assert_eq!((drawn, bytes.len()), (Drawn::NeedsFullRedraw, 0));
        s.redraw_all(&["one", "two", "three"], &["> ", "footer"]);
        let screen = s.parser.screen().contents();
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        insta::assert_snapshot!(rows.join("\n"), @r"
        two
        three
        >
        footer
        ");
        assert!(!s.renderer.shrink_needs_redraw(2), "once only");
    }

    /// A streamed answer growing past the bottom of the screen: each frame writes the
    /// changed and new rows and lets the terminal scroll, and the answer becomes history
    /// without being printed again (no duplicates in the scrollback).
    #[test]
    fn an_answer_taller_than_the_screen_scrolls_instead_of_being_rewritten() {
        fn draw_answer(s: &mut Screen, answer: &[String]) -> Vec<u8> {
            let mut live: Vec<&str> = answer.iter().map(String::as_str).collect();
            live.extend(["> ", "footer"]);
            let lines: Vec<Line<'static>> =
                live.iter().map(|t| Line::from(t.to_string())).collect();
            let mut bytes = Vec::new();
            let drawn = s
                .renderer
                .draw(
                    &mut bytes,
                    &Frame {
                        new_history: &[],
                        live: &lines,
                        cursor: None,
                        show_cursor: true,
                    },
                )
                .unwrap();
            assert_eq!(drawn, Drawn::Done);
            s.parser.process(&bytes);
            bytes
        }
        let mut s = Screen::new(20, 6);
        s.draw(&["header"], &["> ", "footer"], None);
        let mut answer: Vec<String> = Vec::new();
        let mut max_frame = 0;
        for i in 0..20 {
            // A new row appears, then grows in place (the same height).
            answer.push("answer".into());
            let new_row = draw_answer(&mut s, &answer);
            if let Some(last) = answer.last_mut() {
                *last = format!("answer row {i}");
            }
            let grown = draw_answer(&mut s, &answer);
            if i > 6 {
                for bytes in [new_row, grown] {
                    max_frame = max_frame.max(bytes.len());
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    assert!(
                        !text.contains(&format!("answer row {}", i - 1)),
                        "rows above the new one are not rewritten: {text:?}"
                    );
                }
            }
        }
        // One new row plus the editor and footer, not the six rows of the screen.
        assert!(max_frame < 120, "{max_frame} bytes for a frame");
        let rows: Vec<&str> = answer.iter().map(String::as_str).collect();
        s.draw(&rows, &["> ", "footer"], Some((0, 2)));
        let mut want = vec!["header".to_string()];
        want.extend(answer.iter().cloned());
        want.extend([">".to_string(), "footer".to_string()]);
        assert_eq!(s.all_rows(), want.join("\n"));
    }

    /// When rows already scrolled into the scrollback change (a table re-laid out), the
    /// renderer asks for everything again instead of leaving stale copies there.
    #[test]
    fn a_change_above_the_screen_redraws_everything_without_duplicates() {
        let mut s = Screen::new(20, 5);
        s.draw(&["header"], &["> ", "footer"], None);
        let long: Vec<String> = (0..8).map(|i| format!("row {i}")).collect();
        let mut live: Vec<&str> = long.iter().map(String::as_str).collect();
        live.extend(["> ", "footer"]);
        s.draw_or_redraw(&["header"], &[], &live);
        live[0] = "ROW 0";
        s.draw_or_redraw(&["header"], &[], &live);
        let answer = &live[..8];
        s.draw_or_redraw(&[&["header"], answer].concat(), answer, &["> ", "footer"]);
        insta::assert_snapshot!(s.all_rows(), @r"
        header
        ROW 0
        row 1
        row 2
        row 3
        row 4
        row 5
        row 6
        row 7
        >
        footer
        ");
    }

    /// The bytes of one frame drawn on `s`, fed to its screen.
    fn frame_bytes(s: &mut Screen, history: &[&str], live: &[&str]) -> String {
        let history: Vec<Line<'static>> =
            history.iter().map(|t| Line::from(t.to_string())).collect();
        let live: Vec<Line<'static>> = live.iter().map(|t| Line::from(t.to_string())).collect();
        let mut bytes = Vec::new();
        let drawn = s
            .renderer
            .draw(
                &mut bytes,
                &Frame {
                    new_history: &history,
                    live: &live,
                    cursor: Some((live.len() - 2, 2)),
                    show_cursor: true,
                },
            )
            .unwrap();
        assert_eq!(drawn, Drawn::Done);
        s.parser.process(&bytes);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn streaming_rewrites_only_the_changed_rows_and_keeps_finished_ones_in_place() {
        let mut s = Screen::new(30, 10);
        frame_bytes(&mut s, &["header"], &["para one", "stre", "> ", "footer"]);
        // A growing line: only that row is written, not the editor and footer below it.
        let bytes = frame_bytes(&mut s, &[], &["para one", "streaming", "> ", "footer"]);
        assert!(bytes.contains("streaming"), "{bytes:?}");
        assert!(
            !bytes.contains("footer") && !bytes.contains("para one"),
            "{bytes:?}"
        );
        // The first paragraph is final: it becomes history where it already is.
        let bytes = frame_bytes(&mut s, &["para one"], &["streaming", "> ", "footer"]);
        assert!(!bytes.contains("para one"), "{bytes:?}");
        let bytes = frame_bytes(&mut s, &[], &["streaming on", "> ", "footer"]);
        assert!(!bytes.contains("footer"), "{bytes:?}");
        frame_bytes(&mut s, &["streaming on"], &["> ", "footer"]);
        insta::assert_snapshot!(s.all_rows(), @r"
        header
        para one
        streaming on
        >
        footer
        ");
        assert_eq!(s.parser.screen().cursor_position(), (3, 2));
    }

    #[test]
    fn finishing_erases_the_live_region() {
        let mut s = Screen::new(20, 6);
        s.draw(&["kept"], &["> ", "footer"], Some((0, 2)));
        let mut bytes = Vec::new();
        s.renderer.finish_session(&mut bytes).unwrap();
        s.parser.process(&bytes);
        assert_eq!(s.all_rows(), "kept");
        assert_eq!(s.parser.screen().cursor_position(), (1, 0));
    }

    #[test]
    fn leaving_keeps_the_last_frame_and_puts_the_cursor_below_it() {
        let mut s = Screen::new(20, 6);
        s.draw(&["kept"], &["> typed", "footer"], Some((0, 2)));
        let mut bytes = Vec::new();
        s.renderer.leave_session(&mut bytes).unwrap();
        s.parser.process(&bytes);
        assert_eq!(s.all_rows(), "kept\n> typed\nfooter");
        assert_eq!(s.parser.screen().cursor_position(), (4, 0));
        // A live region filling the screen: the screen scrolls by one row.
        let mut s = Screen::new(20, 3);
        s.draw(&[], &["a", "b", "> typed", "footer"], Some((2, 2)));
        let mut bytes = Vec::new();
        s.renderer.leave_session(&mut bytes).unwrap();
        s.parser.process(&bytes);
        assert!(
            s.all_rows().ends_with("> typed\nfooter"),
            "{}",
            s.all_rows()
        );
        assert_eq!(s.parser.screen().cursor_position(), (2, 0));
    }

    #[test]
    fn progress_is_set_repeated_every_second_and_cleared() {
        let mut r = InlineRenderer::new(20, 6);
        let t0 = Instant::now();
        let mut out = Vec::new();
        r.write_progress(&mut out, t0).unwrap();
        assert!(out.is_empty(), "nothing while off");
        r.set_progress(true, t0);
        r.write_progress(&mut out, t0).unwrap();
        assert_eq!(out, PROGRESS_ACTIVE.as_bytes());
        assert_eq!(r.progress_due(), Some(t0 + PROGRESS_KEEPALIVE));
        out.clear();
        r.write_progress(&mut out, t0 + Duration::from_millis(999))
            .unwrap();
        assert!(out.is_empty(), "not before a second");
        r.write_progress(&mut out, t0 + PROGRESS_KEEPALIVE).unwrap();
        assert_eq!(out, PROGRESS_ACTIVE.as_bytes());
        out.clear();
        r.set_progress(false, t0 + Duration::from_secs(2));
        r.write_progress(&mut out, t0 + Duration::from_secs(5))
            .unwrap();
        assert_eq!(out, PROGRESS_CLEAR.as_bytes());
        assert!(!r.progress_active());
        assert_eq!(r.progress_due(), None);
    }

    #[test]
    fn finishing_clears_a_progress_indicator_still_on() {
        let mut r = InlineRenderer::new(20, 6);
        r.set_progress(true, Instant::now());
        let mut out = Vec::new();
        r.finish_session(&mut out).unwrap();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with(&format!("{PROGRESS_ACTIVE}{PROGRESS_CLEAR}")),
            "{text:?}"
        );
        let mut out = Vec::new();
        r.finish_session(&mut out).unwrap();
        assert!(!String::from_utf8_lossy(&out).contains("\x1b]9;4"));
    }
}
