//! `settings.json`: the global file (`~/.pi/agent/settings.json`) deep-merged with the
//! project file (`<cwd>/.pi/settings.json`, which wins), read with pi's keys and defaults.
//! The project file is read only when the project is trusted ([`ProjectTrust`], which
//! the settings carry for every reader of project resources); `sessionDir` alone is read
//! from it either way ([`project_session_dir`]), and `defaultProjectTrust` only ever
//! comes from the global file, as in pi.
//!
//! Settings are kept as JSON so keys we do not know (or that a newer pi wrote) survive.
//! Changes made from the UI are written to the global file only, by re-reading it and
//! changing just the keys that changed, so hand edits made meanwhile are kept. A file that
//! does not parse is reported and never overwritten.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::ai::model::ThinkingLevel;
use crate::ai::retry::DEFAULT_TIMEOUT_MS;
use crate::core::trust::decision::{DefaultProjectTrust, ProjectTrust};

/// A settings file that could not be read or parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsProblem {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for SettingsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "could not read settings file {}: {} (fix or delete the file; it will not be overwritten)",
            self.path.display(),
            self.message
        )
    }
}

/// Retry policy for failed model requests (`retry.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    /// Agent-level retries of a failed answer (`retry.enabled`, `retry.maxRetries`,
    /// `retry.baseDelayMs`).
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// A server-requested wait longer than this fails at once (`retry.provider.maxRetryDelayMs`).
    pub max_delay_ms: u64,
    /// Retries of a request that failed before its response started
    /// (`retry.provider.maxRetries`, 2 as in the SDKs pi uses).
    pub provider_max_retries: u32,
    /// Longest silence before the response starts and between streamed chunks
    /// (`retry.provider.timeoutMs`, 600 000 as in the SDKs; 0 means the default, there is
    /// no way to wait forever).
    pub provider_timeout_ms: u64,
}

/// `steeringMode` / `followUpMode`: deliver queued messages one at a time or all at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    #[default]
    OneAtATime,
    All,
}

impl QueueMode {
    pub fn parse(s: &str) -> Option<QueueMode> {
        match s {
            "one-at-a-time" => Some(QueueMode::OneAtATime),
            "all" => Some(QueueMode::All),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            QueueMode::OneAtATime => "one-at-a-time",
            QueueMode::All => "all",
        }
    }
}

/// Merged settings plus where they came from.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    global_path: Option<PathBuf>,
    project_path: Option<PathBuf>,
    global: Map<String, Value>,
    project: Map<String, Value>,
    merged: Map<String, Value>,
    global_unreadable: bool,
    problems: Vec<SettingsProblem>,
    project_trust: ProjectTrust,
}

impl Settings {
    /// Loads `<agent_dir>/settings.json`, and `<cwd>/.pi/settings.json` when `trust` says
    /// the project is trusted.
    pub fn load(agent_dir: &Path, cwd: &Path, trust: ProjectTrust) -> Settings {
        let global_path = agent_dir.join("settings.json");
        let project_path = crate::core::paths::project_config_dir(cwd).join("settings.json");
        let mut problems = Vec::new();
        let (global, global_unreadable) = match read_settings_file(&global_path) {
            Ok(map) => (map, false),
            Err(p) => {
                problems.push(p);
                (Map::new(), true)
            }
        };
        let project = if trust.is_trusted() {
            read_settings_file(&project_path).unwrap_or_else(|p| {
                problems.push(p);
                Map::new()
            })
        } else {
            Map::new()
        };
        let merged = deep_merge(&global, &project);
        Settings {
            global_path: Some(global_path),
            project_path: Some(project_path),
            global,
            project,
            merged,
            global_unreadable,
            problems,
            project_trust: trust,
        }
    }

    /// Whether the project's settings and resources are used.
    pub fn project_trust(&self) -> ProjectTrust {
        self.project_trust
    }

    /// `defaultProjectTrust`, from the global file only (a project cannot trust itself).
    pub fn default_project_trust(&self) -> DefaultProjectTrust {
        DefaultProjectTrust::parse(
            self.global
                .get("defaultProjectTrust")
                .and_then(Value::as_str),
        )
    }

