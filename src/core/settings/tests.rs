use super::*;
use serde_json::json;

#[test]
fn project_settings_win_and_nested_objects_merge() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(agent.clone()).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"theme":"dark","compaction":{"enabled":false,"reserveTokens":1000},"queueMode":"all"}"#,
    )
    .unwrap();
    std::fs::write(
        cwd.join(".pi/settings.json"),
        r#"{"theme":"light","compaction":{"keepRecentTokens":5}}"#,
    )
    .unwrap();
    let s = Settings::load(&agent, &cwd, ProjectTrust::Trusted);
    assert_eq!(s.theme(), Some("light"));
    assert!(!s.compaction_enabled());
    assert_eq!(s.compaction_reserve_tokens(None), 1000);
    assert_eq!(s.compaction_keep_recent_tokens(None), 5);
    assert_eq!(s.steering_mode(), QueueMode::All);
    assert!(s.problems().is_empty());
}

#[test]
fn saving_keeps_keys_edited_by_hand_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().to_path_buf();
    std::fs::write(agent.join("settings.json"), r#"{"theme":"dark"}"#).unwrap();
    let mut s = Settings::load(&agent, dir.path(), ProjectTrust::Trusted);
    std::fs::write(
        agent.join("settings.json"),
        r#"{"theme":"dark","quietStartup":true}"#,
    )
    .unwrap();
    s.set_default_model("mock", "m1");
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(agent.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        on_disk,
        json!({"theme":"dark","quietStartup":true,"defaultProvider":"mock","defaultModel":"m1"})
    );
}

#[test]
fn removing_a_key_deletes_it_from_the_file_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().to_path_buf();
    let file = agent.join("settings.json");
    std::fs::write(
        &file,
        r#"{"theme":"dark","enabledModels":["mock/a"],"compaction":{"enabled":false}}"#,
    )
    .unwrap();
    let mut s = Settings::load(&agent, dir.path(), ProjectTrust::Trusted);
    assert_eq!(s.enabled_models(), vec!["mock/a".to_string()]);
    s.remove_global(&["enabledModels"]).unwrap();
    s.remove_global(&["compaction", "enabled"]).unwrap();
    // Removing what is not there leaves the file alone.
    s.remove_global(&["missing", "key"]).unwrap();
    assert!(s.enabled_models().is_empty());
    let on_disk: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(on_disk, json!({"theme":"dark","compaction":{}}));
}

#[test]
fn broken_settings_file_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.json"), "{ not json").unwrap();
    let mut s = Settings::load(dir.path(), dir.path(), ProjectTrust::Trusted);
    assert_eq!(s.problems().len(), 1);
    assert!(s.problems()[0].to_string().contains("settings.json"));
    s.set_default_model("a", "b");
    assert_eq!(s.default_model(), Some("b"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("settings.json")).unwrap(),
        "{ not json"
    );
}

#[test]
fn retry_max_delay_migrates_to_provider_setting() {
    let s = Settings::in_memory(json!({"retry":{"maxDelayMs":5000,"maxRetries":1}}));
    assert_eq!(
        s.retry(),
        RetrySettings {
            enabled: true,
            max_retries: 1,
            base_delay_ms: 2000,
            max_agent_delay_ms: 60_000,
            max_delay_ms: 5000,
            provider_max_retries: 0,
            provider_timeout_ms: 300_000,
        }
    );
}

#[test]
fn image_width_cells_is_pis_default_floored_and_at_least_one() {
    let width = |v: Value| Settings::in_memory(json!({"terminal": {"imageWidthCells": v}}));
    assert_eq!(Settings::in_memory(json!({})).image_width_cells(), 60);
    assert_eq!(width(json!(80)).image_width_cells(), 80);
    assert_eq!(width(json!(99.7)).image_width_cells(), 99);
    assert_eq!(width(json!(0)).image_width_cells(), 1);
    assert_eq!(width(json!(-5)).image_width_cells(), 1);
    assert_eq!(width(json!("wide")).image_width_cells(), 60);
}

#[test]
fn provider_timeout_and_retries_are_read_and_zero_timeout_means_the_default() {
    let s = Settings::in_memory(json!({"retry":{"provider":{"timeoutMs":250,"maxRetries":0}}}));
    assert_eq!(s.retry().provider_timeout_ms, 250);
    assert_eq!(s.retry().provider_max_retries, 0);
    let zero = Settings::in_memory(json!({"retry":{"provider":{"timeoutMs":0}}}));
    assert_eq!(zero.retry().provider_timeout_ms, 300_000);
}

/// A settings file in a temp agent dir, loaded (no project file).
fn load_user(text: &str) -> (tempfile::TempDir, Settings) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.json"), text).unwrap();
    let settings = Settings::load(
        dir.path(),
        &dir.path().join("no-project"),
        ProjectTrust::Trusted,
    );
    (dir, settings)
}

