//! The HTTP side shared by every API: send with retries, read the SSE body with
//! cancellation, feed a decoder, and turn every way of failing into one final
//! `StreamEvent::Error` that keeps the partial message.
//!
//! No wait is unbounded: each attempt must get its response headers and first body bytes
//! within `RetryPolicy::timeout_ms` (or it counts as a failed attempt and is retried like
//! a refused connection), and a streaming body must not go quiet for longer than that
//! (the answer then ends with a "Request timed out" error the agent may retry).
//! Cancellation wins over every wait at once.

use std::time::Duration;

use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use reqwest::header::HeaderMap;

use super::eventstream::EventStreamParser;
use super::output::Output;
use super::wire::{HttpRequest, SseDecoder, decode_chunk};
use super::{
    StreamOptions, anthropic, azure_openai_responses, bedrock, cloudflare, codex_websocket, google,
    google_vertex, mistral, openai_codex_responses, openai_completions, openai_responses,
};
use crate::ai::http::shared_client;
use crate::ai::message::{Context, StopReason, now_ms};
use crate::ai::model::{Api, Model};
use crate::ai::retry::{
    RetryNotice, is_retryable_status, server_requested_delay, sleep_cancellable,
};
use crate::ai::sse::{SseEvent, SseParser};
use crate::ai::stream::{EventStream, StreamEvent};

/// pi's message for a cancelled request.
pub(crate) const ABORTED_MESSAGE: &str = "Request was aborted";

/// How a response body is cut into events: SSE, or AWS's binary event stream whose
/// messages reach the decoder as events named by their `:event-type`.
enum Framing {
    Sse(SseParser),
    EventStream(EventStreamParser),
}

impl Framing {
    fn for_api(api: &Api) -> Self {
        match api {
            Api::BedrockConverseStream => Framing::EventStream(EventStreamParser::new()),
            _ => Framing::Sse(SseParser::new()),
        }
    }

    fn feed(
        &mut self,
        chunk: &[u8],
        decoder: &mut dyn SseDecoder,
        out: &mut Output,
    ) -> Result<(), String> {
        match self {
            Framing::Sse(parser) => decode_chunk(parser, decoder, chunk, out),
            Framing::EventStream(parser) => {
                for message in parser.feed(chunk).map_err(|e| e.to_string())? {
                    let payload = String::from_utf8_lossy(&message.payload);
                    let name = match message.header(":message-type") {
                        Some("exception") => format!(
                            "exception:{}",
                            message
                                .header(":exception-type")
                                .unwrap_or("UnknownException")
                        ),
                        Some("error") => {
                            return Err(format!(
                                "{}: {}",
                                message.header(":error-code").unwrap_or("Error"),
                                message.header(":error-message").unwrap_or("")
                            ));
                        }
                        _ => message.header(":event-type").unwrap_or("").to_string(),
                    };
                    decoder.on_event(
                        SseEvent {
                            event: &name,
                            data: &payload,
                        },
                        out,
                    )?;
                }
                Ok(())
            }
        }
    }

    fn finish(&mut self, decoder: &mut dyn SseDecoder, out: &mut Output) -> Result<(), String> {
        match self {
            Framing::Sse(parser) => {
                let mut result = Ok(());
                parser.finish(|event| {
                    if result.is_ok() {
                        result = decoder.on_event(event, out);
                    }
                });
                result?;
            }
            Framing::EventStream(parser) => parser.finish().map_err(|e| e.to_string())?,
        }
        decoder.finish(out)
    }
}

