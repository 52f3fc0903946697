//! The event methods of [`ExtensionHost`]: each builds pi's event object, sends it to the
//! subscribed extensions in load order and combines the answers the way pi's runner does.
//!
//! - `input`: transforms chain; the first `handled` stops.
//! - `before_agent_start`: every extension may add a message; system prompts chain.
//! - `context`: each extension gets the previous one's messages.
//! - `tool_call`: argument changes chain; the first block stops. A failing extension
//!   blocks the call (pi's fail-safe rule for `tool_call`).
//! - `tool_result`: partial patches chain.
//! - `session_before_*`: the last answer wins; the first `cancel` stops.
//! - lifecycle notifications (`turn_start`, `agent_end`, …) are sent without waiting.
//!
//! A timeout or a handler error counts as "no change" and is reported; an extension
//! that died was reported when it died.

use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::events::{
    BeforeAgentStartOutcome, CompactDecision, EventName, ExtensionBranchSummary,
    ExtensionCompaction, ForkPosition, InputOutcome, InputSource, ModelSelectSource,
    SessionStartReason, SwitchReason, ToolCallDecision, ToolResultEvent, ToolResultPatch,
    TreeDecision, TreePreparation,
};
use super::host::ExtensionHost;
use super::link::Failure;
use super::protocol::event_line;
use crate::agent::{AgentEvent, AgentEventEncoder};
use crate::ai::message::{ImageContent, UserContent, now_ms};
use crate::ai::model::{Model, ThinkingLevel};
use crate::compaction::CompactionPreparation;
use crate::messages::{AgentMessage, CustomMessage};
use crate::session::entry::{BranchSummaryEntry, CompactionEntry, EntryId, SessionEntry};

