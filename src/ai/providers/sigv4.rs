//! AWS Signature Version 4 for a request with a JSON body (Bedrock).
//!
//! Follows AWS's description of the algorithm: a canonical request (method, URI-encoded
//! path, sorted query, sorted lower-case signed headers, hex SHA-256 of the body), the
//! string to sign (`AWS4-HMAC-SHA256`, timestamp, credential scope, hash of the
//! canonical request), a signing key derived by HMAC-SHA256 chaining of date, region,
//! service and `aws4_request`, and the `Authorization` header built from them. Paths are
//! encoded a second time, as AWS does for every service but S3.

use ring::hmac;
use sha2::{Digest, Sha256};

/// Long-term or temporary AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.is_some())
            .finish_non_exhaustive()
    }
}

/// What is signed.
#[derive(Debug, Clone)]
pub struct SigningInput<'a> {
    pub method: &'a str,
    /// The path as sent (already percent-encoded once).
    pub path: &'a str,
    /// The query string as sent, without `?` (may be empty).
    pub query: &'a str,
    /// Headers to sign (`host` and `x-amz-date` included), any case.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    pub amz_date: &'a str,
    /// Encode the path a second time (every service but S3).
    pub double_encode_path: bool,
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&key, data).as_ref().to_vec()
}

/// RFC 3986 encoding: everything but unreserved characters (and `/` when `keep_slash`).
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char);
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The signing key for a date (`YYYYMMDD`), region and service.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k_date = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    hmac_sha256(&k_service, b"aws4_request")
}

/// The canonical request and the `;`-joined signed header names.
pub fn canonical_request(input: &SigningInput<'_>) -> (String, String) {
    let path = if input.path.is_empty() {
        "/"
    } else {
        input.path
    };
    let path = if input.double_encode_path {
        uri_encode(path, true)
    } else {
        path.to_string()
    };
    let mut query: Vec<(String, String)> = input
        .query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect();
    query.sort();
    let query = query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let mut headers: Vec<(String, String)> = input
        .headers
        .iter()
        .map(|(k, v)| {
            let value = v.split_whitespace().collect::<Vec<_>>().join(" ");
            (k.to_ascii_lowercase(), value)
        })
        .collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed = headers
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let request = format!(
        "{}\n{path}\n{query}\n{canonical_headers}\n{signed}\n{}",
        input.method,
        sha256_hex(input.body)
    );
    (request, signed)
}

/// The `Authorization` header value for `input`.
pub fn authorization(credentials: &Credentials, input: &SigningInput<'_>) -> String {
    let date = &input.amz_date[..input.amz_date.len().min(8)];
    let scope = format!("{date}/{}/{}/aws4_request", input.region, input.service);
    let (canonical, signed) = canonical_request(input);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        input.amz_date,
        sha256_hex(canonical.as_bytes())
    );
    let key = signing_key(
        &credentials.secret_access_key,
        date,
        input.region,
        input.service,
    );
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
        credentials.access_key_id
    )
}

#[cfg(test)]
mod tests;
