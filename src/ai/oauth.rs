//! Signing in to subscription providers as pi's `/login` does, and refreshing the OAuth
//! credentials it keeps in auth.json.
//!
//! An entry `{"type": "oauth", "refresh", "access", "expires"}` holds a short-lived
//! access token and a refresh token. Once `expires` (ms since the epoch) has passed, the
//! refresh token is exchanged at the provider's token endpoint for new ones, and the
//! entry is rewritten in place: unknown fields of the entry and every other provider are
//! kept, and the file is replaced atomically with mode 0600.
//!
//! pi processes and pi-rs processes share auth.json, and a refresh token is single use,
//! so a refresh happens under the same lock pi takes (the `auth.json.lock` directory of
//! the `proper-lockfile` package, stale after 30 s). After taking the lock the file is
//! read again: if another process refreshed in the meantime, its token is used as is.
//!
//! The sign-in flows live in [`login`] (Anthropic and OpenAI Codex: PKCE with a loopback
//! callback or a pasted redirect URL; GitHub Copilot: the device code flow). Every
//! endpoint goes through [`endpoint`], so tests can point all of them at one loopback
//! server with [`TEST_SERVER_ENV`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::auth::{ApiKey, read_auth_file, write_private_atomic};
pub use super::auth::{OAuthProvider, is_expired_oauth};

mod anthropic;
mod callback;
mod codex;
mod common;
mod copilot;
pub mod external;
mod flow;
pub mod lock;
pub mod login;
mod pkce;

use common::{EXPIRY_MARGIN_MS, send};
pub use common::{TEST_SERVER_ENV, TokenUpdate, endpoint};
pub use copilot::copilot_base_url;
pub use lock::{AuthFileLock, LOCK_STALE, lock, lock_dir_for, try_lock};

/// How long to wait for another process's lock before giving up; longer than
/// [`LOCK_STALE`] so a lock left by a crashed process is taken over.
const LOCK_WAIT: Duration = Duration::from_secs(40);

/// Kept below [`LOCK_STALE`] so our lock never looks stale while we still hold it.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(20);

// The provider list and its ids live in `auth` (the store decides when a refresh is due);
// how each provider is refreshed lives here.
impl OAuthProvider {
    /// The real token endpoint for a stored entry (Copilot's depends on its domain).
    fn token_url(self, entry: &Value) -> String {
        match self {
            Self::Anthropic => endpoint(anthropic::TOKEN_URL),
            Self::OpenAiCodex => endpoint(codex::TOKEN_URL),
            Self::GitHubCopilot => endpoint(&copilot::copilot_token_url(
                entry.get("enterpriseUrl").and_then(Value::as_str),
            )),
        }
    }

    fn env_var(self) -> &'static str {
        match self {
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::GitHubCopilot => "COPILOT_GITHUB_TOKEN",
            Self::OpenAiCodex => "OPENAI_API_KEY",
        }
    }
}

/// A refresh that did not produce a usable token. The message says what to do.
#[derive(Debug, thiserror::Error)]
#[error(
    "Failed to refresh OAuth token for {provider}: {detail}\n\nRun /login in pi to sign in again, or remove the \"{provider}\" entry from {path} and set {env_var}."
)]
pub struct OAuthRefreshError {
    pub provider: &'static str,
    pub detail: String,
    pub path: PathBuf,
    pub env_var: &'static str,
}

/// The entry with the new tokens; every other field of it is kept.
pub fn apply_update(entry: &Value, update: &TokenUpdate) -> Value {
    let mut map = entry.as_object().cloned().unwrap_or_default();
    map.insert("type".into(), json!("oauth"));
    map.insert("refresh".into(), json!(update.refresh.expose()));
    map.insert("access".into(), json!(update.access.expose()));
    map.insert("expires".into(), json!(update.expires));
    for (key, value) in &update.extra {
        map.insert(key.clone(), value.clone());
    }
    Value::Object(map)
}

