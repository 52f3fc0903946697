//! The session tree as the export shows it: every entry of every branch, in the order and
//! with the connectors of pi's `/tree` view.
//!
//! [`SessionTree::build`] indexes the entries (children by `parentId`, sorted by time, the
//! branch holding the leaf first) and repairs what a damaged file can contain: an entry
//! whose parent is missing, or that is its own parent, becomes a root; a parent cycle is
//! cut; a repeated id keeps its first entry. [`layout`] turns a set of visible entries into
//! rows with `├─`/`└─`/`│` prefixes; the page's script runs the same algorithm again when
//! the reader changes the filter or searches, so both must stay in step
//! (`assets/export.js`, function `layout`).

use std::collections::{HashMap, HashSet};

use crate::ai::message::StopReason;
use crate::messages::{AgentMessage, iso_to_ms};
use crate::session::entry::{EntryId, SessionEntry};

/// The sidebar's filter modes (pi's `/tree` filters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    /// Everything but bookkeeping entries (labels, model/thinking changes, extension
    /// state, session info) and assistant turns that only call tools.
    Default,
    /// Default without tool results.
    NoTools,
    /// Only user messages.
    User,
    /// Only labeled entries.
    Labeled,
    /// Every entry.
    All,
}

impl FilterMode {
    pub const ALL: [FilterMode; 5] = [
        FilterMode::Default,
        FilterMode::NoTools,
        FilterMode::User,
        FilterMode::Labeled,
        FilterMode::All,
    ];

    /// The name used in the page (`data-filter`, `#filter=`).
    pub fn name(self) -> &'static str {
        match self {
            FilterMode::Default => "default",
            FilterMode::NoTools => "no-tools",
            FilterMode::User => "user",
            FilterMode::Labeled => "labeled",
            FilterMode::All => "all",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            FilterMode::Default => "Default",
            FilterMode::NoTools => "No-tools",
            FilterMode::User => "User",
            FilterMode::Labeled => "Labeled",
            FilterMode::All => "All",
        }
    }
}

/// What a filter needs to know about one entry (also written into the page as flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeFlags {
    /// Bookkeeping: label, custom, model_change, thinking_level_change, session_info.
    pub settings: bool,
    pub tool_result: bool,
    pub user: bool,
    pub labeled: bool,
    /// An assistant turn with no text that ended normally (it only called tools).
    pub quiet: bool,
}

impl NodeFlags {
    pub fn passes(self, mode: FilterMode) -> bool {
        match mode {
            FilterMode::Default => !self.settings && !self.quiet,
            FilterMode::NoTools => !self.settings && !self.quiet && !self.tool_result,
            FilterMode::User => self.user,
            FilterMode::Labeled => self.labeled,
            FilterMode::All => true,
        }
    }

    /// Space-separated flag letters for the page's script (`s t u l q`).
    pub fn code(self) -> String {
        let mut parts = Vec::new();
        for (on, letter) in [
            (self.settings, "s"),
            (self.tool_result, "t"),
            (self.user, "u"),
            (self.labeled, "l"),
            (self.quiet, "q"),
        ] {
            if on {
                parts.push(letter);
            }
        }
        parts.join(" ")
    }
}

/// The indexed tree. Nodes are numbered in file order.
#[derive(Debug)]
pub struct SessionTree<'a> {
    pub entries: Vec<&'a SessionEntry>,
    /// Tree parent of each node (after repairs).
    pub parent: Vec<Option<usize>>,
    pub children: Vec<Vec<usize>>,
    pub roots: Vec<usize>,
    /// Every node, parents before children, siblings in display order.
    pub preorder: Vec<usize>,
    /// The node shown when the page opens: the session's leaf, else the last entry.
    pub leaf: Option<usize>,
    pub index_of: HashMap<&'a str, usize>,
    /// Current label of each labeled entry id.
    pub labels: HashMap<&'a str, &'a str>,
}

