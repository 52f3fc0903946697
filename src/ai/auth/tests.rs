use super::*;

#[test]
fn api_key_debug_is_redacted() {
    let key = ApiKey::new("sk-ant-very-secret");
    assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
    assert_eq!(
        format!("{:?}", Some(key.clone())),
        "Some(ApiKey(<redacted>))"
    );
    assert_eq!(key.expose(), "sk-ant-very-secret");
}

#[test]
fn precedence_is_runtime_then_auth_json_then_environment() {
    // Only this test touches CEREBRAS_API_KEY.
    unsafe { std::env::set_var("CEREBRAS_API_KEY", "from-env") };
    let dir = tempfile::tempdir().unwrap();
    let mut auth = AuthStorage::load(dir.path());
    assert_eq!(
        auth.api_key("cerebras").map(|k| k.expose().to_string()),
        Some("from-env".into())
    );
    auth.set_api_key("cerebras", &ApiKey::new("from-file"))
        .unwrap();
    assert_eq!(
        auth.api_key("cerebras").map(|k| k.expose().to_string()),
        Some("from-file".into())
    );
    auth.set_runtime_api_key("cerebras", ApiKey::new("from-flag"));
    assert_eq!(
        auth.api_key("cerebras").map(|k| k.expose().to_string()),
        Some("from-flag".into())
    );
    unsafe { std::env::remove_var("CEREBRAS_API_KEY") };
    assert!(auth.has_auth("cerebras"));
    assert!(!auth.has_auth("no-such-provider"));
}

#[test]
fn auth_json_is_written_0600_atomically_and_keeps_entries_it_does_not_understand() {
    let dir = tempfile::tempdir().unwrap();
    let agent_dir = dir.path().join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let path = agent_dir.join("auth.json");
    std::fs::write(
        &path,
        r#"{"anthropic":{"type":"oauth","access":"a","refresh":"r","expires":1,"extra":{"x":1}}}"#,
    )
    .unwrap();
    let mut auth = AuthStorage::load(&agent_dir);
    auth.set_api_key("openai", &ApiKey::new("sk-openai"))
        .unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({
            "anthropic": {"type":"oauth","access":"a","refresh":"r","expires":1,"extra":{"x":1}},
            "openai": {"type":"api_key","key":"sk-openai"}
        })
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let leftovers: Vec<_> = std::fs::read_dir(&agent_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(leftovers, vec!["auth.json".to_string()]);
    // An expired OAuth token is not used.
    assert_eq!(
        auth.get("anthropic").and_then(|v| v.get("refresh")),
        Some(&Value::from("r"))
    );
}

#[test]
fn new_auth_json_and_its_directory_are_created_private() {
    let dir = tempfile::tempdir().unwrap();
    let agent_dir = dir.path().join("new").join("agent");
    let mut auth = AuthStorage::load(&agent_dir);
    auth.set_api_key("groq", &ApiKey::new("gsk")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(agent_dir.join("auth.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dmode = std::fs::metadata(&agent_dir).unwrap().permissions().mode();
        assert_eq!(dmode & 0o777, 0o700);
    }
    assert_eq!(
        AuthStorage::load(&agent_dir)
            .api_key("groq")
            .map(|k| k.expose().to_string()),
        Some("gsk".into())
    );
}

#[test]
fn a_broken_auth_json_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    std::fs::write(&path, "{ not json").unwrap();
    let mut auth = AuthStorage::load(dir.path());
    let err = auth.load_error().unwrap_or_default().to_string();
    assert!(err.contains("auth.json is not valid JSON"), "{err}");
    assert!(auth.set_api_key("openai", &ApiKey::new("k")).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
}

#[test]
fn config_values_resolve_commands_env_names_and_literals() {
    assert_eq!(
        resolve_config_value("!printf ' secret\\n'"),
        Some("secret".into())
    );
    assert_eq!(resolve_config_value("!exit 3"), None);
    // pi 1.6: a bare variable name is literal text; `$NAME` and `${NAME}` interpolate.
    assert_eq!(resolve_config_value("PATH"), Some("PATH".into()));
    assert_eq!(resolve_config_value("$PATH"), std::env::var("PATH").ok());
    assert_eq!(
        resolve_config_value("sk-literal"),
        Some("sk-literal".into())
    );
    // Cached: the command runs once per process.
    let marker = tempfile::NamedTempFile::new().unwrap();
    let cmd = format!("!echo x >> {}; echo v", marker.path().display());
    assert_eq!(resolve_config_value(&cmd), Some("v".into()));
    assert_eq!(resolve_config_value(&cmd), Some("v".into()));
    assert_eq!(std::fs::read_to_string(marker.path()).unwrap(), "x\n");
}

#[test]
fn templates_interpolate_variables_and_escape_dollar_and_bang() {
    let env: BTreeMap<String, String> = [
        ("PI_T_A".to_string(), "alpha".to_string()),
        ("PI_T_B".to_string(), "beta".to_string()),
    ]
    .into();
    let r = |v: &str| resolve_config_value_with(v, &env);
    assert_eq!(r("$PI_T_A"), Some("alpha".into()));
    assert_eq!(r("${PI_T_A}-x"), Some("alpha-x".into()));
    assert_eq!(
        r("Bearer $PI_T_A.$PI_T_B"),
        Some("Bearer alpha.beta".into())
    );
    assert_eq!(r("a$$b"), Some("a$b".into()));
    assert_eq!(r("$!not-a-command"), Some("!not-a-command".into()));
    assert_eq!(
        r("cost: $5"),
        Some("cost: $5".into()),
        "$ + digit is literal"
    );
    assert_eq!(r("${not valid}"), Some("${not valid}".into()));
    assert_eq!(
        r("${PI_T_A"),
        Some("${PI_T_A".into()),
        "unclosed brace is literal"
    );
    assert_eq!(
        r("$PI_T_UNSET_XYZ"),
        None,
        "an unset variable leaves it unresolved"
    );
    assert_eq!(
        missing_config_value_env_vars("$PI_T_A ${PI_T_UNSET_XYZ} $PI_T_UNSET_XYZ", &env),
        vec!["PI_T_UNSET_XYZ".to_string()]
    );
    assert!(config_value_env_vars("!echo $HOME").is_empty());
    assert_eq!(
        config_value_failure("$PI_T_UNSET_XYZ", "API key for provider \"p\""),
        "Failed to resolve API key for provider \"p\" from environment variable: PI_T_UNSET_XYZ"
    );
}

#[test]
fn an_api_key_credential_resolves_with_its_own_env_first() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("auth.json"),
        r#"{"cf": {"type": "api_key", "key": "${PI_T_CRED_KEY}", "env": {"PI_T_CRED_KEY": "from-env-object", "ACCOUNT": "acc", "N": 3}}}"#,
    )
    .unwrap();
    let auth = AuthStorage::load(dir.path());
    assert_eq!(
        auth.stored_api_key("cf").map(|k| k.expose().to_string()),
        Some("from-env-object".into())
    );
    let env = auth.credential_env("cf");
    assert_eq!(env.get("ACCOUNT").map(String::as_str), Some("acc"));
    assert!(!env.contains_key("N"), "non-string values are skipped");
}

#[test]
fn stored_key_values_may_be_commands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("auth.json"),
        r#"{"xai":{"type":"api_key","key":"!echo from-command"}}"#,
    )
    .unwrap();
    let auth = AuthStorage::load(dir.path());
    assert_eq!(
        auth.api_key("xai").map(|k| k.expose().to_string()),
        Some("from-command".into())
    );
}

