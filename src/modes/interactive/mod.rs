//! The interactive terminal UI.

pub mod ansi;
pub mod renderer;
pub mod terminal;
