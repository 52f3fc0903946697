//! Loop behaviour with a scripted model and simple in-memory tools.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, TextContent, ToolCall,
    UserMessage,
};
use crate::ai::model::{Api, Model, ThinkingLevel};
use crate::ai::stream::{EventStream, StreamEvent};
use crate::messages::AgentMessage;
use crate::tools::{ExecutionMode, Tool, ToolCallArgs, ToolError, ToolOutput};

fn model() -> Model {
    serde_json::from_value(json!({
        "id": "m", "name": "m", "api": "openai-completions", "provider": "mock",
        "baseUrl": "http://127.0.0.1:1"
    }))
    .unwrap()
}

fn text(t: &str) -> AssistantMessage {
    AssistantMessage {
        content: vec![AssistantBlock::Text(TextContent::new(t))],
        stop_reason: StopReason::Stop,
        ..Default::default()
    }
}

fn calls(names: &[(&str, &str)]) -> AssistantMessage {
    AssistantMessage {
        content: names
            .iter()
            .map(|(id, name)| {
                AssistantBlock::ToolCall(ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments: json!({"ms": 30}),
                    ..Default::default()
                })
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
        ..Default::default()
    }
}

/// Replies with the scripted messages in order, recording every context it is sent.
struct Scripted {
    replies: Mutex<Vec<AssistantMessage>>,
    seen: Mutex<Vec<Context>>,
}

impl Scripted {
    fn new(replies: Vec<AssistantMessage>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into_iter().rev().collect()),
            seen: Mutex::new(Vec::new()),
        })
    }
}

impl ModelClient for Scripted {
    fn stream(&self, _model: &Model, context: Context, options: TurnOptions) -> EventStream {
        self.seen.lock().unwrap().push(context);
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop()
            .unwrap_or_else(|| text("(done)"));
        let cancel = options.cancel;
        Box::pin(async_stream(reply, cancel))
    }
}

fn async_stream(
    reply: AssistantMessage,
    cancel: CancellationToken,
) -> impl futures::Stream<Item = StreamEvent> + Send {
    let mut events = vec![StreamEvent::Start];
    for (i, block) in reply.content.iter().enumerate() {
        match block {
            AssistantBlock::Text(t) => {
                events.push(StreamEvent::TextStart { content_index: i });
                events.push(StreamEvent::TextDelta {
                    content_index: i,
                    delta: t.text.clone(),
                });
                events.push(StreamEvent::TextEnd {
                    content_index: i,
                    content: t.text.clone(),
                    text_signature: None,
                });
            }
            AssistantBlock::ToolCall(tc) => {
                events.push(StreamEvent::ToolCallStart {
                    content_index: i,
                    id: tc.id.clone(),
                    name: tc.name.clone(),
                });
                events.push(StreamEvent::ToolCallEnd {
                    content_index: i,
                    tool_call: tc.clone(),
                });
            }
            AssistantBlock::Thinking(_) => {}
        }
    }
    if cancel.is_cancelled() {
        let mut aborted = reply;
        aborted.content.clear();
        aborted.stop_reason = StopReason::Aborted;
        aborted.error_message = Some("Request was aborted".into());
        events = vec![StreamEvent::Error {
            reason: StopReason::Aborted,
            error: aborted,
        }];
    } else {
        let reason = reply.stop_reason;
        events.push(StreamEvent::Done {
            reason,
            message: reply,
        });
    }
    futures::stream::iter(events)
}

/// Sleeps `ms` (or until cancelled), logging start/finish order.
struct Sleepy {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    mode: ExecutionMode,
}