#[test]
fn missing_key_message_names_the_variable_and_login() {
    insta::assert_snapshot!(missing_key_message("anthropic"), @r#"
    No API key found for anthropic.

    Set one of the environment variables ANTHROPIC_AUTH_TOKEN, ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY, or store a key in ~/.pi/agent/auth.json ({"anthropic": {"type": "api_key", "key": "..."}}), pass --api-key, or use /login to log into a provider via OAuth or API key.
    "#);
    assert!(missing_key_message("groq").contains("Set the GROQ_API_KEY environment variable"));
}

#[test]
fn logout_without_an_entry_writes_nothing_and_never_creates_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let mut storage = AuthStorage::load(dir.path());
    storage.remove("anthropic").unwrap();
    assert!(!path.exists(), "remove created auth.json");

    let text = "{\n  \"openai\": {\"type\": \"api_key\", \"key\": \"k\"}\n}";
    std::fs::write(&path, text).unwrap();
    let mut storage = AuthStorage::load(dir.path());
    storage.remove("anthropic").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    storage.remove("openai").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
}

#[test]
fn writes_wait_for_pis_lock_and_take_over_a_stale_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth.json");
    let lock = crate::ai::oauth::lock_dir_for(&path);
    std::fs::create_dir(&lock).unwrap();
    let mut storage = AuthStorage::load(dir.path());
    let entry = serde_json::json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 5});
    // Held by a live process: refused, nothing written, the lock left alone.
    let err = storage
        .set_credential("github-copilot", entry.clone())
        .unwrap_err();
    assert!(err.to_string().contains("auth.json.lock"), "{err}");
    assert!(!path.exists());
    assert!(lock.exists());
    // Left by a crashed process (older than 30 s): taken over, and released after.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    storage
        .set_credential("github-copilot", entry.clone())
        .unwrap();
    assert!(!lock.exists());
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved, serde_json::json!({"github-copilot": entry}));
}

#[test]
fn vertex_and_bedrock_count_ambient_cloud_credentials_as_pi_does() {
    let env = |vars: &'static [&'static str]| move |name: &str| vars.contains(&name);
    let yes = || true;
    let no = || false;
    let vertex = env(&["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"]);
    assert_eq!(
        ambient_credentials_with("google-vertex", &vertex, &yes),
        Some("GOOGLE_APPLICATION_CREDENTIALS")
    );
    assert_eq!(
        ambient_credentials_with("google-vertex", &vertex, &no),
        None
    );
    let no_location = env(&["GCLOUD_PROJECT"]);
    assert_eq!(
        ambient_credentials_with("google-vertex", &no_location, &yes),
        None
    );
    let keys = env(&["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]);
    assert_eq!(
        ambient_credentials_with("amazon-bedrock", &keys, &no),
        Some("AWS_ACCESS_KEY_ID")
    );
    let half = env(&["AWS_ACCESS_KEY_ID"]);
    assert_eq!(ambient_credentials_with("amazon-bedrock", &half, &no), None);
    let profile = env(&["AWS_PROFILE"]);
    assert_eq!(
        ambient_credentials_with("amazon-bedrock", &profile, &no),
        Some("AWS_PROFILE")
    );
    assert_eq!(ambient_credentials_with("openai", &keys, &yes), None);
}
