//! Everything RPC mode writes to stdout goes through [`RpcOutput`], in one order that
//! matches what happened: session events (encoded like `--mode json`) and responses.
//!
//! The order matters to clients and is easy to get wrong with two channels, so there is
//! only one source of truth for it. The session's event receiver sits behind a mutex;
//! whoever writes — the event pump or a command answering — takes the mutex, writes every
//! event the session has emitted so far, then its own line. So `set_model`'s
//! `thinking_level_changed` always precedes its response, and `prompt`'s response (written
//! the moment the prompt is accepted) always precedes that run's `agent_start`.

use std::future::poll_fn;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use super::framing::WriterMsg;
use super::protocol::Response;
use crate::core::events::{EventJsonEncoder, SessionEvent};

/// The ordered stdout of RPC mode. Clones share it.
#[derive(Clone)]
pub struct RpcOutput {
    inner: Arc<Inner>,
}

struct Inner {
    events: Mutex<EventSource>,
    writer: Sender<WriterMsg>,
}

struct EventSource {
    rx: UnboundedReceiver<SessionEvent>,
    encoder: EventJsonEncoder,
}

impl EventSource {
    fn write_event(&mut self, event: &SessionEvent, writer: &Sender<WriterMsg>) {
        if let SessionEvent::Notice { message } = event {
            // Not part of pi's protocol; stderr is where a host looks for diagnostics.
            eprintln!("Warning: {message}");
            return;
        }
        if let Some(value) = self.encoder.encode(event) {
            let _ = writer.send(WriterMsg::Line(value.to_string()));
        }
    }

    /// Writes the events already emitted.
    fn drain(&mut self, writer: &Sender<WriterMsg>) {
        while let Ok(event) = self.rx.try_recv() {
            self.write_event(&event, writer);
        }
    }
}

impl RpcOutput {
    /// `events` is a fresh subscription to the session; `writer` the writer thread.
    pub fn new(events: UnboundedReceiver<SessionEvent>, writer: Sender<WriterMsg>) -> Self {
        RpcOutput {
            inner: Arc::new(Inner {
                events: Mutex::new(EventSource {
                    rx: events,
                    encoder: EventJsonEncoder::new(),
                }),
                writer,
            }),
        }
    }

    fn source(&self) -> MutexGuard<'_, EventSource> {
        self.inner.events.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one line after every event emitted so far. This is also the hook for
    /// messages that are not responses or session events: `extension_error` and
    /// `extension_ui_request` (see `ExtensionUi`).
    pub fn send(&self, value: &Value) {
        let mut source = self.source();
        source.drain(&self.inner.writer);
        let _ = self.inner.writer.send(WriterMsg::Line(value.to_string()));
    }

    /// [`RpcOutput::send`] for a line already encoded.
    pub fn send_raw(&self, line: &str) {
        let mut source = self.source();
        source.drain(&self.inner.writer);
        let _ = self.inner.writer.send(WriterMsg::Line(line.to_string()));
    }

    /// Writes a response (after the events that precede it).
    pub fn respond(&self, response: Response) {
        self.send(&response.to_json());
    }

    /// Forwards session events as they come. Returns when the session is gone.
    pub async fn pump_events(&self) {
        poll_fn(|cx| {
            let mut source = self.source();
            loop {
                match source.rx.poll_recv(cx) {
                    Poll::Ready(Some(event)) => source.write_event(&event, &self.inner.writer),
                    Poll::Ready(None) => return Poll::Ready(()),
                    Poll::Pending => return Poll::Pending,
                }
            }
        })
        .await;
    }

    /// Writes pending events and waits until everything written so far reached the
    /// output (used before exiting).
    pub async fn flush(&self) {
        self.source().drain(&self.inner.writer);
        let (done, flushed) = tokio::sync::oneshot::channel();
        if self.inner.writer.send(WriterMsg::Flush(done)).is_ok() {
            let _ = flushed.await;
        }
    }
}