/// Credentials that take a network round trip (Vertex application-default credentials)
/// are fetched here, before the request is built.
async fn build(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, Failure> {
    let resolved;
    let model = if cloudflare::is_cloudflare(&model.provider) && model.base_url.contains('{') {
        let base_url = cloudflare::resolve_base_url(model, |name| options.env_var(name))
            .map_err(Failure::Error)?;
        resolved = Model {
            base_url,
            ..model.clone()
        };
        &resolved
    } else {
        model
    };
    let key = options.api_key.as_ref().map(|k| k.expose());
    let request = match &model.api {
        Api::GoogleVertex => {
            let client = options.client.clone().unwrap_or_else(shared_client);
            let auth = tokio::select! {
                biased;
                _ = options.cancel.cancelled() => return Err(Failure::Aborted),
                auth = google_vertex::resolve_auth(options, &client) => auth,
            }
            .map_err(Failure::Error)?;
            google_vertex::build_request(model, context, options, &auth)
        }
        Api::BedrockConverseStream => {
            let client = options.client.clone().unwrap_or_else(shared_client);
            tokio::select! {
                biased;
                _ = options.cancel.cancelled() => return Err(Failure::Aborted),
                request = bedrock::build_request(model, context, options, &client) => request,
            }
        }
        _ => build_sync(model, context, options),
    };
    let mut request = request.map_err(Failure::Error)?;
    cloudflare::gateway_auth(model, &mut request, key);
    for (k, v) in &model.headers {
        request.set_header(k, v);
    }
    for (k, v) in &options.headers {
        request.set_header(k, v);
    }
    cloudflare::gateway_auth_last(model, &mut request, key);
    // The client's identity goes last, only where no header above named one.
    for (k, v) in sdk_identity(&model.api) {
        if request.header(k).is_none() {
            request.set_header(k, v);
        }
    }
    Ok(request)
}

fn build_sync(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    match &model.api {
        Api::AnthropicMessages => anthropic::build_request(model, context, options),
        Api::OpenAiCompletions => openai_completions::build_request(model, context, options),
        Api::OpenAiResponses => openai_responses::build_request(model, context, options),
        Api::GoogleGenerativeAi => google::build_request(model, context, options),
        Api::MistralConversations => mistral::build_request(model, context, options),
        Api::AzureOpenAiResponses => azure_openai_responses::build_request(model, context, options),
        Api::OpenAiCodexResponses => openai_codex_responses::build_request(model, context, options),
        Api::BedrockConverseStream => {
            Err("Bedrock requests are built with their credentials".into())
        }
        Api::Other(name) => Err(format!(
            "The \"{name}\" API is not supported by pi-rs (model {}). Supported: {}.",
            model.full_id(),
            Api::SUPPORTED.join(", ")
        )),
        Api::GoogleVertex => Err("Vertex requests are built with their credentials".into()),
    }
}

/// The identity headers pi's requests carry: those of the official SDK pi uses for the
/// API (the versions pinned by pi 0.73.1), as captured from the reference pi. Some
/// endpoints treat clients by these; model, models.json and option headers (Copilot's,
/// Cloudflare's attribution) still win. The Codex request names pi itself (set by
/// `openai_codex_responses`); Bedrock's AWS SDK agent string describes the host's OS and
/// Node version, so no fixed value can equal it and none is sent.
pub(crate) fn sdk_identity(api: &Api) -> &'static [(&'static str, &'static str)] {
    match api {
        Api::AnthropicMessages => &[("User-Agent", "Anthropic/JS 0.91.1")],
        Api::OpenAiCompletions | Api::OpenAiResponses => &[("User-Agent", "OpenAI/JS 6.26.0")],
        Api::AzureOpenAiResponses => &[("User-Agent", "AzureOpenAI/JS 6.26.0")],
        Api::MistralConversations => &[("User-Agent", "mistral-client-typescript/2.7.0")],
        Api::GoogleGenerativeAi | Api::GoogleVertex => &[
            ("User-Agent", "google-genai-sdk/1.52.0 gl-node/v20.20.2"),
            (
                "x-goog-api-client",
                "google-genai-sdk/1.52.0 gl-node/v20.20.2",
            ),
        ],
        _ => &[],
    }
}

fn decoder_for(model: &Model, context: &Context, options: &StreamOptions) -> Box<dyn SseDecoder> {
    match &model.api {
        Api::AnthropicMessages => {
            let oauth = options
                .api_key
                .as_ref()
                .is_some_and(|k| anthropic::is_oauth_token(k.expose()));
            Box::new(anthropic::Decoder::new(context, oauth))
        }
        Api::OpenAiResponses | Api::AzureOpenAiResponses => {
            Box::new(openai_responses::Decoder::new())
        }
        Api::OpenAiCodexResponses => Box::new(openai_responses::Decoder::codex()),
        Api::BedrockConverseStream => Box::new(bedrock::Decoder::new()),
        Api::GoogleGenerativeAi | Api::GoogleVertex => Box::new(google::Decoder::new()),
        Api::MistralConversations => Box::new(mistral::Decoder::new()),
        Api::OpenAiCompletions | Api::Other(_) => Box::new(openai_completions::Decoder::new(model)),
    }
}

