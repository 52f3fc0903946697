//! models.json of pi 1.6 against the built binary and the loopback model server: the
//! request body and headers pi 1.6 would send (sampling parameters per thinking level,
//! `compat.vllmPriority`, `promptCacheKeyMode`, `max` from `--model id:max` with the id
//! stripped, `$NAME` keys and headers), and a bad value that drops only itself with a
//! warning naming the file and the path.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::{Command, Stdio};

use crate::support::mock_llm::{MockLlm, RecordedRequest, Script};
use serde_json::{Value, json};

/// Runs `pi -p args… hi` with `models` as models.json (the server's URL put in for
/// `{url}`); the one request the server got and stderr.
fn one_request(models: &Value, args: &[&str]) -> (RecordedRequest, String) {
    one_request_with(models, None, args)
}

/// [`one_request`] with a settings.json.
fn one_request_with(
    models: &Value,
    settings: Option<&Value>,
    args: &[&str],
) -> (RecordedRequest, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = MockLlm::start(Script::from_json(r#"{"sequence": [{"text": "ok"}]}"#).unwrap());
    let agent = dir.path().join("home/.pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let text = models.to_string().replace("{url}", &server.url());
    std::fs::write(agent.join("models.json"), text).unwrap();
    if let Some(settings) = settings {
        std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .current_dir(dir.path())
        .env("HOME", dir.path().join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("OPENAI_API_KEY")
        .env("PI_T_M16_KEY", "k-123")
        .env("PI_T_M16_TEAM", "blue")
        .args(["--offline", "-p"])
        .args(args)
        .arg("hi")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "pi failed: {stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    (requests[0].clone(), stderr)
}

fn models() -> Value {
    json!({"providers": {"mock": {
        "baseUrl": "{url}/v1", "api": "openai-completions", "apiKey": "${PI_T_M16_KEY}",
        "headers": {"x-team": "team-$PI_T_M16_TEAM", "x-literal": "PI_T_M16_TEAM"},
        "compat": {"supportsDeveloperRole": false, "vllmPriority": 3, "promptCacheKeyMode": "enabled",
                   "supportsStore": "not-a-boolean"},
        "models": [
            {"id": "think", "reasoning": true, "contextWindow": "big", "maxTokens": 4000,
             "thinkingLevelMap": {"max": "max-effort", "ultra": "u"},
             "samplingParams": {"temperature": 1.0, "top_p": 0.95},
             "samplingParamsByThinkingLevel": {"max": {"top_k": 40}, "off": {"temperature": 0.7}}},
            {"id": "plain-reasoner", "reasoning": true, "maxTokens": 4000}
        ]
    }}})
}

#[test]
fn a_max_suffix_sampling_params_and_compat_fields_reach_the_request_as_pi_16_sends_them() {
    let (req, stderr) = one_request(&models(), &["--model", "mock/think:max"]);
    let body = &req.body;
    assert_eq!(
        body["model"],
        json!("think"),
        "the :max suffix is a level, not part of the id"
    );
    assert_eq!(body["reasoning_effort"], json!("max-effort"));
    assert_eq!(
        body["temperature"],
        json!(1),
        "1.0 is sent as 1, as JSON.stringify writes it"
    );
    assert_eq!(body["top_p"], json!(0.95));
    assert_eq!(body["top_k"], json!(40));
    assert_eq!(body["priority"], json!(3));
    assert!(
        body.get("prompt_cache_key").is_some(),
        "{body} {:?}",
        req.headers
    );
    assert_eq!(req.header("authorization"), Some("Bearer k-123"));
    assert_eq!(req.header("x-team"), Some("team-blue"));
    assert_eq!(
        req.header("x-literal"),
        Some("PI_T_M16_TEAM"),
        "a bare name is literal"
    );
    // The bad values are named with the file and their path; the rest was used.
    assert!(stderr.contains("models.json"), "{stderr}");
    for path in [
        "providers.mock.compat.supportsStore",
        "providers.mock.models[0].contextWindow",
        "providers.mock.models[0].thinkingLevelMap.ultra",
    ] {
        assert!(stderr.contains(path), "{path} not named in:\n{stderr}");
    }
}

#[test]
fn thinking_levels_pick_their_sampling_params_and_max_clamps_per_model() {
    let (off, _) = one_request(&models(), &["--model", "mock/think", "--thinking", "off"]);
    assert_eq!(off.body["temperature"], json!(0.7));
    assert!(off.body.get("top_k").is_none());
    assert!(off.body.get("reasoning_effort").is_none(), "{}", off.body);
    // No `max` entry: max clamps down to the deepest level the model has.
    let (clamped, _) = one_request(
        &models(),
        &["--model", "mock/plain-reasoner", "--thinking", "max"],
    );
    assert_eq!(clamped.body["model"], json!("plain-reasoner"));
    assert_eq!(clamped.body["reasoning_effort"], json!("high"));
}

#[test]
fn model_thinking_levels_and_a_max_default_start_each_model_at_its_level() {
    let settings = json!({
        "defaultThinkingLevel": "max",
        "modelThinkingLevels": {"mock/think": "off"}
    });
    let (think, _) = one_request_with(&models(), Some(&settings), &["--model", "mock/think"]);
    assert!(
        think.body.get("reasoning_effort").is_none(),
        "{}",
        think.body
    );
    assert_eq!(
        think.body["temperature"],
        json!(0.7),
        "the off level's sampling params"
    );
    let (plain, _) = one_request_with(
        &models(),
        Some(&settings),
        &["--model", "mock/plain-reasoner"],
    );
    assert_eq!(
        plain.body["reasoning_effort"],
        json!("high"),
        "max clamped to high"
    );
}
