//! Application-default credentials for Vertex AI, as Google's auth library finds them:
//! the JSON file named by `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
//! `application_default_credentials.json` (in `$CLOUDSDK_CONFIG`, or `~/.config/gcloud`).
//!
//! A `service_account` file signs an RS256 JWT with its private key and exchanges it at
//! its `token_uri` (`urn:ietf:params:oauth:grant-type:jwt-bearer`); an `authorized_user`
//! file (what `gcloud auth application-default login` writes) trades its refresh token.
//! An `external_account` file (workload identity federation) trades a subject token at
//! Google STS (see `external`). Without any file, the metadata server of Google Cloud
//! VMs gives the token (see `metadata`). Tokens are kept in memory and reused until a
//! minute before they expire.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// A cached token is renewed this long before it expires.
const EXPIRY_MARGIN: Duration = Duration::from_secs(60);

/// A usable access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub access_token: String,
    /// The credentials' `quota_project_id`.
    pub quota_project: Option<String>,
}

struct Cached {
    file: PathBuf,
    token: AccessToken,
    valid_until: Instant,
}

static CACHE: Mutex<Option<Cached>> = Mutex::new(None);

/// The credentials file to use, or why there is none.
pub fn credentials_file() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty())
    {
        return Ok(PathBuf::from(path));
    }
    let dir = match std::env::var_os("CLOUDSDK_CONFIG").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => dirs::home_dir()
            .unwrap_or_default()
            .join(".config")
            .join("gcloud"),
    };
    let file = dir.join("application_default_credentials.json");
    if file.is_file() {
        Ok(file)
    } else {
        Err("Could not load the default credentials. Set GOOGLE_APPLICATION_CREDENTIALS, run `gcloud auth application-default login`, or set GOOGLE_CLOUD_API_KEY.".into())
    }
}

/// Whether application-default credentials are there (pi's check before offering Vertex).
pub fn has_credentials() -> bool {
    match std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS").filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path).exists(),
        None => credentials_file().is_ok(),
    }
}

/// The cache key of tokens from the metadata server.
const METADATA_KEY: &str = "<metadata server>";

/// An access token from the application-default credentials.
pub async fn access_token(client: &reqwest::Client) -> Result<AccessToken, String> {
    let source = credentials_file();
    let file = match &source {
        Ok(file) => file.clone(),
        Err(_) => PathBuf::from(METADATA_KEY),
    };
    if let Ok(cache) = CACHE.lock()
        && let Some(c) = cache.as_ref()
        && c.file == file
        && Instant::now() + EXPIRY_MARGIN < c.valid_until
    {
        return Ok(c.token.clone());
    }
    let token = match source {
        Ok(file) => from_file(client, &file).await?,
        Err(no_file) => {
            let (token, expires_in) = super::metadata::token(client)
                .await
                .map_err(|e| format!("{no_file} (No credentials file, and {e}.)"))?;
            (
                AccessToken {
                    access_token: token,
                    quota_project: None,
                },
                expires_in,
            )
        }
    };
    let (token, expires_in) = token;
    if let Ok(mut cache) = CACHE.lock() {
        *cache = Some(Cached {
            file,
            token: token.clone(),
            valid_until: Instant::now() + Duration::from_secs(expires_in),
        });
    }
    Ok(token)
}

/// A token from the credentials file `file`, and its lifetime in seconds.
async fn from_file(
    client: &reqwest::Client,
    file: &std::path::Path,
) -> Result<(AccessToken, u64), String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("Could not read Google credentials {}: {e}", file.display()))?;
    let creds: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "Google credentials {} are not valid JSON: {e}",
            file.display()
        )
    })?;
    let (token, expires_in) = if str_field(&creds, "type") == Some("external_account") {
        super::external::token(client, &creds).await?
    } else {
        fetch(client, &creds, now_secs()).await?
    };
    let quota_project = str_field(&creds, "quota_project_id").map(str::to_string);
    let token = AccessToken {
        access_token: token,
        quota_project,
    };
    Ok((token, expires_in))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Exchanges the credentials for a token; returns it and its lifetime in seconds.
