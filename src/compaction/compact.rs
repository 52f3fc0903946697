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
    /// The estimated size of the context rebuilt after the compaction (pi 1.6's
    /// `estimatedTokensAfter`); known once the compaction is recorded.
    pub estimated_tokens_after: Option<u64>,
}

/// Summarizes what `preparation` selected.
///
/// `custom_instructions` (`/compact <text>`) focus the history summary; `reasoning` is
/// passed on to every request (see
/// [`summary_reasoning`](crate::compaction::prompts::summary_reasoning)).
pub async fn compact(
    preparation: &CompactionPreparation<'_>,
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
        let prefix_request =
            turn_prefix_request(&preparation.turn_prefix_messages, reserve_tokens, reasoning);
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
        estimated_tokens_after: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::kind::SummaryKind;
    use crate::compaction::prepare::prepare_compaction;
    use crate::compaction::settings::CompactionSettings;
    use crate::compaction::testkit::{
        PathBuilder, Reply, ScriptedBackend, read, request_text, words,
    };
    use crate::session::entry::SessionEntry;
    use serde_json::json;
    use std::time::Duration;

    /// A preparation that no longer borrows `path` (as the agent layer keeps it across
    /// the model call).
    fn prepared(path: &[SessionEntry], keep: u64) -> CompactionPreparation<'static> {
        let settings = CompactionSettings {
            keep_recent_tokens: keep,
            ..CompactionSettings::default()
        };
        prepare_compaction(path, &settings).unwrap().into_owned()
    }

    fn split_turn_path() -> Vec<SessionEntry> {
        PathBuilder::new()
            .user("Turn 1: read a.txt")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result("alpha")
            .assistant("a.txt says alpha")
            .user("Turn 2: rewrite b.rs")
            .tool_call(
                "writing",
                "write",
                json!({"path": "b.rs", "content": "fn main() {}"}),
            )
            .tool_result(&words(400))
            .assistant(&words(10))
            .build()
    }

    async fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .expect("compaction did not finish: were the requests run concurrently?")
    }

    #[tokio::test]
    async fn split_turn_requests_history_and_turn_prefix_concurrently_and_joins_them() {
        let prep = prepared(&split_turn_path(), 100);
        assert!(prep.is_split_turn);
        let backend = ScriptedBackend::new(vec![
            (SummaryKind::History, Reply::Text("HISTORY".into())),
            (SummaryKind::TurnPrefix, Reply::Text("PREFIX".into())),
        ])
        .require_concurrent(2);
        let result = run(compact(
            &prep,
            &backend,
            Some("the rewrite"),
            None,
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        insta::assert_snapshot!(result.summary, @r"
        HISTORY

        ---

        **Turn Context (split turn):**

        PREFIX

        <read-files>
        a.txt
        </read-files>

        <modified-files>
        b.rs
        </modified-files>
        ");
        assert_eq!(result.first_kept_entry_id, "e8");
        assert_eq!(
            result.details,
            CompactionDetails {
                read_files: vec!["a.txt".into()],
                modified_files: vec!["b.rs".into()]
            }
        );

        let mut requests = backend.requests();
        requests.sort_by_key(|r| r.kind == SummaryKind::TurnPrefix);
        let [history, prefix] = requests.as_slice() else {
            panic!("expected two requests, got {requests:?}")
        };
        assert_eq!((history.max_tokens, prefix.max_tokens), (13107, 8192));
        let history_text = request_text(history);
        assert!(history_text.starts_with(
            "<conversation>\n[User]: Turn 1: read a.txt\n\n[Assistant]: reading\n\n[Assistant tool calls]: read(path=\"a.txt\")\n\n[Tool result]: alpha\n\n[Assistant]: a.txt says alpha\n</conversation>\n\n"
        ));
        assert!(history_text.ends_with("\n\nAdditional focus: the rewrite"));
        let prefix_text = request_text(prefix);
        assert!(prefix_text.starts_with("<conversation>\n[User]: Turn 2: rewrite b.rs\n\n[Assistant]: writing\n\n[Assistant tool calls]: write(path=\"b.rs\", content=\"fn main() {}\")\n\n[Tool result]: abcd"));
        assert!(
            !prefix_text.contains("Additional focus"),
            "focus applies to the history only"
        );
    }

    #[tokio::test]
    async fn split_turn_without_earlier_history_sends_only_the_prefix_request() {
        let path = PathBuilder::new()
            .user("only turn")
            .tool_call("reading", "read", read("a.txt"))
            .tool_result(&words(400))
            .assistant(&words(10))
            .build();
        let prep = prepared(&path, 100);
        let backend = ScriptedBackend::new(vec![(
            SummaryKind::TurnPrefix,
            Reply::Text("PREFIX".into()),
        )]);
        let result = run(compact(
            &prep,
            &backend,
            None,
            None,
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        assert!(result.summary.starts_with(
            "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<read-files>"
        ));
        assert_eq!(backend.requests().len(), 1);
    }

    #[tokio::test]
    async fn whole_turn_compaction_sends_one_request_with_reasoning_and_previous_summary() {
        let path = PathBuilder::new()
            .user("Turn 1")
            .assistant(&words(100))
            .compaction("OLD", "e1", None)
            .user(&words(100))
            .assistant(&words(100))
            .build();
        let prep = prepared(&path, 150);
        let backend = ScriptedBackend::new(vec![(SummaryKind::History, Reply::Text("NEW".into()))]);
        let result = run(compact(
            &prep,
            &backend,
            None,
            Some(ThinkingLevel::Medium),
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        assert_eq!(result.summary, "NEW");
        let requests = backend.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].reasoning, Some(ThinkingLevel::Medium));
        assert!(
            request_text(&requests[0])
                .contains("</conversation>\n\n<previous-summary>\nOLD\n</previous-summary>\n\n")
        );
    }

    #[tokio::test]
    async fn failures_are_errors_that_name_the_failed_step() {
        let prep = prepared(&split_turn_path(), 100);
        let cases = [
            (
                Reply::Fail("connection refused".into()),
                "Summarization failed: connection refused",
            ),
            (
                Reply::ErrorStop(Some("overloaded".into())),
                "Summarization failed: overloaded",
            ),
            (
                Reply::ErrorStop(None),
                "Summarization failed: Unknown error",
            ),
            (
                Reply::Text(" \n".into()),
                "Summarization failed: the model returned an empty summary; try again or use another model",
            ),
        ];
        for (reply, want) in cases {
            let backend = ScriptedBackend::new(vec![
                (SummaryKind::History, reply),
                (SummaryKind::TurnPrefix, Reply::Text("PREFIX".into())),
            ]);
            let err = run(compact(
                &prep,
                &backend,
                None,
                None,
                CancellationToken::new(),
            ))
            .await
            .unwrap_err();
            assert_eq!(err.to_string(), want);
        }
        let backend = ScriptedBackend::new(vec![
            (SummaryKind::History, Reply::Text("HISTORY".into())),
            (
                SummaryKind::TurnPrefix,
                Reply::ErrorStop(Some("boom".into())),
            ),
        ]);
        let err = run(compact(
            &prep,
            &backend,
            None,
            None,
            CancellationToken::new(),
        ))
        .await
        .unwrap_err();
        assert_eq!(err.to_string(), "Turn prefix summarization failed: boom");
    }

    #[tokio::test]
    async fn cancelling_stops_waiting_even_for_a_backend_that_never_answers() {
        let prep = prepared(&split_turn_path(), 100);
        let backend = ScriptedBackend::new(vec![
            (SummaryKind::History, Reply::Hang),
            (SummaryKind::TurnPrefix, Reply::Hang),
        ]);
        let cancel = CancellationToken::new();
        let canceller = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            canceller.cancel();
        });
        let err = run(compact(&prep, &backend, None, None, cancel))
            .await
            .unwrap_err();
        assert!(matches!(err, CompactionError::Cancelled(_)), "{err:?}");

        // Already cancelled: no request is sent at all.
        let backend = ScriptedBackend::new(vec![]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let prep = prepared(&split_turn_path(), 1_000_000);
        let err = run(compact(&prep, &backend, None, None, cancel))
            .await
            .unwrap_err();
        assert_eq!(err, CompactionError::Cancelled(SummaryKind::History));
        assert!(backend.requests().is_empty());
    }

    #[test]
    fn compaction_futures_can_be_spawned() {
        fn assert_send<T: Send>(_: &T) {}
        let path = split_turn_path();
        let prep = prepare_compaction(&path, &CompactionSettings::default()).unwrap();
        let backend = ScriptedBackend::new(vec![]);
        assert_send(&compact(
            &prep,
            &backend,
            None,
            None,
            CancellationToken::new(),
        ));
        let refs: Vec<&SessionEntry> = path.iter().collect();
        assert_send(&crate::compaction::generate_branch_summary(
            &refs,
            &backend,
            0,
            None,
            false,
            CancellationToken::new(),
        ));
    }
}
