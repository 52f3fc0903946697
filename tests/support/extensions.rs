//! Helpers for the extension host tests: writing small extension programs into a temp
//! folder, loading them, and collecting what they send back.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use pi::core::extension_discovery::discover_extensions;
use pi::core::resource_paths::ResourceOptions;
use pi::extensions::{
    ActionKind, ExtensionAction, ExtensionHost, HostChannels, HostMode, LoadOptions,
};

/// The repository's `examples/extensions/<name>` folder.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions")
        .join(name)
}

/// Whether `program` can be run (tests that need it print a reason and return if not).
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Skips the calling test, with a printed reason, when `$program` is not installed. In
/// scope in every test module (`#[macro_use]` on `support` and on this module).
macro_rules! require {
    ($program:expr) => {
        if !$crate::support::extensions::have($program) {
            eprintln!("skipping: {} is not installed", $program);
            return;
        }
    };
}

/// Writes an executable script.
pub fn script(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

/// Load options for tests: print mode, no UI, short timeouts, agent dir inside `dir`.
pub fn options(dir: &Path) -> LoadOptions {
    let mut o = LoadOptions::new(dir, &dir.join("agent"), HostMode::Print, false);
    o.event_timeout = Duration::from_secs(10);
    o.shutdown_grace = Duration::from_millis(500);
    o
}

/// Discovers the given `-e` paths (no automatic folders) and loads them.
pub async fn load(paths: &[PathBuf], options: LoadOptions) -> (ExtensionHost, HostChannels) {
    let mut resources = ResourceOptions::new(&options.cwd, &options.agent_dir);
    resources.discover = false;
    resources.cli_paths = paths.iter().map(|p| p.display().to_string()).collect();
    let found = discover_extensions(&resources);
    assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
    ExtensionHost::load(found.extensions, options).await
}

/// The next action, waiting up to five seconds.
pub async fn next_action(channels: &mut HostChannels) -> ExtensionAction {
    tokio::time::timeout(Duration::from_secs(5), channels.actions.recv())
        .await
        .expect("no action within 5 s")
        .expect("action channel closed")
}

/// Everything already on the action channel.
pub fn drain(channels: &mut HostChannels) -> Vec<ExtensionAction> {
    let mut out = Vec::new();
    while let Ok(a) = channels.actions.try_recv() {
        out.push(a);
    }
    out
}

/// The errors among `actions`, as `event: error` lines.
pub fn errors(actions: &[ExtensionAction]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::Error(e) => Some(format!("{}: {}", e.event, e.error)),
            _ => None,
        })
        .collect()
}

/// An extension with a `/bye` command that asks pi to quit (`{"type":"shutdown"}`, pi's
/// `ctx.shutdown()`), and that records `session_shutdown` in `shutdown.log` next to it.
pub const BYE: &str = r#"#!/bin/sh
dir=$(dirname "$0")
IFS= read -r hello || exit 0
printf '%s\n' '{"type":"register","name":"bye","events":["session_shutdown"],"commands":[{"name":"bye","description":"Quit pi"}]}'
while IFS= read -r line; do
    id=${line#*\"id\":}
    id=${id%%,*}
    case "$line" in
    '{"type":"command",'*)
        printf '%s\n' '{"type":"shutdown"}'
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    *session_shutdown*)
        echo "session_shutdown" >> "$dir/shutdown.log"
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    '{"type":"event","id":'*)
        printf '{"type":"response","id":%s}\n' "$id"
        ;;
    esac
done
"#;
