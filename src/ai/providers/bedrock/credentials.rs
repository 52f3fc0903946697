//! Where Bedrock requests go and how they are authorised: the environment and the AWS
//! shared config files, read the way the AWS SDK reads them for pi (see the parent
//! module docs for the order).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::super::sigv4::Credentials;

/// A snapshot of the settings that matter (tests build one by hand).
#[derive(Debug, Clone, Default)]
pub struct AwsConfig {
    /// The `AWS_*` environment variables that are set and not empty.
    pub env: BTreeMap<String, String>,
    /// `~/.aws/credentials` (or `AWS_SHARED_CREDENTIALS_FILE`) contents, if readable.
    pub credentials_file: Option<String>,
    /// `~/.aws/config` (or `AWS_CONFIG_FILE`) contents, if readable.
    pub config_file: Option<String>,
    /// The home folder (`~/.aws/sso/cache` is under it).
    pub home: PathBuf,
}

/// How to authorise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AwsAuth {
    /// A Bedrock API key.
    Bearer(String),
    SigV4(Credentials),
}

/// Where to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub endpoint: String,
    pub region: String,
}

const ENV_VARS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_BEDROCK_SKIP_AUTH",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    TEST_SERVER_ENV,
];

/// For tests only: the loopback server standing in for STS, SSO and container hosts
/// (see `chain`).
pub const TEST_SERVER_ENV: &str = "PI_RS_AWS_TEST_SERVER";

