//! Compaction and branch summaries: keeping a long conversation inside the model's context
//! window without losing what happened.
//!
//! Two mechanisms share this module. **Compaction** replaces the older part of the current
//! path with an LLM-written summary (a `compaction` entry) and keeps the most recent
//! messages verbatim from `firstKeptEntryId` on. **Branch summaries** describe the part of
//! the tree the user leaves when navigating with `/tree` (a `branch_summary` entry).
//!
//! Almost everything here is plain synchronous code over slices of session entries, with
//! pi 0.73.1's exact numbers: token estimates ([`tokens`]), cut points ([`cut`]), the text
//! the summarizer reads ([`serialize`]), file lists ([`file_ops`]), what to summarize
//! ([`prepare`], [`branch`]), when to compact ([`trigger`]) and the prompts ([`prompts`]).
//! The async layer ([`compact`](mod@compact), [`branch_summary`]) only talks to a model
//! through the [`SummaryBackend`] trait, so it is tested with a scripted backend.
//!
//! Not here: reading or writing session files (the caller passes root→leaf entry lists
//! and appends the resulting entry), provider clients (they implement [`SummaryBackend`]),
//! and the UI around compaction.

pub mod backend;
pub mod branch;
pub mod branch_summary;
pub mod compact;
pub mod cut;
pub mod error;
pub mod file_ops;
pub mod js;
pub mod kind;
pub mod message_ref;
pub mod prepare;
pub mod prompts;
pub mod serialize;
pub mod settings;
pub mod tokens;
pub mod trigger;

#[cfg(test)]
mod testkit;

pub use backend::{SummaryBackend, SummaryRequest};
pub use branch::{
    BranchEntries, BranchPreparation, collect_entries_for_branch_summary, prepare_branch_entries,
};
pub use branch_summary::{BranchSummaryResult, generate_branch_summary};
pub use compact::{CompactionDetails, CompactionResult, compact};
pub use cut::{CutPoint, find_cut_point, find_turn_start_index};
pub use error::CompactionError;
pub use file_ops::{FileLists, FileOps};
pub use kind::SummaryKind;
pub use message_ref::MessageRef;
pub use prepare::{CompactionPreparation, prepare_compaction};
pub use serialize::serialize_conversation;
pub use settings::{BranchSummarySettings, CompactionSettings};
pub use tokens::{ContextEstimate, estimate_context_tokens, estimate_tokens, should_compact};
pub use trigger::{AutoCompaction, AutoCompactionCheck, check_auto_compaction};
