//! `pi auth …`: pi 1.6's credential commands, without starting a session.
//!
//! - `login <provider> [--api-key] [--no-browser]`: signs in (OAuth providers) or saves an
//!   API key, asking on the terminal; refused without one.
//! - `logout <provider>`: removes the auth.json entry (environment and models.json stay).
//! - `print-api-key`, `print-bearer-token [--min-expiry <d>]`: print the resolved
//!   credential of `--provider` or `--model` on stdout for another program.
//! - `check [--json] [--credentials] [--no-refresh]`: `ready`, `not_ready` or `invalid`,
//!   exit code 0, 1 or 2.
//!
//! Credentials come from the same places as for a request ([`ModelRegistry`]):
//! auth.json, models.json, the environment. Nothing here is ever a prompt for a model.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::ai::auth::{ApiKey, OAuthProvider, is_expired_oauth, provider_display_name};
use crate::ai::models::ModelRegistry;

const USAGE: &str = "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, print their credentials for external clients, or check that they are ready.
Credentials are stored in ~/.pi/agent/auth.json.

Commands:
  login <provider>        Sign in with an account in the browser, or save an API key, then exit
  logout <provider>       Remove the stored credentials; environment variables and models.json stay
  print-api-key           Print the resolved API key
  print-bearer-token      Print a resolved OAuth bearer token (refreshes if expired)
  check                   Print ready, not_ready, or invalid; exit with 0, 1, or 2

Options for print-api-key, print-bearer-token, and check (at least one is required):
  --provider <provider>   Resolve credentials for a provider
  --model <model>         Resolve credentials from a model

Options for login:
  --api-key               Save an API key instead of signing in with an account
  --no-browser            Do not open a browser; use another sign-in method, e.g. device code

Other options:
  --min-expiry <duration> Minimum remaining token lifetime for print-bearer-token, e.g. 30m or 1h
  --json                  Print the check result as JSON
  --credentials           Emit the credential from check, or include it in JSON output
  --no-refresh            Do not refresh expired OAuth credentials during check";

const LOGIN_USAGE: &str = "pi auth login <provider> [--api-key] [--no-browser]";

/// Which credential command (`check`, `print-api-key`, `print-bearer-token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Check => "auth check",
            Kind::ApiKey => "auth print-api-key",
            Kind::BearerToken => "auth print-bearer-token",
        }
    }

    fn usage(self) -> &'static str {
        match self {
            Kind::Check => {
                "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]"
            }
            Kind::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Kind::BearerToken => {
                "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]"
            }
        }
    }
}

/// The parsed options of a credential command.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Options {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    credentials: bool,
    no_refresh: bool,
    min_expiry_ms: Option<i64>,
}

/// Why a credential command stopped before doing its work.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ParseError {
    /// `Error: <message>` on stderr.
    Error(String),
    /// An option the command does not have: two lines, as pi prints them.
    UnknownOption(String),
    /// Arguments that are not options (pi: "only accept --provider and --model").
    Positional,
}

/// `pi auth …` (`args` without the `auth`): runs it against `agent_dir`, returns the exit
/// code.
pub fn run_auth_command(args: &[String], agent_dir: &Path) -> u8 {
    let first = args.first().map(String::as_str);
    if matches!(first, None | Some("help")) || args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return 0;
    }
    let rest: Vec<String> = args[1..]
        .iter()
        .filter(|a| *a != "--offline")
        .cloned()
        .collect();
    let kind = match first {
        Some("login") => return login(&rest, agent_dir),
        Some("logout") => return logout(&rest, agent_dir),
        Some("check") => Kind::Check,
        Some("print-api-key") => Kind::ApiKey,
        Some("print-bearer-token") => Kind::BearerToken,
        other => {
            eprintln!(
                "Error: Unknown auth command \"{}\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".",
                other.unwrap_or_default()
            );
            return 1;
        }
    };
    let options = match parse_options(kind, &rest) {
        Ok(o) => o,
        Err(ParseError::UnknownOption(option)) => {
            eprintln!("Unknown option {option} for \"{}\".", kind.name());
            eprintln!("Use \"pi --help\" or \"{}\".", kind.usage());
            return 1;
        }
        Err(ParseError::Error(message)) => {
            eprintln!("Error: {message}");
            return 1;
        }
        Err(ParseError::Positional) => {
            eprintln!("Error: Auth commands only accept --provider and --model");
            return if kind == Kind::Check { 2 } else { 1 };
        }
    };
    if options.provider.is_none() && options.model.is_none() {
        if kind == Kind::Check {
            eprintln!("Error: Auth checks require --provider <provider> or --model <model>");
            return 2;
        }
        eprintln!("Error: Credential printing requires --provider <provider> or --model <model>");
        return 1;
    }
    let mut registry = ModelRegistry::load(agent_dir);
    match kind {
        Kind::Check => check(&options, &mut registry, agent_dir),
        Kind::ApiKey | Kind::BearerToken => {
            match print_credential(kind, &options, &registry, agent_dir) {
                Ok(credential) => {
                    println!("{credential}");
                    0
                }
                Err(message) => {
                    eprintln!("Error: {message}");
                    1
                }
            }
        }
    }
}

