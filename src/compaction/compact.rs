//! Running a prepared compaction against a model.
//!
//! [`compact`] sends the summary request(s) of a [`CompactionPreparation`] through a
//! [`SummaryBackend`] and returns the values of the `compaction` entry to append. A split
//! turn needs two summaries (the history and the turn's first part); they are requested
//! at the same time and joined. Failure, emptiness and cancellation come back as
//! [`CompactionError`]s; the caller then leaves the session unchanged.

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::ai::model::ThinkingLevel;
use crate::compaction::backend::{SummaryBackend, request_summary};
use crate::compaction::error::CompactionError;
use crate::compaction::file_ops::FileLists;
use crate::compaction::prepare::CompactionPreparation;
use crate::compaction::prompts::{
    NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR, history_request, turn_prefix_request,
};
use crate::session::entry::EntryId;

/// `details` of a compaction entry written by us (and by pi).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionDetails {
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

impl From<FileLists> for CompactionDetails {
    fn from(lists: FileLists) -> Self {
        Self {
            read_files: lists.read_files,
            modified_files: lists.modified_files,
        }
    }
}

/// The fields of the `compaction` entry to append.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The model's summary followed by the file-list blocks.
    pub summary: String,
    pub first_kept_entry_id: EntryId,
    pub tokens_before: u64,
    pub details: CompactionDetails,
}

/// Summarizes what `preparation` selected.
///
/// `custom_instructions` (`/compact <text>`) focus the history summary; `reasoning` is
/// passed on to every request (see
/// [`summary_reasoning`](crate::compaction::prompts::summary_reasoning)).
pub async fn compact(
    preparation: &CompactionPreparation,
    backend: &dyn SummaryBackend,
    custom_instructions: Option<&str>,
    reasoning: Option<ThinkingLevel>,
    cancel: CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reserve_tokens = preparation.settings.reserve_tokens;
    let history = || {
        history_request(
            &preparation.messages_to_summarize,
            preparation.previous_summary.as_deref(),
            custom_instructions,
            reserve_tokens,
            reasoning,
        )
    };

    let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let history_summary = async {
            if preparation.messages_to_summarize.is_empty() {
                Ok(NO_PRIOR_HISTORY.to_string())
            } else {
                request_summary(backend, history(), &cancel).await
            }
        };
        let prefix_request = turn_prefix_request(&preparation.turn_prefix_messages, reserve_tokens, reasoning);
        let prefix_summary = request_summary(backend, prefix_request, &cancel);
        let (history_text, prefix_text) = futures::try_join!(history_summary, prefix_summary)?;
        format!("{history_text}{SPLIT_TURN_SEPARATOR}{prefix_text}")
    } else {
        request_summary(backend, history(), &cancel).await?
    };

    let lists = preparation.file_ops.lists();
    summary.push_str(&lists.to_summary_suffix());
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details: lists.into(),
    })
}
