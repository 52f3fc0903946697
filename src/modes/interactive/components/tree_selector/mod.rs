//! The `/tree` selector: the whole session tree as a navigable list, pi's layout, keys,
//! filters, search, folding and labels.
//!
//! This is a pure state machine and renderer. It is built from a [`TreeSnapshot`] (taken
//! from the session manager without reading any message in full), turns key events
//! into [`TreeOutcome`]s and draws itself into lines of a given width. It never touches
//! the terminal or the session: the app performs what an outcome asks for (navigate,
//! ask for a label, show "Already at this point") and tells the selector about label
//! changes. Rows are formatted only when on screen, so opening the selector on a session
//! of tens of thousands of entries and typing a search both stay within a frame.

mod render;
mod row;
mod search;
mod snapshot;
mod view;

#[cfg(test)]
mod tests;

use chrono::{DateTime, FixedOffset};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub use snapshot::TreeSnapshot;

use self::search::{Search, query_words};
use self::view::{FlatOrder, NONE, Visible};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::session::entry::EntryId;
use crate::session::outline::{EntryOutline, MessageOutline, TurnEnding};
use crate::session::tree::{EntryKind, MessageRole};

/// Which entries the list shows (pi's `treeFilterMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FilterMode {
    /// Everything but settings and bookkeeping (labels, extension state, model and
    /// thinking changes, session names).
    #[default]
    Default,
    /// The default view without tool results.
    NoTools,
    UserOnly,
    LabeledOnly,
    All,
}

impl FilterMode {
    /// In the order Ctrl+O cycles through them.
    pub const CYCLE: [FilterMode; 5] = [
        FilterMode::Default,
        FilterMode::NoTools,
        FilterMode::UserOnly,
        FilterMode::LabeledOnly,
        FilterMode::All,
    ];

    /// From the `treeFilterMode` setting; anything unknown is the default view, as in pi.
    pub fn from_setting(value: &str) -> FilterMode {
        FilterMode::CYCLE
            .into_iter()
            .find(|m| m.setting() == value)
            .unwrap_or_default()
    }

    /// The `treeFilterMode` value.
    pub fn setting(self) -> &'static str {
        match self {
            FilterMode::Default => "default",
            FilterMode::NoTools => "no-tools",
            FilterMode::UserOnly => "user-only",
            FilterMode::LabeledOnly => "labeled-only",
            FilterMode::All => "all",
        }
    }

    fn cycled(self, forward: bool) -> FilterMode {
        let at = FilterMode::CYCLE
            .iter()
            .position(|m| *m == self)
            .unwrap_or(0);
        let n = FilterMode::CYCLE.len();
        FilterMode::CYCLE[if forward {
            (at + 1) % n
        } else {
            (at + n - 1) % n
        }]
    }

    /// The direct filter keys toggle between their mode and the default view.
    fn toggled(self, mode: FilterMode) -> FilterMode {
        if self == mode {
            FilterMode::Default
        } else {
            mode
        }
    }

    fn status(self) -> &'static str {
        match self {
            FilterMode::Default => "",
            FilterMode::NoTools => " [no-tools]",
            FilterMode::UserOnly => " [user]",
            FilterMode::LabeledOnly => " [labeled]",
            FilterMode::All => " [all]",
        }
    }
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeOutcome {
    /// Keep the selector open (it may have changed: redraw).
    None,
    /// Enter on an entry other than the current leaf: navigate there.
    Selected(EntryId),
    /// Enter on the current leaf: nothing to do (pi says "Already at this point").
    AlreadyAtLeaf,
    /// Escape (with an empty search) or Ctrl+C.
    Cancelled,
    /// Shift+L: ask for a label for the entry (its current label pre-filled), save it
    /// with `set_label`, then call [`TreeSelector::set_label`].
    EditLabel(EntryId, Option<String>),
    /// Shift+D: show how the files at the entry `to` differ from those at `from` (the
    /// entry marked with Shift+M), or from the working tree when nothing is marked (file
    /// checkpoints, a pi-rs addition; `docs/checkpoints.md`).
    ShowDiff { from: Option<EntryId>, to: EntryId },
}

