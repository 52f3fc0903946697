//! The assistant message being assembled from a response, plus the events that describe
//! each change to it. Provider decoders call the block methods; the driver drains the
//! events after every network chunk. Usable without any I/O (the SSE benchmark and the
//! decoder unit tests feed bytes straight in).

use serde_json::Value;

use crate::ai::json_partial::parse_streaming_json;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, Cost, StopReason, TextContent, ThinkingContent, ToolCall,
    Usage, now_ms,
};
use crate::ai::model::{Model, ModelCost};
use crate::ai::stream::StreamEvent;

/// A message under construction and its pending events.
#[derive(Debug)]
pub struct Output {
    pub message: AssistantMessage,
    events: Vec<StreamEvent>,
    /// Raw argument JSON per content index (tool calls only).
    partial_args: Vec<Option<String>>,
    prices: ModelCost,
}

impl Output {
    pub fn new(model: &Model) -> Self {
        Self {
            message: AssistantMessage {
                api: model.api.to_string(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                stop_reason: StopReason::Stop,
                timestamp: now_ms(),
                ..AssistantMessage::default()
            },
            events: Vec::new(),
            partial_args: Vec::new(),
            prices: model.cost,
        }
    }

    /// Takes the events produced since the last call.
    pub fn take_events(&mut self) -> Vec<StreamEvent> {
        std::mem::take(&mut self.events)
    }

    /// Number of pending events (cheap; for callers that only count).
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    pub fn push_event(&mut self, event: StreamEvent) {
        self.events.push(event);
    }

    pub fn len(&self) -> usize {
        self.message.content.len()
    }

    pub fn is_empty(&self) -> bool {
        self.message.content.is_empty()
    }

    pub fn start_text(&mut self) -> usize {
        let idx = self.push_block(AssistantBlock::Text(TextContent::default()));
        self.events
            .push(StreamEvent::TextStart { content_index: idx });
        idx
    }

    pub fn text_delta(&mut self, idx: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantBlock::Text(t)) = self.message.content.get_mut(idx) {
            t.text.push_str(delta);
            self.events.push(StreamEvent::TextDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    pub fn end_text(&mut self, idx: usize) {
        if let Some(AssistantBlock::Text(t)) = self.message.content.get(idx) {
            self.events.push(StreamEvent::TextEnd {
                content_index: idx,
                content: t.text.clone(),
                text_signature: t.text_signature.clone(),
            });
        }
    }

    pub fn text_mut(&mut self, idx: usize) -> Option<&mut TextContent> {
        match self.message.content.get_mut(idx) {
            Some(AssistantBlock::Text(t)) => Some(t),
            _ => None,
        }
    }

    pub fn start_thinking(&mut self, signature: Option<String>) -> usize {
        let idx = self.push_block(AssistantBlock::Thinking(ThinkingContent {
            thinking_signature: signature,
            ..ThinkingContent::default()
        }));
        self.events
            .push(StreamEvent::ThinkingStart { content_index: idx });
        idx
    }

    pub fn thinking_delta(&mut self, idx: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(AssistantBlock::Thinking(t)) = self.message.content.get_mut(idx) {
            t.thinking.push_str(delta);
            self.events.push(StreamEvent::ThinkingDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    pub fn thinking_mut(&mut self, idx: usize) -> Option<&mut ThinkingContent> {
        match self.message.content.get_mut(idx) {
            Some(AssistantBlock::Thinking(t)) => Some(t),
            _ => None,
        }
    }

    pub fn end_thinking(&mut self, idx: usize) {
        if let Some(AssistantBlock::Thinking(t)) = self.message.content.get(idx) {
            self.events.push(StreamEvent::ThinkingEnd {
                content_index: idx,
                content: t.thinking.clone(),
                signature: t.thinking_signature.clone(),
                redacted: t.redacted == Some(true),
            });
        }
    }

    pub fn start_tool_call(&mut self, id: &str, name: &str) -> usize {
        let idx = self.push_block(AssistantBlock::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: Value::Object(Default::default()),
            ..ToolCall::default()
        }));
        self.partial_args.resize(idx + 1, None);
        self.partial_args[idx] = Some(String::new());
        self.events.push(StreamEvent::ToolCallStart {
            content_index: idx,
            id: id.to_string(),
            name: name.to_string(),
        });
        idx
    }

    pub fn tool_call_mut(&mut self, idx: usize) -> Option<&mut ToolCall> {
        match self.message.content.get_mut(idx) {
            Some(AssistantBlock::ToolCall(t)) => Some(t),
            _ => None,
        }
    }

    /// Appends a fragment of the arguments JSON (an empty fragment still emits an event,
    /// as pi does for fragments that only carry the id or name).
    pub fn tool_call_delta(&mut self, idx: usize, delta: &str) {
        if let Some(Some(buf)) = self.partial_args.get_mut(idx) {
            buf.push_str(delta);
            self.events.push(StreamEvent::ToolCallDelta {
                content_index: idx,
                delta: delta.to_string(),
            });
        }
    }

    /// The raw arguments text received so far for a tool call.
    pub fn tool_call_args(&self, idx: usize) -> &str {
        self.partial_args
            .get(idx)
            .and_then(|a| a.as_deref())
            .unwrap_or("")
    }

    /// Replaces the raw arguments text (APIs that resend the whole arguments at the end).
    pub fn set_tool_call_args(&mut self, idx: usize, args: &str) {
        if let Some(slot) = self.partial_args.get_mut(idx) {
            *slot = Some(args.to_string());
        }
    }

    /// Parses the arguments and emits `ToolCallEnd`. `arguments` overrides the streamed
    /// text (APIs that deliver parsed arguments).
    pub fn end_tool_call(&mut self, idx: usize, arguments: Option<Value>) {
        let parsed = match arguments {
            Some(v) => v,
            None => parse_streaming_json(self.tool_call_args(idx)),
        };
        if let Some(slot) = self.partial_args.get_mut(idx) {
            *slot = None;
        }
        if let Some(AssistantBlock::ToolCall(tc)) = self.message.content.get_mut(idx) {
            tc.arguments = parsed;
            let tool_call = tc.clone();
            self.events.push(StreamEvent::ToolCallEnd {
                content_index: idx,
                tool_call,
            });
        }
    }

    /// On failure: tool calls still streaming keep the arguments received so far.
    pub fn settle_partial_tool_calls(&mut self) {
        for idx in 0..self.partial_args.len() {
            if let Some(raw) = self.partial_args[idx].take()
                && let Some(AssistantBlock::ToolCall(tc)) = self.message.content.get_mut(idx)
            {
                tc.arguments = parse_streaming_json(&raw);
            }
        }
    }

    /// Sets token counts and computes the cost from the model's prices.
    pub fn set_usage(&mut self, input: u64, output: u64, cache_read: u64, cache_write: u64) {
        self.set_usage_with_total(
            input,
            output,
            cache_read,
            cache_write,
            input + output + cache_read + cache_write,
        );
    }

    pub fn set_usage_with_total(
        &mut self,
        input: u64,
        output: u64,
        cache_read: u64,
        cache_write: u64,
        total: u64,
    ) {
        let extra = std::mem::take(&mut self.message.usage.extra);
        let mut usage = Usage {
            input,
            output,
            cache_read,
            cache_write,
            total_tokens: total,
            cost: Cost::default(),
            extra,
        };
        usage.cost = calculate_cost(&self.prices, &usage);
        self.message.usage = usage;
    }

    fn push_block(&mut self, block: AssistantBlock) -> usize {
        self.message.content.push(block);
        self.message.content.len() - 1
    }
}

/// pi's cost formula: price per million tokens × tokens.
pub fn calculate_cost(prices: &ModelCost, usage: &Usage) -> Cost {
    let per = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
    let input = per(prices.input, usage.input);
    let output = per(prices.output, usage.output);
    let cache_read = per(prices.cache_read, usage.cache_read);
    let cache_write = per(prices.cache_write, usage.cache_write);
    Cost {
        input,
        output,
        cache_read,
        cache_write,
        total: input + output + cache_read + cache_write,
    }
}