async fn fetch(client: &reqwest::Client, creds: &Value, now: u64) -> Result<(String, u64), String> {
    let token_uri = str_field(creds, "token_uri").unwrap_or(DEFAULT_TOKEN_URI);
    let form = match str_field(creds, "type") {
        Some("service_account") => {
            let assertion = service_account_jwt(creds, token_uri, now)?;
            vec![
                (
                    "grant_type",
                    "urn:ietf:params:oauth:grant-type:jwt-bearer".to_string(),
                ),
                ("assertion", assertion),
            ]
        }
        Some("authorized_user") => {
            let field = |k: &str| {
                str_field(creds, k)
                    .map(str::to_string)
                    .ok_or_else(|| format!("Google authorized_user credentials lack {k}"))
            };
            vec![
                ("grant_type", "refresh_token".to_string()),
                ("client_id", field("client_id")?),
                ("client_secret", field("client_secret")?),
                ("refresh_token", field("refresh_token")?),
            ]
        }
        other => {
            return Err(format!(
                "Unsupported Google credentials type {}: use a service account key, `gcloud auth application-default login`, an external_account file, or GOOGLE_CLOUD_API_KEY",
                other.unwrap_or("(none)")
            ));
        }
    };
    let response = client
        .post(token_uri)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form_encode(&form))
        .send()
        .await
        .map_err(|e| format!("Could not get a Google access token from {token_uri}: {e}"))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "Google token request failed ({}): {}",
            status.as_u16(),
            text.trim()
        ));
    }
    let body: Value = serde_json::from_str(&text).map_err(|_| {
        let head: String = text.chars().take(200).collect();
        format!("Google token response is not JSON: {head}")
    })?;
    let token = str_field(&body, "access_token")
        .ok_or("Google token response has no access_token")?
        .to_string();
    let expires_in = body
        .get("expires_in")
        .and_then(Value::as_u64)
        .unwrap_or(3600);
    Ok((token, expires_in))
}

/// The signed JWT a service account trades for a token.
pub fn service_account_jwt(creds: &Value, token_uri: &str, now: u64) -> Result<String, String> {
    let email =
        str_field(creds, "client_email").ok_or("Google service account lacks client_email")?;
    let pem = str_field(creds, "private_key").ok_or("Google service account lacks private_key")?;
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = str_field(creds, "private_key_id") {
        header["kid"] = json!(kid);
    }
    let claims = json!({
        "iss": email,
        "scope": SCOPE,
        "aud": token_uri,
        "iat": now,
        "exp": now + 3600,
    });
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let signature = sign_rs256(pem, signing_input.as_bytes())?;
    Ok(format!("{signing_input}.{}", b64(&signature)))
}

/// RSASSA-PKCS1-v1_5 with SHA-256 over `message`, with a PKCS#8 PEM private key.
fn sign_rs256(pem: &str, message: &[u8]) -> Result<Vec<u8>, String> {
    let der_b64: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(der_b64)
        .map_err(|_| "Google service account private_key is not valid PEM".to_string())?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| format!("Google service account private_key is not a PKCS#8 RSA key: {e}"))?;
    let mut signature = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        message,
        &mut signature,
    )
    .map_err(|_| "Could not sign the Google service account token request".to_string())?;
    Ok(signature)
}

/// `application/x-www-form-urlencoded` encoding of name/value pairs.
fn form_encode(pairs: &[(&str, String)]) -> String {
    let enc = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    out.push(b as char);
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_are_percent_encoded() {
        assert_eq!(
            form_encode(&[("a", "x y/z:1".into()), ("b", "~ok".into())]),
            "a=x+y%2Fz%3A1&b=~ok"
        );
    }

    #[test]
    fn a_service_account_without_a_key_is_an_error() {
        let creds = json!({"type": "service_account", "client_email": "a@b"});
        let err = service_account_jwt(&creds, DEFAULT_TOKEN_URI, 0).unwrap_err();
        assert!(err.contains("private_key"), "{err}");
        let bad = json!({"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"});
        let err = service_account_jwt(&bad, DEFAULT_TOKEN_URI, 0).unwrap_err();
        assert!(err.contains("PKCS#8"), "{err}");
    }
}