impl AwsConfig {
    /// Reads the process environment and the shared files.
    pub fn from_process() -> Self {
        let env: BTreeMap<String, String> = ENV_VARS
            .iter()
            .filter_map(|k| {
                let v = std::env::var(k).ok()?;
                (!v.is_empty()).then(|| (k.to_string(), v))
            })
            .collect();
        let home = dirs::home_dir().unwrap_or_default();
        let file = |var: &str, default: &str| {
            let path = env
                .get(var)
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".aws").join(default));
            std::fs::read_to_string(path).ok()
        };
        Self {
            credentials_file: file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            config_file: file("AWS_CONFIG_FILE", "config"),
            env,
            home,
        }
    }

    pub(super) fn var(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }

    pub(super) fn profile_name(&self) -> &str {
        self.var("AWS_PROFILE").unwrap_or("default")
    }

    /// A key of the profile: the credentials file first, then the config file.
    pub(super) fn profile_value(&self, key: &str) -> Option<String> {
        let name = self.profile_name();
        let from_credentials = self
            .credentials_file
            .as_deref()
            .and_then(|text| ini_value(text, name, key));
        from_credentials.or_else(|| self.config_value(key))
    }

    /// A key of the profile's section of the config file.
    pub(super) fn config_value(&self, key: &str) -> Option<String> {
        let name = self.profile_name();
        let section = if name == "default" {
            "default".to_string()
        } else {
            format!("profile {name}")
        };
        self.section_value(&section, key)
    }

    /// A key of a named section of the config file (`sso-session NAME`).
    pub(super) fn section_value(&self, section: &str, key: &str) -> Option<String> {
        self.config_file
            .as_deref()
            .and_then(|text| ini_value(text, section, key))
    }

    /// The endpoint and region for a model whose `baseUrl` is `base_url`.
    pub fn target(&self, base_url: &str) -> Result<Target, String> {
        let configured = self
            .var("AWS_REGION")
            .or_else(|| self.var("AWS_DEFAULT_REGION"))
            .map(str::to_string);
        let has_profile = self.var("AWS_PROFILE").is_some();
        let endpoint_region = standard_endpoint_region(base_url);
        let explicit = match &endpoint_region {
            None => !base_url.trim().is_empty(),
            Some(_) => configured.is_none() && !has_profile,
        };
        let region = match (configured, &endpoint_region) {
            (Some(r), _) => r,
            (None, Some(r)) if explicit => r.clone(),
            _ if !has_profile => "us-east-1".to_string(),
            _ => self.profile_value("region").ok_or_else(|| {
                format!(
                    "Region is missing: set AWS_REGION or a region for profile {}",
                    self.profile_name()
                )
            })?,
        };
        let endpoint = if explicit {
            base_url.trim().trim_end_matches('/').to_string()
        } else {
            let suffix = if region.starts_with("cn-") {
                "amazonaws.com.cn"
            } else {
                "amazonaws.com"
            };
            format!("https://bedrock-runtime.{region}.{suffix}")
        };
        Ok(Target { endpoint, region })
    }

    /// The credentials of the sources that need nothing fetched (dummy keys for
    /// `AWS_BEDROCK_SKIP_AUTH=1`, the bearer token, the environment keys, the profile's
    /// keys), or why there are none. [`super::chain::resolve`] goes on from here.
    pub fn auth(&self) -> Result<AwsAuth, String> {
        self.static_auth()
            .ok_or_else(|| self.no_credentials_message())
    }

    /// [`Self::auth`] without the error.
    pub(super) fn static_auth(&self) -> Option<AwsAuth> {
        let skip = self.var("AWS_BEDROCK_SKIP_AUTH") == Some("1");
        if skip {
            return Some(AwsAuth::SigV4(Credentials {
                access_key_id: "dummy-access-key".into(),
                secret_access_key: "dummy-secret-key".into(),
                session_token: None,
            }));
        }
        if let Some(token) = self.var("AWS_BEARER_TOKEN_BEDROCK") {
            return Some(AwsAuth::Bearer(token.to_string()));
        }
        if self.var("AWS_PROFILE").is_none()
            && let (Some(id), Some(secret)) = (
                self.var("AWS_ACCESS_KEY_ID"),
                self.var("AWS_SECRET_ACCESS_KEY"),
            )
        {
            return Some(AwsAuth::SigV4(Credentials {
                access_key_id: id.to_string(),
                secret_access_key: secret.to_string(),
                session_token: self.var("AWS_SESSION_TOKEN").map(str::to_string),
            }));
        }
        // An SSO profile's login, and a role profile's role, come before its keys in the
        // SDK's chain.
        if self.is_sso_profile() || self.is_role_profile() {
            return None;
        }
        self.profile_keys().map(AwsAuth::SigV4)
    }

    /// The profile's own keys (`aws_access_key_id`, `aws_secret_access_key`, optional
    /// `aws_session_token`).
    pub(super) fn profile_keys(&self) -> Option<Credentials> {
        match (
            self.profile_value("aws_access_key_id"),
            self.profile_value("aws_secret_access_key"),
        ) {
            (Some(id), Some(secret)) => Some(Credentials {
                access_key_id: id,
                secret_access_key: secret,
                session_token: self.profile_value("aws_session_token"),
            }),
            _ => None,
        }
    }

    /// Whether the profile logs in with SSO (`sso_session` or `sso_start_url`).
    pub(super) fn is_sso_profile(&self) -> bool {
        self.config_value("sso_start_url").is_some() || self.config_value("sso_session").is_some()
    }

    /// Whether the profile assumes a role: `role_arn` with `source_profile` or
    /// `credential_source`.
    pub(super) fn is_role_profile(&self) -> bool {
        self.profile_value("role_arn").is_some()
            && (self.profile_value("source_profile").is_some()
                || self.profile_value("credential_source").is_some())
    }

    /// The same settings read for profile `name` (how a `source_profile` is read).
    pub(super) fn with_profile(&self, name: &str) -> AwsConfig {
        let mut other = self.clone();
        other
            .env
            .insert("AWS_PROFILE".to_string(), name.to_string());
        other
    }

    /// The SDK's words when no source has credentials.
    pub(super) fn no_credentials_message(&self) -> String {
        self.no_credentials_message_with("no source of the chain has them")
    }

    /// [`Self::no_credentials_message`] with why the last source failed.
    pub(super) fn no_credentials_message_with(&self, why: &str) -> String {
        format!(
            "Could not load credentials from any providers ({why}): set AWS_BEARER_TOKEN_BEDROCK, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or credentials for profile {} in ~/.aws",
            self.profile_name()
        )
    }
}

