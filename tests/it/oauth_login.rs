//! `/login`, `/logout` and `/model <id>` end to end: the built `pi` binary in tmux, every
//! OAuth endpoint pointed at an in-test loopback server that implements the provider's
//! side of the flow (`PI_RS_OAUTH_TEST_SERVER`), the "browser" a fake `xdg-open` that
//! writes down the address it was asked to open, which the test then follows as a
//! browser would (authorize page, redirect to pi's callback server). Model requests go
//! to the loopback model server. Also the refresh of expired Codex and Copilot logins in
//! print mode, and the first-run warning. No network.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::mock_llm::{MockLlm, Script};
use crate::support::tmux::{self, Tmux};

const WAIT: Duration = Duration::from_secs(20);

/// The fake provider's side of each OAuth flow is a loopback HTTP server.
use crate::support::http_stub::{
    HttpStub as FakeProvider, StubRequest as Req, StubResponse as Resp,
};

fn json_resp(status: u16, body: Value) -> Resp {
    (
        status,
        vec![("Content-Type".into(), "application/json".into())],
        body.to_string(),
    )
}

/// A plain GET, as a browser makes it: status, `Location` header, body.
fn browser_get(url: &str) -> (u16, Option<String>, String) {
    let url = reqwest::Url::parse(url).unwrap();
    let port = url.port().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        url.host_str().unwrap()
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    let location = text.lines().find_map(|l| {
        l.split_once(':')
            .filter(|(k, _)| k.eq_ignore_ascii_case("location"))
            .map(|(_, v)| v.trim().to_string())
    });
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, location, body)
}

fn query(url: &str) -> HashMap<String, String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// The authorize endpoint: redirects the browser back to `redirect_uri` with a code and
/// the state it was given.
fn authorize_redirect(req: &Req, code: &str) -> Resp {
    let q = query(&format!("http://x{}", req.target));
    let location = format!(
        "{}?code={code}&state={}",
        q["redirect_uri"],
        urlencode(&q["state"])
    );
    (302, vec![("Location".into(), location)], String::new())
}

fn urlencode(s: &str) -> String {
    let mut url = reqwest::Url::parse("http://x/").unwrap();
    url.query_pairs_mut().append_pair("v", s);
    url.query().unwrap()[2..].to_string()
}

