//! The ChatGPT backend's Responses API (`openai-codex-responses`), used with a ChatGPT
//! Plus/Pro sign-in.
//!
//! The credential is the OAuth access token pi stores under `openai-codex` in
//! `auth.json`: a JWT whose `https://api.openai.com/auth` claim holds the
//! `chatgpt_account_id` sent as `chatgpt-account-id`. Requests go to
//! `{baseUrl}/codex/responses` with `originator: pi`, a `pi (os release; arch)` user
//! agent and `OpenAI-Beta: responses=experimental`. The body differs from OpenAI's: the
//! system prompt is `instructions`, tools are not strict (`strict: null`), there is no
//! output limit, and `text.verbosity`, `tool_choice` and `parallel_tool_calls` are set.
//! pi first tries a WebSocket transport (see [`super::codex_websocket`]) and falls back
//! to this SSE one.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::openai_responses::{convert_messages_with, tools_json};
use super::wire::HttpRequest;
use super::{StreamOptions, clamp_thinking_level, mapped_level};
use crate::ai::message::{AssistantMessage, Context, Message};
use crate::ai::model::{Model, ThinkingLevel};

const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";
const CODEX_TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];

/// Builds the request pi would send.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<HttpRequest, String> {
    let token = match &options.api_key {
        Some(key) if !key.expose().is_empty() => key.expose(),
        _ => return Err(format!("No API key for provider: {}", model.provider)),
    };
    let account = account_id(token)?;
    let mut headers = vec![
        ("authorization".to_string(), format!("Bearer {token}")),
        ("chatgpt-account-id".to_string(), account),
        ("originator".to_string(), "pi".to_string()),
        ("user-agent".to_string(), user_agent()),
        (
            "openai-beta".to_string(),
            "responses=experimental".to_string(),
        ),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    if let Some(session) = &options.session_id {
        headers.push(("session_id".to_string(), session.clone()));
        headers.push(("x-client-request-id".to_string(), session.clone()));
    }
    Ok(HttpRequest {
        url: codex_url(&model.base_url),
        headers,
        body: build_body(model, context, options),
    })
}

