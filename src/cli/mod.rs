//! The command line: flag definitions and parsing (`args`), `@file` arguments, and the
//! small commands that run instead of a session (`--list-models`, `--export`).

pub mod args;