/// One extension's answer to an event, failures already reported.
pub(super) enum Answer {
    Value(Value),
    Nothing,
    Failed(String),
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl ExtensionHost {
    pub(super) fn subscribers(&self, event: EventName) -> impl Iterator<Item = &Connection> {
        self.inner
            .connections
            .iter()
            .map(AsRef::as_ref)
            .filter(move |c| c.subscribes(event))
    }

    /// Sends one event to one extension and waits for its answer.
    pub(super) async fn ask(
        &self,
        conn: &Connection,
        event: EventName,
        event_json: &str,
        cancel: Option<&CancellationToken>,
    ) -> Answer {
        let timeout = conn.timeout_for(event);
        let reply = conn
            .request(event.as_str(), Some(timeout), cancel, |id| {
                event_line(Some(id), event_json)
            })
            .await;
        match reply {
            Ok(Some(value)) => Answer::Value(value),
            Ok(None) => Answer::Nothing,
            Err(Failure::TimedOut(t)) => {
                let error = format!(
                    "no answer within {} ms; treated as no change",
                    t.as_millis()
                );
                conn.report(event.as_str(), &error);
                Answer::Failed(error)
            }
            Err(Failure::Handler(error)) => {
                conn.report(event.as_str(), &error);
                Answer::Failed(error)
            }
            Err(Failure::Gone(reason)) => Answer::Failed(reason),
            Err(Failure::NotRunning) => Answer::Failed("the extension is not running".into()),
            Err(Failure::Cancelled) => Answer::Failed("cancelled".into()),
        }
    }

    /// Sends an awaited event to all subscribers at once and waits for all of them.
    pub(crate) async fn broadcast_awaited(&self, event: EventName, event_json: &str) {
        let asks = self
            .subscribers(event)
            .map(|conn| self.ask(conn, event, event_json, None));
        futures::future::join_all(asks).await;
    }

    /// Sends a notification (no answer expected) to its subscribers.
    fn notify_json(&self, event: EventName, build: impl FnOnce() -> Value) {
        if !self.has_subscribers(event) {
            return;
        }
        // The state changes with these; streaming updates leave it alone (and are many).
        if matches!(
            event,
            EventName::AgentStart
                | EventName::AgentEnd
                | EventName::TurnStart
                | EventName::TurnEnd
                | EventName::ModelSelect
                | EventName::ThinkingLevelSelect
                | EventName::SessionCompact
                | EventName::SessionTree
        ) {
            self.refresh_state();
        }
        let text = build().to_string();
        for conn in self.subscribers(event) {
            conn.send_line(event_line(None, &text));
        }
    }

    /// Sends any notification event by name with a payload built by the caller (for
    /// events without a typed method). Does nothing for unknown names or events that
    /// expect an answer.
    pub fn notify(&self, event: &str, payload: Value) {
        let Some(name) = EventName::parse(event).filter(|e| !e.expects_response()) else {
            return;
        };
        self.notify_json(name, || {
            let mut v = payload;
            if let Value::Object(map) = &mut v {
                map.insert("type".into(), Value::from(event));
            }
            v
        });
    }

    /// `session_start`; waits for the subscribers (so their setup is done before the
    /// first prompt). The event also carries the current `sessionFile` and `sessionId`.
    pub async fn session_start(
        &self,
        reason: SessionStartReason,
        previous_session_file: Option<&Path>,
    ) {
        if !self.has_subscribers(EventName::SessionStart) {
            return;
        }
        let (session_file, session_id) = self
            .inner
            .session
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        let mut event = json!({
            "type": "session_start", "reason": reason,
            "sessionFile": session_file.map(|p| p.display().to_string()),
            "sessionId": session_id,
        });
        if let Some(previous) = previous_session_file {
            event["previousSessionFile"] = Value::from(previous.display().to_string());
        }
        self.broadcast_awaited(EventName::SessionStart, &event.to_string())
            .await;
    }

    /// `input`: may transform the text and images, or handle the input entirely.
    pub async fn input(
        &self,
        text: &str,
        images: Option<&[ImageContent]>,
        source: InputSource,
    ) -> InputOutcome {
        let mut current_text = text.to_string();
        let mut current_images: Option<Vec<ImageContent>> = images.map(<[_]>::to_vec);
        let mut images_changed = false;
        for conn in self.subscribers(EventName::Input) {
            let mut event = json!({"type": "input", "text": current_text, "source": source});
            if let Some(images) = &current_images {
                event["images"] = to_json(images);
            }
            let Answer::Value(result) = self
                .ask(conn, EventName::Input, &event.to_string(), None)
                .await
            else {
                continue;
            };
            match result.get("action").and_then(Value::as_str) {
                Some("handled") => return InputOutcome::Handled,
                Some("transform") => {
                    if let Some(t) = result.get("text").and_then(Value::as_str) {
                        current_text = t.to_string();
                    }
                    if let Some(v) = result.get("images").filter(|v| !v.is_null()) {
                        match serde_json::from_value::<Vec<ImageContent>>(v.clone()) {
                            Ok(list) => {
                                current_images = Some(list);
                                images_changed = true;
                            }
                            Err(e) => conn.report("input", &format!("invalid images: {e}")),
                        }
                    }
                }
                _ => {}
            }
        }
        if current_text != text || images_changed {
            InputOutcome::Transform {
                text: current_text,
                images: current_images,
            }
        } else {
            InputOutcome::Continue
        }
    }

    /// `before_agent_start`: extensions may add messages and replace the system prompt
    /// for this run. `system_prompt_options` is pi's `BuildSystemPromptOptions` as JSON.
    pub async fn before_agent_start(
        &self,
        prompt: &str,
        images: Option<&[ImageContent]>,
        system_prompt: &str,
        system_prompt_options: &Value,
    ) -> BeforeAgentStartOutcome {
        let mut outcome = BeforeAgentStartOutcome::default();
        let mut current_prompt = system_prompt.to_string();
        for conn in self.subscribers(EventName::BeforeAgentStart) {
            let mut event = json!({
                "type": "before_agent_start", "prompt": prompt,
                "systemPrompt": current_prompt, "systemPromptOptions": system_prompt_options,
            });
            if let Some(images) = images {
                event["images"] = to_json(&images);
            }
            let answer = self
                .ask(conn, EventName::BeforeAgentStart, &event.to_string(), None)
                .await;
            let Answer::Value(result) = answer else {
                continue;
            };
            if let Some(message) = result.get("message").filter(|m| !m.is_null()) {
                match custom_message(message) {
                    Ok(m) => outcome.messages.push(m),
                    Err(e) => conn.report("before_agent_start", &e),
                }
            }
            if let Some(p) = result.get("systemPrompt").and_then(Value::as_str) {
                current_prompt = p.to_string();
                outcome.system_prompt = Some(current_prompt.clone());
            }
        }
        outcome
    }

    /// `context`: the messages sent to the model for this call, possibly rewritten.
    pub async fn context(&self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        if !self.has_subscribers(EventName::Context) {
            return messages;
        }
        let mut current: Option<Value> = None;
        let original = to_json(&messages);
        for conn in self.subscribers(EventName::Context) {
            let list = current.as_ref().unwrap_or(&original);
            let event = format!("{{\"type\":\"context\",\"messages\":{list}}}");
            let Answer::Value(result) = self.ask(conn, EventName::Context, &event, None).await
            else {
                continue;
            };
            match result.get("messages") {
                Some(v @ Value::Array(_)) => current = Some(v.clone()),
                Some(Value::Null) | None => {}
                Some(_) => conn.report("context", "\"messages\" must be a list"),
            }
        }
        match current {
            None => messages,
            Some(v) => match serde_json::from_value::<Vec<AgentMessage>>(v) {
                Ok(list) => list,
                Err(e) => {
                    self.inner.log.line(
                        "host",
                        &format!("context messages unreadable, kept the originals: {e}"),
                    );
                    messages
                }
            },
        }
    }

    /// `tool_call`: may block the call or change its arguments. An extension that fails
    /// (error, timeout, crash) blocks it, so a broken permission check never lets a call
    /// through.
    pub async fn tool_call(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        input: &Value,
    ) -> ToolCallDecision {
        let mut current = input.clone();
        let mut changed = false;
        for conn in self.subscribers(EventName::ToolCall) {
            let event = json!({
                "type": "tool_call", "toolCallId": tool_call_id, "toolName": tool_name,
                "input": current,
            });
            match self
                .ask(conn, EventName::ToolCall, &event.to_string(), None)
                .await
            {
                Answer::Value(result) => {
                    if let Some(new_input) = result.get("input").filter(|v| v.is_object()) {
                        current = new_input.clone();
                        changed = true;
                    }
                    if result.get("block").and_then(Value::as_bool) == Some(true) {
                        let reason = result
                            .get("reason")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        return ToolCallDecision::Block { reason };
                    }
                }
                Answer::Nothing => {}
                Answer::Failed(error) => {
                    return ToolCallDecision::Block {
                        reason: format!(
                            "Extension {} failed, blocking execution: {error}",
                            conn.path.display()
                        ),
                    };
                }
            }
        }
        ToolCallDecision::Allow {
            input: changed.then_some(current),
        }
    }

    /// `tool_result`: may change the content, details and error flag. `None` when no
    /// extension changed anything.
    pub async fn tool_result(&self, event: &ToolResultEvent) -> Option<ToolResultPatch> {
        let mut current = ToolResultPatch {
            content: event.content.clone(),
            details: event.details.clone(),
            is_error: event.is_error,
        };
        let mut modified = false;
        for conn in self.subscribers(EventName::ToolResult) {
            let payload = json!({
                "type": "tool_result", "toolCallId": event.tool_call_id,
                "toolName": event.tool_name, "input": event.input,
                "content": current.content, "details": current.details,
                "isError": current.is_error,
            });
            let answer = self
                .ask(conn, EventName::ToolResult, &payload.to_string(), None)
                .await;
            let Answer::Value(result) = answer else {
                continue;
            };
            if let Some(content) = result.get("content").filter(|v| !v.is_null()) {
                match super::protocol::content_from_value(content.clone()) {
                    Ok(c) => {
                        current.content = c;
                        modified = true;
                    }
                    Err(e) => conn.report("tool_result", &e),
                }
            }
            if let Some(details) = result.get("details").filter(|v| !v.is_null()) {
                current.details = Some(details.clone());
                modified = true;
            }
            if let Some(is_error) = result.get("isError").and_then(Value::as_bool) {
                current.is_error = is_error;
                modified = true;
            }
        }
        modified.then_some(current)
    }

    /// Runs a `session_before_*` event: the last non-empty answer wins, `cancel: true`
    /// stops at once. Returns `(cancelled, last answer)`.
    async fn before_event(
        &self,
        event: EventName,
        payload: &str,
        cancel: Option<&CancellationToken>,
    ) -> (bool, Option<(Value, &Connection)>) {
        let mut last = None;
        for conn in self.subscribers(event) {
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                return (true, None);
            }
            if let Answer::Value(result) = self.ask(conn, event, payload, cancel).await {
                if result.get("cancel").and_then(Value::as_bool) == Some(true) {
                    return (true, None);
                }
                last = Some((result, conn));
            }
        }
        (cancel.is_some_and(CancellationToken::is_cancelled), last)
    }

