//! Building a frame: finished chat items go to the terminal's scrollback once, in order;
//! the rest of the chat (the reply being streamed, running tool boxes), queued messages,
//! the status line, the editor (or a dialog) and the footer form the live region.

use std::io::Write;
use std::time::Instant;

use ratatui::text::{Line, Span};

use super::state::{App, Status};
use crate::modes::interactive::components::Component;
use crate::modes::interactive::components::status::StatusLine;
use crate::modes::interactive::editor::border_style;
use crate::modes::interactive::renderer::{Drawn, Frame};
use crate::modes::interactive::text::truncate_line;
use crate::modes::interactive::theme::ThemeToken;

/// How long a flashed status message stays.
const FLASH_SECONDS: u64 = 3;

impl App {
    /// Whether something animates (spinner, countdown) and needs periodic frames.
    pub fn animating(&self) -> bool {
        !matches!(self.status, Status::Idle) || self.bash_item.is_some() || self.flash.is_some()
    }

    /// Lines of the header (first frame only) and of the omitted-history note.
    fn header_lines(&self, width: usize) -> Vec<Line<'static>> {
        let ui = self.ui();
        let mut lines = self.header.render(width, &ui);
        if self.omitted_items > 0 {
            lines.push(Line::default());
            lines.push(truncate_line(
                Line::from(Span::styled(
                    format!(
                        " {} earlier messages are not shown here; /tree browses the whole session",
                        self.omitted_items
                    ),
                    ui.fg(ThemeToken::Dim),
                )),
                width,
                Span::raw("…"),
            ));
            // The chat below starts without a blank row of its own (see the transcript).
            lines.push(Line::default());
        }
        lines
    }

    /// Every line the app draws now, top to bottom: header, the whole chat, and the
    /// region below it (status, editor or dialog, footer). What `/debug` writes.
    pub(super) fn all_lines(&mut self) -> Vec<Line<'static>> {
        let width = self.width();
        let mut lines = self.header_lines(width);
        lines.extend(self.live_lines(0, width).0);
        lines
    }

    /// The live region and the cursor position in it.
    fn live_lines(
        &mut self,
        from_item: usize,
        width: usize,
    ) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
        let mut out: Vec<Line<'static>> = Vec::new();
        {
            let ui = self.ui();
            out.extend(
                self.transcript
                    .render_range(from_item..self.transcript.len(), width, &ui),
            );
            out.extend(self.pending.render(width, &ui));
        }
        if let Some((_, at)) = &self.flash
            && at.elapsed().as_secs() >= FLASH_SECONDS
        {
            self.flash = None;
        }
        let status = match (&self.status, &self.flash) {
            (Status::Idle, None) => None,
            (Status::Idle, Some((text, _))) => Some(StatusLine::message(self.spinner, text)),
            // `ctx.ui.setWorkingVisible(false)`: no working line at all (pi stops its loader).
            (Status::Working, _) if self.extension_ui.working_hidden => None,
            (Status::Working, _) => Some(
                match &self.extension_ui.working_message {
                    Some(message) => StatusLine::message(self.spinner, message),
                    None => StatusLine::working(self.spinner),
                }
                .with_indicator(self.working_indicator_frame()),
            ),
            (
                Status::Retrying {
                    attempt,
                    max_attempts,
                    until,
                },
                _,
            ) => {
                let ui = self.ui();
                Some(StatusLine::retrying(
                    self.spinner,
                    *attempt,
                    *max_attempts,
                    until.saturating_duration_since(Instant::now()),
                    &ui,
                ))
            }
            (Status::Message(m), _) => Some(StatusLine::message(self.spinner, m)),
        };
        if let Some(status) = status {
            let ui = self.ui();
            out.extend(status.render(width, &ui));
        }
        out.push(Line::default());
        let cursor;
        let picker_height = self.height().saturating_sub(6).clamp(8, 24);
        let images = self.image_config();
        if let Some(overlay) = self.overlay.as_mut() {
            overlay.poll();
            let ui = crate::modes::interactive::components::Ui::new(&self.theme, &self.keys)
                .with_home(self.home.as_deref())
                .with_images(images);
            let (lines, c) = overlay.render(width, picker_height, &ui);
            let base = out.len();
            cursor = c.map(|(r, col)| (base + r, col));
            out.extend(lines);
        } else if let Some(lines) = self.custom_component_lines(width) {
            // A focused component's `CURSOR_MARKER` places the cursor, as in pi.
            let base = out.len();
            cursor = self
                .custom_component_cursor(width)
                .map(|(r, col)| (base + r, col));
            out.extend(lines);
        } else {
            for (key, lines) in &self.extension_ui.widgets_above {
                out.extend(self.extension_widget_lines(key, lines, width));
            }
            if let Some(lines) = self.extension_editor_lines(width) {
                // The extension's editor draws its own cursor (pi-tui's inverse cell);
                // the terminal's goes to its `CURSOR_MARKER`, as in pi.
                let base = out.len();
                cursor = self
                    .extension_editor_cursor(width)
                    .map(|(r, col)| (base + r, col));
                out.extend(lines);
            } else {
                let thinking = self.session.thinking_level();
                let style = border_style(&self.theme, thinking, self.editor.bash_mode());
                self.editor.set_border_style(Some(style));
                let rendered = self.editor.render(width, &self.theme);
                let base = out.len();
                cursor = rendered
                    .cursor
                    .map(|(col, row)| (base + row as usize, col as usize));
                out.extend(rendered.lines);
            }
            for (key, lines) in &self.extension_ui.widgets_below {
                out.extend(self.extension_widget_lines(key, lines, width));
            }
        }
        if self.footer_cache.is_none() {
            self.footer_cache = Some(self.footer());
            self.footer_data_changed();
        }
        if let Some(lines) = self.extension_footer_lines(width) {
            out.extend(lines);
        } else if let Some(footer) = &self.footer_cache {
            let ui = self.ui();
            out.extend(footer.render(width, &ui));
        }
        (out, cursor)
    }

    /// Renders finished items from `start` on until `end` or until the frame's time budget
    /// is used up; returns the index after the last item rendered.
    fn history_within_budget(
        &self,
        start: usize,
        end: usize,
        width: usize,
        history: &mut Vec<Line<'static>>,
    ) -> usize {
        let began = Instant::now();
        let ui = self.ui();
        let mut index = start;
        while index < end {
            history.extend(self.transcript.render_range(index..index + 1, width, &ui));
            index += 1;
            if began.elapsed() >= self.history_budget {
                break;
            }
        }
        index
    }

    /// Builds the next frame from the state: history lines finished since the last frame
    /// (all of them, with `full`, after a resize or a rebuild) and the live region. Pure
    /// with respect to the terminal; [`App::draw`] writes it, `Headless` reads it.
    pub fn compose(&mut self) -> Composed {
        self.drop_stopped_extension_ui();
        self.tend_ext_overlays();
        let overlays = self.ext_overlays_shown();
        if overlays != self.ext_overlays.drawn {
            // Overlays cover the screen's rows, history included: it is drawn again with
            // its last screenful in the live region (and back in the history after).
            self.ext_overlays.drawn = overlays;
            self.ext_overlays.borrowed.clear();
            self.full_redraw = true;
        }
        if overlays {
            return self.compose_with_overlays();
        }
        if self.startup_pick && self.overlay.is_some() {
            return self.compose_startup_picker();
        }
        let width = self.width();
        self.request_host_renders();
        let full = std::mem::take(&mut self.full_redraw);
        let end = self.committable();
        let mut history = Vec::new();
        let start = if full {
            history = self.header_lines(width);
            self.header_written = true;
            0
        } else {
            if !self.header_written {
                history.extend(self.header_lines(width));
                self.header_written = true;
            }
            self.committed
        };
        let printed = self.history_within_budget(start, end, width, &mut history);
        self.committed = printed;
        let (live, cursor) = self.live_lines(end, width);
        self.sync_extension_ui_state();
        // More history to print: keep drawing frames until it is all out.
        self.dirty = printed < end;
        Composed {
            full,
            history,
            live,
            cursor,
        }
    }

    /// `pi --resume`: the picker alone, as pi shows it before its session starts (no
    /// header, warnings or footer; they come with the session picked).
    fn compose_startup_picker(&mut self) -> Composed {
        let (width, height) = (self.width(), self.height());
        let full = std::mem::take(&mut self.full_redraw);
        let mut live = vec![Line::default()];
        let mut cursor = None;
        if let Some(overlay) = self.overlay.as_mut() {
            overlay.poll();
            let ui = crate::modes::interactive::components::Ui::new(&self.theme, &self.keys)
                .with_home(self.home.as_deref());
            let picker_height = height.saturating_sub(6).clamp(8, 24);
            let (lines, c) = overlay.render(width, picker_height, &ui);
            cursor = c.map(|(r, col)| (r + live.len(), col));
            live.extend(lines);
        }
        self.dirty = false;
        Composed {
            full,
            history: Vec::new(),
            live,
            cursor,
        }
    }

    /// A frame with overlays on screen. History is not committed meanwhile (finished
    /// items stay in the live region); a full frame moves the last screenful of history
    /// into the live region, so the overlays can cover those rows as pi's do, then the
    /// overlays are laid over the last screen-height rows.
    fn compose_with_overlays(&mut self) -> Composed {
        let (width, height) = (self.width(), self.height());
        let full = std::mem::take(&mut self.full_redraw);
        let end = self.committed;
        let mut history = Vec::new();
        if full {
            history = self.header_lines(width);
            self.header_written = true;
            {
                let ui = self.ui();
                history.extend(self.transcript.render_range(0..end, width, &ui));
            }
            let keep = history.len() - history.len().min(height);
            self.ext_overlays.borrowed = history.split_off(keep);
        }
        let (own, cursor) = self.live_lines(end, width);
        self.sync_extension_ui_state();
        let mut live = self.ext_overlays.borrowed.clone();
        let cursor = cursor.map(|(row, col)| (row + live.len(), col));
        live.extend(own);
        let placed = self.placed_ext_overlays(width, height);
        crate::modes::interactive::overlays::composite(&mut live, &placed, width, height);
        self.dirty = false;
        // A focused overlay's `CURSOR_MARKER` places the cursor (the overlays cover the
        // last screen-height rows).
        let cursor = if self.ext_overlay_focused() {
            self.focused_ext_overlay_cursor(width, height)
                .map(|(row, col)| (live.len().saturating_sub(height) + row, col))
        } else {
            cursor
        };
        Composed {
            full,
            history,
            live,
            cursor,
        }
    }

    /// Draws a frame (or everything, after a resize or a rebuild).
    pub fn draw(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        let show_cursor = self.show_hardware_cursor;
        if std::mem::take(&mut self.leave_frame) {
            self.renderer.leave_session(out)?;
        }
        let mut frame = self.compose();
        if !frame.full {
            let drawn = self.renderer.draw(
                out,
                &Frame {
                    new_history: &frame.history,
                    live: &frame.live,
                    cursor: frame.cursor,
                    show_cursor,
                },
            )?;
            if drawn == Drawn::Done {
                return Ok(());
            }
            // A dialog that filled the screen closed, or rows already scrolled into the
            // scrollback changed: everything is drawn again rather than leaving blank
            // rows above the editor or stale copies above the screen (a full frame
            // prints all history, including what the first compose took).
            self.full_redraw = true;
            frame = self.compose();
        }
        self.renderer
            .redraw_all(out, &frame.history, &frame.live, frame.cursor, show_cursor)
    }
}

/// One frame as the app composed it.
pub struct Composed {
    /// Everything is drawn again: `history` is the whole scrollback, not an addition.
    pub full: bool,
    /// Lines for the scrollback.
    pub history: Vec<Line<'static>>,
    /// The live region at the bottom, top to bottom.
    pub live: Vec<Line<'static>>,
    /// The cursor as (row, column) within `live`.
    pub cursor: Option<(usize, usize)>,
}
