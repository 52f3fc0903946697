//! The reference pi 1.6.0 for the command-line parity tests: `tests/support/reference-pi.sh`
//! with `PI_REFERENCE_VERSION=1.6.0`. Tests call [`available`] and skip, printing why,
//! where it cannot run (no node/npm, or a node older than pi 1.6 needs that the script
//! does not replace).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::reference_pi;

pub const VERSION: &str = "1.6.0";

/// The reference pi 1.6 command (not yet started).
pub fn command() -> Command {
    let mut pi = Command::new(reference_pi::script());
    pi.env("PI_REFERENCE_VERSION", VERSION);
    pi
}

/// `command()` as a shell command line (for tmux).
pub fn shell_command() -> String {
    format!(
        "env PI_REFERENCE_VERSION={VERSION} {}",
        reference_pi::script().display()
    )
}

/// `Err(reason)` when the reference pi 1.6 cannot run here. Checked once per process.
pub fn available() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let home = tempfile::tempdir().map_err(|e| e.to_string())?;
            let mut version = command();
            version.arg("--version").env("HOME", home.path());
            let out = reference_pi::run(version, "", Duration::from_secs(300))
                .map_err(|why| format!("reference pi {VERSION} cannot run here: {why}"))?;
            if out.trim() == VERSION {
                Ok(())
            } else {
                Err(format!("reference pi answered {out:?} to --version"))
            }
        })
        .clone()
}

/// The reference pi 1.6 in `cwd` with `home` as HOME.
pub fn in_project(home: &Path, cwd: &Path) -> Command {
    let mut pi = command();
    pi.current_dir(cwd)
        .env("HOME", home)
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    pi
}
