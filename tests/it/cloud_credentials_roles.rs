//! Bedrock credentials from profiles that assume a role, and from a renewed SSO login,
//! end to end: the built `pi -p` walks `~/.aws/config`, asks a loopback stand-in for STS
//! `AssumeRole` / `AssumeRoleWithWebIdentity` or SSO-OIDC `CreateToken` and the SSO
//! portal, then signs its model request with what it got. The STS calls are checked for
//! their form (action, role, session name, external id, duration) and for a valid SigV4
//! signature made with the source credentials. No network.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use serde_json::{Value, json};

use crate::cloud_credentials::{
    BEDROCK_MODEL, assert_signed_with, bedrock_project, bedrock_request, env, home_file, pi,
    sha1_hex,
};
use crate::support::http_stub::{HttpStub, StubRequest, StubResponse};

use pi::ai::providers::sigv4::{self, Credentials, SigningInput};

/// The `AssumeRole` answer with the given credentials.
fn assume_role_xml(key: &str, secret: &str, token: &str) -> StubResponse {
    let xml = format!(
        "<AssumeRoleResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><AssumeRoleResult><Credentials><AccessKeyId>{key}</AccessKeyId><SecretAccessKey>{secret}</SecretAccessKey><SessionToken>{token}</SessionToken><Expiration>2999-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>"
    );
    (200, vec![("Content-Type".into(), "text/xml".into())], xml)
}

/// An STS stand-in handing out credentials per role (`role/<name>` → `ASIA<NAME>`,
/// secret `<name>-secret`, token `<name>-token`).
fn sts_stub() -> HttpStub {
    HttpStub::start(|r: &StubRequest| {
        let form = r.form();
        let role = form.get("RoleArn").cloned().unwrap_or_default();
        match (
            form.get("Action").map(String::as_str),
            role.rsplit_once("role/"),
        ) {
            (Some("AssumeRole" | "AssumeRoleWithWebIdentity"), Some((_, name))) => {
                let key = format!("ASIA{}", name.to_uppercase());
                assume_role_xml(&key, &format!("{name}-secret"), &format!("{name}-token"))
            }
            _ => (400, Vec::new(), "<Error><Code>Bad</Code></Error>".into()),
        }
    })
}

/// Checks `request` reached STS in `region` and carries a valid SigV4 signature for
/// service `sts` made with `source`.
fn assert_sts_signed_by(request: &StubRequest, region: &str, source: &Credentials) {
    assert_eq!(request.method, "POST");
    assert_eq!(request.path(), format!("/sts.{region}.amazonaws.com/"));
    let auth = request.header("authorization").unwrap();
    let signed_names: Vec<&str> = auth
        .split("SignedHeaders=")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .split(';')
        .collect();
    let headers: Vec<(String, String)> = signed_names
        .iter()
        .map(|n| (n.to_string(), request.header(n).unwrap().to_string()))
        .collect();
    let amz_date = request.header("x-amz-date").unwrap();
    let expected = sigv4::authorization(
        source,
        &SigningInput {
            method: "POST",
            path: request.path(),
            query: "",
            headers: &headers,
            body: request.body.as_bytes(),
            region,
            service: "sts",
            amz_date,
            double_encode_path: true,
        },
    );
    assert_eq!(auth, expected);
    assert_eq!(
        request.header("x-amz-security-token"),
        source.session_token.as_deref()
    );
}

fn creds(key: &str, secret: &str, token: Option<&str>) -> Credentials {
    Credentials {
        access_key_id: key.into(),
        secret_access_key: secret.into(),
        session_token: token.map(str::to_string),
    }
}

