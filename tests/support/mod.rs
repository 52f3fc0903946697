//! Helpers shared by integration tests (`mod support;`).
#![allow(dead_code)]

pub mod mock_llm;
pub mod session;
pub mod tmux;