    /// Settings that live only in memory (tests, `--no-session` style embedding).
    pub fn in_memory(value: Value) -> Settings {
        let global = match value {
            Value::Object(map) => migrate(map),
            _ => Map::new(),
        };
        let merged = global.clone();
        Settings {
            global,
            merged,
            ..Settings::default()
        }
    }

    /// Problems found while loading (to be shown as warnings).
    pub fn problems(&self) -> &[SettingsProblem] {
        &self.problems
    }

    pub fn project_path(&self) -> Option<&Path> {
        self.project_path.as_deref()
    }

    /// The merged settings as JSON.
    pub fn as_json(&self) -> &Map<String, Value> {
        &self.merged
    }

    /// A value by dotted path (`"compaction.reserveTokens"`).
    pub fn get(&self, path: &str) -> Option<&Value> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let mut cur = self.merged.get(first)?;
        for part in parts {
            cur = cur.as_object()?.get(part)?;
        }
        Some(cur)
    }

    fn str_at(&self, path: &str) -> Option<&str> {
        self.get(path).and_then(Value::as_str)
    }

    fn bool_at(&self, path: &str, default: bool) -> bool {
        self.get(path).and_then(Value::as_bool).unwrap_or(default)
    }

    fn u64_at(&self, path: &str, default: u64) -> u64 {
        self.get(path)
            .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
            .unwrap_or(default)
    }

    fn strings_at(&self, path: &str) -> Vec<String> {
        self.get(path)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn default_provider(&self) -> Option<&str> {
        self.str_at("defaultProvider")
    }
    pub fn default_model(&self) -> Option<&str> {
        self.str_at("defaultModel")
    }
    pub fn default_thinking_level(&self) -> Option<ThinkingLevel> {
        self.str_at("defaultThinkingLevel")
            .and_then(ThinkingLevel::parse)
    }
    pub fn theme(&self) -> Option<&str> {
        self.str_at("theme")
    }
    pub fn hide_thinking_block(&self) -> bool {
        self.bool_at("hideThinkingBlock", false)
    }
    pub fn quiet_startup(&self) -> bool {
        self.bool_at("quietStartup", false)
    }
    pub fn collapse_changelog(&self) -> bool {
        self.bool_at("collapseChangelog", false)
    }
    pub fn last_changelog_version(&self) -> Option<&str> {
        self.str_at("lastChangelogVersion")
    }
    pub fn shell_path(&self) -> Option<&str> {
        self.str_at("shellPath")
    }
    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.str_at("shellCommandPrefix")
    }
    pub fn steering_mode(&self) -> QueueMode {
        self.str_at("steeringMode")
            .and_then(QueueMode::parse)
            .unwrap_or_default()
    }
    pub fn follow_up_mode(&self) -> QueueMode {
        self.str_at("followUpMode")
            .and_then(QueueMode::parse)
            .unwrap_or_default()
    }
    pub fn compaction_enabled(&self) -> bool {
        self.bool_at("compaction.enabled", true)
    }
    pub fn compaction_reserve_tokens(&self) -> u64 {
        self.u64_at("compaction.reserveTokens", 16_384)
    }
    pub fn compaction_keep_recent_tokens(&self) -> u64 {
        self.u64_at("compaction.keepRecentTokens", 20_000)
    }
    pub fn branch_summary_reserve_tokens(&self) -> u64 {
        self.u64_at("branchSummary.reserveTokens", 16_384)
    }
    /// pi-rs's file checkpoints (`docs/checkpoints.md`), on unless turned off.
    pub fn checkpoints_enabled(&self) -> bool {
        self.bool_at("checkpoints.enabled", true)
    }
    /// `checkpoints.keepDays`: sessions last written longer ago than this no longer keep
    /// their checkpoint contents from `/checkpoints prune`; unset or 0 keeps them all.
    pub fn checkpoints_keep_days(&self) -> Option<u64> {
        Some(self.u64_at("checkpoints.keepDays", 0)).filter(|d| *d > 0)
    }
    pub fn branch_summary_skip_prompt(&self) -> bool {
        self.bool_at("branchSummary.skipPrompt", false)
    }
    /// pi's `enableInstallTelemetry` (default on); `PI_TELEMETRY` overrides it. pi-rs
    /// sends no telemetry of its own: this only decides the OpenRouter and Cloudflare
    /// attribution headers, as in pi.
    pub fn install_telemetry(&self) -> bool {
        match std::env::var("PI_TELEMETRY") {
            Ok(v) => matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"),
            Err(_) => self.bool_at("enableInstallTelemetry", true),
        }
    }
    /// `enableInstallTelemetry` as written (default on), what `/settings` shows and
    /// toggles; [`Settings::install_telemetry`] is the effective value with `PI_TELEMETRY`.
    pub fn enable_install_telemetry(&self) -> bool {
        self.bool_at("enableInstallTelemetry", true)
    }
    /// `terminal.showTerminalProgress` (default off): OSC 9;4 progress while working.
    pub fn show_terminal_progress(&self) -> bool {
        self.bool_at("terminal.showTerminalProgress", false)
    }
    /// `warnings.anthropicExtraUsage` (default on): warn that an Anthropic subscription
    /// login is billed as extra usage.
    pub fn warn_anthropic_extra_usage(&self) -> bool {
        self.bool_at("warnings.anthropicExtraUsage", true)
    }
    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self.bool_at("retry.enabled", true),
            max_retries: self.u64_at("retry.maxRetries", 3) as u32,
            base_delay_ms: self.u64_at("retry.baseDelayMs", 2000),
            max_delay_ms: self.u64_at("retry.provider.maxRetryDelayMs", 60_000),
            provider_max_retries: u32::try_from(self.u64_at("retry.provider.maxRetries", 2))
                .unwrap_or(u32::MAX),
            provider_timeout_ms: match self.u64_at("retry.provider.timeoutMs", 0) {
                0 => DEFAULT_TIMEOUT_MS,
                ms => ms,
            },
        }
    }
    /// Token budgets per thinking level (`thinkingBudgets`), as given.
    pub fn thinking_budgets(&self) -> Option<&Value> {
        self.get("thinkingBudgets")
    }
    pub fn double_escape_action(&self) -> &str {
        self.str_at("doubleEscapeAction").unwrap_or("tree")
    }
    pub fn tree_filter_mode(&self) -> &str {
        self.str_at("treeFilterMode").unwrap_or("default")
    }
    pub fn enabled_models(&self) -> Vec<String> {
        self.strings_at("enabledModels")
    }
    pub fn show_images(&self) -> bool {
        self.bool_at("terminal.showImages", true)
    }
    /// `terminal.imageWidthCells`: how wide inline images are drawn (pi: 60, at least 1).
    pub fn image_width_cells(&self) -> u64 {
        match self.get("terminal.imageWidthCells").and_then(Value::as_f64) {
            Some(n) if n.is_finite() => (n.floor().max(1.0)) as u64,
            _ => 60,
        }
    }
    /// `terminal.clearOnShrink`; unset, `PI_CLEAR_ON_SHRINK=1` turns it on (as in pi).
    pub fn clear_on_shrink(&self) -> bool {
        self.get("terminal.clearOnShrink")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| env_is_one("PI_CLEAR_ON_SHRINK"))
    }
    pub fn image_auto_resize(&self) -> bool {
        self.bool_at("images.autoResize", true)
    }
    pub fn block_images(&self) -> bool {
        self.bool_at("images.blockImages", false)
    }
    pub fn editor_padding_x(&self) -> u64 {
        self.u64_at("editorPaddingX", 0).min(3)
    }
    pub fn autocomplete_max_visible(&self) -> u64 {
        self.u64_at("autocompleteMaxVisible", 5).clamp(3, 20)
    }
    /// `showHardwareCursor`; unset, `PI_HARDWARE_CURSOR=1` turns it on (as in pi).
    pub fn show_hardware_cursor(&self) -> bool {
        self.get("showHardwareCursor")
            .and_then(Value::as_bool)
            .unwrap_or_else(|| env_is_one("PI_HARDWARE_CURSOR"))
    }
    pub fn enable_skill_commands(&self) -> bool {
        self.bool_at("enableSkillCommands", true)
    }
    /// A key of the global file as written there (`packages` entries may be objects).
    pub fn global_value(&self, key: &str) -> Option<&Value> {
        self.global.get(key)
    }
    /// A key of the project file as written there.
    pub fn project_value(&self, key: &str) -> Option<&Value> {
        self.project.get(key)
    }
    /// A list of strings from the global file only (`extensions`, `skills`, `prompts`
    /// entries are relative to the agent directory there).
    pub fn global_strings(&self, key: &str) -> Vec<String> {
        strings_of(self.global.get(key))
    }
    /// A list of strings from the project file only (relative to `<cwd>/.pi`).
    pub fn project_strings(&self, key: &str) -> Vec<String> {
        strings_of(self.project.get(key))
    }
    pub fn extension_paths(&self) -> Vec<String> {
        self.strings_at("extensions")
    }
    pub fn skill_paths(&self) -> Vec<String> {
        self.strings_at("skills")
    }
    pub fn prompt_template_paths(&self) -> Vec<String> {
        self.strings_at("prompts")
    }
    pub fn theme_paths(&self) -> Vec<String> {
        self.strings_at("themes")
    }
    /// `sessionDir` with `~` expanded.
    pub fn session_dir(&self) -> Option<PathBuf> {
        self.str_at("sessionDir")
            .filter(|s| !s.is_empty())
            .map(crate::core::paths::expand_tilde)
    }

    /// [`Settings::session_dir`], with the project's `sessionDir` also when the project
    /// is not trusted: pi looks the session up before it decides on trust, so this one
    /// project setting is read either way.
    pub fn session_dir_before_trust(&self, cwd: &Path) -> Option<PathBuf> {
        if self.project_trust.is_trusted() {
            return self.session_dir();
        }
        project_session_dir(cwd).or_else(|| self.session_dir())
    }
    pub fn transport(&self) -> &str {
        self.str_at("transport").unwrap_or("auto")
    }

    /// Sets a (possibly nested) key in the global settings and writes the global file.
    ///
    /// The file is re-read first and only this key changes, so edits made by hand (or by
    /// another pi) in the meantime are kept. If the global file could not be parsed at
    /// startup, nothing is written (the change applies to this run only).
    pub fn set_global(&mut self, path: &[&str], value: Value) -> Result<(), SettingsProblem> {
        set_path(&mut self.global, path, value.clone());
        self.merged = deep_merge(&self.global, &self.project);
        let Some(file) = self.global_path.clone() else {
            return Ok(());
        };
        if self.global_unreadable {
            return Ok(());
        }
        let mut on_disk = read_settings_file(&file)?;
        set_path(&mut on_disk, path, value);
        write_json_atomic(&file, &Value::Object(on_disk)).map_err(|e| SettingsProblem {
            path: file.clone(),
            message: e.to_string(),
        })
    }

    /// Removes a (possibly nested) key from the global settings and writes the global
    /// file the same way as [`Settings::set_global`]. pi does this when a setting is
    /// set to `undefined` (the key disappears from `settings.json`, it is not `null`).
    pub fn remove_global(&mut self, path: &[&str]) -> Result<(), SettingsProblem> {
        remove_path(&mut self.global, path);
        self.merged = deep_merge(&self.global, &self.project);
        let Some(file) = self.global_path.clone() else {
            return Ok(());
        };
        if self.global_unreadable {
            return Ok(());
        }
        let mut on_disk = read_settings_file(&file)?;
        if !remove_path(&mut on_disk, path) {
            return Ok(());
        }
        write_json_atomic(&file, &Value::Object(on_disk)).map_err(|e| SettingsProblem {
            path: file.clone(),
            message: e.to_string(),
        })
    }

    /// Records the default model and provider (what `/model` and Ctrl+P do).
    pub fn set_default_model(&mut self, provider: &str, model_id: &str) {
        // A failed write is not fatal: the choice still applies to this run.
        let _ = self.set_global(&["defaultProvider"], Value::from(provider));
        let _ = self.set_global(&["defaultModel"], Value::from(model_id));
    }

    pub fn set_default_thinking_level(&mut self, level: ThinkingLevel) {
        let _ = self.set_global(&["defaultThinkingLevel"], Value::from(level.as_str()));
    }
}

