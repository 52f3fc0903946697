//! The AWS SDK's default credential chain, as pi's Bedrock client walks it, for the
//! sources that need a command, a file or a server:
//!
//! 1. the environment keys (unless `AWS_PROFILE` is set) — see [`AwsConfig::auth`];
//! 2. the profile's SSO login (`sso_session` or `sso_start_url`): the token `aws sso
//!    login` cached in `~/.aws/sso/cache/<sha1>.json`, traded at the SSO portal's
//!    `GetRoleCredentials`; an `sso_session` token about to expire is renewed with its
//!    cached refresh token at SSO-OIDC `CreateToken` and written back to the cache;
//! 3. the profile's role (`role_arn` with `source_profile` or `credential_source`,
//!    assumed at STS — see [`roles`]), its keys, its `web_identity_token_file`, then its
//!    `credential_process` (a command printing JSON);
//! 4. web identity: `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` traded at STS
//!    `AssumeRoleWithWebIdentity`;
//! 5. container credentials: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on
//!    `169.254.170.2`) or `_FULL_URI`, with `AWS_CONTAINER_AUTHORIZATION_TOKEN` or the
//!    contents of `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` as `Authorization`;
//! 6. the EC2 instance metadata service (IMDSv2: a token from `PUT /latest/api/token`,
//!    then the role's credentials; IMDSv1 when the token is refused with 403/404/405),
//!    at `AWS_EC2_METADATA_SERVICE_ENDPOINT` or `169.254.169.254`, off when
//!    `AWS_EC2_METADATA_DISABLED=true`.
//!
//! Requests to the metadata and container servers give up after [`METADATA_TIMEOUT`],
//! STS and SSO after [`SERVICE_TIMEOUT`]. Temporary credentials are kept in memory until
//! five minutes before they expire. For tests only, `PI_RS_AWS_TEST_SERVER` moves the
//! STS, SSO portal and container hosts: `https://HOST/PATH` is asked at
//! `$PI_RS_AWS_TEST_SERVER/HOST/PATH`.

use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::super::sigv4::Credentials;
pub use super::credentials::TEST_SERVER_ENV;
use super::credentials::{AwsAuth, AwsConfig};

mod roles;
/// How long the metadata and container servers may take per request.
pub const METADATA_TIMEOUT: Duration = Duration::from_secs(1);
/// How long STS and the SSO portal may take.
pub const SERVICE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a `credential_process` command may run.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(60);
/// Cached credentials are renewed this long before they expire.
const EXPIRY_MARGIN: chrono::TimeDelta = chrono::TimeDelta::minutes(5);
const IMDS_DEFAULT: &str = "http://169.254.169.254";
const CONTAINER_HOST: &str = "http://169.254.170.2";

/// Credentials and when they stop working (`None`: never).
#[derive(Debug, Clone)]
struct Temporary {
    credentials: Credentials,
    expires: Option<DateTime<Utc>>,
}

/// The last credentials fetched, with the source they came from.
static CACHE: Mutex<Option<(String, Temporary)>> = Mutex::new(None);

/// The credentials for a Bedrock request, from the first source of the chain that has
/// them, or why none has.
pub async fn resolve(config: &AwsConfig, client: &reqwest::Client) -> Result<AwsAuth, String> {
    if let Some(auth) = config.static_auth() {
        return Ok(auth);
    }
    let Some((key, source)) = pick_source(config) else {
        return Err(config.no_credentials_message());
    };
    if let Some(hit) = cached(&key) {
        return Ok(AwsAuth::SigV4(hit));
    }
    let fetched = match source {
        Source::Sso => sso(config, client).await,
        Source::Role => roles::assume_role(config, client, Vec::new()).await,
        Source::ProfileWebIdentity => roles::profile_web_identity(config, client).await,
        Source::Process(command) => credential_process(&command).await,
        Source::WebIdentity => web_identity(config, client).await,
        Source::Container => container(config, client).await,
        Source::Imds => imds(config, client).await,
    }?;
    let credentials = fetched.credentials.clone();
    if let Ok(mut cache) = CACHE.lock() {
        *cache = Some((key, fetched));
    }
    Ok(AwsAuth::SigV4(credentials))
}

/// A source that is fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Sso,
    Role,
    ProfileWebIdentity,
    Process(String),
    WebIdentity,
    Container,
    Imds,
}