/// pi's duration form for `--min-expiry`: digits and `ms`, `s`, `m` or `h`.
fn parse_duration_ms(value: &str) -> Option<i64> {
    let lower = value.to_ascii_lowercase();
    let digits_end = lower.find(|c: char| !c.is_ascii_digit())?;
    if digits_end == 0 {
        return None;
    }
    let amount: i64 = lower[..digits_end].parse().ok()?;
    let unit = match &lower[digits_end..] {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(unit)
}

fn parse_options(kind: Kind, args: &[String]) -> Result<Options, ParseError> {
    let mut o = Options::default();
    let mut positional = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--min-expiry" => {
                if kind != Kind::BearerToken {
                    return Err(ParseError::Error(
                        "--min-expiry is only supported by print-bearer-token".into(),
                    ));
                }
                i += 1;
                o.min_expiry_ms = Some(args.get(i).and_then(|v| parse_duration_ms(v)).ok_or_else(
                    || {
                        ParseError::Error(
                            "--min-expiry must use a duration such as 30m or 1h".into(),
                        )
                    },
                )?);
            }
            "--json" | "--credentials" | "--no-refresh" => {
                if kind != Kind::Check {
                    return Err(ParseError::Error(format!(
                        "{arg} is only supported by auth check"
                    )));
                }
                match arg {
                    "--json" => o.json = true,
                    "--credentials" => o.credentials = true,
                    _ => o.no_refresh = true,
                }
            }
            "--provider" | "--model" => {
                let value = args
                    .get(i + 1)
                    .filter(|v| !v.starts_with('-'))
                    .ok_or_else(|| ParseError::UnknownOption(arg.to_string()))?;
                let value = value.trim().to_string();
                let value = (!value.is_empty()).then_some(value);
                if arg == "--provider" {
                    o.provider = value;
                } else {
                    o.model = value;
                }
                i += 1;
            }
            other if other.starts_with("--") => {
                let name = other.split('=').next().unwrap_or(other);
                return Err(ParseError::UnknownOption(name.to_string()));
            }
            _ => positional = true,
        }
        i += 1;
    }
    if positional {
        return Err(ParseError::Positional);
    }
    Ok(o)
}

/// The provider a command is about: `--provider`, else the provider of `--model`.
fn target_provider(options: &Options, registry: &ModelRegistry) -> Result<String, String> {
    if let Some(p) = &options.provider {
        return Ok(crate::ai::auth::catalog_provider_id(p).to_string());
    }
    let model = options.model.as_deref().unwrap_or_default();
    crate::ai::models::resolve::find_exact(model, registry.all())
        .map(|m| m.provider.clone())
        .ok_or_else(|| {
            format!("Model \"{model}\" not found. Use --list-models to see available models.")
        })
}

/// Whether pi-rs knows `provider`: it has models, or a stored credential.
fn provider_known(provider: &str, registry: &ModelRegistry) -> bool {
    registry.all().iter().any(|m| m.provider == provider) || registry.auth().get(provider).is_some()
}

/// `api_key` or `oauth`, after auth.json's entry (a key from models.json or the
/// environment is an API key).
fn auth_type(provider: &str, registry: &ModelRegistry) -> &'static str {
    match registry
        .auth()
        .get(provider)
        .and_then(|e| e.get("type"))
        .and_then(Value::as_str)
    {
        Some("oauth") => "oauth",
        _ => "api_key",
    }
}