/// How to open the selector.
#[derive(Debug, Clone, Default)]
pub struct TreeSelectorOptions {
    /// Rows of the list (see [`TreeSelector::rows_for_terminal`]).
    pub visible_rows: usize,
    /// From the `treeFilterMode` setting.
    pub filter: FilterMode,
    /// The entry to put the cursor on (default: the current leaf). When a filter hides
    /// it, its nearest shown ancestor is selected.
    pub initial_selection: Option<EntryId>,
}

/// How the filters see an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeClass {
    /// Labels, extension state, model/thinking changes, session names.
    Settings,
    User,
    ToolResult,
    Content,
}

impl NodeClass {
    fn of(kind: EntryKind) -> NodeClass {
        match kind {
            EntryKind::Label
            | EntryKind::Custom
            | EntryKind::ModelChange
            | EntryKind::ThinkingLevelChange
            | EntryKind::SessionInfo
            | EntryKind::ContextEdit
            | EntryKind::Usage => NodeClass::Settings,
            EntryKind::Message(MessageRole::User) => NodeClass::User,
            EntryKind::Message(MessageRole::ToolResult) => NodeClass::ToolResult,
            EntryKind::Message(_)
            | EntryKind::Compaction
            | EntryKind::BranchSummary
            | EntryKind::CustomMessage
            | EntryKind::Other => NodeClass::Content,
        }
    }
}

#[derive(Debug, Clone)]
struct NodeLabel {
    text: String,
    timestamp: Option<String>,
}

/// How far up the tree a tool result looks for the call it answers.
const CALL_SEARCH_DEPTH: usize = 256;

/// The `/tree` selector. See the module documentation.
#[derive(Debug, Clone)]
pub struct TreeSelector {
    snap: TreeSnapshot,
    flat: FlatOrder,
    leaf: Option<u32>,
    class: Vec<NodeClass>,
    /// Pure tool-call assistant turns other than the leaf: never listed (as in pi).
    always_hidden: Vec<bool>,
    labels: Vec<Option<Box<NodeLabel>>>,
    filter: FilterMode,
    query: String,
    search: Search,
    folded: Vec<u32>,
    view: Visible,
    selected: usize,
    last_selected: Option<u32>,
    visible_rows: usize,
    label_times: bool,
    /// Label times are shown relative to this instead of the local clock (tests).
    now: Option<DateTime<FixedOffset>>,
    /// Entries whose tool call changed files (file checkpoints): marked `✎` in the row.
    file_changes: std::collections::HashSet<String>,
    /// The entry marked with Shift+M: Shift+D compares it with the selected one.
    diff_mark: Option<u32>,
}

impl TreeSelector {
    /// pi's list height for a terminal: half its rows, at least 5.
    pub fn rows_for_terminal(terminal_rows: usize) -> usize {
        (terminal_rows / 2).max(5)
    }

    pub fn new(snapshot: TreeSnapshot, options: TreeSelectorOptions) -> Self {
        let tree = &snapshot.tree;
        let leaf = snapshot.leaf.as_ref().and_then(|id| find(tree, id));
        let flat = FlatOrder::new(tree, leaf.map(|l| l as usize));
        let class = tree.nodes().iter().map(|n| NodeClass::of(n.kind)).collect();
        let always_hidden = snapshot
            .outlines
            .iter()
            .enumerate()
            .map(|(i, outline)| {
                // `usage` entries are never listed (pi 1.6).
                tree.nodes()[i].kind == EntryKind::Usage
                    || (leaf != Some(i as u32)
                        && matches!(outline, EntryOutline::Message(MessageOutline::Assistant(a))
                            if !a.has_text && a.ending == TurnEnding::Normal))
            })
            .collect();
        let labels = tree
            .nodes()
            .iter()
            .map(|n| {
                n.label.as_ref().map(|text| {
                    Box::new(NodeLabel {
                        text: text.clone(),
                        timestamp: n.label_timestamp.clone(),
                    })
                })
            })
            .collect();
        let initial = options
            .initial_selection
            .as_ref()
            .and_then(|id| find(tree, id))
            .or(leaf);
        let mut selector = TreeSelector {
            snap: snapshot,
            flat,
            leaf,
            class,
            always_hidden,
            labels,
            filter: options.filter,
            query: String::new(),
            search: Search::default(),
            folded: Vec::new(),
            view: Visible::default(),
            selected: 0,
            last_selected: None,
            visible_rows: options.visible_rows.max(1),
            label_times: false,
            now: None,
            file_changes: std::collections::HashSet::new(),
            diff_mark: None,
        };
        selector.apply_filter();
        selector.selected = selector.nearest_visible_row(initial);
        selector.last_selected = selector.view.rows.get(selector.selected).copied();
        selector
    }

