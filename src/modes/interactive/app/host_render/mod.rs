//! Chat items drawn by extensions: custom messages of a type with a message renderer
//! (pi's `registerMessageRenderer`) and the boxes of tools with `renderCall` /
//! `renderResult`. Their lines come from the extension's process through `render`
//! requests; the chat never waits for them.
//!
//! Each such item is asked again only when what its lines depend on changed: the width,
//! the Ctrl+O state, the item itself (its version: new arguments, a partial or final
//! result) or the theme; and never while its previous request is unanswered. Until the answer arrives the item shows its previous lines, or
//! pi-rs's own rendering the first time; an item whose first lines are pending is not
//! moved into the scrollback yet (at most [`RENDER_TIMEOUT`]). A renderer that fails or
//! does not answer in time leaves pi-rs's rendering in place and is reported once.

mod app_side;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::extensions::ItemRenderer;
/// What the lines of an item depend on: width, expanded, the item's version, the
/// theme's generation.
pub type RenderKey = (usize, bool, u64, u64);

/// An answer to a `render` request, for the event loop.
pub struct HostRendered {
    epoch: u64,
    index: usize,
    key: RenderKey,
    outcome: Result<Value, String>,
}

struct Tracked {
    renderer: ItemRenderer,
    /// The key of the last request sent.
    requested: Option<RenderKey>,
    /// That request has not been answered yet.
    in_flight: bool,
}

/// The items drawn by extensions, with their requests.
#[derive(Default)]
pub struct HostRenders {
    /// Counts transcript rebuilds: answers about an older transcript are dropped.
    epoch: u64,
    /// Transcript items looked at so far.
    scanned: usize,
    tracked: BTreeMap<usize, Tracked>,
    /// Renderers whose failure was reported (extension, what).
    reported: HashSet<(PathBuf, String)>,
}

impl HostRenders {
    /// The transcript was built again: forget its items.
    pub fn reset(&mut self) {
        self.epoch += 1;
        self.scanned = 0;
        self.tracked.clear();
    }

    /// Whether item `index` waits for its first lines (it stays out of the scrollback
    /// until they arrive or the request fails).
    pub fn holds(&self, index: usize) -> bool {
        self.tracked.get(&index).is_some_and(|t| t.in_flight)
    }

    /// Reports a renderer failure once per extension and renderer.
    fn report_once(&mut self, renderer: &ItemRenderer, what: &str, error: &str) {
        let key = (renderer.extension_path().to_path_buf(), what.to_string());
        if self.reported.insert(key) {
            renderer.report(what, error);
        }
    }
}
