//! Writing the summary of a branch the user navigates away from.
//!
//! [`generate_branch_summary`] takes the abandoned entries (from
//! [`collect_entries_for_branch_summary`](crate::compaction::collect_entries_for_branch_summary)),
//! keeps what fits the budget, asks the model through a [`SummaryBackend`] and returns the
//! text and file lists of the `branch_summary` entry to append.

use tokio_util::sync::CancellationToken;

use crate::compaction::backend::{SummaryBackend, request_summary};
use crate::compaction::branch::prepare_branch_entries;
use crate::compaction::error::CompactionError;
use crate::compaction::prompts::{BRANCH_SUMMARY_PREAMBLE, branch_request};
use crate::session::entry::SessionEntry;

/// Stored instead of a summary when the branch has no message to summarize (pi's text).
pub const NO_CONTENT_TO_SUMMARIZE: &str = "No content to summarize";

/// The fields of the `branch_summary` entry to append (`details` =
/// `{readFiles, modifiedFiles}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchSummaryResult {
    /// Opening paragraph + the model's summary + file-list blocks.
    pub summary: String,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

/// Summarizes `entries` (oldest first).
///
/// `token_budget` bounds the estimated tokens read (see
/// [`BranchSummarySettings::token_budget`](crate::compaction::BranchSummarySettings::token_budget);
/// 0 = no limit). `custom_instructions` are appended as a focus, or replace the prompt
/// when `replace_instructions` is set.
pub async fn generate_branch_summary(
    entries: &[SessionEntry],
    backend: &dyn SummaryBackend,
    token_budget: u64,
    custom_instructions: Option<&str>,
    replace_instructions: bool,
    cancel: CancellationToken,
) -> Result<BranchSummaryResult, CompactionError> {
    let preparation = prepare_branch_entries(entries, token_budget);
    if preparation.messages.is_empty() {
        return Ok(BranchSummaryResult {
            summary: NO_CONTENT_TO_SUMMARIZE.to_string(),
            ..BranchSummaryResult::default()
        });
    }
    let request = branch_request(&preparation.messages, custom_instructions, replace_instructions);
    let text = request_summary(backend, request, &cancel).await?;
    let lists = preparation.file_ops.lists();
    let summary = format!("{BRANCH_SUMMARY_PREAMBLE}{text}{}", lists.to_summary_suffix());
    Ok(BranchSummaryResult {
        summary,
        read_files: lists.read_files,
        modified_files: lists.modified_files,
    })
}
