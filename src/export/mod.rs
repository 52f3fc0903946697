//! HTML export of a whole session: one self-contained file with every entry of every
//! branch, for reading in a browser or attaching to a bug report (`pi --export`,
//! `/export`, RPC `export_html`).
//!
//! Everything is rendered here, in Rust: markdown ([`markdown`]), highlighted code
//! ([`highlight`], classified by [`syntax`], which the terminal UI shares), ANSI-coloured
//! shell output ([`ansi`]), per-tool views ([`tools`]), the tree sidebar ([`sidebar`],
//! laid out by [`tree`]) and the header ([`header`]). The
//! page's small script (ours, in `assets/export.js`) only shows and hides the
//! server-rendered blocks: selecting an entry shows its root→entry path, the filters and
//! search re-lay out the tree. The page needs no network: no fonts, scripts or images
//! are fetched, and its Content-Security-Policy forbids it ([`page`]).
//!
//! Every string from the session goes through [`escape`] before it reaches the page, so
//! a model that writes `<script>` or `javascript:` links gets text, not code.
//!
//! Not here: finding the session file or the active theme, and the `--export`, `/export`
//! and RPC wiring; callers pass an [`ExportInput`] or a file path.

pub mod ansi;
pub mod entries;
pub mod escape;
pub mod file;
pub mod header;
pub mod highlight;
pub mod markdown;
pub mod page;
pub mod sidebar;
pub mod syntax;
pub mod theme;
pub mod tools;
pub mod tree;

#[cfg(test)]
mod tree_tests;

pub use file::{
    ExportError, IN_MEMORY_SESSION_ERROR, LoadedSession, NOTHING_TO_EXPORT_ERROR,
    default_output_name, export_session_file, export_session_file_with_theme, read_session_file,
    write_export,
};
pub use page::export_html;
pub use theme::ExportTheme;

use crate::ai::message::ToolSpec;
use crate::session::entry::{EntryId, SessionEntry, SessionHeader};

/// Everything an export shows.
#[derive(Debug, Clone, Copy)]
pub struct ExportInput<'a> {
    pub header: &'a SessionHeader,
    /// All entries of the session, every branch, in file order.
    pub entries: &'a [SessionEntry],
    /// The session's current leaf: the page opens on the path to it. `None` or an
    /// unknown id opens on the last entry, as pi does.
    pub leaf_id: Option<&'a EntryId>,
    /// The system prompt, when exporting a live session (`/export`); `--export` of a
    /// file has none.
    pub system_prompt: Option<&'a str>,
    /// The active tools (name, description, parameter schema), likewise.
    pub tools: &'a [ToolSpec],
    pub theme: &'a ExportTheme,
}