fn pkce_challenge(verifier: &str) -> String {
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// A temporary home with models.json, a fake `xdg-open` and the fake provider.
struct Home {
    dir: tempfile::TempDir,
    llm: MockLlm,
}

impl Home {
    fn new(models: Value) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let llm = MockLlm::start(
            Script::from_json(&json!({"default": {"text": "hello from the model"}}).to_string())
                .unwrap(),
        );
        let home = Home { dir, llm };
        std::fs::create_dir_all(home.agent_dir()).unwrap();
        std::fs::create_dir_all(home.cwd()).unwrap();
        std::fs::create_dir_all(home.bin()).unwrap();
        let models = serde_json::to_string(&models)
            .unwrap()
            .replace("LLM_URL", &home.llm.url());
        std::fs::write(home.agent_dir().join("models.json"), models).unwrap();
        std::fs::write(
            home.agent_dir().join("settings.json"),
            r#"{"quietStartup": true}"#,
        )
        .unwrap();
        let opener = home.bin().join("xdg-open");
        std::fs::write(
            &opener,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n",
                home.opened_file().display()
            ),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        home
    }

    fn agent_dir(&self) -> PathBuf {
        self.dir.path().join("home/.pi/agent")
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    fn opened_file(&self) -> PathBuf {
        self.dir.path().join("opened.txt")
    }

    fn auth_path(&self) -> PathBuf {
        self.agent_dir().join("auth.json")
    }

    fn auth(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.auth_path()).unwrap()).unwrap()
    }

    /// The address the fake browser was asked to open first, waited for.
    fn opened(&self) -> String {
        self.opened_nth(1)
    }

    /// The `n`th address (from 1) the fake browser was asked to open, waited for.
    fn opened_nth(&self, n: usize) -> String {
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(self.opened_file())
                && let Some(line) = text.lines().nth(n - 1)
            {
                return line.to_string();
            }
            assert!(
                start.elapsed() < WAIT,
                "the browser was not opened {n} times"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `pi <args>` in tmux with every OAuth endpoint at `provider`.
    fn start(&self, args: &str, provider: &FakeProvider) -> Tmux {
        let home = self.dir.path().join("home");
        let path = format!(
            "{}:{}",
            self.bin().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let cmd = format!("{} --offline {args}", env!("CARGO_BIN_EXE_pi"));
        let mut env = vec![
            ("HOME", home.to_str().unwrap().to_string()),
            ("PATH", path),
            ("PI_CODING_AGENT_DIR", String::new()),
            ("PI_RS_OAUTH_TEST_SERVER", provider.url.clone()),
        ];
        for var in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "GROQ_API_KEY",
            "CEREBRAS_API_KEY",
            "XAI_API_KEY",
            "OPENROUTER_API_KEY",
            "MISTRAL_API_KEY",
            "DEEPSEEK_API_KEY",
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "GITHUB_TOKEN",
        ] {
            env.push((var, String::new()));
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        Tmux::start(&cmd, &self.cwd(), &env, 120, 40)
    }
}

/// models.json with the mock model (to start with) and optional more providers.
fn mock_models(extra: Value) -> Value {
    let mut providers = json!({"mock": {
        "baseUrl": "LLM_URL/v1", "api": "openai-completions", "apiKey": "mock",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "mock-model", "contextWindow": 200000, "maxTokens": 4000}]
    }});
    if let Value::Object(more) = extra {
        providers.as_object_mut().unwrap().extend(more);
    }
    json!({ "providers": providers })
}

fn skip_without_tmux() -> bool {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return true;
    }
    false
}

/// Types a slash command and submits it (through the completion popup if it shows).
fn slash(t: &Tmux, command: &str) {
    t.type_text(command);
    t.wait_for(command, WAIT);
    std::thread::sleep(Duration::from_millis(300));
    t.keys(&["Enter"]);
}

/// `/login`, the method, then the provider found by typing `filter`.
fn choose_login(t: &Tmux, method: &str, filter: &str) {
    slash(t, "/login");
    t.wait_for("Select authentication method:", WAIT);
    if method == "api" {
        t.keys(&["Down"]);
    }
    t.keys(&["Enter"]);
    t.wait_for("Select provider to configure:", WAIT);
    t.type_text(filter);
    std::thread::sleep(Duration::from_millis(200));
    t.keys(&["Enter"]);
}

fn jwt_with_account(account: &str) -> String {
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
        json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}}).to_string(),
    );
    format!("eyJhbGciOiJub25lIn0.{payload}.sig")
}

