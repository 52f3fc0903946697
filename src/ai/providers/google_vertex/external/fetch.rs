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
    crate::ai::providers::wire::send_for_text(
        request.timeout(std::time::Duration::from_secs(30)),
        what,
    )
    .await
}
