//! Sessions: pi-compatible, tree-structured JSONL files and the `SessionManager` that
//! reads, appends to and navigates them.

mod append;
mod branching;
pub(crate) mod clock;
pub mod context;
pub mod entry;
pub mod error;
mod id_table;
pub mod ids;
pub mod listing;
mod load;
pub mod manager;
mod migrate;
pub mod outline;
pub mod paths;
pub mod refusal;
pub mod render;
mod scan;
mod store;
pub mod synth;
pub mod tree;
pub use manager::SessionManager;
