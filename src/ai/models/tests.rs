use super::resolve::*;
use super::*;
use crate::ai::model::ThinkingLevel;

fn registry_with(models_json: &str) -> (tempfile::TempDir, ModelRegistry) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("models.json"), models_json).unwrap();
    let reg = ModelRegistry::load(dir.path());
    (dir, reg)
}

#[test]
fn builtin_catalogue_has_every_provider_of_pi_with_prices() {
    let providers = builtin_providers();
    assert_eq!(providers.len(), 43, "{providers:?}");
    // pi-ai's order (alphabetical in 1.6.0).
    assert_eq!(
        &providers[..4],
        ["amazon-bedrock", "ant-ling", "anthropic", "azure"]
    );
    assert_eq!(builtin_models().len(), 1698);
    let sonnet = builtin_models()
        .iter()
        .find(|m| m.provider == "anthropic" && m.id == "claude-sonnet-4-5")
        .expect("claude-sonnet-4-5 is built in");
    assert_eq!(sonnet.api, Api::AnthropicMessages);
    assert_eq!(sonnet.base_url, "https://api.anthropic.com");
    assert!(sonnet.cost.input > 0.0 && sonnet.context_window >= 200_000);
    // APIs pi-rs does not speak yet stay plain names, as pi has them.
    let mistral = builtin_models()
        .iter()
        .find(|m| m.provider == "mistral")
        .unwrap();
    assert_eq!(mistral.api.as_str(), "mistral-conversations");
    let copilot = builtin_models()
        .iter()
        .find(|m| m.provider == "github-copilot")
        .unwrap();
    assert_eq!(
        copilot
            .headers
            .get("Copilot-Integration-Id")
            .map(String::as_str),
        Some("vscode-chat")
    );
}

#[test]
fn thinking_off_clamps_to_what_a_gpt5_model_is_sent() {
    let gpt = builtin_models()
        .iter()
        .find(|m| m.provider == "openai" && m.id == "gpt-5")
        .unwrap();
    // thinkingLevelMap {off: null}: reasoning cannot be turned off.
    assert!(
        !gpt.available_thinking_levels()
            .contains(&ThinkingLevel::Off)
    );
    assert_eq!(
        gpt.clamp_thinking(ThinkingLevel::Off),
        ThinkingLevel::Minimal
    );
    assert_eq!(
        gpt.clamp_thinking(ThinkingLevel::Xhigh),
        ThinkingLevel::High
    );
    let sonnet = builtin_models()
        .iter()
        .find(|m| m.provider == "anthropic" && m.id == "claude-sonnet-4-5")
        .unwrap();
    assert_eq!(
        sonnet.clamp_thinking(ThinkingLevel::Off),
        ThinkingLevel::Off
    );
    assert_eq!(
        sonnet.clamp_thinking(ThinkingLevel::Xhigh),
        ThinkingLevel::High
    );
}

#[test]
fn initial_model_follows_pis_provider_order() {
    let pick = |providers: &[&str]| {
        let available: Vec<Model> = builtin_models()
            .iter()
            .filter(|m| providers.contains(&m.provider.as_str()))
            .cloned()
            .collect();
        initial_model(&available).map(Model::full_id)
    };
    assert_eq!(pick(&["zai"]).as_deref(), Some("zai/glm-5.3"));
    assert_eq!(
        pick(&["openai", "anthropic"]).as_deref(),
        Some("anthropic/claude-opus-5-5")
    );
    assert_eq!(
        pick(&["openrouter", "deepseek"]).as_deref(),
        Some("deepseek/deepseek-v4-pro")
    );
}