/// Reads the token endpoint's answer (`access_token`, `refresh_token`, `expires_in` in
/// seconds). Without a new refresh token the old one stays in use.
pub fn parse_token_response(
    provider: OAuthProvider,
    body: &str,
    old_refresh: &str,
    now_ms: i64,
) -> Result<TokenUpdate, String> {
    let data: Value = serde_json::from_str(body)
        .map_err(|e| format!("the token endpoint returned invalid JSON ({e})"))?;
    let access = data
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or("the token endpoint's answer has no access_token")?;
    let expires_in = data
        .get("expires_in")
        .and_then(Value::as_f64)
        .ok_or("the token endpoint's answer has no expires_in")?;
    let refresh = data
        .get("refresh_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(old_refresh);
    let margin = match provider {
        OAuthProvider::Anthropic | OAuthProvider::GitHubCopilot => EXPIRY_MARGIN_MS,
        OAuthProvider::OpenAiCodex => 0,
    };
    let mut extra = Vec::new();
    if provider == OAuthProvider::OpenAiCodex {
        if data.get("refresh_token").and_then(Value::as_str).is_none() {
            return Err("the token endpoint's answer has no refresh_token".into());
        }
        let account = codex::account_id(access).ok_or("Failed to extract accountId from token")?;
        extra.push(("accountId".to_string(), json!(account)));
    }
    Ok(TokenUpdate {
        access: ApiKey::new(access),
        refresh: ApiKey::new(refresh),
        expires: now_ms + (expires_in * 1000.0) as i64 - margin,
        extra,
    })
}

/// Exchanges a refresh token for new tokens at `url` (the provider's token endpoint).
/// Copilot's "refresh" is a new Copilot token for the stored GitHub token.
pub async fn request_refresh(
    provider: OAuthProvider,
    http: &reqwest::Client,
    url: &str,
    refresh_token: &str,
) -> Result<TokenUpdate, String> {
    let request = match provider {
        OAuthProvider::Anthropic => http
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(anthropic::refresh_body(refresh_token).to_string()),
        OAuthProvider::OpenAiCodex => http
            .post(url)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(codex::refresh_form(refresh_token)),
        OAuthProvider::GitHubCopilot => copilot::token_request(http, url, refresh_token),
    };
    let text = send(request.timeout(REFRESH_TIMEOUT), url).await?;
    let now = crate::ai::message::now_ms();
    match provider {
        OAuthProvider::GitHubCopilot => copilot::parse_token(&text, refresh_token, now),
        _ => parse_token_response(provider, &text, refresh_token, now),
    }
}

/// Refreshes `provider`'s stored OAuth credential in `auth_path` if it is still expired
/// once the lock is held, saves the new tokens and returns the access token to use.
pub async fn refresh_stored(
    auth_path: &Path,
    provider: OAuthProvider,
    http: &reqwest::Client,
) -> Result<ApiKey, OAuthRefreshError> {
    refresh_stored_at(auth_path, provider, http, None).await
}

/// [`refresh_stored`] with the token endpoint given (`None`: the provider's).
async fn refresh_stored_at(
    auth_path: &Path,
    provider: OAuthProvider,
    http: &reqwest::Client,
    token_url: Option<&str>,
) -> Result<ApiKey, OAuthRefreshError> {
    let fail = |detail: String| OAuthRefreshError {
        provider: provider.id(),
        detail,
        path: auth_path.to_path_buf(),
        env_var: provider.env_var(),
    };
    let _lock = lock(auth_path, LOCK_WAIT).await.map_err(fail)?;
    let mut data: Map<String, Value> =
        read_auth_file(auth_path).map_err(|e| fail(e.to_string()))?;
    let entry = data
        .get(provider.id())
        .filter(|e| e.get("type").and_then(Value::as_str) == Some("oauth"))
        .cloned()
        .ok_or_else(|| fail("auth.json no longer holds an OAuth entry for it".into()))?;
    if !is_expired_oauth(&entry, crate::ai::message::now_ms())
        && let Some(access) = entry.get("access").and_then(Value::as_str)
    {
        // Another process refreshed while we waited for the lock.
        return Ok(ApiKey::new(access));
    }
    let refresh = entry
        .get("refresh")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| fail("the stored entry has no refresh token".into()))?;
    let url = token_url.map_or_else(|| provider.token_url(&entry), str::to_string);
    let update = request_refresh(provider, http, &url, refresh)
        .await
        .map_err(fail)?;
    data.insert(provider.id().to_string(), apply_update(&entry, &update));
    let text = serde_json::to_string_pretty(&Value::Object(data))
        .map_err(|e| fail(format!("cannot encode auth.json ({e})")))?;
    write_private_atomic(auth_path, text.as_bytes()).map_err(|e| {
        fail(format!(
            "new tokens were issued but {} could not be written ({e})",
            auth_path.display()
        ))
    })?;
    Ok(update.access)
}

#[cfg(test)]
mod tests;
