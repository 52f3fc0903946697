//! Vertex `external_account` credentials whose subject token comes from a program or
//! from AWS, end to end: the built `pi -p` runs the credential program (only when
//! `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`, bounded by `timeout_millis`, using a
//! valid `output_file` instead when there is one) or signs an AWS `GetCallerIdentity`
//! request with credentials from the environment or from loopback IMDSv2 stand-ins,
//! trades the subject token at a loopback Google STS, and authorises its model request
//! with the result. No network.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cloud_credentials::{
    external_account, google_sts, home_file, not_found, ok_json, pi, vertex_authorization,
    vertex_project,
};
use crate::support::http_stub::{HttpStub, StubRequest};
use crate::support::pi_project::Project;

const ALLOW: &str = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES";
const AUDIENCE: &str =
    "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/pool/providers/prov";

/// An executable script under the home; returns its path.
fn script(p: &Project, name: &str, body: &str) -> String {
    let path = home_file(p, name, &format!("#!/bin/sh\n{body}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

fn jwt_response(token: &str) -> String {
    json!({"version": 1, "success": true, "token_type": "urn:ietf:params:oauth:token-type:jwt",
        "id_token": token, "expiration_time": 4_000_000_000u64})
    .to_string()
}

/// A failed run: exit code 1, nothing asked of the model server; returns stderr.
fn refused(p: &Project, env: &[(&str, String)]) -> String {
    let mut all = vec![
        ("GOOGLE_CLOUD_PROJECT", "pi-test".to_string()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".to_string()),
    ];
    all.extend(env.iter().cloned());
    let out = pi(p, false, "google-vertex", "gemini-2.5-flash", &all);
    assert_eq!(out.status.code(), Some(1));
    assert!(p.server.requests().is_empty());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_executable_source_runs_the_program_with_googles_environment() {
    let sts = google_sts("exec-subject");
    let p = vertex_project();
    let seen = p.dir.path().join("home/seen-env");
    let program = script(
        &p,
        "bin/credential tool",
        &format!(
            "printf '%s|%s|%s|%s|%s' \"$GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE\" \"$GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE\" \
             \"$GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE\" \"$GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL\" \"$1\" > '{}'\n\
             echo '{}'\n",
            seen.display(),
            jwt_response("exec-subject")
        ),
    );
    let creds = external_account(
        &sts,
        json!({"executable": {"command": format!("\"{program}\" --flag"), "timeout_millis": 5000}}),
        true,
    );
    let adc = home_file(&p, "external.json", &creds.to_string());
    let auth = vertex_authorization(
        &p,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", adc),
            (ALLOW, "1".to_string()),
        ],
    );
    assert_eq!(auth, "Bearer sa-token");
    assert_eq!(
        std::fs::read_to_string(seen).unwrap(),
        format!(
            "{AUDIENCE}|urn:ietf:params:oauth:token-type:jwt|0|pi@proj.iam.gserviceaccount.com|--flag"
        )
    );
}

#[test]
fn an_executable_source_needs_the_allow_variable() {
    let sts = google_sts("exec-subject");
    let p = vertex_project();
    let ran = p.dir.path().join("home/ran");
    let program = script(&p, "tool", &format!("touch '{}'\n", ran.display()));
    let creds = external_account(&sts, json!({"executable": {"command": program}}), false);
    let adc = home_file(&p, "external.json", &creds.to_string());
    let stderr = refused(&p, &[("GOOGLE_APPLICATION_CREDENTIALS", adc)]);
    assert!(stderr.contains(ALLOW), "{stderr}");
    assert!(!ran.exists());
    assert!(sts.requests().is_empty());
}

#[test]
fn a_valid_output_file_is_used_instead_of_running_the_program() {
    let sts = google_sts("cached-subject");
    let p = vertex_project();
    let ran = p.dir.path().join("home/ran");
    let program = script(&p, "tool", &format!("touch '{}'\nexit 1\n", ran.display()));
    let cache = home_file(&p, "cache.json", &jwt_response("cached-subject"));
    let creds = external_account(
        &sts,
        json!({"executable": {"command": program, "output_file": cache}}),
        false,
    );
    let adc = home_file(&p, "external.json", &creds.to_string());
    let auth = vertex_authorization(
        &p,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", adc),
            (ALLOW, "1".to_string()),
        ],
    );
    assert_eq!(auth, "Bearer federated");
    assert!(!ran.exists());
}

#[test]
fn an_expired_output_file_runs_the_program_and_a_failure_is_reported() {
    let sts = google_sts("fresh-subject");
    let p = vertex_project();
    let failure = json!({"version": 1, "success": false, "code": "401", "message": "no session"});
    let program = script(&p, "tool", &format!("echo '{failure}'\n"));
    let expired = json!({"version": 1, "success": true, "token_type":
        "urn:ietf:params:oauth:token-type:jwt", "id_token": "old", "expiration_time": 1});
    let cache = home_file(&p, "cache.json", &expired.to_string());
    let creds = external_account(
        &sts,
        json!({"executable": {"command": program, "output_file": cache}}),
        false,
    );
    let adc = home_file(&p, "external.json", &creds.to_string());
    let stderr = refused(
        &p,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", adc),
            (ALLOW, "1".to_string()),
        ],
    );
    assert!(
        stderr.contains("The executable failed with exit code: 401 and error message: no session."),
        "{stderr}"
    );
}

#[test]
fn a_program_that_overruns_its_timeout_is_stopped() {
    let sts = google_sts("late");
    let p = vertex_project();
    let runs = p.dir.path().join("home/runs");
    let program = script(
        &p,
        "tool",
        &format!("echo run >> '{}'\nsleep 60\n", runs.display()),
    );
    let creds = external_account(
        &sts,
        json!({"executable": {"command": program, "timeout_millis": 5000}}),
        false,
    );
    let adc = home_file(&p, "external.json", &creds.to_string());
    let started = Instant::now();
    let stderr = refused(
        &p,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", adc),
            (ALLOW, "1".to_string()),
        ],
    );
    assert!(
        stderr.contains("The executable failed to finish within the timeout specified."),
        "{stderr}"
    );
    // Each attempt (pi retries the request) was stopped at its 5 s bound, not after the
    // program's 60 s.
    let attempts = std::fs::read_to_string(&runs).unwrap().lines().count() as u64;
    eprintln!("attempts {attempts}, {:?}", started.elapsed());
    assert!(attempts >= 1);
    assert!(started.elapsed() < Duration::from_secs(5 * attempts + 25));
}

/// Google STS accepting any subject token; the tokens it got are in its requests.
fn any_sts() -> HttpStub {
    HttpStub::start(|r: &StubRequest| match r.path() {
        "/v1/token" => ok_json(json!({"access_token": "federated", "expires_in": 3600})),
        _ => not_found(),
    })
}

/// The subject token STS got, decoded from its `encodeURIComponent` form.
fn aws_subject(sts: &HttpStub) -> Value {
    let requests = sts.requests();
    assert_eq!(requests.len(), 1);
    let form = requests[0].form();
    assert_eq!(
        form["subject_token_type"],
        "urn:ietf:params:aws:token-type:aws4_request"
    );
    let token = &form["subject_token"];
    assert!(!token.contains(['{', '"', ' ']), "{token}");
    let decoded = reqwest::Url::parse(&format!("http://x/?t={token}"))
        .unwrap()
        .query_pairs()
        .next()
        .unwrap()
        .1
        .into_owned();
    serde_json::from_str(&decoded).unwrap()
}

fn header<'a>(subject: &'a Value, key: &str) -> Option<&'a str> {
    subject["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["key"] == key)
        .and_then(|h| h["value"].as_str())
}

