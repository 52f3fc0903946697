//! pi-rs: a fast, drop-in Rust implementation of the pi coding agent.
//!
//! Layers (data flows one way): `ai` (models and providers) and `session` (JSONL tree
//! store) at the bottom, `tools` and `agent` (the model ⇄ tools loop) above them,
//! `core` (AgentSession, settings, resources) tying them together, and `modes`
//! (interactive, print, rpc) as the only code that touches the terminal or stdio.

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