#[test]
fn bedrock_assumes_a_chain_of_roles_from_source_profiles() {
    let sts = sts_stub();
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/credentials",
        "[base]\naws_access_key_id = AKIABASE\naws_secret_access_key = base-secret\n",
    );
    home_file(
        &p,
        ".aws/config",
        "[profile mid]\nrole_arn = arn:aws:iam::111111111111:role/mid\nsource_profile = base\nregion = eu-west-1\n\n\
         [profile top]\nrole_arn = arn:aws:iam::222222222222:role/top\nsource_profile = mid\n\
         external_id = ext-42\nrole_session_name = pi-top\nduration_seconds = 900\nregion = eu-west-1\n",
    );
    let mut vars = env(&[("AWS_PROFILE", "top"), ("AWS_REGION", "us-east-1")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIATOP", "top-token");

    let asked = sts.requests();
    assert_eq!(asked.len(), 2, "{asked:?}");
    // The source profile's role first, signed with its keys.
    let mid = asked[0].form();
    assert_eq!(mid["Action"], "AssumeRole");
    assert_eq!(mid["Version"], "2011-06-15");
    assert_eq!(mid["RoleArn"], "arn:aws:iam::111111111111:role/mid");
    assert_eq!(mid["DurationSeconds"], "3600");
    assert!(mid["RoleSessionName"].starts_with("aws-sdk-js-"), "{mid:?}");
    assert!(!mid.contains_key("ExternalId"));
    assert_sts_signed_by(
        &asked[0],
        "eu-west-1",
        &creds("AKIABASE", "base-secret", None),
    );
    // Then the profile's role, signed with the first role's temporary credentials.
    let top = asked[1].form();
    assert_eq!(top["Action"], "AssumeRole");
    assert_eq!(top["RoleArn"], "arn:aws:iam::222222222222:role/top");
    assert_eq!(top["RoleSessionName"], "pi-top");
    assert_eq!(top["ExternalId"], "ext-42");
    assert_eq!(top["DurationSeconds"], "900");
    assert_sts_signed_by(
        &asked[1],
        "eu-west-1",
        &creds("ASIAMID", "mid-secret", Some("mid-token")),
    );
}

#[test]
fn a_source_profile_cycle_fails_without_asking_sts() {
    let sts = sts_stub();
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile a]\nrole_arn = arn:aws:iam::1:role/a\nsource_profile = b\n\
         [profile b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = a\n",
    );
    let mut vars = env(&[("AWS_PROFILE", "a"), ("AWS_REGION", "us-east-1")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let out = pi(&p, false, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("source_profile chain has a cycle (a -> b -> a)"),
        "{stderr}"
    );
    assert!(sts.requests().is_empty());
    assert!(p.server.requests().is_empty());
}

#[test]
fn a_role_profile_with_mfa_serial_is_refused_clearly() {
    let sts = sts_stub();
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile base]\naws_access_key_id = AKIABASE\naws_secret_access_key = s\n\
         [profile guarded]\nrole_arn = arn:aws:iam::1:role/guarded\nsource_profile = base\n\
         mfa_serial = arn:aws:iam::1:mfa/me\n",
    );
    let mut vars = env(&[("AWS_PROFILE", "guarded"), ("AWS_REGION", "us-east-1")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let out = pi(&p, false, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Profile guarded requires multi-factor authentication (mfa_serial)"),
        "{stderr}"
    );
    assert!(sts.requests().is_empty());
}

#[test]
fn credential_source_environment_signs_the_assume_role_with_the_env_keys() {
    let sts = sts_stub();
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile ci]\nrole_arn = arn:aws:iam::3:role/ci\ncredential_source = Environment\n",
    );
    let mut vars = env(&[
        ("AWS_PROFILE", "ci"),
        ("AWS_REGION", "ap-southeast-2"),
        ("AWS_ACCESS_KEY_ID", "AKIAENV"),
        ("AWS_SECRET_ACCESS_KEY", "env-secret"),
        ("AWS_SESSION_TOKEN", "env-token"),
    ]);
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIACI", "ci-token");
    let asked = sts.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].form()["RoleArn"], "arn:aws:iam::3:role/ci");
    // No region in the profile: STS is asked in AWS_REGION's.
    assert_sts_signed_by(
        &asked[0],
        "ap-southeast-2",
        &creds("AKIAENV", "env-secret", Some("env-token")),
    );
}