/// The first fetched source the settings name, with a cache key for it.
fn pick_source(config: &AwsConfig) -> Option<(String, Source)> {
    let profile = config.profile_name().to_string();
    let picked = if config.is_sso_profile() {
        Source::Sso
    } else if config.is_role_profile() {
        Source::Role
    } else if config.profile_value("web_identity_token_file").is_some()
        && config.profile_value("role_arn").is_some()
    {
        Source::ProfileWebIdentity
    } else if let Some(command) = config.profile_value("credential_process") {
        Source::Process(command)
    } else if config.var("AWS_WEB_IDENTITY_TOKEN_FILE").is_some()
        && config.var("AWS_ROLE_ARN").is_some()
    {
        Source::WebIdentity
    } else if config
        .var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        .is_some()
        || config.var("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
    {
        Source::Container
    } else if config
        .var("AWS_EC2_METADATA_DISABLED")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return None;
    } else {
        Source::Imds
    };
    Some((format!("{profile}/{picked:?}"), picked))
}

fn cached(key: &str) -> Option<Credentials> {
    let cache = CACHE.lock().ok()?;
    let (k, t) = cache.as_ref()?;
    let fresh = t.expires.is_none_or(|e| Utc::now() + EXPIRY_MARGIN < e);
    (k == key && fresh).then(|| t.credentials.clone())
}

/// `url` on the test server when one is set (see [`TEST_SERVER_ENV`]).
fn endpoint(config: &AwsConfig, url: &str) -> String {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match (config.var(TEST_SERVER_ENV), rest) {
        (Some(server), Some(rest)) => format!("{}/{rest}", server.trim_end_matches('/')),
        _ => url.to_string(),
    }
}

fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Credentials from a JSON object with the given field names.
fn from_json(v: &Value, names: [&str; 4], what: &str) -> Result<Temporary, String> {
    let field = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let (Some(id), Some(secret)) = (field(names[0]), field(names[1])) else {
        return Err(format!("{what} returned no {} / {}", names[0], names[1]));
    };
    let expires = match v.get(names[3]) {
        Some(Value::String(s)) => parse_time(s),
        Some(Value::Number(ms)) => ms.as_i64().and_then(DateTime::from_timestamp_millis),
        _ => None,
    };
    Ok(Temporary {
        credentials: Credentials {
            access_key_id: id.to_string(),
            secret_access_key: secret.to_string(),
            session_token: field(names[2]).map(str::to_string),
        },
        expires,
    })
}

/// Sends `request`; the body of a 2xx answer, or an error naming `what`.
async fn send(request: reqwest::RequestBuilder, what: &str) -> Result<String, String> {
    let response = request
        .send()
        .await
        .map_err(|e| format!("{what} failed: {e}"))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if status.is_success() {
        Ok(text)
    } else {
        Err(format!(
            "{what} failed ({}): {}",
            status.as_u16(),
            text.trim()
        ))
    }
}

fn json_of(text: &str, what: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|_| format!("{what} did not answer with JSON"))
}

// ---- SSO ------------------------------------------------------------------------------

/// The profile's SSO login traded for role credentials.
async fn sso(config: &AwsConfig, client: &reqwest::Client) -> Result<Temporary, String> {
    let profile = config.profile_name();
    let session = config.config_value("sso_session");
    let from_session = |key: &str| {
        session
            .as_deref()
            .and_then(|s| config.section_value(&format!("sso-session {s}"), key))
    };
    let start_url = from_session("sso_start_url").or_else(|| config.config_value("sso_start_url"));
    let region = from_session("sso_region").or_else(|| config.config_value("sso_region"));
    let account = config.config_value("sso_account_id");
    let role = config.config_value("sso_role_name");
    let (Some(start_url), Some(region), Some(account), Some(role)) =
        (start_url, region, account, role)
    else {
        return Err(format!(
            "Profile {profile} is not a complete SSO profile: it needs sso_start_url, sso_region (or an sso_session with them), sso_account_id and sso_role_name"
        ));
    };
    // `aws sso login` names the cache file after the session name, or the start URL.
    let cache_key = session.clone().unwrap_or_else(|| start_url.clone());
    let file = config
        .home
        .join(".aws/sso/cache")
        .join(format!("{}.json", sha1_hex(&cache_key)));
    let token = match session {
        Some(_) => session_token(config, client, &file, profile, &region).await?,
        None => sso_token(&file, profile)?,
    };
    let url = endpoint(
        config,
        &format!("https://portal.sso.{region}.amazonaws.com/federation/credentials"),
    );
    let text = send(
        client
            .get(url)
            .query(&[("account_id", &account), ("role_name", &role)])
            .header("x-amz-sso_bearer_token", token)
            .timeout(SERVICE_TIMEOUT),
        "SSO GetRoleCredentials",
    )
    .await?;
    let body = json_of(&text, "SSO GetRoleCredentials")?;
    from_json(
        &body["roleCredentials"],
        [
            "accessKeyId",
            "secretAccessKey",
            "sessionToken",
            "expiration",
        ],
        "SSO GetRoleCredentials",
    )
}