fn error_message(
    api: &Api,
    status: u16,
    headers: &reqwest::header::HeaderMap,
    body: &str,
) -> String {
    match api {
        Api::AnthropicMessages => anthropic::error_message(status, body),
        Api::GoogleGenerativeAi => google::error_message(status, body),
        Api::GoogleVertex => google_vertex::error_message(status, body),
        Api::BedrockConverseStream => {
            let error_type = headers
                .get("x-amzn-errortype")
                .and_then(|v| v.to_str().ok());
            bedrock::error_message(status, error_type, body)
        }
        Api::MistralConversations => mistral::error_message(status, body),
        Api::OpenAiCodexResponses => openai_codex_responses::error_message(status, body, now_ms()),
        Api::OpenAiCompletions
        | Api::OpenAiResponses
        | Api::AzureOpenAiResponses
        | Api::Other(_) => openai_completions::error_message(status, body),
    }
}

/// Streams one response of `model` to `context`. See the module docs for the contract.
/// An API an extension streams (pi's `registerProvider` with `streamSimple`) goes to it.
pub fn stream(model: &Model, context: &Context, options: StreamOptions) -> EventStream {
    if let Some(streamer) = super::external::get(model.api.as_str()) {
        return streamer.stream(model, context, options);
    }
    stream_builtin(model, context, options)
}

/// [`stream`] with pi-rs's own client for `model.api`, even when an extension serves it
/// (pi-ai's `streamAnthropic`, `streamOpenAIResponses`, … called from an extension).
pub fn stream_builtin(model: &Model, context: &Context, options: StreamOptions) -> EventStream {
    let (model, context) = (model.clone(), context.clone());
    let (tx, rx) = unbounded();
    // The work runs inside the returned stream (no spawn): it needs no runtime handle at
    // call time and stops when the consumer drops the stream.
    let work = stream::once(run(model, context, options, tx)).filter_map(|()| async { None });
    Box::pin(stream::select(work, rx))
}

enum Failure {
    Aborted,
    Error(String),
}

async fn run(
    model: Model,
    context: Context,
    options: StreamOptions,
    tx: UnboundedSender<StreamEvent>,
) {
    let mut out = Output::new(&model);
    let send = |out: &mut Output| {
        for event in out.take_events() {
            // A closed receiver means nobody listens any more; nothing to do.
            let _ = tx.unbounded_send(event);
        }
    };
    out.push_event(StreamEvent::Start);
    send(&mut out);
    let result = run_inner(&model, &context, &options, &mut out, &send).await;
    match result {
        Ok(()) => {
            let reason = out.message.stop_reason;
            let message = out.message.clone();
            out.push_event(StreamEvent::Done { reason, message });
        }
        Err(failure) => {
            out.settle_partial_tool_calls();
            let (reason, text) = match failure {
                Failure::Aborted => (StopReason::Aborted, ABORTED_MESSAGE.to_string()),
                Failure::Error(text) if options.cancel.is_cancelled() => {
                    let _ = text;
                    (StopReason::Aborted, ABORTED_MESSAGE.to_string())
                }
                Failure::Error(text) => (StopReason::Error, redact_key(text, &options)),
            };
            out.message.stop_reason = reason;
            out.message.error_message = Some(text);
            let error = out.message.clone();
            out.push_event(StreamEvent::Error { reason, error });
        }
    }
    send(&mut out);
}

