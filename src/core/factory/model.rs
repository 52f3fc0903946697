//! Which model and thinking level a session starts with, in pi's order: `--model`, the
//! `--models` scope (a new session), the model the session last used (if it still has a
//! key), the saved default, the first model with a key.

use super::config::SessionConfig;
use super::error::StartupError;
use crate::ai::model::{Model, ThinkingLevel};
use crate::ai::models::ModelRegistry;
use crate::ai::models::resolve::{ScopedModel, closest_matches, initial_model, resolve_cli_model};
use crate::core::settings::Settings;
use crate::session::SessionManager;

/// The model chosen for a session, and the thinking level that came with it (from
/// `--model x:high` or the scope entry).
pub(super) struct ModelChoice {
    pub model: Option<Model>,
    pub thinking: Option<ThinkingLevel>,
}

/// Where the choice is made.
pub(super) struct ModelContext<'a> {
    pub config: &'a SessionConfig,
    pub registry: &'a ModelRegistry,
    pub settings: &'a Settings,
    pub scoped: &'a [ScopedModel],
    pub session: &'a SessionManager,
    /// The session already holds a conversation.
    pub has_existing: bool,
}

/// Chooses the model; a `--model` that matches nothing is an error naming the closest
/// matches. A session's model that cannot be restored is a warning.
pub(super) fn choose_model(
    cx: &ModelContext<'_>,
    warnings: &mut Vec<String>,
) -> Result<ModelChoice, StartupError> {
    let registry = cx.registry;
    if let Some(pattern) = &cx.config.model {
        return cli_model(cx.config.provider.as_deref(), pattern, registry, warnings);
    }
    if !cx.scoped.is_empty() && !cx.has_existing {
        let saved = match (cx.settings.default_provider(), cx.settings.default_model()) {
            (Some(p), Some(m)) => registry.find(p, m),
            _ => None,
        };
        let pick = saved
            .and_then(|s| {
                cx.scoped
                    .iter()
                    .find(|x| x.model.provider == s.provider && x.model.id == s.id)
            })
            .unwrap_or(&cx.scoped[0]);
        return Ok(ModelChoice {
            model: Some(pick.model.clone()),
            thinking: pick.thinking,
        });
    }
    if cx.has_existing
        && let Some(m) = cx.session.build_session_context().model
    {
        match registry.find(&m.provider, &m.model_id) {
            Some(model) if registry.has_configured_auth(model) => {
                return Ok(ModelChoice {
                    model: Some(model.clone()),
                    thinking: None,
                });
            }
            _ => warnings.push(format!(
                "Could not restore model {}/{}",
                m.provider, m.model_id
            )),
        }
    }
    // Why the saved default was passed over, said once the replacement is known (pi
    // replaces it without a word).
    let mut passed_over = None;
    if let (Some(p), Some(m)) = (cx.settings.default_provider(), cx.settings.default_model()) {
        match registry.find(p, m) {
            Some(model) if registry.has_configured_auth(model) => {
                return Ok(ModelChoice {
                    model: Some(model.clone()),
                    thinking: None,
                });
            }
            Some(_) => passed_over = Some(format!("default model {p}/{m} has no API key")),
            None => passed_over = Some(format!("default model {p}/{m} is not a known model")),
        }
    }
    let available = registry.available();
    let model = initial_model(&available).cloned();
    if let (Some(why), Some(used)) = (passed_over, &model) {
        warnings.push(format!(
            "The {why} (settings.json defaultProvider/defaultModel); using {}/{} instead",
            used.provider, used.id
        ));
    }
    Ok(ModelChoice {
        model,
        thinking: None,
    })
}

/// `--model` (with `--provider`).
fn cli_model(
    provider: Option<&str>,
    pattern: &str,
    registry: &ModelRegistry,
    warnings: &mut Vec<String>,
) -> Result<ModelChoice, StartupError> {
    match resolve_cli_model(provider, pattern, registry.all()) {
        Ok(found) => {
            warnings.extend(found.warning);
            Ok(ModelChoice {
                model: Some(found.model),
                thinking: found.thinking,
            })
        }
        Err(message) => {
            let near = closest_matches(pattern, registry.all(), 5);
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!("\nClosest matches: {}", near.join(", "))
            };
            Err(StartupError(format!(
                "{message}{hint}\nUse --list-models to see all models."
            )))
        }
    }
}