/// Checks the signature of the serialised request with the crate's SigV4 signer.
fn assert_signature(
    subject: &Value,
    key_id: &str,
    secret: &str,
    token: Option<&str>,
    region: &str,
) {
    use pi::ai::providers::sigv4::{Credentials, SigningInput, authorization};
    let url = reqwest::Url::parse(subject["url"].as_str().unwrap()).unwrap();
    let date = header(subject, "x-amz-date").unwrap();
    let mut signed = vec![
        (
            "host".to_string(),
            header(subject, "host").unwrap().to_string(),
        ),
        ("x-amz-date".to_string(), date.to_string()),
    ];
    if let Some(token) = token {
        signed.push(("x-amz-security-token".to_string(), token.to_string()));
    }
    let expected = authorization(
        &Credentials {
            access_key_id: key_id.into(),
            secret_access_key: secret.into(),
            session_token: token.map(str::to_string),
        },
        &SigningInput {
            method: "POST",
            path: url.path(),
            query: url.query().unwrap_or(""),
            headers: &signed,
            body: b"",
            region,
            service: "sts",
            amz_date: date,
            double_encode_path: false,
        },
    );
    assert_eq!(header(subject, "authorization"), Some(expected.as_str()));
}

fn aws_account(sts: &HttpStub, source: Value) -> Value {
    json!({
        "type": "external_account",
        "audience": AUDIENCE,
        "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
        "token_url": format!("{}/v1/token", sts.url),
        "credential_source": source,
    })
}