#[test]
fn first_run_warns_then_anthropic_sign_in_selects_the_default_model_and_it_answers() {
    if skip_without_tmux() {
        return;
    }
    // The built-in Anthropic models, sent to the loopback model server.
    let home = Home::new(json!({"providers": {"anthropic": {"baseUrl": "LLM_URL"}}}));
    let provider = FakeProvider::start(|req| match req.path() {
        "/claude.ai/oauth/authorize" => authorize_redirect(req, "anthropic-code"),
        "/platform.claude.com/v1/oauth/token" => json_resp(
            200,
            json!({"access_token": "sk-ant-oat01-signed-in", "refresh_token": "sk-ant-ort01-r",
                "expires_in": 28800}),
        ),
        _ => json_resp(404, json!({})),
    });
    let t = home.start("", &provider);

    // First run: said at once, with what to do and absolute doc paths.
    let screen = t.wait_for("No models available", WAIT);
    let flat = screen.replace('\n', " ");
    assert!(flat.contains("Use /login"), "{screen}");
    assert!(flat.contains("ANTHROPIC_API_KEY"), "{screen}");
    assert!(flat.contains("models.json"), "{screen}");
    let docs = format!("{}/docs/providers.md", env!("CARGO_MANIFEST_DIR"));
    assert!(
        t.history().replace('\n', "").contains(&docs),
        "no absolute link to {docs}:\n{}",
        t.history()
    );

    slash(&t, "/login");
    t.wait_for("Select authentication method:", WAIT);
    t.keys(&["Enter"]);
    let list = t.wait_for("Select provider to configure:", WAIT);
    // pi's subscription providers, sorted by name, none configured.
    let rows: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("unconfigured"))
        .collect();
    assert_eq!(
        rows,
        [
            "→ Anthropic (Claude Pro/Max) • unconfigured",
            "ChatGPT Plus/Pro (Codex Subscription) • unconfigured",
            "GitHub Copilot • unconfigured"
        ],
        "{list}"
    );
    t.keys(&["Enter"]);
    t.wait_for("Login to Anthropic (Claude Pro/Max)", WAIT);
    t.wait_for(
        "Paste redirect URL below, or complete login in browser:",
        WAIT,
    );

    // The browser: the authorize page, then back to pi's callback server.
    let url = home.opened();
    let q = query(&url);
    assert!(url.starts_with(&format!("{}/claude.ai/oauth/authorize?", provider.url)));
    assert_eq!(q["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
    assert_eq!(q["code"], "true");
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(
        q["scope"],
        "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"
    );
    // pi sends the verifier as the state.
    assert_eq!(q["code_challenge"], pkce_challenge(&q["state"]));
    let redirect = q["redirect_uri"].clone();
    assert!(redirect.starts_with("http://localhost:") && redirect.ends_with("/callback"));
    let (status, location, _) = browser_get(&url);
    assert_eq!(status, 302);
    let (status, _, page) = browser_get(&location.unwrap());
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("You can close this window"), "{page}");

    t.wait_for(
        "Logged in to Anthropic (Claude Pro/Max). Selected claude-opus-5-5.",
        WAIT,
    );
    t.wait_until("the footer shows the model", WAIT, |s| {
        s.lines()
            .last()
            .is_some_and(|l| l.contains("claude-opus-5-5"))
    });
    let token = provider.requests_to("/platform.claude.com/v1/oauth/token");
    assert_eq!(token.len(), 1);
    let body = token[0].json();
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["code"], "anthropic-code");
    assert_eq!(body["state"], q["state"].as_str());
    assert_eq!(body["code_verifier"], q["state"].as_str());
    assert_eq!(body["redirect_uri"], redirect.as_str());
    assert_eq!(body["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");

    // Stored as pi stores it: {type, refresh, access, expires} with 5 minutes margin.
    let auth = home.auth();
    let entry = auth["anthropic"].as_object().unwrap();
    assert_eq!(
        entry.keys().collect::<Vec<_>>(),
        ["type", "refresh", "access", "expires"]
    );
    assert_eq!(entry["type"], "oauth");
    assert_eq!(entry["access"], "sk-ant-oat01-signed-in");
    assert_eq!(entry["refresh"], "sk-ant-ort01-r");
    let lifetime = entry["expires"].as_i64().unwrap() - chrono::Utc::now().timestamp_millis();
    assert!(
        (28_800_000 - 300_000 - 60_000..=28_800_000 - 300_000).contains(&lifetime),
        "{lifetime}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.auth_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Usable without a restart: the next prompt goes out with the new token.
    t.type_text("hi");
    t.keys(&["Enter"]);
    t.wait_for("hello from the model", WAIT);
    let requests = home.llm.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.path, "/v1/messages");
    assert_eq!(
        last.header("authorization"),
        Some("Bearer sk-ant-oat01-signed-in")
    );
}

