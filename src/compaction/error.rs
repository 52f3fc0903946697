//! Why a compaction or branch summary did not produce a summary.
//!
//! Every failure is a value the caller can show and recover from: the session is never
//! changed when summarizing fails, so nothing is lost.

use crate::compaction::kind::SummaryKind;

/// A failed compaction or branch summary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompactionError {
    /// The cancellation token fired, or the backend reported an aborted response.
    #[error("{} cancelled", kind_title(*.0))]
    Cancelled(SummaryKind),
    /// The model answered with an error (pi's `stopReason: "error"`), or the backend
    /// failed with [`CompactionError::Backend`].
    #[error("{} failed: {message}", kind_title(*.kind))]
    SummarizationFailed { kind: SummaryKind, message: String },
    /// The model's answer had no text: storing it would replace the history with nothing.
    #[error(
        "{} failed: the model returned an empty summary; try again or use another model",
        kind_title(*.0)
    )]
    EmptySummary(SummaryKind),
    /// Raised by [`SummaryBackend`](crate::compaction::SummaryBackend) implementations
    /// (network error, missing credentials …); reported as
    /// [`CompactionError::SummarizationFailed`].
    #[error("{0}")]
    Backend(String),
    /// pi's message when the current path already ends in a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,
    /// pi's message when there is nothing on the path to compact.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,
}

fn kind_title(kind: SummaryKind) -> &'static str {
    match kind {
        SummaryKind::History => "Summarization",
        SummaryKind::TurnPrefix => "Turn prefix summarization",
        SummaryKind::Branch => "Branch summarization",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_step_that_failed() {
        let lines = [
            CompactionError::Cancelled(SummaryKind::Branch),
            CompactionError::SummarizationFailed {
                kind: SummaryKind::History,
                message: "429 rate limited".into(),
            },
            CompactionError::SummarizationFailed {
                kind: SummaryKind::TurnPrefix,
                message: "Unknown error".into(),
            },
            CompactionError::EmptySummary(SummaryKind::History),
            CompactionError::AlreadyCompacted,
            CompactionError::NothingToCompact,
        ]
        .map(|e| e.to_string())
        .join("\n");
        insta::assert_snapshot!(lines, @r"
        Branch summarization cancelled
        Summarization failed: 429 rate limited
        Turn prefix summarization failed: Unknown error
        Summarization failed: the model returned an empty summary; try again or use another model
        Already compacted
        Nothing to compact (session too small)
        ");
    }
}
