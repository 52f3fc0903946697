//! Google Vertex AI (`google-vertex`): Gemini models through Google Cloud.
//!
//! The body and the stream are the Gemini API's (see `google`). What differs is where
//! the request goes and how it is authorised, as pi does it through Google's SDK:
//! - an API key (the provider key, else `GOOGLE_CLOUD_API_KEY`) is sent as
//!   `x-goog-api-key` to `https://aiplatform.googleapis.com/v1/publishers/google/models/
//!   {id}:streamGenerateContent?alt=sse`;
//! - otherwise application-default credentials give an OAuth access token (`Authorization:
//!   Bearer`) and the path is prefixed with `projects/{GOOGLE_CLOUD_PROJECT or
//!   GCLOUD_PROJECT}/locations/{GOOGLE_CLOUD_LOCATION}` on that location's host (see
//!   `adc` for where the credentials come from);
//! - a model `baseUrl` without `{location}` replaces the host (and the `v1` when it
//!   names a version) and drops the project prefix.

pub mod adc;
pub mod external;
pub mod metadata;

use serde_json::Value;

use super::StreamOptions;
use super::google;
use super::wire::HttpRequest;
use crate::ai::message::Context;
use crate::ai::model::Model;

const API_VERSION: &str = "v1";
/// pi's marker for "use application-default credentials".
const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// How one request is authorised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VertexAuth {
    /// An API key (Vertex express mode).
    ApiKey(String),
    /// An OAuth access token from application-default credentials, for a project.
    Token {
        token: String,
        project: String,
        location: String,
        /// The credentials' quota project, sent as `x-goog-user-project`.
        quota_project: Option<String>,
    },
}

/// The API key to use, if any: the provider key unless it is a placeholder such as
/// `<authenticated>` or pi's credentials marker, else `GOOGLE_CLOUD_API_KEY`.
pub fn api_key(options: &StreamOptions) -> Option<String> {
    let usable = |k: &str| {
        let k = k.trim();
        let placeholder = k.starts_with('<') && k.ends_with('>') && k.len() > 2;
        (!k.is_empty() && k != CREDENTIALS_MARKER && !placeholder).then(|| k.to_string())
    };
    options
        .api_key
        .as_ref()
        .and_then(|k| usable(k.expose()))
        .or_else(|| {
            std::env::var("GOOGLE_CLOUD_API_KEY")
                .ok()
                .and_then(|k| usable(&k))
        })
}

/// Resolves the credentials for a request: the API key, or an access token from
/// application-default credentials (fetched, or reused while it is valid).
pub async fn resolve_auth(
    options: &StreamOptions,
    client: &reqwest::Client,
) -> Result<VertexAuth, String> {
    if let Some(key) = api_key(options) {
        return Ok(VertexAuth::ApiKey(key));
    }
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let project = env("GOOGLE_CLOUD_PROJECT")
        .or_else(|| env("GCLOUD_PROJECT"))
        .ok_or("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options.")?;
    let location = env("GOOGLE_CLOUD_LOCATION").ok_or(
        "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options.",
    )?;
    let token = adc::access_token(client).await?;
    Ok(VertexAuth::Token {
        token: token.access_token,
        project,
        location,
        quota_project: token.quota_project,
    })
}

/// Builds the request pi would send, with credentials from [`resolve_auth`].
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    auth: &VertexAuth,
) -> Result<HttpRequest, String> {
    let mut headers = Vec::new();
    match auth {
        VertexAuth::ApiKey(key) => headers.push(("x-goog-api-key".to_string(), key.clone())),
        VertexAuth::Token {
            token,
            quota_project,
            ..
        } => {
            headers.push(("authorization".to_string(), format!("Bearer {token}")));
            if let Some(q) = quota_project {
                headers.push(("x-goog-user-project".to_string(), q.clone()));
            }
        }
    }
    Ok(HttpRequest {
        url: url(model, auth),
        headers,
        body: google::build_body_for(model, context, options, true),
    })
}

