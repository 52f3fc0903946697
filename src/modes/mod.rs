//! The front ends: interactive terminal UI, print/JSON mode and RPC mode. The only code
//! that touches the terminal, stdin or stdout.
//!
//! The three front ends do not use each other; what two of them need lives here, beside
//! them: [`theme`] (the TUI's colours, also used for RPC's HTML export).

pub mod interactive;
pub mod print;
pub mod rpc;
pub mod theme;
