//! What a per-API module hands the driver: the [`HttpRequest`] to send and an
//! [`SseDecoder`] for the response body. Shared by the driver and every API module, and
//! depending on neither.

use serde_json::Value;

use super::output::Output;
use crate::ai::sse::{SseEvent, SseParser};

/// A request ready to send: POST `url` with `headers` and a JSON `body`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl HttpRequest {
    /// Sets a header, replacing one with the same (case-insensitive) name.
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Turns one API's SSE events into changes of an [`Output`].
pub trait SseDecoder: Send {
    /// Handles one event; an `Err` ends the stream with that message.
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Output) -> Result<(), String>;
    /// The body ended: close open blocks, check the response was complete.
    fn finish(&mut self, out: &mut Output) -> Result<(), String>;
}

/// Feeds a whole body (or one chunk of it) to a decoder; stops at the first error.
pub fn decode_chunk(
    parser: &mut SseParser,
    decoder: &mut dyn SseDecoder,
    chunk: &[u8],
    out: &mut Output,
) -> Result<(), String> {
    let mut result = Ok(());
    parser.feed(chunk, |event| {
        if result.is_ok() {
            result = decoder.on_event(event, out);
        }
    });
    result
}

/// Sends a small request of a credential flow (token exchanges, metadata services) and
/// returns the answer's text; a failure to send or a status other than 2xx is an error
/// naming `what`, with the answer's text.
pub async fn send_for_text(request: reqwest::RequestBuilder, what: &str) -> Result<String, String> {
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
