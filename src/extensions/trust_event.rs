//! `project_trust`, pi 1.6's event for deciding whether a project's own configuration may
//! load: asked of the user's and the command line's extensions before the project's
//! resources are read (project extensions are not running yet), in load order; the first
//! answer `"yes"` or `"no"` decides, `"undecided"` asks the next one.
//!
//! An extension answers `{trusted, remember?}`. The node host answers for all the
//! handlers of one module at once and adds what pi's limited trust context collected:
//! `{result?: {trusted, remember}, errors: [..], notices: [{message, type}]}` (handler
//! errors, and `ctx.ui.notify` calls made where no UI answers, which pi prints on stderr).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::dispatch::Answer;
use super::events::EventName;
use super::host::ExtensionHost;

/// The limited context pi gives `project_trust` handlers: how pi runs (`tui`, `print`,
/// `json`, `rpc`) and whether their dialogs reach the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustContext {
    pub mode: &'static str,
    #[serde(rename = "hasUI")]
    pub has_ui: bool,
}

/// The decision an extension made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustAnswer {
    pub trusted: bool,
    /// Save it in trust.json (else it holds for this process only).
    pub remember: bool,
}

/// A `ctx.ui.notify` of a handler that ran without a UI.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TrustNotice {
    pub message: String,
    #[serde(rename = "type", default)]
    pub level: String,
}

/// What asking the extensions gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustEventOutcome {
    /// The first yes/no answer and the extension that gave it.
    pub answer: Option<(PathBuf, TrustAnswer)>,
    /// Handler failures: the extension and the error (pi reports each as a warning).
    pub errors: Vec<(PathBuf, String)>,
    pub notices: Vec<TrustNotice>,
}

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    result: Option<Decided>,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    notices: Vec<TrustNotice>,
    /// An answer given directly (an extension that is a program of its own).
    #[serde(default)]
    trusted: Option<Value>,
    #[serde(default)]
    remember: Value,
}

impl Reply {
    fn decided(&self) -> Option<TrustAnswer> {
        let direct = self.trusted.clone().map(|trusted| Decided {
            trusted,
            remember: self.remember.clone(),
        });
        self.result.as_ref().or(direct.as_ref())?.answer()
    }
}

#[derive(Deserialize)]
struct Decided {
    trusted: Value,
    #[serde(default)]
    remember: Value,
}

impl Decided {
    /// pi: `"undecided"` passes, `"yes"` trusts, anything else does not.
    fn answer(&self) -> Option<TrustAnswer> {
        if self.trusted == "undecided" {
            return None;
        }
        Some(TrustAnswer {
            trusted: self.trusted == "yes",
            remember: self.remember == Value::Bool(true),
        })
    }
}

impl ExtensionHost {
    /// Sends `project_trust` for `cwd` to the subscribers one at a time until one decides.
    pub async fn project_trust(
        &self,
        cwd: &std::path::Path,
        context: TrustContext,
    ) -> TrustEventOutcome {
        let mut outcome = TrustEventOutcome::default();
        if !self.has_subscribers(EventName::ProjectTrust) {
            return outcome;
        }
        let event = serde_json::json!({
            "type": "project_trust",
            "cwd": cwd.display().to_string(),
            "trustContext": context,
        })
        .to_string();
        for conn in self.subscribers(EventName::ProjectTrust) {
            let reply = match self.ask(conn, EventName::ProjectTrust, &event, None).await {
                Answer::Value(value) => serde_json::from_value::<Reply>(value),
                Answer::Nothing => continue,
                Answer::Failed(error) => {
                    outcome.errors.push((conn.path.clone(), error));
                    continue;
                }
            };
            let reply = match reply {
                Ok(reply) => reply,
                Err(e) => {
                    let error = format!("unreadable project_trust answer ({e})");
                    conn.report("project_trust", &error);
                    outcome.errors.push((conn.path.clone(), error));
                    continue;
                }
            };
            let decided = reply.decided();
            outcome
                .errors
                .extend(reply.errors.into_iter().map(|e| (conn.path.clone(), e)));
            outcome.notices.extend(reply.notices);
            if let Some(answer) = decided {
                outcome.answer = Some((conn.path.clone(), answer));
                break;
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn read(json: &str) -> Option<TrustAnswer> {
        serde_json::from_str::<Reply>(json).unwrap().decided()
    }

    #[test]
    fn answers_read_like_pis_runner() {
        assert_eq!(
            read(r#"{"result":{"trusted":"yes","remember":true},"errors":[],"notices":[]}"#),
            Some(TrustAnswer {
                trusted: true,
                remember: true
            })
        );
        assert_eq!(
            read(r#"{"trusted":"maybe","remember":"yes"}"#),
            Some(TrustAnswer {
                trusted: false,
                remember: false
            })
        );
        assert_eq!(read(r#"{"trusted":"undecided"}"#), None);
        assert_eq!(read(r#"{"errors":["boom"],"notices":[]}"#), None);
    }
}
