//! The interactive terminal UI (pi's TUI), built from pure, snapshot-tested pieces.
//!
//! Everything here renders to ratatui [`Line`](ratatui::text::Line)s for a given width
//! and never touches the terminal: themes, width-safe text, markdown, syntax
//! highlighting, edit diffs, the prompt editor, autocomplete, keybindings and the chat
//! components. The event loop that owns the terminal and the session is built on top
//! of these and lives elsewhere.

pub mod autocomplete;
pub mod components;
pub mod diff;
pub mod editor;
pub mod fuzzy;
pub mod highlight;
pub mod keys;
pub mod markdown;
pub mod text;
pub mod theme;

#[cfg(test)]
mod test_support;