impl<'a> SessionTree<'a> {
    pub fn build(entries: &'a [SessionEntry], leaf_id: Option<&EntryId>) -> Self {
        let mut nodes: Vec<&SessionEntry> = Vec::with_capacity(entries.len());
        let mut index_of: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
        for entry in entries {
            let id = entry.id();
            if id.is_empty() || index_of.contains_key(id) {
                continue;
            }
            index_of.insert(id, nodes.len());
            nodes.push(entry);
        }
        let n = nodes.len();

        let mut parent: Vec<Option<usize>> = nodes
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.parent_id()
                    .and_then(|p| index_of.get(p).copied())
                    .filter(|&p| p != i)
            })
            .collect();
        cut_cycles(&mut parent);

        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }

        let leaf = leaf_id
            .and_then(|id| index_of.get(id.as_str()).copied())
            .or_else(|| n.checked_sub(1));
        let mut on_leaf_path = vec![false; n];
        let mut cur = leaf;
        while let Some(i) = cur {
            on_leaf_path[i] = true;
            cur = parent[i];
        }
        let times: Vec<i64> = nodes.iter().map(|e| iso_to_ms(e.timestamp())).collect();
        // Oldest first, then the branch that holds the leaf before its siblings (stable
        // sorts, so equal timestamps keep file order), as pi's tree view does.
        let order = |list: &mut Vec<usize>| {
            list.sort_by_key(|&c| times[c]);
            list.sort_by_key(|&c| !on_leaf_path[c]);
        };
        for list in &mut children {
            order(list);
        }
        order(&mut roots);

        let mut preorder = Vec::with_capacity(n);
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            preorder.push(i);
            stack.extend(children[i].iter().rev());
        }

        let mut labels: HashMap<&str, &str> = HashMap::new();
        for entry in entries {
            if let SessionEntry::Label(l) = entry {
                match l.label.as_deref().filter(|s| !s.trim().is_empty()) {
                    Some(label) => labels.insert(l.target_id.as_str(), label),
                    None => labels.remove(l.target_id.as_str()),
                };
            }
        }

        SessionTree {
            entries: nodes,
            parent,
            children,
            roots,
            preorder,
            leaf,
            index_of,
            labels,
        }
    }

    pub fn id(&self, node: usize) -> &'a str {
        self.entries[node].id()
    }

    pub fn label(&self, node: usize) -> Option<&'a str> {
        self.labels.get(self.id(node)).copied()
    }

    /// Nodes from the root down to `node`.
    pub fn path_to(&self, node: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cur = Some(node);
        while let Some(i) = cur {
            path.push(i);
            cur = self.parent[i];
        }
        path.reverse();
        path
    }

    pub fn flags(&self, node: usize) -> NodeFlags {
        let entry = self.entries[node];
        let settings = matches!(
            entry,
            SessionEntry::Label(_)
                | SessionEntry::Custom(_)
                | SessionEntry::ModelChange(_)
                | SessionEntry::ThinkingLevelChange(_)
                | SessionEntry::SessionInfo(_)
        );
        let message = entry.message();
        let quiet = match message {
            Some(AgentMessage::Assistant(a)) => {
                a.text().trim().is_empty()
                    && matches!(a.stop_reason, StopReason::Stop | StopReason::ToolUse)
            }
            _ => false,
        };
        NodeFlags {
            settings,
            tool_result: matches!(message, Some(AgentMessage::ToolResult(_))),
            user: matches!(message, Some(AgentMessage::User(_))),
            labeled: self.label(node).is_some(),
            quiet,
        }
    }

    /// Which nodes the sidebar shows under `mode`: the filter's choice plus the leaf.
    pub fn visible(&self, mode: FilterMode) -> Vec<bool> {
        (0..self.entries.len())
            .map(|i| Some(i) == self.leaf || self.flags(i).passes(mode))
            .collect()
    }
}