fn strings_of(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn set_path(map: &mut Map<String, Value>, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = map;
    for key in parents {
        let entry = cur
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(next) = entry else {
            return;
        };
        cur = next;
    }
    cur.insert((*last).to_string(), value);
}

/// Removes the key at `path`; false when it was not there.
fn remove_path(map: &mut Map<String, Value>, path: &[&str]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut cur = map;
    for key in parents {
        match cur.get_mut(*key) {
            Some(Value::Object(next)) => cur = next,
            _ => return false,
        }
    }
    cur.remove(*last).is_some()
}

/// The project's `sessionDir` (`~` expanded), read on its own: the one project setting
/// used before trust is decided. A file that does not parse gives nothing here (its
/// problem is reported once the project is trusted and the file is read).
pub fn project_session_dir(cwd: &Path) -> Option<PathBuf> {
    let path = crate::core::paths::project_config_dir(cwd).join("settings.json");
    let map = read_settings_file(&path).ok()?;
    map.get("sessionDir")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(crate::core::paths::expand_tilde)
}

/// Reads one settings file; a missing or empty file is an empty map.
fn read_settings_file(path: &Path) -> Result<Map<String, Value>, SettingsProblem> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => {
            return Err(SettingsProblem {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(migrate(map)),
        Ok(_) => Err(SettingsProblem {
            path: path.to_path_buf(),
            message: "expected a JSON object".into(),
        }),
        Err(e) => Err(SettingsProblem {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// pi's settings migrations: `queueMode` → `steeringMode`, `websockets` → `transport`,
/// `retry.maxDelayMs` → `retry.provider.maxRetryDelayMs`.
fn migrate(mut map: Map<String, Value>) -> Map<String, Value> {
    if !map.contains_key("steeringMode")
        && let Some(v) = map.remove("queueMode")
    {
        map.insert("steeringMode".into(), v);
    }
    if !map.contains_key("transport")
        && let Some(Value::Bool(ws)) = map.get("websockets").cloned()
    {
        map.remove("websockets");
        map.insert(
            "transport".into(),
            Value::from(if ws { "websocket" } else { "sse" }),
        );
    }
    if let Some(Value::Object(retry)) = map.get_mut("retry")
        && let Some(max) = retry.remove("maxDelayMs")
    {
        let provider = retry
            .entry("provider")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(p) = provider
            && p.get("maxRetryDelayMs").is_none_or(Value::is_null)
        {
            p.insert("maxRetryDelayMs".into(), max);
        }
    }
    map
}

/// pi's merge: nested objects merge one level deep, everything else is replaced.
fn deep_merge(base: &Map<String, Value>, overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut out = base.clone();
    for (key, value) in overrides {
        match (out.get_mut(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => {
                for (k, v) in o {
                    b.insert(k.clone(), v.clone());
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out
}

/// Writes pretty JSON (2-space indent, like pi) through a temp file and a rename.
pub fn write_json_atomic(path: &Path, value: &Value) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Whether an environment variable is exactly `1` (pi's switches for TUI settings).
fn env_is_one(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

#[cfg(test)]
mod tests {
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
        assert_eq!(s.compaction_reserve_tokens(), 1000);
        assert_eq!(s.compaction_keep_recent_tokens(), 5);
        assert_eq!(s.steering_mode(), QueueMode::All);
        assert!(s.problems().is_empty());
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
        let on_disk: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
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
                max_delay_ms: 5000,
                provider_max_retries: 2,
                provider_timeout_ms: 600_000,
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
        assert_eq!(zero.retry().provider_timeout_ms, 600_000);
    }
}