#[test]
fn custom_providers_get_pi_defaults_and_upsert_by_id() {
    let (_d, reg) = registry_with(
        r#"{
          // comments and trailing commas are allowed
          "providers": {
            "ollama": {
              "baseUrl": "http://localhost:11434/v1",
              "api": "openai-completions",
              "apiKey": "ollama",
              "compat": {"supportsDeveloperRole": false},
              "models": [{"id": "llama3.1:8b"}, {"id": "qwen", "reasoning": true, "compat": {"supportsReasoningEffort": false}},],
            },
            "anthropic": {
              "baseUrl": "https://proxy.example/v1",
              "models": [{"id": "claude-sonnet-4-5", "name": "Proxied Sonnet", "contextWindow": 1000}]
            }
          }
        }"#,
    );
    assert_eq!(reg.error(), None);
    let llama = reg.find("ollama", "llama3.1:8b").unwrap();
    assert_eq!(
        (
            llama.name.as_str(),
            llama.context_window,
            llama.max_tokens,
            llama.reasoning
        ),
        ("llama3.1:8b", 128_000, 16_384, false)
    );
    let qwen = reg.find("ollama", "qwen").unwrap();
    assert_eq!(
        qwen.compat,
        Some(serde_json::json!({"supportsDeveloperRole": false, "supportsReasoningEffort": false}))
    );
    let sonnet = reg.find("anthropic", "claude-sonnet-4-5").unwrap();
    assert_eq!(
        (sonnet.name.as_str(), sonnet.context_window),
        ("Proxied Sonnet", 1000)
    );
    assert_eq!(
        sonnet.api,
        Api::AnthropicMessages,
        "api inherited from the built-in provider"
    );
    assert_eq!(sonnet.base_url, "https://proxy.example/v1");
    let opus = reg
        .all()
        .iter()
        .find(|m| m.provider == "anthropic" && m.id != "claude-sonnet-4-5")
        .unwrap();
    assert_eq!(
        opus.base_url, "https://proxy.example/v1",
        "baseUrl-only override proxies built-ins"
    );
    assert_eq!(
        reg.all()
            .iter()
            .filter(|m| m.id == "claude-sonnet-4-5" && m.provider == "anthropic")
            .count(),
        1
    );
}

#[test]
fn model_overrides_patch_builtin_models() {
    let (_d, reg) = registry_with(
        r#"{"providers": {"openai": {"modelOverrides": {"gpt-5": {"name": "Five", "cost": {"input": 0}, "headers": {"x-team": "a"}}}}}}"#,
    );
    assert_eq!(reg.error(), None);
    let m = reg.find("openai", "gpt-5").unwrap();
    let builtin = builtin_models()
        .iter()
        .find(|b| b.provider == "openai" && b.id == "gpt-5")
        .unwrap();
    assert_eq!(m.name, "Five");
    assert_eq!(m.cost.input, 0.0);
    assert_eq!(m.cost.output, builtin.cost.output);
}

#[test]
fn broken_models_json_reports_file_path_and_fix_and_keeps_builtins() {
    let (dir, reg) = registry_with(
        r#"{"providers": {
            "local": {"baseUrl": "http://x/v1", "models": [{"id": "a", "contextWindow": "big", "input": ["text", "video"]}, {"name": "no id"}]},
            "anthropic": {}
        }}"#,
    );
    let err = reg
        .error()
        .unwrap()
        .replace(&dir.path().display().to_string(), "<dir>");
    insta::assert_snapshot!(err, @r#"
    Ignored in models.json (<dir>/models.json), the rest of the file is used:
      - providers.local.models[0].input[1]: must be "text" or "image"
      - providers.local.models[0].contextWindow: expected a number, found a string (remove it to use the default, 128000)
      - providers.local.models[1].id: is required (the model id sent to the API)
      - providers.local: "apiKey" is required when defining custom models (any value works for local servers, e.g. "ollama")
      - providers.local.models[id=a]: no "api" specified; set it on the provider or the model (openai-completions, openai-responses, anthropic-messages, google-generative-ai)
      - providers.anthropic: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models"
    Fix these values and reopen /model to reload the file.
    "#);
    // Model "a" has no api anywhere, so it cannot be used; the built-ins stay.
    assert_eq!(reg.all().len(), builtin_models().len());
}

