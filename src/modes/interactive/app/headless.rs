//! The interactive app without a terminal: events in, frames out, in the same process.
//! Tests drive keys and session events through it and read the screen as text (or as a
//! ratatui buffer); benchmarks time a keystroke to its frame. It runs the real app — the
//! same `handle` and `compose` the terminal loop uses — on a real `AgentSession`, so it
//! needs a tokio runtime (the app starts prompts and other work as tasks).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;
use tokio::sync::mpsc;

use super::handle::{Effect, UiEvent};
use super::{AppMsg, InteractiveOptions, new_app};
use crate::core::agent_session::AgentSession;
use crate::core::events::SessionEvent;
use crate::modes::interactive::text::line_text;

use super::state::App;

/// A headless interactive app. See the module documentation.
pub struct Headless {
    pub app: App,
    width: u16,
    height: u16,
    session_rx: mpsc::UnboundedReceiver<SessionEvent>,
    rx: mpsc::UnboundedReceiver<AppMsg>,
    /// Every line written to the scrollback so far.
    scrollback: Vec<Line<'static>>,
    /// The live region of the last frame.
    live: Vec<Line<'static>>,
    cursor: Option<(usize, usize)>,
    /// Bytes the renderer wrote besides frames (OSC 9;4 progress).
    terminal_output: Vec<u8>,
}

impl Headless {
    /// The app on `session` in a `width` × `height` terminal.
    pub fn new(session: AgentSession, width: u16, height: u16) -> Headless {
        Self::with_options(session, width, height, InteractiveOptions::default())
    }

    /// [`Headless::new`] with startup options (warnings, a session factory and what it
    /// opens, ...).
    pub fn with_options(
        session: AgentSession,
        width: u16,
        height: u16,
        mut options: InteractiveOptions,
    ) -> Headless {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut app = new_app(session, width, height, tx, &options);
        for w in &options.warnings {
            app.pin_warning(w);
        }
        if let Some(open) = options.open.take() {
            super::loading::start_opening(&mut app, open);
        }
        app.full_redraw = true;
        let session_rx = app.session.subscribe();
        let mut ui = Headless {
            app,
            width,
            height,
            session_rx,
            rx,
            scrollback: Vec::new(),
            live: Vec::new(),
            cursor: None,
            terminal_output: Vec::new(),
        };
        ui.render();
        ui
    }

    /// Handles one event (terminal-level effects other than a new session are ignored:
    /// there is no terminal to suspend or hand to an editor).
    pub fn handle(&mut self, event: UiEvent) -> Effect {
        let effect = self.app.handle(event);
        if effect == Effect::Resubscribe {
            self.session_rx = self.app.session.subscribe();
            self.app.run_queued_submits();
        }
        effect
    }

    /// Presses a key.
    pub fn press(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Effect {
        self.handle(UiEvent::Key(KeyEvent::new(code, modifiers)))
    }

    /// Presses keys named as in tmux: `Enter`, `Escape`, `Up`, `Down`, `Left`, `Right`,
    /// `Tab`, `BSpace`, `C-x` (Ctrl), `M-x` (Alt), `S-Tab`, or a single character.
    pub fn keys(&mut self, names: &[&str]) {
        for name in names {
            let (code, mods) = parse_key(name);
            self.press(code, mods);
        }
    }

    /// Types text into whatever has focus, one key per character.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    /// Resizes the terminal.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.width = width;
        self.height = height;
        self.handle(UiEvent::Resize(width, height));
    }

    /// Handles every session event and background result waiting now. Returns how many.
    pub fn pump(&mut self) -> usize {
        let mut handled = 0;
        loop {
            if let Ok(event) = self.session_rx.try_recv() {
                self.handle(UiEvent::Session(event));
            } else if let Ok(msg) = self.rx.try_recv() {
                self.handle(UiEvent::Msg(msg));
            } else {
                self.write_terminal_output();
                return handled;
            }
            handled += 1;
        }
    }

    /// What the renderer wrote to the terminal besides frames so far (the OSC 9;4
    /// progress sequences), as the event loop writes it after each event.
    pub fn terminal_output(&self) -> &[u8] {
        &self.terminal_output
    }