async fn run_inner(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    out: &mut Output,
    send: &(impl Fn(&mut Output) + Sync),
) -> Result<(), Failure> {
    let mut request = build(model, context, options).await?;
    if let Some(hook) = &options.on_payload {
        let payload = tokio::select! {
            biased;
            _ = options.cancel.cancelled() => return Err(Failure::Aborted),
            payload = hook(request.body.clone()) => payload,
        };
        // A Bedrock request is signed over its body: a replaced one would be refused.
        if model.api != Api::BedrockConverseStream {
            request.body = payload;
        }
    }
    if matches!(model.api, Api::OpenAiCodexResponses) && codex_websocket::wanted(options) {
        let mut decoder = decoder_for(model, context, options);
        let stalled = || stalled_message(options.retry.timeout_ms);
        let streamed = codex_websocket::stream(
            model,
            &request,
            options,
            decoder.as_mut(),
            out,
            send,
            &stalled,
        )
        .await;
        match streamed {
            Ok(()) if options.cancel.is_cancelled() => return Err(Failure::Aborted),
            Ok(()) => return Ok(()),
            Err(codex_websocket::WsFailure::Aborted) => return Err(Failure::Aborted),
            Err(codex_websocket::WsFailure::Failed(text)) => {
                codex_websocket::record_failure(options);
                return Err(Failure::Error(text));
            }
            // The server's own error: the session keeps its WebSocket, as in pi.
            Err(codex_websocket::WsFailure::Api(text)) => return Err(Failure::Error(text)),
            // Nothing was decoded: the same request goes over SSE, as in pi.
            Err(codex_websocket::WsFailure::BeforeStart) => {
                codex_websocket::record_failure(options);
            }
        }
    }
    let Started {
        mut body,
        first,
        status,
        headers,
    } = send_with_retry(model, &request, options).await?;
    if let Some(hook) = &options.on_response {
        tokio::select! {
            biased;
            _ = options.cancel.cancelled() => return Err(Failure::Aborted),
            () = hook(status, header_map(&headers)) => {}
        }
    }
    let mut framing = Framing::for_api(&model.api);
    let mut decoder = decoder_for(model, context, options);
    let idle_limit = Duration::from_millis(options.retry.timeout_ms);
    let mut pending = Some(first);
    loop {
        let chunk = match pending.take() {
            Some(first) => first,
            None => tokio::select! {
                biased;
                _ = options.cancel.cancelled() => return Err(Failure::Aborted),
                chunk = tokio::time::timeout(idle_limit, body.next()) => chunk.map_err(|_| {
                    Failure::Error(stalled_message(options.retry.timeout_ms))
                })?,
            },
        };
        match chunk {
            Some(Ok(bytes)) => {
                let step = framing.feed(&bytes, decoder.as_mut(), out);
                send(out);
                step.map_err(Failure::Error)?;
            }
            Some(Err(e)) => {
                return Err(Failure::Error(format!(
                    "Connection lost while streaming the response: {}",
                    error_chain(&e)
                )));
            }
            None => break,
        }
    }
    let finished = framing.finish(decoder.as_mut(), out);
    send(out);
    finished.map_err(Failure::Error)?;
    if options.cancel.is_cancelled() {
        return Err(Failure::Aborted);
    }
    Ok(())
}

/// A response body, chunk by chunk.
type Body = BoxStream<'static, reqwest::Result<bytes::Bytes>>;

/// A successful response whose body has started: the rest of the body and its first item
/// (`None` when the body was empty).
struct Started {
    body: Body,
    first: Option<reqwest::Result<bytes::Bytes>>,
    status: u16,
    headers: HeaderMap,
}

/// Response headers as pi's `onResponse` gets them: lower-case names, values as text
/// (repeated headers joined with ", ").
fn header_map(headers: &HeaderMap) -> std::collections::BTreeMap<String, String> {
    let mut map = std::collections::BTreeMap::<String, String>::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        map.entry(name.as_str().to_string())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    map
}

/// What one attempt got before its deadline.
enum Attempt {
    /// A success status and the first item of the body.
    Started(Started),
    /// An error status, with the headers and body that explain it.
    Rejected {
        status: u16,
        headers: HeaderMap,
        text: String,
    },
    /// No response (connection refused or reset, TLS failure, connect timeout).
    Failed(reqwest::Error),
}

/// Sends once and waits for the start of the answer: the first body bytes of a success,
/// or the whole (short) body of an error status.
async fn try_once(builder: reqwest::RequestBuilder) -> Attempt {
    let response = match builder.send().await {
        Ok(response) => response,
        Err(e) => return Attempt::Failed(e),
    };
    if !response.status().is_success() {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        return Attempt::Rejected {
            status,
            headers,
            text,
        };
    }
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = response.bytes_stream().boxed();
    let first = body.next().await;
    Attempt::Started(Started {
        body,
        first,
        status,
        headers,
    })
}

