//! The command line: flag definitions and parsing (`args`), `@file` arguments and piped
//! stdin (`files`), what the flags say about the session (`startup`: the factory's
//! configuration, which session file, the questions pi asks on the terminal), and which
//! mode to run (`launch`), and pi's package commands (`packages`). The session itself is
//! built by `core::factory`.

pub mod args;
pub mod files;
pub mod launch;
pub mod list_models;
pub mod packages;
pub mod startup;
