//! AWS-sourced subject tokens (`credential_source.environment_id` `aws1`), as Google's
//! auth library builds them.
//!
//! The region is `AWS_REGION` or `AWS_DEFAULT_REGION`, else the availability zone at
//! `region_url` without its last letter; the credentials are `AWS_ACCESS_KEY_ID` /
//! `AWS_SECRET_ACCESS_KEY` (/ `AWS_SESSION_TOKEN`), else the role name at `url` and that
//! role's `AccessKeyId` / `SecretAccessKey` / `Token` at `url/ROLE`. With
//! `imdsv2_session_token_url`, those metadata requests carry an IMDSv2 session token
//! (`PUT` with `x-aws-ec2-metadata-token-ttl-seconds: 300`). The subject token is an
//! AWS STS `GetCallerIdentity` request at `regional_cred_verification_url` (with
//! `{region}` filled in), signed with SigV4 and serialised, URL-encoded, as
//! `{"url", "method": "POST", "headers": [{"key", "value"}, …]}` with the signed
//! headers and `x-goog-cloud-target-resource` set to the audience.

use serde_json::Value;

use super::fetch::{send_text, str_field};
use crate::ai::providers::sigv4::{self, Credentials, SigningInput};

/// The subject token of an AWS credential source; `creds` is the whole file.
pub(super) async fn subject_token(
    client: &reqwest::Client,
    creds: &Value,
    source: &Value,
) -> Result<String, String> {
    let verification = str_field(source, "regional_cred_verification_url");
    let version = str_field(source, "environment_id")
        .and_then(|id| id.strip_prefix("aws"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let (Some(version), Some(verification)) = (version, verification) else {
        return Err("No valid AWS \"credential_source\" provided".into());
    };
    if version.parse::<u64>().ok() != Some(1) {
        return Err(format!(
            "aws version \"{version}\" is not supported in the current build."
        ));
    }
    let mut metadata = Metadata {
        client,
        source,
        session_token: None,
    };
    let region = match env_region() {
        Some(region) => region,
        None => metadata.region().await?,
    };
    let credentials = match env_credentials() {
        Some(credentials) => credentials,
        None => metadata.credentials().await?,
    };
    let audience = str_field(creds, "audience").unwrap_or("");
    let url = verification.replace("{region}", &region);
    let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    signed_token(&url, &region, &credentials, audience, &amz_date)
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn env_region() -> Option<String> {
    env_nonempty("AWS_REGION").or_else(|| env_nonempty("AWS_DEFAULT_REGION"))
}

fn env_credentials() -> Option<Credentials> {
    Some(Credentials {
        access_key_id: env_nonempty("AWS_ACCESS_KEY_ID")?,
        secret_access_key: env_nonempty("AWS_SECRET_ACCESS_KEY")?,
        session_token: env_nonempty("AWS_SESSION_TOKEN"),
    })
}

/// The EC2 metadata endpoints the credential source names.
struct Metadata<'a> {
    client: &'a reqwest::Client,
    source: &'a Value,
    /// The IMDSv2 session token, fetched once when the source names its URL.
    session_token: Option<String>,
}

impl Metadata<'_> {
    async fn get(&mut self, url: &str, what: &str) -> Result<String, String> {
        let mut request = self.client.get(url);
        if let Some(token_url) = str_field(self.source, "imdsv2_session_token_url") {
            if self.session_token.is_none() {
                let put = self
                    .client
                    .put(token_url)
                    .header("x-aws-ec2-metadata-token-ttl-seconds", "300");
                self.session_token =
                    Some(send_text(put, "The AWS IMDSv2 session token request").await?);
            }
            if let Some(token) = &self.session_token {
                request = request.header("x-aws-ec2-metadata-token", token.as_str());
            }
        }
        send_text(request, what).await
    }

    async fn region(&mut self) -> Result<String, String> {
        let url = str_field(self.source, "region_url").ok_or(
            "Unable to determine AWS region due to missing \"options.credential_source.region_url\"",
        )?;
        let zone = self.get(url, "The AWS region request").await?;
        // An availability zone (`us-east-2b`): the region is all but its last letter.
        let mut region = zone;
        region.pop();
        Ok(region)
    }

    async fn credentials(&mut self) -> Result<Credentials, String> {
        let url = str_field(self.source, "url")
            .ok_or("Unable to determine AWS role name due to missing \"options.credential_source.url\"")?
            .to_string();
        let role = self.get(&url, "The AWS role name request").await?;
        let text = self
            .get(
                &format!("{url}/{role}"),
                "The AWS security credentials request",
            )
            .await?;
        let json: Value = serde_json::from_str(&text).map_err(|_| {
            "The AWS security credentials request did not answer with JSON".to_string()
        })?;
        let field = |key: &str| {
            str_field(&json, key)
                .map(str::to_string)
                .ok_or_else(|| format!("The AWS security credentials lack {key}"))
        };
        Ok(Credentials {
            access_key_id: field("AccessKeyId")?,
            secret_access_key: field("SecretAccessKey")?,
            session_token: str_field(&json, "Token").map(str::to_string),
        })
    }
}

/// The serialised signed `GetCallerIdentity` request.
fn signed_token(
    url: &str,
    region: &str,
    credentials: &Credentials,
    audience: &str,
    amz_date: &str,
) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| format!("Invalid regional_cred_verification_url {url}: {e}"))?;
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => return Err(format!("Invalid regional_cred_verification_url {url}")),
    };
    // As Google's library: the service is the host's first label (`sts`).
    let service = host.split('.').next().unwrap_or("").to_string();
    let mut signed = vec![
        ("host".to_string(), host),
        ("x-amz-date".to_string(), amz_date.to_string()),
    ];
    if let Some(token) = &credentials.session_token {
        signed.push(("x-amz-security-token".to_string(), token.clone()));
    }
    let input = SigningInput {
        method: "POST",
        path: parsed.path(),
        query: parsed.query().unwrap_or(""),
        headers: &signed,
        body: b"",
        region,
        service: &service,
        amz_date,
        double_encode_path: false,
    };
    let authorization = sigv4::authorization(credentials, &input);
    let mut headers = signed;
    headers.push(("authorization".to_string(), authorization));
    headers.push((
        "x-goog-cloud-target-resource".to_string(),
        audience.to_string(),
    ));
    // Google's library lists them in name order (its `Headers` iterate sorted).
    headers.sort();
    let entries: Vec<String> = headers
        .iter()
        .map(|(k, v)| {
            format!(
                "{{\"key\":{},\"value\":{}}}",
                Value::from(k.as_str()),
                Value::from(v.as_str())
            )
        })
        .collect();
    let json = format!(
        "{{\"url\":{},\"method\":\"POST\",\"headers\":[{}]}}",
        Value::from(url),
        entries.join(",")
    );
    Ok(encode_uri_component(&json))
}

