//! Front ends: the only code that knows about terminals or stdio.
//!
//! `interactive` holds the terminal UI. Print and RPC modes will live next to it.

pub mod interactive;