/// `{base}/codex/responses`, unless the base already ends with it (or with `/codex`).
pub fn codex_url(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let base = raw.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_string()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// The ChatGPT account id in the token's `https://api.openai.com/auth` claim.
pub fn account_id(token: &str) -> Result<String, String> {
    const FAILED: &str = "Failed to extract accountId from token";
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else {
        return Err(FAILED.into());
    };
    let bytes = decode_base64_lenient(payload).ok_or(FAILED)?;
    let claims: Value = serde_json::from_slice(&bytes).map_err(|_| FAILED)?;
    claims
        .get(JWT_CLAIM_PATH)
        .and_then(|c| c.get("chatgpt_account_id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .ok_or_else(|| FAILED.to_string())
}

/// Base64 as `atob` takes it: standard or URL-safe alphabet, with or without padding.
fn decode_base64_lenient(text: &str) -> Option<Vec<u8>> {
    let standard: String = text
        .trim_end_matches('=')
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(standard)
        .ok()
}

/// `pi (<platform> <release>; <arch>)` with Node's names for the platform and arch.
pub fn user_agent() -> String {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    format!("pi ({platform} {}; {arch})", os_release())
}

/// The kernel release (`uname -r`), as Node's `os.release()`.
fn os_release() -> String {
    #[cfg(unix)]
    {
        // SAFETY: `uname` fills the zeroed struct we own; its fields are NUL-terminated.
        let mut name: libc::utsname = unsafe { std::mem::zeroed() };
        if unsafe { libc::uname(&mut name) } == 0 {
            let release = unsafe { std::ffi::CStr::from_ptr(name.release.as_ptr()) };
            return release.to_string_lossy().into_owned();
        }
    }
    String::new()
}

/// The JSON body (public for tests).
pub fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut p = Map::new();
    p.insert("model".into(), json!(model.id));
    p.insert("store".into(), json!(false));
    p.insert("stream".into(), json!(true));
    let instructions = context
        .system_prompt
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or("You are a helpful assistant.");
    p.insert("instructions".into(), json!(instructions));
    p.insert(
        "input".into(),
        Value::Array(convert_messages_with(
            model,
            context,
            CODEX_TOOL_CALL_PROVIDERS,
            false,
        )),
    );
    p.insert("text".into(), json!({"verbosity": "low"}));
    p.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session) = &options.session_id {
        p.insert("prompt_cache_key".into(), json!(session));
    }
    p.insert("tool_choice".into(), json!("auto"));
    p.insert("parallel_tool_calls".into(), json!(true));
    if let Some(t) = options.temperature {
        p.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        p.insert("tools".into(), tools_json(context, &Value::Null));
    }
    let level = clamp_thinking_level(model, options.thinking);
    if level != ThinkingLevel::Off {
        let effort = mapped_level(model, level).unwrap_or_else(|| level.as_str().to_string());
        p.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
    }
    Value::Object(p)
}

/// A completed response as the input items the next request would carry for it, tool
/// results aside (what a WebSocket delta request builds on, as pi's continuation).
pub(crate) fn response_items(model: &Model, message: &AssistantMessage) -> Vec<Value> {
    let context = Context {
        system_prompt: None,
        messages: vec![Message::Assistant(message.clone())],
        tools: Vec::new(),
    };
    convert_messages_with(model, &context, CODEX_TOOL_CALL_PROVIDERS, false)
        .into_iter()
        .filter(|item| item.get("type").and_then(Value::as_str) != Some("function_call_output"))
        .collect()
}

/// The error text for a failed status, as pi's `parseErrorResponse`: a friendly line for
/// usage limits, else the server's message, else the body.
pub fn error_message(status: u16, body: &str, now_ms: i64) -> String {
    let fallback = if body.is_empty() {
        reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Request failed")
            .to_string()
    } else {
        body.to_string()
    };
    let Ok(parsed) = serde_json::from_str::<Value>(body) else {
        return fallback;
    };
    let Some(err) = parsed.get("error").filter(|e| e.is_object()) else {
        return fallback;
    };
    let text = |k: &str| err.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let code = text("code").or_else(|| text("type")).unwrap_or("");
    let limited = status == 429
        || [
            "usage_limit_reached",
            "usage_not_included",
            "rate_limit_exceeded",
        ]
        .iter()
        .any(|c| code.to_ascii_lowercase().contains(c));
    let friendly = limited.then(|| {
        let plan = text("plan_type")
            .map(|p| format!(" ({} plan)", p.to_lowercase()))
            .unwrap_or_default();
        let when = err
            .get("resets_at")
            .and_then(Value::as_f64)
            .filter(|r| *r != 0.0)
            .map(|resets| {
                let mins = ((resets * 1000.0 - now_ms as f64) / 60_000.0)
                    .round()
                    .max(0.0);
                format!(" Try again in ~{mins} min.")
            })
            .unwrap_or_default();
        format!("You have hit your ChatGPT usage limit{plan}.{when}")
            .trim()
            .to_string()
    });
    match friendly {
        Some(f) => f,
        None => text("message").map_or(fallback, str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(claims: &Value) -> String {
        let enc = |v: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
        };
        format!("{}.{}.sig", enc(&json!({"alg": "none"})), enc(claims))
    }

    #[test]
    fn the_account_id_comes_from_the_auth_claim() {
        let t = token(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acc-123"}}));
        assert_eq!(account_id(&t).unwrap(), "acc-123");
        let none = token(&json!({"sub": "x"}));
        assert_eq!(
            account_id(&none).unwrap_err(),
            "Failed to extract accountId from token"
        );
        assert!(account_id("not-a-jwt").is_err());
    }

    #[test]
    fn the_url_gets_codex_responses_once() {
        assert_eq!(
            codex_url(""),
            "https://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(codex_url("http://h/b/"), "http://h/b/codex/responses");
        assert_eq!(codex_url("http://h/codex"), "http://h/codex/responses");
        assert_eq!(
            codex_url("http://h/codex/responses"),
            "http://h/codex/responses"
        );
    }

    #[test]
    fn usage_limits_get_a_friendly_message() {
        let body = json!({"error": {"code": "usage_limit_reached", "plan_type": "PLUS", "resets_at": 1_000_600, "message": "limit"}});
        assert_eq!(
            error_message(429, &body.to_string(), 1_000_000_000),
            "You have hit your ChatGPT usage limit (plus plan). Try again in ~10 min."
        );
        let other = json!({"error": {"message": "bad input"}});
        assert_eq!(error_message(400, &other.to_string(), 0), "bad input");
        assert_eq!(error_message(502, "upstream down", 0), "upstream down");
    }

    #[test]
    fn the_user_agent_uses_node_names() {
        let ua = user_agent();
        assert!(ua.starts_with("pi ("), "{ua}");
        assert!(!ua.contains("x86_64") && !ua.contains("macos"), "{ua}");
    }
}
