//! The tree index of a session: one small fixed-size node per entry (id, resolved
//! parent, kind, time, where its line is), the id lookup table, labels and the session
//! name in side tables — built from a file's bytes with the cheap line scanner, without
//! parsing any message. Its size follows the number of entries, never their text.
//!
//! Everything that walks the tree (paths, children, [`SessionTree`]) works on this index,
//! so opening and navigating a 40 MB session touches only a few megabytes. Typed entries
//! are parsed elsewhere, on demand.
//!
//! Damaged trees never hang a walk: parents are resolved once, when the index is built.
//! A `parentId` naming no entry makes an orphan, which is a root (as in pi). With
//! duplicate ids the last entry in the file wins lookups (as pi's `Map`). A parent cycle is
//! cut at the entry of the cycle that comes first in the file, which becomes a root.

use std::collections::HashMap;

use once_cell::race::OnceBox;

use crate::session::clock::iso_ms;
use crate::session::entry::{EntryId, SessionEntry};
use crate::session::id_table::{IdKey, IdTable, hex_value};
use crate::session::ids::IdHash;
use crate::session::scan::{LineScan, scan_line};
use crate::session::store::{LineRef, split_lines};

/// Resolved "no parent".
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// The role of a `message` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageRole {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    /// `custom` (v3) — `hookMessage` in v2 files is migrated to this.
    Custom,
    /// `system` (pi 1.6): prompt sections and tool declarations.
    System,
    /// A role we do not know, or none.
    Other,
}

impl MessageRole {
    pub fn from_role(role: &str) -> Self {
        match role {
            "user" => MessageRole::User,
            "assistant" => MessageRole::Assistant,
            "toolResult" => MessageRole::ToolResult,
            "bashExecution" => MessageRole::BashExecution,
            "custom" => MessageRole::Custom,
            "system" => MessageRole::System,
            _ => MessageRole::Other,
        }
    }
}

/// What an entry is, known without parsing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    Message(MessageRole),
    ThinkingLevelChange,
    ModelChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    ContextEdit,
    Usage,
    /// An entry type we do not know (kept as it is).
    Other,
}

impl EntryKind {
    /// From pi's `type` string and, for messages, the role.
    pub fn from_type(kind: &str, role: Option<&str>) -> Self {
        match kind {
            "message" => {
                EntryKind::Message(role.map_or(MessageRole::Other, MessageRole::from_role))
            }
            "thinking_level_change" => EntryKind::ThinkingLevelChange,
            "model_change" => EntryKind::ModelChange,
            "compaction" => EntryKind::Compaction,
            "branch_summary" => EntryKind::BranchSummary,
            "custom" => EntryKind::Custom,
            "custom_message" => EntryKind::CustomMessage,
            "label" => EntryKind::Label,
            "session_info" => EntryKind::SessionInfo,
            "context_edit" => EntryKind::ContextEdit,
            "usage" => EntryKind::Usage,
            _ => EntryKind::Other,
        }
    }

    /// The kind of a parsed entry (an entry we could not read fully is classified by its
    /// `type` and `message.role` fields, like the index does).
    pub fn of(entry: &SessionEntry) -> Self {
        match entry {
            SessionEntry::Message(m) => {
                EntryKind::Message(MessageRole::from_role(m.message.role()))
            }
            SessionEntry::ThinkingLevelChange(_) => EntryKind::ThinkingLevelChange,
            SessionEntry::ModelChange(_) => EntryKind::ModelChange,
            SessionEntry::Compaction(_) => EntryKind::Compaction,
            SessionEntry::BranchSummary(_) => EntryKind::BranchSummary,
            SessionEntry::Custom(_) => EntryKind::Custom,
            SessionEntry::CustomMessage(_) => EntryKind::CustomMessage,
            SessionEntry::Label(_) => EntryKind::Label,
            SessionEntry::SessionInfo(_) => EntryKind::SessionInfo,
            SessionEntry::ContextEdit(_) => EntryKind::ContextEdit,
            SessionEntry::Usage(_) => EntryKind::Usage,
            SessionEntry::Unknown(v) => EntryKind::from_type(
                v.get("type").and_then(|t| t.as_str()).unwrap_or(""),
                v.get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(|r| r.as_str()),
            ),
        }
    }

