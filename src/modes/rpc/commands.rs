//! Running RPC commands against the [`AgentSession`]: one handler per command, each
//! answering with pi's exact `data` shape.
//!
//! Commands run in the order they arrive, one at a time, so a pipelined client sees the
//! effect of `set_model` in the `get_state` after it. Work that can take long — a prompt's
//! run, `bash`, `compact`, a summarizing `navigate_tree` — is started in order and
//! finishes in the background, answering when done, so `abort`, `steer` or `get_state`
//! are never stuck behind it. `prompt` is answered when the prompt is accepted, before its
//! events, as pi does.

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;

use super::export::ExportJob;
use super::output::RpcOutput;
use super::protocol::{Request, RequestId, Response, RpcCommand, WireStreamingBehavior};
use super::tree;
use crate::ai::message::ImageContent;
use crate::core::agent_session::{
    AgentSession, Direction, PromptDisposition, PromptOptions, StreamingBehavior,
    compaction_result_json,
};
use crate::core::command_list::command_list;
use crate::core::settings::QueueMode;
use crate::extensions::InputSource;

/// `Ok(None)`: success without `data`.
type Outcome = Result<Option<Value>, String>;

/// Whether a handler answered or arranged to answer later.
enum Reply {
    Now(Outcome),
    Later,
}

/// Answers one request, now or from a background task.
#[derive(Clone)]
struct Responder {
    id: Option<RequestId>,
    command: &'static str,
    output: RpcOutput,
}

impl Responder {
    fn send(&self, outcome: Outcome) {
        self.output.respond(Response {
            id: self.id.clone(),
            command: self.command.to_string(),
            outcome,
        });
    }
}

fn to_json(value: &impl Serialize) -> Result<Value, String> {
    serde_json::to_value(value)
        .map_err(|e| format!("internal error: cannot encode the answer: {e}"))
}

/// `prompt`/`steer`/`follow_up` images: pi's `ImageContent` objects.
fn parse_images(images: Option<Vec<Value>>) -> Result<Vec<ImageContent>, String> {
    images
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let Value::Object(mut map) = value else {
                return Err(format!(
                    "images[{i}] must be an object: {{\"type\": \"image\", \"data\": <base64>, \"mimeType\": \"image/png\"}}"
                ));
            };
            match map.remove("type") {
                None => {}
                Some(Value::String(kind)) if kind == "image" => {}
                Some(other) => {
                    return Err(format!(
                        "images[{i}] has type {other}; only \"image\" is supported"
                    ));
                }
            }
            serde_json::from_value::<ImageContent>(Value::Object(map))
                .map_err(|e| format!("images[{i}]: {e}"))
        })
        .collect()
}

fn queue_mode(kind: &str, mode: &str) -> Result<QueueMode, String> {
    QueueMode::parse(mode)
        .ok_or_else(|| format!("Invalid {kind} mode \"{mode}\": use \"all\" or \"one-at-a-time\""))
}

fn signal(settled: &Mutex<Option<oneshot::Sender<()>>>) {
    let sender = settled.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(sender) = sender {
        let _ = sender.send(());
    }
}

/// Executes commands for one RPC connection.
pub struct Rpc {
    session: AgentSession,
    output: RpcOutput,
    tasks: TaskTracker,
}

impl Rpc {
    pub fn new(session: AgentSession, output: RpcOutput) -> Self {
        Rpc {
            session,
            output,
            tasks: TaskTracker::new(),
        }
    }

    /// Background work still running (prompt runs, bash, compaction, summaries).
    pub fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// What a stop command does the moment it is read, ahead of commands still waiting
    /// their turn (it acts again, and answers, in order).
    pub fn act_on_arrival(&self, command: &RpcCommand) {
        match command {
            RpcCommand::Abort => self.session.abort(),
            RpcCommand::AbortBash => self.session.abort_bash(),
            RpcCommand::AbortRetry => self.session.abort_retry(),
            _ => {}
        }
    }

    /// Starts `work` now — it runs up to its first wait before the next command is
    /// handled, so a `bash` is registered before a following `abort_bash` — and finishes
    /// it in the background, answering when it is done.
    fn start<F>(&self, responder: Responder, work: F)
    where
        F: Future<Output = Outcome> + Send + 'static,
    {
        let mut work = Box::pin(work);
        let mut cx = Context::from_waker(Waker::noop());
        match work.as_mut().poll(&mut cx) {
            Poll::Ready(outcome) => responder.send(outcome),
            Poll::Pending => {
                self.tasks.spawn(async move { responder.send(work.await) });
            }
        }
    }

