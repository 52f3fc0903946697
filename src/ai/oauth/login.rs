//! Signing in to a subscription provider, as pi's `/login` does: [`login`] runs the
//! provider's flow, talking to the dialog through [`LoginIo`] (see `flow`).

use serde_json::Value;

use super::OAuthProvider;
pub use super::copilot::normalize_domain;
pub use super::flow::{LoginError, LoginEvent, LoginIo};

/// Signs in to `provider`. `copilot_models` are the model ids to enable after a Copilot
/// sign-in. The credential entry to store in auth.json.
pub async fn login(
    provider: OAuthProvider,
    io: &mut LoginIo,
    http: &reqwest::Client,
    copilot_models: &[String],
) -> Result<Value, LoginError> {
    match provider {
        OAuthProvider::Anthropic => super::anthropic::login(io, http).await,
        OAuthProvider::OpenAiCodex => super::codex::login(io, http).await,
        OAuthProvider::GitHubCopilot => super::copilot::login(io, http, copilot_models).await,
    }
}
