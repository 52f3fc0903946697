//! The agent loop: send the context to the model, stream the answer, run the tool calls
//! it asks for, append the results, and repeat until the model stops — delivering queued
//! steering messages between turns and follow-up messages when it would stop.
//!
//! Semantics follow pi-agent-core: a turn is one model response plus its tool calls; tool
//! calls run in parallel unless the loop or a tool asks for sequential execution; tool
//! results are appended in the order the model asked for them; a response that ends in
//! `error` or `aborted` ends the run. One deliberate difference: in sequential mode a
//! steering message skips the tool calls that have not started yet (pi ≤ 0.58 did this;
//! it lets the user stop a long chain of calls without aborting).

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, EventSink};
use super::queue::MessageQueues;
use crate::ai::message::{
    AssistantMessage, Context, StopReason, ToolCall, ToolResultMessage, UserBlock, now_ms,
};
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::stream::{EventStream, PartialMessage, StreamEvent};
use crate::messages::{AgentMessage, convert_to_llm};
use crate::tools::validate::{prepare_and_validate, tool_not_found_message};
use crate::tools::{ExecutionMode, Tool, ToolCallArgs, ToolOutput};

/// Text of the result given to tool calls skipped because the user steered.
pub const SKIPPED_FOR_STEERING: &str = "Skipped due to queued user message.";

/// Text of the error result given to tool calls of a batch that had not started when the
/// run was aborted (pi 1.6): every tool call in the session keeps a result.
pub const ABORTED_BEFORE_START: &str = "Operation aborted";

/// Per-request options the loop passes to the model client.
#[derive(Debug, Clone)]
pub struct TurnOptions {
    pub thinking: ThinkingLevel,
    pub cancel: CancellationToken,
}

/// Something that can stream a model response (the real provider layer, or a script in
/// tests). Must never fail out of band: failures end the stream with an `Error` event.
pub trait ModelClient: Send + Sync {
    fn stream(&self, model: &Model, context: Context, options: TurnOptions) -> EventStream;
}

/// What a hook decided about a tool call before it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallVerdict {
    /// Run it; with `Some`, with these arguments instead of the model's (pi's `tool_call`
    /// handlers may change `event.input`, and the tool then sees the changed object).
    Run(Option<Value>),
    /// Do not run it; the model gets the reason as an error result.
    Block(String),
}

/// Extension points around model calls and tool calls (used by extensions).
#[async_trait]
pub trait AgentHooks: Send + Sync {
    /// May rewrite the messages sent to the model (pi's `context` event).
    async fn transform_context(&self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        messages
    }
    /// Return `Some(reason)` to block the call; the model gets `reason` as an error result.
    async fn before_tool_call(&self, _call: &ToolCall) -> Option<String> {
        None
    }
    /// Decides whether a (validated) call runs and with which arguments. The default asks
    /// [`AgentHooks::before_tool_call`], which can only block.
    async fn check_tool_call(&self, call: &ToolCall) -> ToolCallVerdict {
        match self.before_tool_call(call).await {
            Some(reason) => ToolCallVerdict::Block(reason),
            None => ToolCallVerdict::Run(None),
        }
    }
    /// May replace a finished message before anyone sees its `message_end` (pi's
    /// `message_end` handlers returning `{message}`): what is returned is what the
    /// listeners see, the session stores and the model gets. It must keep the role.
    async fn message_end(&self, message: AgentMessage) -> AgentMessage {
        message
    }
    /// May replace a tool's result and error flag.
    async fn after_tool_call(
        &self,
        _call: &ToolCall,
        result: ToolOutput,
        is_error: bool,
    ) -> (ToolOutput, bool) {
        (result, is_error)
    }
}

/// Checks tool arguments against the tool's schema; `Err` is the text the model reads.
pub type ArgumentValidator =
    fn(tool_name: &str, schema: &Value, args: &Value) -> Result<(), String>;

