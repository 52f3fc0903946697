//! The agent loop's [`AgentHooks`] backed by extensions: `context` before each model
//! call, `tool_call` before each tool runs (it may block the call or change its
//! arguments), `tool_result` after, and `message_end` (waited for only when an
//! extension subscribed to it) for each finished message.

use async_trait::async_trait;

use super::events::{ToolCallDecision, ToolResultEvent};
use super::host::ExtensionHost;
use crate::agent::{AgentHooks, ToolCallVerdict};
use crate::ai::message::ToolCall;
use crate::messages::AgentMessage;
use crate::tools::ToolOutput;

/// [`AgentHooks`] that ask the extensions.
#[derive(Clone)]
pub struct ExtensionHooks {
    host: ExtensionHost,
}

impl ExtensionHooks {
    pub fn new(host: ExtensionHost) -> ExtensionHooks {
        ExtensionHooks { host }
    }
}

impl ExtensionHost {
    /// The agent hooks for this host.
    pub fn hooks(&self) -> std::sync::Arc<dyn AgentHooks> {
        std::sync::Arc::new(ExtensionHooks::new(self.clone()))
    }
}

#[async_trait]
impl AgentHooks for ExtensionHooks {
    async fn transform_context(&self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        self.host.context(messages).await
    }

    async fn before_tool_call(&self, call: &ToolCall) -> Option<String> {
        match self
            .host
            .tool_call(&call.id, &call.name, &call.arguments)
            .await
        {
            ToolCallDecision::Block { reason } => Some(reason),
            ToolCallDecision::Allow { .. } => None,
        }
    }

    async fn check_tool_call(&self, call: &ToolCall) -> ToolCallVerdict {
        match self
            .host
            .tool_call(&call.id, &call.name, &call.arguments)
            .await
        {
            ToolCallDecision::Block { reason } => ToolCallVerdict::Block(reason),
            ToolCallDecision::Allow { input } => ToolCallVerdict::Run(input),
        }
    }

    async fn message_end(&self, message: AgentMessage) -> AgentMessage {
        self.host.message_end(message).await
    }

    async fn after_tool_call(
        &self,
        call: &ToolCall,
        result: ToolOutput,
        is_error: bool,
    ) -> (ToolOutput, bool) {
        let event = ToolResultEvent {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input: call.arguments.clone(),
            content: result.content.clone(),
            details: result.details.clone(),
            is_error,
        };
        match self.host.tool_result(&event).await {
            Some(patch) => (
                ToolOutput {
                    content: patch.content,
                    details: patch.details,
                },
                patch.is_error,
            ),
            None => (result, is_error),
        }
    }
}
