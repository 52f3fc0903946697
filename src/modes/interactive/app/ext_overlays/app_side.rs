//! The app's side of `ext_overlays`: what the [`App`](super::super::state::App) does with them.

use std::path::Path;

use ratatui::text::Line;

use super::super::extension_ui::ansi_line;
use super::super::state::App;
#[allow(unused_imports)]
use super::*;
use crate::extensions::{
    OverlayAction, OverlaySpec, UiInput, UiMethod, UiReply, UiRequest, UiResponse,
};
use crate::modes::interactive::overlays::{OverlayOptions, Placed, resolve_layout};

impl App {
    /// Takes the requests about overlays; gives back the others.
    pub(in crate::modes::interactive::app) fn on_ext_overlay_request(
        &mut self,
        request: UiRequest,
    ) -> Option<UiRequest> {
        let path = request.extension_path.clone();
        match request.method {
            UiMethod::Custom {
                custom_id,
                lines,
                input,
                overlay: Some(spec),
            } => {
                // pi shows an overlay at once, over whatever is on screen; the dialog's
                // answer is only sent when pi-rs drops it.
                match request.reply {
                    Some(reply) if !reply.is_closed() => {
                        self.show_ext_overlay(&path, custom_id, lines, input, *spec, Some(reply));
                    }
                    _ => {}
                }
                None
            }
            UiMethod::OverlayShow {
                custom_id,
                lines,
                input,
                overlay,
            } => {
                self.show_ext_overlay(&path, custom_id, lines, input, *overlay, None);
                None
            }
            UiMethod::OverlayHandle { custom_id, action } => {
                self.ext_overlay_handle(&path, &custom_id, action);
                None
            }
            UiMethod::CustomRender {
                custom_id,
                lines,
                visible,
                width,
            } => {
                if self.ext_overlay_index(&path, &custom_id).is_some() {
                    self.ext_overlay_render(&path, &custom_id, lines, visible, width);
                    return None;
                }
                Some(UiRequest {
                    method: UiMethod::CustomRender {
                        custom_id,
                        lines,
                        visible,
                        width,
                    },
                    ..request
                })
            }
            UiMethod::CustomClose { custom_id } => {
                if self.ext_overlay_close(&path, &custom_id) {
                    return None;
                }
                Some(UiRequest {
                    method: UiMethod::CustomClose { custom_id },
                    ..request
                })
            }
            method => Some(UiRequest { method, ..request }),
        }
    }

    /// Shows an overlay (a `custom` dialog with `overlay`, or `overlayShow`).
    pub(in crate::modes::interactive::app) fn show_ext_overlay(
        &mut self,
        path: &Path,
        custom_id: String,
        lines: Vec<String>,
        input: Option<UiInput>,
        spec: OverlaySpec,
        reply: Option<UiReply>,
    ) {
        let key: OverlayKey = (path.to_path_buf(), custom_id);
        let overlays = &mut self.ext_overlays;
        overlays.counter += 1;
        let capturing = !spec.options.non_capturing;
        let entry = ExtOverlay {
            key: key.clone(),
            options: spec.options,
            lines,
            lines_width: spec.width,
            asked_width: None,
            visible: spec.visible,
            hidden: false,
            focus_order: overlays.counter,
            pre_focus: overlays.focus.clone(),
            input,
            reply,
        };
        let take_focus = capturing && entry.shown();
        overlays.stack.push(entry);
        if take_focus {
            self.set_ext_focus(Focus::Overlay(key));
        }
        self.dirty = true;
    }

    fn ext_overlay_index(&self, path: &Path, custom_id: &str) -> Option<usize> {
        self.ext_overlays
            .stack
            .iter()
            .position(|o| o.key.0 == path && o.key.1 == custom_id)
    }

    /// New lines for overlay `custom_id`.
    fn ext_overlay_render(
        &mut self,
        path: &Path,
        custom_id: &str,
        lines: Vec<String>,
        visible: Option<bool>,
        width: Option<usize>,
    ) {
        let Some(index) = self.ext_overlay_index(path, custom_id) else {
            return;
        };
        let entry = &mut self.ext_overlays.stack[index];
        entry.lines = lines;
        if width.is_some() {
            entry.lines_width = width;
        }
        if let Some(visible) = visible {
            entry.visible = visible;
        }
        self.dirty = true;
    }