#[test]
fn one_bad_value_drops_only_that_value() {
    let (dir, reg) = registry_with(
        r#"{"providers": {
            "local": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "k",
              "compat": {"vllmPriority": "high", "promptCacheKeyMode": "enabled", "supportsStore": "yes"},
              "models": [
                {"id": "a", "reasoning": true, "contextWindow": "big",
                 "thinkingLevelMap": {"max": "max", "xhigh": "xhigh", "ultra": "u", "low": 3}},
                {"id": "b", "maxTokens": 999}
              ]},
            "other": {"baseUrl": "http://y/v1", "api": "openai-completions", "apiKey": "k", "models": [{"id": "c"}]}
        }}"#,
    );
    let err = reg.error().unwrap_or_default().to_string();
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    for path in [
        "providers.local.compat.vllmPriority: expected a number, found a string; ignored",
        "providers.local.compat.supportsStore: expected true or false, found a string; ignored",
        "providers.local.models[0].contextWindow:",
        "providers.local.models[0].thinkingLevelMap.ultra: unknown thinking level",
        "providers.local.models[0].thinkingLevelMap.low: expected a string or null",
    ] {
        assert!(err.contains(path), "missing {path:?} in\n{err}");
    }
    let a = reg.find("local", "a").expect("model a kept");
    assert_eq!(
        a.context_window, 128_000,
        "the bad value falls back to the default"
    );
    let map = a.thinking_level_map.as_ref().unwrap();
    assert_eq!(map.get("max"), Some(&Some("max".to_string())));
    assert!(!map.contains_key("ultra") && !map.contains_key("low"));
    assert_eq!(a.clamp_thinking(ThinkingLevel::Max), ThinkingLevel::Max);
    let compat = a.compat.as_ref().unwrap();
    assert_eq!(
        compat.get("promptCacheKeyMode"),
        Some(&serde_json::json!("enabled"))
    );
    assert!(compat.get("vllmPriority").is_none() && compat.get("supportsStore").is_none());
    assert_eq!(reg.find("local", "b").map(|m| m.max_tokens), Some(999));
    assert!(
        reg.find("other", "c").is_some(),
        "other providers are untouched"
    );
}

#[test]
fn pi_16_model_fields_are_parsed_checked_and_merged_by_overrides() {
    let (_dir, reg) = registry_with(
        r#"{"providers": {
            "local": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "k",
              "models": [{"id": "q", "reasoning": true,
                "samplingParams": {"temperature": 1.0, "top_p": 0.95},
                "samplingParamsByThinkingLevel": {"off": {"temperature": 0.7}, "high": {"top_k": 20}, "turbo": {}},
                "inputLimits": {"maxRequestBytes": 1000, "images": {"maxPerMessage": 0, "resize": {"maxWidth": 1568, "jpegQuality": 101}}},
                "promptCache": {"short": 300, "long": -1},
                "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                         "tiers": [{"inputTokensAbove": 200000, "input": 2, "output": 4, "cacheRead": 0, "cacheWrite": 0}, {"input": 9}]}}]},
            "anthropic": {"modelOverrides": {"claude-sonnet-4-5": {
                "samplingParams": {"top_p": 0.5},
                "promptCache": {"short": 300, "long": 3600}}}}
        }}"#,
    );
    let err = reg.error().unwrap_or_default().to_string();
    for path in [
        "providers.local.models[0].samplingParamsByThinkingLevel.turbo: unknown thinking level",
        "providers.local.models[0].inputLimits.images.maxPerMessage: expected an integer of at least 1; ignored",
        "providers.local.models[0].inputLimits.images.resize.jpegQuality: expected an integer from 1 to 100; ignored",
        "providers.local.models[0].promptCache.long: expected a lifetime in seconds above 0; ignored",
        "providers.local.models[0].cost.tiers[1]: needs numbers for inputTokensAbove, output, cacheRead, cacheWrite; this tier is ignored",
    ] {
        assert!(err.contains(path), "missing {path:?} in\n{err}");
    }
    let q = reg.find("local", "q").unwrap();
    let x = &q.extras;
    assert_eq!(
        x.input_limits,
        Some(
            serde_json::json!({"maxRequestBytes": 1000, "images": {"resize": {"maxWidth": 1568}}})
        )
    );
    assert_eq!(x.prompt_cache, Some(serde_json::json!({"short": 300})));
    assert_eq!(x.cost_tiers.as_ref().map(Vec::len), Some(1));
    let params = |level| serde_json::Value::Object(q.sampling_params_for(level).unwrap());
    assert_eq!(
        params(ThinkingLevel::Off),
        serde_json::json!({"temperature": 0.7, "top_p": 0.95})
    );
    assert_eq!(
        params(ThinkingLevel::High),
        serde_json::json!({"temperature": 1.0, "top_p": 0.95, "top_k": 20})
    );
    assert_eq!(
        params(ThinkingLevel::Max),
        serde_json::json!({"temperature": 1.0, "top_p": 0.95, "top_k": 20}),
        "max clamps to high on a model without a max entry"
    );
    let sonnet = reg.find("anthropic", "claude-sonnet-4-5").unwrap();
    assert_eq!(
        sonnet.extras.sampling_params,
        serde_json::from_value(serde_json::json!({"top_p": 0.5})).unwrap()
    );
    assert_eq!(
        sonnet.extras.prompt_cache,
        Some(serde_json::json!({"short": 300, "long": 3600}))
    );
}

