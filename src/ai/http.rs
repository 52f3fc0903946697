//! The one HTTP client of the process: model requests, summaries and OAuth token
//! refreshes all go through it, so they share one connection pool and one connect
//! timeout.
//!
//! It bounds only how long opening a connection may take. How long a model may stay
//! silent is a per-request setting (`retry.provider.timeoutMs`, see
//! [`crate::ai::retry::RetryPolicy::timeout_ms`]) enforced by the provider driver, because
//! a client-wide total timeout would cut long answers that are still streaming.

use std::sync::OnceLock;
use std::time::Duration;

/// Longest wait for a TCP (and TLS) connection to be set up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The shared client (cheap to clone: clones share the pool).
pub fn shared_client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                // Building fails only when the TLS backend cannot be set up; reqwest's
                // default client is the fallback then.
                .unwrap_or_default()
        })
        .clone()
}
