//! What a sign-in flow and its dialog share. The flow runs as a task
//! and talks to whoever shows it (the TUI's login dialog) through [`LoginIo`]: it sends
//! [`LoginEvent`]s to show (the URL to open, a prompt, progress) and reads what the user
//! types from `input`. Closing `input` (the dialog was cancelled) ends the flow with
//! [`LoginError::Cancelled`]. The result is the credential entry to store in auth.json,
//! in pi's format: `{"type": "oauth", "refresh", "access", "expires", …}`.

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::callback::{CallbackServer, parse_pasted};

/// Something the dialog shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginEvent {
    /// The address to open in a browser (the dialog also tries to open it).
    Auth {
        url: String,
        instructions: Option<String>,
    },
    /// An input for pasting the redirect URL while the callback server waits.
    ManualInput {
        prompt: String,
    },
    /// A question the flow waits for.
    Prompt {
        message: String,
        placeholder: Option<String>,
    },
    /// A note while the flow polls (device code).
    Waiting(String),
    Progress(String),
}

/// The flow's side of the dialog.
pub struct LoginIo {
    pub events: mpsc::UnboundedSender<LoginEvent>,
    pub input: mpsc::UnboundedReceiver<String>,
}

/// Why a sign-in ended without a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    #[error("Login cancelled")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
}

impl From<String> for LoginError {
    fn from(message: String) -> Self {
        LoginError::Failed(message)
    }
}

impl From<&str> for LoginError {
    fn from(message: &str) -> Self {
        LoginError::Failed(message.to_string())
    }
}

impl LoginIo {
    pub(super) fn show(&self, event: LoginEvent) {
        let _ = self.events.send(event);
    }

    /// Asks a question and waits for the answer.
    pub(super) async fn prompt(
        &mut self,
        message: &str,
        placeholder: Option<&str>,
    ) -> Result<String, LoginError> {
        self.show(LoginEvent::Prompt {
            message: message.to_string(),
            placeholder: placeholder.map(str::to_string),
        });
        self.input.recv().await.ok_or(LoginError::Cancelled)
    }

    /// Waits for the browser to come back to `server` or for a pasted redirect URL (an
    /// empty paste is ignored, as in pi). The code and the state that came with it.
    pub(super) async fn code_from_callback_or_paste(
        &mut self,
        server: Option<&mut CallbackServer>,
    ) -> Result<(String, Option<String>), LoginError> {
        let mut server = server;
        loop {
            let from_server = async {
                match server.as_deref_mut() {
                    Some(s) => s.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                Some(callback) = from_server => return Ok((callback.code, callback.state)),
                pasted = self.input.recv() => {
                    let pasted = pasted.ok_or(LoginError::Cancelled)?;
                    if let (Some(code), state) = parse_pasted(&pasted) {
                        return Ok((code, state));
                    }
                }
            }
        }
    }
}

/// `{"type": "oauth", …fields}` in pi's key order.
pub(super) fn oauth_entry(fields: &[(&str, Value)]) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), json!("oauth"));
    for (key, value) in fields {
        if !value.is_null() {
            map.insert((*key).to_string(), value.clone());
        }
    }
    Value::Object(map)
}
