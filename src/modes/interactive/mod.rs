//! The interactive terminal UI (pi's TUI).
//!
//! Most of it is pure, snapshot-tested pieces that render to ratatui
//! [`Line`](ratatui::text::Line)s for a given width and never touch the terminal: themes,
//! width-safe text, markdown, syntax highlighting, edit diffs, the prompt editor,
//! autocomplete, keybindings and the chat components. `terminal` (modes, restore) and
//! `renderer` (inline frames: history into scrollback, a redrawn live region) are the only
//! parts that write to the terminal, `input` (our own decoder of the terminal's bytes) the
//! only one that reads it; the app ties them to an `AgentSession`.

pub mod ansi;
pub mod app;
pub mod autocomplete;
pub mod components;
pub mod config_screen;
pub mod diff;
pub mod editor;
pub mod fuzzy;
pub mod highlight;
pub mod images;
pub mod input;
pub mod keys;
pub mod markdown;
pub mod overlays;
pub mod renderer;
pub mod terminal;
pub mod text;
pub mod write_log;

/// The themes live one level up (`modes::theme`), shared with RPC mode's HTML export.
pub use super::theme;

#[cfg(test)]
mod test_support;
