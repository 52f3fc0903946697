//! The integration tests, as one test crate (one binary to build and link instead of one
//! per file). Each module is one topic; shared helpers are `crate::support`
//! (`tests/support/`), fixtures are read from `tests/fixtures/` through
//! `CARGO_MANIFEST_DIR`. A new topic is a new file `tests/it/<topic>.rs` plus its `mod`
//! line below; run one topic with `cargo test --test it <topic>::`.
//!
//! Every test here must be safe next to any other in the same process: no
//! `std::env::set_var`, no `set_current_dir`, no process-wide signal handlers. Give child
//! processes their environment and working directory (`Command::env`, `current_dir`)
//! instead.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

#[path = "../support/mod.rs"]
#[macro_use] // `require!` (skip a test when a program is missing)
mod support;
mod tools_common;

mod agent_loop_properties;
mod agent_session;
mod auth_cli;
mod checkpoints;
mod checkpoints_diff;
mod cli_flags;
mod cli_print;
mod cli_tools;
mod cloud_credentials;
mod cloud_credentials_roles;
mod cloudflare_and_no_model;
mod codex_websocket;
mod compaction_corpus;
mod compaction_e2e;
mod e2e;
mod export_browser;
mod export_html;
mod ext_events;
mod ext_provider_streams;
mod ext_providers;
mod extensions_agent;
mod extensions_events;
mod extensions_examples;
mod extensions_exec;
mod extensions_isolation;
mod extensions_session;
mod interop_reference_pi;
mod js_parity;
mod load_faults;
mod markdown_parity;
mod model_catalog;
mod models_16;
mod no_model;
mod node_modules_shims;
mod oauth_login;
mod oauth_refresh;
mod overlay_layout;
mod packages;
mod pi16_resources;
mod pi_request_parity;
mod pkg_config;
mod process_groups;
mod project_trust;
mod provider_streams;
mod read_bounds;
mod reliability;
mod reload;
mod request_timeouts;
mod rpc;
mod rpc_corpus;
mod rpc_extensions;
mod rpc_pi16;
mod session_bigfile;
mod session_concurrency;
mod session_corpus;
mod session_corpus16;
mod session_cwd;
mod session_factory;
mod session_files;
mod session_ids;
mod session_listing;
mod session_manager;
mod session_properties;
mod session_reference_pi;
mod settings_schema;
mod themes_pi16;
mod tools_bash;
mod tools_corpus;
mod tools_read;
mod tools_search;
mod tools_write_edit;
mod ts_builtin_tools;
mod ts_extensions;
mod ts_extensions_api;
mod ts_extensions_ctx;
mod ts_extensions_lifecycle;
mod ts_renderers;
mod tui_app;
mod tui_checkpoints;
mod tui_defaults;
mod tui_fidelity;
mod tui_model_command;
mod tui_overlays;
mod tui_session_commands;
mod tui_settings;
mod tui_slash;
mod vertex_external_sources;
mod wire_details;
mod wire_parity;
mod wire_streams;