    pub fn is_assistant(self) -> bool {
        self == EntryKind::Message(MessageRole::Assistant)
    }

    /// A user or assistant message (pi 1.6's `_hasConversation`).
    pub fn is_conversation(self) -> bool {
        matches!(
            self,
            EntryKind::Message(MessageRole::User | MessageRole::Assistant)
        )
    }
}

/// One entry in the index: 40 bytes (a unit test holds it to that), so a 100,000-turn
/// session's half a million entries cost about 20 MB. The id is an [`IdKey`] (its text,
/// when it is not pi-shaped, is in the index's [`IdTable`]), the line a file offset and a
/// 32-bit length.
#[derive(Debug)]
pub(crate) struct Node {
    /// The `IdKey` value (`Hex` or `Other` by [`OTHER_ID`]).
    key: u32,
    pub parent: u32,
    line_len: u32,
    pub kind: EntryKind,
    flags: u8,
    /// Byte offset of the line in the base text, or the appended line's number.
    line_start: u64,
    /// Epoch ms of the entry timestamp; `i64::MIN` when unreadable (sorts first).
    pub ts_ms: i64,
    /// The typed entry, parsed the first time someone asks for it.
    pub parsed: OnceBox<SessionEntry>,
}

/// [`Node::flags`]: the key is `IdKey::Other`.
const OTHER_ID: u8 = 1;
/// [`Node::flags`]: the line was appended in this process.
const APPENDED: u8 = 2;

impl Node {
    /// A node without a parent; `None` when its line is longer than 4 GiB (no JSON reader
    /// of pi's could read such a line either).
    fn new(key: IdKey, kind: EntryKind, ts_ms: i64, line: LineRef) -> Option<Node> {
        let (key, mut flags) = match key {
            IdKey::Hex(v) => (v, 0),
            IdKey::Other(n) => (n, OTHER_ID),
        };
        let (line_start, line_len) = match line {
            LineRef::Base { start, len } => (start as u64, u32::try_from(len).ok()?),
            LineRef::Appended(n) => {
                flags |= APPENDED;
                (n as u64, 0)
            }
        };
        Some(Node {
            key,
            parent: NO_PARENT,
            line_len,
            kind,
            flags,
            line_start,
            ts_ms,
            parsed: OnceBox::new(),
        })
    }

    pub fn parent(&self) -> Option<u32> {
        (self.parent != NO_PARENT).then_some(self.parent)
    }

    pub fn key(&self) -> IdKey {
        if self.flags & OTHER_ID == 0 {
            IdKey::Hex(self.key)
        } else {
            IdKey::Other(self.key)
        }
    }

    /// Where the entry's line is.
    pub fn line(&self) -> LineRef {
        if self.flags & APPENDED == 0 {
            LineRef::Base {
                start: usize::try_from(self.line_start).unwrap_or(usize::MAX),
                len: self.line_len as usize,
            }
        } else {
            LineRef::Appended(usize::try_from(self.line_start).unwrap_or(usize::MAX))
        }
    }
}

/// The current label of an entry.
#[derive(Debug, Clone)]
pub(crate) struct LabelState {
    pub label: String,
    pub timestamp: String,
    /// Insertion order, like a JS `Map` (re-setting keeps the place, clearing removes it).
    order: u64,
}

/// What building the index found that a user should hear about.
#[derive(Debug, Default)]
pub(crate) struct BuildReport {
    pub malformed: usize,
    pub first_malformed_line: usize,
    pub not_entries: usize,
    pub first_not_entry_line: usize,
    pub truncated_last_line: Option<usize>,
    pub duplicate_ids: usize,
    pub duplicate_example: Option<EntryId>,
    pub cycles: usize,
    pub cycle_example: Option<EntryId>,
    /// Entries of a type, or messages of a role, we do not know: how many, the first
    /// line, and the distinct names (`type` or `message/<role>`), a few at most.
    pub unknown: usize,
    pub first_unknown_line: usize,
    pub unknown_names: Vec<String>,
    /// `role:"system"` messages whose sections or tool lists cannot be read.
    pub bad_system: usize,
    pub first_bad_system_line: usize,
}

