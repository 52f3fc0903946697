//! What the `external_account` sources share: reading a non-empty string field and
//! sending a request whose answer must be a success.

use serde_json::Value;

/// A non-empty string field of `v`.
pub(super) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Sends `request` (30 s at most) and returns the answer's text; a failure status is an
/// error naming `what`, with the answer.
pub(super) async fn send_text(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<String, String> {
    let response = request
        .timeout(std::time::Duration::from_secs(30))
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
