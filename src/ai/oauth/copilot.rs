//! GitHub Copilot sign-in: the device code flow on github.com or a GitHub Enterprise
//! domain. The user opens the verification page and enters the code while this polls for
//! the GitHub token (pi's pacing: the server's interval × 1.2, × 1.4 after `slow_down`).
//! The GitHub token is then exchanged for a short-lived Copilot token, which is what
//! requests carry; auth.json keeps the GitHub token as `refresh`, so a "refresh" is that
//! exchange again. After signing in every Copilot model is enabled for the account (some,
//! such as Claude and Grok, refuse requests until their policy is accepted).

use std::time::Duration;

use serde_json::{Value, json};

use super::common::{EXPIRY_MARGIN_MS, TokenUpdate, endpoint, send};
use super::flow::{LoginError, LoginEvent, LoginIo, oauth_entry};

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];
const INITIAL_POLL_MULTIPLIER: f64 = 1.2;
const SLOW_DOWN_POLL_MULTIPLIER: f64 = 1.4;

/// The host of a GitHub Enterprise URL or domain as typed; `None` when it is not one.
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_string()
    } else {
        format!("https://{trimmed}")
    };
    reqwest::Url::parse(&with_scheme)
        .ok()?
        .host_str()
        .map(str::to_string)
}

/// Where the Copilot token is exchanged for a GitHub token of `domain` (github.com
/// without one).
pub(super) fn copilot_token_url(domain: Option<&str>) -> String {
    let domain = domain.filter(|d| !d.is_empty()).unwrap_or("github.com");
    format!("https://api.{domain}/copilot_internal/v2/token")
}

/// The API base URL for a Copilot token: its `proxy-ep` with `proxy.` turned into `api.`,
/// else the enterprise's `copilot-api.` host, else the individual plan's.
pub fn copilot_base_url(token: Option<&str>, enterprise_domain: Option<&str>) -> String {
    if let Some(host) = token.and_then(|t| {
        t.split(';')
            .find_map(|part| part.strip_prefix("proxy-ep="))
            .filter(|h| !h.is_empty())
    }) {
        let host = host
            .strip_prefix("proxy.")
            .map_or_else(|| host.to_string(), |rest| format!("api.{rest}"));
        return format!("https://{host}");
    }
    match enterprise_domain.filter(|d| !d.is_empty()) {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => "https://api.individual.githubcopilot.com".into(),
    }
}

/// The request for a Copilot token with a GitHub token.
pub(super) fn token_request(
    http: &reqwest::Client,
    url: &str,
    github_token: &str,
) -> reqwest::RequestBuilder {
    let mut request = http
        .get(url)
        .header("Accept", "application/json")
        .header("Authorization", format!("Bearer {github_token}"));
    for (name, value) in COPILOT_HEADERS {
        request = request.header(name, value);
    }
    request
}

/// Reads a Copilot token answer (`token`, `expires_at` in seconds).
pub(super) fn parse_token(
    body: &str,
    github_token: &str,
    _now_ms: i64,
) -> Result<TokenUpdate, String> {
    let data: Value =
        serde_json::from_str(body).map_err(|e| format!("Invalid Copilot token response ({e})"))?;
    let (Some(token), Some(expires_at)) = (
        data.get("token").and_then(Value::as_str),
        data.get("expires_at").and_then(Value::as_f64),
    ) else {
        return Err("Invalid Copilot token response fields".into());
    };
    Ok(TokenUpdate {
        access: crate::ai::auth::ApiKey::new(token),
        refresh: crate::ai::auth::ApiKey::new(github_token),
        expires: (expires_at * 1000.0) as i64 - EXPIRY_MARGIN_MS,
        extra: Vec::new(),
    })
}

/// The device code answer.
struct Device {
    device_code: String,
    user_code: String,
    verification_uri: String,
    interval: f64,
    expires_in: f64,
}

async fn post_form(
    http: &reqwest::Client,
    url: &str,
    pairs: &[(&str, &str)],
) -> Result<Value, String> {
    let mut body = reqwest::Url::parse("http://x/").map_err(|e| e.to_string())?;
    body.query_pairs_mut().extend_pairs(pairs);
    let request = http
        .post(url)
        .header("Accept", "application/json")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .header("User-Agent", USER_AGENT)
        .body(body.query().unwrap_or_default().to_string())
        .timeout(Duration::from_secs(30));
    let text = send(request, url).await?;
    serde_json::from_str(&text).map_err(|e| format!("{url} returned invalid JSON ({e})"))
}

async fn start_device_flow(http: &reqwest::Client, domain: &str) -> Result<Device, String> {
    let url = endpoint(&format!("https://{domain}/login/device/code"));
    let data = post_form(
        http,
        &url,
        &[("client_id", CLIENT_ID), ("scope", "read:user")],
    )
    .await?;
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    let number = |k: &str| data.get(k).and_then(Value::as_f64);
    match (
        text("device_code"),
        text("user_code"),
        text("verification_uri"),
        number("interval"),
        number("expires_in"),
    ) {
        (
            Some(device_code),
            Some(user_code),
            Some(verification_uri),
            Some(interval),
            Some(expires_in),
        ) => Ok(Device {
            device_code,
            user_code,
            verification_uri,
            interval,
            expires_in,
        }),
        _ => Err("Invalid device code response fields".into()),
    }
}

