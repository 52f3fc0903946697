//! The HTTP side shared by every API: send with retries, read the SSE body with
//! cancellation, feed a decoder, and turn every way of failing into one final
//! `StreamEvent::Error` that keeps the partial message.

use futures::channel::mpsc::{UnboundedSender, unbounded};
use futures::{StreamExt, stream};

use super::output::Output;
use super::wire::{HttpRequest, SseDecoder, decode_chunk};
use super::{StreamOptions, anthropic, google, openai_completions, openai_responses};
use crate::ai::message::{Context, StopReason};
use crate::ai::model::{Api, Model};
use crate::ai::retry::{
    RetryNotice, is_retryable_status, server_requested_delay, sleep_cancellable,
};
use crate::ai::sse::SseParser;
use crate::ai::stream::{EventStream, StreamEvent};

/// pi's message for a cancelled request.
pub(crate) const ABORTED_MESSAGE: &str = "Request was aborted";

fn finish_body(
    parser: &mut SseParser,
    decoder: &mut dyn SseDecoder,
    out: &mut Output,
) -> Result<(), String> {
    let mut result = Ok(());
    parser.finish(|event| {
        if result.is_ok() {
            result = decoder.on_event(event, out);
        }
    });
    result?;
    decoder.finish(out)
}

fn build(model: &Model, context: &Context, options: &StreamOptions) -> Result<HttpRequest, String> {
    let mut request = match &model.api {
        Api::AnthropicMessages => anthropic::build_request(model, context, options),
        Api::OpenAiCompletions => openai_completions::build_request(model, context, options),
        Api::OpenAiResponses => openai_responses::build_request(model, context, options),
        Api::GoogleGenerativeAi => google::build_request(model, context, options),
        Api::Other(name) => Err(format!(
            "The \"{name}\" API is not supported by pi-rs (model {}). Supported: anthropic-messages, openai-completions, openai-responses, google-generative-ai.",
            model.full_id()
        )),
    }?;
    for (k, v) in &model.headers {
        request.set_header(k, v);
    }
    for (k, v) in &options.headers {
        request.set_header(k, v);
    }
    Ok(request)
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
        Api::OpenAiResponses => Box::new(openai_responses::Decoder::new()),
        Api::GoogleGenerativeAi => Box::new(google::Decoder::new()),
        Api::OpenAiCompletions | Api::Other(_) => Box::new(openai_completions::Decoder::new(model)),
    }
}

fn error_message(api: &Api, status: u16, body: &str) -> String {
    match api {
        Api::AnthropicMessages => anthropic::error_message(status, body),
        Api::GoogleGenerativeAi => google::error_message(status, body),
        Api::OpenAiCompletions | Api::OpenAiResponses | Api::Other(_) => {
            openai_completions::error_message(status, body)
        }
    }
}

/// Streams one response of `model` to `context`. See the module docs for the contract.
pub fn stream(model: &Model, context: &Context, options: StreamOptions) -> EventStream {
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
    send: &impl Fn(&mut Output),
) -> Result<(), Failure> {
    let request = build(model, context, options).map_err(Failure::Error)?;
    let response = send_with_retry(model, &request, options).await?;
    let mut body = response.bytes_stream();
    let mut parser = SseParser::new();
    let mut decoder = decoder_for(model, context, options);
    loop {
        let chunk = tokio::select! {
            biased;
            _ = options.cancel.cancelled() => return Err(Failure::Aborted),
            chunk = body.next() => chunk,
        };
        match chunk {
            Some(Ok(bytes)) => {
                let step = decode_chunk(&mut parser, decoder.as_mut(), &bytes, out);
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
    let finished = finish_body(&mut parser, decoder.as_mut(), out);
    send(out);
    finished.map_err(Failure::Error)?;
    if options.cancel.is_cancelled() {
        return Err(Failure::Aborted);
    }
    Ok(())
}

async fn send_with_retry(
    model: &Model,
    request: &HttpRequest,
    options: &StreamOptions,
) -> Result<reqwest::Response, Failure> {
    let client = match &options.client {
        Some(c) => c.clone(),
        None => default_client(),
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
        let sent = tokio::select! {
            biased;
            _ = options.cancel.cancelled() => return Err(Failure::Aborted),
            sent = builder.send() => sent,
        };
        let (error, retryable, server_delay) = match sent {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status().as_u16();
                let headers = response.headers().clone();
                let text = tokio::select! {
                    biased;
                    _ = options.cancel.cancelled() => return Err(Failure::Aborted),
                    text = response.text() => text.unwrap_or_default(),
                };
                let should_retry = match headers.get("x-should-retry").and_then(|v| v.to_str().ok())
                {
                    Some("true") => true,
                    Some("false") => false,
                    _ => is_retryable_status(status),
                };
                (
                    error_message(&model.api, status, &text),
                    should_retry,
                    server_requested_delay(&headers, &text),
                )
            }
            Err(e) => (
                format!("Connection error: {}", error_chain(&e)),
                e.is_connect() || e.is_timeout() || e.is_request(),
                None,
            ),
        };
        if !retryable || attempt >= max_attempts {
            return Err(Failure::Error(error));
        }
        let delay_ms = match server_delay {
            Some(ms) if ms > policy.max_delay_ms => {
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

fn default_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(30))
                .build()
                .unwrap_or_default()
        })
        .clone()
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