const VERIFY: &str =
    "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15";

#[test]
fn an_aws_source_signs_get_caller_identity_with_imdsv2_credentials() {
    let imds = HttpStub::start(|r: &StubRequest| {
        let token_ok = r.header("x-aws-ec2-metadata-token") == Some("imds-session");
        match (r.method.as_str(), r.path()) {
            ("PUT", "/latest/api/token")
                if r.header("x-aws-ec2-metadata-token-ttl-seconds") == Some("300") =>
            {
                (200, Vec::new(), "imds-session".into())
            }
            ("GET", "/latest/meta-data/placement/availability-zone") if token_ok => {
                (200, Vec::new(), "eu-west-3b".into())
            }
            ("GET", "/latest/meta-data/iam/security-credentials") if token_ok => {
                (200, Vec::new(), "pi-role".into())
            }
            ("GET", "/latest/meta-data/iam/security-credentials/pi-role") if token_ok => ok_json(
                json!({"AccessKeyId": "ASIAIMDS", "SecretAccessKey": "imds-secret",
                    "Token": "imds-token", "Code": "Success"}),
            ),
            _ => (401, Vec::new(), "no".into()),
        }
    });
    let sts = any_sts();
    let p = vertex_project();
    let creds = aws_account(
        &sts,
        json!({
            "environment_id": "aws1",
            "region_url": format!("{}/latest/meta-data/placement/availability-zone", imds.url),
            "url": format!("{}/latest/meta-data/iam/security-credentials", imds.url),
            "regional_cred_verification_url": VERIFY,
            "imdsv2_session_token_url": format!("{}/latest/api/token", imds.url),
        }),
    );
    let adc = home_file(&p, "aws.json", &creds.to_string());
    let auth = vertex_authorization(&p, &[("GOOGLE_APPLICATION_CREDENTIALS", adc)]);
    assert_eq!(auth, "Bearer federated");
    let subject = aws_subject(&sts);
    assert_eq!(
        subject["url"],
        "https://sts.eu-west-3.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
    );
    assert_eq!(subject["method"], "POST");
    let keys: Vec<&str> = subject["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "authorization",
            "host",
            "x-amz-date",
            "x-amz-security-token",
            "x-goog-cloud-target-resource"
        ]
    );
    assert_eq!(
        header(&subject, "host"),
        Some("sts.eu-west-3.amazonaws.com")
    );
    assert_eq!(header(&subject, "x-amz-security-token"), Some("imds-token"));
    assert_eq!(
        header(&subject, "x-goog-cloud-target-resource"),
        Some(AUDIENCE)
    );
    assert_signature(
        &subject,
        "ASIAIMDS",
        "imds-secret",
        Some("imds-token"),
        "eu-west-3",
    );
    assert!(imds.requests().iter().any(|r| r.method == "PUT"));
}

#[test]
fn an_aws_source_takes_region_and_keys_from_the_environment_first() {
    let imds = HttpStub::start(|_r: &StubRequest| not_found());
    let sts = any_sts();
    let p = vertex_project();
    let creds = aws_account(
        &sts,
        json!({
            "environment_id": "aws1",
            "region_url": format!("{}/region", imds.url),
            "url": format!("{}/role", imds.url),
            "regional_cred_verification_url": VERIFY,
        }),
    );
    let adc = home_file(&p, "aws.json", &creds.to_string());
    let auth = vertex_authorization(
        &p,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", adc),
            ("AWS_REGION", "ap-south-1".to_string()),
            ("AWS_ACCESS_KEY_ID", "AKIAENV".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "env-secret".to_string()),
        ],
    );
    assert_eq!(auth, "Bearer federated");
    assert!(imds.requests().is_empty());
    let subject = aws_subject(&sts);
    assert_eq!(header(&subject, "x-amz-security-token"), None);
    assert_signature(&subject, "AKIAENV", "env-secret", None, "ap-south-1");
}

#[test]
fn an_aws_source_of_another_version_is_refused() {
    let sts = any_sts();
    let p = vertex_project();
    let creds = aws_account(
        &sts,
        json!({"environment_id": "aws2", "regional_cred_verification_url": VERIFY}),
    );
    let adc = home_file(&p, "aws.json", &creds.to_string());
    let stderr = refused(&p, &[("GOOGLE_APPLICATION_CREDENTIALS", adc)]);
    assert!(
        stderr.contains("aws version \"2\" is not supported"),
        "{stderr}"
    );
}