/// The streaming URL for `model` (see the module docs).
pub fn url(model: &Model, auth: &VertexAuth) -> String {
    let custom = Some(model.base_url.trim())
        .filter(|b| !b.is_empty() && !b.contains("{location}"))
        .map(|b| b.trim_end_matches('/').to_string());
    let mut parts = Vec::new();
    match (&custom, auth) {
        (Some(base), _) => {
            parts.push(base.clone());
            if !names_api_version(base) {
                parts.push(API_VERSION.to_string());
            }
        }
        (None, VertexAuth::ApiKey(_)) => {
            parts.push("https://aiplatform.googleapis.com".to_string());
            parts.push(API_VERSION.to_string());
        }
        (
            None,
            VertexAuth::Token {
                project, location, ..
            },
        ) => {
            parts.push(location_host(location));
            parts.push(API_VERSION.to_string());
            parts.push(format!("projects/{project}/locations/{location}"));
        }
    }
    parts.push(format!(
        "publishers/google/models/{}:streamGenerateContent?alt=sse",
        model.id
    ));
    parts.join("/")
}

/// The regional host for a location (`global` and multi-regions have their own).
fn location_host(location: &str) -> String {
    match location {
        "global" => "https://aiplatform.googleapis.com".to_string(),
        "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com"),
        other => format!("https://{other}-aiplatform.googleapis.com"),
    }
}

/// Whether a URL's path has a version segment such as `v1` or `v1beta1`.
fn names_api_version(base: &str) -> bool {
    let path = match reqwest::Url::parse(base) {
        Ok(url) => url.path().to_string(),
        Err(_) => base.to_string(),
    };
    path.split('/').any(|seg| {
        let Some(rest) = seg.strip_prefix('v') else {
            return false;
        };
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        let tail = &rest[digits..];
        tail.is_empty()
            || tail
                .strip_prefix("beta")
                .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
    })
}

/// The error for a failed status as pi shows it: Google's JSON error body, compact.
pub fn error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!("{status} status code (no body)");
    }
    match serde_json::from_str::<Value>(body) {
        Ok(v) => v.to_string(),
        Err(_) => body.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::auth::ApiKey;
    use crate::ai::model::{Api, InputKind};

    fn model(base_url: &str) -> Model {
        Model {
            id: "gemini-2.5-pro".into(),
            name: "Gemini".into(),
            api: Api::GoogleVertex,
            provider: "google-vertex".into(),
            base_url: base_url.into(),
            reasoning: true,
            thinking_level_map: None,
            input: vec![InputKind::Text],
            cost: Default::default(),
            context_window: 1,
            max_tokens: 1,
            headers: Default::default(),
            compat: None,
            extras: Default::default(),
        }
    }

    fn token(location: &str) -> VertexAuth {
        VertexAuth::Token {
            token: "t".into(),
            project: "proj".into(),
            location: location.into(),
            quota_project: None,
        }
    }

    #[test]
    fn urls_follow_the_sdk_rules() {
        let default = model("https://{location}-aiplatform.googleapis.com");
        assert_eq!(
            url(&default, &VertexAuth::ApiKey("k".into())),
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(&default, &token("us-central1")),
            "https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert!(
            url(&default, &token("global")).starts_with(
                "https://aiplatform.googleapis.com/v1/projects/proj/locations/global/"
            )
        );
        assert!(url(&default, &token("eu")).starts_with(
            "https://aiplatform.eu.rep.googleapis.com/v1/projects/proj/locations/eu/"
        ));
        assert_eq!(
            url(&model("http://127.0.0.1:9/"), &token("x")),
            "http://127.0.0.1:9/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url(
                &model("http://proxy/api/v1beta1"),
                &VertexAuth::ApiKey("k".into())
            ),
            "http://proxy/api/v1beta1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn placeholder_keys_mean_application_default_credentials() {
        for key in ["<authenticated>", "gcp-vertex-credentials", "  "] {
            let options = StreamOptions {
                api_key: Some(ApiKey::new(key)),
                ..StreamOptions::default()
            };
            if std::env::var_os("GOOGLE_CLOUD_API_KEY").is_none() {
                assert_eq!(api_key(&options), None, "{key}");
            }
        }
        let options = StreamOptions {
            api_key: Some(ApiKey::new("AIza-real")),
            ..StreamOptions::default()
        };
        assert_eq!(api_key(&options).as_deref(), Some("AIza-real"));
    }
}