/// The cached SSO access token, if there and not expired.
fn sso_token(file: &Path, profile: &str) -> Result<String, String> {
    let relogin = format!("run `aws sso login --profile {profile}`");
    let text = std::fs::read_to_string(file).map_err(|_| {
        format!(
            "The SSO session of profile {profile} has no cached token ({}): {relogin}",
            file.display()
        )
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|_| format!("The SSO token cache {} is not JSON", file.display()))?;
    let token = v
        .get("accessToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let expires = v
        .get("expiresAt")
        .and_then(Value::as_str)
        .and_then(parse_time);
    match (token, expires) {
        (Some(token), Some(expires)) if expires > Utc::now() => Ok(token.to_string()),
        _ => Err(format!(
            "The SSO session associated with profile {profile} has expired or is otherwise invalid: {relogin}"
        )),
    }
}

/// The cached token of an `sso_session` login, renewed as the SDK's SSO token provider
/// does when it expires within five minutes: the cached `refreshToken`, `clientId` and
/// `clientSecret` (while `registrationExpiresAt` is ahead) go to SSO-OIDC `CreateToken`
/// and the new token is written back to `file`. A token that cannot be renewed is used
/// while it is still valid; after that, `aws sso login` is asked for.
async fn session_token(
    config: &AwsConfig,
    client: &reqwest::Client,
    file: &Path,
    profile: &str,
    region: &str,
) -> Result<String, String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return sso_token(file, profile);
    };
    let Ok(Value::Object(mut cache)) = serde_json::from_str::<Value>(&text) else {
        return sso_token(file, profile);
    };
    let field = |k: &str| {
        cache
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let expires = field("expiresAt").as_deref().and_then(parse_time);
    if let (Some(token), Some(expires)) = (field("accessToken"), expires)
        && Utc::now() + EXPIRY_MARGIN < expires
    {
        return Ok(token);
    }
    let registered = field("registrationExpiresAt")
        .as_deref()
        .and_then(parse_time)
        .is_some_and(|t| t > Utc::now());
    let (Some(refresh), Some(id), Some(secret), true) = (
        field("refreshToken"),
        field("clientId"),
        field("clientSecret"),
        registered,
    ) else {
        return sso_token(file, profile);
    };
    let url = endpoint(
        config,
        &format!("https://oidc.{region}.amazonaws.com/token"),
    );
    let body = serde_json::json!({
        "clientId": id,
        "clientSecret": secret,
        "refreshToken": refresh,
        "grantType": "refresh_token",
    });
    let answer = send(
        client.post(url).json(&body).timeout(SERVICE_TIMEOUT),
        "SSO-OIDC CreateToken",
    )
    .await
    .and_then(|text| json_of(&text, "SSO-OIDC CreateToken"));
    let answer = match answer {
        Ok(answer) => answer,
        Err(why) => {
            return sso_token(file, profile)
                .map_err(|expired| format!("{expired} (renewing it failed: {why})"));
        }
    };
    let (Some(token), Some(seconds)) = (
        answer.get("accessToken").and_then(Value::as_str),
        answer.get("expiresIn").and_then(Value::as_i64),
    ) else {
        return sso_token(file, profile);
    };
    let expires_at = Utc::now() + chrono::TimeDelta::seconds(seconds);
    cache.insert("accessToken".into(), Value::String(token.to_string()));
    cache.insert(
        "expiresAt".into(),
        Value::String(expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
    );
    if let Some(refresh) = answer.get("refreshToken").and_then(Value::as_str) {
        cache.insert("refreshToken".into(), Value::String(refresh.to_string()));
    }
    // As the SDK does, a cache that cannot be written is no reason to fail: the new token
    // is used for this run all the same.
    if let Ok(text) = serde_json::to_string_pretty(&Value::Object(cache)) {
        let _ = std::fs::write(file, text);
    }
    Ok(token.to_string())
}

fn sha1_hex(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

// ---- credential_process ------------------------------------------------------------------

/// Runs the profile's `credential_process` (through the shell) and reads its JSON.
async fn credential_process(command: &str) -> Result<Temporary, String> {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PROCESS_TIMEOUT, child)
        .await
        .map_err(|_| format!("credential_process `{command}` did not finish in time"))?
        .map_err(|e| format!("credential_process `{command}` could not run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "credential_process `{command}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| format!("credential_process `{command}` did not print JSON"))?;
    if v.get("Version").and_then(Value::as_u64) != Some(1) {
        return Err(format!(
            "credential_process `{command}` printed an unsupported Version (only 1 is)"
        ));
    }
    from_json(
        &v,
        [
            "AccessKeyId",
            "SecretAccessKey",
            "SessionToken",
            "Expiration",
        ],
        "credential_process",
    )
}

// ---- web identity ----------------------------------------------------------------------

/// The web identity token of `AWS_WEB_IDENTITY_TOKEN_FILE` traded at STS for the
/// credentials of `AWS_ROLE_ARN`.
async fn web_identity(config: &AwsConfig, client: &reqwest::Client) -> Result<Temporary, String> {
    let request = WebIdentity {
        token_file: config.var("AWS_WEB_IDENTITY_TOKEN_FILE").unwrap_or(""),
        role_arn: config.var("AWS_ROLE_ARN").unwrap_or(""),
        session_name: config.var("AWS_ROLE_SESSION_NAME"),
        region: config
            .var("AWS_REGION")
            .or_else(|| config.var("AWS_DEFAULT_REGION"))
            .map(str::to_string)
            .or_else(|| config.config_value("region")),
    };
    assume_role_with_web_identity(config, client, &request).await
}

/// What `AssumeRoleWithWebIdentity` needs.
struct WebIdentity<'a> {
    token_file: &'a str,
    role_arn: &'a str,
    session_name: Option<&'a str>,
    /// The STS region (`us-east-1` when `None`).
    region: Option<String>,
}

/// Trades a web identity token at STS `AssumeRoleWithWebIdentity` (an unsigned call).
async fn assume_role_with_web_identity(
    config: &AwsConfig,
    client: &reqwest::Client,
    request: &WebIdentity<'_>,
) -> Result<Temporary, String> {
    let file = request.token_file;
    let token = std::fs::read_to_string(file)
        .map_err(|e| format!("Could not read the web identity token {file}: {e}"))?;
    let session_name = request
        .session_name
        .map(str::to_string)
        .unwrap_or_else(|| format!("aws-sdk-js-session-{}", Utc::now().timestamp_millis()));
    let region = request.region.as_deref().unwrap_or("us-east-1");
    let url = endpoint(config, &format!("https://sts.{region}.amazonaws.com/"));
    let form = [
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", request.role_arn),
        ("RoleSessionName", session_name.as_str()),
        ("WebIdentityToken", token.trim()),
    ];
    let text = send(
        client.post(url).form(&form).timeout(SERVICE_TIMEOUT),
        "STS AssumeRoleWithWebIdentity",
    )
    .await?;
    sts_credentials(&text, "STS AssumeRoleWithWebIdentity")
}

/// The `<Credentials>` of an STS answer.
fn sts_credentials(xml: &str, what: &str) -> Result<Temporary, String> {
    let tag = |name: &str| xml_text(xml, name);
    let (Some(id), Some(secret)) = (tag("AccessKeyId"), tag("SecretAccessKey")) else {
        return Err(format!("{what} returned no credentials"));
    };
    Ok(Temporary {
        credentials: Credentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: tag("SessionToken"),
        },
        expires: tag("Expiration").as_deref().and_then(parse_time),
    })
}

/// The text of the first `<name>…</name>` element.
fn xml_text(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))? + start;
    let text = xml[start..end].trim();
    (!text.is_empty()).then(|| {
        text.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&")
    })
}

// ---- container -------------------------------------------------------------------------

/// The task role's credentials from the container credentials endpoint.
async fn container(config: &AwsConfig, client: &reqwest::Client) -> Result<Temporary, String> {
    let url = match (
        config.var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        config.var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(relative), _) => endpoint(config, &format!("{CONTAINER_HOST}{relative}")),
        (None, Some(full)) => full.to_string(),
        (None, None) => return Err("No container credentials URI is set".into()),
    };
    let token = match (
        config.var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
        config.var("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    ) {
        (Some(file), _) => Some(
            std::fs::read_to_string(file)
                .map_err(|e| {
                    format!("Could not read the container authorization token {file}: {e}")
                })?
                .trim()
                .to_string(),
        ),
        (None, token) => token.map(str::to_string),
    };
    let mut request = client.get(&url).timeout(METADATA_TIMEOUT);
    if let Some(token) = token {
        request = request.header("authorization", token);
    }
    let text = send(request, "The container credentials request").await?;
    let body = json_of(&text, "The container credentials endpoint")?;
    from_json(
        &body,
        ["AccessKeyId", "SecretAccessKey", "Token", "Expiration"],
        "The container credentials endpoint",
    )
}

// ---- instance metadata -----------------------------------------------------------------

/// The instance role's credentials from the EC2 instance metadata service.
async fn imds(config: &AwsConfig, client: &reqwest::Client) -> Result<Temporary, String> {
    let base = config
        .var("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        .unwrap_or(IMDS_DEFAULT)
        .trim_end_matches('/')
        .to_string();
    let unreachable = |e: String| {
        format!(
            "{} (the instance metadata service at {base} was the last source tried)",
            config.no_credentials_message_with(&e)
        )
    };
    let token_response = client
        .put(format!("{base}/latest/api/token"))
        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
        .timeout(METADATA_TIMEOUT)
        .send()
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let token = match token_response.status().as_u16() {
        200..=299 => Some(token_response.text().await.unwrap_or_default()),
        // IMDSv1 only.
        403..=405 => None,
        status => return Err(unreachable(format!("token request answered {status}"))),
    };
    let get = |path: String| {
        let mut request = client
            .get(format!("{base}{path}"))
            .timeout(METADATA_TIMEOUT);
        if let Some(token) = &token {
            request = request.header("x-aws-ec2-metadata-token", token.trim());
        }
        request
    };
    let roles = send(
        get("/latest/meta-data/iam/security-credentials/".into()),
        "The instance metadata role request",
    )
    .await
    .map_err(unreachable)?;
    let Some(role) = roles.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Err(unreachable("the instance has no IAM role".into()));
    };
    let text = send(
        get(format!("/latest/meta-data/iam/security-credentials/{role}")),
        "The instance metadata credentials request",
    )
    .await
    .map_err(unreachable)?;
    let body = json_of(&text, "The instance metadata service")?;
    if let Some(code) = body.get("Code").and_then(Value::as_str)
        && code != "Success"
    {
        return Err(unreachable(format!("role {role} answered {code}")));
    }
    from_json(
        &body,
        ["AccessKeyId", "SecretAccessKey", "Token", "Expiration"],
        "The instance metadata service",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: &[(&str, &str)], config_file: &str) -> AwsConfig {
        AwsConfig {
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            config_file: Some(config_file.to_string()),
            ..AwsConfig::default()
        }
    }

    #[test]
    fn sources_are_picked_in_the_sdk_order() {
        let pick = |env: &[(&str, &str)], file: &str| pick_source(&config(env, file)).map(|p| p.1);
        let sso = "[profile dev]\nsso_session = corp\ncredential_process = x\n";
        assert_eq!(pick(&[("AWS_PROFILE", "dev")], sso), Some(Source::Sso));
        let process = "[profile dev]\ncredential_process = print-creds\n";
        assert_eq!(
            pick(
                &[
                    ("AWS_PROFILE", "dev"),
                    ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
                    ("AWS_ROLE_ARN", "arn")
                ],
                process
            ),
            Some(Source::Process("print-creds".into()))
        );
        let web = [
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/t"),
            ("AWS_ROLE_ARN", "arn"),
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://x"),
        ];
        assert_eq!(pick(&web, ""), Some(Source::WebIdentity));
        assert_eq!(pick(&web[2..], ""), Some(Source::Container));
        assert_eq!(pick(&[], ""), Some(Source::Imds));
        assert_eq!(pick(&[("AWS_EC2_METADATA_DISABLED", "TRUE")], ""), None);
        assert_eq!(
            pick(&[("AWS_EC2_METADATA_DISABLED", "false")], ""),
            Some(Source::Imds)
        );
    }

    #[test]
    fn sso_cache_files_are_named_by_a_hex_sha1() {
        assert_eq!(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    }

    #[test]
    fn sts_answers_are_read_from_their_xml() {
        let xml = "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s&amp;k</SecretAccessKey><SessionToken>tok</SessionToken><Expiration>2030-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
        assert_eq!(xml_text(xml, "AccessKeyId").as_deref(), Some("ASIA1"));
        assert_eq!(xml_text(xml, "SecretAccessKey").as_deref(), Some("s&k"));
        assert_eq!(xml_text(xml, "Missing"), None);
    }

    #[test]
    fn expired_or_missing_sso_tokens_ask_for_a_new_login() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.json");
        let err = sso_token(&file, "dev").unwrap_err();
        assert!(err.contains("aws sso login --profile dev"), "{err}");
        std::fs::write(
            &file,
            r#"{"accessToken":"a","expiresAt":"2000-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        let err = sso_token(&file, "dev").unwrap_err();
        assert!(err.contains("has expired"), "{err}");
        std::fs::write(
            &file,
            r#"{"accessToken":"a","expiresAt":"2999-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!(sso_token(&file, "dev").unwrap(), "a");
    }
}