fn problem_texts(s: &Settings) -> Vec<String> {
    s.problems().iter().map(ToString::to_string).collect()
}

#[test]
fn one_bad_value_is_dropped_alone_with_the_file_key_and_expectation_named() {
    let (dir, s) = load_user(
        r#"{"theme":"light","quietStartup":"yes","compaction":{"enabled":false,"reserveTokens":-3},
            "extensions":["a.ts",5,"b.ts"],"modelThinkingLevels":{"p/a":"high","p/b":"huge"}}"#,
    );
    assert_eq!(s.theme(), Some("light"));
    assert_eq!(s.quiet_startup(), QuietStartup::Off);
    assert!(!s.compaction_enabled());
    assert_eq!(s.compaction_reserve_tokens(None), 16_384);
    assert_eq!(
        s.extension_paths(),
        vec!["a.ts".to_string(), "b.ts".to_string()]
    );
    assert_eq!(s.get("modelThinkingLevels"), Some(&json!({"p/a": "high"})));
    let file = dir.path().join("settings.json");
    let file = file.display();
    assert_eq!(
        problem_texts(&s),
        // In the order of pi's schema.
        vec![
            format!(
                "{file}: modelThinkingLevels[\"p/b\"]: expected one of \"off\", \"minimal\", \"low\", \"medium\", \"high\", \"xhigh\" or \"max\", got \"huge\"; this value is ignored"
            ),
            format!(
                "{file}: compaction.reserveTokens: expected a whole number of 0 or more, got -3; this value is ignored"
            ),
            format!(
                "{file}: quietStartup: expected true, false or \"header\", got \"yes\"; this value is ignored"
            ),
            format!("{file}: extensions[1]: expected a string, got 5; this value is ignored"),
        ]
    );
}

#[test]
fn values_left_out_by_the_check_stay_in_the_file_when_another_key_is_saved() {
    let text = r#"{"outputPad":7,"newerPiKey":{"x":1}}"#;
    let (dir, mut s) = load_user(text);
    assert_eq!(s.output_pad(), 1);
    assert_eq!(s.problems().len(), 1);
    s.set_global(&["theme"], json!("dark")).unwrap();
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        on_disk,
        json!({"outputPad":7,"newerPiKey":{"x":1},"theme":"dark"})
    );
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let (_dir, s) = load_user("\u{feff}{\"theme\":\"light\"}");
    assert_eq!(s.theme(), Some("light"));
    assert!(s.problems().is_empty(), "{:?}", s.problems());
}

#[test]
fn pi_1_6_values_are_read() {
    let s = Settings::in_memory(json!({
        "$schema": "https://pi.dev/schemas/settings.schema.json",
        "quietStartup": "header",
        "outputPad": 0,
        "markdown": {"codeBlockIndent": "\t"},
        "httpIdleTimeoutMs": "disabled",
        "websocketConnectTimeoutMs": 2500,
        "externalEditor": "code --wait",
        "retry": {"maxAgentDelayMs": 5000},
        "compaction": {"reserveTokens": 100, "modelOverrides": {"p/m": {"reserveTokens": 7}}},
    }));
    assert!(s.problems().is_empty(), "{:?}", s.problems());
    assert_eq!(s.quiet_startup(), QuietStartup::Header);
    assert_eq!(s.output_pad(), 0);
    assert_eq!(s.code_block_indent(), "\t");
    assert_eq!(s.http_idle_timeout_ms(), None);
    assert_eq!(s.retry().provider_timeout_ms, NO_TIMEOUT_MS);
    assert_eq!(s.retry().max_agent_delay_ms, 5000);
    assert_eq!(s.websocket_connect_timeout_ms(), Some(Some(2500)));
    assert_eq!(s.external_editor(), Some("code --wait"));
    assert_eq!(s.compaction_reserve_tokens(Some(("p", "m"))), 7);
    assert_eq!(s.compaction_reserve_tokens(Some(("p", "other"))), 100);
    assert_eq!(s.compaction_keep_recent_tokens(Some(("p", "m"))), 20_000);
    let on = Settings::in_memory(json!({"quietStartup": true, "httpIdleTimeoutMs": 0}));
    assert_eq!(on.quiet_startup(), QuietStartup::All);
    assert_eq!(on.http_idle_timeout_ms(), None);
    let unset = Settings::in_memory(json!({"websocketConnectTimeoutMs": "disabled"}));
    assert_eq!(unset.http_idle_timeout_ms(), Some(300_000));
    assert_eq!(unset.websocket_connect_timeout_ms(), Some(None));
}

