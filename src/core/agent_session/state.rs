//! Read-side views of a session: the state snapshot RPC's `get_state` returns, statistics
//! for `/session` and `get_session_stats`, context usage for the footer, and the system
//! prompt rebuilt from the active tools and resources.

use std::ops::ControlFlow;
use std::path::Path;

use serde::Serialize;

use super::{AgentSession, State};
use crate::ai::message::{StopReason, js_number};
use crate::ai::model::{Model, ThinkingLevel};
use crate::compaction::estimate_context_tokens;
use crate::core::system_prompt::{SystemPromptInput, build_system_prompt, today};
use crate::messages::AgentMessage;
use crate::session::entry::SessionEntry;
use crate::session::tree::{EntryKind, MessageRole};

/// A snapshot of what the session is doing (RPC `get_state`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// Without a model pi shows its "unknown" stand-in (see [`unknown_model_json`]).
    #[serde(serialize_with = "model_or_stand_in")]
    pub model: Option<Model>,
    pub thinking_level: ThinkingLevel,
    pub is_streaming: bool,
    pub is_compacting: bool,
    pub steering_mode: &'static str,
    pub follow_up_mode: &'static str,
    // pi leaves out what is undefined (an in-memory session has no file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_name: Option<String>,
    pub auto_compaction_enabled: bool,
    pub message_count: usize,
    pub pending_message_count: usize,
}

/// pi's stand-in for "no model" (pi-agent-core's initial agent state), as RPC clients
/// see it: every string "unknown" or empty, every number an integer zero.
pub fn unknown_model_json() -> serde_json::Value {
    serde_json::json!({
        "id": "unknown",
        "name": "unknown",
        "api": "unknown",
        "provider": "unknown",
        "baseUrl": "",
        "reasoning": false,
        "input": [],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 0,
        "maxTokens": 0,
    })
}

fn model_or_stand_in<S: serde::Serializer>(
    model: &Option<Model>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match model {
        Some(model) => model.serialize(serializer),
        None => unknown_model_json().serialize(serializer),
    }
}

/// Token totals (RPC `get_session_stats`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// How full the context window is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// `None` right after a compaction, until the next answer reports usage.
    pub tokens: Option<u64>,
    pub context_window: u64,
    #[serde(serialize_with = "js_number_or_null")]
    pub percent: Option<f64>,
}

/// An optional number as JavaScript writes it (`30`, not `30.0`; `null` when absent).
fn js_number_or_null<S: serde::Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => js_number(v, s),
        None => s.serialize_none(),
    }
}

/// Message counts, tokens and cost of the session (RPC `get_session_stats`, `/session`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    pub user_messages: usize,
    pub assistant_messages: usize,
    pub tool_calls: usize,
    pub tool_results: usize,
    pub total_messages: usize,
    pub tokens: TokenTotals,
    #[serde(serialize_with = "js_number")]
    pub cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

fn mode_str(mode: crate::agent::DeliveryMode) -> &'static str {
    match mode {
        crate::agent::DeliveryMode::OneAtATime => "one-at-a-time",
        crate::agent::DeliveryMode::All => "all",
    }
}

impl State {
    /// Rebuilds the system prompt from tools and resources (after tools or resources change).
    pub(crate) fn rebuild_system_prompt(&mut self, cwd: &Path) {
        let date = today();
        let tools: Vec<(&str, Option<&str>)> = self
            .tools
            .iter()
            .map(|t| (t.name(), t.prompt_snippet()))
            .collect();
        let guidelines: Vec<&str> = self
            .tools
            .iter()
            .flat_map(|t| t.prompt_guidelines().iter().copied())
            .collect();
        let append: Vec<&str> = self.resources.append.iter().map(String::as_str).collect();
        let mut input = SystemPromptInput::new(cwd, &date);
        input.custom_prompt = self.resources.custom_prompt.as_deref();
        input.tools = tools;
        input.extra_guidelines = guidelines;
        input.append = append;
        input.context_files = &self.resources.context_files;
        input.skills_block = self.resources.skills_block.as_deref();
        self.system_prompt = build_system_prompt(&input);
    }

    /// Whether the path holds a compaction and no successful answer after it reported
    /// its context size. Walks back from the leaf, parsing only assistant messages, and
    /// stops at the latest compaction.
    fn compacted_without_fresh_usage(&self) -> bool {
        let mut fresh = None;
        let compacted = self.session.walk_back(None, |head| {
            match head.kind {
                EntryKind::Compaction => return ControlFlow::Break(()),
                EntryKind::Message(MessageRole::Assistant) if fresh.is_none() => {
                    if let Some(SessionEntry::Message(m)) = self.session.entry(&head.id)
                        && let AgentMessage::Assistant(a) = &m.message
                        && !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                    {
                        fresh = Some(a.usage.context_tokens() > 0);
                    }
                }
                _ => {}
            }
            ControlFlow::Continue(())
        });
        compacted.is_some() && fresh != Some(true)
    }

