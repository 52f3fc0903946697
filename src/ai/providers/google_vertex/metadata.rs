//! Access tokens from the metadata server of Google Cloud VMs (and Cloud Run, GKE, …),
//! the last place Google's auth library looks for application-default credentials.
//!
//! The server is `GCE_METADATA_IP`, else `GCE_METADATA_HOST`, else `169.254.169.254`
//! (a bare host gets `http://`), as `gcp-metadata` reads them; the token is
//! `GET /computeMetadata/v1/instance/service-accounts/default/token` with
//! `Metadata-Flavor: Google`, and an answer without that header is not the metadata
//! server's. Each request gives up after [`TIMEOUT`].

use std::time::Duration;

use serde_json::Value;

/// How long the metadata server may take to answer.
pub const TIMEOUT: Duration = Duration::from_secs(3);
const DEFAULT_HOST: &str = "169.254.169.254";

/// `…/computeMetadata/v1` of the metadata server `host` names (see the module docs).
pub fn base_url(host: Option<&str>) -> String {
    let host = host
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .unwrap_or(DEFAULT_HOST)
        .trim_end_matches('/');
    let with_scheme = if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    format!("{with_scheme}/computeMetadata/v1")
}

/// The metadata server of this process's environment.
fn base_from_env() -> String {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    base_url(
        var("GCE_METADATA_IP")
            .or_else(|| var("GCE_METADATA_HOST"))
            .as_deref(),
    )
}

/// The default service account's token and its lifetime in seconds.
pub async fn token(client: &reqwest::Client) -> Result<(String, u64), String> {
    token_at(client, &base_from_env()).await
}

/// [`token`] from the server at `base` (a `…/computeMetadata/v1` URL).
pub async fn token_at(client: &reqwest::Client, base: &str) -> Result<(String, u64), String> {
    let url = format!("{base}/instance/service-accounts/default/token");
    let response = client
        .get(&url)
        .header("Metadata-Flavor", "Google")
        .timeout(TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("the metadata server at {base} did not answer: {e}"))?;
    let flavor_ok = response
        .headers()
        .get("metadata-flavor")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "Google");
    if !flavor_ok {
        return Err(format!(
            "{url} answered without `Metadata-Flavor: Google`: not a metadata server"
        ));
    }
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "the metadata server refused a token ({}): {}",
            status.as_u16(),
            text.trim()
        ));
    }
    let body: Value = serde_json::from_str(&text)
        .map_err(|_| "the metadata server's token answer is not JSON".to_string())?;
    let token = body
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or("the metadata server's token answer has no access_token")?;
    let expires_in = body
        .get("expires_in")
        .and_then(Value::as_u64)
        .unwrap_or(3600);
    Ok((token.to_string(), expires_in))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_as_gcp_metadata_reads_it() {
        assert_eq!(base_url(None), "http://169.254.169.254/computeMetadata/v1");
        assert_eq!(
            base_url(Some("127.0.0.1:8080")),
            "http://127.0.0.1:8080/computeMetadata/v1"
        );
        assert_eq!(
            base_url(Some("https://meta.local/")),
            "https://meta.local/computeMetadata/v1"
        );
    }
}