#[test]
fn models_json_key_comes_after_auth_json_and_before_the_environment() {
    // Only this test touches these variables.
    unsafe {
        std::env::set_var("PI_RS_T_MJ_KEY", "from-template");
        std::env::set_var("GROQ_API_KEY", "from-groq-env");
    }
    let (dir, reg) = registry_with(
        r#"{"providers": {
            "groq": {"apiKey": "models-json-literal"},
            "tpl": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "Bearer-${PI_RS_T_MJ_KEY}", "models": [{"id": "m"}]},
            "bare": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "PI_RS_T_MJ_KEY", "models": [{"id": "m"}]},
            "unset": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "$PI_RS_T_MJ_UNSET", "models": [{"id": "m"}]}
        }}"#,
    );
    let key = |reg: &ModelRegistry, p: &str, id: &str| {
        let m = reg.find(p, id).unwrap().clone();
        reg.request_auth(&m).map(|a| {
            a.api_key
                .map(|k| k.expose().to_string())
                .unwrap_or_default()
        })
    };
    let groq_model = builtin_models()
        .iter()
        .find(|m| m.provider == "groq")
        .unwrap()
        .id
        .clone();
    assert_eq!(
        key(&reg, "groq", &groq_model).unwrap(),
        "models-json-literal"
    );
    assert_eq!(key(&reg, "tpl", "m").unwrap(), "Bearer-from-template");
    assert_eq!(
        key(&reg, "bare", "m").unwrap(),
        "PI_RS_T_MJ_KEY",
        "a bare name is literal"
    );
    let unset = reg.find("unset", "m").unwrap().clone();
    assert!(
        !reg.has_configured_auth(&unset),
        "an unset $NAME is not configured"
    );
    assert_eq!(
        key(&reg, "unset", "m").unwrap_err(),
        "Failed to resolve API key for provider \"unset\" from environment variable: PI_RS_T_MJ_UNSET"
    );
    std::fs::write(
        dir.path().join("auth.json"),
        r#"{"groq": {"type": "api_key", "key": "from-auth-json"}}"#,
    )
    .unwrap();
    let reg = ModelRegistry::load(dir.path());
    assert_eq!(key(&reg, "groq", &groq_model).unwrap(), "from-auth-json");
    let mut reg = reg;
    reg.set_runtime_api_key("groq", ApiKey::new("from-flag"));
    assert_eq!(key(&reg, "groq", &groq_model).unwrap(), "from-flag");
}

#[test]
fn invalid_json_syntax_is_reported_with_position() {
    let (dir, reg) = registry_with("{\"providers\": {\"x\": }");
    let err = reg
        .error()
        .unwrap()
        .replace(&dir.path().display().to_string(), "<dir>");
    insta::assert_snapshot!(err, @r"
    Failed to parse models.json: expected value at line 1 column 21

    File: <dir>/models.json
    Fix the JSON syntax (pi-rs allows // comments and trailing commas); built-in models are used until then.
    ");
}

#[test]
fn reload_picks_up_edits() {
    let (dir, mut reg) = registry_with(r#"{"providers": {}}"#);
    assert!(reg.find("lm", "m1").is_none());
    std::fs::write(
        dir.path().join("models.json"),
        r#"{"providers": {"lm": {"baseUrl": "http://localhost:1234/v1", "api": "openai-completions", "apiKey": "lm", "models": [{"id": "m1"}]}}}"#,
    )
    .unwrap();
    reg.reload();
    assert!(reg.find("lm", "m1").is_some());
}

#[test]
fn request_auth_resolves_models_json_keys_headers_and_auth_header() {
    let (_d, reg) = registry_with(
        r#"{"providers": {"gw": {"baseUrl": "http://gw/v1", "api": "openai-completions", "apiKey": "!echo gw-key",
            "authHeader": true, "headers": {"x-org": "org-1"}, "models": [{"id": "m", "headers": {"x-model": "!echo mh"}}]}}}"#,
    );
    let m = reg.find("gw", "m").unwrap().clone();
    assert!(reg.has_configured_auth(&m));
    assert_eq!(
        reg.available()
            .iter()
            .filter(|x| x.provider == "gw")
            .count(),
        1
    );
    let auth = reg.request_auth(&m).unwrap();
    assert_eq!(auth.api_key.as_ref().map(|k| k.expose()), Some("gw-key"));
    let headers: Vec<String> = auth
        .headers
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(
        headers,
        vec!["Authorization=Bearer gw-key", "x-model=mh", "x-org=org-1"]
    );
    assert!(
        !format!("{auth:?}").contains("gw-key")
            || format!("{:?}", auth.api_key) == "Some(ApiKey(<redacted>))"
    );
}

