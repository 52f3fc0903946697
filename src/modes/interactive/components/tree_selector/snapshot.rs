//! What the selector is built from: the session's tree, an outline of every entry and
//! the current leaf, taken from a [`SessionManager`] in one go.

use crate::session::SessionManager;
use crate::session::entry::EntryId;
use crate::session::outline::EntryOutline;
use crate::session::tree::SessionTree;

/// A session's tree as `/tree` shows it. Building one reads no message in full: the tree
/// comes from the session index and the outlines are skimmed from the lines, so this is
/// cheap even for a session of tens of thousands of entries.
#[derive(Debug, Clone)]
pub struct TreeSnapshot {
    pub(super) tree: SessionTree,
    /// `outlines[i]` describes `tree.nodes()[i]`.
    pub(super) outlines: Vec<EntryOutline>,
    pub(super) leaf: Option<EntryId>,
}

impl TreeSnapshot {
    /// The session's current tree, outlines and leaf.
    pub fn from_session(session: &SessionManager) -> Self {
        TreeSnapshot::new(
            session.tree(),
            session.outlines(),
            session.leaf_id().cloned(),
        )
    }

    /// Assembles a snapshot from its parts. Outlines are matched to tree nodes by
    /// position; missing ones count as entries of unknown type.
    pub fn new(tree: SessionTree, mut outlines: Vec<EntryOutline>, leaf: Option<EntryId>) -> Self {
        outlines.resize(tree.len(), EntryOutline::Other);
        TreeSnapshot {
            tree,
            outlines,
            leaf,
        }
    }

    pub fn len(&self) -> usize {
        self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    pub fn leaf(&self) -> Option<&EntryId> {
        self.leaf.as_ref()
    }
}
