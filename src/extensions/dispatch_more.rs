//! The event methods of [`ExtensionHost`] around provider requests, resources and the
//! user's own shell commands, combined the way pi's runner does:
//!
//! - `before_provider_request`: each extension gets the previous one's payload; an
//!   answer replaces it.
//! - `after_provider_response`: sent to every subscriber, waited for, answers ignored.
//! - `resources_discover`: the skill, prompt and theme paths of every answer are
//!   collected in load order, each with the extension that named it.
//! - `user_bash`: the first answer with a `result` replaces running the command.
//!
//! As everywhere, a timeout or a handler error counts as "no change" and is reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::dispatch::Answer;
use super::events::EventName;
use super::host::ExtensionHost;

/// Why `resources_discover` is sent (`reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscoverReason {
    Startup,
    Reload,
}

impl DiscoverReason {
    fn as_str(self) -> &'static str {
        match self {
            DiscoverReason::Startup => "startup",
            DiscoverReason::Reload => "reload",
        }
    }
}

/// A resource path an extension named, with the extension that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionResourcePath {
    /// As the extension wrote it (relative paths are taken from the working directory).
    pub path: PathBuf,
    pub extension_path: PathBuf,
}

/// The collected answers to `resources_discover`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiscoveredResources {
    pub skill_paths: Vec<ExtensionResourcePath>,
    pub prompt_paths: Vec<ExtensionResourcePath>,
    pub theme_paths: Vec<ExtensionResourcePath>,
}

impl DiscoveredResources {
    pub fn is_empty(&self) -> bool {
        self.skill_paths.is_empty() && self.prompt_paths.is_empty() && self.theme_paths.is_empty()
    }
}

/// An extension's replacement for running a `!` command (pi's `BashResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserBashResult {
    pub output: String,
    pub exit_code: Option<i32>,
    pub cancelled: bool,
    pub truncated: bool,
    pub full_output_path: Option<String>,
}

impl ExtensionHost {
    /// `before_provider_request`: the request body to send, possibly replaced.
    pub async fn before_provider_request(&self, payload: Value) -> Value {
        let mut current = payload;
        for conn in self.subscribers(EventName::BeforeProviderRequest) {
            let event = json!({"type": "before_provider_request", "payload": current});
            let answer = self
                .ask(
                    conn,
                    EventName::BeforeProviderRequest,
                    &event.to_string(),
                    None,
                )
                .await;
            if let Answer::Value(replacement) = answer
                && !replacement.is_null()
            {
                current = replacement;
            }
        }
        current
    }

    /// `after_provider_response`: the status and headers of a response, before its body
    /// is read. Waits for the subscribers (all at once).
    pub async fn after_provider_response(&self, status: u16, headers: &BTreeMap<String, String>) {
        if !self.has_subscribers(EventName::AfterProviderResponse) {
            return;
        }
        let event =
            json!({"type": "after_provider_response", "status": status, "headers": headers});
        self.broadcast_awaited(EventName::AfterProviderResponse, &event.to_string())
            .await;
    }