    /// Rebuilds from a newer snapshot of the same session, keeping the filter, the
    /// search, folds and the selection.
    pub fn refresh(&mut self, snapshot: TreeSnapshot) {
        let folded: Vec<EntryId> = self.folded.iter().map(|&i| self.id(i).clone()).collect();
        let mut next = TreeSelector::new(
            snapshot,
            TreeSelectorOptions {
                visible_rows: self.visible_rows,
                filter: self.filter,
                initial_selection: self.selected_id().cloned(),
            },
        );
        next.query = std::mem::take(&mut self.query);
        next.label_times = self.label_times;
        next.now = self.now;
        next.file_changes = std::mem::take(&mut self.file_changes);
        next.diff_mark = self
            .diff_mark
            .and_then(|i| find(&next.snap.tree, self.id(i)));
        next.folded = folded
            .iter()
            .filter_map(|id| find(&next.snap.tree, id))
            .collect();
        next.apply_filter();
        *self = next;
    }

    /// Marks the entries (by id) whose tool call changed files.
    pub fn set_file_changes(&mut self, ids: std::collections::HashSet<String>) {
        self.file_changes = ids;
    }

    /// The entry marked for a diff between two entries (Shift+M), if any.
    pub fn diff_mark(&self) -> Option<&EntryId> {
        self.diff_mark.map(|i| self.id(i))
    }

    /// Whether the row of entry `i` is the one marked for a diff.
    fn is_diff_mark(&self, i: u32) -> bool {
        self.diff_mark == Some(i)
    }

    /// Whether the row of entry `i` carries the file-change marker.
    fn changed_files(&self, i: u32) -> bool {
        !self.file_changes.is_empty() && self.file_changes.contains(self.id(i).as_str())
    }

    /// Label times are shown relative to `now` instead of the local clock.
    pub fn set_now(&mut self, now: DateTime<FixedOffset>) {
        self.now = Some(now);
    }

    /// Changes the list height (the terminal was resized).
    pub fn set_visible_rows(&mut self, rows: usize) {
        self.visible_rows = rows.max(1);
    }

    /// Records a label change the app saved (`None` or empty clears the label).
    pub fn set_label(&mut self, entry: &EntryId, label: Option<&str>, timestamp: Option<&str>) {
        let Some(i) = find(&self.snap.tree, entry) else {
            return;
        };
        self.labels[i as usize] = label.filter(|l| !l.is_empty()).map(|text| {
            Box::new(NodeLabel {
                text: text.to_string(),
                timestamp: timestamp.map(str::to_string),
            })
        });
        self.search.forget_results();
        if self.filter == FilterMode::LabeledOnly || !self.query.is_empty() {
            self.apply_filter();
        }
    }

    /// Whether the session has no entries (the app says "No entries in session").
    pub fn is_empty(&self) -> bool {
        self.snap.is_empty()
    }

    pub fn filter_mode(&self) -> FilterMode {
        self.filter
    }

    pub fn query(&self) -> &str {
        &self.query
    }

    /// Number of rows the current filter and search let through.
    pub fn visible_count(&self) -> usize {
        self.view.len()
    }

    /// The entry under the cursor.
    pub fn selected_id(&self) -> Option<&EntryId> {
        self.view.rows.get(self.selected).map(|&i| self.id(i))
    }

    fn id(&self, i: u32) -> &EntryId {
        &self.snap.tree.node(i as usize).id
    }

    // ----- filtering -----

