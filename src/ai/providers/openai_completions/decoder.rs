//! Decoding a chat-completions stream. This is the hottest path of the program (most
//! servers speak this protocol), so chunks are deserialized into borrowed, typed structs
//! instead of `serde_json::Value`: no allocation for a field that is not used, none for a
//! delta without escapes. Fields of an unexpected type are ignored rather than fatal, as
//! pi's untyped JavaScript would.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, Visitor};
use serde_json::Value;

use super::super::output::Output;
use super::super::preview;
use super::super::wire::SseDecoder;
use crate::ai::message::{AssistantBlock, StopReason};
use crate::ai::model::Model;
use crate::ai::sse::SseEvent;

/// A string field that tolerates `null` and values of other types (read as absent).
#[derive(Debug, Default)]
struct Text<'a>(Option<Cow<'a, str>>);

impl<'a> Text<'a> {
    fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    model: Text<'a>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default, borrow)]
    choices: FirstChoice<'a>,
}

/// Only `choices[0]` is used (pi ignores the rest); keeping just it saves an allocation
/// per chunk.
#[derive(Debug, Default)]
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FirstChoice(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(FirstChoice(None))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let first = a.next_element::<Choice<'a>>()?;
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Text<'a>,
    #[serde(default)]
    usage: Option<Value>,
}

/// `delta.content`: a string, or (Mistral's magistral models) an array of parts,
/// `{"type": "text", "text"}` and `{"type": "thinking", "thinking": [{"type": "text",
/// "text"}]}`. Anything else reads as absent.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Parts(Vec<Value>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::new();
                while let Some(part) = a.next_element::<Value>()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::None)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The text of a content part: `text`, or the texts of a thinking part's `thinking` list.
fn part_text(part: &Value, field: &str) -> String {
    match part.get(field) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

#[derive(Debug, Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Content<'a>,
    #[serde(default, borrow)]
    reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    reasoning: Text<'a>,
    #[serde(default, borrow)]
    reasoning_text: Text<'a>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
    #[serde(default)]
    reasoning_details: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    arguments: Text<'a>,
}

/// Streaming state for one chat-completions response.
#[derive(Debug)]
pub struct Decoder {
    model_id: String,
    text: Option<usize>,
    thinking: Option<usize>,
    /// Content index per `tool_calls[].index` (the id is only on the first fragment).
    calls_by_index: Vec<(u64, usize)>,
    calls_by_id: Vec<(String, usize)>,
    saw_finish: bool,
    saw_done: bool,
}

impl Decoder {
    fn text_delta(&mut self, text: &str, out: &mut Output) {
        if text.is_empty() {
            return;
        }
        let idx = match self.text {
            Some(i) => i,
            None => *self.text.insert(out.start_text()),
        };
        out.text_delta(idx, text);
    }

    pub fn new(model: &Model) -> Self {
        Self {
            model_id: model.id.clone(),
            text: None,
            thinking: None,
            calls_by_index: Vec::new(),
            calls_by_id: Vec::new(),
            saw_finish: false,
            saw_done: false,
        }
    }

    fn tool_call_block(&mut self, call: &ToolCallDelta<'_>, out: &mut Output) -> usize {
        let id = call.id.get().filter(|s| !s.is_empty());
        let name = call.function.as_ref().and_then(|f| f.name.get());
        let found = call
            .index
            .and_then(|i| {
                self.calls_by_index
                    .iter()
                    .find(|(k, _)| *k == i)
                    .map(|(_, b)| *b)
            })
            .or_else(|| {
                id.and_then(|id| {
                    self.calls_by_id
                        .iter()
                        .find(|(k, _)| k == id)
                        .map(|(_, b)| *b)
                })
            });
        let block = match found {
            Some(b) => b,
            None => {
                let b = out.start_tool_call(id.unwrap_or(""), name.unwrap_or(""));
                if let Some(i) = call.index {
                    self.calls_by_index.push((i, b));
                }
                b
            }
        };
        if let Some(id) = id {
            if !self.calls_by_id.iter().any(|(k, _)| k == id) {
                self.calls_by_id.push((id.to_string(), block));
            }
            if let Some(tc) = out.tool_call_mut(block)
                && tc.id.is_empty()
            {
                tc.id = id.to_string();
            }
        }
        if let Some(name) = name
            && let Some(tc) = out.tool_call_mut(block)
            && tc.name.is_empty()
        {
            tc.name = name.to_string();
        }
        block
    }