async fn send_with_retry(
    model: &Model,
    request: &HttpRequest,
    options: &StreamOptions,
) -> Result<Started, Failure> {
    let client = match &options.client {
        Some(c) => c.clone(),
        None => shared_client(),
    };
    let body = serde_json::to_vec(&request.body)
        .map_err(|e| Failure::Error(format!("Could not encode the request body: {e}")))?;
    let policy = options.retry;
    let max_attempts = policy.max_retries + 1;
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        if options.cancel.is_cancelled() {
            return Err(Failure::Aborted);
        }
        let mut builder = client
            .post(&request.url)
            .header("content-type", "application/json")
            .body(body.clone());
        for (k, v) in &request.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let deadline = Duration::from_millis(policy.timeout_ms);
        let outcome = tokio::select! {
            biased;
            _ = options.cancel.cancelled() => return Err(Failure::Aborted),
            outcome = tokio::time::timeout(deadline, try_once(builder)) => outcome,
        };
        let (error, retryable, server_delay) = match outcome {
            Ok(Attempt::Started(started)) => return Ok(started),
            Ok(Attempt::Rejected {
                status,
                headers,
                text,
            }) => {
                let should_retry = match headers.get("x-should-retry").and_then(|v| v.to_str().ok())
                {
                    Some("true") => true,
                    Some("false") => false,
                    _ => is_retryable_status(status),
                };
                (
                    error_message(&model.api, status, &headers, &text),
                    should_retry,
                    server_requested_delay(&headers, &text),
                )
            }
            Ok(Attempt::Failed(e)) => (
                format!("Connection error: {}", error_chain(&e)),
                e.is_connect() || e.is_timeout() || e.is_request(),
                None,
            ),
            // Nothing was received, so trying again is as safe as after a refused connection.
            Err(_elapsed) => (no_response_message(policy.timeout_ms), true, None),
        };
        if !retryable || attempt >= max_attempts {
            return Err(Failure::Error(error));
        }
        let delay_ms = match server_delay {
            // 0 means no cap (as in pi): any server-requested wait is honoured.
            Some(ms) if policy.max_delay_ms > 0 && ms > policy.max_delay_ms => {
                return Err(Failure::Error(format!(
                    "{error} (the server asked to retry in {}s, longer than the {}s maximum retry delay; raise retry.provider.maxRetryDelayMs to wait that long)",
                    ms.div_ceil(1000),
                    policy.max_delay_ms / 1000
                )));
            }
            Some(ms) => ms,
            None => policy.backoff_ms(attempt),
        };
        if let Some(callback) = &options.on_retry {
            callback(RetryNotice {
                attempt,
                max_attempts: policy.max_retries,
                delay_ms,
                error: error.clone(),
            });
        }
        if !sleep_cancellable(delay_ms, &options.cancel).await {
            return Err(Failure::Aborted);
        }
    }
}

/// The error of an attempt that got no response in time. It says "timed out" so the
/// agent-level retry treats it as transient, and names the setting that sets the limit.
fn no_response_message(timeout_ms: u64) -> String {
    format!(
        "Request timed out: no response within {} (raise retry.provider.timeoutMs to wait longer)",
        describe_ms(timeout_ms)
    )
}

/// The error of a response that stopped arriving mid-stream.
fn stalled_message(timeout_ms: u64) -> String {
    format!(
        "Request timed out: the response stalled, nothing received for {} (raise retry.provider.timeoutMs to wait longer)",
        describe_ms(timeout_ms)
    )
}

/// "600 s", "1.5 s" or "300 ms".
fn describe_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{} s", crate::ai::js::js_to_fixed(ms as f64 / 1000.0, 1))
    }
}

/// Servers sometimes echo the credential back in an error body; never pass it on.
fn redact_key(text: String, options: &StreamOptions) -> String {
    match &options.api_key {
        Some(key) if key.expose().len() >= 8 && text.contains(key.expose()) => {
            text.replace(key.expose(), "<redacted>")
        }
        _ => text,
    }
}

/// An error with its causes, "outer: inner: innermost" (reqwest hides the useful part).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::retry::is_retryable_error;

    #[test]
    fn timeout_errors_name_the_limit_and_the_setting_and_are_retryable() {
        let silent = no_response_message(600_000);
        assert_eq!(
            silent,
            "Request timed out: no response within 600 s (raise retry.provider.timeoutMs to wait longer)"
        );
        let stalled = stalled_message(300);
        assert!(
            stalled.contains("stalled, nothing received for 300 ms"),
            "{stalled}"
        );
        assert!(is_retryable_error(&silent) && is_retryable_error(&stalled));
        assert_eq!(describe_ms(1_500), "1.5 s");
    }
}
