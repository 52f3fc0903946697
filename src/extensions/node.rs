//! The node host: how pi's own extensions (TypeScript or JavaScript modules) run as
//! pi-rs extensions.
//!
//! Each module gets its own `node` process running `host.mjs` (shipped inside this
//! binary, written once to a cache folder), which imports the module, calls its factory
//! with pi's `ExtensionAPI` and speaks the ordinary stdio protocol for it — to the rest of
//! pi-rs a TypeScript extension is one more out-of-process extension. One process per
//! extension rather than one for all: they start in parallel (node's start-up, 90 ms on a
//! loaded machine, is paid once in wall time; the price is ~40 MB each), a crash or a busy
//! loop in one never touches another, and the host needs no multiplexing in the protocol.
//!
//! TypeScript is compiled by this binary ([`super::typescript`]): the host's loader hook
//! runs `PI_RS_TRANSPILE=<file> <pi-rs>` for each `.ts` module it meets. The modules pi
//! provides to extensions (`@mariozechner/pi-coding-agent`, `…/pi-ai`, `…/pi-tui`,
//! `typebox`) are `node/modules/*.mjs`, embedded by `build.rs`.
//!
//! `node` is the user's, found on `PATH` (`PI_RS_NODE` names another); it must be
//! version 20 or newer, as for pi itself.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The host program.
const HOST: &str = include_str!("node/host.mjs");
/// Its loader hooks.
const HOOKS: &str = include_str!("node/hooks.mjs");
/// The provided modules: `(file name, text)`.
const MODULES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/node_modules.rs"));

/// The oldest node major version the host runs on.
pub const MIN_NODE_MAJOR: u32 = 20;

/// A node ready to run the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeHost {
    /// The `node` program.
    pub node: PathBuf,
    /// `host.mjs` in the cache folder.
    pub host: PathBuf,
}

impl NodeHost {
    /// The arguments before the extension's file.
    pub fn args(&self) -> Vec<String> {
        vec![
            "--experimental-detect-module".into(),
            "--disable-warning=ExperimentalWarning".into(),
            self.host.display().to_string(),
        ]
    }
}

fn node_program() -> PathBuf {
    std::env::var_os("PI_RS_NODE")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("node"), PathBuf::from)
}

/// The major version in `node --version`'s answer (`v20.11.1`).
fn major_version(text: &str) -> Option<u32> {
    text.trim()
        .strip_prefix('v')?
        .split('.')
        .next()?
        .parse()
        .ok()
}

/// Checks that `node` runs and is new enough.
fn check_node(node: &Path) -> Result<(), String> {
    let output = std::process::Command::new(node)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "TypeScript/JavaScript extensions need Node.js {MIN_NODE_MAJOR} or newer, but `{}` could not be run ({e}). Install Node.js (https://nodejs.org) or set PI_RS_NODE to its path.",
                node.display()
            )
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    match major_version(&text) {
        Some(major) if major >= MIN_NODE_MAJOR => Ok(()),
        _ => Err(format!(
            "TypeScript/JavaScript extensions need Node.js {MIN_NODE_MAJOR} or newer; `{}` is {}. Install a newer Node.js or set PI_RS_NODE to one.",
            node.display(),
            if text.trim().is_empty() {
                "not answering --version".to_string()
            } else {
                text.trim().to_string()
            }
        )),
    }
}

/// The cache folder for this build's host files: `<cache>/pi-rs/node-host/<hash>`.
fn host_dir() -> PathBuf {
    let mut hash = Sha256::new();
    hash.update(HOST);
    hash.update(HOOKS);
    for (name, text) in MODULES {
        hash.update(name);
        hash.update(text);
    }
    let digest = hash.finalize();
    let short: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let base = std::env::var_os("PI_RS_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("pi-rs")))
        .unwrap_or_else(|| std::env::temp_dir().join("pi-rs-cache"));
    base.join("node-host").join(short)
}

/// Writes one file unless it already holds `text` (through a temporary file, so a
/// concurrent pi-rs never reads half a file).
fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let temp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temp, text).map_err(|e| format!("cannot write {}: {e}", temp.display()))?;
    std::fs::rename(&temp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn install() -> Result<PathBuf, String> {
    let dir = host_dir();
    write_file(&dir.join("hooks.mjs"), HOOKS)?;
    for (name, text) in MODULES {
        write_file(&dir.join("modules").join(name), text)?;
    }
    let host = dir.join("host.mjs");
    write_file(&host, HOST)?;
    Ok(host)
}

/// Checks `node` and writes the host's files, once per process; the error says what is
/// missing.
pub fn prepare() -> Result<NodeHost, String> {
    static READY: OnceLock<Result<NodeHost, String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            let node = node_program();
            check_node(&node)?;
            let host = install()?;
            Ok(NodeHost { node, host })
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_versions_are_read_from_the_version_line() {
        assert_eq!(major_version("v20.11.1\n"), Some(20));
        assert_eq!(major_version("v18.0.0"), Some(18));
        assert_eq!(major_version("20.1"), None);
    }

    #[test]
    fn a_missing_node_is_named_in_the_error() {
        let err = check_node(Path::new("/nonexistent/node")).err();
        assert!(
            err.as_deref().is_some_and(
                |e| e.contains("need Node.js 20 or newer") && e.contains("/nonexistent/node")
            ),
            "{err:?}"
        );
    }
}