/// Removes one parent link from every cycle, so that every node reaches a root.
fn cut_cycles(parent: &mut [Option<usize>]) {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        OnWalk,
        Done,
    }
    let mut seen = vec![Seen::No; parent.len()];
    let mut walk = Vec::new();
    for start in 0..parent.len() {
        let mut cur = start;
        loop {
            match seen[cur] {
                Seen::Done => break,
                Seen::OnWalk => {
                    parent[cur] = None;
                    break;
                }
                Seen::No => {}
            }
            seen[cur] = Seen::OnWalk;
            walk.push(cur);
            match parent[cur] {
                Some(p) => cur = p,
                None => break,
            }
        }
        for i in walk.drain(..) {
            seen[i] = Seen::Done;
        }
    }
}

/// One sidebar row as laid out for a filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub node: usize,
    /// Box-drawing indentation before the entry text.
    pub prefix: String,
}

/// Lays out the visible nodes like pi's tree view: a chain of single children stays at
/// one indentation level, the children of a node with several get `├─ `/`└─ ` connectors
/// one level deeper, and `│` gutters continue unfinished branches. Hidden entries are
/// skipped and their visible descendants attach to the nearest visible ancestor.
pub fn layout(tree: &SessionTree<'_>, visible: &[bool]) -> Vec<Row> {
    // Visible children of each visible node (and of the virtual root), in display order.
    let mut vis_children: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    for &node in &tree.preorder {
        if !visible[node] {
            continue;
        }
        let mut anc = tree.parent[node];
        while let Some(a) = anc {
            if visible[a] {
                break;
            }
            anc = tree.parent[a];
        }
        vis_children.entry(anc).or_default().push(node);
    }
    let empty = Vec::new();
    let roots = vis_children.get(&None).unwrap_or(&empty);
    let multiple_roots = roots.len() > 1;

    struct Item {
        node: usize,
        indent: usize,
        just_branched: bool,
        show_connector: bool,
        is_last: bool,
        gutters: Vec<(usize, bool)>,
        virtual_root_child: bool,
    }
    let mut stack: Vec<Item> = roots
        .iter()
        .enumerate()
        .rev()
        .map(|(i, &node)| Item {
            node,
            indent: usize::from(multiple_roots),
            just_branched: multiple_roots,
            show_connector: multiple_roots,
            is_last: i + 1 == roots.len(),
            gutters: Vec::new(),
            virtual_root_child: multiple_roots,
        })
        .collect();

    let mut rows = Vec::new();
    let mut seen = HashSet::new();
    while let Some(item) = stack.pop() {
        if !seen.insert(item.node) {
            continue;
        }
        let display_indent = if multiple_roots {
            item.indent.saturating_sub(1)
        } else {
            item.indent
        };
        let connector = item.show_connector && !item.virtual_root_child;
        rows.push(Row {
            node: item.node,
            prefix: prefix(display_indent, connector, item.is_last, &item.gutters),
        });

        let kids = vis_children.get(&Some(item.node)).unwrap_or(&empty);
        let branching = kids.len() > 1;
        let child_indent = if branching || (item.just_branched && item.indent > 0) {
            item.indent + 1
        } else {
            item.indent
        };
        let mut child_gutters = item.gutters.clone();
        if connector {
            child_gutters.push((display_indent.saturating_sub(1), !item.is_last));
        }
        for (i, &kid) in kids.iter().enumerate().rev() {
            stack.push(Item {
                node: kid,
                indent: child_indent,
                just_branched: branching,
                show_connector: branching,
                is_last: i + 1 == kids.len(),
                gutters: child_gutters.clone(),
                virtual_root_child: false,
            });
        }
    }
    rows
}

fn prefix(
    display_indent: usize,
    connector: bool,
    is_last: bool,
    gutters: &[(usize, bool)],
) -> String {
    let connector_level = if connector {
        display_indent.checked_sub(1)
    } else {
        None
    };
    let mut out = String::with_capacity(display_indent * 3);
    for level in 0..display_indent {
        if let Some(&(_, show)) = gutters.iter().find(|(pos, _)| *pos == level) {
            out.push_str(if show { "│  " } else { "   " });
        } else if connector_level == Some(level) {
            out.push_str(if is_last { "└─ " } else { "├─ " });
        } else {
            out.push_str("   ");
        }
    }
    out
}