#[test]
fn a_failing_key_command_is_a_clear_error() {
    let (_d, reg) = registry_with(
        r#"{"providers": {"gw": {"baseUrl": "http://gw/v1", "api": "openai-completions", "apiKey": "!exit 1", "models": [{"id": "m"}]}}}"#,
    );
    let m = reg.find("gw", "m").unwrap().clone();
    assert_eq!(
        reg.request_auth(&m).unwrap_err(),
        "Failed to resolve API key for provider \"gw\" from shell command: exit 1 (it failed or printed nothing; run it in a shell to see why)"
    );
}

fn m(provider: &str, id: &str, name: &str) -> Model {
    let mut model = builtin_models()[0].clone();
    model.provider = provider.into();
    model.id = id.into();
    model.name = name.into();
    model
}

fn table() -> Vec<Model> {
    vec![
        m("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5"),
        m(
            "anthropic",
            "claude-sonnet-4-5-20250929",
            "Claude Sonnet 4.5 (dated)",
        ),
        m("anthropic", "claude-3-5-haiku-20241022", "Claude Haiku 3.5"),
        m(
            "anthropic",
            "claude-3-5-haiku-20240601",
            "Claude Haiku 3.5 old",
        ),
        m("openai", "gpt-5", "GPT-5"),
        m("openai", "gpt-5-mini", "GPT-5 mini"),
        m("openrouter", "openai/gpt-5", "OpenAI: GPT-5"),
        m(
            "openrouter",
            "qwen/qwen3-coder:exacto",
            "Qwen3 Coder Exacto",
        ),
        m("google", "gemini-2.5-pro", "Gemini 2.5 Pro"),
    ]
}

#[test]
fn pattern_resolution_table() {
    let models = table();
    let cases: &[(&str, Option<&str>, Option<ThinkingLevel>)] = &[
        (
            "anthropic/claude-sonnet-4-5",
            Some("anthropic/claude-sonnet-4-5"),
            None,
        ),
        (
            "CLAUDE-SONNET-4-5",
            Some("anthropic/claude-sonnet-4-5"),
            None,
        ),
        ("sonnet", Some("anthropic/claude-sonnet-4-5"), None),
        (
            "sonnet:high",
            Some("anthropic/claude-sonnet-4-5"),
            Some(ThinkingLevel::High),
        ),
        ("haiku", Some("anthropic/claude-3-5-haiku-20241022"), None),
        ("gpt-5", Some("openai/gpt-5"), None),
        (
            "openrouter/openai/gpt-5",
            Some("openrouter/openai/gpt-5"),
            None,
        ),
        (
            "qwen/qwen3-coder:exacto",
            Some("openrouter/qwen/qwen3-coder:exacto"),
            None,
        ),
        (
            "qwen3-coder:exacto:low",
            Some("openrouter/qwen/qwen3-coder:exacto"),
            Some(ThinkingLevel::Low),
        ),
        ("Gemini 2.5", Some("google/gemini-2.5-pro"), None),
        ("nonexistent", None, None),
    ];
    for (pattern, want, level) in cases {
        let got = parse_model_pattern(pattern, &models, true);
        let got_id = got.model.map(Model::full_id);
        assert_eq!(got_id.as_deref(), *want, "{pattern}");
        assert_eq!(got.thinking, *level, "{pattern}");
    }
}

