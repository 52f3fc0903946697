//! `pi update` with pi 1.6's meaning: a bare `pi update` (or `self`, `pi`, `--self`)
//! updates pi itself, `--extensions` / `<source>` / `--extension <source>` the installed
//! packages, `--all` both, and `--models` refreshes the model catalogs.
//!
//! pi-rs is one binary and cannot replace itself: for pi itself it says how pi-rs is
//! updated, or runs the user's own update command (`PI_SELF_UPDATE_COMMAND`, else the
//! `selfUpdateCommand` setting) when that command names no pi release to install
//! (`{packageName}`, `{version}`, `{installSpec}` stand for pi's npm package, which is
//! not pi-rs). pi-rs has no downloadable model catalogs yet, so `--models` says that and
//! succeeds.

use std::io::IsTerminal;
use std::process::Command;

use serde_json::Value;

use crate::core::packages::{PackageManager, style};

/// What `pi update` was asked to update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateRequest {
    /// One package (`<source>` / `--extension <source>`); `None`: every package.
    pub source: Option<String>,
    pub packages: bool,
    pub pi_itself: bool,
    pub models: bool,
    /// A bare `pi update`: packages are skipped, and pi says so.
    pub extensions_skipped_note: bool,
    pub force: bool,
}

/// What `pi update --models` says.
pub const MODELS_LATER: &str = "pi-rs has no downloadable model catalogs yet (they come with a later version); the built-in model list and models.json are used as they are.";

/// How pi-rs is updated (the binary cannot replace itself).
pub const HOW_TO_UPDATE: &str = "pi-rs is a single binary: update it the way you installed it, e.g. `cargo install --path .` in an up-to-date pi-rs checkout, or by installing a newer release binary in its place.";

/// Runs the update; returns the exit code (`Err`: a package update failed).
pub fn run(manager: &PackageManager, request: &UpdateRequest) -> Result<u8, String> {
    if request.models {
        println!("{MODELS_LATER}");
        return Ok(0);
    }
    if request.extensions_skipped_note {
        println!(
            "{}",
            style(
                "Extensions are skipped. Run pi update --extensions to update extensions.",
                "2"
            )
        );
    }
    if request.packages {
        manager
            .update(request.source.as_deref())
            .map_err(|e| e.to_string())?;
        match &request.source {
            Some(s) => println!("{}", style(&format!("Updated {s}"), "32")),
            None => println!("{}", style("Updated packages", "32")),
        }
    }
    if request.pi_itself {
        let setting = manager.setting(
            crate::core::packages::PackageScope::User,
            "selfUpdateCommand",
        );
        let configured = configured_command(
            std::env::var("PI_SELF_UPDATE_COMMAND").ok().as_deref(),
            setting.ok().flatten().as_ref(),
        );
        return Ok(update_pi_itself(configured));
    }
    Ok(0)
}

/// The user's own update command: `PI_SELF_UPDATE_COMMAND` split on spaces, else the
/// `selfUpdateCommand` setting (an argv list), as pi reads them.
pub fn configured_command(env: Option<&str>, setting: Option<&Value>) -> Option<Vec<String>> {
    let from_env: Vec<String> = env
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if !from_env.is_empty() {
        return Some(from_env);
    }
    let argv: Vec<String> = setting?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    (!argv.is_empty()).then_some(argv)
}

/// Whether a configured command installs a pi release by name (pi's placeholders).
fn names_a_pi_release(argv: &[String]) -> bool {
    argv.iter().any(|a| {
        ["{packageName}", "{version}", "{installSpec}"]
            .iter()
            .any(|p| a.contains(p))
    })
}

fn update_pi_itself(configured: Option<Vec<String>>) -> u8 {
    let err = |text: &str| {
        if std::io::stderr().is_terminal() {
            eprintln!("\x1b[31m{text}\x1b[0m");
        } else {
            eprintln!("{text}");
        }
    };
    match configured {
        Some(argv) if !names_a_pi_release(&argv) => {
            println!("{}", style(&format!("Running {}", argv.join(" ")), "2"));
            let status = Command::new(&argv[0]).args(&argv[1..]).status();
            match status {
                Ok(s) if s.success() => 0,
                Ok(s) => {
                    err(&format!(
                        "Error: {} exited with {}",
                        argv.join(" "),
                        s.code()
                            .map_or("a signal".to_string(), |c| format!("code {c}"))
                    ));
                    1
                }
                Err(e) => {
                    err(&format!("Error: cannot run {}: {e}", argv[0]));
                    1
                }
            }
        }
        Some(argv) => {
            eprintln!("error: pi cannot self-update this installation.");
            eprintln!("{HOW_TO_UPDATE}");
            eprintln!(
                "Your update command ({}) installs pi's npm release, not pi-rs, so it was not run.",
                argv.join(" ")
            );
            1
        }
        None => {
            eprintln!("error: pi cannot self-update this installation.");
            eprintln!("{HOW_TO_UPDATE}");
            eprintln!(
                "To make `pi update` run your own update command, set PI_SELF_UPDATE_COMMAND or the selfUpdateCommand setting."
            );
            if let Ok(exe) = std::env::current_exe() {
                eprintln!();
                eprintln!("Location of pi executable: {}", exe.display());
            }
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_environment_wins_over_the_setting() {
        let setting = json!(["nix", "profile", "upgrade", "pi"]);
        assert_eq!(
            configured_command(Some(" mise  use -g x "), Some(&setting)).unwrap(),
            ["mise", "use", "-g", "x"]
        );
        assert_eq!(
            configured_command(Some("  "), Some(&setting)).unwrap(),
            ["nix", "profile", "upgrade", "pi"]
        );
        assert_eq!(configured_command(None, Some(&json!("nix"))), None);
        assert_eq!(configured_command(None, None), None);
    }

    #[test]
    fn commands_naming_a_pi_release_are_not_run() {
        let argv = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        assert!(names_a_pi_release(&argv(
            "mise use -g npm:{packageName}@{version}"
        )));
        assert!(!names_a_pi_release(&argv("nix profile upgrade pi")));
    }
}
