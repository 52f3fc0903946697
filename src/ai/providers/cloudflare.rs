//! Cloudflare's two providers as pi 0.73.1 treats them: their catalog base URLs carry
//! `{CLOUDFLARE_ACCOUNT_ID}` (and, for the AI Gateway, `{CLOUDFLARE_GATEWAY_ID}`)
//! placeholders filled from environment variables of the same names at request time, and
//! the AI Gateway takes its key in `cf-aig-authorization` instead of the API's own auth
//! header (which is then not sent, unless a model or option header names it).

use super::wire::HttpRequest;
use crate::ai::model::{Api, Model};

/// The AI Gateway provider id.
pub(crate) const AI_GATEWAY: &str = "cloudflare-ai-gateway";

/// Whether `provider` is one of Cloudflare's (Workers AI or the AI Gateway).
pub(crate) fn is_cloudflare(provider: &str) -> bool {
    provider == "cloudflare-workers-ai" || provider == AI_GATEWAY
}

/// `base_url` with every `{NAME}` (an upper-case environment variable name) replaced by
/// `lookup(NAME)`; pi's error names the first one missing or empty.
pub(crate) fn resolve_base_url(
    model: &Model,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let url = &model.base_url;
    let mut out = String::with_capacity(url.len());
    let mut rest = url.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after.find('}').filter(|&n| is_env_name(&after[..n]));
        let Some(n) = name_len else {
            out.push('{');
            rest = after;
            continue;
        };
        let name = &after[..n];
        match lookup(name).filter(|v| !v.is_empty()) {
            Some(value) => out.push_str(&value),
            None => {
                return Err(format!(
                    "{name} is required for provider {} but is not set.",
                    model.provider
                ));
            }
        }
        rest = &after[n + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// pi's placeholder form: `[A-Z_][A-Z0-9_]*`.
fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Moves the AI Gateway key from the API's auth header to `cf-aig-authorization`.
/// Called on the API's own request, before model and option headers are laid over it.
pub(crate) fn gateway_auth(model: &Model, request: &mut HttpRequest, key: Option<&str>) {
    if model.provider != AI_GATEWAY {
        return;
    }
    request.headers.retain(|(k, _)| {
        !k.eq_ignore_ascii_case("authorization") && !k.eq_ignore_ascii_case("x-api-key")
    });
    if model.api == Api::AnthropicMessages {
        // pi's Anthropic client lets model and option headers override this one.
        request.set_header(
            "cf-aig-authorization",
            &format!("Bearer {}", key.unwrap_or("")),
        );
    }
}

/// The AI Gateway header the OpenAI clients set last (over model and option headers).
pub(crate) fn gateway_auth_last(model: &Model, request: &mut HttpRequest, key: Option<&str>) {
    if model.provider == AI_GATEWAY && model.api != Api::AnthropicMessages {
        request.set_header(
            "cf-aig-authorization",
            &format!("Bearer {}", key.unwrap_or("")),
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn model(provider: &str, api: Api, base_url: &str) -> Model {
        let mut m: Model = serde_json::from_value(serde_json::json!({
            "id": "m", "name": "m", "api": "openai-completions",
            "provider": provider, "baseUrl": base_url
        }))
        .unwrap();
        m.api = api;
        m
    }

    #[test]
    fn placeholders_are_filled_from_the_environment() {
        let m = model(
            AI_GATEWAY,
            Api::OpenAiResponses,
            "https://gateway.ai.cloudflare.com/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai",
        );
        let env = |name: &str| match name {
            "CLOUDFLARE_ACCOUNT_ID" => Some("acc".to_string()),
            "CLOUDFLARE_GATEWAY_ID" => Some("gw".to_string()),
            _ => None,
        };
        assert_eq!(
            resolve_base_url(&m, env).unwrap(),
            "https://gateway.ai.cloudflare.com/v1/acc/gw/openai"
        );
        let only_account =
            |name: &str| (name == "CLOUDFLARE_ACCOUNT_ID").then(|| "acc".to_string());
        assert_eq!(
            resolve_base_url(&m, only_account).unwrap_err(),
            "CLOUDFLARE_GATEWAY_ID is required for provider cloudflare-ai-gateway but is not set."
        );
        // An empty value counts as unset; lower-case braces are left alone.
        let empty = |_: &str| Some(String::new());
        assert!(resolve_base_url(&m, empty).is_err());
        let plain = model(
            "cloudflare-workers-ai",
            Api::OpenAiCompletions,
            "http://h/{x}/v1",
        );
        assert_eq!(
            resolve_base_url(&plain, |_| None).unwrap(),
            "http://h/{x}/v1"
        );
    }

    #[test]
    fn the_gateway_key_moves_to_its_own_header() {
        let req = || HttpRequest {
            url: String::new(),
            headers: vec![
                ("authorization".into(), "Bearer k".into()),
                ("x-api-key".into(), "k".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: serde_json::Value::Null,
        };
        let a = model(AI_GATEWAY, Api::AnthropicMessages, "");
        let mut r = req();
        gateway_auth(&a, &mut r, Some("k"));
        gateway_auth_last(&a, &mut r, Some("k"));
        assert_eq!(r.header("authorization"), None);
        assert_eq!(r.header("x-api-key"), None);
        assert_eq!(r.header("cf-aig-authorization"), Some("Bearer k"));

        let o = model(AI_GATEWAY, Api::OpenAiCompletions, "");
        let mut r = req();
        gateway_auth(&o, &mut r, Some("k"));
        assert_eq!(r.header("cf-aig-authorization"), None);
        gateway_auth_last(&o, &mut r, Some("k"));
        assert_eq!(r.header("cf-aig-authorization"), Some("Bearer k"));
        assert_eq!(r.header("authorization"), None);

        // Workers AI keeps the usual bearer auth.
        let w = model("cloudflare-workers-ai", Api::OpenAiCompletions, "");
        let mut r = req();
        gateway_auth(&w, &mut r, Some("k"));
        gateway_auth_last(&w, &mut r, Some("k"));
        assert_eq!(r.header("authorization"), Some("Bearer k"));
        assert_eq!(r.header("cf-aig-authorization"), None);
    }
}