    /// `session_before_compact`: an extension may cancel the compaction or supply it.
    /// `cancel` is the compaction's own cancellation (Esc); the extension is told with a
    /// `cancel` message.
    pub async fn session_before_compact(
        &self,
        preparation: &CompactionPreparation<'_>,
        branch_entries: &[SessionEntry],
        custom_instructions: Option<&str>,
        cancel: &CancellationToken,
    ) -> CompactDecision {
        if !self.has_subscribers(EventName::SessionBeforeCompact) {
            return CompactDecision::Default;
        }
        let mut event = json!({
            "type": "session_before_compact", "preparation": preparation,
            "branchEntries": branch_entries,
        });
        if let Some(ci) = custom_instructions {
            event["customInstructions"] = Value::from(ci);
        }
        let payload = event.to_string();
        let (cancelled, last) = self
            .before_event(EventName::SessionBeforeCompact, &payload, Some(cancel))
            .await;
        if cancelled {
            return CompactDecision::Cancel;
        }
        let Some((result, conn)) = last else {
            return CompactDecision::Default;
        };
        let Some(compaction) = result.get("compaction").filter(|c| !c.is_null()) else {
            return CompactDecision::Default;
        };
        match extension_compaction(compaction, preparation.tokens_before) {
            Ok(c) => CompactDecision::Custom(c),
            Err(e) => {
                conn.report("session_before_compact", &e);
                CompactDecision::Default
            }
        }
    }

