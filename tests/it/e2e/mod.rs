//! End-to-end tests: the built `pi` binary in a real terminal (tmux, 100+ columns) against
//! the loopback model server, with real files in temporary folders. Each test skips, with
//! a printed reason, where tmux is not installed (`.ci/run` installs it).
//!
//! - `tui`: prompts and streaming, tool diffs, abort, resize, `--resume`, `/compact`,
//!   extension dialogs.
//! - `abort`: Escape during a retry wait and an overflow compaction.
//! - `cli_terminal`: print mode when stdout or stdin is not a terminal, command words
//!   that never reach the model, `--tui-mode`, `--use-theme`, `/reload` and
//!   `defaultTools`.
//! - `checkpoints`: `/tree` offers to restore the files a `write` and a `bash` call
//!   changed; restoring and `/undo-restore`.
//! - `footer`: the git branch follows a `git switch` made elsewhere.
//! - `images`: inline images (Kitty graphics) by the bytes written, beside the reference
//!   pi; the text note elsewhere; `PI_TUI_WRITE_LOG`; the terminal cursor in dialogs.
//! - `keys`: Shift+Enter and the editor keys through tmux's extended keys; the warning
//!   when they are off; Ctrl+Z, `fg` and quitting in a shell leave the last frame as pi.
//! - `kitty`: a terminal speaking the kitty keyboard protocol (a pseudo terminal, no
//!   tmux): pi's flags 7 are pushed and the key releases they bring do nothing.
//! - `ts_extensions_live_ui`: pi's extension footers, headers, widgets and theme
//!   colours, side by side with the reference pi.
//! - `ts_extensions_overlays`: pi's overlay examples (`overlay-test`, `overlay-qa-tests`,
//!   `doom-overlay` with a WAD), side by side with the reference pi.
//! - `ts_extensions_renderers`: chat items drawn by extensions (message renderers,
//!   tool `renderCall` / `renderResult`, the hidden thinking label), side by side with
//!   the reference pi.
//! - `session_startup`: `/quit` leaves the screen, `pi -r` and `pi -c` draw as pi's.
//! - `tree`: `/tree` with and without branch summaries, labels across restarts, `/fork`,
//!   and the result opening in the reference pi.

mod abort;
mod beside_pi;
mod checkpoints;
mod cli_terminal;
mod env;
mod footer;
mod images;
mod keys;
mod kitty;
mod output_pad;
mod session_startup;
mod tree;
mod ts_extensions;
mod ts_extensions_editor;
mod ts_extensions_live_ui;
mod ts_extensions_overlays;
mod ts_extensions_renderers;
mod ts_extensions_themes;
mod ts_extensions_ui;
mod tui;
