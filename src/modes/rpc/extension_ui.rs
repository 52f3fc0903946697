//! The extension UI sub-protocol of pi's RPC mode, ready for when pi-rs loads extensions:
//! an extension's dialog (`select`, `confirm`, `input`, `editor`) becomes an
//! `extension_ui_request` on stdout and waits for the client's `extension_ui_response`
//! with the same id; notifications (`notify`, `setStatus`, `setWidget`, `setTitle`,
//! `set_editor_text`) are written and not waited for; `extension_error` reports a failing
//! extension.
//!
//! Nothing calls this yet (pi-rs has no extension runtime); responses that arrive are
//! matched to pending requests, and unknown ids are ignored, as pi does.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::output::RpcOutput;

/// Pending dialogs and the output they are written to.
pub struct ExtensionUi {
    output: RpcOutput,
    pending: Mutex<HashMap<String, oneshot::Sender<Map<String, Value>>>>,
}

impl ExtensionUi {
    pub fn new(output: RpcOutput) -> Self {
        ExtensionUi {
            output,
            pending: Mutex::new(HashMap::new()),
        }
    }

    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Map<String, Value>>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn request(method: &str, id: &str, fields: Map<String, Value>) -> Value {
        let mut request = Map::new();
        request.insert("type".into(), "extension_ui_request".into());
        request.insert("id".into(), id.into());
        request.insert("method".into(), method.into());
        request.extend(fields);
        Value::Object(request)
    }

    /// Asks the client and waits for its answer (the whole `extension_ui_response`
    /// object). `None` when the timeout passed first; the request is then forgotten.
    pub async fn dialog(
        &self,
        method: &str,
        fields: Map<String, Value>,
        timeout: Option<Duration>,
    ) -> Option<Map<String, Value>> {
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id.clone(), tx);
        self.output.send(&Self::request(method, &id, fields));
        let answer = match timeout {
            Some(limit) => tokio::time::timeout(limit, rx)
                .await
                .ok()
                .and_then(Result::ok),
            None => rx.await.ok(),
        };
        self.pending().remove(&id);
        answer
    }

    /// Tells the client something without waiting for an answer.
    pub fn notify(&self, method: &str, fields: Map<String, Value>) {
        let id = uuid::Uuid::new_v4().to_string();
        self.output.send(&Self::request(method, &id, fields));
    }

    /// Reports an extension's failure (pi's `extension_error` event).
    pub fn error(&self, extension_path: &str, event: &str, error: &str) {
        self.output.send(&json!({
            "type": "extension_error", "extensionPath": extension_path,
            "event": event, "error": error,
        }));
    }

    /// A client's `extension_ui_response`: completes the matching dialog, if any.
    pub fn resolve(&self, response: Map<String, Value>) {
        let Some(id) = response.get("id").and_then(Value::as_str) else {
            return;
        };
        if let Some(waiter) = self.pending().remove(id) {
            let _ = waiter.send(response);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::rpc::framing::WriterMsg;

    #[tokio::test]
    async fn a_dialog_is_written_and_completed_by_the_matching_response() {
        let (_events_tx, events) = tokio::sync::mpsc::unbounded_channel();
        let (writer, lines) = std::sync::mpsc::channel::<WriterMsg>();
        let ui = std::sync::Arc::new(ExtensionUi::new(RpcOutput::new(events, writer)));
        let asking = ui.clone();
        let task = tokio::spawn(async move {
            let mut fields = Map::new();
            fields.insert("title".into(), "Allow?".into());
            asking.dialog("confirm", fields, None).await
        });
        let WriterMsg::Line(line) = tokio::task::spawn_blocking(move || lines.recv().unwrap())
            .await
            .unwrap()
        else {
            panic!("expected a line")
        };
        let request: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(request["type"], "extension_ui_request");
        assert_eq!(request["method"], "confirm");
        assert_eq!(request["title"], "Allow?");
        // An unknown id is ignored; the right one completes the dialog.
        let answer = |id: &Value| {
            serde_json::from_value::<Map<String, Value>>(
                json!({"type": "extension_ui_response", "id": id, "confirmed": true}),
            )
            .unwrap()
        };
        ui.resolve(answer(&json!("nope")));
        ui.resolve(answer(&request["id"]));
        let response = task.await.unwrap().unwrap();
        assert_eq!(response["confirmed"], true);
    }
}