/// The tree index of one session.
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub nodes: Vec<Node>,
    ids: IdTable,
    labels: HashMap<EntryId, LabelState, IdHash>,
    label_order: u64,
    pub session_name: Option<String>,
    /// Whether a user or assistant message exists: the file is written from then on
    /// (pi 1.6 creates it at the first user message).
    pub has_conversation: bool,
}

impl Index {
    /// Indexes the lines of `buf` from byte `start` (just after the header line);
    /// `first_line_no` is the 1-based number of that line in the file.
    pub fn build(buf: &[u8], start: usize, first_line_no: usize) -> (Index, BuildReport) {
        let mut builder = IndexBuilder::default();
        let body = buf.get(start..).unwrap_or_default();
        for line in split_lines(body) {
            builder.add_line(
                &body[line.start..line.end],
                start + line.start,
                first_line_no + line.number,
                line.terminated,
            );
        }
        builder.finish()
    }

    /// Cuts every parent cycle at its entry that comes first in the file.
    fn cut_cycles(&mut self) -> (usize, Option<EntryId>) {
        const UNSEEN: u8 = 0;
        const WALKING: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![UNSEEN; self.nodes.len()];
        let mut walk: Vec<u32> = Vec::new();
        let mut count = 0;
        let mut example = None;
        for start in 0..self.nodes.len() {
            if state[start] != UNSEEN {
                continue;
            }
            walk.clear();
            let mut cur = start as u32;
            loop {
                match state[cur as usize] {
                    DONE => break,
                    WALKING => {
                        let from = walk.iter().rposition(|&n| n == cur).unwrap_or(0);
                        let cut = walk[from..].iter().copied().min().unwrap_or(cur);
                        self.nodes[cut as usize].parent = NO_PARENT;
                        count += 1;
                        example.get_or_insert_with(|| self.id_of(cut));
                        break;
                    }
                    _ => {}
                }
                state[cur as usize] = WALKING;
                walk.push(cur);
                match self.nodes[cur as usize].parent() {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            for &n in &walk {
                state[n as usize] = DONE;
            }
        }
        (count, example)
    }

    /// Adds an entry created in this process (its parent exists, so no cycle can form).
    pub fn push(
        &mut self,
        id: EntryId,
        parent: Option<u32>,
        kind: EntryKind,
        ts: &str,
        line: LineRef,
        parsed: SessionEntry,
    ) -> u32 {
        let idx = self.nodes.len() as u32;
        self.has_conversation |= kind.is_conversation();
        let key = self.ids.key_for(id.as_str());
        self.ids.insert(key, idx);
        let ts_ms = iso_ms(ts).unwrap_or(i64::MIN);
        // An appended line's reference always fits a node.
        let Some(mut node) = Node::new(key, kind, ts_ms, line) else {
            return idx;
        };
        node.parent = parent.unwrap_or(NO_PARENT);
        let _ = node.parsed.set(Box::new(parsed));
        self.nodes.push(node);
        idx
    }

    /// The id of node `idx`.
    pub fn id_of(&self, idx: u32) -> EntryId {
        self.ids.entry_id(self.nodes[idx as usize].key())
    }

    /// Whether node `idx` has the id `id` (no text is built for pi-shaped ids).
    pub fn id_is(&self, idx: u32, id: &str) -> bool {
        self.ids.is(self.nodes[idx as usize].key(), id)
    }

    /// Sets (non-empty) or clears the label of `target`, like pi's `labelsById`.
    pub fn apply_label(&mut self, target: &str, label: Option<&str>, timestamp: &str) {
        match label.filter(|l| !l.is_empty()) {
            Some(label) => {
                if let Some(state) = self.labels.get_mut(target) {
                    state.label = label.to_string();
                    state.timestamp = timestamp.to_string();
                } else {
                    self.label_order += 1;
                    self.labels.insert(
                        EntryId(target.to_string()),
                        LabelState {
                            label: label.to_string(),
                            timestamp: timestamp.to_string(),
                            order: self.label_order,
                        },
                    );
                }
            }
            None => {
                self.labels.remove(target);
            }
        }
    }

    pub fn label(&self, target: &str) -> Option<&LabelState> {
        self.labels.get(target)
    }

    /// Current labels in the order pi's `Map` would iterate them.
    pub fn labels_in_order(&self) -> Vec<(&EntryId, &LabelState)> {
        let mut labels: Vec<_> = self.labels.iter().collect();
        labels.sort_by_key(|(_, state)| state.order);
        labels
    }

    pub fn lookup(&self, id: &str) -> Option<u32> {
        self.ids.lookup(id)
    }

    /// Node indexes from the root down to `to` (inclusive).
    pub fn path_to(&self, to: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut cur = Some(to);
        // Parents are acyclic by construction; the bound only guards against a bug.
        while let Some(n) = cur {
            if path.len() > self.nodes.len() {
                break;
            }
            path.push(n);
            cur = self.nodes[n as usize].parent();
        }
        path.reverse();
        path
    }

    /// Direct children of `of`, in file order.
    pub fn children(&self, of: u32) -> Vec<u32> {
        (0..self.nodes.len() as u32)
            .filter(|&i| self.nodes[i as usize].parent == of)
            .collect()
    }

    /// The whole tree, children sorted oldest first, orphans as roots.
    pub fn tree(&self) -> SessionTree {
        let n = self.nodes.len();
        let mut counts = vec![0u32; n + 1];
        let mut roots = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            match node.parent() {
                Some(p) => counts[p as usize + 1] += 1,
                None => roots.push(i),
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut child_list = vec![0usize; n - roots.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(p) = node.parent() {
                let slot = &mut fill[p as usize];
                child_list[*slot as usize] = i;
                *slot += 1;
            }
        }
        let nodes: Vec<TreeNode> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| {
                let id = self.ids.entry_id(node.key());
                let label = if self.labels.is_empty() {
                    None
                } else {
                    self.labels.get(id.as_str())
                };
                TreeNode {
                    id,
                    parent: node.parent().map(|p| p as usize),
                    kind: node.kind,
                    timestamp_ms: node.ts_ms,
                    label: label.map(|l| l.label.clone()),
                    label_timestamp: label.map(|l| l.timestamp.clone()),
                    children: (counts[i], counts[i + 1]),
                }
            })
            .collect();
        for node in &nodes {
            let (a, b) = node.children;
            // Stable: children with the same time stay in file order.
            child_list[a as usize..b as usize].sort_by_key(|&c| nodes[c].timestamp_ms);
        }
        SessionTree {
            nodes,
            roots,
            child_list,
        }
    }
}

/// Builds an [`Index`] one line at a time, so a file can be indexed as it is read.
#[derive(Debug, Default)]
pub(crate) struct IndexBuilder {
    index: Index,
    report: BuildReport,
    /// The `parentId` of each node, resolved in [`IndexBuilder::finish`].
    parent_refs: Vec<ParentRef>,
    /// The text of `ParentRef::Other` references.
    other_parents: Vec<Box<str>>,
}

/// A `parentId` until every id is known: pi-shaped ids by value, others by position in
/// [`IndexBuilder::other_parents`].
#[derive(Debug, Clone, Copy)]
enum ParentRef {
    None,
    Hex(u32),
    Other(u32),
}

impl IndexBuilder {
    /// Adds one line (without its newline) found at byte `offset` of the base text;
    /// `line_no` is its 1-based number in the file, `terminated` whether a newline follows.
    pub fn add_line(&mut self, bytes: &[u8], offset: usize, line_no: usize, terminated: bool) {
        let report = &mut self.report;
        let head = match scan_line(bytes) {
            LineScan::Blank => return,
            LineScan::Malformed => {
                if terminated {
                    if report.malformed == 0 {
                        report.first_malformed_line = line_no;
                    }
                    report.malformed += 1;
                } else {
                    report.truncated_last_line = Some(line_no);
                }
                return;
            }
            LineScan::NotObject => {
                report.note_not_entry(line_no);
                return;
            }
            LineScan::Object(head) => head,
        };
        let kind_str = head.kind.as_deref().unwrap_or("");
        // Later session headers (pi's old duplicate-header bug) are not entries.
        if kind_str == "session" {
            return;
        }
        let Some(id) = head.id else {
            report.note_not_entry(line_no);
            return;
        };
        let ts_ms = head
            .timestamp
            .as_deref()
            .and_then(iso_ms)
            .unwrap_or(i64::MIN);
        let line = LineRef::Base {
            start: offset,
            len: bytes.len(),
        };
        let index = &mut self.index;
        let kind = EntryKind::from_type(kind_str, head.role.as_deref());
        match kind {
            EntryKind::Other => report.note_unknown(line_no, kind_str.to_string()),
            EntryKind::Message(MessageRole::Other) => report.note_unknown(
                line_no,
                format!("message/{}", head.role.as_deref().unwrap_or("")),
            ),
            EntryKind::Message(MessageRole::System) if !system_message_readable(bytes) => {
                if report.bad_system == 0 {
                    report.first_bad_system_line = line_no;
                }
                report.bad_system += 1;
            }
            _ => {}
        }
        let key = index.ids.key_for(&id);
        let Some(node) = Node::new(key, kind, ts_ms, line) else {
            // Longer than 4 GiB: no JSON reader of pi's reads such a line either.
            if report.malformed == 0 {
                report.first_malformed_line = line_no;
            }
            report.malformed += 1;
            return;
        };
        if kind == EntryKind::Label
            && let Some(target) = head.target_id.as_deref()
        {
            let timestamp = head.timestamp.as_deref().unwrap_or("");
            index.apply_label(target, head.label.as_deref(), timestamp);
        }
        if kind == EntryKind::SessionInfo {
            index.session_name = normalize_name(head.name.as_deref());
        }
        index.has_conversation |= kind.is_conversation();
        index.nodes.push(node);
        let parent = match head.parent_id.as_deref() {
            None => ParentRef::None,
            Some(p) => match hex_value(p) {
                Some(value) => ParentRef::Hex(value),
                None => {
                    self.other_parents.push(Box::from(p));
                    ParentRef::Other(self.other_parents.len() as u32 - 1)
                }
            },
        };
        self.parent_refs.push(parent);
    }

    /// Resolves parents, cuts cycles and returns the index with what was found.
    pub fn finish(self) -> (Index, BuildReport) {
        let IndexBuilder {
            mut index,
            mut report,
            parent_refs,
            other_parents,
        } = self;
        // Built once the count is known: growing it line by line costs several rehashes.
        let mut ids = std::mem::take(&mut index.ids).with_hex_capacity(index.nodes.len());
        for (idx, node) in index.nodes.iter().enumerate() {
            if let Some(previous) = ids.insert(node.key(), idx as u32) {
                report.duplicate_ids += 1;
                report
                    .duplicate_example
                    .get_or_insert_with(|| ids.entry_id(index.nodes[previous as usize].key()));
            }
        }
        index.ids = ids;
        for (i, parent) in parent_refs.into_iter().enumerate() {
            let p = match parent {
                ParentRef::None => None,
                ParentRef::Hex(value) => index.ids.lookup_key(IdKey::Hex(value)),
                ParentRef::Other(n) => other_parents
                    .get(n as usize)
                    .and_then(|text| index.ids.lookup(text)),
            };
            // pi's getTree: a parentId equal to the entry's own id makes a root (the
            // lookup finds the last entry with that id, which may be this one).
            if let Some(p) = p
                && p as usize != i
                && !same_id(&index, p, i as u32)
            {
                index.nodes[i].parent = p;
            }
        }
        let (cycles, example) = index.cut_cycles();
        report.cycles = cycles;
        report.cycle_example = example;
        (index, report)
    }
}

/// Whether nodes `a` and `b` carry the same id.
fn same_id(index: &Index, a: u32, b: u32) -> bool {
    let (ka, kb) = (index.nodes[a as usize].key(), index.nodes[b as usize].key());
    match (ka, kb) {
        (IdKey::Hex(x), IdKey::Hex(y)) => x == y,
        (IdKey::Other(_), IdKey::Other(_)) => index.ids.text(ka) == index.ids.text(kb),
        _ => false,
    }
}

/// Whether a `role:"system"` message line reads as a well-formed system message (these
/// are few, so parsing them whole costs nothing).
fn system_message_readable(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Envelope {
        message: crate::messages::SystemMessage,
    }
    serde_json::from_slice::<Envelope>(line).is_ok_and(|e| e.message.is_well_formed())
}

/// At most this many distinct unknown names are listed in a load warning.
const UNKNOWN_NAMES: usize = 5;

impl BuildReport {
    fn note_unknown(&mut self, line_no: usize, name: String) {
        if self.unknown == 0 {
            self.first_unknown_line = line_no;
        }
        self.unknown += 1;
        if self.unknown_names.len() < UNKNOWN_NAMES && !self.unknown_names.contains(&name) {
            self.unknown_names.push(name);
        }
    }

    fn note_not_entry(&mut self, line_no: usize) {
        if self.not_entries == 0 {
            self.first_not_entry_line = line_no;
        }
        self.not_entries += 1;
    }
}

/// pi's `name?.trim() || undefined`.
pub(crate) fn normalize_name(name: Option<&str>) -> Option<String> {
    name.map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

/// A snapshot of a session's tree, for `/tree` and rendering. Node indexes are positions
/// in [`SessionTree::nodes`] (file order).
#[derive(Debug, Clone)]
pub struct SessionTree {
    nodes: Vec<TreeNode>,
    roots: Vec<usize>,
    child_list: Vec<usize>,
}

/// One entry of a [`SessionTree`].
#[derive(Debug, Clone)]
pub struct TreeNode {
    pub id: EntryId,
    pub parent: Option<usize>,
    pub kind: EntryKind,
    /// Entry time in epoch ms (`i64::MIN` when unreadable).
    pub timestamp_ms: i64,
    pub label: Option<String>,
    /// When the label was set (the label entry's timestamp).
    pub label_timestamp: Option<String>,
    children: (u32, u32),
}

impl SessionTree {
    /// Entries without a (resolvable) parent, in file order.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    pub fn nodes(&self) -> &[TreeNode] {
        &self.nodes
    }

    pub fn node(&self, index: usize) -> &TreeNode {
        &self.nodes[index]
    }

    /// Children of a node, oldest first.
    pub fn children(&self, index: usize) -> &[usize] {
        let (a, b) = self.nodes[index].children;
        &self.child_list[a as usize..b as usize]
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Depth-first, pre-order: each node with its depth (roots are depth 0). Iterative, so
    /// a chain of 100 000 entries is fine.
    pub fn depth_first(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            out.push((node, depth));
            for &child in self.children(node).iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str) -> (Index, BuildReport) {
        Index::build(text.as_bytes(), 0, 1)
    }

    fn ids(index: &Index, path: &[u32]) -> Vec<String> {
        path.iter().map(|&i| index.id_of(i).0).collect()
    }

    #[test]
    fn a_node_is_forty_bytes_whatever_its_id() {
        assert!(
            std::mem::size_of::<Node>() <= 40,
            "{}",
            std::mem::size_of::<Node>()
        );
    }

    #[test]
    fn ids_of_any_shape_keep_their_text_and_link_parents() {
        let (idx, report) = index(concat!(
            r#"{"type":"x","id":"0000abcd","parentId":null}"#,
            "\n",
            r#"{"type":"x","id":"0000ABCD","parentId":"0000abcd"}"#,
            "\n",
            r#"{"type":"x","id":"a1b2c3d4-0000-4000-8000-000000000000","parentId":"0000ABCD"}"#,
            "\n",
            r#"{"type":"x","id":"7","parentId":"a1b2c3d4-0000-4000-8000-000000000000"}"#,
            "\n",
            r#"{"type":"x","id":"0000abce","parentId":"7"}"#,
            "\n",
        ));
        assert_eq!(report.duplicate_ids, 0);
        assert_eq!(
            ids(&idx, &idx.path_to(4)),
            [
                "0000abcd",
                "0000ABCD",
                "a1b2c3d4-0000-4000-8000-000000000000",
                "7",
                "0000abce"
            ]
        );
        assert_eq!(idx.lookup("0000ABCD"), Some(1));
        assert_eq!(idx.lookup("0000abcd"), Some(0));
        assert_eq!(idx.lookup("0000abcf"), None);
        assert!(idx.id_is(1, "0000ABCD") && !idx.id_is(1, "0000abcd"));
        assert_eq!(
            idx.nodes[3].line(),
            LineRef::Base {
                start: 175,
                len: 71
            }
        );
    }

    #[test]
    fn a_duplicate_other_id_that_names_itself_as_parent_is_a_root() {
        let (idx, report) = index(concat!(
            r#"{"type":"x","id":"root-1","parentId":null}"#,
            "\n",
            r#"{"type":"x","id":"same","parentId":"root-1"}"#,
            "\n",
            r#"{"type":"x","id":"same","parentId":"same"}"#,
            "\n",
        ));
        assert_eq!(report.duplicate_ids, 1);
        assert_eq!(
            report.duplicate_example.as_ref().map(EntryId::as_str),
            Some("same")
        );
        // Entry 1's parent is "root-1"; entry 2 names its own id: a root, like in pi.
        assert_eq!(idx.path_to(1), [0, 1]);
        assert_eq!(idx.path_to(2), [2]);
        assert_eq!(idx.lookup("same"), Some(2));
    }

    #[test]
    fn orphans_become_roots_and_paths_stop_there() {
        let (idx, _) = index(concat!(
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#,
            "\n",
            r#"{"type":"message","id":"b","parentId":"gone","timestamp":"2026-01-01T00:00:01.000Z"}"#,
            "\n",
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:02.000Z"}"#,
            "\n",
        ));
        let tree = idx.tree();
        assert_eq!(tree.roots(), &[0, 1]);
        assert_eq!(ids(&idx, &idx.path_to(2)), ["b", "c"]);
    }

    #[test]
    fn parent_cycles_and_self_parents_are_cut_at_the_first_entry_in_the_file() {
        let (idx, report) = index(concat!(
            r#"{"type":"x","id":"a","parentId":"c"}"#,
            "\n",
            r#"{"type":"x","id":"b","parentId":"a"}"#,
            "\n",
            r#"{"type":"x","id":"c","parentId":"b"}"#,
            "\n",
            r#"{"type":"x","id":"d","parentId":"d"}"#,
            "\n",
        ));
        assert_eq!(
            report.cycles, 1,
            "a self parent is a root in pi, not a cycle"
        );
        assert_eq!(ids(&idx, &idx.path_to(2)), ["a", "b", "c"]);
        assert_eq!(idx.tree().roots(), &[0, 3]);
    }

    #[test]
    fn duplicate_ids_resolve_to_the_last_entry() {
        let (idx, report) = index(concat!(
            r#"{"type":"x","id":"a","parentId":null}"#,
            "\n",
            r#"{"type":"x","id":"a","parentId":null}"#,
            "\n",
            r#"{"type":"x","id":"b","parentId":"a"}"#,
            "\n",
        ));
        assert_eq!(report.duplicate_ids, 1);
        assert_eq!(idx.lookup("a"), Some(1));
        assert_eq!(idx.path_to(2), [1, 2]);
    }

    #[test]
    fn children_are_sorted_by_time_and_ties_keep_file_order() {
        let (idx, _) = index(concat!(
            r#"{"type":"x","id":"r","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#,
            "\n",
            r#"{"type":"x","id":"late","parentId":"r","timestamp":"2026-01-01T00:00:09.000Z"}"#,
            "\n",
            r#"{"type":"x","id":"tie1","parentId":"r","timestamp":"2026-01-01T00:00:05.000Z"}"#,
            "\n",
            r#"{"type":"x","id":"tie2","parentId":"r","timestamp":"2026-01-01T00:00:05.000Z"}"#,
            "\n",
        ));
        let tree = idx.tree();
        let names: Vec<_> = tree
            .children(0)
            .iter()
            .map(|&c| tree.node(c).id.0.clone())
            .collect();
        assert_eq!(names, ["tie1", "tie2", "late"]);
    }

    #[test]
    fn labels_follow_the_last_label_entry_and_clearing_forgets_them() {
        let (idx, _) = index(concat!(
            r#"{"type":"x","id":"a","parentId":null}"#,
            "\n",
            r#"{"type":"label","id":"l1","parentId":"a","targetId":"a","label":"one","timestamp":"t1"}"#,
            "\n",
            r#"{"type":"label","id":"l2","parentId":"l1","targetId":"a","timestamp":"t2"}"#,
            "\n",
            r#"{"type":"label","id":"l3","parentId":"l2","targetId":"l1","label":"x","timestamp":"t3"}"#,
            "\n",
        ));
        assert!(idx.label("a").is_none());
        assert_eq!(idx.label("l1").map(|l| l.label.as_str()), Some("x"));
    }
}