    fn usage(&self, usage: &Value, out: &mut Output) {
        let n = |v: Option<&Value>| v.and_then(Value::as_u64).unwrap_or(0);
        let prompt = n(usage.get("prompt_tokens"));
        let reported_cached = usage
            .pointer("/prompt_tokens_details/cached_tokens")
            .or_else(|| usage.get("prompt_cache_hit_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let cache_write = n(usage.pointer("/prompt_tokens_details/cache_write_tokens"));
        // Some servers count this request's cache writes in cached_tokens as well.
        let cache_read = if cache_write > 0 {
            reported_cached.saturating_sub(cache_write)
        } else {
            reported_cached
        };
        let input = prompt.saturating_sub(cache_read + cache_write);
        let output = n(usage.get("completion_tokens"));
        out.set_usage(input, output, cache_read, cache_write);
    }
}

impl SseDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.saw_done = true;
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_str(data).map_err(|e| {
            format!(
                "Could not parse a chat completions stream event ({e}): {}",
                preview(data)
            )
        })?;
        if let Some(err) = chunk.error.as_ref().filter(|e| !e.is_null()) {
            return Err(err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string()));
        }
        if out.message.response_id.is_none()
            && let Some(id) = chunk.id.get().filter(|s| !s.is_empty())
        {
            out.message.response_id = Some(id.to_string());
        }
        if out.message.response_model.is_none()
            && let Some(m) = chunk.model.get()
            && !m.is_empty()
            && m != self.model_id
        {
            out.message.response_model = Some(m.to_string());
        }
        let top_usage = chunk.usage.as_ref().filter(|u| u.is_object());
        if let Some(usage) = top_usage {
            self.usage(usage, out);
        }
        let Some(choice) = chunk.choices.0.as_ref() else {
            return Ok(());
        };
        if top_usage.is_none()
            && let Some(usage) = choice.usage.as_ref().filter(|u| u.is_object())
        {
            self.usage(usage, out);
        }
        if let Some(reason) = choice.finish_reason.get() {
            self.saw_finish = true;
            let (stop, error) = map_finish_reason(reason);
            out.message.stop_reason = stop;
            if let Some(e) = error {
                out.message.error_message = Some(e);
            }
        }
        let Some(delta) = &choice.delta else {
            return Ok(());
        };
        match &delta.content {
            Content::Text(text) => self.text_delta(text, out),
            Content::Parts(parts) => {
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("text") => self.text_delta(&part_text(part, "text"), out),
                        Some("thinking") => {
                            let text = part_text(part, "thinking");
                            if !text.is_empty() {
                                let idx = match self.thinking {
                                    Some(i) => i,
                                    None => *self.thinking.insert(out.start_thinking(None)),
                                };
                                out.thinking_delta(idx, &text);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Content::None => {}
        }
        // Servers name the reasoning field differently; the first non-empty one wins
        // (some send the same text in two of them).
        let reasoning = [
            ("reasoning_content", &delta.reasoning_content),
            ("reasoning", &delta.reasoning),
            ("reasoning_text", &delta.reasoning_text),
        ]
        .into_iter()
        .find_map(|(field, v)| v.get().filter(|t| !t.is_empty()).map(|t| (field, t)));
        if let Some((field, text)) = reasoning {
            let idx = match self.thinking {
                Some(i) => i,
                None => *self
                    .thinking
                    .insert(out.start_thinking(Some(field.to_string()))),
            };
            out.thinking_delta(idx, text);
        }
        if let Some(calls) = &delta.tool_calls {
            for call in calls {
                let block = self.tool_call_block(call, out);
                let args = call
                    .function
                    .as_ref()
                    .and_then(|f| f.arguments.get())
                    .unwrap_or("");
                out.tool_call_delta(block, args);
            }
        }
        if let Some(details) = delta.reasoning_details.as_ref().and_then(Value::as_array) {
            for detail in details {
                if detail.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
                    && let Some(id) = detail.get("id").and_then(Value::as_str)
                    && detail.get("data").is_some_and(|d| !d.is_null())
                {
                    let target = (0..out.len()).find(|&i| {
                        matches!(out.message.content.get(i), Some(AssistantBlock::ToolCall(tc)) if tc.id == id)
                    });
                    if let Some(tc) = target.and_then(|i| out.tool_call_mut(i)) {
                        tc.thought_signature = Some(detail.to_string());
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output) -> Result<(), String> {
        for idx in 0..out.len() {
            match out.message.content.get(idx) {
                Some(AssistantBlock::Text(_)) => out.end_text(idx),
                Some(AssistantBlock::Thinking(_)) => out.end_thinking(idx),
                Some(AssistantBlock::ToolCall(_)) => out.end_tool_call(idx, None),
                None => {}
            }
        }
        if !self.saw_finish && !self.saw_done {
            return Err(
                "The response ended before it was complete (no finish_reason and no [DONE])"
                    .to_string(),
            );
        }
        if out.message.stop_reason == StopReason::Error {
            return Err(out
                .message
                .error_message
                .clone()
                .unwrap_or_else(|| "Provider returned an error stop reason".into()));
        }
        Ok(())
    }
}

fn map_finish_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::model::{Api, InputKind};
    use crate::ai::sse::SseParser;

    fn decode(body: &str) -> (Result<(), String>, Output) {
        let model = Model {
            id: "m".into(),
            name: "m".into(),
            api: Api::OpenAiCompletions,
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            thinking_level_map: None,
            input: vec![InputKind::Text],
            cost: Default::default(),
            context_window: 1,
            max_tokens: 1,
            headers: Default::default(),
            compat: None,
            extras: Default::default(),
        };
        let mut out = Output::new(&model);
        let mut d = Decoder::new(&model);
        let mut p = SseParser::new();
        let r = super::super::super::wire::decode_chunk(&mut p, &mut d, body.as_bytes(), &mut out)
            .and_then(|()| d.finish(&mut out));
        (r, out)
    }

    #[test]
    fn odd_field_types_are_ignored_and_fragments_without_index_follow_their_id() {
        let body = concat!(
            "data: {\"id\":\"c1\",\"model\":\"other\",\"choices\":[{\"delta\":{\"content\":null,\"reasoning\":\"r\",\"tool_calls\":[{\"id\":\"t1\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":[1,2],\"tool_calls\":[{\"id\":\"t1\",\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n",
        );
        let (r, out) = decode(body);
        assert_eq!(r, Ok(()));
        let m = &out.message;
        assert_eq!(m.response_id.as_deref(), Some("c1"));
        assert_eq!(m.response_model.as_deref(), Some("other"));
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(
            (m.usage.input, m.usage.cache_read, m.usage.output),
            (6, 4, 2)
        );
        let tc = m.tool_calls().next().cloned().unwrap_or_default();
        assert_eq!(
            (tc.id.as_str(), tc.name.as_str(), tc.arguments.clone()),
            ("t1", "read", serde_json::json!({"a": 1}))
        );
        assert!(
            matches!(&m.content[0], AssistantBlock::Thinking(t) if t.thinking_signature.as_deref() == Some("reasoning"))
        );
    }

    #[test]
    fn content_filter_and_error_chunks_fail_with_the_provider_reason() {
        let (r, _) = decode(
            "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"content_filter\"}]}\n\n",
        );
        assert_eq!(r, Err("Provider finish_reason: content_filter".into()));
        let (r, out) = decode(
            "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\ndata: {\"error\":{\"message\":\"upstream overloaded\"}}\n\n",
        );
        assert_eq!(r, Err("upstream overloaded".into()));
        assert_eq!(out.message.text(), "partial");
    }

    #[test]
    fn a_stream_without_finish_reason_or_done_is_incomplete() {
        let (r, _) = decode("data: {\"choices\":[{\"delta\":{\"content\":\"cut\"}}]}\n\n");
        assert_eq!(
            r,
            Err(
                "The response ended before it was complete (no finish_reason and no [DONE])".into()
            )
        );
    }
}