    fn passes_filter(&self, i: usize) -> bool {
        let class = self.class[i];
        match self.filter {
            FilterMode::Default => class != NodeClass::Settings,
            FilterMode::NoTools => class != NodeClass::Settings && class != NodeClass::ToolResult,
            FilterMode::UserOnly => class == NodeClass::User,
            FilterMode::LabeledOnly => self.labels[i].is_some(),
            FilterMode::All => true,
        }
    }

    /// pi's `applyFilter`: recompute the rows and keep the cursor on the same entry (or
    /// its nearest shown ancestor). The last selection survives an empty list.
    fn apply_filter(&mut self) {
        if let Some(&i) = self.view.rows.get(self.selected) {
            self.last_selected = Some(i);
        }
        let n = self.snap.len();
        let words = query_words(&self.query);
        let mut shown: Vec<bool> = (0..n)
            .map(|i| !self.always_hidden[i] && self.passes_filter(i))
            .collect();
        if !words.is_empty() {
            let labels = &self.labels;
            let matches = self.search.matches(&words, &self.snap.outlines, |i| {
                labels[i].as_ref().map(|l| l.text.to_lowercase())
            });
            for (i, s) in shown.iter_mut().enumerate() {
                *s = *s && matches.contains(i);
            }
        }
        self.flat.hide_folded(&self.folded, &mut shown);
        self.view = Visible::build(&self.flat, &shown);
        if self.last_selected.is_some() {
            self.selected = self.nearest_visible_row(self.last_selected);
        } else if self.selected >= self.view.len() {
            self.selected = self.view.len().saturating_sub(1);
        }
        if let Some(&i) = self.view.rows.get(self.selected) {
            self.last_selected = Some(i);
        }
    }

    /// The row of `entry` or of its nearest shown ancestor; the last row otherwise.
    fn nearest_visible_row(&self, entry: Option<u32>) -> usize {
        if self.view.is_empty() {
            return 0;
        }
        let mut cur = entry.unwrap_or(NONE);
        for _ in 0..=self.snap.len() {
            if cur == NONE {
                break;
            }
            let row = self.view.row_of[cur as usize];
            if row != NONE {
                return row as usize;
            }
            cur = self.flat.parent[cur as usize];
        }
        self.view.len() - 1
    }

    fn set_filter(&mut self, mode: FilterMode) {
        self.filter = mode;
        self.folded.clear();
        self.apply_filter();
    }

    fn set_query(&mut self, query: String) {
        self.query = query;
        self.folded.clear();
        self.apply_filter();
    }

    // ----- keys -----