    /// What the app writes when it exits (the progress indicator cleared), added to
    /// [`Headless::terminal_output`].
    pub fn exit(&mut self) {
        self.app.terminal_progress(false);
        let _ = self.app.renderer.leave_session(&mut self.terminal_output);
    }

    fn write_terminal_output(&mut self) {
        let _ = self
            .app
            .renderer
            .write_progress(&mut self.terminal_output, Instant::now());
    }

    /// Composes a frame and keeps it (history goes to the scrollback).
    pub fn render(&mut self) {
        // A frame may leave history for the next one (its time budget): draw until done.
        loop {
            let frame = self.app.compose();
            if frame.full {
                self.scrollback = frame.history;
            } else {
                self.scrollback.extend(frame.history);
            }
            self.live = frame.live;
            self.cursor = frame.cursor;
            if !self.app.dirty {
                return;
            }
        }
    }

    /// The visible screen as text: the last `height` rows of scrollback and live region,
    /// trailing spaces trimmed.
    pub fn screen(&mut self) -> String {
        self.render();
        let buffer = self.frame();
        (0..buffer.area.height)
            .map(|y| {
                let mut row = String::new();
                let mut skip = 0;
                for x in 0..buffer.area.width {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    let symbol = buffer[(x, y)].symbol();
                    row.push_str(symbol);
                    skip = crate::modes::interactive::text::str_width(symbol).saturating_sub(1);
                }
                row.trim_end().to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_string()
    }

    /// Everything drawn so far (scrollback and live region) as text.
    pub fn transcript(&mut self) -> String {
        self.render();
        self.scrollback
            .iter()
            .chain(self.live.iter())
            .map(|l| line_text(l).trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The visible screen as a ratatui buffer (styles included).
    pub fn frame(&self) -> Buffer {
        let area = Rect::new(0, 0, self.width, self.height);
        let mut buffer = Buffer::empty(area);
        let all: Vec<&Line<'static>> = self.scrollback.iter().chain(self.live.iter()).collect();
        let start = all.len().saturating_sub(self.height as usize);
        for (row, line) in all[start..].iter().enumerate() {
            let rect = Rect::new(0, row as u16, self.width, 1);
            (*line).clone().render(rect, &mut buffer);
        }
        buffer
    }

    /// The cursor as (row, column) within the live region.
    pub fn cursor(&self) -> Option<(usize, usize)> {
        self.cursor
    }

    /// Pumps events and renders until the screen satisfies `pred`, or panics with the
    /// screen after `timeout`.
    pub async fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            self.pump();
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out waiting for {what}; the screen:\n{screen}");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// [`Headless::wait_until`] the screen contains `needle`.
    pub async fn wait_for(&mut self, needle: &str, timeout: Duration) -> String {
        self.wait_until(needle, timeout, |s| s.contains(needle))
            .await
    }
}

fn parse_key(name: &str) -> (KeyCode, KeyModifiers) {
    let named = |n: &str| match n {
        "Enter" => Some(KeyCode::Enter),
        "Escape" => Some(KeyCode::Esc),
        "Up" => Some(KeyCode::Up),
        "Down" => Some(KeyCode::Down),
        "Left" => Some(KeyCode::Left),
        "Right" => Some(KeyCode::Right),
        "Tab" => Some(KeyCode::Tab),
        "BSpace" => Some(KeyCode::Backspace),
        "Home" => Some(KeyCode::Home),
        "End" => Some(KeyCode::End),
        "PageUp" => Some(KeyCode::PageUp),
        "PageDown" => Some(KeyCode::PageDown),
        "Delete" => Some(KeyCode::Delete),
        _ => None,
    };
    let (mods, rest) = if let Some(r) = name.strip_prefix("C-") {
        (KeyModifiers::CONTROL, r)
    } else if let Some(r) = name.strip_prefix("M-") {
        (KeyModifiers::ALT, r)
    } else if let Some(r) = name.strip_prefix("S-") {
        (KeyModifiers::SHIFT, r)
    } else {
        (KeyModifiers::NONE, name)
    };
    if mods == KeyModifiers::SHIFT && rest == "Tab" {
        return (KeyCode::BackTab, KeyModifiers::SHIFT);
    }
    if let Some(code) = named(rest) {
        return (code, mods);
    }
    let mut chars = rest.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => (KeyCode::Char(c), mods),
        _ => (KeyCode::Null, mods),
    }
}