    /// `session_compact` (notification).
    pub fn session_compact(&self, entry: &CompactionEntry, from_extension: bool) {
        self.notify_json(EventName::SessionCompact, || {
            json!({"type": "session_compact", "compactionEntry": entry, "fromExtension": from_extension})
        });
    }

    /// `session_before_tree`: an extension may cancel the navigation, supply the branch
    /// summary, or change the summary instructions and label.
    pub async fn session_before_tree(
        &self,
        preparation: &TreePreparation,
        cancel: &CancellationToken,
    ) -> TreeDecision {
        if !self.has_subscribers(EventName::SessionBeforeTree) {
            return TreeDecision::default();
        }
        let payload =
            json!({"type": "session_before_tree", "preparation": preparation}).to_string();
        let (cancelled, last) = self
            .before_event(EventName::SessionBeforeTree, &payload, Some(cancel))
            .await;
        if cancelled {
            return TreeDecision {
                cancel: true,
                ..TreeDecision::default()
            };
        }
        let Some((result, conn)) = last else {
            return TreeDecision::default();
        };
        let summary = match result.get("summary").filter(|s| !s.is_null()) {
            None => None,
            Some(s) => match s.get("summary").and_then(Value::as_str) {
                Some(text) => Some(ExtensionBranchSummary {
                    summary: text.to_string(),
                    details: s.get("details").cloned().filter(|d| !d.is_null()),
                }),
                None => {
                    conn.report(
                        "session_before_tree",
                        "\"summary\" must be an object with a \"summary\" string",
                    );
                    None
                }
            },
        };
        let text = |key: &str| result.get(key).and_then(Value::as_str).map(str::to_string);
        TreeDecision {
            cancel: false,
            summary,
            custom_instructions: text("customInstructions"),
            replace_instructions: result.get("replaceInstructions").and_then(Value::as_bool),
            label: text("label"),
        }
    }

