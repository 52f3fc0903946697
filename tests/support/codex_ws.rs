//! A loopback WebSocket server that plays the ChatGPT Codex backend: it accepts the
//! upgrade (recording its path and headers), answers each `response.create` message
//! with the next scripted reply as the Responses events the SSE mock would stream (one
//! JSON event per text message), and records every message it got. A reply with
//! `drop_after_bytes` set sends that many events and then closes the socket with code
//! 1011 before `response.completed`. [`Quirks`] make it misbehave as a real backend
//! may: forget previous responses, or drop a socket on its second request.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use super::mock_llm::{Reply, responses_events};

/// One accepted upgrade: the request path and its headers (names lower-cased).
#[derive(Debug, Clone)]
pub struct Handshake {
    pub path: String,
    pub headers: Vec<(String, String)>,
}

impl Handshake {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Ways the server misbehaves on purpose.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quirks {
    /// Answers every `response.create` with a `previous_response_id` with
    /// `previous_response_not_found` (using no reply).
    pub forget_previous: bool,
    /// Closes a socket, without a word, when its second message arrives (using no reply).
    pub drop_second_message: bool,
}

#[derive(Default)]
struct State {
    quirks: Quirks,
    replies: Mutex<VecDeque<Reply>>,
    handshakes: Mutex<Vec<Handshake>>,
    messages: Mutex<Vec<Value>>,
}

/// The running server; stops when dropped.
pub struct CodexWs {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl CodexWs {
    /// Starts on a free port with `replies` for the requests in order.
    pub fn start(replies: Vec<Reply>) -> CodexWs {
        CodexWs::start_with(replies, Quirks::default())
    }

    /// [`CodexWs::start`] with `quirks`.
    pub fn start_with(replies: Vec<Reply>, quirks: Quirks) -> CodexWs {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let addr = std_listener.local_addr().unwrap();
        let state = Arc::new(State {
            replies: Mutex::new(replies.into()),
            quirks,
            ..State::default()
        });
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread_state = state.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::from_std(std_listener).unwrap();
                let serve = async {
                    while let Ok((socket, _)) = listener.accept().await {
                        tokio::spawn(serve_one(socket, thread_state.clone()));
                    }
                };
                tokio::select! {
                    _ = rx => {}
                    _ = serve => {}
                }
            });
        });
        CodexWs {
            addr,
            state,
            shutdown: Some(tx),
        }
    }

    /// `http://127.0.0.1:PORT` (the client swaps in `ws://`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn handshakes(&self) -> Vec<Handshake> {
        self.state.handshakes.lock().unwrap().clone()
    }

    /// Every JSON message received, in order.
    pub fn messages(&self) -> Vec<Value> {
        self.state.messages.lock().unwrap().clone()
    }
}

impl Drop for CodexWs {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn serve_one(socket: TcpStream, state: Arc<State>) {
    // tungstenite's callback type returns its error response by value.
    #[allow(clippy::result_large_err)]
    let record = |request: &Request, response: Response| {
        let headers = request
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_lowercase(),
                    v.to_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        state.handshakes.lock().unwrap().push(Handshake {
            path: request.uri().path().to_string(),
            headers,
        });
        Ok::<Response, ErrorResponse>(response)
    };
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(socket, record).await else {
        return;
    };
    let mut on_this_socket = 0;
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        on_this_socket += 1;
        let body: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        let model = body["model"].as_str().unwrap_or("").to_string();
        let forget = state.quirks.forget_previous && body.get("previous_response_id").is_some();
        if state.quirks.drop_second_message && on_this_socket == 2 {
            state.messages.lock().unwrap().push(body);
            return;
        }
        if forget {
            state.messages.lock().unwrap().push(body);
            let error = serde_json::json!({"type": "error", "code": "previous_response_not_found",
                "message": "Previous response with id 'x' not found."});
            if ws.send(Message::text(error.to_string())).await.is_err() {
                return;
            }
            continue;
        }
        let n = {
            let mut messages = state.messages.lock().unwrap();
            messages.push(body);
            messages.len()
        };
        let reply = state
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_default();
        let events = responses_events(&reply, n, &model, text.len());
        let cut = reply.drop_after_bytes;
        for (i, event) in events.into_iter().enumerate() {
            if cut == Some(i) {
                let frame = CloseFrame {
                    code: CloseCode::Error,
                    reason: "server went away".into(),
                };
                let _ = ws.close(Some(frame)).await;
                return;
            }
            if ws.send(Message::text(event)).await.is_err() {
                return;
            }
        }
    }
}