    /// Removes overlay `custom_id` (its `done` or its handle's `hide`); false when it is
    /// not an overlay.
    fn ext_overlay_close(&mut self, path: &Path, custom_id: &str) -> bool {
        let Some(index) = self.ext_overlay_index(path, custom_id) else {
            return false;
        };
        self.remove_ext_overlay(index);
        true
    }

    fn remove_ext_overlay(&mut self, index: usize) {
        let entry = self.ext_overlays.stack.remove(index);
        if self.ext_overlays.focus == Focus::Overlay(entry.key.clone()) {
            let next = self
                .topmost_capturing_overlay()
                .map_or_else(|| entry.pre_focus.clone(), Focus::Overlay);
            self.set_ext_focus(next);
        }
        if let Some(reply) = entry.reply {
            // The host resolved its promise itself; this answer only releases the dialog.
            reply.send(UiResponse::Cancelled);
        }
        self.dirty = true;
    }

    /// An `OverlayHandle` call.
    fn ext_overlay_handle(&mut self, path: &Path, custom_id: &str, action: OverlayAction) {
        let Some(index) = self.ext_overlay_index(path, custom_id) else {
            return;
        };
        let key = self.ext_overlays.stack[index].key.clone();
        let focused = self.ext_overlays.focus == Focus::Overlay(key.clone());
        match action {
            OverlayAction::SetHidden(hidden) => {
                let entry = &mut self.ext_overlays.stack[index];
                if entry.hidden == hidden {
                    return;
                }
                entry.hidden = hidden;
                if hidden {
                    if focused {
                        let pre = self.ext_overlays.stack[index].pre_focus.clone();
                        let next = self.topmost_capturing_overlay().map_or(pre, Focus::Overlay);
                        self.set_ext_focus(next);
                    }
                } else if !entry.options.non_capturing && entry.shown() {
                    self.ext_overlays.counter += 1;
                    self.ext_overlays.stack[index].focus_order = self.ext_overlays.counter;
                    self.set_ext_focus(Focus::Overlay(key));
                }
            }
            OverlayAction::Focus => {
                if !self.ext_overlays.stack[index].shown() {
                    return;
                }
                self.set_ext_focus(Focus::Overlay(key));
                self.ext_overlays.counter += 1;
                self.ext_overlays.stack[index].focus_order = self.ext_overlays.counter;
            }
            OverlayAction::Unfocus => {
                if !focused {
                    return;
                }
                let next = match self.topmost_capturing_overlay() {
                    Some(top) if top != key => Focus::Overlay(top),
                    _ => self.ext_overlays.stack[index].pre_focus.clone(),
                };
                self.set_ext_focus(next);
            }
        }
        self.dirty = true;
    }

    /// The topmost visible overlay that takes the keyboard.
    fn topmost_capturing_overlay(&self) -> Option<OverlayKey> {
        self.ext_overlays
            .stack
            .iter()
            .rev()
            .find(|o| !o.options.non_capturing && o.shown())
            .map(|o| o.key.clone())
    }

    /// Moves the keyboard, telling the components that lose and gain it.
    fn set_ext_focus(&mut self, focus: Focus) {
        // A focus remembered from an overlay that has gone falls back to pi-rs's UI.
        let focus = match focus {
            Focus::Overlay(key) if self.ext_overlays.stack.iter().all(|o| o.key != key) => {
                Focus::Base
            }
            other => other,
        };
        let old = std::mem::replace(&mut self.ext_overlays.focus, focus.clone());
        if old == focus {
            return;
        }
        for (key, focused) in [(old, false), (focus, true)] {
            if let Focus::Overlay(key) = key
                && let Some(entry) = self.ext_overlays.stack.iter().find(|o| o.key == key)
                && let Some(input) = &entry.input
            {
                input.set_focused(focused);
            }
        }
    }

    /// Sends a key (or pasted text) to the overlay that has the keyboard; false when none
    /// has it. A focused overlay that stopped being visible passes the keyboard on first,
    /// as pi-tui does.
    pub(in crate::modes::interactive::app) fn send_to_ext_overlay(&mut self, data: &str) -> bool {
        let Focus::Overlay(key) = self.ext_overlays.focus.clone() else {
            return false;
        };
        let Some(index) = self.ext_overlays.stack.iter().position(|o| o.key == key) else {
            self.ext_overlays.focus = Focus::Base;
            return false;
        };
        let mut index = index;
        if !self.ext_overlays.stack[index].shown() {
            let pre = self.ext_overlays.stack[index].pre_focus.clone();
            let next = self.topmost_capturing_overlay().map_or(pre, Focus::Overlay);
            self.set_ext_focus(next);
            let Focus::Overlay(key) = self.ext_overlays.focus.clone() else {
                return false;
            };
            match self.ext_overlays.stack.iter().position(|o| o.key == key) {
                Some(i) => index = i,
                None => return false,
            }
        }
        let width = self.ext_overlay_width(&self.ext_overlays.stack[index].options);
        if let Some(input) = &self.ext_overlays.stack[index].input {
            input.send(data, width);
        }
        self.dirty = true;
        true
    }

