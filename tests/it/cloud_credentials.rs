//! Bedrock and Vertex credentials from the sources the AWS SDK's default chain and
//! Google's application-default credentials find, end to end: the built `pi -p` asks a
//! loopback stand-in for STS, the SSO portal, a container or instance metadata endpoint,
//! Google STS or the GCE metadata server, then signs (Bedrock) or authorises (Vertex) its
//! model request to the loopback model server with what it got. Also Bedrock errors
//! named by `x-amzn-errortype`. No network.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::http_stub::{HttpStub, StubRequest, StubResponse};
use crate::support::mock_llm::RecordedRequest;
use crate::support::pi_project::Project;
use crate::support::reference_pi;

pub(crate) const BEDROCK_MODEL: &str = "anthropic.claude-3-5-haiku-20241022-v1:0";

/// `pi --offline --provider P --model M -p hi` in `p` with only PATH, HOME and `env`.
pub(crate) fn pi(
    p: &Project,
    reference: bool,
    provider: &str,
    model: &str,
    env: &[(&str, String)],
) -> Output {
    let mut cmd = if reference {
        Command::new(reference_pi::script())
    } else {
        Command::new(env!("CARGO_BIN_EXE_pi"))
    };
    cmd.current_dir(p.cwd())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.dir.path().join("home"))
        .envs(env.iter().map(|(k, v)| (k, v.as_str())))
        .args([
            "--offline",
            "--provider",
            provider,
            "--model",
            model,
            "-p",
            "hi",
        ])
        .stdin(Stdio::null());
    cmd.output().unwrap()
}

/// A project whose `amazon-bedrock` provider points at `base` (the model server when
/// `None`).
pub(crate) fn bedrock_project(base: Option<&str>) -> Project {
    let p = Project::new(json!({"default": {"text": "signed ok"}}));
    let url = base.map(str::to_string).unwrap_or_else(|| p.server.url());
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": url}}});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    p
}

pub(crate) fn home_file(p: &Project, relative: &str, text: &str) -> String {
    let path = p.dir.path().join("home").join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs pi on Bedrock and returns the one model request, after checking the answer.
pub(crate) fn bedrock_request(p: &Project, env: &[(&str, String)]) -> RecordedRequest {
    let out = pi(p, false, "amazon-bedrock", BEDROCK_MODEL, env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "signed ok");
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].clone()
}

/// Checks the request is signed with access key `key_id` and session token `token`.
pub(crate) fn assert_signed_with(request: &RecordedRequest, key_id: &str, token: &str) {
    let auth = request.header("authorization").unwrap();
    assert!(
        auth.starts_with(&format!("AWS4-HMAC-SHA256 Credential={key_id}/")),
        "{auth}"
    );
    assert_eq!(request.header("x-amz-security-token"), Some(token));
}