    /// Runs one command and answers it (or arranges the answer).
    pub async fn execute(&self, request: Request) {
        let Request { id, command } = request;
        let responder = Responder {
            id,
            command: command.name(),
            output: self.output.clone(),
        };
        match self.dispatch(command, &responder).await {
            Reply::Now(outcome) => responder.send(outcome),
            Reply::Later => {}
        }
    }

    async fn dispatch(&self, command: RpcCommand, responder: &Responder) -> Reply {
        let session = &self.session;
        let outcome = match command {
            RpcCommand::Prompt {
                message,
                images,
                streaming_behavior,
            } => {
                let images = match parse_images(images) {
                    Ok(images) => images,
                    Err(e) => return Reply::Now(Err(e)),
                };
                let options = PromptOptions {
                    images,
                    streaming_behavior: streaming_behavior.map(|b| match b {
                        WireStreamingBehavior::Steer => StreamingBehavior::Steer,
                        WireStreamingBehavior::FollowUp => StreamingBehavior::FollowUp,
                    }),
                    source: Some(InputSource::Rpc),
                };
                self.prompt(responder.clone(), message, options).await;
                return Reply::Later;
            }
            RpcCommand::Steer { message, images } => {
                self.queue_input(message, images, StreamingBehavior::Steer)
                    .await
            }
            RpcCommand::FollowUp { message, images } => {
                self.queue_input(message, images, StreamingBehavior::FollowUp)
                    .await
            }
            RpcCommand::ClearQueue => {
                let (steering, follow_up) = session.clear_queues();
                Ok(Some(json!({"steering": steering, "followUp": follow_up})))
            }
            RpcCommand::GetAvailableThinkingLevels => {
                let levels: Vec<&str> = session
                    .available_thinking_levels()
                    .into_iter()
                    .map(|l| l.as_str())
                    .collect();
                Ok(Some(json!({"levels": levels})))
            }
            RpcCommand::GetEntries { since } => tree::entries_json(session, since.as_deref()),
            RpcCommand::GetTree => {
                let data = tree::nested_tree_text(session);
                self.output.send_raw(&Response::success_with_raw_data(
                    responder.id.clone(),
                    "get_tree",
                    &data,
                ));
                return Reply::Later;
            }
            RpcCommand::Abort => {
                // Again, in order: a prompt accepted since the first abort stops too.
                session.abort();
                let session = session.clone();
                let responder = responder.clone();
                // pi answers once the agent is idle (the aborted answer is recorded).
                self.tasks.spawn(async move {
                    session.wait_for_operation().await;
                    responder.send(Ok(None));
                });
                return Reply::Later;
            }
            RpcCommand::NewSession { parent_session } => session
                .new_session(parent_session)
                .await
                .map(|()| Some(json!({"cancelled": false}))),
            RpcCommand::GetState => to_json(&session.status()).map(Some),
            RpcCommand::GetMessages => {
                to_json(&session.messages()).map(|messages| Some(json!({"messages": messages})))
            }
            RpcCommand::SetModel { provider, model_id } => self.set_model(&provider, &model_id),
            RpcCommand::CycleModel => match session.cycle_model(Direction::Forward) {
                Ok(Some(cycled)) => to_json(&cycled.model).map(|model| {
                    Some(json!({
                        "model": model,
                        "thinkingLevel": cycled.thinking.as_str(),
                        "isScoped": cycled.is_scoped,
                    }))
                }),
                Ok(None) => Ok(Some(Value::Null)),
                Err(e) => Err(e),
            },
            RpcCommand::GetAvailableModels => {
                let models = session.available_models();
                to_json(&models).map(|models| Some(json!({"models": models})))
            }
            RpcCommand::SetThinkingLevel { level } => {
                session.set_thinking_level(level).map(|_| None)
            }
            RpcCommand::CycleThinkingLevel => match session.cycle_thinking_level() {
                Ok(Some(level)) => Ok(Some(json!({"level": level.as_str()}))),
                Ok(None) => Ok(Some(Value::Null)),
                Err(e) => Err(e),
            },
            RpcCommand::SetSteeringMode { mode } => queue_mode("steering", &mode).map(|mode| {
                session.set_steering_mode(mode);
                None
            }),
            RpcCommand::SetFollowUpMode { mode } => queue_mode("follow-up", &mode).map(|mode| {
                session.set_follow_up_mode(mode);
                None
            }),
            RpcCommand::Compact {
                custom_instructions,
            } => {
                let session = session.clone();
                self.start(responder.clone(), async move {
                    session
                        .compact(custom_instructions.as_deref())
                        .await
                        .map(|result| Some(compaction_result_json(&result)))
                });
                return Reply::Later;
            }
            RpcCommand::SetAutoCompaction { enabled } => {
                session.set_auto_compaction(enabled);
                Ok(None)
            }
            RpcCommand::SetAutoRetry { enabled } => {
                session.set_auto_retry(enabled);
                Ok(None)
            }
            RpcCommand::AbortRetry => {
                session.abort_retry();
                Ok(None)
            }
            RpcCommand::Bash {
                command,
                exclude_from_context,
            } => {
                let session = session.clone();
                let output = self.output.clone();
                let id = responder.id.clone();
                self.start(responder.clone(), async move {
                    // Every chunk as it comes (the response may hold only the tail).
                    let on_chunk = move |delta: &str| {
                        let mut event = serde_json::Map::new();
                        event.insert("type".into(), "bash_execution_update".into());
                        if let Some(RequestId(id)) = &id {
                            event.insert("id".into(), id.clone());
                        }
                        event.insert("delta".into(), delta.into());
                        output.send(&Value::Object(event));
                    };
                    let outcome = session
                        .user_bash(&command, exclude_from_context.unwrap_or(false), on_chunk)
                        .await?;
                    to_json(&outcome).map(Some)
                });
                return Reply::Later;
            }
            RpcCommand::AbortBash => {
                session.abort_bash();
                Ok(None)
            }
            RpcCommand::GetSessionStats => to_json(&session.stats()).map(Some),
            RpcCommand::ExportHtml { output_path } => {
                let job = match ExportJob::prepare(session, output_path.as_deref()) {
                    Ok(job) => job,
                    Err(e) => return Reply::Now(Err(e)),
                };
                // Rendering a long session takes a while: off the async threads, and
                // without holding up the commands after it.
                self.start(responder.clone(), async move {
                    match tokio::task::spawn_blocking(move || job.run()).await {
                        Ok(result) => result.map(|path| Some(json!({"path": path}))),
                        Err(e) => Err(format!("HTML export failed: {e}")),
                    }
                });
                return Reply::Later;
            }
            RpcCommand::SwitchSession { session_path } => session
                .switch_session(Path::new(&session_path))
                .await
                .map(|()| Some(json!({"cancelled": false}))),
            RpcCommand::Fork { entry_id } => session.fork(&entry_id).await.map(|result| {
                Some(json!({
                    "text": result.text.unwrap_or_default(),
                    "cancelled": result.cancelled,
                }))
            }),
            RpcCommand::Clone => {
                if session.with_session(|m| m.leaf_id().is_none()) {
                    Err("Cannot clone session: no current entry selected".to_string())
                } else {
                    session
                        .clone_session()
                        .await
                        .map(|()| Some(json!({"cancelled": false})))
                }
            }
            RpcCommand::GetForkMessages => {
                let messages: Vec<Value> = session
                    .fork_messages()
                    .into_iter()
                    .map(|(entry_id, text)| json!({"entryId": entry_id, "text": text}))
                    .collect();
                Ok(Some(json!({"messages": messages})))
            }
            RpcCommand::GetLastAssistantText => {
                Ok(Some(json!({"text": session.last_assistant_text()})))
            }
            RpcCommand::SetSessionName { name } => {
                let name = name.trim();
                if name.is_empty() {
                    Err("Session name cannot be empty".to_string())
                } else {
                    session.set_session_name(name).map(|()| None)
                }
            }
            RpcCommand::GetCommands => Ok(Some(json!({"commands": command_list(session)}))),
            RpcCommand::GetTreeOutline => Ok(Some(tree::tree_json(session))),
            RpcCommand::UndoRestore => session
                .undo_restore()
                .map(|files| Some(json!({"restoredFiles": files}))),
            RpcCommand::GetCheckpoints => {
                let (bytes, files) = session.checkpoint_disk_usage();
                let mut entries: Vec<String> =
                    session.entries_with_checkpoints().into_iter().collect();
                entries.sort();
                Ok(Some(json!({
                    "enabled": session.settings().checkpoints_enabled(),
                    "diskBytes": bytes,
                    "diskFiles": files,
                    "entries": entries,
                })))
            }
            RpcCommand::CheckpointDiff { from, to } => session
                .checkpoint_diff(from.as_deref(), &to)
                .map(|files| Some(json!({ "files": files }))),
            RpcCommand::PruneCheckpoints => session
                .prune_checkpoints()
                .and_then(|r| to_json(&r).map(Some)),
            RpcCommand::GetEntry { entry_id } => tree::entry_json(session, &entry_id).map(Some),
            RpcCommand::SetLabel { entry_id, label } => session
                .set_label(&entry_id, label.as_deref())
                .map(|()| None),
            RpcCommand::NavigateTree {
                target_id,
                summarize,
                custom_instructions,
                replace_instructions,
                label,
                restore_files,
                force,
            } => {
                let mut options = match tree::navigate_options(
                    summarize,
                    custom_instructions,
                    replace_instructions,
                    label,
                ) {
                    Ok(options) => options,
                    Err(e) => return Reply::Now(Err(e)),
                };
                options.restore_files = restore_files.unwrap_or(false);
                options.force = force.unwrap_or(false);
                let summarizing = options.summarize;
                let session = session.clone();
                let work = async move {
                    let result = session.navigate_tree(&target_id, options).await?;
                    to_json(&result).map(Some)
                };
                if summarizing {
                    // A summary is a model request: do not hold up other commands.
                    self.start(responder.clone(), work);
                    return Reply::Later;
                }
                work.await
            }
        };
        Reply::Now(outcome)
    }

