//! The command line: flag definitions and parsing (`args`), `@file` arguments and piped
//! stdin (`files`), what the flags say about the session (`startup`: the factory's
//! configuration, which session file, the questions pi asks on the terminal), and which
//! mode to run (`launch`), `--help` (`help`), pi's package commands (`packages`) and
//! `pi mcp` (`mcp`). The session itself is built by `core::factory`.

pub mod args;
pub mod auth;
pub mod files;
pub mod help;
pub mod launch;
pub mod list_models;
pub mod mcp;
pub mod packages;
pub mod startup;
pub mod update;
