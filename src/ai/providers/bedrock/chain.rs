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
    crate::ai::providers::wire::send_for_text(request, what).await
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

// ---- role profiles ---------------------------------------------------------------------

mod roles {
    //! Profiles that assume a role, as the AWS SDK's shared-config provider reads them:
    //!
    //! - `role_arn` with `source_profile = NAME`: the credentials of profile `NAME` (its keys,
    //!   or its own role, recursively, or its web identity, `credential_process` or SSO
    //!   login) sign an STS `AssumeRole` call; a profile met twice on the way is a cycle and
    //!   an error;
    //! - `role_arn` with `credential_source = Environment | Ec2InstanceMetadata |
    //!   EcsContainer`: the environment keys, the instance role or the container role sign
    //!   it;
    //! - `external_id`, `role_session_name` (default `aws-sdk-js-<ms>`) and
    //!   `duration_seconds` (default 3600) go with the call; `mfa_serial` is refused, since
    //!   pi has no way to ask for a code;
    //! - `web_identity_token_file` with `role_arn`: the token traded at STS
    //!   `AssumeRoleWithWebIdentity`.
    //!
    //! The STS region is the profile's `region`, else `AWS_REGION` / `AWS_DEFAULT_REGION`,
    //! else `us-east-1`.

    use std::future::Future;
    use std::pin::Pin;

    use chrono::Utc;

    use super::super::super::sigv4::{self, Credentials, SigningInput};
    use super::{
        AwsConfig, SERVICE_TIMEOUT, Temporary, WebIdentity, assume_role_with_web_identity,
        container, credential_process, endpoint, imds, send, sso, sts_credentials,
    };

    /// A future the recursion through source profiles can return.
    type Fetch<'a> = Pin<Box<dyn Future<Output = Result<Temporary, String>> + Send + 'a>>;