/// A user and a project settings file; returns the temp dir, the agent dir and the cwd.
fn two_layers(user: &str, project: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    std::fs::write(agent.join("settings.json"), user).unwrap();
    std::fs::write(cwd.join(".pi/settings.json"), project).unwrap();
    (dir, agent, cwd)
}

#[test]
fn objects_merge_at_every_depth_and_tool_modifiers_extend_the_users_list() {
    let (_dir, agent, cwd) = two_layers(
        r#"{"retry":{"provider":{"timeoutMs":5,"maxRetries":1}},"defaultTools":["read","+grep"]}"#,
        r#"{"retry":{"provider":{"maxRetries":3}},"defaultTools":["-read"]}"#,
    );
    let s = Settings::load(&agent, &cwd, ProjectTrust::Trusted);
    assert_eq!(s.retry().provider_timeout_ms, 5);
    assert_eq!(s.retry().provider_max_retries, 3);
    assert_eq!(
        s.default_tools(),
        Some(vec![
            "read".to_string(),
            "+grep".to_string(),
            "-read".to_string()
        ])
    );
    std::fs::write(
        cwd.join(".pi/settings.json"),
        r#"{"defaultTools":["bash"]}"#,
    )
    .unwrap();
    let replaced = Settings::load(&agent, &cwd, ProjectTrust::Trusted);
    assert_eq!(replaced.default_tools(), Some(vec!["bash".to_string()]));
}

#[test]
fn user_only_keys_are_ignored_in_project_settings_with_a_warning() {
    let (_dir, agent, cwd) = two_layers(
        r#"{"defaultProjectTrust":"never"}"#,
        r#"{"defaultProjectTrust":"always","httpProxy":"http://evil:1","theme":"light"}"#,
    );
    let s = Settings::load(&agent, &cwd, ProjectTrust::Trusted);
    assert_eq!(s.get("defaultProjectTrust"), Some(&json!("never")));
    assert_eq!(s.http_proxy(), None);
    assert_eq!(s.theme(), Some("light"));
    let texts = problem_texts(&s);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("defaultProjectTrust is read only from the user settings"));
    assert!(texts[1].contains("httpProxy is read only from the user settings"));
}

#[test]
fn the_old_skills_object_becomes_the_list() {
    let s = Settings::in_memory(
        json!({"skills": {"enableSkillCommands": false, "customDirectories": ["x"]}}),
    );
    assert_eq!(s.skill_paths(), vec!["x".to_string()]);
    assert!(!s.enable_skill_commands());
    assert!(s.problems().is_empty());
}

#[test]
fn keys_for_later_features_are_named_once_unless_their_value_asks_for_nothing() {
    let s = Settings::in_memory(json!({
        "tuiMode": "fullscreen",
        "fullscreenScrollbar": "always",
        "markdown": {"mermaid": "off", "codeBlockIndent": "  "},
        "cacheWarming": "idle",
        "trackingId": "abc",
        "extensions": ["builtin:mcp", "-builtin:codemode", "+builtin:tool-search", "x.ts"],
        "codemode": {"mode": "only"},
    }));
    assert_eq!(
        s.unsupported_keys(),
        vec![
            "codemode.mode",
            "cacheWarming",
            "tuiMode",
            "fullscreenScrollbar",
            "extensions builtin:mcp",
            "extensions builtin:tool-search",
        ]
    );
    let notice = s.unsupported_notice().unwrap();
    assert!(notice.contains("tuiMode, fullscreenScrollbar"), "{notice}");
    let regular =
        Settings::in_memory(json!({"tuiMode": "regular", "fullscreenScrollbar": "always"}));
    assert!(regular.unsupported_notice().is_none());
}

#[test]
fn an_untrusted_project_gives_only_its_session_dir_and_never_the_trust_default() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("proj");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(cwd.join(".pi")).unwrap();
    std::fs::write(agent.join("settings.json"), r#"{"theme":"dark"}"#).unwrap();
    std::fs::write(
        cwd.join(".pi/settings.json"),
        r#"{"theme":"light","sessionDir":"/s","defaultProjectTrust":"always"}"#,
    )
    .unwrap();
    let untrusted = Settings::load(&agent, &cwd, ProjectTrust::Untrusted);
    assert_eq!(untrusted.theme(), Some("dark"));
    assert_eq!(untrusted.project_value("theme"), None);
    assert_eq!(
        untrusted.session_dir_before_trust(&cwd),
        Some(PathBuf::from("/s"))
    );
    let trusted = Settings::load(&agent, &cwd, ProjectTrust::Trusted);
    assert_eq!(trusted.theme(), Some("light"));
    assert_eq!(
        trusted.default_project_trust(),
        crate::core::trust::DefaultProjectTrust::Ask
    );
}