    /// Handles one key (keys from the user's keybindings, as pi's action ids).
    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> TreeOutcome {
        if key.kind == KeyEventKind::Release {
            return TreeOutcome::None;
        }
        // pi checks the actions in this order, which decides shared keys.
        const ACTIONS: &[Action] = &[
            Action::SelectUp,
            Action::SelectDown,
            Action::TreeFoldOrUp,
            Action::TreeUnfoldOrDown,
            Action::CursorLeft,
            Action::SelectPageUp,
            Action::CursorRight,
            Action::SelectPageDown,
            Action::SelectConfirm,
            Action::SelectCancel,
            Action::TreeFilterDefault,
            Action::TreeFilterNoTools,
            Action::TreeFilterUserOnly,
            Action::TreeFilterLabeledOnly,
            Action::TreeFilterAll,
            Action::TreeFilterCycleBackward,
            Action::TreeFilterCycleForward,
            Action::DeleteCharBackward,
            Action::TreeEditLabel,
            Action::TreeToggleLabelTimestamp,
        ];
        let len = self.view.len();
        let shifted = |c: char| {
            key.code == KeyCode::Char(c)
                && key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
                && keys.action_for(key, ACTIONS).is_none()
        };
        if shifted('D') {
            if let Some(&i) = self.view.rows.get(self.selected) {
                let from = self
                    .diff_mark
                    .filter(|&m| m != i)
                    .map(|m| self.id(m).clone());
                return TreeOutcome::ShowDiff {
                    from,
                    to: self.id(i).clone(),
                };
            }
            return TreeOutcome::None;
        }
        if shifted('M') {
            if let Some(&i) = self.view.rows.get(self.selected) {
                self.diff_mark = if self.diff_mark == Some(i) {
                    None
                } else {
                    Some(i)
                };
            }
            return TreeOutcome::None;
        }
        let Some(action) = keys.action_for(key, ACTIONS) else {
            return self.type_key(key);
        };
        match action {
            Action::SelectUp if len > 0 => {
                self.selected = if self.selected == 0 {
                    len - 1
                } else {
                    self.selected - 1
                };
            }
            Action::SelectDown if len > 0 => {
                self.selected = if self.selected + 1 >= len {
                    0
                } else {
                    self.selected + 1
                };
            }
            Action::TreeFoldOrUp if len > 0 => self.fold_or_up(),
            Action::TreeUnfoldOrDown if len > 0 => self.unfold_or_down(),
            Action::CursorLeft | Action::SelectPageUp => {
                self.selected = self.selected.saturating_sub(self.visible_rows);
            }
            Action::CursorRight | Action::SelectPageDown => {
                self.selected = (self.selected + self.visible_rows).min(len.saturating_sub(1));
            }
            Action::SelectConfirm => {
                if let Some(&i) = self.view.rows.get(self.selected) {
                    return if Some(i) == self.leaf {
                        TreeOutcome::AlreadyAtLeaf
                    } else {
                        TreeOutcome::Selected(self.id(i).clone())
                    };
                }
            }
            Action::SelectCancel => {
                if self.query.is_empty() {
                    return TreeOutcome::Cancelled;
                }
                self.set_query(String::new());
            }
            Action::TreeFilterDefault => self.set_filter(FilterMode::Default),
            Action::TreeFilterNoTools => self.set_filter(self.filter.toggled(FilterMode::NoTools)),
            Action::TreeFilterUserOnly => {
                self.set_filter(self.filter.toggled(FilterMode::UserOnly));
            }
            Action::TreeFilterLabeledOnly => {
                self.set_filter(self.filter.toggled(FilterMode::LabeledOnly));
            }
            Action::TreeFilterAll => self.set_filter(self.filter.toggled(FilterMode::All)),
            Action::TreeFilterCycleBackward => self.set_filter(self.filter.cycled(false)),
            Action::TreeFilterCycleForward => self.set_filter(self.filter.cycled(true)),
            Action::DeleteCharBackward if !self.query.is_empty() => {
                let mut query = std::mem::take(&mut self.query);
                query.pop();
                self.set_query(query);
            }
            Action::TreeEditLabel => {
                if let Some(&i) = self.view.rows.get(self.selected) {
                    let current = self.labels[i as usize].as_ref().map(|l| l.text.clone());
                    return TreeOutcome::EditLabel(self.id(i).clone(), current);
                }
            }
            Action::TreeToggleLabelTimestamp => self.label_times = !self.label_times,
            _ => {}
        }
        TreeOutcome::None
    }

    /// A printable character extends the search.
    fn type_key(&mut self, key: &KeyEvent) -> TreeOutcome {
        if let KeyCode::Char(c) = key.code
            && key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
            && !c.is_control()
        {
            let mut query = std::mem::take(&mut self.query);
            query.push(c);
            self.set_query(query);
        }
        TreeOutcome::None
    }

    fn fold_or_up(&mut self) {
        let row = self.selected as u32;
        let i = self.view.rows[self.selected];
        if self.view.is_foldable(row) && !self.folded.contains(&i) {
            self.folded.push(i);
            self.apply_filter();
        } else {
            self.selected = self.view.segment_start_above(row) as usize;
        }
    }

    fn unfold_or_down(&mut self) {
        let i = self.view.rows[self.selected];
        if let Some(at) = self.folded.iter().position(|&f| f == i) {
            self.folded.remove(at);
            self.apply_filter();
        } else {
            self.selected = self.view.segment_start_below(self.selected as u32) as usize;
        }
    }
}

/// The position of an entry in the tree (the last one with that id, as lookups in the
/// session do).
fn find(tree: &crate::session::tree::SessionTree, id: &EntryId) -> Option<u32> {
    tree.nodes()
        .iter()
        .rposition(|n| &n.id == id)
        .map(|i| i as u32)
}