/// Whether a credential is configured for `provider`, without running commands.
fn configured(provider: &str, registry: &ModelRegistry) -> bool {
    match registry.all().iter().find(|m| m.provider == provider) {
        Some(m) => registry.has_configured_auth(m),
        None => registry.auth().has_auth(provider),
    }
}

/// The credential a request would use: auth.json (OAuth refreshed first unless
/// `no_refresh`), models.json, the environment. `Err` when a refresh failed.
fn resolve_credential(
    provider: &str,
    registry: &mut ModelRegistry,
    agent_dir: &Path,
    refresh: bool,
) -> Result<Option<String>, String> {
    if let Some(entry) = registry.auth().get(provider).cloned()
        && entry.get("type").and_then(Value::as_str) == Some("oauth")
    {
        let expired = is_expired_oauth(&entry, crate::ai::message::now_ms());
        if !expired || !refresh {
            return Ok(entry
                .get("access")
                .and_then(Value::as_str)
                .map(str::to_string));
        }
        let Some(oauth) = OAuthProvider::for_provider(provider) else {
            return Err(format!(
                "pi-rs cannot refresh {provider}'s OAuth credential"
            ));
        };
        let key = block_on(crate::ai::oauth::refresh_stored(
            &agent_dir.join("auth.json"),
            oauth,
            &crate::ai::http::shared_client(),
        ))?
        .map_err(|e| e.to_string())?;
        registry.reload();
        return Ok(Some(key.expose().to_string()));
    }
    let model = registry
        .all()
        .iter()
        .find(|m| m.provider == provider)
        .cloned();
    Ok(match model {
        Some(m) => registry
            .request_auth(&m)
            .ok()
            .and_then(|a| a.api_key)
            .map(|k| k.expose().to_string()),
        None => registry
            .auth()
            .api_key(provider)
            .map(|k| k.expose().to_string()),
    })
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(future))
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// The result of `pi auth check` and its exit code.
fn check_result(
    options: &Options,
    registry: &mut ModelRegistry,
    agent_dir: &Path,
) -> (Value, Option<String>) {
    let requested = options
        .provider
        .clone()
        .or_else(|| options.model.clone())
        .unwrap_or_default();
    let invalid = |provider: &str| json!({"status": "invalid", "provider": provider, "reason": "invalid_state"});
    let not_ready = |provider: &str, reason: &str| json!({"status": "not_ready", "provider": provider, "reason": reason});
    let Ok(provider) = target_provider(options, registry) else {
        return (invalid(&requested), None);
    };
    if registry
        .error()
        .is_some_and(|e| e.starts_with("Failed to parse") || e.starts_with("Failed to load"))
        || registry.auth().load_error().is_some()
    {
        return (invalid(&provider), None);
    }
    if !provider_known(&provider, registry) {
        return (not_ready(&provider, "provider_not_found"), None);
    }
    if !configured(&provider, registry) {
        return (not_ready(&provider, "credentials_not_configured"), None);
    }
    let kind = auth_type(&provider, registry);
    let credential = match resolve_credential(&provider, registry, agent_dir, !options.no_refresh) {
        Err(_) => return (invalid(&provider), None),
        Ok(c) => c,
    };
    if credential.is_none() && !options.no_refresh {
        return (not_ready(&provider, "credentials_not_configured"), None);
    }
    let ready = json!({"status": "ready", "provider": provider, "authType": kind});
    if !options.credentials {
        return (ready, None);
    }
    match credential {
        Some(c) => (ready, Some(c)),
        None => (not_ready(&provider, "credential_not_available"), None),
    }
}

fn check(options: &Options, registry: &mut ModelRegistry, agent_dir: &Path) -> u8 {
    let (mut result, credential) = check_result(options, registry, agent_dir);
    let status = result["status"].as_str().unwrap_or("invalid").to_string();
    let line = if options.json {
        if let (Some(c), Some(map)) = (&credential, result.as_object_mut()) {
            map.insert("credentials".into(), json!(c));
        }
        result.to_string()
    } else {
        credential.unwrap_or_else(|| status.clone())
    };
    println!("{line}");
    match status.as_str() {
        "ready" => 0,
        "not_ready" => 1,
        _ => 2,
    }
}

