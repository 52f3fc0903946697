//! Deciding project trust before a session's project resources are read, in pi 1.6's
//! order:
//!
//! 1. `--approve` / `--no-approve`;
//! 2. the `project_trust` handlers of the user's and the command line's extensions,
//!    started for the question (they go on running in the session; project extensions
//!    are not started before trust);
//! 3. the nearest saved decision in trust.json;
//! 4. the global `defaultProjectTrust`: `always`, `never`, or `ask` — the terminal UI
//!    asks with pi's five choices, the other modes do not trust.
//!
//! Steps 2–4 only happen for a folder with protected resources
//! ([`has_protected_resources`]); any other folder is trusted unless a saved "do not
//! trust" says otherwise. A decision holds for the rest of the process (pi's cache by
//! folder), `/reload` included. A trust.json that cannot be read is reported once and
//! counts as holding no decision.

use std::path::Path;
use std::sync::Arc;

use super::resources::{LoadedExtensions, Place, SessionInfo, SessionPackages, find_extensions};
use super::trust_gate::{TrustPrompter, lock};
use super::{SessionFactory, StartupError, blocking};
use crate::core::trust::{
    DefaultProjectTrust, ProjectTrust, TrustChoice, TrustUpdate, has_protected_resources,
    trust_choices, trust_prompt_title,
};
use crate::extensions::{
    ExtensionHost, HostMode, TrustContext, TrustEventOutcome, UiMethod, UiRequest, UiResponse,
};

/// A trust decision and what making it started.
pub(super) struct Decided {
    pub trust: ProjectTrust,
    /// The user's and the command line's extensions, running since they were asked.
    pub early: Option<LoadedExtensions>,
    /// Handler errors of `project_trust` and trust.json problems.
    pub warnings: Vec<String>,
}

impl SessionFactory {
    /// Decides whether the project of this factory's directory is trusted (see the
    /// module documentation). `prompter`: the terminal UI that may be asked.
    pub(super) async fn decide_trust(
        self: &Arc<Self>,
        session: &SessionInfo,
        prompter: Option<&TrustPrompter>,
    ) -> Result<Decided, StartupError> {
        let cwd = self.cwd.clone();
        if let Some(trust) = self.gate.known(&cwd) {
            return Ok(Decided {
                trust,
                early: None,
                warnings: self.gate.take_problems(),
            });
        }
        let mut warnings = Vec::new();
        let prompter = prompter.filter(|_| self.hosting.mode == HostMode::Interactive);
        let context = TrustContext {
            mode: match self.hosting.mode {
                HostMode::Interactive => "tui",
                HostMode::Print => "print",
                HostMode::Json => "json",
                HostMode::Rpc => "rpc",
            },
            has_ui: prompter.is_some(),
        };
        let mut early = self.start_early_extensions(session).await?;
        let mut asked = TrustEventOutcome::default();
        if let Some(loaded) = early.as_mut() {
            asked = ask_extensions(loaded, &cwd, context, prompter).await;
        }
        for (path, error) in &asked.errors {
            warnings.push(format!(
                "Extension \"{}\" project_trust error: {error}",
                path.display()
            ));
        }
        for notice in &asked.notices {
            print_notice(&notice.message, &notice.level);
        }
        let trusted = match asked.answer {
            Some((_, answer)) => {
                if answer.remember {
                    self.gate.save(&[TrustUpdate {
                        path: cwd.clone(),
                        decision: Some(answer.trusted),
                    }]);
                }
                answer.trusted
            }
            None => match self.gate.saved(&cwd) {
                Some(saved) => saved,
                None => match self.settings.default_project_trust() {
                    DefaultProjectTrust::Always => true,
                    DefaultProjectTrust::Never => false,
                    DefaultProjectTrust::Ask => match prompter {
                        Some(prompter) => match ask_user(&cwd, prompter).await {
                            Some(choice) => {
                                self.gate.save(&choice.updates);
                                choice.trusted
                            }
                            None => false,
                        },
                        None => false,
                    },
                },
            },
        };
        let trust = ProjectTrust::from_bool(trusted);
        self.gate.settle(&cwd, trust);
        warnings.extend(self.gate.take_problems());
        Ok(Decided {
            trust,
            early,
            warnings,
        })
    }