    /// Whether an overlay has the keyboard.
    pub fn ext_overlay_focused(&self) -> bool {
        matches!(&self.ext_overlays.focus, Focus::Overlay(key)
            if self.ext_overlays.stack.iter().any(|o| &o.key == key))
    }

    fn ext_overlay_width(&self, options: &OverlayOptions) -> usize {
        resolve_layout(options, 0, self.width(), self.height()).width
    }

    /// Whether any overlay is on screen.
    pub fn ext_overlays_shown(&self) -> bool {
        self.ext_overlays.stack.iter().any(ExtOverlay::shown)
    }

    /// Drops overlays whose extension stopped (their dialog was abandoned or the host's
    /// pipe closed) and asks the host to render at the width each overlay now has.
    pub(in crate::modes::interactive::app) fn tend_ext_overlays(&mut self) {
        let gone: Vec<usize> = self
            .ext_overlays
            .stack
            .iter()
            .enumerate()
            .filter(|(_, o)| {
                o.reply.as_ref().is_some_and(UiReply::is_closed)
                    || o.input.as_ref().is_some_and(UiInput::is_closed)
            })
            .map(|(i, _)| i)
            .collect();
        for index in gone.into_iter().rev() {
            self.remove_ext_overlay(index);
        }
        let (width, height) = (self.width(), self.height());
        for entry in &mut self.ext_overlays.stack {
            let wanted = resolve_layout(&entry.options, 0, width, height).width;
            if entry.lines_width != Some(wanted) && entry.asked_width != Some(wanted) {
                entry.asked_width = Some(wanted);
                if let Some(input) = &entry.input {
                    input.render_at(wanted);
                }
            }
        }
    }

    /// Forgets every overlay (a new extension host: the old one's components are gone).
    pub(in crate::modes::interactive::app) fn clear_ext_overlays(&mut self) {
        while !self.ext_overlays.stack.is_empty() {
            let last = self.ext_overlays.stack.len() - 1;
            self.remove_ext_overlay(last);
        }
        self.ext_overlays.focus = Focus::Base;
    }

    /// Where the focused overlay put pi-tui's `CURSOR_MARKER`, as (row, column) on a
    /// `width` × `height` screen: the terminal cursor goes there, as in pi.
    pub(in crate::modes::interactive::app) fn focused_ext_overlay_cursor(
        &self,
        width: usize,
        height: usize,
    ) -> Option<(usize, usize)> {
        let Focus::Overlay(key) = &self.ext_overlays.focus else {
            return None;
        };
        let o = self
            .ext_overlays
            .stack
            .iter()
            .find(|o| &o.key == key && o.shown())?;
        let first = resolve_layout(&o.options, 0, width, height);
        let shown = first
            .max_height
            .map_or(o.lines.len(), |m| o.lines.len().min(m));
        let layout = resolve_layout(&o.options, shown, width, height);
        let (row, col) =
            super::super::extension_ui::marker_position(&o.lines[..shown], layout.width)?;
        Some((layout.row + row, layout.col + col))
    }

    /// The visible overlays placed on a `width` × `height` screen, bottom first.
    pub(in crate::modes::interactive::app) fn placed_ext_overlays(
        &self,
        width: usize,
        height: usize,
    ) -> Vec<Placed> {
        let mut shown: Vec<&ExtOverlay> = self
            .ext_overlays
            .stack
            .iter()
            .filter(|o| o.shown())
            .collect();
        shown.sort_by_key(|o| o.focus_order);
        shown
            .into_iter()
            .map(|o| {
                let first = resolve_layout(&o.options, 0, width, height);
                let mut lines: Vec<Line<'static>> = o.lines.iter().map(|l| ansi_line(l)).collect();
                if let Some(max) = first.max_height {
                    lines.truncate(max);
                }
                let layout = resolve_layout(&o.options, lines.len(), width, height);
                Placed {
                    lines,
                    row: layout.row,
                    col: layout.col,
                    width: layout.width,
                }
            })
            .collect()
    }
}