fn print_credential(
    kind: Kind,
    options: &Options,
    registry: &ModelRegistry,
    agent_dir: &Path,
) -> Result<String, String> {
    let provider = target_provider(options, registry)?;
    let mut registry = ModelRegistry::load(agent_dir);
    let is_oauth = auth_type(&provider, &registry) == "oauth";
    match kind {
        Kind::ApiKey => {
            if is_oauth {
                return Err(format!(
                    "Provider \"{provider}\" is configured with OAuth, not an API key"
                ));
            }
            resolve_credential(&provider, &mut registry, agent_dir, true)?
                .ok_or_else(|| "No usable API key is configured".to_string())
        }
        _ => {
            if !is_oauth {
                return Err(format!(
                    "Provider \"{provider}\" is not configured with an OAuth bearer token"
                ));
            }
            let token = resolve_credential(&provider, &mut registry, agent_dir, true)?
                .ok_or_else(|| "Failed to resolve credential".to_string())?;
            if let Some(min) = options.min_expiry_ms {
                let expires = registry
                    .auth()
                    .get(&provider)
                    .and_then(|e| e.get("expires"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if expires - crate::ai::message::now_ms() < min {
                    return Err(format!(
                        "The OAuth token of \"{provider}\" expires within the requested --min-expiry; run \"pi auth login {provider}\""
                    ));
                }
            }
            Ok(token)
        }
    }
}

fn logout(args: &[String], agent_dir: &Path) -> u8 {
    let [provider_ref] = args else {
        eprintln!("Usage: pi auth logout <provider>");
        return 1;
    };
    if provider_ref.starts_with('-') {
        eprintln!("Usage: pi auth logout <provider>");
        return 1;
    }
    let mut registry = ModelRegistry::load(agent_dir);
    if let Some(e) = registry.auth().load_error() {
        eprintln!("Could not read stored credentials: {e}");
        return 1;
    }
    let provider = provider_ref.as_str();
    let stored = registry.auth().get(provider).cloned();
    if stored.is_none() && !provider_known(provider, &registry) {
        let mut ids = registry.auth().list();
        ids.sort();
        eprintln!("Unknown provider \"{}\".", printable(provider));
        eprintln!(
            "Stored credentials: {}",
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            }
        );
        return 1;
    }
    let name = provider_name(provider);
    let Some(entry) = stored else {
        println!(
            "No stored credentials for {name}. Environment variables and models.json config are unchanged."
        );
        return 0;
    };
    if let Err(e) = registry.auth_mut().remove(provider) {
        eprintln!("Logout failed: {e}");
        return 1;
    }
    if entry.get("type").and_then(Value::as_str) == Some("oauth") {
        println!("Logged out of {name}.");
    } else {
        println!(
            "Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        );
    }
    0
}

/// A provider's name as pi 1.6's model runtime has it (subscription providers go by
/// the provider's own name here, not the `/login` plan name).
fn provider_name(provider: &str) -> String {
    match provider {
        "anthropic" => "Anthropic".into(),
        "github-copilot" => "GitHub Copilot".into(),
        "openai-codex" => "OpenAI Codex".into(),
        other => provider_display_name(other),
    }
}

/// Control characters replaced, so a provider name cannot move the cursor.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

fn login(args: &[String], agent_dir: &Path) -> u8 {
    let mut provider: Option<&str> = None;
    let mut api_key = false;
    for arg in args {
        match arg.as_str() {
            "--api-key" => api_key = true,
            "--no-browser" => {}
            a if a.starts_with('-') || provider.is_some() => {
                eprintln!("Usage: {LOGIN_USAGE}");
                return 1;
            }
            a => provider = Some(a),
        }
    }
    let Some(provider) = provider else {
        eprintln!("Usage: {LOGIN_USAGE}");
        return 1;
    };
    let mut registry = ModelRegistry::load(agent_dir);
    if !provider_known(provider, &registry) && OAuthProvider::for_provider(provider).is_none() {
        let mut ids: Vec<&str> = registry.all().iter().map(|m| m.provider.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        eprintln!("Unknown provider \"{}\".", printable(provider));
        eprintln!("Providers: {}", ids.join(", "));
        return 1;
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        eprintln!("\"{LOGIN_USAGE}\" requires an interactive terminal");
        return 1;
    }
    let name = provider_name(provider);
    let oauth = OAuthProvider::for_provider(provider).filter(|_| !api_key);
    let result = match oauth {
        Some(p) => oauth_login(p, &mut registry),
        None => {
            eprint!("API key for {name}: ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            match std::io::stdin().lock().read_line(&mut line) {
                Ok(_) if !line.trim().is_empty() => registry
                    .auth_mut()
                    .set_api_key(provider, &ApiKey::new(line.trim()))
                    .map_err(|e| e.to_string()),
                _ => Err("Login cancelled".to_string()),
            }
        }
    };
    match result {
        Ok(()) => {
            println!(
                "Logged in to {name}. Credentials saved to {}.",
                registry.auth().path().display()
            );
            0
        }
        Err(e) => {
            eprintln!("Login failed: {e}");
            1
        }
    }
}

/// Runs a subscription sign-in on the terminal: what the flow shows goes to stderr,
/// each line typed answers its prompt (or is the pasted redirect URL).
fn oauth_login(provider: OAuthProvider, registry: &mut ModelRegistry) -> Result<(), String> {
    use crate::ai::oauth::login::{LoginEvent, LoginIo};
    let (events_tx, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    let (input_tx, input_rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if input_tx.send(line.trim().to_string()).is_err() {
                break;
            }
        }
    });
    let copilot_models: Vec<String> = registry
        .all()
        .iter()
        .filter(|m| m.provider == provider.id())
        .map(|m| m.id.clone())
        .collect();
    let entry = block_on(async move {
        let mut io = LoginIo {
            events: events_tx,
            input: input_rx,
        };
        let printer = tokio::spawn(async move {
            while let Some(event) = events_rx.recv().await {
                match event {
                    LoginEvent::Auth { url, instructions } => {
                        eprintln!("Open this address in a browser to sign in:\n{url}");
                        if let Some(i) = instructions {
                            eprintln!("{i}");
                        }
                    }
                    LoginEvent::ManualInput { prompt } => eprintln!("{prompt}"),
                    LoginEvent::Prompt { message, .. } => eprintln!("{message}"),
                    LoginEvent::Waiting(m) | LoginEvent::Progress(m) => eprintln!("{m}"),
                }
            }
        });
        let http = crate::ai::http::shared_client();
        let result =
            crate::ai::oauth::login::login(provider, &mut io, &http, &copilot_models).await;
        drop(io);
        let _ = printer.await;
        result
    })?
    .map_err(|e| e.to_string())?;
    registry
        .auth_mut()
        .set_credential(provider.id(), entry)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn durations_take_pis_units() {
        assert_eq!(parse_duration_ms("30m"), Some(1_800_000));
        assert_eq!(parse_duration_ms("1H"), Some(3_600_000));
        assert_eq!(parse_duration_ms("250ms"), Some(250));
        assert_eq!(parse_duration_ms("5s"), Some(5_000));
        assert_eq!(parse_duration_ms("abc"), None);
        assert_eq!(parse_duration_ms("10"), None);
        assert_eq!(parse_duration_ms("m"), None);
    }

    #[test]
    fn options_are_checked_per_command() {
        let ok = parse_options(
            Kind::Check,
            &args(&[
                "--provider",
                "groq",
                "--json",
                "--credentials",
                "--no-refresh",
            ]),
        )
        .unwrap();
        assert_eq!(ok.provider.as_deref(), Some("groq"));
        assert!(ok.json && ok.credentials && ok.no_refresh);
        assert_eq!(
            parse_options(Kind::ApiKey, &args(&["--json"])),
            Err(ParseError::Error(
                "--json is only supported by auth check".into()
            ))
        );
        assert_eq!(
            parse_options(Kind::Check, &args(&["--min-expiry", "1h"])),
            Err(ParseError::Error(
                "--min-expiry is only supported by print-bearer-token".into()
            ))
        );
        assert_eq!(
            parse_options(Kind::ApiKey, &args(&["--provider"])),
            Err(ParseError::UnknownOption("--provider".into()))
        );
        assert_eq!(
            parse_options(Kind::Check, &args(&["--bogus"])),
            Err(ParseError::UnknownOption("--bogus".into()))
        );
        assert_eq!(
            parse_options(Kind::Check, &args(&["--provider", "groq", "extra"])),
            Err(ParseError::Positional)
        );
        assert_eq!(
            parse_options(Kind::BearerToken, &args(&["--min-expiry", "2m"]))
                .unwrap()
                .min_expiry_ms,
            Some(120_000)
        );
    }
}
