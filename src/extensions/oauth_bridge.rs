//! pi's `registerProvider(name, { oauth })`: the extension's `login`, `refreshToken` and
//! `getApiKey` run in its process, reached with an `oauth` request
//! (`{"type":"oauth","id","provider","action":"login"|"refresh"|"api_key","credentials"?}`).
//!
//! A login's callbacks arrive as `stream_event`s — `{"type":"auth","url","instructions"?}`,
//! `{"type":"progress","message"}`, `{"type":"prompt","message","placeholder"?}`,
//! `{"type":"manual_input"}` — and become the login dialog's [`LoginEvent`]s; what the user
//! types goes back as `{"type":"oauth_input","id","value"}`. Closing the dialog sends
//! `cancel` (the extension's `callbacks.signal` aborts). The answer is the credentials.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::connection::Connection;
use super::link::Failure;
use super::protocol::line;
use crate::ai::oauth::external::ExternalOAuth;
use crate::ai::oauth::login::{LoginError, LoginEvent, LoginIo};

/// How long a refresh or `getApiKey` may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct ExtensionOAuth {
    conn: Weak<Connection>,
    provider: String,
    name: String,
}

impl ExtensionOAuth {
    pub(crate) fn new(conn: &Arc<Connection>, provider: &str, name: &str) -> Self {
        Self {
            conn: Arc::downgrade(conn),
            provider: provider.to_string(),
            name: name.to_string(),
        }
    }

    fn request(
        &self,
        action: &'static str,
        credentials: Value,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let conn = self.conn.clone();
        let provider = self.provider.clone();
        async move {
            let conn = conn.upgrade().ok_or("the extension is no longer running")?;
            let reply = conn
                .request(&format!("oauth {action}"), Some(CALL_TIMEOUT), None, |id| {
                    line(&json!({"type": "oauth", "id": id, "provider": provider,
                        "action": action, "credentials": credentials}))
                })
                .await;
            match reply {
                Ok(Some(value)) => Ok(value),
                Ok(None) => Err(format!("the extension's {action} returned nothing")),
                Err(f) => Err(failure_text(&f)),
            }
        }
        .boxed()
    }
}

fn failure_text(failure: &Failure) -> String {
    match failure {
        Failure::Handler(e) => e.clone(),
        Failure::Gone(reason) => format!("the extension stopped: {reason}"),
        Failure::TimedOut(t) => format!("no answer within {} s", t.as_secs()),
        Failure::Cancelled => "cancelled".into(),
        Failure::NotRunning => "the extension is not running".into(),
    }
}

fn text(event: &Value, key: &str) -> Option<String> {
    event.get(key).and_then(Value::as_str).map(str::to_string)
}

async fn login(
    conn: Weak<Connection>,
    provider: String,
    mut io: LoginIo,
) -> Result<Value, LoginError> {
    let conn = conn.upgrade().ok_or(LoginError::Failed(
        "the extension is no longer running".into(),
    ))?;
    let (id, mut reply, mut events) = conn
        .begin_stream("oauth login", |id| {
            line(&json!({"type": "oauth", "id": id, "provider": provider, "action": "login"}))
        })
        .map_err(|f| LoginError::Failed(failure_text(&f)))?;
    let show = |event: LoginEvent| {
        let _ = io.events.send(event);
    };
    let mut events_open = true;
    loop {
        tokio::select! {
            event = events.recv(), if events_open => {
                let Some(event) = event else {
                    events_open = false;
                    continue;
                };
                match event.get("type").and_then(Value::as_str) {
                    Some("auth") => show(LoginEvent::Auth {
                        url: text(&event, "url").unwrap_or_default(),
                        instructions: text(&event, "instructions"),
                    }),
                    Some("progress") => show(LoginEvent::Progress(text(&event, "message").unwrap_or_default())),
                    Some("prompt") => show(LoginEvent::Prompt {
                        message: text(&event, "message").unwrap_or_default(),
                        placeholder: text(&event, "placeholder"),
                    }),
                    Some("manual_input") => show(LoginEvent::ManualInput {
                        prompt: "Paste the authorization code or the redirect URL:".into(),
                    }),
                    _ => {}
                }
            }
            input = io.input.recv() => match input {
                Some(value) => {
                    conn.send_line(line(&json!({"type": "oauth_input", "id": id, "value": value})));
                }
                None => {
                    conn.forget(id);
                    conn.send_cancel(id);
                    return Err(LoginError::Cancelled);
                }
            },
            outcome = &mut reply => {
                return match outcome {
                    Ok(Ok(Some(credentials))) => crate::ai::oauth::external::credential_entry(&credentials)
                        .map_err(LoginError::Failed),
                    Ok(Ok(None)) => Err(LoginError::Failed("the extension's login returned nothing".into())),
                    Ok(Err(f)) => Err(LoginError::Failed(failure_text(&f))),
                    Err(_) => Err(LoginError::Failed("the extension stopped".into())),
                };
            }
        }
    }
}

impl ExternalOAuth for ExtensionOAuth {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn login(&self, io: LoginIo) -> BoxFuture<'static, Result<Value, LoginError>> {
        login(self.conn.clone(), self.provider.clone(), io).boxed()
    }

    fn refresh(&self, credentials: Value) -> BoxFuture<'static, Result<Value, String>> {
        let request = self.request("refresh", credentials);
        async move { crate::ai::oauth::external::credential_entry(&request.await?) }.boxed()
    }

    fn api_key(&self, credentials: Value) -> BoxFuture<'static, Result<String, String>> {
        let request = self.request("api_key", credentials);
        async move {
            match request.await? {
                Value::String(key) => Ok(key),
                other => Err(format!("getApiKey returned {other}, not a string")),
            }
        }
        .boxed()
    }
}