#[async_trait]
impl Tool for Sleepy {
    fn name(&self) -> &str {
        self.name
    }
    fn label(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "sleeps"
    }
    fn parameters(&self) -> Value {
        json!({"type":"object","properties":{"ms":{"type":"number"}}})
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", call.call_id));
        call.update(ToolOutput::text("working"));
        let ms = call.args["ms"].as_u64().unwrap_or(0);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
            _ = call.cancel.cancelled() => {
                self.log.lock().unwrap().push(format!("cancelled {}", call.call_id));
                return Err(ToolError::new("Command aborted"));
            }
        }
        self.log
            .lock()
            .unwrap()
            .push(format!("end {}", call.call_id));
        Ok(ToolOutput::text(format!("slept {ms}")))
    }
}

fn config(client: Arc<Scripted>, tools: Vec<Arc<dyn Tool>>) -> AgentConfig {
    AgentConfig {
        model: model(),
        thinking: ThinkingLevel::Off,
        system_prompt: "sys".into(),
        tools,
        tool_execution: ExecutionMode::Parallel,
        client,
        hooks: None,
    }
}

fn user(t: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(t, 1))
}

fn names(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter(|e| !matches!(e, AgentEvent::MessageUpdate { .. }))
        .map(|e| match e {
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                format!("{}({})", e.type_name(), message.role())
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
                format!("{}({tool_call_id})", e.type_name())
            }
            _ => e.type_name().to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn tool_calls_run_in_parallel_and_results_keep_call_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tool: Arc<dyn Tool> = Arc::new(Sleepy {
        name: "sleep",
        log: log.clone(),
        mode: ExecutionMode::Parallel,
    });
    let client = Scripted::new(vec![calls(&[("a", "sleep"), ("b", "sleep")]), text("ok")]);
    let cfg = config(client.clone(), vec![tool]);
    let mut messages = Vec::new();
    let mut events = Vec::new();
    let mut sink = |e: AgentEvent| events.push(e);
    let added = run(
        vec![user("go")],
        &mut messages,
        &cfg,
        &MessageQueues::new(),
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let roles: Vec<&str> = added.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "toolResult", "assistant"]
    );
    // Both tools started before either ended: they ran concurrently.
    assert_eq!(&log.lock().unwrap()[..2], ["start a", "start b"]);
    insta::assert_snapshot!(names(&events), @r"
    agent_start
    turn_start
    message_start(user)
    message_end(user)
    message_start(assistant)
    message_end(assistant)
    tool_execution_start(a)
    tool_execution_start(b)
    tool_execution_update(a)
    tool_execution_update(b)
    tool_execution_end(a)
    tool_execution_end(b)
    message_start(toolResult)
    message_end(toolResult)
    message_start(toolResult)
    message_end(toolResult)
    turn_end
    turn_start
    message_start(assistant)
    message_end(assistant)
    turn_end
    agent_end
    ");
    // The second request carried the tool results, in call order.
    let seen = client.seen.lock().unwrap();
    let ids: Vec<String> = seen[1]
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[tokio::test]
async fn unknown_tool_gets_an_error_result_and_the_loop_continues() {
    let client = Scripted::new(vec![calls(&[("x", "nope")]), text("sorry")]);
    let cfg = config(client, vec![]);
    let mut messages = Vec::new();
    let mut sink = |_e: AgentEvent| {};
    let added = run(
        vec![user("go")],
        &mut messages,
        &cfg,
        &MessageQueues::new(),
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let AgentMessage::ToolResult(r) = &added[2] else {
        panic!("expected a tool result")
    };
    assert!(r.is_error);
    assert_eq!(r.text(), "Tool nope not found");
    assert_eq!(added.last().unwrap().role(), "assistant");
}

#[tokio::test]
async fn steering_in_sequential_mode_skips_the_remaining_calls() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tool: Arc<dyn Tool> = Arc::new(Sleepy {
        name: "sleep",
        log: log.clone(),
        mode: ExecutionMode::Sequential,
    });
    let client = Scripted::new(vec![
        calls(&[("a", "sleep"), ("b", "sleep"), ("c", "sleep")]),
        text("steered"),
    ]);
    let cfg = config(client.clone(), vec![tool]);
    let queues = MessageQueues::new();
    let q = queues.clone();
    let mut messages = Vec::new();
    let mut sink = move |e: AgentEvent| {
        if let AgentEvent::ToolExecutionEnd { tool_call_id, .. } = &e
            && tool_call_id == "a"
        {
            q.push_steering(user("stop that"));
        }
    };
    let added = run(
        vec![user("go")],
        &mut messages,
        &cfg,
        &queues,
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let summary: Vec<String> = added
        .iter()
        .map(|m| match m {
            AgentMessage::ToolResult(r) => format!("result {} {}", r.tool_call_id, r.text()),
            AgentMessage::User(u) => format!("user {}", u.content.text()),
            other => other.role().to_string(),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "user go",
            "assistant",
            "result a slept 30",
            "result b Skipped due to queued user message.",
            "result c Skipped due to queued user message.",
            "user stop that",
            "assistant"
        ]
    );
    assert_eq!(*log.lock().unwrap(), ["start a", "end a"]);
}

#[tokio::test]
async fn follow_up_is_delivered_when_the_agent_would_stop() {
    let client = Scripted::new(vec![text("first"), text("second")]);
    let cfg = config(client.clone(), vec![]);
    let queues = MessageQueues::new();
    queues.push_follow_up(user("and then?"));
    let mut messages = Vec::new();
    let mut sink = |_e: AgentEvent| {};
    let added = run(
        vec![user("hi")],
        &mut messages,
        &cfg,
        &queues,
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let texts: Vec<String> = added
        .iter()
        .map(|m| match m {
            AgentMessage::Assistant(a) => a.text(),
            AgentMessage::User(u) => u.content.text(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(texts, ["hi", "first", "and then?", "second"]);
    assert!(queues.is_empty());
}

#[tokio::test]
async fn abort_during_a_tool_cancels_it_and_ends_the_run_aborted() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tool: Arc<dyn Tool> = Arc::new(Sleepy {
        name: "sleep",
        log: log.clone(),
        mode: ExecutionMode::Parallel,
    });
    let mut long = calls(&[("a", "sleep")]);
    if let AssistantBlock::ToolCall(tc) = &mut long.content[0] {
        tc.arguments = json!({"ms": 60_000});
    }
    let client = Scripted::new(vec![long, text("never")]);
    let cfg = config(client, vec![tool]);
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let mut messages = Vec::new();
    let mut sink = move |e: AgentEvent| {
        if let AgentEvent::ToolExecutionUpdate { .. } = e {
            c.cancel();
        }
    };
    let added = tokio::time::timeout(
        Duration::from_secs(5),
        run(
            vec![user("go")],
            &mut messages,
            &cfg,
            &MessageQueues::new(),
            &mut sink,
            &cancel,
        ),
    )
    .await
    .expect("abort must end the run promptly");
    assert_eq!(*log.lock().unwrap(), ["start a", "cancelled a"]);
    let AgentMessage::ToolResult(r) = &added[2] else {
        panic!("expected the aborted tool's result")
    };
    assert!(r.is_error);
    assert_eq!(r.text(), "Command aborted");
    let AgentMessage::Assistant(last) = added.last().unwrap() else {
        panic!("expected an aborted assistant message")
    };
    assert_eq!(last.stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn invalid_arguments_get_pi_validation_error_and_the_tool_does_not_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tool: Arc<dyn Tool> = Arc::new(Sleepy {
        name: "sleep",
        log: log.clone(),
        mode: ExecutionMode::Parallel,
    });
    let mut bad = calls(&[("a", "sleep")]);
    if let AssistantBlock::ToolCall(tc) = &mut bad.content[0] {
        tc.arguments = json!({"ms": "soon"});
    }
    let client = Scripted::new(vec![bad, text("ok")]);
    let cfg = config(client, vec![tool]);
    let mut messages = Vec::new();
    let mut sink = |_e: AgentEvent| {};
    let added = run(
        vec![user("go")],
        &mut messages,
        &cfg,
        &MessageQueues::new(),
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let AgentMessage::ToolResult(r) = &added[2] else {
        panic!("expected a tool result")
    };
    assert!(r.is_error);
    assert!(
        r.text()
            .starts_with("Validation failed for tool \"sleep\":\n  - ms:"),
        "{}",
        r.text()
    );
    assert!(log.lock().unwrap().is_empty());
}

/// Doubles every `sleep` call's `ms` and blocks `ms` of 0.
struct Rewriter;

#[async_trait]
impl AgentHooks for Rewriter {
    async fn check_tool_call(&self, call: &ToolCall) -> ToolCallVerdict {
        match call.arguments["ms"].as_u64() {
            Some(0) => ToolCallVerdict::Block("zero is not a duration".into()),
            Some(ms) => ToolCallVerdict::Run(Some(json!({"ms": ms * 2}))),
            None => ToolCallVerdict::Run(None),
        }
    }
}

#[tokio::test]
async fn a_hook_can_change_tool_arguments_or_block_the_call() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let tool: Arc<dyn Tool> = Arc::new(Sleepy {
        name: "sleep",
        log: log.clone(),
        mode: ExecutionMode::Parallel,
    });
    let mut reply = calls(&[("a", "sleep"), ("b", "sleep")]);
    if let AssistantBlock::ToolCall(tc) = &mut reply.content[1] {
        tc.arguments = json!({"ms": 0});
    }
    let client = Scripted::new(vec![reply, text("ok")]);
    let mut cfg = config(client, vec![tool]);
    cfg.hooks = Some(Arc::new(Rewriter));
    let mut messages = Vec::new();
    let mut sink = |_e: AgentEvent| {};
    let added = run(
        vec![user("go")],
        &mut messages,
        &cfg,
        &MessageQueues::new(),
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    let results: Vec<(String, bool)> = added
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some((r.text(), r.is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("slept 60".to_string(), false),
            ("zero is not a duration".to_string(), true)
        ]
    );
    assert_eq!(*log.lock().unwrap(), ["start a", "end a"]);
}

#[test]
fn api_of_the_test_model_is_parsed() {
    assert_eq!(model().api, Api::OpenAiCompletions);
}

#[tokio::test]
async fn continue_refuses_to_ask_the_model_again_after_its_own_answer() {
    let client = Scripted::new(vec![text("again")]);
    let cfg = config(client.clone(), Vec::new());
    let mut messages = vec![user("hi"), AgentMessage::Assistant(text("hello"))];
    let mut events = Vec::new();
    let mut sink = |e: AgentEvent| events.push(e);
    let queues = MessageQueues::new();
    let refused = run_continue(
        &mut messages,
        &cfg,
        &queues,
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(refused, Err(ContinueError::FromAssistant));
    assert!(client.seen.lock().unwrap().is_empty(), "nothing is sent");
    assert_eq!(messages.len(), 2);

    assert!(events.is_empty(), "nothing is emitted");
    let mut sink = |_e: AgentEvent| {};
    let mut empty = Vec::new();
    let refused = run_continue(
        &mut empty,
        &cfg,
        &queues,
        &mut sink,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(refused, Err(ContinueError::NoMessages));
}

#[tokio::test]
async fn continue_after_an_answer_sends_the_queued_messages() {
    let client = Scripted::new(vec![text("sure")]);
    let cfg = config(client.clone(), Vec::new());
    let mut messages = vec![user("hi"), AgentMessage::Assistant(text("hello"))];
    let queues = MessageQueues::new();
    queues.push_follow_up(user("and then?"));
    let mut sink = |_e: AgentEvent| {};
    let added = run_continue(
        &mut messages,
        &cfg,
        &queues,
        &mut sink,
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let roles: Vec<&str> = added.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(client.seen.lock().unwrap().len(), 1);
}