    /// `session_tree` (notification).
    pub fn session_tree(
        &self,
        new_leaf_id: Option<&str>,
        old_leaf_id: Option<&str>,
        summary_entry: Option<&BranchSummaryEntry>,
        from_extension: Option<bool>,
    ) {
        self.notify_json(EventName::SessionTree, || {
            let mut v =
                json!({"type": "session_tree", "newLeafId": new_leaf_id, "oldLeafId": old_leaf_id});
            if let Some(entry) = summary_entry {
                v["summaryEntry"] = to_json(entry);
            }
            if let Some(f) = from_extension {
                v["fromExtension"] = Value::from(f);
            }
            v
        });
    }

    /// `session_before_switch` (`/new`, `/resume`); `true` when an extension cancelled.
    pub async fn session_before_switch(
        &self,
        reason: SwitchReason,
        target_session_file: Option<&Path>,
    ) -> bool {
        if !self.has_subscribers(EventName::SessionBeforeSwitch) {
            return false;
        }
        let mut event = json!({"type": "session_before_switch", "reason": reason});
        if let Some(target) = target_session_file {
            event["targetSessionFile"] = Value::from(target.display().to_string());
        }
        self.before_event(EventName::SessionBeforeSwitch, &event.to_string(), None)
            .await
            .0
    }

    /// `session_before_fork` (`/fork`, `/clone`); `true` when an extension cancelled.
    pub async fn session_before_fork(&self, entry_id: &EntryId, position: ForkPosition) -> bool {
        if !self.has_subscribers(EventName::SessionBeforeFork) {
            return false;
        }
        let event =
            json!({"type": "session_before_fork", "entryId": entry_id, "position": position});
        self.before_event(EventName::SessionBeforeFork, &event.to_string(), None)
            .await
            .0
    }

    /// `model_select` (notification).
    pub fn model_select(&self, model: &Model, previous: Option<&Model>, source: ModelSelectSource) {
        self.notify_json(EventName::ModelSelect, || {
            json!({"type": "model_select", "model": model, "previousModel": previous, "source": source})
        });
    }

    /// `thinking_level_select` (notification).
    pub fn thinking_level_select(&self, level: ThinkingLevel, previous: ThinkingLevel) {
        self.notify_json(EventName::ThinkingLevelSelect, || {
            json!({"type": "thinking_level_select", "level": level.as_str(), "previousLevel": previous.as_str()})
        });
    }

