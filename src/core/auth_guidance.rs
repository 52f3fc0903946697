//! What to tell a user who has no usable model or key (pi's auth guidance), with absolute
//! paths to this project's provider and model docs.

use std::path::PathBuf;

/// The docs of this pi-rs: `docs/` next to the binary or under `../share/pi-rs/` of it
/// (an installed copy), else the `docs/` of the source tree it was built from.
pub fn docs_dir() -> PathBuf {
    let built_from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs");
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(PathBuf::from));
    let installed = exe_dir.into_iter().flat_map(|dir| {
        [
            dir.join("docs"),
            dir.join("..").join("share").join("pi-rs").join("docs"),
        ]
    });
    installed
        .filter(|d| d.join("providers.md").is_file())
        .find_map(|d| d.canonicalize().ok())
        .unwrap_or(built_from)
}

/// How to get a model: `/login`, an API key variable, models.json, and the docs.
pub fn provider_login_help() -> String {
    let docs = docs_dir();
    format!(
        "Use /login to log into a provider via OAuth or API key, set the provider's API key environment variable (e.g. ANTHROPIC_API_KEY), or add a provider to ~/.pi/agent/models.json. See:\n  {}\n  {}",
        docs.join("providers.md").display(),
        docs.join("models.md").display()
    )
}

/// Shown at startup when no model has credentials.
pub fn no_models_available() -> String {
    format!("No models available. {}", provider_login_help())
}

/// pi 1.6's words when no model has credentials (its two lines of help, without pi-rs's
/// hints), as `--list-models` prints them and non-interactive modes warn at startup.
pub fn pi_no_models_available() -> String {
    format!("No models available. {}", pi_login_help())
}

/// pi's own two lines of help: `/login` and the docs (no hints about variables or
/// models.json), as pi prints them under "No API key found".
pub fn pi_login_help() -> String {
    let docs = docs_dir();
    format!(
        "Use /login to log into a provider via OAuth or API key. See:\n  {}\n  {}",
        docs.join("providers.md").display(),
        docs.join("models.md").display()
    )
}

/// The error of a prompt or compaction while no model is selected. pi never lacks a
/// model: it runs on an "unknown" stand-in whose key lookup fails, so its words are
/// those of a missing key "for the selected model".
pub fn no_api_key_for_selected_model() -> String {
    format!(
        "No API key found for the selected model.\n\n{}",
        pi_login_help()
    )
}
