use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

fn update(access: &str, refresh: &str, expires: i64) -> TokenUpdate {
    TokenUpdate {
        access: ApiKey::new(access),
        refresh: ApiKey::new(refresh),
        expires,
        extra: Vec::new(),
    }
}

#[test]
fn applying_new_tokens_keeps_the_entrys_other_fields() {
    let entry = json!({"type": "oauth", "refresh": "r-old", "access": "a-old",
        "expires": 1, "accountId": "acct-7", "scopes": ["x"]});
    let updated = apply_update(&entry, &update("a-new", "r-new", 99));
    insta::assert_snapshot!(updated.to_string(), @r#"{"type":"oauth","refresh":"r-new","access":"a-new","expires":99,"accountId":"acct-7","scopes":["x"]}"#);
}

#[test]
fn expiry_is_now_plus_lifetime_minus_five_minutes_and_old_refresh_token_stays_if_none_is_sent() {
    let now = 1_700_000_000_000;
    let got = parse_token_response(
        OAuthProvider::Anthropic,
        r#"{"access_token":"a2","refresh_token":"r2","expires_in":28800}"#,
        "r1",
        now,
    )
    .unwrap();
    assert_eq!(got, update("a2", "r2", now + 28_800_000 - 300_000));
    let got = parse_token_response(
        OAuthProvider::Anthropic,
        r#"{"access_token":"a3","expires_in":3600}"#,
        "r1",
        now,
    )
    .unwrap();
    assert_eq!(got, update("a3", "r1", now + 3_600_000 - 300_000));
}

#[test]
fn token_answers_without_access_token_or_lifetime_are_errors() {
    let p = OAuthProvider::Anthropic;
    assert_eq!(
        parse_token_response(p, r#"{"expires_in":10}"#, "r", 0).unwrap_err(),
        "the token endpoint's answer has no access_token"
    );
    assert_eq!(
        parse_token_response(p, r#"{"access_token":"a"}"#, "r", 0).unwrap_err(),
        "the token endpoint's answer has no expires_in"
    );
    assert!(
        parse_token_response(p, "<html>", "r", 0)
            .unwrap_err()
            .starts_with("the token endpoint returned invalid JSON")
    );
}

#[test]
fn only_oauth_entries_at_or_past_their_expiry_are_due() {
    let now = 1000;
    assert!(is_expired_oauth(
        &json!({"type": "oauth", "expires": 1000}),
        now
    ));
    assert!(is_expired_oauth(
        &json!({"type": "oauth", "expires": 999.5}),
        now
    ));
    assert!(is_expired_oauth(&json!({"type": "oauth"}), now));
    assert!(!is_expired_oauth(
        &json!({"type": "oauth", "expires": 1001}),
        now
    ));
    assert!(!is_expired_oauth(
        &json!({"type": "api_key", "key": "k"}),
        now
    ));
}

#[test]
fn the_lock_is_exclusive_released_on_drop_and_a_stale_one_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let held = try_lock(&auth, LOCK_STALE).unwrap().unwrap();
    assert!(dir.path().join("auth.json.lock").is_dir());
    assert!(try_lock(&auth, LOCK_STALE).unwrap().is_none());
    drop(held);
    assert!(!dir.path().join("auth.json.lock").exists());

    // A lock left by a crashed process: older than the stale limit.
    std::fs::create_dir(dir.path().join("auth.json.lock")).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let taken = try_lock(&auth, Duration::from_millis(10)).unwrap();
    assert!(taken.is_some());
}

#[tokio::test]
async fn waiting_for_a_held_lock_gives_up_with_a_message_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let _held = try_lock(&auth, LOCK_STALE).unwrap().unwrap();
    let err = lock(&auth, Duration::from_millis(200)).await.unwrap_err();
    assert_eq!(
        err.replace(&dir.path().display().to_string(), "<dir>"),
        "another pi process holds the lock <dir>/auth.json.lock; if none is running, delete that directory"
    );
}

/// A one-shot token endpoint on loopback: answers `status` + `body` to the first request
/// and hands back the request's body.
fn token_server(status: u16, body: &'static str) -> (String, std::thread::JoinHandle<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/oauth/token", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut tmp = [0u8; 4096];
        loop {
            let n = sock.read(&mut tmp).unwrap();
            buf.extend_from_slice(&tmp[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len {
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    sock.write_all(reply.as_bytes()).unwrap();
                    return serde_json::from_slice(&buf[end + 4..end + 4 + len]).unwrap();
                }
            }
        }
    });
    (url, handle)
}

