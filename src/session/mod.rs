//! Sessions: pi-compatible, tree-structured JSONL files and the `SessionManager` that
//! reads, appends to and navigates them.

pub mod entry;
