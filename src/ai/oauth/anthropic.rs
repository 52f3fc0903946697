//! Claude Pro/Max sign-in: authorization code with PKCE. The browser comes back to a
//! loopback server on pi's port 53692, or the user pastes the redirect URL (or
//! `code#state`). The code is exchanged for tokens as JSON; the PKCE verifier doubles as
//! the `state`, as in pi.

use serde_json::{Value, json};

use super::callback::CallbackServer;
use super::common::{EXPIRY_MARGIN_MS, endpoint, send};
use super::flow::{LoginError, LoginEvent, LoginIo, oauth_entry};
use super::pkce::Pkce;

pub(super) const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
pub(super) const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

/// The body of a refresh request.
pub(super) fn refresh_body(refresh_token: &str) -> Value {
    json!({
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": refresh_token,
    })
}

fn authorize_url(pkce: &Pkce, redirect_uri: &str) -> String {
    let mut url = match reqwest::Url::parse(&endpoint(AUTHORIZE_URL)) {
        Ok(u) => u,
        Err(_) => return AUTHORIZE_URL.to_string(),
    };
    url.query_pairs_mut()
        .append_pair("code", "true")
        .append_pair("client_id", CLIENT_ID)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", SCOPES)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", &pkce.verifier);
    url.to_string()
}

pub(super) async fn login(io: &mut LoginIo, http: &reqwest::Client) -> Result<Value, LoginError> {
    let pkce = Pkce::new();
    let mut server = CallbackServer::start(
        CALLBACK_PORT,
        CALLBACK_PATH,
        pkce.verifier.clone(),
        "Anthropic",
    )
    .await
    .map_err(|e| format!("cannot listen for the sign-in callback on port {CALLBACK_PORT} ({e})"))?;
    let redirect_uri = server.redirect_uri.clone();
    io.show(LoginEvent::Auth {
        url: authorize_url(&pkce, &redirect_uri),
        instructions: Some("Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.".into()),
    });
    io.show(LoginEvent::ManualInput {
        prompt: "Paste redirect URL below, or complete login in browser:".into(),
    });
    let (code, state) = io.code_from_callback_or_paste(Some(&mut server)).await?;
    drop(server);
    if state.as_deref().is_some_and(|s| s != pkce.verifier) {
        return Err("OAuth state mismatch".into());
    }
    let state = state.unwrap_or_else(|| pkce.verifier.clone());
    io.show(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let url = endpoint(TOKEN_URL);
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    });
    let request = http
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body.to_string())
        .timeout(std::time::Duration::from_secs(30));
    let text = send(request, &url)
        .await
        .map_err(|e| format!("Token exchange request failed: {e}"))?;
    let data: Value = serde_json::from_str(&text)
        .map_err(|e| format!("Token exchange returned invalid JSON ({e})"))?;
    let field = |name: &str| {
        data.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("Token exchange response has no {name}"))
    };
    let expires_in = data
        .get("expires_in")
        .and_then(Value::as_f64)
        .ok_or("Token exchange response has no expires_in")?;
    let expires = crate::ai::message::now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_MARGIN_MS;
    Ok(oauth_entry(&[
        ("refresh", json!(field("refresh_token")?)),
        ("access", json!(field("access_token")?)),
        ("expires", json!(expires)),
    ]))
}
