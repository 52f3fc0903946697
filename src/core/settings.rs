//! `settings.json`: the global file (`~/.pi/agent/settings.json`) deep-merged with the
//! project file (`<cwd>/.pi/settings.json`, which wins), read with pi 1.6's keys and
//! defaults. The project file is read only when the project is trusted ([`ProjectTrust`],
//! which the settings carry for every reader of project resources); `sessionDir` alone is
//! read from it either way ([`project_session_dir`]), and `defaultProjectTrust` only ever
//! comes from the global file, as in pi.
//!
//! Settings are kept as JSON so keys we do not know (or that a newer pi wrote) survive.
//! Each file's values are checked against pi's shapes when it is read ([`check`]): a
//! wrong value is left out (its default applies) with a warning naming the file, the key
//! and what was expected, and only that value. Keys pi reads only from the user's file
//! are left out of the project file, as pi does. Changes made from the UI are written to
//! the global file only, by re-reading it and changing just the keys that changed, so
//! hand edits made meanwhile (and values the check left out) are kept. A file that does
//! not parse is reported and never overwritten. [`keys`] lists every key with what pi-rs
//! does with it; [`Settings::unsupported_notice`] names, once, those set but not acted on.

mod check;
pub mod keys;
mod problem;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::ai::model::ThinkingLevel;
use crate::core::trust::decision::{DefaultProjectTrust, ProjectTrust};

pub use check::Layer;
use check::strings_of;
pub use problem::SettingsProblem;

/// Retry policy for failed model requests (`retry.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    /// Agent-level retries of a failed answer (`retry.enabled`, `retry.maxRetries`,
    /// `retry.baseDelayMs`).
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// Longest computed wait between agent-level retries (`retry.maxAgentDelayMs`, 60 s).
    pub max_agent_delay_ms: u64,
    /// A server-requested wait longer than this fails at once (`retry.provider.maxRetryDelayMs`).
    pub max_delay_ms: u64,
    /// Retries of a request that failed before its response started
    /// (`retry.provider.maxRetries`, 0 as in pi 1.6).
    pub provider_max_retries: u32,
    /// Longest silence before the response starts and between streamed chunks:
    /// `retry.provider.timeoutMs` (0 means unset), else `httpIdleTimeoutMs` (300 000;
    /// `0` or `"disabled"`: [`NO_TIMEOUT_MS`]).
    pub provider_timeout_ms: u64,
}

/// The timeout of a disabled `httpIdleTimeoutMs`: long enough never to end a request
/// (tokio saturates deadlines this far out).
pub const NO_TIMEOUT_MS: u64 = u64::MAX / 4;

/// pi 1.6's `httpIdleTimeoutMs` default.
pub const DEFAULT_HTTP_IDLE_TIMEOUT_MS: u64 = 300_000;

