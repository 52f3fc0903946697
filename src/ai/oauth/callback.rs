//! The loopback server a browser is sent back to after signing in
//! (`http://localhost:PORT/PATH?code=…&state=…`). It answers every request with a small
//! page and hands the first valid code to the waiting sign-in; a wrong path, a missing
//! code or a foreign `state` gets an error page and is otherwise ignored.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// A running callback server; it stops when dropped.
pub struct CallbackServer {
    pub redirect_uri: String,
    codes: mpsc::UnboundedReceiver<Callback>,
    task: tokio::task::JoinHandle<()>,
}

/// What the browser brought back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub code: String,
    pub state: Option<String>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Where the server listens: pi's host (`PI_OAUTH_CALLBACK_HOST`, else 127.0.0.1) and
/// fixed port, or a free port when a test server stands in for the provider.
fn bind_address(port: u16) -> (String, u16) {
    let host = std::env::var("PI_OAUTH_CALLBACK_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into());
    let port = if super::common::test_server().is_some() {
        0
    } else {
        port
    };
    (host, port)
}

impl CallbackServer {
    /// Listens for `path` on `port`; `expected_state` must come back with the code.
    /// `provider` names the provider on the page the browser shows.
    pub async fn start(
        port: u16,
        path: &'static str,
        expected_state: String,
        provider: &'static str,
    ) -> std::io::Result<CallbackServer> {
        let (host, port) = bind_address(port);
        let listener = TcpListener::bind((host.as_str(), port)).await?;
        let bound = listener.local_addr()?.port();
        let (tx, codes) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let tx = tx.clone();
                let expected = expected_state.clone();
                tokio::spawn(async move {
                    let _ = serve(socket, path, &expected, provider, &tx).await;
                });
            }
        });
        Ok(CallbackServer {
            redirect_uri: format!("http://localhost:{bound}{path}"),
            codes,
            task,
        })
    }

    /// The next valid callback (`None` once the server has stopped).
    pub async fn next(&mut self) -> Option<Callback> {
        self.codes.recv().await
    }
}

/// Reads one request head and answers it.
async fn serve(
    mut socket: TcpStream,
    path: &str,
    expected_state: &str,
    provider: &str,
    tx: &mpsc::UnboundedSender<Callback>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let target = text.split_whitespace().nth(1).unwrap_or("/");
    let (status, page) = match check(target, path, expected_state) {
        Ok(callback) => {
            let _ = tx.send(callback);
            (
                200,
                page(
                    "Signed in",
                    &format!("{provider} sign-in is complete. You can close this window."),
                ),
            )
        }
        Err((status, why)) => (status, page("Sign-in failed", why)),
    };
    let reason = if status == 200 { "OK" } else { "Bad Request" };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await
}

/// The callback in a request target, or the status and reason to refuse it.
fn check(target: &str, path: &str, expected_state: &str) -> Result<Callback, (u16, &'static str)> {
    let url = reqwest::Url::parse(&format!("http://localhost{target}"))
        .map_err(|_| (400, "The callback address is malformed."))?;
    if url.path() != path {
        return Err((404, "Callback route not found."));
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if param("error").is_some() {
        return Err((
            400,
            "The provider reported an error; sign-in did not complete.",
        ));
    }
    let state = param("state");
    if state.as_deref() != Some(expected_state) {
        return Err((400, "State mismatch."));
    }
    match param("code").filter(|c| !c.is_empty()) {
        Some(code) => Ok(Callback { code, state }),
        None => Err((400, "Missing authorization code.")),
    }
}

fn page(title: &str, message: &str) -> String {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>pi: {}</title></head>\
<body style=\"font-family: sans-serif; margin: 4em auto; max-width: 36em\"><h1>{}</h1><p>{}</p></body></html>",
        escape(title),
        escape(title),
        escape(message)
    )
}

/// What a user pasted: a full redirect URL, `code#state`, a query string, or the code.
pub fn parse_pasted(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    let from_pairs = |pairs: reqwest::Url| {
        let get = |name: &str| {
            pairs
                .query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        (get("code"), get("state"))
    };
    if let Ok(url) = reqwest::Url::parse(value)
        && url.has_host()
    {
        return from_pairs(url);
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_string()), Some(state.to_string()));
    }
    if value.contains("code=")
        && let Ok(url) = reqwest::Url::parse(&format!("http://x/?{value}"))
    {
        return from_pairs(url);
    }
    (Some(value.to_string()), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_input_in_every_form_pi_accepts() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            parse_pasted("http://localhost:1455/auth/callback?code=c1&state=s1"),
            (s("c1"), s("s1"))
        );
        assert_eq!(parse_pasted(" c2#s2 "), (s("c2"), s("s2")));
        assert_eq!(parse_pasted("code=c3&state=s3"), (s("c3"), s("s3")));
        assert_eq!(parse_pasted("just-a-code"), (s("just-a-code"), None));
        assert_eq!(parse_pasted("  "), (None, None));
    }

    #[test]
    fn only_the_right_path_with_the_expected_state_and_a_code_is_accepted() {
        assert_eq!(
            check("/cb?code=x&state=s", "/cb", "s"),
            Ok(Callback {
                code: "x".into(),
                state: Some("s".into())
            })
        );
        assert_eq!(
            check("/other?code=x&state=s", "/cb", "s").unwrap_err().0,
            404
        );
        assert_eq!(
            check("/cb?code=x&state=t", "/cb", "s").unwrap_err().1,
            "State mismatch."
        );
        assert_eq!(
            check("/cb?state=s", "/cb", "s").unwrap_err().1,
            "Missing authorization code."
        );
        assert!(check("/cb?error=access_denied&state=s", "/cb", "s").is_err());
    }
}
