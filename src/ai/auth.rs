//! API keys: where they come from and how they are kept out of sight.
//!
//! A provider's key is resolved in pi 1.6's order: a runtime override (`--api-key`),
//! then `<agent_dir>/auth.json`, then the `apiKey` of models.json (that step lives in
//! `ai::models`, which owns the file), then the provider's environment variable.
//! Configured values may be `!command` (run through the shell once and cached) or a
//! template where `$NAME` / `${NAME}` name environment variables and the rest is literal.
//!
//! [`AuthStorage`] reads and writes auth.json the way pi does: created with mode 0600,
//! replaced atomically, and entries it does not understand (OAuth credentials written by
//! pi's `/login`) are kept untouched. A key is wrapped in [`ApiKey`], whose `Debug`
//! shows nothing of it, so it cannot leak into logs or error messages by accident.
//!
//! Lookups here are synchronous and never touch the network: an expired OAuth entry
//! still counts as configured, and [`AuthStorage::oauth_refresh_due`] tells the async
//! request path to refresh it first (see `ai::oauth`).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};

/// A secret credential. `Debug` is redacted; read it with [`expose`](Self::expose).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header. Never format it into a message.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// pi 1.6's id of the Azure OpenAI provider (the catalogue's), and the id it had before
/// pi 1.0. Configurations may name either.
pub const AZURE_ID: &str = "azure";
pub const AZURE_OLD_ID: &str = "azure-openai-responses";

/// Anthropic's bearer-token variable (sent as `Authorization`, never as the key).
pub const ANTHROPIC_AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";

/// The provider id the catalogue uses for `name` (`azure-openai-responses` → `azure`).
pub fn catalog_provider_id(name: &str) -> &str {
    if name.eq_ignore_ascii_case(AZURE_OLD_ID) {
        AZURE_ID
    } else {
        name
    }
}

/// The environment variables that hold a provider's key, in priority order (pi-ai's
/// mapping, kept in the built-in catalogue).
pub fn env_vars_for(provider: &str) -> &'static [&'static str] {
    super::catalog::env_vars(provider)
}

/// The key from the provider's environment variable, with the variable's name. Vertex
/// and Bedrock also accept ambient cloud credentials, as pi: then the key is the
/// placeholder `<authenticated>` and the provider module finds the real credentials.
/// `ANTHROPIC_AUTH_TOKEN` is listed among Anthropic's variables (pi 1.6) but is a bearer
/// token, not a key: it is skipped here, as pi's `getEnvApiKey` does.
pub fn env_api_key(provider: &str) -> Option<(&'static str, ApiKey)> {
    env_vars_for(provider)
        .iter()
        .filter(|var| !(provider == "anthropic" && **var == ANTHROPIC_AUTH_TOKEN))
        .find_map(|var| {
            std::env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .map(|v| (*var, ApiKey::new(v)))
        })
        .or_else(|| ambient_credentials(provider).map(|var| (var, ApiKey::new(AUTHENTICATED))))
}

/// The placeholder key for providers authenticated by ambient cloud credentials.
pub const AUTHENTICATED: &str = "<authenticated>";

/// The variable that makes ambient credentials usable for `provider`, if any.
fn ambient_credentials(provider: &str) -> Option<&'static str> {
    ambient_credentials_with(
        provider,
        &|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()),
        &crate::ai::providers::google_vertex::adc::has_credentials,
    )
}

/// [`ambient_credentials`] with the environment (`set`) and the Google credentials
/// check (`adc`) given, as pi's `getEnvApiKey` decides.
fn ambient_credentials_with(
    provider: &str,
    set: &dyn Fn(&str) -> bool,
    adc: &dyn Fn() -> bool,
) -> Option<&'static str> {
    match provider {
        "google-vertex" => {
            let project = set("GOOGLE_CLOUD_PROJECT") || set("GCLOUD_PROJECT");
            (project && set("GOOGLE_CLOUD_LOCATION") && adc())
                .then_some("GOOGLE_APPLICATION_CREDENTIALS")
        }
        "amazon-bedrock" => [
            "AWS_PROFILE",
            "AWS_BEARER_TOKEN_BEDROCK",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
        ]
        .into_iter()
        .find(|v| set(v))
        .or_else(|| {
            (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
                .then_some("AWS_ACCESS_KEY_ID")
        }),
        _ => None,
    }
}

