//! Retrying a model request that failed before its response started to stream.
//!
//! The provider layer retries what the official SDKs pi uses retry silently: HTTP 408,
//! 409, 429, 5xx and Anthropic's 529 "overloaded", and failures to connect. Delays grow
//! exponentially with jitter, unless the server says how long to wait (`retry-after-ms`,
//! `retry-after` in seconds or as an HTTP date, or a "retry in 5s" / `"retryDelay":
//! "30s"` hint in the error body). A server-requested wait longer than
//! [`RetryPolicy::max_delay_ms`] (unless that is 0) is not waited for: the request fails at once with a
//! message that says so. Every wait is announced through [`RetryNotice`] and can be cut
//! short by cancellation.
//!
//! A server that stays silent is bounded too: [`RetryPolicy::timeout_ms`] (pi's
//! `retry.provider.timeoutMs`, 600 s by default) is the longest wait for the response to
//! start (headers and the first body bytes) and, once it streams, between two chunks.
//! The provider driver enforces it; a silent start is retried here like a refused
//! connection, a stalled stream ends the answer with a "Request timed out" error.
//!
//! Not handled here: a connection that drops or stalls after the response started (the
//! partial message is returned as an error; the agent decides whether to run the turn
//! again, using [`is_retryable_error`]).

use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use tokio_util::sync::CancellationToken;

/// How many times and how long to retry a request that failed before streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further retry.
    pub base_delay_ms: u64,
    /// Upper bound of the computed (not server-requested) backoff.
    pub max_backoff_ms: u64,
    /// Longest server-requested wait we accept (pi's `retry.provider.maxRetryDelayMs`);
    /// 0 accepts any wait.
    pub max_delay_ms: u64,
    /// Longest silence accepted from the server: before the response starts (headers and
    /// first body bytes, per attempt) and between two chunks of a streaming body (pi's
    /// `retry.provider.timeoutMs`).
    pub timeout_ms: u64,
}

impl Default for RetryPolicy {
    /// The defaults of the OpenAI and Anthropic SDKs pi uses (2 retries, 0.5 s doubling up
    /// to 8 s, a 10 minute timeout) and pi's 60 s cap on server-requested delays.
    fn default() -> Self {
        Self {
            max_retries: 2,
            base_delay_ms: 500,
            max_backoff_ms: 8_000,
            max_delay_ms: 60_000,
            timeout_ms: DEFAULT_TIMEOUT_MS,
        }
    }
}

/// The SDKs' default request timeout, which pi keeps unless `retry.provider.timeoutMs` is set.
pub const DEFAULT_TIMEOUT_MS: u64 = 600_000;

impl RetryPolicy {
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// Exponential backoff for retry number `retry` (1-based), with ±10 % jitter.
    pub fn backoff_ms(&self, retry: u32) -> u64 {
        let exp = retry.saturating_sub(1).min(30);
        let raw = self
            .base_delay_ms
            .saturating_mul(1u64 << exp)
            .min(self.max_backoff_ms);
        let jitter: f64 = 0.9 + rand::random::<f64>() * 0.2;
        (raw as f64 * jitter).round() as u64
    }
}

/// Reported before each retry wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// The retry about to happen, 1-based.
    pub attempt: u32,
    pub max_attempts: u32,
    pub delay_ms: u64,
    /// Why the previous attempt failed.
    pub error: String,
}

/// Whether an HTTP status is worth retrying.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// The wait a server asked for, from headers (`retry-after-ms`, `retry-after`) or from
/// hints in the error body. `None` when the server said nothing.
pub fn server_requested_delay(headers: &reqwest::header::HeaderMap, body: &str) -> Option<u64> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(ms.round() as u64);
    }
    if let Some(value) = headers.get("retry-after").and_then(|v| v.to_str().ok()) {
        let value = value.trim();
        if let Ok(secs) = value.parse::<f64>()
            && secs.is_finite()
            && secs >= 0.0
        {
            return Some((secs * 1000.0).round() as u64);
        }
        if let Ok(when) = chrono::DateTime::parse_from_rfc2822(value) {
            let ms = when.timestamp_millis() - chrono::Utc::now().timestamp_millis();
            return Some(ms.max(0) as u64);
        }
    }
    delay_hint_in_text(body)
}

