//! The factory's error, in a file of its own so that the factory's parts can all use it
//! without importing the factory module that uses them.

/// A fatal startup problem: the front end shows it as `Error: …` (the binary exits with 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StartupError(pub String);