#[test]
fn invalid_thinking_suffix_warns_in_scopes_and_fails_on_the_cli() {
    let models = table();
    let scoped = parse_model_pattern("sonnet:turbo", &models, true);
    assert_eq!(
        scoped.model.map(Model::full_id).as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    assert_eq!(
        scoped.warning.as_deref(),
        Some(
            "Invalid thinking level \"turbo\" in pattern \"sonnet:turbo\". Using default instead."
        )
    );
    assert!(
        parse_model_pattern("sonnet:turbo", &models, false)
            .model
            .is_none()
    );
}

#[test]
fn scopes_accept_globs_with_levels_and_report_unmatched_patterns() {
    let models = table();
    let (scoped, warnings) = resolve_model_scope(
        &["anthropic/*sonnet*:high", "gpt-5-mini", "*haiku*", "nope*"],
        &models,
    );
    let names: Vec<String> = scoped
        .iter()
        .map(|s| {
            format!(
                "{}{}",
                s.model.full_id(),
                s.thinking.map(|t| format!(":{t}")).unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            "anthropic/claude-sonnet-4-5:high",
            "anthropic/claude-sonnet-4-5-20250929:high",
            "openai/gpt-5-mini",
            "anthropic/claude-3-5-haiku-20241022",
            "anthropic/claude-3-5-haiku-20240601",
        ]
    );
    assert_eq!(warnings, vec!["No models match pattern \"nope*\""]);
}

#[test]
fn cli_resolution_infers_providers_and_falls_back_to_custom_ids() {
    let models = table();
    let r = resolve_cli_model(None, "openai/gpt-5", &models).unwrap();
    assert_eq!(r.model.full_id(), "openai/gpt-5");
    let r = resolve_cli_model(Some("OpenRouter"), "openrouter/openai/gpt-5", &models).unwrap();
    assert_eq!(r.model.full_id(), "openrouter/openai/gpt-5");
    let r = resolve_cli_model(Some("anthropic"), "claude-opus-9", &models).unwrap();
    assert_eq!(r.model.full_id(), "anthropic/claude-opus-9");
    assert_eq!(
        r.warning.as_deref(),
        Some(
            "Model \"claude-opus-9\" not found for provider \"anthropic\". Using custom model id."
        )
    );
    assert_eq!(
        resolve_cli_model(Some("nobody"), "x", &models).unwrap_err(),
        "Unknown provider \"nobody\". Use --list-models to see available providers/models."
    );
    insta::assert_snapshot!(resolve_cli_model(None, "gemini-2.5-pr0", &models).unwrap_err(), @r#"Model "gemini-2.5-pr0" not found. Use --list-models to see available models. Did you mean: google/gemini-2.5-pro?"#);
}

#[test]
fn closest_matches_rank_substrings_then_edit_distance() {
    let models = table();
    assert_eq!(
        closest_matches("claude-sonet-4-5", &models, 2),
        vec!["anthropic/claude-sonnet-4-5".to_string()]
    );
    assert_eq!(
        closest_matches("gpt-5-min", &models, 1),
        vec!["openai/gpt-5-mini".to_string()]
    );
    assert!(closest_matches("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", &models, 3).is_empty());
}

#[test]
fn initial_model_prefers_provider_defaults() {
    let mut models = table();
    models.push(m("openai", "gpt-6.2-sol", "GPT-6.2 Sol"));
    assert_eq!(
        initial_model(&models).map(Model::full_id).as_deref(),
        Some("openai/gpt-6.2-sol")
    );
    assert_eq!(
        initial_model(&models[..1]).map(Model::full_id).as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
}

#[test]
fn a_copilot_login_gives_pis_default_model_and_the_api_host_its_token_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.json"),
        serde_json::json!({"providers": {
            "alpha": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                "apiKey": "k", "models": [{"id": "a-model"}]},
            "github-copilot": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                "apiKey": "unused", "models": [{"id": "other"}, {"id": "gpt-6.1-sol"}]}
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("auth.json"),
        serde_json::json!({"github-copilot": {"type": "oauth", "refresh": "gho_x",
            "access": "tid=1;proxy-ep=proxy.business.githubcopilot.com;", "expires": 1}})
        .to_string(),
    )
    .unwrap();
    let registry = ModelRegistry::load(dir.path());
    let available = registry.available();
    assert_eq!(
        initial_model(&available).map(Model::full_id).as_deref(),
        Some("github-copilot/gpt-6.1-sol")
    );
    assert_eq!(
        registry.find("github-copilot", "other").unwrap().base_url,
        "https://api.business.githubcopilot.com"
    );
    assert_eq!(
        registry.find("alpha", "a-model").unwrap().base_url,
        "http://127.0.0.1:9/v1"
    );
}

#[test]
fn extension_providers_replace_models_override_urls_and_unregister_restores() {
    let (_d, mut reg) = registry_with(r#"{"providers": {}}"#);
    let anthropic_count = reg
        .all()
        .iter()
        .filter(|m| m.provider == "anthropic")
        .count();
    assert!(anthropic_count > 1);

    // Models given: they replace every model of the provider, with pi's defaults.
    reg.register_provider(
        "anthropic",
        &serde_json::json!({"baseUrl": "http://proxy", "apiKey": "K", "api": "anthropic-messages",
            "headers": {"x-h": "v"}, "models": [{"id": "only", "contextWindow": 1000}]}),
    )
    .unwrap();
    let ids: Vec<&str> = reg
        .all()
        .iter()
        .filter(|m| m.provider == "anthropic")
        .map(|m| m.id.as_str())
        .collect();
    assert_eq!(ids, ["only"]);
    let only = reg.find("anthropic", "only").unwrap().clone();
    assert_eq!(
        (only.base_url.as_str(), only.context_window),
        ("http://proxy", 1000)
    );
    assert_eq!(only.max_tokens, 16_384);
    let auth = reg.request_auth(&only).unwrap();
    assert_eq!(auth.headers.get("x-h").map(String::as_str), Some("v"));

    // Registered again with only a field: the other fields stay (pi's upsert).
    reg.register_provider("anthropic", &serde_json::json!({"baseUrl": "http://other"}))
        .unwrap();
    assert_eq!(
        reg.find("anthropic", "only").unwrap().base_url,
        "http://other"
    );

    // A reload keeps it; unregistering brings the built-ins back.
    reg.reload();
    assert!(reg.find("anthropic", "only").is_some());
    reg.unregister_provider("anthropic");
    assert!(reg.find("anthropic", "only").is_none());
    assert_eq!(
        reg.all()
            .iter()
            .filter(|m| m.provider == "anthropic")
            .count(),
        anthropic_count
    );

    // Only a base URL: the built-in models keep their ids and take the URL.
    reg.register_provider("openai", &serde_json::json!({"baseUrl": "http://oa"}))
        .unwrap();
    assert!(
        reg.all()
            .iter()
            .filter(|m| m.provider == "openai")
            .all(|m| m.base_url == "http://oa")
    );
}

#[test]
fn extension_provider_with_models_needs_base_url_api_key_and_api() {
    let (_d, mut reg) = registry_with(r#"{"providers": {}}"#);
    let before = reg.all().len();
    let err = reg
        .register_provider("x", &serde_json::json!({"models": [{"id": "m"}]}))
        .unwrap_err();
    assert!(err.starts_with("Provider x: "), "{err}");
    assert!(err.contains("\"baseUrl\" is required"), "{err}");
    assert!(err.contains("\"apiKey\" is required"), "{err}");
    assert!(err.contains("no \"api\" specified"), "{err}");
    assert_eq!(reg.all().len(), before);
    assert!(reg.registered_providers().is_empty());
}

#[test]
fn azure_is_found_by_its_old_id_in_models_json_auth_json_and_model_references() {
    let (dir, reg) = registry_with(
        r#"{"providers": {"azure-openai-responses": {"baseUrl": "https://proxy.example/openai/v1",
            "models": [{"id": "my-foundry-model", "api": "openai-completions"}]}}}"#,
    );
    assert!(reg.error().is_none(), "{:?}", reg.error());
    let custom = reg
        .find("azure-openai-responses", "my-foundry-model")
        .expect("custom model under the old azure id");
    assert_eq!(custom.provider, "azure");
    let builtin = reg
        .all()
        .iter()
        .find(|m| m.provider == "azure" && m.id != "my-foundry-model")
        .unwrap()
        .clone();
    assert_eq!(builtin.base_url, "https://proxy.example/openai/v1");
    let resolved = resolve_cli_model(
        None,
        &format!("azure-openai-responses/{}", builtin.id),
        reg.all(),
    )
    .unwrap();
    assert_eq!(resolved.model.full_id(), builtin.full_id());
    let resolved =
        resolve_cli_model(Some("azure-openai-responses"), &builtin.id, reg.all()).unwrap();
    assert_eq!(resolved.model.full_id(), builtin.full_id());
    std::fs::write(
        dir.path().join("auth.json"),
        r#"{"azure-openai-responses": {"type": "api_key", "key": "az-key"}}"#,
    )
    .unwrap();
    let reg = ModelRegistry::load(dir.path());
    assert!(reg.has_configured_auth(&builtin));
    assert_eq!(
        reg.auth()
            .stored_api_key("azure")
            .map(|k| k.expose().to_string()),
        Some("az-key".into())
    );
}