    /// The credentials of the role the profile names, assumed with its source's credentials.
    /// `visited` holds the profiles already on the way (empty for the first).
    pub(super) fn assume_role<'a>(
        config: &'a AwsConfig,
        client: &'a reqwest::Client,
        mut visited: Vec<String>,
    ) -> Fetch<'a> {
        Box::pin(async move {
            let profile = config.profile_name().to_string();
            visited.push(profile.clone());
            if config.profile_value("mfa_serial").is_some() {
                return Err(format!(
                    "Profile {profile} requires multi-factor authentication (mfa_serial), which pi cannot ask for: use a profile without mfa_serial, or run `aws sts assume-role` yourself and export its keys"
                ));
            }
            let role_arn = config
                .profile_value("role_arn")
                .ok_or_else(|| format!("Profile {profile} has no role_arn"))?;
            let source = source_credentials(config, client, &profile, visited).await?;
            call_assume_role(config, client, &profile, &role_arn, &source).await
        })
    }

    /// The credentials that sign the profile's `AssumeRole`.
    async fn source_credentials(
        config: &AwsConfig,
        client: &reqwest::Client,
        profile: &str,
        visited: Vec<String>,
    ) -> Result<Credentials, String> {
        if let Some(source) = config.profile_value("source_profile") {
            // A profile may name itself when it holds the keys.
            if source == profile
                && let Some(keys) = config.profile_keys()
            {
                return Ok(keys);
            }
            if visited.contains(&source) {
                let chain = [visited.as_slice(), std::slice::from_ref(&source)].concat();
                return Err(format!(
                    "Profile {profile}: the source_profile chain has a cycle ({})",
                    chain.join(" -> ")
                ));
            }
            let source_config = config.with_profile(&source);
            return profile_credentials(&source_config, client, visited)
                .await
                .map(|t| t.credentials);
        }
        let named = config
            .profile_value("credential_source")
            .unwrap_or_default();
        match named.as_str() {
            "Environment" => match (
                config.var("AWS_ACCESS_KEY_ID"),
                config.var("AWS_SECRET_ACCESS_KEY"),
            ) {
                (Some(id), Some(secret)) => Ok(Credentials {
                    access_key_id: id.to_string(),
                    secret_access_key: secret.to_string(),
                    session_token: config.var("AWS_SESSION_TOKEN").map(str::to_string),
                }),
                _ => Err(format!(
                    "Profile {profile} takes its credential_source from the environment, but AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"
                )),
            },
            "Ec2InstanceMetadata" => imds(config, client).await.map(|t| t.credentials),
            "EcsContainer" => container(config, client).await.map(|t| t.credentials),
            other => Err(format!(
                "Profile {profile} has an unsupported credential_source {other:?} (Environment, Ec2InstanceMetadata or EcsContainer)"
            )),
        }
    }

    /// The credentials of a source profile, in the order the SDK tries them: its keys, its
    /// role, its web identity, its `credential_process`, its SSO login.
    fn profile_credentials<'a>(
        config: &'a AwsConfig,
        client: &'a reqwest::Client,
        visited: Vec<String>,
    ) -> Fetch<'a> {
        Box::pin(async move {
            if let Some(keys) = config.profile_keys() {
                return Ok(Temporary {
                    credentials: keys,
                    expires: None,
                });
            }
            if config.is_role_profile() {
                return assume_role(config, client, visited).await;
            }
            if config.profile_value("web_identity_token_file").is_some() {
                return profile_web_identity(config, client).await;
            }
            if let Some(command) = config.profile_value("credential_process") {
                return credential_process(&command).await;
            }
            if config.is_sso_profile() {
                return sso(config, client).await;
            }
            Err(format!(
                "Source profile {} has no credentials (keys, role_arn, web_identity_token_file, credential_process or SSO)",
                config.profile_name()
            ))
        })
    }

    /// The profile's `web_identity_token_file` traded at STS for its `role_arn`.
    pub(super) async fn profile_web_identity(
        config: &AwsConfig,
        client: &reqwest::Client,
    ) -> Result<Temporary, String> {
        let profile = config.profile_name();
        let (Some(token_file), Some(role_arn)) = (
            config.profile_value("web_identity_token_file"),
            config.profile_value("role_arn"),
        ) else {
            return Err(format!(
                "Profile {profile} needs both web_identity_token_file and role_arn"
            ));
        };
        let session_name = config.profile_value("role_session_name");
        let request = WebIdentity {
            token_file: &token_file,
            role_arn: &role_arn,
            session_name: session_name.as_deref(),
            region: Some(sts_region(config)),
        };
        assume_role_with_web_identity(config, client, &request).await
    }

    /// The region STS is asked in for the profile.
    fn sts_region(config: &AwsConfig) -> String {
        config
            .profile_value("region")
            .or_else(|| config.var("AWS_REGION").map(str::to_string))
            .or_else(|| config.var("AWS_DEFAULT_REGION").map(str::to_string))
            .unwrap_or_else(|| "us-east-1".to_string())
    }

    /// STS `AssumeRole` for `role_arn`, signed (SigV4, service `sts`) with `source`.
    async fn call_assume_role(
        config: &AwsConfig,
        client: &reqwest::Client,
        profile: &str,
        role_arn: &str,
        source: &Credentials,
    ) -> Result<Temporary, String> {
        let session_name = config
            .profile_value("role_session_name")
            .unwrap_or_else(|| format!("aws-sdk-js-{}", Utc::now().timestamp_millis()));
        let duration = config
            .profile_value("duration_seconds")
            .unwrap_or_else(|| "3600".to_string());
        if duration.parse::<u32>().is_err() {
            return Err(format!(
                "Profile {profile} has a duration_seconds that is not a number: {duration}"
            ));
        }
        let mut form = vec![
            ("Action", "AssumeRole".to_string()),
            ("Version", "2011-06-15".to_string()),
            ("RoleArn", role_arn.to_string()),
            ("RoleSessionName", session_name),
            ("DurationSeconds", duration),
        ];
        if let Some(external_id) = config.profile_value("external_id") {
            form.push(("ExternalId", external_id));
        }
        let body = form
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    sigv4::uri_encode(k, false),
                    sigv4::uri_encode(v, false)
                )
            })
            .collect::<Vec<_>>()
            .join("&");
        let region = sts_region(config);
        let url = endpoint(config, &format!("https://sts.{region}.amazonaws.com/"));
        let headers = signed_headers(&url, &region, &body, source)?;
        let mut request = client.post(&url).timeout(SERVICE_TIMEOUT).body(body);
        for (name, value) in headers {
            if name != "host" {
                request = request.header(name, value);
            }
        }
        let what = format!("STS AssumeRole for profile {profile}");
        let text = send(request, &what).await?;
        sts_credentials(&text, &what)
    }

    /// The headers of a signed form POST to `url` (with `host`, which the caller leaves to
    /// the HTTP client).
    fn signed_headers(
        url: &str,
        region: &str,
        body: &str,
        source: &Credentials,
    ) -> Result<Vec<(String, String)>, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("Bad STS URL {url}: {e}"))?;
        let host = match (parsed.host_str(), parsed.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => return Err(format!("Bad STS URL {url}: no host")),
        };
        let amz_date = Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
        let mut headers = vec![
            (
                "content-type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("host".to_string(), host),
            ("x-amz-date".to_string(), amz_date.clone()),
        ];
        if let Some(token) = &source.session_token {
            headers.push(("x-amz-security-token".to_string(), token.clone()));
        }
        let authorization = sigv4::authorization(
            source,
            &SigningInput {
                method: "POST",
                path: parsed.path(),
                query: parsed.query().unwrap_or(""),
                headers: &headers,
                body: body.as_bytes(),
                region,
                service: "sts",
                amz_date: &amz_date,
                double_encode_path: true,
            },
        );
        headers.push(("authorization".to_string(), authorization));
        Ok(headers)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn config(profile: &str, config_file: &str) -> AwsConfig {
            AwsConfig {
                env: [("AWS_PROFILE".to_string(), profile.to_string())].into(),
                config_file: Some(config_file.to_string()),
                ..AwsConfig::default()
            }
        }

        #[tokio::test]
        async fn a_source_profile_cycle_is_named_without_asking_sts() {
            let c = config(
                "a",
                "[profile a]\nrole_arn = arn:a\nsource_profile = b\n[profile b]\nrole_arn = arn:b\nsource_profile = a\n",
            );
            let err = assume_role(&c, &reqwest::Client::new(), Vec::new())
                .await
                .unwrap_err();
            assert!(err.contains("cycle (a -> b -> a)"), "{err}");
        }

        #[tokio::test]
        async fn mfa_profiles_and_unknown_credential_sources_are_refused() {
            let client = reqwest::Client::new();
            let c = config(
                "m",
                "[profile m]\nrole_arn = arn:m\nsource_profile = m\nmfa_serial = arn:mfa\naws_access_key_id = A\naws_secret_access_key = S\n",
            );
            let err = assume_role(&c, &client, Vec::new()).await.unwrap_err();
            assert!(err.contains("multi-factor"), "{err}");
            let c = config(
                "x",
                "[profile x]\nrole_arn = arn:x\ncredential_source = Moon\n",
            );
            let err = assume_role(&c, &client, Vec::new()).await.unwrap_err();
            assert!(
                err.contains("unsupported credential_source \"Moon\""),
                "{err}"
            );
        }

        #[test]
        fn assume_role_requests_are_signed_for_sts_with_the_session_token() {
            let source = Credentials {
                access_key_id: "AKIDSRC".into(),
                secret_access_key: "secret".into(),
                session_token: Some("tok".into()),
            };
            let headers = signed_headers(
                "http://127.0.0.1:9/sts.eu-west-1.amazonaws.com/",
                "eu-west-1",
                "a=b",
                &source,
            )
            .unwrap();
            let get = |k: &str| {
                headers
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.as_str())
            };
            assert_eq!(get("host"), Some("127.0.0.1:9"));
            assert_eq!(get("x-amz-security-token"), Some("tok"));
            let auth = get("authorization").unwrap();
            assert!(
                auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDSRC/"),
                "{auth}"
            );
            assert!(auth.contains("/eu-west-1/sts/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,"), "{auth}");
        }
    }
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