#[test]
fn credential_source_ecs_container_signs_with_the_task_role() {
    let sts = sts_stub();
    let task = HttpStub::start(|r: &StubRequest| {
        if r.path() == "/creds" && r.header("authorization") == Some("task-auth") {
            let body = json!({"AccessKeyId": "ASIATASK", "SecretAccessKey": "task-secret",
                "Token": "task-token", "Expiration": "2999-01-01T00:00:00Z"});
            (200, Vec::new(), body.to_string())
        } else {
            (401, Vec::new(), "no".into())
        }
    });
    let p = bedrock_project(None);
    home_file(
        &p,
        ".aws/config",
        "[profile svc]\nrole_arn = arn:aws:iam::4:role/svc\ncredential_source = EcsContainer\nregion = us-west-2\n",
    );
    let mut vars = env(&[
        ("AWS_PROFILE", "svc"),
        ("AWS_REGION", "us-west-2"),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "task-auth"),
    ]);
    vars.push((
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        format!("{}/creds", task.url),
    ));
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIASVC", "svc-token");
    assert_eq!(task.requests().len(), 1);
    let asked = sts.requests();
    assert_eq!(asked.len(), 1);
    assert_sts_signed_by(
        &asked[0],
        "us-west-2",
        &creds("ASIATASK", "task-secret", Some("task-token")),
    );
}

#[test]
fn a_profiles_web_identity_token_file_is_traded_at_sts() {
    let sts = sts_stub();
    let p = bedrock_project(None);
    let token_file = home_file(&p, "oidc.jwt", "eyJ.profile.token\n");
    home_file(
        &p,
        ".aws/config",
        &format!(
            "[profile k8s]\nweb_identity_token_file = {token_file}\nrole_arn = arn:aws:iam::5:role/pod\n\
             role_session_name = pod-session\nregion = eu-north-1\n"
        ),
    );
    let mut vars = env(&[("AWS_PROFILE", "k8s"), ("AWS_REGION", "eu-north-1")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", sts.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIAPOD", "pod-token");
    let asked = sts.requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].path(), "/sts.eu-north-1.amazonaws.com/");
    let form = asked[0].form();
    assert_eq!(form["Action"], "AssumeRoleWithWebIdentity");
    assert_eq!(form["RoleArn"], "arn:aws:iam::5:role/pod");
    assert_eq!(form["RoleSessionName"], "pod-session");
    assert_eq!(form["WebIdentityToken"], "eyJ.profile.token");
    assert!(asked[0].header("authorization").is_none());
}

const SSO_CONFIG: &str = "[profile corp-dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Developer\nregion = us-east-2\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n";

/// The SSO-OIDC and portal stand-in: `CreateToken` answers `oidc` for the refresh token
/// `refresh-1`; the portal takes only `fresh-access`.
fn sso_stub(oidc: StubResponse) -> HttpStub {
    HttpStub::start(move |r: &StubRequest| match r.path() {
        "/oidc.eu-central-1.amazonaws.com/token" => {
            let body: Value = serde_json::from_str(&r.body).unwrap_or_default();
            let ok = body["grantType"] == "refresh_token"
                && body["refreshToken"] == "refresh-1"
                && body["clientId"] == "client-id"
                && body["clientSecret"] == "client-secret";
            if ok {
                oidc.clone()
            } else {
                (400, Vec::new(), "{\"error\":\"invalid_grant\"}".into())
            }
        }
        "/portal.sso.eu-central-1.amazonaws.com/federation/credentials"
            if r.header("x-amz-sso_bearer_token") == Some("fresh-access") =>
        {
            let body = json!({"roleCredentials": {"accessKeyId": "ASIASSO",
                "secretAccessKey": "sso-secret", "sessionToken": "sso-token",
                "expiration": 32503680000000u64}});
            (200, Vec::new(), body.to_string())
        }
        _ => (
            401,
            Vec::new(),
            "{\"message\":\"Session token not found or invalid\"}".into(),
        ),
    })
}

