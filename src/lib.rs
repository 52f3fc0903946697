//! pi-rs: a fast, drop-in Rust implementation of the pi coding agent.
//!
//! Layers, bottom first; each uses only the layers below it (`docs/architecture.md`,
//! checked by `tests/architecture/`): `ai` (models and providers), `messages`, `session`
//! (JSONL tree store) and `tools`, `agent` (the model ⇄ tools loop), `compaction` and
//! `export`, `extensions`, `core` (AgentSession, settings, resources), `modes`
//! (interactive, print, rpc: the only code that touches the terminal or stdio), `cli`.

pub mod agent;
pub mod ai;
pub mod cli;
pub mod compaction;
pub mod core;
pub mod export;
pub mod extensions;
pub mod messages;
pub mod modes;
pub mod session;
pub mod tools;