/// Everything one agent run needs besides the conversation.
#[derive(Clone)]
pub struct AgentConfig {
    pub model: Model,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn Tool>>,
    pub tool_execution: ExecutionMode,
    pub client: Arc<dyn ModelClient>,
    pub hooks: Option<Arc<dyn AgentHooks>>,
}

impl AgentConfig {
    fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// Runs the loop with new prompt messages appended to `messages`. Returns the messages the
/// run added (prompts included). `messages` is updated in place as the run goes.
pub async fn run(
    prompts: Vec<AgentMessage>,
    messages: &mut Vec<AgentMessage>,
    config: &AgentConfig,
    queues: &MessageQueues,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<AgentMessage> {
    let mut added = Vec::new();
    sink.emit(AgentEvent::AgentStart);
    sink.emit(AgentEvent::TurnStart);
    for prompt in prompts {
        sink.emit(AgentEvent::MessageStart {
            message: prompt.clone(),
        });
        let prompt = end_message(config, sink, prompt).await;
        messages.push(prompt.clone());
        added.push(prompt);
    }
    run_turns(messages, &mut added, config, queues, sink, cancel).await;
    sink.emit(AgentEvent::AgentEnd {
        messages: added.clone(),
        will_retry: false,
    });
    added
}

/// Why [`run_continue`] refused to run (pi-agent-core's `continue()` errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ContinueError {
    #[error("No messages to continue from")]
    NoMessages,
    /// The model already answered: continuing would ask it again for the same turn,
    /// which is how an agent ends up in a request loop.
    #[error("Cannot continue from message role: assistant")]
    FromAssistant,
}

/// Continues from the current conversation without a new prompt (after a retry or a
/// compaction). The last message must be one a model can answer (user, tool result or
/// a custom message). After an assistant message only queued messages can go on — the
/// steering queue first, then follow-ups, sent as prompts — and without any the call is
/// refused and nothing is sent or emitted.
pub async fn run_continue(
    messages: &mut Vec<AgentMessage>,
    config: &AgentConfig,
    queues: &MessageQueues,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Result<Vec<AgentMessage>, ContinueError> {
    match messages.last() {
        None => return Err(ContinueError::NoMessages),
        Some(AgentMessage::Assistant(_)) => {
            let mut queued = queues.take_steering();
            if queued.is_empty() {
                queued = queues.take_follow_up();
            }
            if queued.is_empty() {
                return Err(ContinueError::FromAssistant);
            }
            return Ok(run(queued, messages, config, queues, sink, cancel).await);
        }
        Some(_) => {}
    }
    let mut added = Vec::new();
    sink.emit(AgentEvent::AgentStart);
    sink.emit(AgentEvent::TurnStart);
    run_turns(messages, &mut added, config, queues, sink, cancel).await;
    sink.emit(AgentEvent::AgentEnd {
        messages: added.clone(),
        will_retry: false,
    });
    Ok(added)
}

async fn run_turns(
    messages: &mut Vec<AgentMessage>,
    added: &mut Vec<AgentMessage>,
    config: &AgentConfig,
    queues: &MessageQueues,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) {
    let mut first_turn = true;
    let mut pending = queues.take_steering();
    loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.is_empty() {
            if !first_turn {
                sink.emit(AgentEvent::TurnStart);
            }
            first_turn = false;
            for message in pending.drain(..) {
                sink.emit(AgentEvent::MessageStart {
                    message: message.clone(),
                });
                let message = end_message(config, sink, message).await;
                messages.push(message.clone());
                added.push(message);
            }

            let assistant = stream_response(messages, config, sink, cancel).await;
            let message = AgentMessage::Assistant(assistant.clone());
            added.push(message.clone());
            if assistant.stop_reason.is_failure() {
                sink.emit(AgentEvent::TurnEnd {
                    message,
                    tool_results: Vec::new(),
                });
                return;
            }

            let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
            more_tool_calls = !calls.is_empty();
            let mut results = Vec::new();
            if more_tool_calls {
                results = execute_tool_calls(&calls, config, queues, sink, cancel).await;
                for result in &results {
                    let m = AgentMessage::ToolResult(result.clone());
                    messages.push(m.clone());
                    added.push(m);
                }
            }
            sink.emit(AgentEvent::TurnEnd {
                message,
                tool_results: results,
            });
            pending = queues.take_steering();
        }
        let follow_ups = queues.take_follow_up();
        if follow_ups.is_empty() {
            return;
        }
        pending = follow_ups;
    }
}

/// Streams one model response, keeping the conversation and the sink up to date.
async fn stream_response(
    messages: &mut Vec<AgentMessage>,
    config: &AgentConfig,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> AssistantMessage {
    let history = match &config.hooks {
        Some(hooks) => hooks.transform_context(messages.clone()).await,
        None => messages.clone(),
    };
    let context = Context {
        system_prompt: Some(config.system_prompt.clone()),
        messages: convert_to_llm(&history),
        tools: config.tools.iter().map(|t| t.spec()).collect(),
    };
    let options = TurnOptions {
        thinking: config.thinking,
        cancel: cancel.clone(),
    };
    let mut stream = config.client.stream(&config.model, context, options);
    let mut partial = PartialMessage::new(AssistantMessage {
        api: config.model.api.as_str().to_string(),
        provider: config.model.provider.clone(),
        model: config.model.id.clone(),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    });
    let mut started = false;
    let final_message = loop {
        let Some(event) = stream.next().await else {
            // A client that ends without a terminal event broke its contract; record what
            // we have as an error instead of hanging or losing it.
            let mut m = partial.message.clone();
            m.stop_reason = if cancel.is_cancelled() {
                StopReason::Aborted
            } else {
                StopReason::Error
            };
            m.error_message = Some("The model stream ended without a final message".into());
            break m;
        };
        if !started && !event.is_terminal() {
            started = true;
            sink.emit(AgentEvent::MessageStart {
                message: AgentMessage::Assistant(partial.message.clone()),
            });
        }
        match event {
            StreamEvent::Done { message, .. } => break message,
            StreamEvent::Error { error, .. } => break error,
            StreamEvent::Start => {}
            other => {
                partial.apply(&other);
                sink.emit(AgentEvent::MessageUpdate { event: other });
            }
        }
    };
    let message = AgentMessage::Assistant(final_message.clone());
    if !started {
        sink.emit(AgentEvent::MessageStart {
            message: message.clone(),
        });
    }
    let message = end_message(config, sink, message).await;
    messages.push(message.clone());
    match message {
        AgentMessage::Assistant(replaced) => replaced,
        _ => final_message,
    }
}

/// Emits `message_end` for a finished message, after the hooks had their chance to
/// replace it (same role only), and returns the message as it now stands.
async fn end_message(
    config: &AgentConfig,
    sink: &mut dyn EventSink,
    message: AgentMessage,
) -> AgentMessage {
    let message = match &config.hooks {
        Some(hooks) => {
            let role = message.role();
            let replaced = hooks.message_end(message.clone()).await;
            if replaced.role() == role {
                replaced
            } else {
                message
            }
        }
        None => message,
    };
    sink.emit(AgentEvent::MessageEnd {
        message: message.clone(),
    });
    message
}

/// A tool call ready to run (with its validated arguments), or already answered
/// (unknown tool, invalid arguments, blocked by a hook).
enum Prepared {
    Immediate(ToolOutput),
    Run(Arc<dyn Tool>, ToolCall),
}

async fn prepare(call: &ToolCall, config: &AgentConfig, cancel: &CancellationToken) -> Prepared {
    if cancel.is_cancelled() {
        return Prepared::Immediate(error_output(ABORTED_BEFORE_START.to_string()));
    }
    let Some(tool) = config.tool(&call.name) else {
        return Prepared::Immediate(error_output(tool_not_found_message(&call.name)));
    };
    let args = match prepare_and_validate(tool.as_ref(), call.arguments.clone()) {
        Ok(args) => args,
        Err(err) => return Prepared::Immediate(error_output(err.message)),
    };
    let mut call = ToolCall {
        arguments: args,
        ..call.clone()
    };
    if let Some(hooks) = &config.hooks {
        match hooks.check_tool_call(&call).await {
            ToolCallVerdict::Block(reason) => {
                let reason = if reason.is_empty() {
                    "Tool execution was blocked".to_string()
                } else {
                    reason
                };
                return Prepared::Immediate(error_output(reason));
            }
            ToolCallVerdict::Run(Some(arguments)) => call.arguments = arguments,
            ToolCallVerdict::Run(None) => {}
        }
    }
    Prepared::Run(tool.clone(), call)
}

fn error_output(message: String) -> ToolOutput {
    ToolOutput {
        content: vec![UserBlock::text(message)],
        details: Some(Value::Object(Default::default())),
    }
}

/// Runs one prepared tool call to its final (output, is_error).
async fn execute_one(
    tool: Arc<dyn Tool>,
    call: ToolCall,
    config: AgentConfig,
    cancel: CancellationToken,
    updates: mpsc::UnboundedSender<(String, ToolOutput)>,
) -> (ToolOutput, bool) {
    let id = call.id.clone();
    let sink: crate::tools::UpdateSink = Arc::new(move |output: ToolOutput| {
        // The receiver lives until every call finished, so a send error cannot happen
        // while anyone cares about the update.
        let _ = updates.send((id.clone(), output));
    });
    let args = ToolCallArgs {
        call_id: call.id.clone(),
        args: call.arguments.clone(),
        cancel,
        on_update: Some(sink),
    };
    let (output, is_error) = match tool.execute(args).await {
        Ok(output) => (output, false),
        Err(err) => (
            ToolOutput {
                content: vec![UserBlock::text(err.message)],
                details: Some(
                    err.details
                        .unwrap_or_else(|| Value::Object(Default::default())),
                ),
            },
            true,
        ),
    };
    match &config.hooks {
        Some(hooks) => hooks.after_tool_call(&call, output, is_error).await,
        None => (output, is_error),
    }
}

fn result_message(call: &ToolCall, output: ToolOutput, is_error: bool) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: output.content,
        details: output.details,
        is_error,
        timestamp: now_ms(),
        extra: Default::default(),
    }
}