    pub(crate) fn context_usage(&self) -> Option<ContextUsage> {
        let window = self.model.as_ref()?.context_window;
        if window == 0 {
            return None;
        }
        // After a compaction the last usage describes the old, bigger context: only a
        // successful answer after the compaction tells the real size.
        if self.compacted_without_fresh_usage() {
            return Some(ContextUsage {
                tokens: None,
                context_window: window,
                percent: None,
            });
        }
        let estimate = estimate_context_tokens(&self.messages);
        Some(ContextUsage {
            tokens: Some(estimate.tokens),
            context_window: window,
            percent: Some(estimate.tokens as f64 / window as f64 * 100.0),
        })
    }
}

impl AgentSession {
    /// What the session is doing right now.
    pub fn status(&self) -> SessionStatus {
        let st = self.state();
        SessionStatus {
            model: st.model.clone(),
            thinking_level: st.thinking,
            is_streaming: st.streaming,
            is_compacting: st.compacting,
            steering_mode: mode_str(self.inner.queues.steering_mode()),
            follow_up_mode: mode_str(self.inner.queues.follow_up_mode()),
            session_file: st.session.session_file().map(|p| p.display().to_string()),
            session_id: st.session.session_id().to_string(),
            session_name: st.session.session_name().map(str::to_string),
            auto_compaction_enabled: st.auto_compaction,
            message_count: st.messages.len(),
            pending_message_count: self.inner.queues.len(),
        }
    }

    /// Counts, tokens and cost of the agent's current messages (pi's `getSessionStats`).
    pub fn stats(&self) -> SessionStats {
        let st = self.state();
        let mut stats = SessionStats {
            session_file: st.session.session_file().map(|p| p.display().to_string()),
            session_id: st.session.session_id().to_string(),
            user_messages: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            total_messages: 0,
            tokens: TokenTotals::default(),
            cost: 0.0,
            context_usage: st.context_usage(),
        };
        // As pi 1.6: the whole file counts (abandoned branches too), with the usage of
        // `usage` entries, summaries and tool results besides the assistant turns.
        let mut add = |usage: &crate::ai::message::Usage| {
            stats.tokens.input += usage.input;
            stats.tokens.output += usage.output;
            stats.tokens.cache_read += usage.cache_read;
            stats.tokens.cache_write += usage.cache_write;
            stats.cost += usage.cost.total;
        };
        let extra_usage = |extra: &crate::ai::message::Extra| {
            extra
                .get("usage")
                .and_then(|u| serde_json::from_value::<crate::ai::message::Usage>(u.clone()).ok())
        };
        let (mut users, mut assistants, mut calls, mut results, mut messages) = (0, 0, 0, 0, 0);
        let ids: Vec<_> = st
            .session
            .heads()
            .filter(|h| {
                matches!(
                    h.kind,
                    EntryKind::Message(_)
                        | EntryKind::Usage
                        | EntryKind::Compaction
                        | EntryKind::BranchSummary
                )
            })
            .map(|h| h.id)
            .collect();
        for id in &ids {
            match st.session.entry(id) {
                Some(SessionEntry::Usage(u)) => add(&u.usage),
                Some(SessionEntry::Compaction(c)) => {
                    if let Some(usage) = extra_usage(&c.extra) {
                        add(&usage);
                    }
                }
                Some(SessionEntry::BranchSummary(b)) => {
                    if let Some(usage) = extra_usage(&b.extra) {
                        add(&usage);
                    }
                }
                Some(SessionEntry::Message(m)) => {
                    messages += 1;
                    match &m.message {
                        AgentMessage::User(_) => users += 1,
                        AgentMessage::ToolResult(r) => {
                            results += 1;
                            if let Some(usage) = extra_usage(&r.extra) {
                                add(&usage);
                            }
                        }
                        AgentMessage::Assistant(a) => {
                            assistants += 1;
                            calls += a.tool_calls().count();
                            add(&a.usage);
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        stats.user_messages = users;
        stats.assistant_messages = assistants;
        stats.tool_calls = calls;
        stats.tool_results = results;
        stats.total_messages = messages;
        let t = &mut stats.tokens;
        t.total = t.input + t.output + t.cache_read + t.cache_write;
        stats
    }

    /// How full the context window is (`None` without a model).
    pub fn context_usage(&self) -> Option<ContextUsage> {
        self.state().context_usage()
    }

    /// Text of the last assistant message (RPC `get_last_assistant_text`, `/copy`), as pi
    /// finds it: the last assistant message that is not an empty aborted one, its text
    /// blocks joined and trimmed; `None` when that is empty (e.g. only tool calls).
    pub fn last_assistant_text(&self) -> Option<String> {
        let st = self.state();
        let last = st.messages.iter().rev().find_map(|m| match m {
            AgentMessage::Assistant(a)
                if !(a.stop_reason == StopReason::Aborted && a.content.is_empty()) =>
            {
                Some(a)
            }
            _ => None,
        })?;
        let text = last.text();
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }
}
