//! Session events → chat items: user messages appear when they start, an assistant reply
//! streams into its item, each tool call gets a box that fills in as it runs, and
//! compaction, retries and navigation update the status line and the chat.

use std::time::{Duration, Instant};

use crate::agent::AgentEvent;
use crate::ai::json_partial::parse_streaming_json;
use crate::ai::message::{StopReason, ToolCall};
use crate::ai::stream::{PartialMessage, StreamEvent};
use crate::core::events::{CompactionReason, SessionEvent};
use crate::messages::{AgentMessage, CompactionSummaryMessage};
use crate::modes::interactive::components::assistant_message::AssistantMessageView;
use crate::modes::interactive::components::custom_message::CustomMessageView;
use crate::modes::interactive::components::summaries::CompactionSummaryView;
use crate::modes::interactive::components::tool_execution::{ToolExecutionState, ToolResultView};
use crate::modes::interactive::components::transcript::ChatItem;
use crate::modes::interactive::theme::ThemeToken;

use super::state::{App, Status, Streaming};

fn user_text(m: &crate::ai::message::UserMessage) -> String {
    match &m.content {
        crate::ai::message::UserContent::Text(s) => s.clone(),
        crate::ai::message::UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                crate::ai::message::UserBlock::Text(t) => Some(t.text.as_str()),
                crate::ai::message::UserBlock::Image(_) => None,
            })
            .collect(),
    }
}