/// What to tell a user whose provider has no key.
pub fn missing_key_message(provider: &str) -> String {
    let vars = env_vars_for(provider);
    let env_hint = match vars {
        [] => String::new(),
        [one] => format!("Set the {one} environment variable, or "),
        many => format!(
            "Set one of the environment variables {}, or ",
            many.join(", ")
        ),
    };
    format!(
        "No API key found for {provider}.\n\n{env_hint}store a key in ~/.pi/agent/auth.json ({{\"{provider}\": {{\"type\": \"api_key\", \"key\": \"...\"}}}}), pass --api-key, or use /login to log into a provider via OAuth or API key."
    )
}

fn command_cache() -> &'static Mutex<HashMap<String, Option<String>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// One piece of a configured value: literal text or an environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ValuePart {
    Literal(String),
    Env(String),
}

fn push_literal(parts: &mut Vec<ValuePart>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(ValuePart::Literal(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(ValuePart::Literal(text.to_string()));
    }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// pi 1.6's template form of a value that is not a `!command`: `$NAME` and `${NAME}`
/// name environment variables, `$$` and `$!` are a literal `$` and `!`, everything else
/// (a bare word too) is literal text.
fn parse_value_template(value: &str) -> Vec<ValuePart> {
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(dollar) = rest.find('$') {
        push_literal(&mut parts, &rest[..dollar]);
        let after = &rest[dollar + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                push_literal(&mut parts, &c.to_string());
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                Some(end) => {
                    let name = &after[1..end];
                    if is_env_name(name) {
                        parts.push(ValuePart::Env(name.to_string()));
                    } else {
                        push_literal(&mut parts, &rest[dollar..dollar + 1 + end + 1]);
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    push_literal(&mut parts, "$");
                    rest = after;
                }
            },
            _ => {
                let len = after
                    .char_indices()
                    .take_while(|(i, c)| {
                        c.is_ascii_alphanumeric() && (*i > 0 || !c.is_ascii_digit()) || *c == '_'
                    })
                    .count();
                if len == 0 {
                    push_literal(&mut parts, "$");
                    rest = after;
                } else {
                    parts.push(ValuePart::Env(after[..len].to_string()));
                    rest = &after[len..];
                }
            }
        }
    }
    push_literal(&mut parts, rest);
    parts
}

/// An environment variable's value: `env` (an auth.json credential's own `env`) first,
/// then the process environment. Empty counts as unset.
fn env_value(name: &str, env: &BTreeMap<String, String>) -> Option<String> {
    env.get(name)
        .filter(|v| !v.is_empty())
        .cloned()
        .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

fn resolve_template(value: &str, env: &BTreeMap<String, String>) -> Option<String> {
    let mut out = String::new();
    for part in parse_value_template(value) {
        match part {
            ValuePart::Literal(text) => out.push_str(&text),
            ValuePart::Env(name) => out.push_str(&env_value(&name, env)?),
        }
    }
    Some(out)
}

/// The environment variables a value names (none for a `!command`), in order.
pub fn config_value_env_vars(value: &str) -> Vec<String> {
    if value.starts_with('!') {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    for part in parse_value_template(value) {
        if let ValuePart::Env(name) = part
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// The variables a value names that are not set (pi: such a value is not configured).
pub fn missing_config_value_env_vars(value: &str, env: &BTreeMap<String, String>) -> Vec<String> {
    config_value_env_vars(value)
        .into_iter()
        .filter(|name| env_value(name, env).is_none())
        .collect()
}

/// Resolves a configured value as pi 1.6 does: `!command` runs the command (cached for
/// the process); otherwise `$NAME` / `${NAME}` are replaced by environment variables
/// (`$$` and `$!` give `$` and `!`) and the rest is literal, so a bare `MY_KEY` is the
/// text `MY_KEY`. `None` when a command fails or prints nothing, or a named variable is
/// unset.
pub fn resolve_config_value(value: &str) -> Option<String> {
    resolve_config_value_with(value, &BTreeMap::new())
}

/// [`resolve_config_value`] with extra variables that win over the process environment.
pub fn resolve_config_value_with(value: &str, env: &BTreeMap<String, String>) -> Option<String> {
    if let Some(command) = value.strip_prefix('!') {
        if let Ok(cache) = command_cache().lock()
            && let Some(hit) = cache.get(value)
        {
            return hit.clone();
        }
        let result = run_command(command);
        if let Ok(mut cache) = command_cache().lock() {
            cache.insert(value.to_string(), result.clone());
        }
        return result;
    }
    resolve_template(value, env)
}

/// Like [`resolve_config_value`] but runs `!command`s every time (models.json values
/// are resolved per request in pi).
pub fn resolve_config_value_uncached(value: &str) -> Option<String> {
    if let Some(command) = value.strip_prefix('!') {
        return run_command(command);
    }
    resolve_template(value, &BTreeMap::new())
}

/// Why a value did not resolve, in pi's words (`what` names the value).
pub fn config_value_failure(value: &str, what: &str) -> String {
    if let Some(cmd) = value.strip_prefix('!') {
        return format!(
            "Failed to resolve {what} from shell command: {cmd} (it failed or printed nothing; run it in a shell to see why)"
        );
    }
    let missing = missing_config_value_env_vars(value, &BTreeMap::new());
    match missing.len() {
        0 => format!("Failed to resolve {what}"),
        1 => format!(
            "Failed to resolve {what} from environment variable: {}",
            missing[0]
        ),
        _ => format!(
            "Failed to resolve {what} from environment variables: {}",
            missing.join(", ")
        ),
    }
}

/// Runs a shell command with a 10 s limit; its trimmed stdout, if it succeeded.
fn run_command(command: &str) -> Option<String> {
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// Failure to read or write auth.json.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not valid JSON ({detail}); fix or delete it (pi-rs will not overwrite it until then)"
    )]
    Parse { path: PathBuf, detail: String },
    #[error("failed to write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Credentials in `<agent_dir>/auth.json`, plus runtime overrides (`--api-key`).
#[derive(Debug)]
pub struct AuthStorage {
    path: PathBuf,
    data: Map<String, Value>,
    runtime: HashMap<String, ApiKey>,
    /// Set when the file exists but could not be read; writes are refused then, so a
    /// damaged file is never replaced by an almost empty one.
    load_error: Option<String>,
}

impl AuthStorage {
    /// Reads `<agent_dir>/auth.json` (a missing file is an empty store). A broken file
    /// does not fail: the store is empty and [`load_error`](Self::load_error) says why.
    pub fn load(agent_dir: &Path) -> Self {
        let path = agent_dir.join("auth.json");
        let mut storage = Self {
            path,
            data: Map::new(),
            runtime: HashMap::new(),
            load_error: None,
        };
        storage.reload();
        storage
    }

    /// An empty store that never touches the disk (tests, `--no-session`-like uses).
    pub fn in_memory() -> Self {
        Self {
            path: PathBuf::new(),
            data: Map::new(),
            runtime: HashMap::new(),
            load_error: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the file could not be read, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    /// Re-reads the file.
    pub fn reload(&mut self) {
        if self.path.as_os_str().is_empty() {
            return;
        }
        match read_auth_file(&self.path) {
            Ok(data) => {
                self.data = data;
                self.load_error = None;
            }
            Err(e) => {
                self.data = Map::new();
                self.load_error = Some(e.to_string());
            }
        }
    }

    /// `--api-key`: used for this process only, never saved.
    pub fn set_runtime_api_key(&mut self, provider: &str, key: ApiKey) {
        self.runtime.insert(provider.to_string(), key);
    }

    /// A provider's auth.json entry; for the Azure provider, the old id
    /// `azure-openai-responses` is found as well as pi 1.6's `azure`.
    fn entry(&self, provider: &str) -> Option<&Value> {
        self.data.get(provider).or_else(|| {
            (provider == AZURE_ID)
                .then(|| self.data.get(AZURE_OLD_ID))
                .flatten()
        })
    }

    /// The raw stored entry for a provider (API key or OAuth credential).
    pub fn get(&self, provider: &str) -> Option<&Value> {
        self.entry(provider)
    }

    /// Providers with a stored entry.
    pub fn list(&self) -> Vec<String> {
        self.data.keys().cloned().collect()
    }

    /// Stores an API key for a provider in auth.json.
    pub fn set_api_key(&mut self, provider: &str, key: &ApiKey) -> Result<(), AuthError> {
        let entry = serde_json::json!({"type": "api_key", "key": key.expose()});
        self.persist(provider, Some(entry))
    }

    /// Stores a credential entry (`{"type": "oauth", ...}` from a sign-in) for a provider.
    pub fn set_credential(&mut self, provider: &str, entry: Value) -> Result<(), AuthError> {
        self.persist(provider, Some(entry))
    }

    /// Removes a provider's entry from auth.json (`/logout`). A file without the entry
    /// (or no file) is left alone, so no empty file is ever created.
    pub fn remove(&mut self, provider: &str) -> Result<(), AuthError> {
        self.persist(provider, None)
    }

    /// The refresher to run before a request to `provider`: its auth.json entry is an
    /// expired OAuth credential pi-rs knows how to refresh, and no `--api-key` overrides it.
    pub fn oauth_refresh_due(&self, provider: &str) -> Option<OAuthProvider> {
        if self.runtime.contains_key(provider) || self.path.as_os_str().is_empty() {
            return None;
        }
        let entry = self.data.get(provider)?;
        let refresher = OAuthProvider::for_provider(provider)?;
        is_expired_oauth(entry, crate::ai::message::now_ms()).then_some(refresher)
    }

    /// Whether any credential is configured for a provider (no command is run). An
    /// expired OAuth entry counts: it is refreshed before the request.
    pub fn has_auth(&self, provider: &str) -> bool {
        (self.runtime.contains_key(provider)
            || self.entry(provider).is_some()
            || env_api_key(provider).is_some())
            && self.has_cloudflare_ids(provider)
    }

    /// pi 1.6's Cloudflare providers only count as configured with the account id (and,
    /// for the AI Gateway, the gateway id) too, from the credential's `env` or the
    /// environment. True for every other provider.
    fn has_cloudflare_ids(&self, provider: &str) -> bool {
        let needed: &[&str] = match provider {
            "cloudflare-workers-ai" => &["CLOUDFLARE_ACCOUNT_ID"],
            "cloudflare-ai-gateway" => &["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"],
            _ => return true,
        };
        let env = self.credential_env(provider);
        needed.iter().all(|name| {
            env.get(*name).is_some_and(|v| !v.is_empty())
                || std::env::var(name).is_ok_and(|v| !v.is_empty())
        })
    }

    /// The key to use: `--api-key`, then auth.json, then the environment (the model
    /// registry puts models.json between the last two).
    pub fn api_key(&self, provider: &str) -> Option<ApiKey> {
        self.stored_api_key(provider)
            .or_else(|| env_api_key(provider).map(|(_, key)| key))
    }

    /// `--api-key`, else the auth.json credential (an `api_key` entry's `key`, resolved
    /// with the entry's own `env` first, or a valid OAuth access token).
    pub fn stored_api_key(&self, provider: &str) -> Option<ApiKey> {
        if let Some(key) = self.runtime.get(provider) {
            return Some(key.clone());
        }
        let entry = self.entry(provider)?;
        match entry.get("type").and_then(Value::as_str) {
            Some("api_key") => {
                let value = entry.get("key").and_then(Value::as_str)?;
                resolve_config_value_with(value, &self.credential_env(provider)).map(ApiKey::new)
            }
            Some("oauth") => {
                // Only a valid access token is usable here; expired ones are refreshed on
                // the async request path first.
                if is_expired_oauth(entry, crate::ai::message::now_ms()) {
                    return None;
                }
                entry.get("access").and_then(Value::as_str).map(ApiKey::new)
            }
            _ => None,
        }
    }

    /// The `env` object of a provider's `api_key` credential (pi 1.6): variables that win
    /// over the process environment for that provider. Non-string values are skipped.
    pub fn credential_env(&self, provider: &str) -> BTreeMap<String, String> {
        self.entry(provider)
            .filter(|e| e.get("type").and_then(Value::as_str) == Some("api_key"))
            .and_then(|e| e.get("env"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn persist(&mut self, provider: &str, entry: Option<Value>) -> Result<(), AuthError> {
        if let Some(err) = &self.load_error {
            return Err(AuthError::Parse {
                path: self.path.clone(),
                detail: err.clone(),
            });
        }
        match &entry {
            Some(v) => {
                self.data.insert(provider.to_string(), v.clone());
            }
            None => {
                self.data.remove(provider);
            }
        }
        if self.path.as_os_str().is_empty() {
            return Ok(());
        }
        // Under pi's lock, merged into what is on disk now: another pi process may have
        // written since.
        let _lock = lock_for_write(&self.path).map_err(|source| AuthError::Write {
            path: self.path.clone(),
            source,
        })?;
        let mut current = read_auth_file(&self.path)?;
        match entry {
            Some(v) => {
                current.insert(provider.to_string(), v);
            }
            None => {
                if current.remove(provider).is_none() {
                    // Nothing to remove: the file is left as it is (or absent).
                    self.data = current;
                    return Ok(());
                }
            }
        }
        let text = serde_json::to_string_pretty(&Value::Object(current.clone())).map_err(|e| {
            AuthError::Write {
                path: self.path.clone(),
                source: std::io::Error::other(e),
            }
        })?;
        write_private_atomic(&self.path, text.as_bytes()).map_err(|source| AuthError::Write {
            path: self.path.clone(),
            source,
        })?;
        self.data = current;
        Ok(())
    }
}

/// Takes pi's lock on auth.json for a short write, retrying briefly as pi does (ten
/// tries 20 ms apart); a lock left by a crashed process is taken over once stale.
fn lock_for_write(path: &Path) -> std::io::Result<crate::ai::oauth::lock::AuthFileLock> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(dir)?;
    }
    for _ in 0..10 {
        if let Some(lock) =
            crate::ai::oauth::lock::try_lock(path, crate::ai::oauth::lock::LOCK_STALE)?
        {
            return Ok(lock);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(std::io::Error::other(format!(
        "another pi process holds the lock {}; if none is running, delete that directory",
        crate::ai::oauth::lock::lock_dir_for(path).display()
    )))
}

pub(crate) fn read_auth_file(path: &Path) -> Result<Map<String, Value>, AuthError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(AuthError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(AuthError::Parse {
            path: path.to_path_buf(),
            detail: "expected a JSON object of providers".into(),
        }),
        Err(e) => Err(AuthError::Parse {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// Writes `bytes` to a temp file (mode 0600) next to `path`, then renames it over `path`.
pub(crate) fn write_private_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("auth.json"),
        std::process::id()
    ));
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// The subscription providers of pi's `/login`, whose OAuth credentials pi-rs can sign in
/// to and refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OAuthProvider {
    Anthropic,
    GitHubCopilot,
    OpenAiCodex,
}

impl OAuthProvider {
    /// Every subscription provider, in pi's registry order.
    pub const ALL: [OAuthProvider; 3] = [Self::Anthropic, Self::GitHubCopilot, Self::OpenAiCodex];

    /// The provider for an id of auth.json, if it is a subscription provider.
    pub fn for_provider(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    pub fn id(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::GitHubCopilot => "github-copilot",
            Self::OpenAiCodex => "openai-codex",
        }
    }

    /// The name `/login` shows (pi's).
    pub fn name(self) -> &'static str {
        match self {
            Self::Anthropic => "Anthropic (Claude Pro/Max)",
            Self::GitHubCopilot => "GitHub Copilot",
            Self::OpenAiCodex => "ChatGPT Plus/Pro (Codex Subscription)",
        }
    }

    /// Whether sign-in waits on a loopback callback server (the redirect URL can also be
    /// pasted then).
    pub fn uses_callback_server(self) -> bool {
        matches!(self, Self::Anthropic | Self::OpenAiCodex)
    }
}

/// pi's display names of the built-in API-key providers (its `/login` lists these).
pub const BUILT_IN_PROVIDER_DISPLAY_NAMES: &[(&str, &str)] = &[
    ("anthropic", "Anthropic"),
    ("amazon-bedrock", "Amazon Bedrock"),
    ("azure-openai-responses", "Azure OpenAI Responses"),
    ("cerebras", "Cerebras"),
    ("cloudflare-ai-gateway", "Cloudflare AI Gateway"),
    ("cloudflare-workers-ai", "Cloudflare Workers AI"),
    ("deepseek", "DeepSeek"),
    ("fireworks", "Fireworks"),
    ("google", "Google Gemini"),
    ("google-vertex", "Google Vertex AI"),
    ("groq", "Groq"),
    ("huggingface", "Hugging Face"),
    ("kimi-coding", "Kimi For Coding"),
    ("mistral", "Mistral"),
    ("minimax", "MiniMax"),
    ("minimax-cn", "MiniMax (China)"),
    ("moonshotai", "Moonshot AI"),
    ("moonshotai-cn", "Moonshot AI (China)"),
    ("opencode", "OpenCode Zen"),
    ("opencode-go", "OpenCode Go"),
    ("openai", "OpenAI"),
    ("openrouter", "OpenRouter"),
    ("vercel-ai-gateway", "Vercel AI Gateway"),
    ("xai", "xAI"),
    ("zai", "ZAI"),
    ("xiaomi", "Xiaomi MiMo"),
    ("xiaomi-token-plan-cn", "Xiaomi MiMo Token Plan (China)"),
    (
        "xiaomi-token-plan-ams",
        "Xiaomi MiMo Token Plan (Amsterdam)",
    ),
    (
        "xiaomi-token-plan-sgp",
        "Xiaomi MiMo Token Plan (Singapore)",
    ),
];

/// A provider's name as pi shows it: the subscription name, else the built-in name,
/// else the id.
pub fn provider_display_name(provider: &str) -> String {
    if let Some(p) = OAuthProvider::for_provider(provider) {
        return p.name().to_string();
    }
    BUILT_IN_PROVIDER_DISPLAY_NAMES
        .iter()
        .find(|(id, _)| *id == provider)
        .map_or_else(|| provider.to_string(), |(_, name)| (*name).to_string())
}

/// Where a provider's credential comes from when auth.json has none (pi's auth status).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSource {
    /// Stored in auth.json.
    Stored,
    /// `--api-key`.
    Runtime,
    /// An environment variable (named).
    Environment(&'static str),
    /// The `apiKey` of models.json, a literal or an env var name.
    ModelsJsonKey,
    /// The `apiKey` of models.json, a `!command`.
    ModelsJsonCommand,
    None,
}

impl AuthStorage {
    /// Where `provider`'s credential comes from, without models.json (which the model
    /// registry adds).
    pub fn auth_source(&self, provider: &str) -> AuthSource {
        if self.entry(provider).is_some() {
            AuthSource::Stored
        } else if self.runtime.contains_key(provider) {
            AuthSource::Runtime
        } else if let Some((var, _)) = env_api_key(provider) {
            AuthSource::Environment(var)
        } else {
            AuthSource::None
        }
    }
}

/// The `expires` of an oauth entry (pi writes an integer; a float is tolerated).
fn entry_expires(entry: &Value) -> Option<i64> {
    let v = entry.get("expires")?;
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

/// Whether an auth.json entry is an OAuth credential whose access token has expired
/// (pi refreshes when `now >= expires`; a missing `expires` counts as expired).
pub fn is_expired_oauth(entry: &Value, now_ms: i64) -> bool {
    entry.get("type").and_then(Value::as_str) == Some("oauth")
        && entry_expires(entry).is_none_or(|e| now_ms >= e)
}

#[cfg(test)]
mod tests;
