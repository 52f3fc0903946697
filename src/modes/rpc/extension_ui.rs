//! The extension UI sub-protocol of pi's RPC mode: what extensions ask of the user
//! becomes an `extension_ui_request` line on stdout. Dialogs (`select`, `confirm`,
//! `input`, `editor`) wait for the client's `extension_ui_response` with the same id;
//! notices (`notify`, `setStatus`, `setWidget`, `setTitle`, `set_editor_text`) are
//! written and not waited for.
//!
//! A dialog ends when the client answers, when its `timeout` runs out or its extension
//! stops waiting (the host decides both; the request is then forgotten and a late answer
//! ignored, as pi ignores answers to unknown ids), when `abort` arrives
//! ([`ExtensionUi::cancel_open`]), or when input ends ([`ExtensionUi::close`]): nobody is
//! left to answer, so open and later dialogs are answered "cancelled".
//!
//! Not here: the request shapes (`UiRequest::to_rpc_json` in `crate::extensions::ui`)
//! and extension failures (session events, written as `extension_error`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::output::RpcOutput;
use crate::extensions::{UiMethod, UiRequest, UiResponse};

/// A client's `extension_ui_response` object.
type Answer = Map<String, Value>;

#[derive(Default)]
struct Dialogs {
    /// Open dialogs by request id.
    open: HashMap<String, oneshot::Sender<Answer>>,
    /// Input ended: no answer can come any more.
    closed: bool,
}

/// Open dialogs and the output their requests are written to.
pub struct ExtensionUi {
    output: RpcOutput,
    dialogs: Mutex<Dialogs>,
}

/// What an answer means for a dialog of this kind, read as pi reads it: `cancelled: true`
/// wins; `confirm` takes `confirmed`, the others a string `value`; anything else is a
/// cancellation.
pub fn response_for(method: &UiMethod, answer: &Answer) -> UiResponse {
    if answer.get("cancelled").and_then(Value::as_bool) == Some(true) {
        return UiResponse::Cancelled;
    }
    match method {
        UiMethod::Confirm { .. } => match answer.get("confirmed").and_then(Value::as_bool) {
            Some(confirmed) => UiResponse::Confirmed(confirmed),
            None => UiResponse::Cancelled,
        },
        _ => match answer.get("value").and_then(Value::as_str) {
            Some(value) => UiResponse::Value(value.to_string()),
            None => UiResponse::Cancelled,
        },
    }
}

impl ExtensionUi {
    pub fn new(output: RpcOutput) -> Arc<Self> {
        Arc::new(ExtensionUi {
            output,
            dialogs: Mutex::new(Dialogs::default()),
        })
    }

    fn dialogs(&self) -> MutexGuard<'_, Dialogs> {
        self.dialogs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Shows the session's UI requests until the session drops the channel.
    pub async fn forward(self: Arc<Self>, mut requests: mpsc::UnboundedReceiver<UiRequest>) {
        while let Some(request) = requests.recv().await {
            self.show(request);
        }
    }

    /// Writes one request; a dialog's answer goes back to the extension when it comes.
    pub fn show(self: &Arc<Self>, request: UiRequest) {
        if request.method.needs_terminal() {
            if let Some(reply) = request.reply {
                reply.send(UiResponse::Cancelled);
            }
            return;
        }
        let line = request.to_rpc_json();
        let UiRequest {
            id, method, reply, ..
        } = request;
        let Some(mut reply) = reply else {
            self.output.send(&line);
            return;
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut dialogs = self.dialogs();
            if dialogs.closed {
                reply.send(UiResponse::Cancelled);
                return;
            }
            // Registered before the line is written, so an instant answer finds it.
            dialogs.open.insert(id.clone(), tx);
        }
        self.output.send(&line);
        let ui = self.clone();
        tokio::spawn(async move {
            let answer = tokio::select! {
                answer = rx => Some(answer.ok()),
                // Timed out or the extension stopped waiting: nothing to answer.
                () = reply.0.closed() => None,
            };
            ui.dialogs().open.remove(&id);
            match answer {
                Some(Some(answer)) => reply.send(response_for(&method, &answer)),
                Some(None) => reply.send(UiResponse::Cancelled),
                None => {}
            }
        });
    }

    /// A client's `extension_ui_response`: completes the matching dialog, if any is open.
    pub fn resolve(&self, answer: Answer) {
        let Some(id) = answer.get("id").and_then(Value::as_str) else {
            return;
        };
        let waiter = self.dialogs().open.remove(id);
        if let Some(waiter) = waiter {
            let _ = waiter.send(answer);
        }
    }

    /// `abort`: the dialogs open now are answered "cancelled". A run waiting for one (a
    /// `tool_call` handler asking permission) could not stop otherwise, and the abort
    /// would wait for the client's answer.
    pub fn cancel_open(&self) {
        // Dropping the senders wakes each dialog's task, which cancels it.
        self.dialogs().open.clear();
    }