    /// `steer` / `follow_up`: queued (or consumed by an input handler), answered with the
    /// disposition.
    async fn queue_input(
        &self,
        message: String,
        images: Option<Vec<Value>>,
        behavior: StreamingBehavior,
    ) -> Outcome {
        let images = parse_images(images)?;
        let disposition = self
            .session
            .queue_input(&message, images, behavior, InputSource::Rpc)
            .await?;
        Ok(Some(json!({"disposition": disposition.as_str()})))
    }

    fn set_model(&self, provider: &str, model_id: &str) -> Outcome {
        let model = self
            .session
            .available_models()
            .into_iter()
            .find(|m| m.provider == provider && m.id == model_id);
        let Some(model) = model else {
            return Err(format!("Model not found: {provider}/{model_id}"));
        };
        let data = to_json(&model)?;
        self.session.set_model(model)?;
        Ok(Some(data))
    }

    /// Starts the prompt and waits only until it is accepted (answered `success`) or
    /// refused (answered with the error); the run continues in the background.
    async fn prompt(&self, responder: Responder, text: String, options: PromptOptions) {
        let (settled_tx, settled) = oneshot::channel();
        let settled_tx = Arc::new(Mutex::new(Some(settled_tx)));
        let on_accept = {
            let responder = responder.clone();
            let settled_tx = settled_tx.clone();
            move |disposition: PromptDisposition| {
                responder.send(Ok(Some(json!({"disposition": disposition.as_str()}))));
                signal(&settled_tx);
            }
        };
        let session = self.session.clone();
        self.tasks.spawn(async move {
            if let Err(message) = session
                .prompt_with_acceptance(&text, options, on_accept)
                .await
            {
                responder.send(Err(message));
            }
            signal(&settled_tx);
        });
        let _ = settled.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_accept_pi_image_content_and_name_bad_entries() {
        let images = parse_images(Some(vec![
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
            json!({"data": "BBBB", "mimeType": "image/jpeg"}),
        ]))
        .unwrap();
        assert_eq!(images.len(), 2);
        assert_eq!(images[0].mime_type, "image/png");
        assert!(
            images[0].extra.is_empty(),
            "type is not kept as an extra field"
        );
        let err = parse_images(Some(vec![json!({"type": "text", "text": "x"})])).unwrap_err();
        assert_eq!(
            err,
            "images[0] has type \"text\"; only \"image\" is supported"
        );
        let err = parse_images(Some(vec![json!({"type": "image", "data": "A"})])).unwrap_err();
        assert_eq!(err, "images[0]: missing field `mimeType`");
    }
}