/// `quietStartup`: how much of the startup header is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuietStartup {
    /// `false`: the header and the loaded resources.
    #[default]
    Off,
    /// `"header"`: the header (version and key hints) only.
    Header,
    /// `true`: nothing.
    All,
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
        let mut settings = Settings::load_user(agent_dir, trust);
        settings.project_path =
            Some(crate::core::paths::project_config_dir(cwd).join("settings.json"));
        if trust.is_trusted() {
            settings.add_project(cwd);
        }
        settings
    }

    /// Loads `<agent_dir>/settings.json` only (no project layer yet); `trust` is what the
    /// settings tell every reader of project resources.
    pub fn load_user(agent_dir: &Path, trust: ProjectTrust) -> Settings {
        let global_path = agent_dir.join("settings.json");
        let mut problems = Vec::new();
        let (global, global_unreadable) = match read_checked(&global_path, Layer::User) {
            Ok((map, found)) => {
                problems.extend(found);
                (map, false)
            }
            Err(p) => {
                problems.push(p);
                (Map::new(), true)
            }
        };
        let merged = deep_merge(&global, &Map::new());
        Settings {
            global_path: Some(global_path),
            project_path: None,
            global,
            project: Map::new(),
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

    /// Adds the project layer, `<cwd>/.pi/settings.json`, over the user's settings.
    pub fn add_project(&mut self, cwd: &Path) {
        let project_path = crate::core::paths::project_config_dir(cwd).join("settings.json");
        self.project = match read_checked(&project_path, Layer::Project) {
            Ok((map, found)) => {
                self.problems.extend(found);
                map
            }
            Err(p) => {
                self.problems.push(p);
                Map::new()
            }
        };
        self.project_path = Some(project_path);
        self.merged = deep_merge(&self.global, &self.project);
    }

    /// Settings that live only in memory (tests, `--no-session` style embedding). The
    /// values are checked as a user settings file's are.
    pub fn in_memory(value: Value) -> Settings {
        let mut global = match value {
            Value::Object(map) => migrate(map),
            _ => Map::new(),
        };
        let problems = check::check(&mut global, Path::new("<settings>"), Layer::User);
        let merged = deep_merge(&global, &Map::new());
        Settings {
            global,
            merged,
            problems,
            ..Settings::default()
        }
    }

    /// Problems found while loading (to be shown as warnings).
    pub fn problems(&self) -> &[SettingsProblem] {
        &self.problems
    }

    /// The keys set in the settings files that pi-rs knows but does not act on (yet), in
    /// the order of pi's schema; see [`keys::KEYS`].
    pub fn unsupported_keys(&self) -> Vec<String> {
        check::unsupported(&self.merged)
    }

    /// One line naming [`Settings::unsupported_keys`], for the startup warnings; `None`
    /// when there are none.
    pub fn unsupported_notice(&self) -> Option<String> {
        let keys = self.unsupported_keys();
        (!keys.is_empty()).then(|| {
            format!(
                "settings pi-rs does not support yet (kept in settings.json, no effect): {} — see docs/settings.md",
                keys.join(", ")
            )
        })
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
        strings_of(self.get(path))
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
    /// `modelThinkingLevels["provider/id"]`: the startup level of one model.
    pub fn model_thinking_level(&self, provider: &str, id: &str) -> Option<ThinkingLevel> {
        self.get("modelThinkingLevels")
            .and_then(Value::as_object)
            .and_then(|m| m.get(&format!("{provider}/{id}")))
            .and_then(Value::as_str)
            .and_then(ThinkingLevel::parse)
    }
    pub fn theme(&self) -> Option<&str> {
        self.str_at("theme")
    }
    pub fn hide_thinking_block(&self) -> bool {
        self.bool_at("hideThinkingBlock", false)
    }
    /// `quietStartup`: `true` hides the whole header, `"header"` keeps the header but not
    /// the loaded-resource listing.
    pub fn quiet_startup(&self) -> QuietStartup {
        match self.get("quietStartup") {
            Some(Value::Bool(true)) => QuietStartup::All,
            Some(Value::String(s)) if s == "header" => QuietStartup::Header,
            _ => QuietStartup::Off,
        }
    }
    /// `outputPad`: columns of padding left and right of transcript content (0 or 1).
    pub fn output_pad(&self) -> usize {
        if self.get("outputPad").and_then(Value::as_i64) == Some(0) {
            0
        } else {
            1
        }
    }
    /// `markdown.codeBlockIndent`: the prefix of code block lines (two spaces).
    pub fn code_block_indent(&self) -> &str {
        self.str_at("markdown.codeBlockIndent").unwrap_or("  ")
    }
    /// `externalEditor`: the command Ctrl+G opens, before `$VISUAL` and `$EDITOR`.
    pub fn external_editor(&self) -> Option<&str> {
        self.str_at("externalEditor")
            .filter(|s| !s.trim().is_empty())
    }
    /// `httpProxy` (user settings only): the proxy pi sets for its HTTP clients (not used
    /// by pi-rs yet, which takes `HTTP_PROXY` / `HTTPS_PROXY` from the environment).
    pub fn http_proxy(&self) -> Option<&str> {
        self.str_at("httpProxy")
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
    /// `httpIdleTimeoutMs`: how long a model server may stay silent, `None` when `0` or
    /// `"disabled"` turns the limit off (300 000 by default).
    pub fn http_idle_timeout_ms(&self) -> Option<u64> {
        match timeout_setting(self.get("httpIdleTimeoutMs")) {
            Some(0) => None,
            Some(ms) => Some(ms),
            None => Some(DEFAULT_HTTP_IDLE_TIMEOUT_MS),
        }
    }
    /// `websocketConnectTimeoutMs`: `Some(None)` when `0` or `"disabled"` turns it off,
    /// `None` when unset (the transport's own default applies). Not used by pi-rs yet.
    pub fn websocket_connect_timeout_ms(&self) -> Option<Option<u64>> {
        timeout_setting(self.get("websocketConnectTimeoutMs")).map(|ms| (ms > 0).then_some(ms))
    }
    /// The merged `defaultTools` entries as written (a project list of only `+name` /
    /// `-name` entries follows the user's), `None` when no file sets it. Resolving them
    /// against the default tools is the tool selection's job.
    pub fn default_tools(&self) -> Option<Vec<String>> {
        self.get("defaultTools")
            .map(|_| self.strings_at("defaultTools"))
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
    /// `compaction.reserveTokens` for `model` (`compaction.modelOverrides["provider/id"]`
    /// first).
    pub fn compaction_reserve_tokens(&self, model: Option<(&str, &str)>) -> u64 {
        self.compaction_tokens("reserveTokens", model, 16_384)
    }
    /// `compaction.keepRecentTokens` for `model`, as [`Settings::compaction_reserve_tokens`].
    pub fn compaction_keep_recent_tokens(&self, model: Option<(&str, &str)>) -> u64 {
        self.compaction_tokens("keepRecentTokens", model, 20_000)
    }
    fn compaction_tokens(&self, field: &str, model: Option<(&str, &str)>, default: u64) -> u64 {
        let overridden = model.and_then(|(provider, id)| {
            self.get("compaction.modelOverrides")?
                .get(format!("{provider}/{id}"))?
                .get(field)?
                .as_u64()
        });
        overridden.unwrap_or_else(|| self.u64_at(&format!("compaction.{field}"), default))
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
            max_agent_delay_ms: self.u64_at("retry.maxAgentDelayMs", 60_000),
            max_delay_ms: self.u64_at("retry.provider.maxRetryDelayMs", 60_000),
            provider_max_retries: u32::try_from(self.u64_at("retry.provider.maxRetries", 0))
                .unwrap_or(u32::MAX),
            provider_timeout_ms: match self.u64_at("retry.provider.timeoutMs", 0) {
                0 => self.http_idle_timeout_ms().unwrap_or(NO_TIMEOUT_MS),
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
        write_json_atomic(&file, &Value::Object(on_disk))
            .map_err(|e| SettingsProblem::unreadable(&file, e.to_string()))
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
        write_json_atomic(&file, &Value::Object(on_disk))
            .map_err(|e| SettingsProblem::unreadable(&file, e.to_string()))
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

/// A timeout setting as pi reads it: a number of 0 or more (floored), or a string
/// holding one; `"disabled"` is 0. `None`: unset or unusable (the check reported it).
fn timeout_setting(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64),
        Value::String(s) if s.trim().eq_ignore_ascii_case("disabled") => Some(0),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64),
        _ => None,
    }
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

/// Reads one settings file; a missing or empty file is an empty map. A UTF-8 byte order
/// mark is skipped, as pi does.
fn read_settings_file(path: &Path) -> Result<Map<String, Value>, SettingsProblem> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(SettingsProblem::unreadable(path, e.to_string())),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(migrate(map)),
        Ok(_) => Err(SettingsProblem::unreadable(path, "expected a JSON object")),
        Err(e) => Err(SettingsProblem::unreadable(path, e.to_string())),
    }
}

/// [`read_settings_file`] with its values checked for `layer`.
fn read_checked(
    path: &Path,
    layer: Layer,
) -> Result<(Map<String, Value>, Vec<SettingsProblem>), SettingsProblem> {
    let mut map = read_settings_file(path)?;
    let problems = check::check(&mut map, path, layer);
    Ok((map, problems))
}

/// pi's settings migrations: `queueMode` → `steeringMode`, `websockets` → `transport`,
/// the old `skills` object → the `skills` list and `enableSkillCommands`,
/// `retry.maxDelayMs` → `retry.provider.maxRetryDelayMs`.
fn migrate(mut map: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Object(old)) = map.get("skills").cloned() {
        if let Some(enable) = old.get("enableSkillCommands")
            && !map.contains_key("enableSkillCommands")
        {
            map.insert("enableSkillCommands".into(), enable.clone());
        }
        match old.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                map.insert("skills".into(), Value::Array(dirs.clone()));
            }
            _ => {
                map.remove("skills");
            }
        }
    }
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
        && let Some(max) = retry.remove("maxDelayMs").filter(Value::is_number)
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

/// pi 1.6's merge: objects merge key by key at every depth, anything else is replaced;
/// a `defaultTools` list made only of `+name` / `-name` entries is appended to the one
/// it overrides (so it changes that selection) instead of replacing it.
fn deep_merge(base: &Map<String, Value>, overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut out = merge_objects(base, overrides);
    if let (Some(Value::Array(under)), Some(Value::Array(over))) =
        (base.get("defaultTools"), overrides.get("defaultTools"))
        && over.iter().all(is_tool_modifier)
    {
        let mut tools = under.clone();
        tools.extend(over.iter().cloned());
        out.insert("defaultTools".into(), Value::Array(tools));
    }
    out
}

fn merge_objects(base: &Map<String, Value>, overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut out = base.clone();
    for (key, value) in overrides {
        let merged = match (base.get(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => Value::Object(merge_objects(b, o)),
            _ => value.clone(),
        };
        out.insert(key.clone(), merged);
    }
    out
}

/// A `+name` or `-name` entry of a tool list.
fn is_tool_modifier(entry: &Value) -> bool {
    entry
        .as_str()
        .is_some_and(|s| s.starts_with('+') || s.starts_with('-'))
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
mod tests;
