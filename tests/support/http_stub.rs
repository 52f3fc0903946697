//! A loopback HTTP/1.1 server answering each request with a closure, recording what it
//! received: stands in for AWS STS, the SSO portal, container and instance metadata
//! endpoints, Google STS and the GCE metadata server in credential tests, and the OAuth
//! endpoints of the sign-in tests.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One request received.
#[derive(Debug, Clone)]
pub struct StubRequest {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl StubRequest {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_lowercase()).map(String::as_str)
    }

    /// The body read as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }

    /// The body (or the query) read as `application/x-www-form-urlencoded`.
    pub fn form(&self) -> HashMap<String, String> {
        let text = if self.body.is_empty() {
            self.target.split_once('?').map(|(_, q)| q).unwrap_or("")
        } else {
            &self.body
        };
        reqwest::Url::parse(&format!("http://x/?{text}"))
            .unwrap()
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }
}

/// An answer: status, extra headers, body.
pub type StubResponse = (u16, Vec<(String, String)>, String);
type Handler = Arc<dyn Fn(&StubRequest) -> StubResponse + Send + Sync>;

pub struct HttpStub {
    pub url: String,
    requests: Arc<Mutex<Vec<StubRequest>>>,
}

impl HttpStub {
    pub fn start(
        handler: impl Fn(&StubRequest) -> StubResponse + Send + Sync + 'static,
    ) -> HttpStub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let handler = handler.clone();
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &handler, &log));
            }
        });
        HttpStub { url, requests }
    }

    pub fn requests(&self) -> Vec<StubRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests received for `path` (without the query).
    pub fn requests_to(&self, path: &str) -> Vec<StubRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path() == path)
            .collect()
    }
}

fn read_request(stream: &mut TcpStream) -> Option<StubRequest> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(StubRequest {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

fn serve(mut stream: TcpStream, handler: &Handler, log: &Mutex<Vec<StubRequest>>) {
    let Some(req) = read_request(&mut stream) else {
        return;
    };
    log.lock().unwrap().push(req.clone());
    let (status, headers, body) = handler(&req);
    let mut response = format!(
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        response.push_str(&format!("{k}: {v}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(&body);
    let _ = stream.write_all(response.as_bytes());
}
