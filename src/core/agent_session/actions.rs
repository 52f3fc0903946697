//! What extensions do to the conversation on their own — pi's `sendMessage`,
//! `sendUserMessage`, `appendEntry`, `setLabel`, `setSessionName` — and the failures they
//! report, applied in the order they were sent by a task the session owns.
//!
//! pi's delivery rules: a custom message with `deliverAs: "nextTurn"` waits for the next
//! prompt (and is stored after it); while the agent streams, it is queued as a steering
//! (default) or follow-up message; otherwise it is stored at once, and `triggerTurn`
//! starts a run with it. A user message always starts a run (or is queued while
//! streaming). Runs started this way are counted so print mode can wait for them.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use tokio::sync::{mpsc, oneshot};

use super::{AgentSession, Inner};
use crate::agent::AgentEvent;
use crate::ai::message::{ImageContent, UserBlock, UserContent};
use crate::ai::model::ThinkingLevel;
use crate::core::events::SessionEvent;
use crate::extensions::{ActionKind, DeliverAs, ExtensionAction, InputSource};
use crate::messages::{AgentMessage, CustomMessage};

use super::prompt::{PromptOptions, StreamingBehavior};

/// Applies extension actions until the host goes away. A flush request is answered once
/// every action sent before it has been applied.
pub(crate) async fn action_loop(
    session: Weak<Inner>,
    mut actions: mpsc::UnboundedReceiver<ExtensionAction>,
    mut flushes: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
) {
    loop {
        tokio::select! {
            biased;
            action = actions.recv() => {
                let (Some(action), Some(inner)) = (action, session.upgrade()) else {
                    break;
                };
                AgentSession { inner }.apply_action(action);
            }
            ack = flushes.recv() => {
                let Some(ack) = ack else { break };
                if let Some(inner) = session.upgrade() {
                    let session = AgentSession { inner };
                    while let Ok(action) = actions.try_recv() {
                        session.apply_action(action);
                    }
                }
                let _ = ack.send(());
            }
        }
    }
}

/// Counts a background run for `wait_for_idle`, also when the run panics.
struct RunGuard(Arc<Inner>);

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.0.background_runs.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.background_idle.notify_waiters();
        }
    }
}

/// The text and images of a user message content, as pi's `sendUserMessage` splits them.
fn split_content(content: UserContent) -> (String, Vec<ImageContent>) {
    match content {
        UserContent::Text(text) => (text, Vec::new()),
        UserContent::Blocks(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match block {
                    UserBlock::Text(t) => texts.push(t.text),
                    UserBlock::Image(i) => images.push(i),
                }
            }
            (texts.join("\n"), images)
        }
    }
}

impl AgentSession {
    fn apply_action(&self, action: ExtensionAction) {
        let path = action.extension_path.display().to_string();
        let report = |event: &str, error: String| {
            self.emit(SessionEvent::ExtensionError {
                extension_path: path.clone(),
                event: event.to_string(),
                error,
            });
        };
        match action.kind {
            ActionKind::SendMessage {
                message,
                trigger_turn,
                deliver_as,
            } => self.send_custom_message(message, trigger_turn, deliver_as),
            ActionKind::SendUserMessage {
                content,
                deliver_as,
            } => self.send_user_message(content, deliver_as, path.clone()),
            ActionKind::AppendEntry { custom_type, data } => {
                let result = {
                    let mut st = self.state();
                    st.session
                        .append_custom_entry(&custom_type, data)
                        .map(|id| {
                            st.session
                                .entry(&id)
                                .and_then(|entry| serde_json::to_value(entry).ok())
                        })
                };
                match result {
                    // pi 1.6's `entry_appended`, with the entry as stored.
                    Ok(Some(entry)) => self.emit(SessionEvent::EntryAppended { entry }),
                    Ok(None) => {}
                    Err(e) => report("append_entry", e.to_string()),
                }
            }
            ActionKind::SetLabel { entry_id, label } => {
                if let Err(e) = self.set_label(entry_id.as_str(), label.as_deref()) {
                    report("set_label", e);
                }
            }
            ActionKind::SetSessionName { name } => {
                if let Err(e) = self.set_session_name(&name) {
                    report("set_session_name", e);
                }
            }
            ActionKind::SetThinkingLevel { level } => {
                let result = ThinkingLevel::parse(&level)
                    .ok_or_else(|| format!("unknown thinking level \"{level}\""))
                    .and_then(|level| self.set_thinking_level(level));
                if let Err(e) = result {
                    report("set_thinking_level", e);
                }
            }
            ActionKind::SetModel { provider, model_id } => {
                let model = self.state().registry.find(&provider, &model_id).cloned();
                let result = model
                    .ok_or_else(|| format!("model {provider}/{model_id} not found"))
                    .and_then(|model| self.set_model(model));
                if let Err(e) = result {
                    report("set_model", e);
                }
            }
            ActionKind::Shutdown => {
                self.inner.shutdown_request.notify_one();
                self.emit(SessionEvent::ShutdownRequested);
            }
            ActionKind::Abort => self.abort(),
            ActionKind::Compact {
                custom_instructions,
            } => self.compact_for_extension(custom_instructions, path.clone()),
            ActionKind::Error(e) => self.emit(SessionEvent::ExtensionError {
                extension_path: e.extension_path,
                event: e.event,
                error: e.error,
            }),
            ActionKind::Call { id, method, params } => {
                self.apply_call(action.extension_path, id, method, params)
            }
            ActionKind::RegisterTool(spec) => {
                self.apply_register_tool(&action.extension_path, spec)
            }
            ActionKind::Emit { channel, data } => {
                self.apply_emit(&action.extension_path, &channel, data)
            }
        }
    }

