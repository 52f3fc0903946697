//! APIs streamed outside this crate: pi's `registerProvider(name, { api, streamSimple })`,
//! where an extension implements the wire protocol itself. The extension host registers
//! one [`ExternalStreamer`] per API name; [`super::stream`] asks this table first, as
//! pi-ai looks up its API registry before its built-in clients.
//!
//! Streamers report pi-ai's event objects (JSON); [`event_from_json`] turns one into a
//! [`StreamEvent`]. A streamer must keep the provider contract: the stream ends with one
//! `Done` or `Error`, never out of band.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

use serde_json::Value;

use super::StreamOptions;
use crate::ai::message::{AssistantMessage, Context, StopReason, ToolCall};
use crate::ai::model::Model;
use crate::ai::stream::{EventStream, StreamEvent};

/// Streams responses for one API outside pi-rs.
pub trait ExternalStreamer: Send + Sync {
    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> EventStream;
}

struct Entry {
    owner: u64,
    streamer: Arc<dyn ExternalStreamer>,
}

static TABLE: LazyLock<RwLock<HashMap<String, Entry>>> = LazyLock::new(Default::default);

fn table_write() -> std::sync::RwLockWriteGuard<'static, HashMap<String, Entry>> {
    // Plain inserts and removals: a poisoned lock is still consistent.
    TABLE.write().unwrap_or_else(|p| p.into_inner())
}

/// Makes `streamer` serve `api` (replacing whoever served it), on behalf of `owner`.
pub fn register(api: &str, owner: u64, streamer: Arc<dyn ExternalStreamer>) {
    table_write().insert(api.to_string(), Entry { owner, streamer });
}

/// Forgets `api` if `owner` serves it.
pub fn unregister(api: &str, owner: u64) {
    let mut table = table_write();
    if table.get(api).is_some_and(|e| e.owner == owner) {
        table.remove(api);
    }
}

/// Forgets every API `owner` serves (its extension stopped).
pub fn unregister_owner(owner: u64) {
    table_write().retain(|_, e| e.owner != owner);
}

/// The streamer serving `api`, if an extension registered one.
pub fn get(api: &str) -> Option<Arc<dyn ExternalStreamer>> {
    TABLE
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(api)
        .map(|e| e.streamer.clone())
}

/// The APIs served by extensions.
pub fn apis() -> Vec<String> {
    TABLE
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .keys()
        .cloned()
        .collect()
}

fn index(event: &Value) -> Result<usize, String> {
    event
        .get("contentIndex")
        .and_then(Value::as_u64)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| "the event has no contentIndex".to_string())
}