/// Parses "retry in 5.2s", "try again in 300ms", `"retryDelay": "30s"` and similar.
pub fn delay_hint_in_text(text: &str) -> Option<u64> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| {
            Regex::new(
                r#"(?i)(?:retry|try again)(?: after| in)?\s*(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)\b|"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s""#,
            )
            .ok()
        })
        .as_ref()?;
    let caps = re.captures(text)?;
    if let Some(secs) = caps.get(3) {
        let secs: f64 = secs.as_str().parse().ok()?;
        return Some((secs * 1000.0).round() as u64);
    }
    let amount: f64 = caps.get(1)?.as_str().parse().ok()?;
    let unit = caps.get(2)?.as_str().to_ascii_lowercase();
    let ms = if unit.starts_with("ms") || unit.starts_with("milli") {
        amount
    } else {
        amount * 1000.0
    };
    Some(ms.round() as u64)
}

/// Sleeps unless cancelled first; returns `false` when cancelled.
pub async fn sleep_cancellable(delay_ms: u64, cancel: &CancellationToken) -> bool {
    tokio::select! {
        _ = cancel.cancelled() => false,
        _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => true,
    }
}

/// Whether a final error message describes a transient failure worth running the turn
/// again for (pi's agent-level auto-retry set). Context overflow is not checked here:
/// callers test [`crate::ai::overflow::is_context_overflow`] first.
pub fn is_retryable_error(message: &str) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay",
        )
        .ok()
    })
    .as_ref()
    .is_some_and(|re| re.is_match(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = RetryPolicy::default();
        for (retry, nominal) in [
            (1, 500.0),
            (2, 1000.0),
            (3, 2000.0),
            (6, 8000.0),
            (40, 8000.0),
        ] {
            let d = p.backoff_ms(retry) as f64;
            assert!(
                d >= nominal * 0.9 - 1.0 && d <= nominal * 1.1 + 1.0,
                "{retry}: {d}"
            );
        }
    }

    #[test]
    fn server_delay_prefers_retry_after_ms_then_retry_after_then_body() {
        let mut h = HeaderMap::new();
        assert_eq!(server_requested_delay(&h, ""), None);
        assert_eq!(
            server_requested_delay(&h, "Please retry in 2.5s."),
            Some(2500)
        );
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(server_requested_delay(&h, "retry in 9s"), Some(3000));
        h.insert("retry-after-ms", HeaderValue::from_static("120"));
        assert_eq!(server_requested_delay(&h, ""), Some(120));
    }

    #[test]
    fn retry_after_http_date_is_converted_to_a_delay() {
        let mut h = HeaderMap::new();
        let when = chrono::Utc::now() + chrono::Duration::seconds(30);
        let text = when.to_rfc2822();
        h.insert(
            "retry-after",
            HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("0")),
        );
        let got = server_requested_delay(&h, "").unwrap_or(0);
        assert!((28_000..=30_000).contains(&got), "{got}");
    }

    #[test]
    fn body_hints_in_several_wordings_are_understood() {
        assert_eq!(delay_hint_in_text("Please try again in 300ms"), Some(300));
        assert_eq!(
            delay_hint_in_text(r#"{"error":{"details":[{"retryDelay": "30s"}]}}"#),
            Some(30_000)
        );
        assert_eq!(delay_hint_in_text("Your quota will reset after 5h"), None);
    }

    #[test]
    fn retryable_statuses() {
        let yes: Vec<u16> = [400, 401, 404, 408, 409, 429, 500, 503, 529]
            .into_iter()
            .filter(|s| is_retryable_status(*s))
            .collect();
        assert_eq!(yes, vec![408, 409, 429, 500, 503, 529]);
    }

    #[test]
    fn retryable_error_messages_match_pi() {
        for text in [
            "529 overloaded_error",
            "429 Too Many Requests",
            "Connection lost while streaming",
            "fetch failed",
            "Server requested a 120s retry delay",
            "request timed out",
        ] {
            assert!(is_retryable_error(text), "{text}");
        }
        for text in [
            "401 invalid x-api-key",
            "Request was aborted",
            "400 bad tool schema",
        ] {
            assert!(!is_retryable_error(text), "{text}");
        }
    }

    #[tokio::test]
    async fn cancellation_cuts_a_retry_wait_short() {
        let token = CancellationToken::new();
        let t2 = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            t2.cancel();
        });
        assert!(!sleep_cancellable(60_000, &token).await);
        assert!(sleep_cancellable(5, &CancellationToken::new()).await);
    }
}
