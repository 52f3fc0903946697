//! Helpers shared by the integration tests (`tests/it/`, as `crate::support`). Test code:
//! panicking on a broken fixture is the right failure mode here.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod chromium;
pub mod codex_ws;
pub mod export_page;
#[macro_use]
pub mod extensions;
pub mod http_stub;
pub mod mock_llm;
pub mod pi16_schema;
pub mod pi_project;
pub mod reference_16;
pub mod reference_pi;
pub mod rpc_client;
pub mod session;
pub mod tmux;
