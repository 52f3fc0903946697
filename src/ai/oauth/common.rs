//! What the sign-in flows and the refresh share: the endpoint redirection for tests, the
//! expiry margin, the token update and sending a request with a readable error.

use serde_json::Value;

use crate::ai::auth::ApiKey;

/// For tests only: a loopback server (`http://127.0.0.1:PORT`) that stands in for every
/// OAuth endpoint. `https://HOST/PATH` is then asked at `$PI_RS_OAUTH_TEST_SERVER/HOST/PATH`,
/// and the sign-in callback servers listen on a free port instead of pi's fixed ones.
pub const TEST_SERVER_ENV: &str = "PI_RS_OAUTH_TEST_SERVER";

/// The test server, if one is set.
pub(super) fn test_server() -> Option<String> {
    std::env::var(TEST_SERVER_ENV)
        .ok()
        .map(|s| s.trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty())
}

/// The URL to ask for the real endpoint `url` (see [`TEST_SERVER_ENV`]).
pub fn endpoint(url: &str) -> String {
    match (test_server(), url.strip_prefix("https://")) {
        (Some(server), Some(rest)) => format!("{server}/{rest}"),
        _ => url.to_string(),
    }
}

/// pi subtracts five minutes from Anthropic and Copilot token lifetimes so a request
/// started just before expiry still carries a valid token.
pub(super) const EXPIRY_MARGIN_MS: i64 = 5 * 60 * 1000;

/// New tokens from the token endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenUpdate {
    pub access: ApiKey,
    pub refresh: ApiKey,
    /// Milliseconds since the epoch.
    pub expires: i64,
    /// Further fields of the entry the provider keeps (Codex's `accountId`).
    pub extra: Vec<(String, Value)>,
}

impl std::fmt::Debug for TokenUpdate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenUpdate")
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

/// Sends a request; the body of a success, else an error naming the status and body.
pub(super) async fn send(request: reqwest::RequestBuilder, url: &str) -> Result<String, String> {
    let response = request
        .send()
        .await
        .map_err(|e| format!("request to {url} failed ({e})"))?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| format!("reading the answer of {url} failed ({e})"))?;
    if !status.is_success() {
        return Err(format!(
            "{url} answered HTTP {}: {}",
            status.as_u16(),
            shorten(text.trim(), 500)
        ));
    }
    Ok(text)
}

fn shorten(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