#[test]
fn codex_sign_in_by_pasting_the_redirect_url_stores_the_account_id() {
    if skip_without_tmux() {
        return;
    }
    let home = Home::new(mock_models(json!({})));
    let access = jwt_with_account("acct-42");
    let answer = json!({"access_token": access, "refresh_token": "codex-refresh",
        "expires_in": 864000});
    let provider = FakeProvider::start(move |req| match req.path() {
        "/auth.openai.com/oauth/token" => json_resp(200, answer.clone()),
        _ => json_resp(404, json!({})),
    });
    let t = home.start("--provider mock --model mock-model", &provider);
    t.wait_for("mock-model", WAIT);
    choose_login(&t, "subscription", "codex");
    t.wait_for("Login to ChatGPT Plus/Pro (Codex Subscription)", WAIT);
    t.wait_for(
        "A browser window should open. Complete login to finish.",
        WAIT,
    );

    let url = home.opened();
    assert!(url.starts_with(&format!(
        "{}/auth.openai.com/oauth/authorize?",
        provider.url
    )));
    let q = query(&url);
    assert_eq!(q["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann");
    assert_eq!(q["scope"], "openid profile email offline_access");
    assert_eq!(q["originator"], "pi");
    assert_eq!(q["codex_cli_simplified_flow"], "true");
    assert_eq!(q["id_token_add_organizations"], "true");
    assert_eq!(q["state"].len(), 32);
    let redirect = q["redirect_uri"].clone();
    assert!(redirect.ends_with("/auth/callback"), "{redirect}");

    // The browser is on another machine: paste the redirect URL instead. A wrong state
    // first is refused.
    t.type_text(&format!("{redirect}?code=pasted-code&state=not-the-state"));
    t.keys(&["Enter"]);
    t.wait_for(
        "Failed to login to ChatGPT Plus/Pro (Codex Subscription): State mismatch",
        WAIT,
    );
    assert!(!home.auth_path().exists());

    choose_login(&t, "subscription", "codex");
    t.wait_for("Paste redirect URL below", WAIT);
    let second = home.opened_nth(2);
    let state = query(&second)["state"].clone();
    // A new sign-in, a new callback server.
    let redirect = query(&second)["redirect_uri"].clone();
    t.type_text(&format!("{redirect}?code=pasted-code&state={state}"));
    t.keys(&["Enter"]);
    t.wait_for(
        "Logged in to ChatGPT Plus/Pro (Codex Subscription). Credentials saved to",
        WAIT,
    );
    let token = provider.requests_to("/auth.openai.com/oauth/token");
    assert_eq!(token.len(), 1);
    assert_eq!(
        token[0].headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    let form = token[0].form();
    assert_eq!(form["grant_type"], "authorization_code");
    assert_eq!(form["code"], "pasted-code");
    assert_eq!(form["client_id"], "app_EMoamEEZ73f0CkXaXp7hrann");
    assert_eq!(form["redirect_uri"], redirect);
    let challenge = query(&second)["code_challenge"].clone();
    assert_eq!(pkce_challenge(&form["code_verifier"]), challenge);

    let auth = home.auth();
    let entry = auth["openai-codex"].as_object().unwrap();
    assert_eq!(
        entry.keys().collect::<Vec<_>>(),
        ["type", "access", "refresh", "expires", "accountId"]
    );
    assert_eq!(entry["accountId"], "acct-42");
    assert_eq!(entry["refresh"], "codex-refresh");
    // The mock model stays selected (a model was chosen already).
    assert!(t.screen().lines().last().unwrap().contains("mock-model"));
}

#[test]
fn codex_sign_in_through_the_browser_callback() {
    if skip_without_tmux() {
        return;
    }
    let home = Home::new(mock_models(json!({})));
    let access = jwt_with_account("acct-7");
    let answer = json!({"access_token": access, "refresh_token": "r", "expires_in": 3600});
    let provider = FakeProvider::start(move |req| match req.path() {
        "/auth.openai.com/oauth/authorize" => authorize_redirect(req, "browser-code"),
        "/auth.openai.com/oauth/token" => json_resp(200, answer.clone()),
        _ => json_resp(404, json!({})),
    });
    let t = home.start("--provider mock --model mock-model", &provider);
    t.wait_for("mock-model", WAIT);
    choose_login(&t, "subscription", "codex");
    let url = home.opened();
    let (_, location, _) = browser_get(&url);
    let location = location.unwrap();
    // A callback with another state is refused and changes nothing.
    let forged = location.replace("state=", "state=x");
    let (status, _, page) = browser_get(&forged);
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("State mismatch"));
    let (status, _, _) = browser_get(&location);
    assert_eq!(status, 200);
    t.wait_for("Logged in to ChatGPT Plus/Pro (Codex Subscription)", WAIT);
    assert_eq!(
        provider.requests_to("/auth.openai.com/oauth/token")[0].form()["code"],
        "browser-code"
    );
    assert_eq!(home.auth()["openai-codex"]["accountId"], "acct-7");
}

#[test]
fn copilot_device_flow_on_an_enterprise_domain_enables_the_models() {
    if skip_without_tmux() {
        return;
    }
    let home = Home::new(mock_models(json!({"github-copilot": {
        "baseUrl": "LLM_URL/v1", "api": "openai-completions", "apiKey": "unused",
        "models": [{"id": "cp-a"}, {"id": "cp-b"}]
    }})));
    let seen = Arc::new(Mutex::new(0));
    let provider = FakeProvider::start(move |req| match req.path() {
        "/company.ghe.com/login/device/code" => json_resp(
            200,
            json!({"device_code": "dev-1", "user_code": "ABCD-1234",
                "verification_uri": "https://company.ghe.com/login/device",
                "interval": 1, "expires_in": 60}),
        ),
        "/company.ghe.com/login/oauth/access_token" => {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n == 1 {
                json_resp(200, json!({"error": "authorization_pending"}))
            } else {
                json_resp(200, json!({"access_token": "gho_github_token"}))
            }
        }
        "/api.company.ghe.com/copilot_internal/v2/token" => json_resp(
            200,
            json!({"token": "tid=1;exp=99;proxy-ep=proxy.enterprise.example.com;",
                "expires_at": 4_000_000_000_i64}),
        ),
        p if p.starts_with("/api.enterprise.example.com/models/") => json_resp(200, json!({})),
        _ => json_resp(404, json!({})),
    });
    let t = home.start("--provider mock --model mock-model", &provider);
    t.wait_for("mock-model", WAIT);
    choose_login(&t, "subscription", "copilot");
    t.wait_for("GitHub Enterprise URL/domain (blank for github.com)", WAIT);
    t.wait_for("e.g., company.ghe.com", WAIT);
    t.type_text("https://company.ghe.com/");
    t.keys(&["Enter"]);
    t.wait_for("Enter code: ABCD-1234", WAIT);
    t.wait_for("Waiting for browser authentication...", WAIT);
    assert_eq!(home.opened(), "https://company.ghe.com/login/device");
    t.wait_for("Logged in to GitHub Copilot. Credentials saved to", WAIT);

    let device = provider.requests_to("/company.ghe.com/login/device/code");
    assert_eq!(
        device[0].form(),
        HashMap::from([
            ("client_id".to_string(), "Iv1.b507a08c87ecfe98".to_string()),
            ("scope".to_string(), "read:user".to_string()),
        ])
    );
    let poll = provider.requests_to("/company.ghe.com/login/oauth/access_token");
    assert_eq!(poll.len(), 2);
    assert_eq!(poll[1].form()["device_code"], "dev-1");
    assert_eq!(
        poll[1].form()["grant_type"],
        "urn:ietf:params:oauth:grant-type:device_code"
    );
    let exchange = provider.requests_to("/api.company.ghe.com/copilot_internal/v2/token");
    assert_eq!(exchange[0].method, "GET");
    assert_eq!(
        exchange[0].headers["authorization"],
        "Bearer gho_github_token"
    );
    assert_eq!(exchange[0].headers["editor-version"], "vscode/1.107.0");
    for model in ["cp-a", "cp-b"] {
        let policy = provider.requests_to(&format!(
            "/api.enterprise.example.com/models/{model}/policy"
        ));
        assert_eq!(policy.len(), 1, "{model} was not enabled");
        assert_eq!(policy[0].json(), json!({"state": "enabled"}));
        assert_eq!(policy[0].headers["openai-intent"], "chat-policy");
        assert_eq!(
            policy[0].headers["authorization"],
            "Bearer tid=1;exp=99;proxy-ep=proxy.enterprise.example.com;"
        );
    }

    let auth = home.auth();
    let entry = auth["github-copilot"].as_object().unwrap();
    assert_eq!(
        entry.keys().collect::<Vec<_>>(),
        ["type", "refresh", "access", "expires", "enterpriseUrl"]
    );
    assert_eq!(entry["refresh"], "gho_github_token");
    assert_eq!(entry["enterpriseUrl"], "company.ghe.com");
    assert_eq!(entry["expires"], 4_000_000_000_000_i64 - 300_000);

    // /logout lists it and removes it; the file stays (with nothing in it).
    slash(&t, "/logout");
    t.wait_for("Select provider to logout:", WAIT);
    t.wait_for("GitHub Copilot ✓ configured", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Logged out of GitHub Copilot", WAIT);
    assert_eq!(home.auth(), json!({}));
}

#[test]
fn an_api_key_is_stored_as_pi_stores_it_and_logout_never_creates_a_file() {
    if skip_without_tmux() {
        return;
    }
    let home = Home::new(mock_models(json!({})));
    let provider = FakeProvider::start(|_| json_resp(404, json!({})));
    let t = home.start("--provider mock --model mock-model", &provider);
    t.wait_for("mock-model", WAIT);

    slash(&t, "/logout");
    t.wait_for("No stored credentials to remove.", WAIT);
    assert!(!home.auth_path().exists(), "/logout created auth.json");

    slash(&t, "/login");
    t.wait_for("Select authentication method:", WAIT);
    t.keys(&["Down", "Enter"]);
    let list = t.wait_for("Select provider to configure:", WAIT);
    // Built-in providers by pi's names, sorted by name; the custom provider (further
    // down) is found by typing, with its models.json key noted.
    assert!(
        list.contains("Anthropic (Claude Pro/Max) • unconfigured"),
        "{list}"
    );
    t.type_text("mock");
    t.wait_until("the list filtered", WAIT, |s| {
        s.contains("→ mock ✓ key in models.json") && !s.contains("OpenAI • unconfigured")
    });
    t.keys(&["Enter"]);
    t.wait_for("Login to mock", WAIT);
    t.wait_for("Enter API key:", WAIT);
    t.keys(&["Enter"]);
    t.wait_for(
        "Failed to save API key for mock: API key cannot be empty.",
        WAIT,
    );
    assert!(!home.auth_path().exists());

    choose_login(&t, "api", "mock");
    t.wait_for("Enter API key:", WAIT);
    t.type_text("sk-mock-typed");
    t.keys(&["Enter"]);
    t.wait_for("Saved API key for mock. Credentials saved to", WAIT);
    assert_eq!(
        home.auth(),
        json!({"mock": {"type": "api_key", "key": "sk-mock-typed"}})
    );
    // The stored key is what the next request carries.
    t.type_text("hi");
    t.keys(&["Enter"]);
    t.wait_for("hello from the model", WAIT);
    assert_eq!(
        home.llm.requests().last().unwrap().header("authorization"),
        Some("Bearer sk-mock-typed")
    );

    slash(&t, "/logout");
    t.wait_for("mock ✓ configured", WAIT);
    t.keys(&["Enter"]);
    t.wait_for("Removed stored API key for mock.", WAIT);
    assert_eq!(home.auth(), json!({}));
}

/// Print mode with an expired login of `provider` whose model is at the model server.
fn run_print_with_expired(
    provider_id: &str,
    entry: Value,
    fake: &FakeProvider,
) -> (std::process::Output, Home) {
    let home = Home::new(json!({"providers": {provider_id: {
        "baseUrl": "LLM_URL/v1", "api": "openai-completions", "apiKey": "unused",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "m1", "contextWindow": 100000, "maxTokens": 1000}]
    }}}));
    std::fs::write(
        home.auth_path(),
        json!({ provider_id: entry, "other": {"type": "api_key", "key": "kept"} }).to_string(),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(home.cwd())
        .env("HOME", home.dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("PI_RS_OAUTH_TEST_SERVER", &fake.url)
        .args(["--offline", "--no-session", "--provider", provider_id])
        .args(["--model", "m1", "-p", "hi"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (out, home)
}

fn assert_lock_released(home: &Home) {
    assert!(!Path::new(&format!("{}.lock", home.auth_path().display())).exists());
}

#[test]
fn an_expired_codex_login_is_refreshed_with_a_form_and_a_new_account_id() {
    let access = jwt_with_account("acct-new");
    let answer = json!({"access_token": access, "refresh_token": "codex-r2", "expires_in": 3600});
    let fake = FakeProvider::start(move |req| match req.path() {
        "/auth.openai.com/oauth/token" => json_resp(200, answer.clone()),
        _ => json_resp(404, json!({})),
    });
    let (out, home) = run_print_with_expired(
        "openai-codex",
        json!({"type": "oauth", "access": "old", "refresh": "codex-r1", "expires": 1,
            "accountId": "acct-old"}),
        &fake,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let form = fake.requests_to("/auth.openai.com/oauth/token")[0].form();
    assert_eq!(
        form,
        HashMap::from([
            ("grant_type".to_string(), "refresh_token".to_string()),
            ("refresh_token".to_string(), "codex-r1".to_string()),
            (
                "client_id".to_string(),
                "app_EMoamEEZ73f0CkXaXp7hrann".to_string()
            ),
        ])
    );
    assert_eq!(
        home.llm.requests().last().unwrap().header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    let auth = home.auth();
    assert_eq!(auth["openai-codex"]["refresh"], "codex-r2");
    assert_eq!(auth["openai-codex"]["accountId"], "acct-new");
    assert_eq!(auth["other"]["key"], "kept");
    assert_lock_released(&home);
}

#[test]
fn an_expired_copilot_login_gets_a_new_copilot_token_for_the_stored_github_token() {
    let fake = FakeProvider::start(|req| match req.path() {
        "/api.github.com/copilot_internal/v2/token" => json_resp(
            200,
            json!({"token": "tid=new;proxy-ep=proxy.business.githubcopilot.com;",
                "expires_at": 4_000_000_000_i64}),
        ),
        _ => json_resp(418, json!({"error": {"message": "not a model server"}})),
    });
    let (out, home) = run_print_with_expired(
        "github-copilot",
        json!({"type": "oauth", "refresh": "gho_kept", "access": "tid=old", "expires": 1}),
        &fake,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let exchange = fake.requests_to("/api.github.com/copilot_internal/v2/token");
    assert_eq!(exchange.len(), 1, "{stderr}");
    assert_eq!(exchange[0].headers["authorization"], "Bearer gho_kept");
    // Requests go to the Copilot API host (pi's `modifyModels`: the individual plan's
    // for a token without `proxy-ep`), with the new Copilot token.
    let chat: Vec<Req> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path().starts_with("/api.individual.githubcopilot.com/"))
        .collect();
    assert!(!chat.is_empty(), "{stderr}");
    assert_eq!(
        chat[0].headers["authorization"],
        "Bearer tid=new;proxy-ep=proxy.business.githubcopilot.com;"
    );
    let auth = home.auth();
    assert_eq!(
        auth["github-copilot"],
        json!({"type": "oauth", "refresh": "gho_kept",
            "access": "tid=new;proxy-ep=proxy.business.githubcopilot.com;",
            "expires": 4_000_000_000_000_i64 - 300_000})
    );
    assert_lock_released(&home);
}
