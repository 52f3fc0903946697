//! The one thing summarization needs from the provider layer: "complete this request".
//!
//! [`SummaryBackend`] is implemented over the real provider clients by the agent layer and
//! by scripted fakes in tests. [`request_summary`] wraps a call with what pi does around
//! `completeSimple`: cancellation, error stop reasons, joining the text blocks.

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::ai::message::{AssistantBlock, AssistantMessage, Message, StopReason};
use crate::ai::model::ThinkingLevel;
use crate::compaction::error::CompactionError;
use crate::compaction::kind::SummaryKind;

/// One summarization call: a system prompt and one user message, no tools.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub kind: SummaryKind,
    pub system_prompt: String,
    pub messages: Vec<Message>,
    /// Output limit (`max_tokens` / `max_completion_tokens` on the wire).
    pub max_tokens: u64,
    /// Reasoning effort, only for models that reason and only when thinking is on.
    pub reasoning: Option<ThinkingLevel>,
}

/// A model that can answer one summarization request.
#[async_trait]
pub trait SummaryBackend: Send + Sync {
    /// One non-streaming completion: system prompt + messages → the assistant message.
    ///
    /// Implementations should stop work when `cancel` fires (the caller also stops waiting
    /// at that moment). Transport failures are returned as [`CompactionError::Backend`];
    /// a provider error response may instead be returned as a message with
    /// `stopReason: error`, as pi's providers do.
    async fn complete(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, CompactionError>;
}

/// Sends `request` and returns the summary text: the text blocks joined with `\n`.
pub(crate) async fn request_summary(
    backend: &dyn SummaryBackend,
    request: SummaryRequest,
    cancel: &CancellationToken,
) -> Result<String, CompactionError> {
    let kind = request.kind;
    if cancel.is_cancelled() {
        return Err(CompactionError::Cancelled(kind));
    }
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(CompactionError::Cancelled(kind)),
        response = backend.complete(request, cancel.clone()) => response,
    };
    let response = match response {
        Ok(response) => response,
        Err(CompactionError::Backend(message)) => {
            return Err(CompactionError::SummarizationFailed { kind, message });
        }
        Err(CompactionError::Cancelled(_)) => return Err(CompactionError::Cancelled(kind)),
        Err(other) => return Err(other),
    };
    match response.stop_reason {
        StopReason::Aborted => return Err(CompactionError::Cancelled(kind)),
        StopReason::Error => {
            let message = response
                .error_message
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "Unknown error".to_string());
            return Err(CompactionError::SummarizationFailed { kind, message });
        }
        StopReason::Stop | StopReason::Length | StopReason::ToolUse => {}
    }
    let text = response
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantBlock::Text(t) => Some(t.text.as_str()),
            AssistantBlock::Thinking(_) | AssistantBlock::ToolCall(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    // pi would store an empty summary; we refuse, because the compaction entry would
    // replace the summarized history with nothing.
    if text.trim().is_empty() {
        return Err(CompactionError::EmptySummary(kind));
    }
    Ok(text)
}
