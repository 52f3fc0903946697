//! Writing the summary of a branch the user navigates away from.
//!
//! [`generate_branch_summary`] takes the abandoned entries (from
//! [`collect_entries_for_branch_summary`](crate::compaction::collect_entries_for_branch_summary)),
//! keeps what fits the budget, asks the model through a [`SummaryBackend`] and returns the
//! text and file lists of the `branch_summary` entry to append.

use std::borrow::Borrow;

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
pub async fn generate_branch_summary<E: Borrow<SessionEntry> + Sync>(
    entries: &[E],
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
    let request = branch_request(
        &preparation.messages,
        custom_instructions,
        replace_instructions,
    );
    let text = request_summary(backend, request, &cancel).await?;
    let lists = preparation.file_ops.lists();
    let summary = format!(
        "{BRANCH_SUMMARY_PREAMBLE}{text}{}",
        lists.to_summary_suffix()
    );
    Ok(BranchSummaryResult {
        summary,
        read_files: lists.read_files,
        modified_files: lists.modified_files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::kind::SummaryKind;
    use crate::compaction::prompts::BRANCH_SUMMARY_PROMPT;
    use crate::compaction::testkit::{PathBuilder, Reply, ScriptedBackend, read, request_text};
    use serde_json::json;

    fn branch() -> Vec<SessionEntry> {
        PathBuilder::new()
            .tool_call("Reading notes.txt.", "read", read("notes.txt"))
            .tool_result("note one\n")
            .user("Turn two: append a line")
            .tool_call(
                "Appending.",
                "edit",
                json!({"path": "notes.txt", "edits": []}),
            )
            .tool_result("Successfully replaced 1 block(s) in notes.txt.")
            .build()
    }

    #[tokio::test]
    async fn summary_is_preamble_plus_model_text_plus_file_lists() {
        let backend = ScriptedBackend::new(vec![(
            SummaryKind::Branch,
            Reply::Text("## Goal\nNotes".into()),
        )]);
        let result = generate_branch_summary(
            &branch(),
            &backend,
            0,
            None,
            false,
            CancellationToken::new(),
        )
        .await
        .unwrap();
        insta::assert_snapshot!(result.summary, @r"
        The user worked on another branch of this conversation and then came back to this point.
        What happened on that branch:

        ## Goal
        Notes

        <modified-files>
        notes.txt
        </modified-files>
        ");
        assert_eq!(
            (result.read_files.len(), result.modified_files),
            (0, vec!["notes.txt".to_string()])
        );
        let requests = backend.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(
            (requests[0].max_tokens, requests[0].reasoning),
            (2048, None)
        );
        assert_eq!(
            request_text(&requests[0]),
            format!(
                "<conversation>\n[Assistant]: Reading notes.txt.\n\n[Assistant tool calls]: read(path=\"notes.txt\")\n\n[User]: Turn two: append a line\n\n[Assistant]: Appending.\n\n[Assistant tool calls]: edit(path=\"notes.txt\", edits=[])\n</conversation>\n\n{BRANCH_SUMMARY_PROMPT}"
            )
        );
    }

    #[tokio::test]
    async fn custom_instructions_can_replace_the_prompt() {
        let backend = ScriptedBackend::new(vec![(
            SummaryKind::Branch,
            Reply::Text("files only".into()),
        )]);
        generate_branch_summary(
            &branch(),
            &backend,
            0,
            Some("List the files."),
            true,
            CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(
            request_text(&backend.requests()[0]).ends_with("</conversation>\n\nList the files.")
        );
    }

    #[tokio::test]
    async fn a_branch_without_messages_needs_no_model() {
        let entries = PathBuilder::new()
            .model_change()
            .tool_result("orphan")
            .build();
        let backend = ScriptedBackend::new(vec![]);
        let result =
            generate_branch_summary(&entries, &backend, 0, None, false, CancellationToken::new())
                .await
                .unwrap();
        assert_eq!(
            result,
            BranchSummaryResult {
                summary: "No content to summarize".into(),
                read_files: vec![],
                modified_files: vec![]
            }
        );
        assert!(backend.requests().is_empty());
    }

    #[tokio::test]
    async fn errors_and_cancellation_are_values() {
        let backend = ScriptedBackend::new(vec![(
            SummaryKind::Branch,
            Reply::Fail("no API key".into()),
        )]);
        let err = generate_branch_summary(
            &branch(),
            &backend,
            0,
            None,
            false,
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
        assert_eq!(err.to_string(), "Branch summarization failed: no API key");

        let backend = ScriptedBackend::new(vec![(SummaryKind::Branch, Reply::Hang)]);
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            canceller.cancel();
        });
        let err = generate_branch_summary(&branch(), &backend, 0, None, false, cancel)
            .await
            .unwrap_err();
        assert_eq!(err, CompactionError::Cancelled(SummaryKind::Branch));
        assert_eq!(err.to_string(), "Branch summarization cancelled");
    }
}