/// JavaScript's `encodeURIComponent`.
fn encode_uri_component(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'!'
            | b'~'
            | b'*'
            | b'\''
            | b'('
            | b')' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_uri_component_keeps_what_javascript_keeps() {
        assert_eq!(
            encode_uri_component("a b/{\"k\":1}!*'()~é"),
            "a%20b%2F%7B%22k%22%3A1%7D!*'()~%C3%A9"
        );
    }

    #[test]
    fn the_token_is_the_signed_request_in_googles_shape() {
        let credentials = Credentials {
            access_key_id: "AKID".into(),
            secret_access_key: "SECRET".into(),
            session_token: Some("SESSION".into()),
        };
        let url = "https://sts.us-east-2.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15";
        let token = signed_token(
            url,
            "us-east-2",
            &credentials,
            "//iam/aud",
            "20260101T000000Z",
        )
        .unwrap_or_default();
        let json = percent_decode(&token);
        let v: Value = serde_json::from_str(&json).unwrap_or_default();
        assert!(json.starts_with("{\"url\":"), "{json}");
        assert_eq!(v["url"], url);
        assert_eq!(v["method"], "POST");
        let keys: Vec<&str> = v["headers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h["key"].as_str())
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
        let auth = v["headers"][0]["value"].as_str().unwrap_or("");
        assert!(
            auth.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-2/sts/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="
            ),
            "{auth}"
        );
        assert_eq!(v["headers"][1]["value"], "sts.us-east-2.amazonaws.com");
        assert_eq!(v["headers"][4]["value"], "//iam/aud");
    }

    fn percent_decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}