impl App {
    pub fn on_session_event(&mut self, event: SessionEvent) {
        self.dirty = true;
        match event {
            SessionEvent::Agent(e) => self.on_agent_event(e),
            SessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                self.pending.steering = steering;
                self.pending.follow_up = follow_up;
            }
            SessionEvent::CompactionStart { reason } => {
                self.terminal_progress(true);
                let key = self
                    .ui()
                    .key(crate::modes::interactive::keys::Action::Interrupt);
                self.status = Status::Message(match reason {
                    CompactionReason::Manual => format!("Compacting context... ({key} to cancel)"),
                    CompactionReason::Threshold => format!("Auto-compacting... ({key} to cancel)"),
                    CompactionReason::Overflow => {
                        format!("Context overflow detected, Auto-compacting... ({key} to cancel)")
                    }
                });
            }
            SessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                error_message,
                ..
            } => {
                self.terminal_progress(false);
                self.status = if self.busy {
                    Status::Working
                } else {
                    Status::Idle
                };
                let manual = reason == CompactionReason::Manual;
                if let Some(r) = result {
                    let summary = r["summary"].as_str().unwrap_or_default().to_string();
                    let tokens_before = r["tokensBefore"].as_u64().unwrap_or(0);
                    // pi draws the chat again from the compacted context (its summary, then
                    // the messages kept) and adds the new summary below. Only after a
                    // `/compact`: an automatic one may run while a reply is on screen.
                    if manual {
                        self.rebuild_transcript();
                    }
                    self.push_item(
                        ChatItem::Compaction(CompactionSummaryView::from(
                            &CompactionSummaryMessage {
                                summary,
                                tokens_before,
                                timestamp: 0,
                            },
                        )),
                        true,
                    );
                } else if aborted && manual {
                    self.show_error("Compaction cancelled");
                } else if aborted {
                    self.show_status("Auto-compaction cancelled");
                } else if let Some(e) = error_message {
                    if manual {
                        self.show_error(e);
                    } else {
                        self.note(e, ThemeToken::Error, false);
                    }
                }
            }
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                ..
            }
            | SessionEvent::ProviderRetry {
                attempt,
                max_attempts,
                delay_ms,
                ..
            } => {
                self.status = Status::Retrying {
                    attempt,
                    max_attempts,
                    until: Instant::now() + Duration::from_millis(delay_ms),
                };
            }
            SessionEvent::AutoRetryEnd {
                success,
                final_error,
                ..
            } => {
                if !success && let Some(e) = final_error {
                    self.notice(e);
                }
                self.status = if self.busy {
                    Status::Working
                } else {
                    Status::Idle
                };
            }
            SessionEvent::Notice { message } => self.notice(format!("Warning: {message}")),
            SessionEvent::ExtensionError {
                extension_path,
                error,
                ..
            } => self.notice(format!("Extension error ({extension_path}): {error}")),
            SessionEvent::ShutdownRequested => self.shutdown_requested = true,
            SessionEvent::ModelChanged
            | SessionEvent::AgentSettled { .. }
            | SessionEvent::EntryAppended { .. }
            | SessionEvent::SummarizationRetryScheduled { .. }
            | SessionEvent::SummarizationRetryAttemptStart { .. }
            | SessionEvent::SummarizationRetryFinished
            | SessionEvent::ThinkingLevelChanged { .. }
            | SessionEvent::SessionInfoChanged { .. } => {}
            SessionEvent::ContextRebuilt => {
                self.refresh_usage();
                self.rebuild_transcript();
            }
            SessionEvent::SessionReplaced => {
                // The new file's own warnings follow as `SessionLoadWarning`s.
                self.session_warnings.clear();
                self.refresh_usage();
                self.rebuild_transcript();
            }
            SessionEvent::SessionLoadWarning { warning } => self.session_warning(&warning),
            SessionEvent::BranchSummaryStart => {
                let key = self
                    .ui()
                    .key(crate::modes::interactive::keys::Action::Interrupt);
                self.status = Status::Message(format!("Summarizing branch... ({key} to cancel)"));
            }
            SessionEvent::BranchSummaryEnd { .. } => {
                self.status = Status::Idle;
            }
        }
    }

    fn on_agent_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::AgentStart => {
                self.terminal_progress(true);
                self.busy = true;
                if !matches!(self.status, Status::Message(_)) {
                    self.status = Status::Working;
                }
            }
            AgentEvent::AgentEnd { .. } => {
                self.terminal_progress(false);
                self.status = Status::Idle;
            }
            AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => {}
            AgentEvent::MessageStart { message } => match message {
                AgentMessage::User(u) => {
                    let text = user_text(&u);
                    if !text.is_empty() {
                        self.push_item(ChatItem::user(text), true);
                    }
                }
                AgentMessage::Custom(c) if c.display => {
                    self.push_item(ChatItem::Custom(CustomMessageView::new(c)), true);
                }
                AgentMessage::Assistant(a) => {
                    self.status = Status::Working;
                    let view = AssistantMessageView::new(a.clone())
                        .with_hidden_thinking(self.hide_thinking);
                    let item = self.push_item(ChatItem::Assistant(view), false);
                    self.streaming = Some(Streaming {
                        partial: PartialMessage::new(a),
                        item,
                    });
                }
                _ => {}
            },
            AgentEvent::MessageUpdate { event } => self.on_stream_event(event),
            AgentEvent::MessageEnd { message } => {
                if let AgentMessage::Assistant(a) = message {
                    self.usage.add(&a);
                    let streaming = self.streaming.take();
                    let item = match streaming {
                        Some(s) => s.item,
                        None => self.push_item(
                            ChatItem::Assistant(
                                AssistantMessageView::new(a.clone())
                                    .with_hidden_thinking(self.hide_thinking),
                            ),
                            false,
                        ),
                    };
                    let failure = match a.stop_reason {
                        StopReason::Aborted => Some("Operation aborted".to_string()),
                        StopReason::Error => Some(
                            a.error_message
                                .clone()
                                .filter(|e| !e.is_empty())
                                .unwrap_or_else(|| "Error".into()),
                        ),
                        _ => None,
                    };
                    let calls: Vec<ToolCall> = a.tool_calls().cloned().collect();
                    self.transcript.update_at(item, |i| {
                        if let ChatItem::Assistant(v) = i {
                            v.message = a;
                        }
                    });
                    self.mark_done(item);
                    for call in calls {
                        let index = self.tool_item(&call);
                        self.transcript.update_at(index, |i| {
                            if let ChatItem::Tool(t) = i {
                                t.call = call.clone();
                                t.args_complete = true;
                            }
                        });
                        // A failed turn's calls never run: close their boxes now.
                        if let Some(reason) = &failure {
                            self.transcript.update_at(index, |i| {
                                if let ChatItem::Tool(t) = i {
                                    t.result = Some(ToolResultView::error(reason));
                                    t.partial = false;
                                }
                            });
                            self.mark_done(index);
                            self.tool_items.remove(&call.id);
                        }
                    }
                }
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let call = ToolCall {
                    id: tool_call_id,
                    name: tool_name,
                    arguments: args,
                    ..ToolCall::default()
                };
                self.tool_started.insert(call.id.clone(), Instant::now());
                let is_bash = call.name == "bash";
                let index = self.tool_item(&call);
                self.transcript.update_at(index, |i| {
                    if let ChatItem::Tool(t) = i {
                        t.execution_started = true;
                    }
                });
                if is_bash {
                    // pi's bash starts with an empty update, so its box shows a live
                    // "Elapsed" from the first frame on.
                    self.transcript.update_at(index, |i| {
                        if let ChatItem::Tool(t) = i
                            && t.result.is_none()
                        {
                            t.result = Some(ToolResultView {
                                content: Vec::new(),
                                details: None,
                                is_error: false,
                            });
                            t.partial = true;
                            t.elapsed = Some(std::time::Duration::ZERO);
                        }
                    });
                }
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial,
                ..
            } => {
                let elapsed = self.tool_started.get(&tool_call_id).map(Instant::elapsed);
                if let Some(&index) = self.tool_items.get(&tool_call_id) {
                    self.transcript.update_at(index, |i| {
                        if let ChatItem::Tool(t) = i {
                            t.result = Some(ToolResultView {
                                content: partial.content,
                                details: partial.details,
                                is_error: false,
                            });
                            t.partial = true;
                            if t.elapsed.is_some() {
                                t.elapsed = elapsed;
                            }
                        }
                    });
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => {
                let elapsed = self
                    .tool_started
                    .remove(&tool_call_id)
                    .map(|start| start.elapsed());
                if let Some(index) = self.tool_items.remove(&tool_call_id) {
                    self.transcript.update_at(index, |i| {
                        if let ChatItem::Tool(t) = i {
                            t.result = Some(ToolResultView {
                                content: result.content,
                                details: result.details,
                                is_error,
                            });
                            t.partial = false;
                            t.elapsed = elapsed;
                        }
                    });
                    self.mark_done(index);
                }
            }
        }
    }

    /// Once a second, the "Elapsed" line of running tools that show one moves on (pi
    /// redraws it on a one-second timer; output arriving updates it too).
    pub(super) fn advance_tool_clocks(&mut self) {
        for (id, started) in &self.tool_started {
            let Some(&index) = self.tool_items.get(id) else {
                continue;
            };
            let seconds = started.elapsed().as_secs();
            let behind = matches!(
                self.transcript.get(index),
                Some(ChatItem::Tool(t)) if t.partial && t.elapsed.is_some_and(|e| e.as_secs() < seconds)
            );
            if behind {
                self.transcript.update_at(index, |i| {
                    if let ChatItem::Tool(t) = i {
                        t.elapsed = Some(std::time::Duration::from_secs(seconds));
                    }
                });
                self.dirty = true;
            }
        }
    }

    /// The box of a tool call, created on first sight.
    fn tool_item(&mut self, call: &ToolCall) -> usize {
        if let Some(&index) = self.tool_items.get(&call.id) {
            return index;
        }
        let mut state = ToolExecutionState::new(call.clone());
        state.expanded = self.transcript.expanded();
        let index = self.push_item(ChatItem::Tool(state), false);
        self.tool_items.insert(call.id.clone(), index);
        index
    }

    fn on_stream_event(&mut self, event: StreamEvent) {
        let Some(streaming) = self.streaming.as_mut() else {
            return;
        };
        streaming.partial.apply(&event);
        let item = streaming.item;
        // The view's message is updated in place (no copy of the growing text per delta).
        self.transcript.update_at(item, |i| {
            if let ChatItem::Assistant(v) = i {
                let mut view = PartialMessage::new(std::mem::take(&mut v.message));
                view.apply(&event);
                v.message = view.message;
            }
        });
        match &event {
            StreamEvent::ToolCallStart {
                content_index,
                id,
                name,
            } => {
                let call = ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: serde_json::Value::Object(Default::default()),
                    ..ToolCall::default()
                };
                let index = self.tool_item(&call);
                let _ = content_index;
                self.transcript.update_at(index, |i| {
                    if let ChatItem::Tool(t) = i {
                        t.args_complete = false;
                    }
                });
            }
            StreamEvent::ToolCallDelta { content_index, .. } => {
                let raw = self
                    .streaming
                    .as_ref()
                    .and_then(|s| s.partial.partial_args.get(*content_index).cloned())
                    .flatten();
                let id = match self
                    .streaming
                    .as_ref()
                    .and_then(|s| s.partial.message.content.get(*content_index))
                {
                    Some(crate::ai::message::AssistantBlock::ToolCall(tc)) => tc.id.clone(),
                    _ => String::new(),
                };
                if let (Some(raw), Some(&index)) = (raw, self.tool_items.get(&id)) {
                    let args = parse_streaming_json(&raw);
                    self.transcript.update_at(index, |i| {
                        if let ChatItem::Tool(t) = i {
                            t.call.arguments = args;
                        }
                    });
                }
            }
            StreamEvent::ToolCallEnd { tool_call, .. } => {
                if let Some(&index) = self.tool_items.get(&tool_call.id) {
                    let call = tool_call.clone();
                    self.transcript.update_at(index, |i| {
                        if let ChatItem::Tool(t) = i {
                            t.call = call;
                            t.args_complete = true;
                        }
                    });
                }
            }
            _ => {}
        }
    }
}