fn text(event: &Value, key: &str) -> String {
    event
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn message(value: Option<&Value>, what: &str) -> Result<AssistantMessage, String> {
    let mut value = value
        .ok_or_else(|| format!("the event has no {what}"))?
        .clone();
    // `role` is implied (and written again when the message is stored).
    if let Some(map) = value.as_object_mut() {
        map.remove("role");
    }
    serde_json::from_value(value).map_err(|e| format!("invalid {what}: {e}"))
}

/// The block the event is about: `block` (pi-rs's Node host sends only that), else the
/// one of `partial` at `index` (pi-ai's `toolcall_start` names the call there).
fn partial_block(event: &Value, index: usize) -> Option<&Value> {
    event
        .get("block")
        .or_else(|| event.get("partial")?.get("content")?.get(index))
}

/// One pi-ai `AssistantMessageEvent` (`start`, `text_*`, `thinking_*`, `toolcall_*`,
/// `done`, `error`) as a [`StreamEvent`]. `partial` copies are not needed and ignored.
pub fn event_from_json(event: &Value) -> Result<StreamEvent, String> {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .ok_or("the event has no type")?;
    Ok(match kind {
        "start" => StreamEvent::Start,
        "text_start" => StreamEvent::TextStart {
            content_index: index(event)?,
        },
        "text_delta" => StreamEvent::TextDelta {
            content_index: index(event)?,
            delta: text(event, "delta"),
        },
        "text_end" => {
            let content_index = index(event)?;
            StreamEvent::TextEnd {
                content_index,
                content: text(event, "content"),
                text_signature: partial_block(event, content_index)
                    .and_then(|b| b.get("textSignature"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }
        }
        "thinking_start" => StreamEvent::ThinkingStart {
            content_index: index(event)?,
        },
        "thinking_delta" => StreamEvent::ThinkingDelta {
            content_index: index(event)?,
            delta: text(event, "delta"),
        },
        "thinking_end" => {
            let content_index = index(event)?;
            let block = partial_block(event, content_index);
            StreamEvent::ThinkingEnd {
                content_index,
                content: text(event, "content"),
                signature: block
                    .and_then(|b| b.get("thinkingSignature"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                redacted: block
                    .and_then(|b| b.get("redacted"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            }
        }
        "toolcall_start" => {
            let content_index = index(event)?;
            let block = partial_block(event, content_index);
            let field = |k: &str| {
                block
                    .and_then(|b| b.get(k))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            StreamEvent::ToolCallStart {
                content_index,
                id: field("id"),
                name: field("name"),
            }
        }
        "toolcall_delta" => StreamEvent::ToolCallDelta {
            content_index: index(event)?,
            delta: text(event, "delta"),
        },
        "toolcall_end" => {
            let content_index = index(event)?;
            let mut call = event
                .get("toolCall")
                .cloned()
                .ok_or("the event has no toolCall")?;
            if let Some(map) = call.as_object_mut() {
                map.remove("type");
            }
            let tool_call: ToolCall =
                serde_json::from_value(call).map_err(|e| format!("invalid toolCall: {e}"))?;
            StreamEvent::ToolCallEnd {
                content_index,
                tool_call,
            }
        }
        "done" => {
            let message = message(event.get("message"), "message")?;
            StreamEvent::Done {
                reason: message.stop_reason,
                message,
            }
        }
        "error" => {
            let mut error = message(event.get("error"), "error")?;
            if !matches!(error.stop_reason, StopReason::Error | StopReason::Aborted) {
                error.stop_reason = StopReason::Error;
            }
            StreamEvent::Error {
                reason: error.stop_reason,
                error,
            }
        }
        other => return Err(format!("unknown event type \"{other}\"")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn usage() -> Value {
        json!({"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,
               "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})
    }

    #[test]
    fn pi_ai_events_become_stream_events() {
        assert_eq!(
            event_from_json(&json!({"type":"start","partial":{}})),
            Ok(StreamEvent::Start)
        );
        assert_eq!(
            event_from_json(&json!({"type":"text_delta","contentIndex":0,"delta":"hi"})),
            Ok(StreamEvent::TextDelta {
                content_index: 0,
                delta: "hi".into()
            })
        );
        let start = json!({"type":"toolcall_start","contentIndex":1,
            "partial":{"content":[{"type":"text","text":"x"},{"type":"toolCall","id":"c1","name":"read","arguments":{}}]}});
        assert_eq!(
            event_from_json(&start),
            Ok(StreamEvent::ToolCallStart {
                content_index: 1,
                id: "c1".into(),
                name: "read".into()
            })
        );
        let end = json!({"type":"toolcall_end","contentIndex":1,
            "toolCall":{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}});
        let Ok(StreamEvent::ToolCallEnd { tool_call, .. }) = event_from_json(&end) else {
            panic!("not a toolcall_end");
        };
        assert_eq!(tool_call.arguments, json!({"path":"a"}));
        let done = json!({"type":"done","reason":"stop","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],
            "api":"x","provider":"p","model":"m","usage":usage(),"stopReason":"stop","timestamp":1}});
        let Ok(StreamEvent::Done { reason, message }) = event_from_json(&done) else {
            panic!("not done");
        };
        assert_eq!(reason, StopReason::Stop);
        assert_eq!(message.text(), "ok");
        assert!(
            message.extra.get("role").is_none(),
            "role is not kept twice"
        );
    }

    #[test]
    fn an_error_event_always_ends_as_error_or_aborted() {
        let error = json!({"type":"error","reason":"error","error":{"role":"assistant","content":[],
            "usage":usage(),"stopReason":"stop","errorMessage":"boom","timestamp":1}});
        let Ok(StreamEvent::Error { reason, error }) = event_from_json(&error) else {
            panic!("not an error");
        };
        assert_eq!(reason, StopReason::Error);
        assert_eq!(error.error_message.as_deref(), Some("boom"));
        assert!(event_from_json(&json!({"type":"nope"})).is_err());
        assert!(event_from_json(&json!({"type":"text_delta"})).is_err());
    }
}