    /// pi's `ctx.compact()`: compacts in the background (the extension does not wait);
    /// a failure becomes an `extension_error` of event `compact`.
    fn compact_for_extension(&self, instructions: Option<String>, extension_path: String) {
        let session = self.clone();
        self.spawn_background(async move {
            if let Err(error) = session.compact(instructions.as_deref()).await {
                session.emit(SessionEvent::ExtensionError {
                    extension_path,
                    event: "compact".to_string(),
                    error,
                });
            }
        });
    }

    /// pi's `sendMessage`: adds an extension message to the conversation (see the module
    /// documentation for when it is delivered).
    pub fn send_custom_message(
        &self,
        message: CustomMessage,
        trigger_turn: bool,
        deliver_as: DeliverAs,
    ) {
        let as_message = AgentMessage::Custom(message.clone());
        let mut st = self.state();
        if deliver_as == DeliverAs::NextTurn {
            st.pending_next_turn.push(message);
            return;
        }
        if st.streaming {
            drop(st);
            match deliver_as {
                DeliverAs::FollowUp => self.inner.queues.push_follow_up(as_message),
                DeliverAs::Steer | DeliverAs::NextTurn => {
                    self.inner.queues.push_steering(as_message)
                }
            }
            return;
        }
        if trigger_turn {
            drop(st);
            let session = self.clone();
            self.spawn_background(async move {
                if let Err(e) = session.run_messages(vec![as_message]).await {
                    session.emit(SessionEvent::Notice { message: e });
                }
            });
            return;
        }
        // Not streaming: the message is part of the conversation from now on. The check
        // and the append happen under one lock, so a run cannot start in between and miss
        // it.
        st.messages.push(as_message.clone());
        let stored = st.session.append_custom_message_entry(
            &message.custom_type,
            message.content.clone(),
            message.display,
            message.details.clone(),
        );
        drop(st);
        if let Err(e) = stored {
            self.emit(SessionEvent::Notice {
                message: format!("The session file could not be updated: {e}"),
            });
        }
        self.emit(SessionEvent::Agent(AgentEvent::MessageStart {
            message: as_message.clone(),
        }));
        self.emit(SessionEvent::Agent(AgentEvent::MessageEnd {
            message: as_message,
        }));
    }

    /// pi's `sendUserMessage`: a prompt from an extension, without command handling or
    /// template expansion. While streaming it is queued (`deliverAs`, steering when
    /// absent would be an error in pi, so a missing one is reported).
    fn send_user_message(
        &self,
        content: UserContent,
        deliver_as: Option<DeliverAs>,
        extension_path: String,
    ) {
        let (text, images) = split_content(content);
        let options = PromptOptions {
            images,
            streaming_behavior: deliver_as.map(|d| match d {
                DeliverAs::FollowUp => StreamingBehavior::FollowUp,
                DeliverAs::Steer | DeliverAs::NextTurn => StreamingBehavior::Steer,
            }),
            source: Some(InputSource::Extension),
        };
        let session = self.clone();
        self.spawn_background(async move {
            if let Err(error) = session.prompt_with(&text, options, false, |_| {}).await {
                session.emit(SessionEvent::ExtensionError {
                    extension_path,
                    event: "send_user_message".into(),
                    error,
                });
            }
        });
    }

    /// Runs `work` as a counted background run.
    pub(crate) fn spawn_background(
        &self,
        work: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        self.inner.background_runs.fetch_add(1, Ordering::SeqCst);
        let guard = RunGuard(self.inner.clone());
        tokio::spawn(async move {
            let _guard = guard;
            work.await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_message_content_splits_into_text_lines_and_images() {
        let content: UserContent = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "b"}
        ]))
        .unwrap();
        let (text, images) = split_content(content);
        assert_eq!(text, "a\nb");
        assert_eq!(images.len(), 1);
        assert_eq!(
            split_content(UserContent::Text("plain".into())),
            ("plain".to_string(), Vec::new())
        );
    }
}
