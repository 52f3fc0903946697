//! What the side-by-side tests of pi's TypeScript examples share: locating the examples,
//! a theme both programs draw alike, the reference pi started in the same project and
//! terminal size, and a screen's rows.

use std::path::{Path, PathBuf};

use super::env::Env;
use crate::support::reference_pi;
use crate::support::tmux::{self, Tmux};

/// pi-rs's dark theme under another name, so that pi and pi-rs draw the same colours (and
/// no "What's New" from pi, which would push the header off the screen).
pub fn write_theme(env: &Env) {
    let theme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("themes/dark.json"))
            .unwrap()
            .replace("\"name\": \"dark\"", "\"name\": \"sametheme\"");
    let themes = env.agent_dir().join("themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("sametheme.json"), theme).unwrap();
    std::fs::write(
        env.agent_dir().join("settings.json"),
        r#"{"quietStartup": true, "theme": "sametheme", "lastChangelogVersion": "0.73.1"}"#,
    )
    .unwrap();
}

/// pi's example extensions, or `None` (the test is skipped, saying why: no tmux, or the
/// examples are not installed).
pub fn examples() -> Option<PathBuf> {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed (CI installs it via .ci/run)");
        return None;
    }
    match crate::ts_extensions::examples_dir() {
        Ok(dir) => Some(dir),
        Err(why) => {
            eprintln!("skipped: pi's example extensions are not available: {why}");
            None
        }
    }
}

/// The reference pi with `extra` arguments in the same project and terminal size, or
/// `None` (with the reason printed) when it is not installed.
pub fn start_reference(env: &Env, extra: &str, width: u16, height: u16) -> Option<Tmux> {
    start_reference_with(env, extra, &[], width, height)
}

/// [`start_reference`] with more environment variables.
pub fn start_reference_with(
    env: &Env,
    extra: &str,
    vars: &[(&str, &str)],
    width: u16,
    height: u16,
) -> Option<Tmux> {
    // Pinned to pi 0.73.1: the screens of pi 1.6 (its startup notes and header, pi-tui
    // 1.6's drawing, extension UI) are issue 28's; these tests compare screens row by row.
    start_reference_version(env, reference_pi::OLD_VERSION, extra, vars, width, height)
}

/// The reference pi `version` in tmux (see [`start_reference`]).
pub fn start_reference_version(
    env: &Env,
    version: &str,
    extra: &str,
    vars: &[(&str, &str)],
    width: u16,
    height: u16,
) -> Option<Tmux> {
    let available = if version == reference_pi::OLD_VERSION {
        reference_pi::available_073()
    } else {
        reference_pi::available()
    };
    if let Err(why) = available {
        eprintln!("reference pi comparison skipped: {why}");
        return None;
    }
    let home = env.home();
    let mut all = vec![
        ("HOME", home.to_str().unwrap()),
        ("PI_CODING_AGENT_DIR", ""),
    ];
    all.extend_from_slice(vars);
    Some(Tmux::start(
        &format!(
            "env PI_REFERENCE_VERSION={version} {} --offline --provider mock --model mock-model {extra}",
            reference_pi::script().display()
        ),
        &env.cwd(),
        &all,
        width,
        height,
    ))
}

/// The screen's rows without trailing blanks.
pub fn rows(screen: &str) -> Vec<String> {
    screen.lines().map(|l| l.trim_end().to_string()).collect()
}