    /// Forwards an agent-loop event to the extensions that subscribed to it
    /// (`agent_start`, `turn_start` with pi's `turnIndex`, `message_*`,
    /// `tool_execution_*`, `turn_end`, `agent_end`). Never waits. `message_end` is not
    /// sent here: the agent hooks ask for it before the event goes out (see
    /// [`ExtensionHost::message_end`]).
    pub fn agent_event(&self, event: &AgentEvent) {
        use std::sync::atomic::Ordering;
        if matches!(event, AgentEvent::MessageEnd { .. }) {
            return;
        }
        let name = match event {
            AgentEvent::AgentStart => EventName::AgentStart,
            AgentEvent::AgentEnd { .. } => EventName::AgentEnd,
            AgentEvent::TurnStart => EventName::TurnStart,
            AgentEvent::TurnEnd { .. } => EventName::TurnEnd,
            AgentEvent::MessageStart { .. } => EventName::MessageStart,
            AgentEvent::MessageUpdate { .. } => EventName::MessageUpdate,
            AgentEvent::MessageEnd { .. } => EventName::MessageEnd,
            AgentEvent::ToolExecutionStart { .. } => EventName::ToolExecutionStart,
            AgentEvent::ToolExecutionUpdate { .. } => EventName::ToolExecutionUpdate,
            AgentEvent::ToolExecutionEnd { .. } => EventName::ToolExecutionEnd,
        };
        let turns = &self.inner.turn_index;
        match event {
            AgentEvent::AgentStart => turns.store(0, Ordering::SeqCst),
            AgentEvent::TurnStart => {
                let index = turns.load(Ordering::SeqCst);
                self.notify_json(
                    name,
                    || json!({"type": "turn_start", "turnIndex": index, "timestamp": now_ms()}),
                );
                return;
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                let index = turns.fetch_add(1, Ordering::SeqCst);
                self.notify_json(name, || {
                    // Serialized as messages so each carries `role: "toolResult"`, as in pi.
                    let results: Vec<AgentMessage> = tool_results
                        .iter()
                        .map(|r| AgentMessage::ToolResult(r.clone()))
                        .collect();
                    json!({"type": "turn_end", "turnIndex": index, "message": message, "toolResults": results})
                });
                return;
            }
            _ => {}
        }
        let tracks_updates = self.has_subscribers(EventName::MessageUpdate);
        let is_message = matches!(
            event,
            AgentEvent::MessageStart { .. } | AgentEvent::MessageUpdate { .. }
        );
        if tracks_updates && is_message {
            // message_update carries the partial message, which is rebuilt from the
            // start and every delta; keep the encoder fed even if only updates are sent.
            let json = match self.inner.encoder.lock() {
                Ok(mut encoder) => encoder.encode(event),
                Err(_) => return,
            };
            if self.has_subscribers(name) {
                self.notify_json(name, || json);
            }
            return;
        }
        // Encoding an `agent_end` serializes the whole run: only for someone who listens.
        if !self.has_subscribers(name) {
            return;
        }
        let json = AgentEventEncoder::new().encode(event);
        self.notify_json(name, || json);
    }
}

fn custom_message(value: &Value) -> Result<CustomMessage, String> {
    let custom_type = value
        .get("customType")
        .and_then(Value::as_str)
        .ok_or("the message needs a \"customType\" string")?;
    let content: UserContent = serde_json::from_value(
        value
            .get("content")
            .cloned()
            .unwrap_or(Value::String(String::new())),
    )
    .map_err(|e| format!("invalid message content: {e}"))?;
    Ok(CustomMessage {
        custom_type: custom_type.to_string(),
        content,
        display: value
            .get("display")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        details: value.get("details").cloned().filter(|d| !d.is_null()),
        timestamp: now_ms(),
        extra: Default::default(),
    })
}

fn extension_compaction(value: &Value, tokens_before: u64) -> Result<ExtensionCompaction, String> {
    let summary = value
        .get("summary")
        .and_then(Value::as_str)
        .ok_or("\"compaction\" needs a \"summary\" string")?;
    let first_kept = value
        .get("firstKeptEntryId")
        .and_then(Value::as_str)
        .ok_or("\"compaction\" needs a \"firstKeptEntryId\" string")?;
    Ok(ExtensionCompaction {
        summary: summary.to_string(),
        first_kept_entry_id: EntryId(first_kept.to_string()),
        tokens_before: value
            .get("tokensBefore")
            .and_then(Value::as_u64)
            .unwrap_or(tokens_before),
        details: value.get("details").cloned().filter(|d| !d.is_null()),
    })
}