fn emit_end(
    sink: &mut dyn EventSink,
    call: &ToolCall,
    output: &ToolOutput,
    is_error: bool,
    duration: Option<std::time::Duration>,
) {
    sink.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: output.clone(),
        is_error,
        duration_ms: duration.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    });
}

/// Emits a tool result's `message_start` / `message_end`; returns the result as the
/// hooks left it (a `message_end` handler may replace it).
async fn emit_result_message(
    config: &AgentConfig,
    sink: &mut dyn EventSink,
    result: ToolResultMessage,
) -> ToolResultMessage {
    let message = AgentMessage::ToolResult(result.clone());
    sink.emit(AgentEvent::MessageStart {
        message: message.clone(),
    });
    match end_message(config, sink, message).await {
        AgentMessage::ToolResult(replaced) => replaced,
        _ => result,
    }
}

async fn execute_tool_calls(
    calls: &[ToolCall],
    config: &AgentConfig,
    queues: &MessageQueues,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<ToolResultMessage> {
    let sequential = config.tool_execution == ExecutionMode::Sequential
        || calls.iter().any(|c| {
            config
                .tool(&c.name)
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });
    if sequential {
        execute_sequential(calls, config, queues, sink, cancel).await
    } else {
        execute_parallel(calls, config, sink, cancel).await
    }
}

async fn execute_sequential(
    calls: &[ToolCall],
    config: &AgentConfig,
    queues: &MessageQueues,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<ToolResultMessage> {
    let mut results = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        sink.emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        });
        let (output, is_error, duration) = match prepare(call, config, cancel).await {
            Prepared::Immediate(output) => (output, true, None),
            Prepared::Run(tool, validated) => {
                let started = std::time::Instant::now();
                let (output, is_error) =
                    run_with_updates(tool, &validated, config, cancel, sink).await;
                (output, is_error, Some(started.elapsed()))
            }
        };
        emit_end(sink, call, &output, is_error, duration);
        let result = result_message(call, output, is_error);
        let result = emit_result_message(config, sink, result).await;
        results.push(result);

        if queues.has_steering() && index + 1 < calls.len() {
            for skipped in &calls[index + 1..] {
                sink.emit(AgentEvent::ToolExecutionStart {
                    tool_call_id: skipped.id.clone(),
                    tool_name: skipped.name.clone(),
                    args: skipped.arguments.clone(),
                });
                let output = error_output(SKIPPED_FOR_STEERING.to_string());
                emit_end(sink, skipped, &output, true, None);
                let result = result_message(skipped, output, true);
                let result = emit_result_message(config, sink, result).await;
                results.push(result);
            }
            break;
        }
    }
    results
}

