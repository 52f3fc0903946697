//! The front ends: interactive terminal UI, print/JSON mode and RPC mode. The only code
//! that touches the terminal, stdin or stdout.

pub mod interactive;
pub mod print;
pub mod rpc;
