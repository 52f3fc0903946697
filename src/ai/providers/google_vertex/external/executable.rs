//! Executable-sourced subject tokens (`credential_source.executable`, Google's
//! "pluggable auth"), as Google's auth library runs them.
//!
//! Only when `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`: the `command` (split at
//! blanks, `"…"` keeping blanks together) runs with `GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE`,
//! `_TOKEN_TYPE`, `_INTERACTIVE=0`, `_OUTPUT_FILE` (with `output_file`) and
//! `_IMPERSONATED_EMAIL` (with impersonation) in its environment, within `timeout_millis`
//! (default 30 s, 5–120 s allowed), killed when it overruns. Its output is a JSON
//! response: `version` (1), `success`, then `token_type` with `id_token` (OIDC) or
//! `saml_response` (SAML) and `expiration_time` (Unix seconds), or `code` and `message`.
//! With `output_file`, a successful unexpired response found there is used without
//! running the command, and the command's response must carry `expiration_time`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use super::fetch::str_field;

const ALLOW_ENV: &str = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES";
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
const MIN_TIMEOUT_MS: u64 = 5_000;
const MAX_TIMEOUT_MS: u64 = 120_000;
const MAX_VERSION: i64 = 1;
const SAML: &str = "urn:ietf:params:oauth:token-type:saml2";
const OIDC_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const OIDC_JWT: &str = "urn:ietf:params:oauth:token-type:jwt";

/// A parsed executable response.
#[derive(Debug, Clone, PartialEq)]
struct Response {
    version: i64,
    success: bool,
    expiration_time: Option<i64>,
    subject_token: String,
    code: String,
    message: String,
}

impl Response {
    /// Checks the fields as Google's library does.
    fn parse(v: &Value) -> Result<Response, String> {
        let version = v.get("version").and_then(Value::as_i64).unwrap_or(0);
        if version == 0 {
            return Err("Executable response must contain a 'version' field.".into());
        }
        let success = v
            .get("success")
            .and_then(Value::as_bool)
            .ok_or("Executable response must contain a 'success' field.")?;
        let mut response = Response {
            version,
            success,
            expiration_time: v.get("expiration_time").and_then(Value::as_i64),
            subject_token: String::new(),
            code: String::new(),
            message: String::new(),
        };
        if success {
            let (field, token_type) = match str_field(v, "token_type") {
                Some(SAML) => ("saml_response", SAML),
                Some(t @ (OIDC_ID_TOKEN | OIDC_JWT)) => ("id_token", t),
                _ => {
                    return Err(format!(
                        "Executable response must contain a 'token_type' field when successful and it must be one of {OIDC_ID_TOKEN}, {OIDC_JWT}, or {SAML}."
                    ));
                }
            };
            response.subject_token = str_field(v, field)
                .ok_or_else(|| {
                    format!(
                        "Executable response must contain a '{field}' field when token_type={token_type}."
                    )
                })?
                .to_string();
        } else {
            let text = |key: &str| match v.get(key) {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            response.code = text("code")
                .ok_or("Executable response must contain a 'code' field when unsuccessful.")?;
            response.message = text("message")
                .ok_or("Executable response must contain a 'message' field when unsuccessful.")?;
        }
        Ok(response)
    }

    fn expired(&self, now: i64) -> bool {
        self.expiration_time.is_some_and(|t| t < now)
    }
}

/// The subject token of an `executable` credential source; `creds` is the whole file.
pub(super) async fn subject_token(creds: &Value, executable: &Value) -> Result<String, String> {
    let invalid = "No valid Pluggable Auth \"credential_source\" provided.";
    let command = str_field(executable, "command").ok_or(invalid)?;
    let timeout_ms = match executable.get("timeout_millis") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
        Some(v) => v
            .as_u64()
            .filter(|ms| (MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(ms))
            .ok_or(format!(
                "Timeout must be between {MIN_TIMEOUT_MS} and {MAX_TIMEOUT_MS} milliseconds."
            ))?,
    };
    let output_file = str_field(executable, "output_file");
    if std::env::var(ALLOW_ENV).as_deref() != Ok("1") {
        return Err(format!(
            "Pluggable Auth executables need to be explicitly allowed to run by setting the {ALLOW_ENV} environment Variable to 1."
        ));
    }
    let now = chrono::Utc::now().timestamp();
    let cached = match output_file {
        Some(file) => cached_response(file, now)?,
        None => None,
    };
    let response = match cached {
        Some(response) => response,
        None => {
            let mut env = vec![
                (
                    "GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE",
                    str_field(creds, "audience").unwrap_or("").to_string(),
                ),
                (
                    "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE",
                    str_field(creds, "subject_token_type")
                        .unwrap_or("")
                        .to_string(),
                ),
                ("GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE", "0".to_string()),
            ];
            if let Some(file) = output_file {
                env.push(("GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE", file.to_string()));
            }
            if let Some(email) =
                str_field(creds, "service_account_impersonation_url").and_then(impersonated_email)
            {
                env.push(("GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL", email));
            }
            run(command, Duration::from_millis(timeout_ms), &env).await?
        }
    };
    if response.version > MAX_VERSION {
        return Err(format!(
            "Version of executable is not currently supported, maximum supported version is {MAX_VERSION}."
        ));
    }
    if !response.success {
        return Err(failed(&response.message, &response.code));
    }
    if output_file.is_some() && response.expiration_time.is_none() {
        return Err("The executable response must contain the `expiration_time` field for successful responses when an output_file has been specified in the configuration.".into());
    }
    if response.expired(now) {
        return Err("Executable response is expired.".into());
    }
    Ok(response.subject_token)
}

fn failed(message: &str, code: &str) -> String {
    format!("The executable failed with exit code: {code} and error message: {message}.")
}

/// The service account of an impersonation URL
/// (`…/serviceAccounts/EMAIL:generateAccessToken`).
fn impersonated_email(url: &str) -> Option<String> {
    let rest = url.strip_suffix(":generateAccessToken")?;
    let (_, email) = rest.rsplit_once("/serviceAccounts/")?;
    (!email.is_empty() && !email.contains(':')).then(|| email.to_string())
}

/// A successful unexpired response left in `file`, if any.
fn cached_response(file: &str, now: i64) -> Result<Option<Response>, String> {
    let Ok(path) = std::fs::canonicalize(file) else {
        return Ok(None);
    };
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("Could not read the executable output file {file}: {e}"))?;
    if text.is_empty() {
        return Ok(None);
    }
    let json: Value = serde_json::from_str(&text)
        .map_err(|_| format!("The output file contained an invalid response: {text}"))?;
    let response = Response::parse(&json)?;
    Ok((response.success && !response.expired(now)).then_some(response))
}