/// Runs one tool while forwarding its partial results to the sink.
async fn run_with_updates(
    tool: Arc<dyn Tool>,
    call: &ToolCall,
    config: &AgentConfig,
    cancel: &CancellationToken,
    sink: &mut dyn EventSink,
) -> (ToolOutput, bool) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let fut = execute_one(tool, call.clone(), config.clone(), cancel.child_token(), tx);
    tokio::pin!(fut);
    loop {
        tokio::select! {
            biased;
            Some((_, partial)) = rx.recv() => {
                sink.emit(AgentEvent::ToolExecutionUpdate {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: call.arguments.clone(),
                    partial,
                });
            }
            done = &mut fut => {
                while let Ok((_, partial)) = rx.try_recv() {
                    sink.emit(AgentEvent::ToolExecutionUpdate {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        args: call.arguments.clone(),
                        partial,
                    });
                }
                return done;
            }
        }
    }
}

async fn execute_parallel(
    calls: &[ToolCall],
    config: &AgentConfig,
    sink: &mut dyn EventSink,
    cancel: &CancellationToken,
) -> Vec<ToolResultMessage> {
    let mut outcomes: Vec<Option<(ToolOutput, bool)>> = vec![None; calls.len()];
    let (tx, mut rx) = mpsc::unbounded_channel::<(String, ToolOutput)>();
    let mut running = FuturesUnordered::new();
    for (index, call) in calls.iter().enumerate() {
        sink.emit(AgentEvent::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        });
        match prepare(call, config, cancel).await {
            Prepared::Immediate(output) => {
                emit_end(sink, call, &output, true, None);
                outcomes[index] = Some((output, true));
            }
            Prepared::Run(tool, validated) => {
                let fut = execute_one(
                    tool,
                    validated,
                    config.clone(),
                    cancel.child_token(),
                    tx.clone(),
                );
                running.push(async move {
                    let started = std::time::Instant::now();
                    let outcome = fut.await;
                    (index, outcome, started.elapsed())
                });
            }
        }
    }
    drop(tx);
    let name_of = |id: &str| {
        calls
            .iter()
            .find(|c| c.id == id)
            .map(|c| (c.name.clone(), c.arguments.clone()))
    };
    while !running.is_empty() {
        tokio::select! {
            biased;
            Some((id, partial)) = rx.recv() => {
                if let Some((tool_name, args)) = name_of(&id) {
                    sink.emit(AgentEvent::ToolExecutionUpdate { tool_call_id: id, tool_name, args, partial });
                }
            }
            Some((index, (output, is_error), duration)) = running.next() => {
                emit_end(sink, &calls[index], &output, is_error, Some(duration));
                outcomes[index] = Some((output, is_error));
            }
        }
    }
    let mut results = Vec::new();
    for (call, outcome) in calls.iter().zip(outcomes) {
        let (output, is_error) = outcome
            .unwrap_or_else(|| (error_output("Tool call did not complete".to_string()), true));
        let result = result_message(call, output, is_error);
        let result = emit_result_message(config, sink, result).await;
        results.push(result);
    }
    results
}
