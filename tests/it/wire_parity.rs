//! The wire APIs added after the first four send what the reference pi (0.73.1) sends:
//! the same task — thinking, a `read` tool call, its result, a final answer — is run by
//! pi and by our binary, each against its own loopback mock with the same script, in the
//! same project directory; both request bodies and the headers that matter must be
//! equal, after replacing the session ids (random per run) with a placeholder. Skipped,
//! with the reason printed, where node/npm are missing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::support::mock_llm::{MockLlm, RecordedRequest, Script};
use crate::support::reference_pi;

// The reference comparisons of this file are pinned to pi 0.73.1: pi 1.6's request bodies and headers (its `user-agent`, no `strict:false`, the output
// budget) are issue 27 (item 3: requests as pi 1.6 sends them).
use serde_json::{Value, json};

/// The two-step script: think and read a file, then answer. Token requests (Vertex
/// application-default credentials) get an access token.
fn script() -> Script {
    Script::from_json(
        &json!({"sequence": [
            {"thinking": "I should read the notes first.", "tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
            {"text": "The notes say hello."}
        ], "oauth_token": {"status": 200, "body": {"access_token": "ya29.parity-token", "expires_in": 3600, "token_type": "Bearer"}}})
        .to_string(),
    )
    .unwrap()
}

/// Everything about a run besides the binary.
struct Setup<'a> {
    provider: &'a str,
    model: &'a str,
    /// models.json; `{url}` becomes the mock's address.
    models: Value,
    /// Environment; `{home}` becomes the run's home, `{url}` the mock's address.
    env: Vec<(&'a str, String)>,
    /// Files written under the home (`{url}` replaced).
    files: Vec<(&'a str, String)>,
}

/// One side of the comparison: which binary, and the environment it gets.
enum Side {
    Reference,
    Ours,
}

/// What one run sent.
struct Run {
    requests: Vec<RecordedRequest>,
}

/// Runs `side` in print mode on `project` with a fresh home set up as `setup` says.
fn run(side: Side, project: &Path, setup: &Setup<'_>) -> Run {
    let server = MockLlm::start(script());
    let home = tempfile::tempdir().unwrap();
    let agent = home.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let fill = |text: &str| {
        text.replace("{url}", &server.url())
            .replace("{home}", &home.path().display().to_string())
    };
    std::fs::write(agent.join("models.json"), fill(&setup.models.to_string())).unwrap();
    for (name, text) in &setup.files {
        std::fs::write(home.path().join(name), fill(text)).unwrap();
    }
    let (provider, model) = (setup.provider, setup.model);
    let mut cmd = match side {
        Side::Reference => reference_pi::command_073(),
        Side::Ours => Command::new(env!("CARGO_BIN_EXE_pi")),
    };
    cmd.current_dir(project)
        .env("HOME", home.path())
        .env_remove("PI_CODING_AGENT_DIR")
        .args([
            "--offline",
            "--provider",
            provider,
            "--model",
            model,
            "--thinking",
            "low",
            "-p",
            "What do the notes say?",
        ]);
    for var in [
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_BASE_URL",
        "AZURE_OPENAI_RESOURCE_NAME",
        "AZURE_OPENAI_API_VERSION",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
        "MISTRAL_API_KEY",
        "OPENAI_API_KEY",
        "GOOGLE_CLOUD_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_BEARER_TOKEN_BEDROCK",
        "PI_CACHE_RETENTION",
        "CLOUDSDK_CONFIG",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_BEDROCK_SKIP_AUTH",
        "AWS_BEDROCK_FORCE_HTTP1",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in &setup.env {
        cmd.env(k, fill(v));
    }
    let out = reference_pi::run(cmd, "", Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{provider}/{model} failed: {e}"));
    assert!(out.contains("The notes say hello."), "{out}");
    Run {
        requests: server
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect(),
    }
}

/// Replaces what must differ between two runs: UUIDs (session and request ids), SigV4
/// timestamps, and the signature part of SigV4 authorisations (it covers the time and
/// the SDK's own extra headers; the signature itself is checked separately).
fn normalise(text: &str) -> String {
    let uuid =
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let amz_date = regex::Regex::new(r"\b\d{8}T\d{6}Z\b").unwrap();
    let scope_date = regex::Regex::new(r"(Credential=[A-Z0-9]+)/\d{8}/").unwrap();
    let signed = regex::Regex::new(r", SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}").unwrap();
    let text = uuid.replace_all(text, "<uuid>");
    let text = amz_date.replace_all(&text, "<amz-date>");
    let text = scope_date.replace_all(&text, "$1/<date>/");
    signed.replace_all(&text, ", <signature>").into_owned()
}

/// pi-rs words its system prompt and tool descriptions its own way (same meaning, same
/// tools and parameters), so those texts are replaced by placeholders; everything else
/// of the request must be equal.
fn mask_prose(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "description" && v.is_string() {
                    *v = json!("<description>");
                } else {
                    mask_prose(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_prose),
        Value::String(s) if s.contains("Current working directory: ") => {
            *s = "<system prompt>".into();
        }
        _ => {}
    }
}

/// What pi-rs changed on purpose to send what pi 1.6 sends, where the reference here is
/// pi 0.73.1: the output budget (now the model's maximum fitted into the window, no 32000
/// cap), `strict` flags and the edit tool's `additionalProperties: false` are masked on
/// both sides. The bodies of pi 1.6 itself are compared in `session_corpus16`.
fn mask_pi16_changes(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("strict");
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            for key in [
                "max_tokens",
                "maxTokens",
                "max_output_tokens",
                "maxOutputTokens",
                "max_completion_tokens",
            ] {
                if let Some(v) = map.get_mut(key) {
                    *v = json!("<budget>");
                }
            }
            map.values_mut().for_each(mask_pi16_changes);
        }
        Value::Array(items) => items.iter_mut().for_each(mask_pi16_changes),
        _ => {}
    }
}

/// The request as compared: path, the named headers and the body.
fn view(request: &RecordedRequest, headers: &[&str]) -> Value {
    let headers: serde_json::Map<String, Value> = headers
        .iter()
        .map(|h| (h.to_string(), json!(request.header(h))))
        .collect();
    let mut body = request.body.clone();
    mask_prose(&mut body);
    mask_pi16_changes(&mut body);
    let text = json!({"path": request.path, "headers": headers, "body": body}).to_string();
    serde_json::from_str(&normalise(&text)).unwrap()
}

/// Runs both sides and asserts that every model request is the same (token requests,
/// when there are any, must be equal too). Returns ours.
fn assert_same_requests(setup: &Setup<'_>, headers: &[&str]) -> Vec<RecordedRequest> {
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "hello\n").unwrap();
    let theirs = run(Side::Reference, project.path(), setup);
    let ours = run(Side::Ours, project.path(), setup);
    let (their_tokens, their_calls): (Vec<_>, Vec<_>) = theirs
        .requests
        .into_iter()
        .partition(|r| r.path.ends_with("/token"));
    let (our_tokens, our_calls): (Vec<_>, Vec<_>) = ours
        .requests
        .into_iter()
        .partition(|r| r.path.ends_with("/token"));
    assert_eq!(their_calls.len(), 2, "pi sent {their_calls:?}");
    assert_eq!(our_calls.len(), 2, "we sent {our_calls:?}");
    for (t, o) in their_calls.iter().zip(&our_calls) {
        pretty_assertions::assert_eq!(view(o, headers), view(t, headers));
    }
    assert_eq!(
        their_tokens.len().min(1),
        our_tokens.len().min(1),
        "token requests"
    );
    our_calls.into_iter().chain(our_tokens).collect()
}

macro_rules! require_reference_pi {
    () => {
        if let Err(why) = reference_pi::available_073() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn mistral_conversations_requests_equal_pis() {
    require_reference_pi!();
    let models = json!({"providers": {"mistral": {
        "baseUrl": "{url}/mistral", "api": "mistral-conversations", "apiKey": "mistral-test-key",
        "models": [{"id": "magistral-medium-latest", "reasoning": true, "maxTokens": 40000}]
    }}});
    let setup = Setup {
        provider: "mistral",
        model: "magistral-medium-latest",
        models,
        env: vec![],
        files: vec![],
    };
    let requests = assert_same_requests(
        &setup,
        &["authorization", "accept", "content-type", "x-affinity"],
    );
    let second = &requests[1].body;
    assert_eq!(second["prompt_mode"], "reasoning", "{second}");
    // pi 1.6: the model's maximum (40000), fitted into the window; 0.73 capped it at 32000.
    assert_eq!(second["max_tokens"], 40000, "{second}");
    assert!(requests[1].header("x-affinity").is_some());
}

#[test]
fn azure_openai_responses_requests_equal_pis() {
    require_reference_pi!();
    let models = json!({"providers": {"azure-openai-responses": {
        "baseUrl": "{url}/openai/v1", "api": "azure-openai-responses", "apiKey": "azure-test-key",
        "models": [{"id": "gpt-5", "reasoning": true}]
    }}});
    let setup = Setup {
        provider: "azure-openai-responses",
        model: "gpt-5",
        models,
        env: vec![("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-5=my-gpt5".into())],
        files: vec![],
    };
    let requests = assert_same_requests(
        &setup,
        &["api-key", "authorization", "content-type", "session_id"],
    );
    assert_eq!(requests[1].path, "/openai/v1/responses?api-version=v1");
    assert_eq!(requests[1].body["model"], "my-gpt5");
    assert_eq!(requests[1].header("api-key"), Some("azure-test-key"));
}

/// A ChatGPT access token as the OAuth flow stores it: a JWT with the account claim.
fn codex_token() -> String {
    use base64::Engine as _;
    let enc = |v: Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    format!(
        "{}.{}.signature",
        enc(json!({"alg": "RS256", "typ": "JWT"})),
        enc(
            json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-parity-1"}, "exp": 4_000_000_000u64})
        )
    )
}

#[test]
fn openai_codex_responses_requests_equal_pis() {
    require_reference_pi!();
    // The token as the provider key (the sign-in stores it in auth.json; both binaries
    // read such entries the same way, see `oauth_refresh`).
    let models = json!({"providers": {"openai-codex": {
        "baseUrl": "{url}/backend-api", "api": "openai-codex-responses", "apiKey": codex_token(),
        "models": [{"id": "gpt-5.1-codex", "reasoning": true}]
    }}});
    let setup = Setup {
        provider: "openai-codex",
        model: "gpt-5.1-codex",
        models,
        env: vec![],
        files: vec![],
    };
    let requests = assert_same_requests(
        &setup,
        &[
            "authorization",
            "chatgpt-account-id",
            "originator",
            "openai-beta",
            "accept",
            "content-type",
            "session_id",
            "x-client-request-id",
        ],
    );
    assert_eq!(requests[1].path, "/backend-api/codex/responses");
    // pi loads `node:os` asynchronously and sends "pi (browser)" until it has; pi-rs
    // always sends the platform form pi means to send.
    let agent = requests[0].header("user-agent").unwrap();
    let re = regex::Regex::new(
        r"^pi \((linux|darwin|win32|freebsd|openbsd) \S+; (x64|arm64|ia32|\w+)\)$",
    )
    .unwrap();
    assert!(re.is_match(agent), "{agent}");
    assert_eq!(
        requests[1].header("chatgpt-account-id"),
        Some("acct-parity-1")
    );
    assert!(requests[1].body["instructions"].is_string());
}

#[test]
fn google_vertex_with_an_api_key_requests_equal_pis() {
    require_reference_pi!();
    let models = json!({"providers": {"google-vertex": {
        "baseUrl": "{url}", "api": "google-vertex", "apiKey": "vertex-test-key",
        "models": [{"id": "gemini-2.5-pro", "reasoning": true}]
    }}});
    let setup = Setup {
        provider: "google-vertex",
        model: "gemini-2.5-pro",
        models,
        env: vec![],
        files: vec![],
    };
    let requests =
        assert_same_requests(&setup, &["x-goog-api-key", "authorization", "content-type"]);
    assert_eq!(
        requests[1].path,
        "/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        requests[1].body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        2048
    );
}

/// pi's Google auth library always exchanges credentials at Google's own token URL, so
/// the reference cannot be pointed at the loopback server here: this runs our binary
/// alone and checks the exchange and the request against what pi's library does.
#[test]
fn google_vertex_with_a_service_account_signs_a_jwt_and_sends_the_token() {
    let models = json!({"providers": {"google-vertex": {
        "baseUrl": "{url}", "api": "google-vertex", "apiKey": "gcp-vertex-credentials",
        "models": [{"id": "gemini-2.5-flash", "reasoning": true}]
    }}});
    let account = std::fs::read_to_string(format!(
        "{}/tests/fixtures/vertex/service_account.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let setup = Setup {
        provider: "google-vertex",
        model: "gemini-2.5-flash",
        models,
        env: vec![
            ("GOOGLE_APPLICATION_CREDENTIALS", "{home}/sa.json".into()),
            ("GOOGLE_CLOUD_PROJECT", "pi-test".into()),
            ("GOOGLE_CLOUD_LOCATION", "us-central1".into()),
        ],
        files: vec![("sa.json", account)],
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "hello\n").unwrap();
    let requests = run(Side::Ours, project.path(), &setup).requests;
    let (tokens, calls): (Vec<_>, Vec<_>) = requests
        .into_iter()
        .partition(|r| r.path.ends_with("/token"));
    // One exchange: the token is reused for the second request.
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in &calls {
        assert_eq!(
            call.header("authorization"),
            Some("Bearer ya29.parity-token")
        );
        assert_eq!(call.header("x-goog-api-key"), None);
        assert_eq!(
            call.path,
            "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
    }
    let token = &tokens[0];
    assert_eq!(
        token.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    let form: std::collections::HashMap<String, String> = token
        .raw_body
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.to_string(), v.replace("%3A", ":")))
        .collect();
    assert_eq!(
        form["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let parts: Vec<&str> = form["assertion"].split('.').collect();
    assert_eq!(parts.len(), 3);
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = serde_json::from_slice(&b64.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(
        header,
        json!({"alg": "RS256", "typ": "JWT", "kid": "key-1"})
    );
    let claims: Value = serde_json::from_slice(&b64.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["iss"], "pi-test@pi-test.iam.gserviceaccount.com");
    assert_eq!(
        claims["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
    assert!(claims["aud"].as_str().unwrap().ends_with("/token"));
    assert_eq!(
        claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
        3600
    );
    let public = base64::engine::general_purpose::STANDARD
        .decode(
            std::fs::read_to_string(format!(
                "{}/tests/fixtures/vertex/public_key.der.b64",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap()
            .trim(),
        )
        .unwrap();
    let key = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public,
    );
    let signed = format!("{}.{}", parts[0], parts[1]);
    key.verify(signed.as_bytes(), &b64.decode(parts[2]).unwrap())
        .expect("the assertion is signed with the service account's key");
}

/// `gcloud auth application-default login`'s file (`authorized_user`) found through
/// `CLOUDSDK_CONFIG`: its refresh token is traded for an access token. (pi's library
/// always uses Google's token URL, so this too runs our binary alone.)
#[test]
fn google_vertex_with_gcloud_credentials_refreshes_and_sends_the_token() {
    let models = json!({"providers": {"google-vertex": {
        "baseUrl": "{url}", "api": "google-vertex", "apiKey": "gcp-vertex-credentials",
        "models": [{"id": "gemini-2.5-flash", "reasoning": true}]
    }}});
    let gcloud = json!({"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "csecret", "refresh_token": "1//refresh", "quota_project_id": "quota-proj",
        "token_uri": "{url}/token"});
    let setup = Setup {
        provider: "google-vertex",
        model: "gemini-2.5-flash",
        models,
        env: vec![
            ("CLOUDSDK_CONFIG", "{home}".into()),
            ("GOOGLE_CLOUD_PROJECT", "pi-test".into()),
            ("GOOGLE_CLOUD_LOCATION", "global".into()),
        ],
        files: vec![("application_default_credentials.json", gcloud.to_string())],
    };
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "hello\n").unwrap();
    let requests = run(Side::Ours, project.path(), &setup).requests;
    let (tokens, calls): (Vec<_>, Vec<_>) = requests
        .into_iter()
        .partition(|r| r.path.ends_with("/token"));
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert_eq!(
        tokens[0].raw_body,
        "grant_type=refresh_token&client_id=cid.apps.googleusercontent.com&client_secret=csecret&refresh_token=1%2F%2Frefresh"
    );
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in &calls {
        assert_eq!(
            call.header("authorization"),
            Some("Bearer ya29.parity-token")
        );
        assert_eq!(call.header("x-goog-user-project"), Some("quota-proj"));
    }
}

#[test]
fn bedrock_converse_stream_requests_equal_pis() {
    require_reference_pi!();
    let models = json!({"providers": {"amazon-bedrock": {
        "baseUrl": "{url}", "api": "bedrock-converse-stream", "apiKey": "unused-by-bedrock",
        "models": [{"id": "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "name": "Claude Sonnet 4.5", "reasoning": true, "maxTokens": 64000}]
    }}});
    let setup = Setup {
        provider: "amazon-bedrock",
        model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        models,
        env: vec![
            ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE".into()),
            (
                "AWS_SECRET_ACCESS_KEY",
                "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            ),
            ("AWS_SESSION_TOKEN", "session-token".into()),
            ("AWS_REGION", "eu-west-1".into()),
            // The SDK speaks HTTP/2 by default; the loopback mock speaks HTTP/1.1.
            ("AWS_BEDROCK_FORCE_HTTP1", "1".into()),
        ],
        files: vec![],
    };
    let requests = assert_same_requests(
        &setup,
        &[
            "authorization",
            "x-amz-date",
            "x-amz-security-token",
            "content-type",
        ],
    );
    assert_eq!(
        requests[1].path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    // Our signature is right for what arrived: recompute it from the received request.
    for request in &requests[..2] {
        let auth = request.header("authorization").unwrap();
        let signed_names = auth
            .split("SignedHeaders=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap();
        let headers: Vec<(String, String)> = signed_names
            .split(';')
            .map(|n| (n.to_string(), request.header(n).unwrap().to_string()))
            .collect();
        let amz_date = request.header("x-amz-date").unwrap();
        let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
        let expected = pi::ai::providers::sigv4::authorization(
            &pi::ai::providers::sigv4::Credentials {
                access_key_id: "AKIDEXAMPLE".into(),
                secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
                session_token: Some("session-token".into()),
            },
            &pi::ai::providers::sigv4::SigningInput {
                method: "POST",
                path,
                query,
                headers: &headers,
                body: request.raw_body.as_bytes(),
                region: "eu-west-1",
                service: "bedrock",
                amz_date,
                double_encode_path: true,
            },
        );
        assert_eq!(auth, expected);
    }
}