/// The region of a standard `bedrock-runtime[-fips].<region>.amazonaws.com[.cn]` URL.
pub fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url.trim()).ok()?;
    let host = url.host_str()?.to_lowercase();
    let host = host
        .strip_suffix(".amazonaws.com.cn")
        .or_else(|| host.strip_suffix(".amazonaws.com"))?;
    let region = host
        .strip_prefix("bedrock-runtime-fips.")
        .or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let valid = !region.is_empty()
        && region
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    valid.then(|| region.to_string())
}

/// A value of an INI file: `key = value` in `[section]`.
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.split_whitespace().collect::<Vec<_>>().join(" ");
            continue;
        }
        if current == section
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: &[(&str, &str)]) -> AwsConfig {
        AwsConfig {
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..AwsConfig::default()
        }
    }

    #[test]
    fn the_region_and_endpoint_follow_pi() {
        let standard = "https://bedrock-runtime.us-east-1.amazonaws.com";
        let t = config(&[]).target(standard).unwrap();
        assert_eq!(
            (t.endpoint.as_str(), t.region.as_str()),
            (standard, "us-east-1")
        );
        let t = config(&[("AWS_REGION", "eu-west-1")])
            .target(standard)
            .unwrap();
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime.eu-west-1.amazonaws.com"
        );
        assert_eq!(t.region, "eu-west-1");
        let t = config(&[("AWS_REGION", "eu-west-1")])
            .target("http://127.0.0.1:9/")
            .unwrap();
        assert_eq!(
            (t.endpoint.as_str(), t.region.as_str()),
            ("http://127.0.0.1:9", "eu-west-1")
        );
        let t = config(&[]).target("http://proxy.local").unwrap();
        assert_eq!(t.region, "us-east-1");
        let mut profile = config(&[("AWS_PROFILE", "work")]);
        profile.config_file =
            Some("[default]\nregion = us-west-2\n[profile work]\nregion = ap-south-1\n".into());
        let t = profile.target(standard).unwrap();
        assert_eq!(t.region, "ap-south-1");
        assert_eq!(
            t.endpoint,
            "https://bedrock-runtime.ap-south-1.amazonaws.com"
        );
        assert_eq!(
            standard_endpoint_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com")
                .as_deref(),
            Some("us-gov-west-1")
        );
        assert_eq!(standard_endpoint_region("https://example.com"), None);
    }

    #[test]
    fn credentials_come_from_bearer_env_then_profile() {
        let bearer = config(&[
            ("AWS_BEARER_TOKEN_BEDROCK", "tok"),
            ("AWS_ACCESS_KEY_ID", "A"),
        ]);
        assert_eq!(bearer.auth().unwrap(), AwsAuth::Bearer("tok".into()));
        let env = config(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "SECRET"),
            ("AWS_SESSION_TOKEN", "SESSION"),
        ]);
        let AwsAuth::SigV4(c) = env.auth().unwrap() else {
            panic!("expected SigV4");
        };
        assert_eq!(c.session_token.as_deref(), Some("SESSION"));
        let mut profile = config(&[
            ("AWS_PROFILE", "work"),
            ("AWS_ACCESS_KEY_ID", "ignored"),
            ("AWS_SECRET_ACCESS_KEY", "ignored"),
        ]);
        profile.credentials_file =
            Some("[default]\naws_access_key_id = D\n\n[work]\naws_access_key_id = W\naws_secret_access_key = WS\n".into());
        let AwsAuth::SigV4(c) = profile.auth().unwrap() else {
            panic!("expected SigV4");
        };
        assert_eq!(
            (c.access_key_id.as_str(), c.secret_access_key.as_str()),
            ("W", "WS")
        );
        let err = config(&[]).auth().unwrap_err();
        assert!(err.contains("Could not load credentials"), "{err}");
        let skip = config(&[
            ("AWS_BEDROCK_SKIP_AUTH", "1"),
            ("AWS_BEARER_TOKEN_BEDROCK", "t"),
        ]);
        assert!(matches!(skip.auth().unwrap(), AwsAuth::SigV4(_)));
    }
}
