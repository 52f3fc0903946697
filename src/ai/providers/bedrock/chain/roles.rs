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
    AwsConfig, SERVICE_TIMEOUT, Temporary, WebIdentity, assume_role_with_web_identity, container,
    credential_process, endpoint, imds, send, sso, sts_credentials,
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