    /// Input ended: open dialogs and any that follow are answered "cancelled".
    pub fn close(&self) {
        let mut dialogs = self.dialogs();
        dialogs.closed = true;
        dialogs.open.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extensions::UiReply;
    use crate::modes::rpc::framing::WriterMsg;
    use serde_json::json;
    use std::path::PathBuf;
    use std::time::Duration;

    fn ui() -> (Arc<ExtensionUi>, std::sync::mpsc::Receiver<WriterMsg>) {
        let (_events_tx, events) = mpsc::unbounded_channel();
        let (writer, lines) = std::sync::mpsc::channel::<WriterMsg>();
        (ExtensionUi::new(RpcOutput::new(events, writer)), lines)
    }

    fn next_line(lines: &std::sync::mpsc::Receiver<WriterMsg>) -> String {
        match lines.recv_timeout(Duration::from_secs(5)).unwrap() {
            WriterMsg::Line(line) => line,
            WriterMsg::Flush(_) => panic!("expected a line"),
        }
    }

    fn dialog(id: &str, method: UiMethod) -> (UiRequest, oneshot::Receiver<UiResponse>) {
        let (tx, rx) = oneshot::channel();
        let request = UiRequest {
            id: id.into(),
            extension_path: PathBuf::from("/ext/gate.py"),
            method,
            reply: Some(UiReply(tx)),
        };
        (request, rx)
    }

    fn confirm() -> UiMethod {
        UiMethod::Confirm {
            title: "Allow?".into(),
            message: "rm -rf build".into(),
            timeout_ms: None,
        }
    }

    fn answer(value: Value) -> Answer {
        serde_json::from_value(value).unwrap()
    }

    #[tokio::test]
    async fn a_dialog_is_written_and_completed_by_the_response_with_its_id() {
        let (ui, lines) = ui();
        let (request, reply) = dialog("ui-1", confirm());
        ui.show(request);
        insta::assert_snapshot!(next_line(&lines), @r#"{"type":"extension_ui_request","id":"ui-1","method":"confirm","title":"Allow?","message":"rm -rf build"}"#);
        ui.resolve(answer(
            json!({"type": "extension_ui_response", "id": "nope", "confirmed": false}),
        ));
        ui.resolve(answer(
            json!({"type": "extension_ui_response", "id": "ui-1", "confirmed": true}),
        ));
        assert_eq!(reply.await.unwrap(), UiResponse::Confirmed(true));
        assert!(ui.dialogs().open.is_empty());
    }

    #[tokio::test]
    async fn notices_are_written_without_waiting() {
        let (ui, lines) = ui();
        ui.show(UiRequest {
            id: "ui-7".into(),
            extension_path: PathBuf::from("/ext/x"),
            method: UiMethod::SetStatus {
                key: "gate".into(),
                text: None,
            },
            reply: None,
        });
        insta::assert_snapshot!(next_line(&lines), @r#"{"type":"extension_ui_request","id":"ui-7","method":"setStatus","statusKey":"gate"}"#);
        assert!(ui.dialogs().open.is_empty());
    }

    #[tokio::test]
    async fn a_dialog_the_extension_stopped_waiting_for_is_forgotten() {
        let (ui, lines) = ui();
        let (request, reply) = dialog("ui-2", confirm());
        ui.show(request);
        next_line(&lines);
        drop(reply);
        tokio::time::timeout(Duration::from_secs(5), async {
            while !ui.dialogs().open.is_empty() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
        // A late answer is ignored.
        ui.resolve(answer(json!({"id": "ui-2", "confirmed": true})));
    }

    #[tokio::test]
    async fn closing_cancels_open_dialogs_and_answers_later_ones_at_once() {
        let (ui, lines) = ui();
        let (request, open) = dialog("ui-3", confirm());
        ui.show(request);
        next_line(&lines);
        ui.close();
        assert_eq!(open.await.unwrap(), UiResponse::Cancelled);
        let (request, later) = dialog("ui-4", confirm());
        ui.show(request);
        assert_eq!(later.await.unwrap(), UiResponse::Cancelled);
        assert!(lines.try_recv().is_err(), "nothing asked after the end");
    }

    #[tokio::test]
    async fn cancelling_open_dialogs_leaves_later_ones_to_the_client() {
        let (ui, lines) = ui();
        let (request, open) = dialog("ui-5", confirm());
        ui.show(request);
        next_line(&lines);
        ui.cancel_open();
        assert_eq!(open.await.unwrap(), UiResponse::Cancelled);
        let (request, later) = dialog("ui-6", confirm());
        ui.show(request);
        assert!(next_line(&lines).contains(r#""id":"ui-6""#));
        ui.resolve(answer(json!({"id": "ui-6", "confirmed": true})));
        assert_eq!(later.await.unwrap(), UiResponse::Confirmed(true));
    }

    #[test]
    fn answers_are_read_per_dialog_kind_as_pi_reads_them() {
        let select = UiMethod::Select {
            title: "t".into(),
            options: vec!["a".into()],
            timeout_ms: None,
        };
        let cases = [
            (&select, json!({"value": "a"})),
            (&select, json!({"cancelled": true, "value": "a"})),
            (&select, json!({"confirmed": true})),
            (&confirm(), json!({"confirmed": false})),
            (&confirm(), json!({"value": "yes"})),
            (&confirm(), json!({"cancelled": false, "confirmed": true})),
        ];
        let read: Vec<String> = cases
            .iter()
            .map(|(method, a)| format!("{a} -> {:?}", response_for(method, &answer(a.clone()))))
            .collect();
        insta::assert_snapshot!(read.join("\n"), @r#"
        {"value":"a"} -> Value("a")
        {"cancelled":true,"value":"a"} -> Cancelled
        {"confirmed":true} -> Cancelled
        {"confirmed":false} -> Confirmed(false)
        {"value":"yes"} -> Cancelled
        {"cancelled":false,"confirmed":true} -> Confirmed(true)
        "#);
    }
}