pub(crate) fn env(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

pub(crate) fn ok_json(body: Value) -> StubResponse {
    (200, Vec::new(), body.to_string())
}

pub(crate) fn not_found() -> StubResponse {
    (404, Vec::new(), "not found".into())
}

#[test]
fn bedrock_runs_the_profiles_credential_process() {
    let p = bedrock_project(None);
    let creds = json!({"Version": 1, "AccessKeyId": "ASIAPROCESS", "SecretAccessKey": "s3cret",
        "SessionToken": "process-token", "Expiration": "2999-01-01T00:00:00Z"});
    let printed = home_file(&p, "creds.json", &creds.to_string());
    home_file(
        &p,
        ".aws/config",
        &format!("[profile dev]\nregion = us-west-2\ncredential_process = cat {printed}\n"),
    );
    let vars = env(&[("AWS_PROFILE", "dev"), ("AWS_REGION", "us-west-2")]);
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIAPROCESS", "process-token");
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped the reference side: {why}");
        return;
    }
    // The reference pi's SDK runs the same command and signs with the same key.
    let theirs = bedrock_project(None);
    let printed = home_file(&theirs, "creds.json", &creds.to_string());
    home_file(
        &theirs,
        ".aws/config",
        &format!("[profile dev]\nregion = us-west-2\ncredential_process = cat {printed}\n"),
    );
    let mut vars = vars;
    vars.push(("AWS_BEDROCK_FORCE_HTTP1", "1".into()));
    let out = pi(&theirs, true, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert!(out.status.success(), "{out:?}");
    assert_signed_with(&theirs.server.requests()[0], "ASIAPROCESS", "process-token");
}

#[test]
fn bedrock_assumes_the_role_of_a_web_identity_token() {
    let sts = HttpStub::start(|r: &StubRequest| {
        if r.method == "POST" && r.path() == "/sts.eu-west-1.amazonaws.com/" {
            let xml = "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>web-secret</SecretAccessKey><SessionToken>web-token</SessionToken><Expiration>2999-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
            (
                200,
                vec![("Content-Type".into(), "text/xml".into())],
                xml.into(),
            )
        } else {
            not_found()
        }
    });
    let p = bedrock_project(None);
    let token_file = home_file(&p, "token.jwt", "eyJ.web.identity\n");
    let mut vars = env(&[
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/pi"),
        ("AWS_ROLE_SESSION_NAME", "pi-session"),
        ("AWS_REGION", "eu-west-1"),
    ]);
    vars.push(("AWS_WEB_IDENTITY_TOKEN_FILE", token_file));
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIAWEB", "web-token");
    let asked = sts.requests();
    assert_eq!(asked.len(), 1);
    let form = asked[0].form();
    assert_eq!(form["Action"], "AssumeRoleWithWebIdentity");
    assert_eq!(form["Version"], "2011-06-15");
    assert_eq!(form["RoleArn"], "arn:aws:iam::123456789012:role/pi");
    assert_eq!(form["RoleSessionName"], "pi-session");
    assert_eq!(form["WebIdentityToken"], "eyJ.web.identity");
}

fn container_stub() -> HttpStub {
    HttpStub::start(|r: &StubRequest| {
        let authorised = r.header("authorization") == Some("container-auth");
        match (r.path(), authorised) {
            ("/v2/credentials/task" | "/169.254.170.2/v2/credentials/task", true) => ok_json(
                json!({"AccessKeyId": "ASIATASK", "SecretAccessKey": "task-secret",
                       "Token": "task-token", "Expiration": "2999-01-01T00:00:00Z"}),
            ),
            (_, false) => (401, Vec::new(), "unauthorised".into()),
            _ => not_found(),
        }
    })
}

#[test]
fn bedrock_takes_container_credentials_from_the_full_uri_with_its_token() {
    let stub = container_stub();
    let p = bedrock_project(None);
    let mut vars = env(&[
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth"),
        ("AWS_REGION", "us-east-1"),
    ]);
    vars.push((
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        format!("{}/v2/credentials/task", stub.url),
    ));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIATASK", "task-token");
    assert_eq!(stub.requests().len(), 1);
}

#[test]
fn bedrock_takes_container_credentials_from_the_relative_uri_and_a_token_file() {
    let stub = container_stub();
    let p = bedrock_project(None);
    let token_file = home_file(&p, "container-token", "container-auth\n");
    let mut vars = env(&[
        (
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "/v2/credentials/task",
        ),
        ("AWS_REGION", "us-east-1"),
    ]);
    vars.push(("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file));
    vars.push(("PI_RS_AWS_TEST_SERVER", stub.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIATASK", "task-token");
    assert_eq!(
        stub.requests()[0].path(),
        "/169.254.170.2/v2/credentials/task"
    );
}

fn imds_stub() -> HttpStub {
    HttpStub::start(|r: &StubRequest| {
        let has_token = r.header("x-aws-ec2-metadata-token") == Some("imds-session");
        match (r.method.as_str(), r.path()) {
            ("PUT", "/latest/api/token")
                if r.header("x-aws-ec2-metadata-token-ttl-seconds").is_some() =>
            {
                (200, Vec::new(), "imds-session".into())
            }
            ("GET", "/latest/meta-data/iam/security-credentials/") if has_token => {
                (200, Vec::new(), "pi-instance-role\n".into())
            }
            ("GET", "/latest/meta-data/iam/security-credentials/pi-instance-role") if has_token => {
                ok_json(json!({"Code": "Success", "AccessKeyId": "ASIAIMDS",
                    "SecretAccessKey": "imds-secret", "Token": "imds-token",
                    "Expiration": "2999-01-01T00:00:00Z"}))
            }
            _ => (401, Vec::new(), "no".into()),
        }
    })
}

#[test]
fn bedrock_falls_back_to_instance_metadata_with_an_imdsv2_token() {
    let stub = imds_stub();
    let p = bedrock_project(None);
    // A profile without keys: the chain ends at the instance metadata service.
    home_file(
        &p,
        ".aws/config",
        "[profile instance]\nregion = ap-south-1\n",
    );
    let mut vars = env(&[("AWS_PROFILE", "instance")]);
    vars.push(("AWS_EC2_METADATA_SERVICE_ENDPOINT", stub.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIAIMDS", "imds-token");
    let auth = request.header("authorization").unwrap();
    assert!(auth.contains("/ap-south-1/bedrock/aws4_request"), "{auth}");
    let paths: Vec<String> = stub
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path()))
        .collect();
    assert_eq!(
        paths,
        [
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/",
            "GET /latest/meta-data/iam/security-credentials/pi-instance-role"
        ]
    );
}

#[test]
fn instance_metadata_is_not_asked_when_disabled() {
    let stub = imds_stub();
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile instance]\nregion = ap-south-1\n",
    );
    let mut vars = env(&[
        ("AWS_PROFILE", "instance"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]);
    vars.push(("AWS_EC2_METADATA_SERVICE_ENDPOINT", stub.url.clone()));
    let out = pi(&p, false, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Could not load credentials from any providers"),
        "{stderr}"
    );
    assert!(stub.requests().is_empty());
    assert!(p.server.requests().is_empty());
}

pub(crate) fn sha1_hex(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn bedrock_trades_the_cached_sso_token_for_role_credentials() {
    let portal = HttpStub::start(|r: &StubRequest| {
        let form = r.form();
        let ok = r.path() == "/portal.sso.eu-central-1.amazonaws.com/federation/credentials"
            && r.header("x-amz-sso_bearer_token") == Some("sso-access")
            && form.get("account_id").map(String::as_str) == Some("111122223333")
            && form.get("role_name").map(String::as_str) == Some("Developer");
        if ok {
            ok_json(json!({"roleCredentials": {"accessKeyId": "ASIASSO",
                "secretAccessKey": "sso-secret", "sessionToken": "sso-token",
                "expiration": 32503680000000u64}}))
        } else {
            (403, Vec::new(), "{\"message\":\"denied\"}".into())
        }
    });
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile corp-dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Developer\nregion = us-east-2\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n",
    );
    let cache = json!({"accessToken": "sso-access", "expiresAt": "2999-01-01T00:00:00Z",
        "region": "eu-central-1", "startUrl": "https://corp.awsapps.com/start"});
    home_file(
        &p,
        &format!(".aws/sso/cache/{}.json", sha1_hex("corp")),
        &cache.to_string(),
    );
    let mut vars = env(&[("AWS_PROFILE", "corp-dev")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", portal.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIASSO", "sso-token");
    assert_eq!(portal.requests().len(), 1);
}

#[test]
fn bedrock_errors_are_named_by_the_x_amzn_errortype_header() {
    let endpoint = HttpStub::start(|_r: &StubRequest| {
        (
            400,
            vec![(
                "x-amzn-errortype".into(),
                "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/".into(),
            )],
            "{\"message\":\"The provided model identifier is invalid.\"}".into(),
        )
    });
    let p = bedrock_project(Some(&endpoint.url));
    let vars = env(&[
        ("AWS_ACCESS_KEY_ID", "AKID"),
        ("AWS_SECRET_ACCESS_KEY", "secret"),
        ("AWS_REGION", "us-east-1"),
    ]);
    let out = pi(&p, false, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Validation error: The provided model identifier is invalid."),
        "{stderr}"
    );
}

// ---- Vertex ------------------------------------------------------------------------------

pub(crate) fn vertex_project() -> Project {
    let p = Project::new(json!({"default": {"text": "vertex ok"}}));
    let models = json!({"providers": {"google-vertex": {
        "baseUrl": p.server.url(), "apiKey": "gcp-vertex-credentials"
    }}});
    std::fs::write(p.agent_dir().join("models.json"), models.to_string()).unwrap();
    p
}

/// Runs pi on Vertex and returns the `authorization` of its one model request.
pub(crate) fn vertex_authorization(p: &Project, env: &[(&str, String)]) -> String {
    let mut all = vec![
        ("GOOGLE_CLOUD_PROJECT", "pi-test".to_string()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".to_string()),
    ];
    all.extend(env.iter().cloned());
    let out = pi(p, false, "google-vertex", "gemini-2.5-flash", &all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "vertex ok");
    let requests = p.server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].header("authorization").unwrap().to_string()
}

/// Google STS and IAM credentials: the subject token `subject` is traded for
/// `federated`, which impersonation trades for `sa-token`.
pub(crate) fn google_sts(subject: &'static str) -> HttpStub {
    HttpStub::start(move |r: &StubRequest| match r.path() {
        "/v1/token" => {
            let form = r.form();
            let ok = form.get("subject_token").map(String::as_str) == Some(subject)
                && form["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
                && form["requested_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
                && form["scope"] == "https://www.googleapis.com/auth/cloud-platform";
            if ok {
                ok_json(json!({"access_token": "federated", "issued_token_type":
                    "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer",
                    "expires_in": 3600}))
            } else {
                (400, Vec::new(), "{\"error\":\"invalid_grant\"}".into())
            }
        }
        "/v1/projects/-/serviceAccounts/pi@proj.iam.gserviceaccount.com:generateAccessToken" => {
            if r.header("authorization") == Some("Bearer federated") {
                ok_json(json!({"accessToken": "sa-token", "expireTime": "2999-01-01T00:00:00Z"}))
            } else {
                (401, Vec::new(), "{}".into())
            }
        }
        _ => not_found(),
    })
}

pub(crate) fn external_account(sts: &HttpStub, source: Value, impersonate: bool) -> Value {
    let mut creds = json!({
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/prov",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": format!("{}/v1/token", sts.url),
        "credential_source": source,
    });
    if impersonate {
        creds["service_account_impersonation_url"] = json!(format!(
            "{}/v1/projects/-/serviceAccounts/pi@proj.iam.gserviceaccount.com:generateAccessToken",
            sts.url
        ));
    }
    creds
}

#[test]
fn vertex_external_account_from_a_file_with_impersonation() {
    let sts = google_sts("file-subject");
    let p = vertex_project();
    let subject = home_file(&p, "subject.jwt", "file-subject\n");
    let creds = external_account(&sts, json!({"file": subject}), true);
    let adc = home_file(&p, "external.json", &creds.to_string());
    let auth = vertex_authorization(&p, &[("GOOGLE_APPLICATION_CREDENTIALS", adc)]);
    assert_eq!(auth, "Bearer sa-token");
    let asked: Vec<String> = sts
        .requests()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let impersonation = &sts.requests()[1];
    let body: Value = serde_json::from_str(&impersonation.body).unwrap();
    assert_eq!(
        body,
        json!({"scope": ["https://www.googleapis.com/auth/cloud-platform"], "lifetime": "3600s"})
    );
}

#[test]
fn vertex_external_account_from_a_url_with_a_json_field() {
    let sts = google_sts("url-subject");
    let source = HttpStub::start(|r: &StubRequest| {
        if r.path() == "/token" && r.header("metadata") == Some("True") {
            ok_json(json!({"value": "url-subject"}))
        } else {
            not_found()
        }
    });
    let p = vertex_project();
    let creds = external_account(
        &sts,
        json!({"url": format!("{}/token", source.url), "headers": {"Metadata": "True"},
               "format": {"type": "json", "subject_token_field_name": "value"}}),
        false,
    );
    let adc = home_file(&p, "external.json", &creds.to_string());
    let auth = vertex_authorization(&p, &[("GOOGLE_APPLICATION_CREDENTIALS", adc)]);
    assert_eq!(auth, "Bearer federated");
    assert_eq!(source.requests().len(), 1);
}

#[test]
fn vertex_without_a_credentials_file_asks_the_gce_metadata_server() {
    let metadata = HttpStub::start(|r: &StubRequest| {
        let flavor = vec![("Metadata-Flavor".to_string(), "Google".to_string())];
        if r.path() == "/computeMetadata/v1/instance/service-accounts/default/token"
            && r.header("metadata-flavor") == Some("Google")
        {
            (
                200,
                flavor,
                json!({"access_token": "gce-token", "expires_in": 3599, "token_type": "Bearer"})
                    .to_string(),
            )
        } else {
            (404, flavor, "not found".into())
        }
    });
    let p = vertex_project();
    let host = metadata.url.trim_start_matches("http://").to_string();
    let auth = vertex_authorization(&p, &[("GCE_METADATA_HOST", host)]);
    assert_eq!(auth, "Bearer gce-token");
    assert_eq!(metadata.requests().len(), 1);
}

#[test]
fn an_answer_without_the_metadata_flavor_is_not_trusted() {
    let impostor = HttpStub::start(|_r: &StubRequest| {
        ok_json(json!({"access_token": "stolen", "expires_in": 3599}))
    });
    let p = vertex_project();
    let out = pi(
        &p,
        false,
        "google-vertex",
        "gemini-2.5-flash",
        &[
            ("GOOGLE_CLOUD_PROJECT", "pi-test".to_string()),
            ("GOOGLE_CLOUD_LOCATION", "us-central1".to_string()),
            ("GCE_METADATA_HOST", impostor.url),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Metadata-Flavor"), "{stderr}");
    assert!(p.server.requests().is_empty());
}
