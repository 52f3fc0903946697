//! `external_account` credentials (workload and workforce identity federation), as
//! Google's auth library uses them: a subject token read from a file or fetched from a
//! URL (`credential_source.file` / `.url` with optional `headers`; `format.type` `text`
//! or `json` with `subject_token_field_name`), traded at `token_url` (Google STS,
//! RFC 8693 token exchange) for a federated token, which is then traded at
//! `service_account_impersonation_url` for a service account's token when the file
//! names one. The subject token may also come from a program
//! (`credential_source.executable`, see [`executable`]) or be a signed AWS request
//! (`credential_source.environment_id` `aws1`, see [`aws`]); as in Google's library an
//! `environment_id` makes the source an AWS one, else an `executable` makes it a
//! program, else it is a file or URL source.

mod aws;
mod executable;
mod fetch;

use base64::Engine as _;
use serde_json::{Value, json};

use self::fetch::{send_text, str_field};

const DEFAULT_TOKEN_URL: &str = "https://sts.googleapis.com/v1/token";
/// The scope asked for, as for the other application-default credentials.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// A token for `creds` (an `external_account` file) and its lifetime in seconds.
pub async fn token(client: &reqwest::Client, creds: &Value) -> Result<(String, u64), String> {
    let audience =
        str_field(creds, "audience").ok_or("external_account credentials lack audience")?;
    let token_type = str_field(creds, "subject_token_type")
        .ok_or("external_account credentials lack subject_token_type")?;
    let source = creds
        .get("credential_source")
        .ok_or("external_account credentials lack credential_source")?;
    let subject = subject_token(client, creds, source).await?;
    let token_url = str_field(creds, "token_url").unwrap_or(DEFAULT_TOKEN_URL);
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange".to_string(),
        ),
        ("audience", audience.to_string()),
        ("scope", SCOPE.to_string()),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:access_token".to_string(),
        ),
        ("subject_token", subject),
        ("subject_token_type", token_type.to_string()),
    ];
    let client_auth = match (
        str_field(creds, "client_id"),
        str_field(creds, "client_secret"),
    ) {
        (Some(id), secret) => Some(
            base64::engine::general_purpose::STANDARD
                .encode(format!("{id}:{}", secret.unwrap_or(""))),
        ),
        _ => None,
    };
    // Workforce pools bill a user project when no client authenticates.
    if let (None, Some(project)) = (
        &client_auth,
        str_field(creds, "workforce_pool_user_project"),
    ) {
        form.push(("options", json!({"userProject": project}).to_string()));
    }
    let mut request = client.post(token_url).form(&form);
    if let Some(basic) = client_auth {
        request = request.header("authorization", format!("Basic {basic}"));
    }
    let body = send_json(request, "The Google STS token exchange").await?;
    let federated = str_field(&body, "access_token")
        .ok_or("The Google STS token exchange returned no access_token")?
        .to_string();
    let expires_in = body
        .get("expires_in")
        .and_then(Value::as_u64)
        .unwrap_or(3600);
    match str_field(creds, "service_account_impersonation_url") {
        None => Ok((federated, expires_in)),
        Some(url) => impersonate(client, creds, url, &federated).await,
    }
}

/// The service account's token for the federated one.
async fn impersonate(
    client: &reqwest::Client,
    creds: &Value,
    url: &str,
    federated: &str,
) -> Result<(String, u64), String> {
    let lifetime = creds
        .pointer("/service_account_impersonation/token_lifetime_seconds")
        .and_then(Value::as_u64)
        .unwrap_or(3600);
    let request = client
        .post(url)
        .header("authorization", format!("Bearer {federated}"))
        .json(&json!({"scope": [SCOPE], "lifetime": format!("{lifetime}s")}));
    let body = send_json(request, "The service account impersonation").await?;
    let token = str_field(&body, "accessToken")
        .ok_or("The service account impersonation returned no accessToken")?
        .to_string();
    let expires_in = str_field(&body, "expireTime")
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| (t.timestamp() - chrono::Utc::now().timestamp()).max(0) as u64)
        .unwrap_or(lifetime);
    Ok((token, expires_in))
}

/// The subject token of `creds`' `credential_source`.
async fn subject_token(
    client: &reqwest::Client,
    creds: &Value,
    source: &Value,
) -> Result<String, String> {
    if source.get("environment_id").is_some() {
        return aws::subject_token(client, creds, source).await;
    }
    if let Some(program) = source.get("executable") {
        return executable::subject_token(creds, program).await;
    }
    let raw = if let Some(file) = str_field(source, "file") {
        std::fs::read_to_string(file)
            .map_err(|e| format!("Could not read the subject token file {file}: {e}"))?
    } else if let Some(url) = str_field(source, "url") {
        let mut request = client.get(url);
        if let Some(headers) = source.get("headers").and_then(Value::as_object) {
            for (k, v) in headers {
                if let Some(v) = v.as_str() {
                    request = request.header(k.as_str(), v);
                }
            }
        }
        send_text(request, "The subject token request").await?
    } else {
        return Err("Unsupported external_account credential_source: it names no file, url, executable or AWS environment_id".into());
    };
    let format = source.get("format");
    match format.and_then(|f| str_field(f, "type")).unwrap_or("text") {
        "text" => Ok(raw.trim().to_string()),
        "json" => {
            let field = format
                .and_then(|f| str_field(f, "subject_token_field_name"))
                .ok_or("credential_source.format lacks subject_token_field_name")?;
            let v: Value = serde_json::from_str(&raw)
                .map_err(|_| "The subject token source is not JSON".to_string())?;
            str_field(&v, field)
                .map(str::to_string)
                .ok_or_else(|| format!("The subject token source has no {field}"))
        }
        other => Err(format!("Unsupported credential_source format {other}")),
    }
}

async fn send_json(request: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
    let text = send_text(request, what).await?;
    serde_json::from_str(&text).map_err(|_| format!("{what} did not answer with JSON"))
}
