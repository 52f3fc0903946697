//! Extension overlays: components from `ctx.ui.custom(…, { overlay: true })` and from the
//! factory's `tui.showOverlay`, drawn over the screen (see `overlays` for the placement and
//! the compositing).
//!
//! The stack and the keyboard focus follow pi-tui: a new overlay takes the keys unless it is
//! `nonCapturing` or not visible, remembering what had them; when it goes (or is hidden, or
//! unfocused) the keys go to the topmost visible capturing overlay, or back to what had them
//! before. Overlays are drawn in focus order, the last focused on top. The components live
//! in their extension's host: it sends their lines (rendered at the width asked here) and
//! the answer of their `visible` callback; keys, the width to render at and focus changes go
//! back as `ui_input` messages.

mod app_side;

use std::path::PathBuf;

use ratatui::text::Line;

use crate::extensions::{UiInput, UiReply};
use crate::modes::interactive::overlays::OverlayOptions;
/// Which extension's component, by the host's id for it.
pub(super) type OverlayKey = (PathBuf, String);

/// What has the keyboard: pi-rs's own UI (editor, dialog, custom component in place of the
/// editor) or an overlay.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) enum Focus {
    #[default]
    Base,
    Overlay(OverlayKey),
}

/// One overlay on the stack.
pub(super) struct ExtOverlay {
    key: OverlayKey,
    options: OverlayOptions,
    /// Its last lines, as the component rendered them (ANSI).
    lines: Vec<String>,
    /// The width those lines were rendered at, when the host said.
    lines_width: Option<usize>,
    /// The width last asked of the host.
    asked_width: Option<usize>,
    /// The `visible` callback's last answer.
    visible: bool,
    /// `handle.setHidden(true)`.
    hidden: bool,
    /// Drawing order: higher is on top.
    focus_order: u64,
    /// What had the keyboard when it was shown.
    pre_focus: Focus,
    input: Option<UiInput>,
    /// The `custom` dialog's answer (none for `tui.showOverlay`).
    reply: Option<UiReply>,
}

impl ExtOverlay {
    fn shown(&self) -> bool {
        !self.hidden && self.visible
    }
}

/// The overlay stack and what the last frame did with it.
#[derive(Default)]
pub struct ExtOverlays {
    stack: Vec<ExtOverlay>,
    focus: Focus,
    counter: u64,
    /// Overlays were drawn in the last frame.
    pub(super) drawn: bool,
    /// The history rows drawn again in the live region under the overlays (the screen
    /// rows above the live region when they opened).
    pub(super) borrowed: Vec<Line<'static>>,
}
