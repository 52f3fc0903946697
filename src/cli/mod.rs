//! The command line: flag definitions and parsing (`args`), `@file` arguments and piped
//! stdin (`files`), and startup from flags to a ready session (`startup`, with prompt
//! templates, skills and extensions in `resources`).

pub mod args;
pub mod files;
pub mod list_models;
pub mod reload;
pub mod resources;
pub mod startup;