/// Polls until the user has entered the code; the GitHub token.
async fn poll_for_github_token(
    io: &mut LoginIo,
    http: &reqwest::Client,
    domain: &str,
    device: &Device,
) -> Result<String, LoginError> {
    let url = endpoint(&format!("https://{domain}/login/oauth/access_token"));
    let deadline =
        tokio::time::Instant::now() + Duration::from_secs_f64(device.expires_in.max(0.0));
    let mut interval_ms = (device.interval * 1000.0).floor().max(1000.0);
    let mut multiplier = INITIAL_POLL_MULTIPLIER;
    let mut slow_downs = 0;
    while tokio::time::Instant::now() < deadline {
        let remaining = deadline - tokio::time::Instant::now();
        let wait = Duration::from_millis((interval_ms * multiplier).ceil() as u64).min(remaining);
        let sleep = tokio::time::sleep(wait);
        tokio::pin!(sleep);
        // Anything typed meanwhile is ignored; a closed dialog cancels.
        loop {
            tokio::select! {
                () = &mut sleep => break,
                typed = io.input.recv() => if typed.is_none() { return Err(LoginError::Cancelled) },
            }
        }
        let data = post_form(
            http,
            &url,
            &[
                ("client_id", CLIENT_ID),
                ("device_code", &device.device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ],
        )
        .await?;
        if let Some(token) = data.get("access_token").and_then(Value::as_str) {
            return Ok(token.to_string());
        }
        let Some(error) = data.get("error").and_then(Value::as_str) else {
            continue;
        };
        match error {
            "authorization_pending" => {}
            "slow_down" => {
                slow_downs += 1;
                interval_ms = match data.get("interval").and_then(Value::as_f64) {
                    Some(i) if i > 0.0 => i * 1000.0,
                    _ => (interval_ms + 5000.0).max(1000.0),
                };
                multiplier = SLOW_DOWN_POLL_MULTIPLIER;
            }
            other => {
                let description = data
                    .get("error_description")
                    .and_then(Value::as_str)
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                return Err(format!("Device flow failed: {other}{description}").into());
            }
        }
    }
    if slow_downs > 0 {
        return Err("Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.".into());
    }
    Err("Device flow timed out".into())
}

/// Accepts a model's policy for the account; whether that worked.
async fn enable_model(http: &reqwest::Client, base_url: &str, token: &str, model: &str) -> bool {
    let url = endpoint(&format!("{base_url}/models/{model}/policy"));
    let mut request = http
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {token}"));
    for (name, value) in COPILOT_HEADERS {
        request = request.header(name, value);
    }
    request
        .header("openai-intent", "chat-policy")
        .header("x-interaction-type", "chat-policy")
        .body(json!({"state": "enabled"}).to_string())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

pub(super) async fn login(
    io: &mut LoginIo,
    http: &reqwest::Client,
    models: &[String],
) -> Result<Value, LoginError> {
    let typed = io
        .prompt(
            "GitHub Enterprise URL/domain (blank for github.com)",
            Some("company.ghe.com"),
        )
        .await?;
    let enterprise = normalize_domain(&typed);
    if !typed.trim().is_empty() && enterprise.is_none() {
        return Err("Invalid GitHub Enterprise URL/domain".into());
    }
    let domain = enterprise.clone().unwrap_or_else(|| "github.com".into());
    let device = start_device_flow(http, &domain).await?;
    io.show(LoginEvent::Auth {
        url: device.verification_uri.clone(),
        instructions: Some(format!("Enter code: {}", device.user_code)),
    });
    io.show(LoginEvent::Waiting(
        "Waiting for browser authentication...".into(),
    ));
    let github_token = poll_for_github_token(io, http, &domain, &device).await?;
    let url = endpoint(&copilot_token_url(enterprise.as_deref()));
    let text = send(
        token_request(http, &url, &github_token).timeout(Duration::from_secs(30)),
        &url,
    )
    .await?;
    let update = parse_token(&text, &github_token, 0)?;
    io.show(LoginEvent::Progress("Enabling models...".into()));
    let base_url = copilot_base_url(Some(update.access.expose()), enterprise.as_deref());
    futures::future::join_all(
        models
            .iter()
            .map(|m| enable_model(http, &base_url, update.access.expose(), m)),
    )
    .await;
    Ok(oauth_entry(&[
        ("refresh", json!(github_token)),
        ("access", json!(update.access.expose())),
        ("expires", json!(update.expires)),
        ("enterpriseUrl", enterprise.map_or(Value::Null, Value::from)),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enterprise_domains_are_normalised_to_their_host() {
        assert_eq!(
            normalize_domain(" company.ghe.com ").as_deref(),
            Some("company.ghe.com")
        );
        assert_eq!(
            normalize_domain("https://company.ghe.com/login").as_deref(),
            Some("company.ghe.com")
        );
        assert_eq!(normalize_domain(""), None);
        assert_eq!(normalize_domain("http://"), None);
    }

    #[test]
    fn the_api_base_url_follows_the_tokens_proxy_endpoint() {
        assert_eq!(
            copilot_base_url(
                Some("tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;x=y"),
                None
            ),
            "https://api.business.githubcopilot.com"
        );
        assert_eq!(
            copilot_base_url(Some("tid=1"), Some("company.ghe.com")),
            "https://copilot-api.company.ghe.com"
        );
        assert_eq!(
            copilot_base_url(None, None),
            "https://api.individual.githubcopilot.com"
        );
    }
}
