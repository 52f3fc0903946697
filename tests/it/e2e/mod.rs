//! End-to-end tests: the built `pi` binary in a real terminal (tmux, 100+ columns) against
//! the loopback model server, with real files in temporary folders. Each test skips, with
//! a printed reason, where tmux is not installed (`.ci/run` installs it).
//!
//! - `tui`: prompts and streaming, tool diffs, abort, resize, `--resume`, `/compact`,
//!   extension dialogs.
//! - `abort`: Escape during a retry wait and an overflow compaction.
//! - `footer`: the git branch follows a `git switch` made elsewhere.
//! - `keys`: Shift+Enter and the editor keys through tmux's extended keys; the warning
//!   when they are off.
//! - `ts_extensions_live_ui`: pi's extension footers, headers, widgets and theme
//!   colours, side by side with the reference pi.
//! - `tree`: `/tree` with and without branch summaries, labels across restarts, `/fork`,
//!   and the result opening in the reference pi.

mod abort;
mod env;
mod footer;
mod keys;
mod tree;
mod ts_extensions;
mod ts_extensions_live_ui;
mod ts_extensions_themes;
mod ts_extensions_ui;
mod tui;