/// Splits a command as Google's library does: blanks separate words, `"…"` keeps
/// blanks inside a word, and a word wholly in quotes loses them.
fn split_command(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in command.chars() {
        if c == '"' {
            quoted = !quoted;
            word.push(c);
        } else if c.is_whitespace() && !quoted {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else {
            word.push(c);
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .map(|w| {
            if w.len() >= 2 && w.starts_with('"') && w.ends_with('"') {
                w[1..w.len() - 1].to_string()
            } else {
                w
            }
        })
        .collect()
}

/// Runs the command and parses its response; killed after `limit`.
async fn run(command: &str, limit: Duration, env: &[(&str, String)]) -> Result<Response, String> {
    let words = split_command(command);
    let Some((program, args)) = words.split_first() else {
        return Err(format!(
            "Provided command: \"{command}\" could not be parsed."
        ));
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so that an overrun stops what it started too.
    #[cfg(unix)]
    command.process_group(0);
    let child = command
        .spawn()
        .map_err(|e| format!("Could not run the credential executable {program}: {e}"))?;
    let group = child.id();
    let output = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Err(_) => {
            #[cfg(unix)]
            if let Some(pid) = group.and_then(|id| i32::try_from(id).ok())
                && pid > 0
            {
                // The whole group the program leads (`ai` uses nothing above it, so not
                // the tools' helper). SAFETY: kill(2) with integer arguments has no
                // memory effects; a group already gone yields ESRCH.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            #[cfg(not(unix))]
            let _ = group;
            return Err("The executable failed to finish within the timeout specified.".into());
        }
        Ok(Err(e)) => return Err(format!("The credential executable {program} failed: {e}")),
        Ok(Ok(output)) => output,
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let code = output
            .status
            .code()
            .map_or_else(|| "signal".to_string(), |c| c.to_string());
        return Err(failed(&format!("{stdout}{stderr}"), &code));
    }
    let json: Value = serde_json::from_str(&stdout)
        .map_err(|_| format!("The executable returned an invalid response: {stdout}{stderr}"))?;
    Response::parse(&json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commands_split_at_blanks_outside_quotes() {
        assert_eq!(
            split_command(r#"/bin/tool --flag "a b" --x="c d"  last"#),
            vec!["/bin/tool", "--flag", "a b", r#"--x="c d""#, "last"]
        );
        assert!(split_command("   ").is_empty());
    }

    #[test]
    fn responses_are_checked_as_googles_library_checks_them() {
        let ok = json!({"version": 1, "success": true, "token_type": OIDC_JWT,
            "id_token": "tok", "expiration_time": 100});
        let parsed = Response::parse(&ok).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.subject_token, "tok");
        assert!(parsed.expired(101) && !parsed.expired(100));
        let saml = json!({"version": 1, "success": true, "token_type": SAML, "saml_response": "s"});
        assert_eq!(
            Response::parse(&saml).map(|r| r.subject_token),
            Ok("s".to_string())
        );
        let failure = json!({"version": 1, "success": false, "code": "401", "message": "nope"});
        let parsed = Response::parse(&failure).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            failed(&parsed.message, &parsed.code),
            "The executable failed with exit code: 401 and error message: nope."
        );
        for (bad, why) in [
            (json!({"success": true}), "'version'"),
            (json!({"version": 1}), "'success'"),
            (
                json!({"version": 1, "success": true, "token_type": "x"}),
                "'token_type'",
            ),
            (
                json!({"version": 1, "success": true, "token_type": OIDC_JWT}),
                "'id_token'",
            ),
            (
                json!({"version": 1, "success": false, "message": "m"}),
                "'code'",
            ),
        ] {
            let err = Response::parse(&bad).err().unwrap_or_default();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn the_impersonated_email_comes_from_the_url() {
        assert_eq!(
            impersonated_email(
                "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken"
            ),
            Some("sa@p.iam.gserviceaccount.com".to_string())
        );
        assert_eq!(impersonated_email("https://example.com/token"), None);
    }
}