    /// `resources_discover`: extra skill, prompt and theme paths from the extensions.
    pub async fn resources_discover(
        &self,
        cwd: &Path,
        reason: DiscoverReason,
    ) -> DiscoveredResources {
        let mut found = DiscoveredResources::default();
        let event = json!({
            "type": "resources_discover", "cwd": cwd.display().to_string(),
            "reason": reason.as_str(),
        })
        .to_string();
        for conn in self.subscribers(EventName::ResourcesDiscover) {
            let Answer::Value(result) = self
                .ask(conn, EventName::ResourcesDiscover, &event, None)
                .await
            else {
                continue;
            };
            let lists = [
                ("skillPaths", &mut found.skill_paths),
                ("promptPaths", &mut found.prompt_paths),
                ("themePaths", &mut found.theme_paths),
            ];
            for (key, list) in lists {
                match result.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for item in items {
                            match item.as_str() {
                                Some(path) => list.push(ExtensionResourcePath {
                                    path: PathBuf::from(path),
                                    extension_path: conn.path.clone(),
                                }),
                                None => conn.report(
                                    "resources_discover",
                                    &format!("\"{key}\" must hold strings"),
                                ),
                            }
                        }
                    }
                    Some(_) => {
                        conn.report("resources_discover", &format!("\"{key}\" must be a list"));
                    }
                }
            }
        }
        found
    }

    /// `user_bash`, for a `!` / `!!` command typed in the interactive UI: the first
    /// extension answering with a `result` replaces running the command.
    pub async fn user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        cwd: &Path,
    ) -> Option<UserBashResult> {
        let event = json!({
            "type": "user_bash", "command": command,
            "excludeFromContext": exclude_from_context, "cwd": cwd.display().to_string(),
        })
        .to_string();
        for conn in self.subscribers(EventName::UserBash) {
            let Answer::Value(answer) = self.ask(conn, EventName::UserBash, &event, None).await
            else {
                continue;
            };
            let Some(result) = answer.get("result").filter(|r| !r.is_null()) else {
                continue;
            };
            match user_bash_result(result) {
                Ok(result) => return Some(result),
                Err(e) => conn.report("user_bash", &e),
            }
        }
        None
    }
}

fn user_bash_result(value: &Value) -> Result<UserBashResult, String> {
    let object = value
        .as_object()
        .ok_or("\"result\" must be an object like pi's BashResult")?;
    let flag = |key: &str| object.get(key).and_then(Value::as_bool).unwrap_or(false);
    Ok(UserBashResult {
        output: object
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        exit_code: object
            .get("exitCode")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok()),
        cancelled: flag("cancelled"),
        truncated: flag("truncated"),
        full_output_path: object
            .get("fullOutputPath")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// pi's error for a `message_end` answer whose message has another role.
pub const MESSAGE_END_ROLE_ERROR: &str =
    "message_end handlers must return a message with the same role";

impl ExtensionHost {
    /// `message_end`, waited for when an extension subscribed: each subscriber in load
    /// order gets the message as the previous ones left it and may answer `{message}`
    /// to replace it. A replacement with another role, or one pi-rs cannot read, is
    /// reported and skipped (the message stays as it was).
    pub async fn message_end(
        &self,
        message: crate::messages::AgentMessage,
    ) -> crate::messages::AgentMessage {
        if !self.has_subscribers(EventName::MessageEnd) {
            return message;
        }
        let mut current = message;
        for conn in self.subscribers(EventName::MessageEnd) {
            let event = json!({"type": "message_end", "message": current}).to_string();
            let Answer::Value(answer) = self.ask(conn, EventName::MessageEnd, &event, None).await
            else {
                continue;
            };
            let replacement = match answer.get("message") {
                None | Some(Value::Null) => continue,
                Some(m) => m,
            };
            if replacement.get("role").and_then(Value::as_str) != Some(current.role()) {
                conn.report("message_end", MESSAGE_END_ROLE_ERROR);
                continue;
            }
            match serde_json::from_value(replacement.clone()) {
                Ok(m) => current = m,
                Err(e) => conn.report(
                    "message_end",
                    &format!("the replacement message is not valid: {e}"),
                ),
            }
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_bash_result_reads_pis_bash_result_fields() {
        let result = user_bash_result(&json!({
            "output": "done", "exitCode": 3, "cancelled": false, "truncated": true,
            "fullOutputPath": "/tmp/x"
        }))
        .unwrap();
        assert_eq!(
            result,
            UserBashResult {
                output: "done".into(),
                exit_code: Some(3),
                cancelled: false,
                truncated: true,
                full_output_path: Some("/tmp/x".into()),
            }
        );
        assert!(user_bash_result(&json!("text")).is_err());
        let cancelled = user_bash_result(&json!({"cancelled": true})).unwrap();
        assert_eq!(cancelled.exit_code, None);
        assert!(cancelled.cancelled);
    }
}