    /// Starts the extensions the settings give without the project (the user's, the
    /// user's packages' and `-e`), to ask them about trust; `None` when there are none
    /// or none of them handles `project_trust`. Problems are left for the final load to
    /// report (it covers the same extensions).
    async fn start_early_extensions(
        self: &Arc<Self>,
        session: &SessionInfo,
    ) -> Result<Option<LoadedExtensions>, StartupError> {
        let this = self.clone();
        let found = blocking(move || {
            // `self.settings` leave the project out: trust is not decided yet.
            let (packages, _) = SessionPackages::resolve(
                &this.config,
                &this.settings,
                &this.cwd,
                &this.paths.agent_dir,
            )
            .unwrap_or_default();
            let place = Place {
                settings: &this.settings,
                cwd: &this.cwd,
                agent_dir: &this.paths.agent_dir,
                packages: &packages,
            };
            find_extensions(&this.config, &place)
        })
        .await?;
        if found.extensions.is_empty() {
            return Ok(None);
        }
        let options = super::resources::load_options(
            &self.config,
            (&self.cwd, &self.paths.agent_dir),
            self.hosting,
            session,
        );
        let (host, channels) = ExtensionHost::load(found.extensions, options).await;
        Ok(Some(LoadedExtensions { host, channels }))
    }
}

impl SessionFactory {
    /// The trust a `/reload` of `session` reads its settings with: the decision it
    /// started with (a reload never asks again).
    pub(super) fn reload_trust(
        &self,
        session: &crate::core::agent_session::AgentSession,
    ) -> ProjectTrust {
        session.settings().project_trust()
    }

    /// After a `/reload` in the terminal UI: when the session's folder had no protected
    /// resources at startup (so it was trusted without asking), has some now, and no
    /// decision is saved for it, saves "trusted" so the next start does not ask about
    /// what this session made (pi's implicit trust). `Ok(true)`: saved.
    pub fn save_implicit_trust(
        &self,
        session: &crate::core::agent_session::AgentSession,
    ) -> Result<bool, String> {
        let mut implicit = lock(&self.implicit_trust);
        let cwd = session.cwd();
        if implicit.as_deref() != Some(cwd)
            || !session.settings().project_trust().is_trusted()
            || !has_protected_resources(cwd)
        {
            return Ok(false);
        }
        *implicit = None;
        if self
            .gate
            .store()
            .get(cwd)
            .map_err(|e| e.to_string())?
            .is_some()
        {
            return Ok(false);
        }
        self.gate
            .store()
            .set(cwd, true)
            .map_err(|e| e.to_string())?;
        Ok(true)
    }
}

/// Sends `project_trust` to the early extensions, passing their dialogs to `prompter`
/// meanwhile (without one they are cancelled).
async fn ask_extensions(
    loaded: &mut LoadedExtensions,
    cwd: &Path,
    context: TrustContext,
    prompter: Option<&TrustPrompter>,
) -> TrustEventOutcome {
    let host = loaded.host.clone();
    let event = host.project_trust(cwd, context);
    tokio::pin!(event);
    loop {
        tokio::select! {
            outcome = &mut event => return outcome,
            Some(request) = loaded.channels.ui.recv() => {
                if let Some(prompter) = prompter {
                    let _ = prompter.send(request);
                }
            }
        }
    }
}

/// pi's trust prompt in the terminal UI; `None` when it was dismissed.
async fn ask_user(cwd: &Path, prompter: &TrustPrompter) -> Option<TrustChoice> {
    let choices = trust_choices(cwd, true);
    let (request, answer) = UiRequest::dialog(
        "project-trust",
        UiMethod::Select {
            title: trust_prompt_title(cwd),
            options: choices.iter().map(|c| c.label.clone()).collect(),
            timeout_ms: None,
        },
    );
    prompter.send(request).ok()?;
    match answer.await {
        Ok(UiResponse::Value(label)) => choices.into_iter().find(|c| c.label == label),
        _ => None,
    }
}

/// A `ctx.ui.notify` of a `project_trust` handler without a UI: on stderr, coloured by
/// level when stderr is a terminal (pi prints it with chalk).
fn print_notice(message: &str, level: &str) {
    use std::io::IsTerminal;
    let sgr = match level {
        "error" => "31",
        "warning" => "33",
        _ => "36",
    };
    if std::io::stderr().is_terminal() {
        eprintln!("\x1b[{sgr}m{message}\x1b[39m");
    } else {
        eprintln!("{message}");
    }
}