#[tokio::test]
async fn an_expired_entry_is_refreshed_and_saved_with_other_providers_kept() {
    let (url, server) = token_server(
        200,
        r#"{"access_token":"sk-ant-oat01-new","refresh_token":"r-new","expires_in":28800}"#,
    );
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let before = json!({
        "openai": {"type": "api_key", "key": "sk-openai"},
        "anthropic": {"type": "oauth", "refresh": "r-old", "access": "a-old", "expires": 5, "note": "kept"}
    });
    std::fs::write(&auth, before.to_string()).unwrap();
    let start = crate::ai::message::now_ms();
    let key = refresh_stored_at(
        &auth,
        OAuthProvider::Anthropic,
        &reqwest::Client::new(),
        Some(&url),
    )
    .await
    .unwrap();
    assert_eq!(key.expose(), "sk-ant-oat01-new");
    assert_eq!(
        server.join().unwrap(),
        json!({"grant_type": "refresh_token", "client_id": anthropic::CLIENT_ID, "refresh_token": "r-old"})
    );
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&auth).unwrap()).unwrap();
    let expires = saved["anthropic"]["expires"].as_i64().unwrap();
    assert!((start + 28_500_000..=start + 28_520_000).contains(&expires));
    saved["anthropic"]["expires"] = json!("<expires>");
    insta::assert_snapshot!(serde_json::to_string_pretty(&saved).unwrap(), @r#"
    {
      "openai": {
        "type": "api_key",
        "key": "sk-openai"
      },
      "anthropic": {
        "type": "oauth",
        "refresh": "r-new",
        "access": "sk-ant-oat01-new",
        "expires": "<expires>",
        "note": "kept"
      }
    }
    "#);
    assert!(!dir.path().join("auth.json.lock").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&auth).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn a_token_refreshed_by_another_process_meanwhile_is_used_without_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let fresh = crate::ai::message::now_ms() + 3_600_000;
    let text = json!({"anthropic": {"type": "oauth", "refresh": "r", "access": "a-fresh", "expires": fresh}})
        .to_string();
    std::fs::write(&auth, &text).unwrap();
    // Nothing listens there: asking the endpoint would fail the test.
    let key = refresh_stored_at(
        &auth,
        OAuthProvider::Anthropic,
        &reqwest::Client::new(),
        Some("http://127.0.0.1:9/"),
    )
    .await
    .unwrap();
    assert_eq!(key.expose(), "a-fresh");
    assert_eq!(std::fs::read_to_string(&auth).unwrap(), text);
}

#[tokio::test]
async fn an_entry_without_refresh_token_fails_with_what_to_do_and_keeps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let text = json!({"anthropic": {"type": "oauth", "refresh": "", "access": "a", "expires": 1}})
        .to_string();
    std::fs::write(&auth, &text).unwrap();
    let err = refresh_stored_at(
        &auth,
        OAuthProvider::Anthropic,
        &reqwest::Client::new(),
        Some("http://127.0.0.1:9/"),
    )
    .await
    .unwrap_err();
    insta::assert_snapshot!(err.to_string().replace(&dir.path().display().to_string(), "<dir>"), @r#"
    Failed to refresh OAuth token for anthropic: the stored entry has no refresh token

    Run /login in pi to sign in again, or remove the "anthropic" entry from <dir>/auth.json and set ANTHROPIC_API_KEY.
    "#);
    assert_eq!(std::fs::read_to_string(&auth).unwrap(), text);
}

#[tokio::test]
async fn an_endpoint_rejection_is_reported_with_its_status_and_body_and_the_file_is_kept() {
    let (url, server) = token_server(400, r#"{"error":"invalid_grant"}"#);
    let dir = tempfile::tempdir().unwrap();
    let auth = dir.path().join("auth.json");
    let text = json!({"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}})
        .to_string();
    std::fs::write(&auth, &text).unwrap();
    let err = refresh_stored_at(
        &auth,
        OAuthProvider::Anthropic,
        &reqwest::Client::new(),
        Some(&url),
    )
    .await
    .unwrap_err();
    server.join().unwrap();
    assert_eq!(
        err.detail,
        format!(r#"{url} answered HTTP 400: {{"error":"invalid_grant"}}"#)
    );
    assert_eq!(std::fs::read_to_string(&auth).unwrap(), text);
    assert!(!dir.path().join("auth.json.lock").exists());
}

#[test]
fn an_expired_oauth_entry_counts_as_configured_and_is_due_unless_api_key_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    let entries = json!({
        "anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},
        "github-copilot": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1},
        "some-extension-provider": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}
    });
    std::fs::write(dir.path().join("auth.json"), entries.to_string()).unwrap();
    let mut storage = crate::ai::auth::AuthStorage::load(dir.path());
    assert!(storage.has_auth("anthropic"));
    assert_eq!(
        storage.oauth_refresh_due("anthropic"),
        Some(OAuthProvider::Anthropic)
    );
    assert_eq!(
        storage.oauth_refresh_due("github-copilot"),
        Some(OAuthProvider::GitHubCopilot)
    );
    // No refresher for a provider pi-rs does not know.
    assert_eq!(storage.oauth_refresh_due("some-extension-provider"), None);
    storage.set_runtime_api_key("anthropic", ApiKey::new("sk-ant-api"));
    assert_eq!(storage.oauth_refresh_due("anthropic"), None);
}