/// Writes an expired `sso_session` token cache with a refresh token; returns its path.
fn expired_sso_cache(p: &crate::support::pi_project::Project) -> String {
    let cache = json!({"startUrl": "https://corp.awsapps.com/start", "region": "eu-central-1",
        "accessToken": "stale-access", "expiresAt": "2000-01-01T00:00:00Z",
        "refreshToken": "refresh-1", "clientId": "client-id", "clientSecret": "client-secret",
        "registrationExpiresAt": "2999-01-01T00:00:00Z"});
    home_file(
        p,
        &format!(".aws/sso/cache/{}.json", sha1_hex("corp")),
        &cache.to_string(),
    )
}

#[test]
fn an_expired_sso_session_token_is_renewed_and_written_back() {
    let oidc = json!({"accessToken": "fresh-access", "expiresIn": 28800,
        "refreshToken": "refresh-2", "tokenType": "Bearer"});
    let stub = sso_stub((200, Vec::new(), oidc.to_string()));
    let p = bedrock_project(None);
    home_file(&p, ".aws/config", SSO_CONFIG);
    let cache_file = expired_sso_cache(&p);
    let mut vars = env(&[("AWS_PROFILE", "corp-dev")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", stub.url.clone()));
    let request = bedrock_request(&p, &vars);
    assert_signed_with(&request, "ASIASSO", "sso-token");
    let paths: Vec<String> = stub
        .requests()
        .iter()
        .map(|r| r.path().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/oidc.eu-central-1.amazonaws.com/token",
            "/portal.sso.eu-central-1.amazonaws.com/federation/credentials"
        ]
    );
    let cache: Value = serde_json::from_str(&std::fs::read_to_string(cache_file).unwrap()).unwrap();
    assert_eq!(cache["accessToken"], "fresh-access");
    assert_eq!(cache["refreshToken"], "refresh-2");
    assert_eq!(cache["clientId"], "client-id");
    let expires =
        chrono::DateTime::parse_from_rfc3339(cache["expiresAt"].as_str().unwrap()).unwrap();
    let ahead = expires.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        ahead > chrono::TimeDelta::hours(7) && ahead <= chrono::TimeDelta::hours(8),
        "{ahead}"
    );
}

#[test]
fn an_sso_token_that_cannot_be_renewed_asks_for_aws_sso_login() {
    let stub = sso_stub((500, Vec::new(), "{\"error\":\"unavailable\"}".into()));
    let p = bedrock_project(None);
    home_file(&p, ".aws/config", SSO_CONFIG);
    let cache_file = expired_sso_cache(&p);
    let before = std::fs::read_to_string(&cache_file).unwrap();
    let mut vars = env(&[("AWS_PROFILE", "corp-dev")]);
    vars.push(("PI_RS_AWS_TEST_SERVER", stub.url.clone()));
    let out = pi(&p, false, "amazon-bedrock", BEDROCK_MODEL, &vars);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("aws sso login --profile corp-dev"),
        "{stderr}"
    );
    assert!(
        stderr.contains("SSO-OIDC CreateToken failed (500)"),
        "{stderr}"
    );
    // pi's automatic retry may ask again; only ever SSO-OIDC, never the portal.
    let asked = stub.requests();
    assert!(!asked.is_empty());
    assert!(
        asked
            .iter()
            .all(|r| r.path() == "/oidc.eu-central-1.amazonaws.com/token"),
        "{asked:?}"
    );
    assert_eq!(std::fs::read_to_string(&cache_file).unwrap(), before);
    assert!(p.server.requests().is_empty());
}
