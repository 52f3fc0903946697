//! ChatGPT Plus/Pro (Codex) sign-in: authorization code with PKCE and a random `state`.
//! The browser comes back to a loopback server on pi's port 1455; if that port is taken
//! the user pastes the redirect URL instead (as in pi). Tokens are exchanged with form
//! bodies, and the ChatGPT account id is read from the access token (a JWT) and stored as
//! `accountId`, which the Codex responses API needs.

use base64::Engine as _;
use serde_json::{Value, json};

use super::callback::CallbackServer;
use super::common::{endpoint, send};
use super::flow::{LoginError, LoginEvent, LoginIo, oauth_entry};
use super::pkce::Pkce;

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
pub(super) const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const CALLBACK_PORT: u16 = 1455;
const CALLBACK_PATH: &str = "/auth/callback";
const SCOPE: &str = "openid profile email offline_access";
const JWT_CLAIM: &str = "https://api.openai.com/auth";

fn form(pairs: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse("http://x/").unwrap_or_else(|_| unreachable!());
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_string()
}

/// The body of a refresh request.
pub(super) fn refresh_form(refresh_token: &str) -> String {
    form(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", CLIENT_ID),
    ])
}

/// The ChatGPT account id in an access token's claims.
pub fn account_id(access_token: &str) -> Option<String> {
    let mut parts = access_token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let trimmed = payload.trim_end_matches('=');
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(trimmed)
        .or_else(|_| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(trimmed))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims
        .get(JWT_CLAIM)?
        .get("chatgpt_account_id")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn random_state() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn authorize_url(pkce: &Pkce, state: &str, redirect_uri: &str) -> String {
    let mut url = match reqwest::Url::parse(&endpoint(AUTHORIZE_URL)) {
        Ok(u) => u,
        Err(_) => return AUTHORIZE_URL.to_string(),
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", SCOPE)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", state)
        .append_pair("id_token_add_organizations", "true")
        .append_pair("codex_cli_simplified_flow", "true")
        .append_pair("originator", "pi");
    url.to_string()
}

pub(super) async fn login(io: &mut LoginIo, http: &reqwest::Client) -> Result<Value, LoginError> {
    let pkce = Pkce::new();
    let state = random_state();
    // A taken port leaves only the pasted redirect URL, as in pi.
    let mut server = CallbackServer::start(CALLBACK_PORT, CALLBACK_PATH, state.clone(), "OpenAI")
        .await
        .ok();
    let redirect_uri = server.as_ref().map_or_else(
        || format!("http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"),
        |s| s.redirect_uri.clone(),
    );
    io.show(LoginEvent::Auth {
        url: authorize_url(&pkce, &state, &redirect_uri),
        instructions: Some("A browser window should open. Complete login to finish.".into()),
    });
    io.show(LoginEvent::ManualInput {
        prompt: "Paste redirect URL below, or complete login in browser:".into(),
    });
    let (code, returned_state) = io.code_from_callback_or_paste(server.as_mut()).await?;
    drop(server);
    if returned_state.is_some_and(|s| s != state) {
        return Err("State mismatch".into());
    }
    let url = endpoint(TOKEN_URL);
    let body = form(&[
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("code", &code),
        ("code_verifier", &pkce.verifier),
        ("redirect_uri", &redirect_uri),
    ]);
    let request = http
        .post(&url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .timeout(std::time::Duration::from_secs(30));
    let text = send(request, &url)
        .await
        .map_err(|e| format!("OpenAI Codex token exchange failed: {e}"))?;
    let data: Value = serde_json::from_str(&text)
        .map_err(|e| format!("OpenAI Codex token exchange returned invalid JSON ({e})"))?;
    let (Some(access), Some(refresh), Some(expires_in)) = (
        data.get("access_token").and_then(Value::as_str),
        data.get("refresh_token").and_then(Value::as_str),
        data.get("expires_in").and_then(Value::as_f64),
    ) else {
        return Err(format!("OpenAI Codex token exchange response missing fields: {data}").into());
    };
    let account = account_id(access).ok_or("Failed to extract accountId from token")?;
    Ok(oauth_entry(&[
        ("access", json!(access)),
        ("refresh", json!(refresh)),
        (
            "expires",
            json!(crate::ai::message::now_ms() + (expires_in * 1000.0) as i64),
        ),
        ("accountId", json!(account)),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_id_comes_from_the_jwt_claims() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc-1"}}"#);
        assert_eq!(
            account_id(&format!("h.{payload}.s")).as_deref(),
            Some("acc-1")
        );
        assert_eq!(account_id("not-a-jwt"), None);
        let other = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"x"}"#);
        assert_eq!(account_id(&format!("h.{other}.s")), None);
    }

    #[test]
    fn forms_are_url_encoded() {
        assert_eq!(
            refresh_form("r/+ x"),
            "grant_type=refresh_token&refresh_token=r%2F%2B+x&client_id=app_EMoamEEZ73f0CkXaXp7hrann"
        );
    }
}
