//! Finding extensions: executables (or files starting with a `#!` line) in the extension
//! folders, from the settings and from `-e`.
//!
//! Order (pi 0.73's, first of a real path wins): `-e` paths, then the project settings'
//! `extensions` entries, `<cwd>/.pi/extensions/`, `<cwd>/.pi/rs-extensions/`, the global
//! settings' entries, `<agent_dir>/extensions/`, `<agent_dir>/rs-extensions/`. The
//! `rs-extensions/` folders are pi-rs's own: pi never loads from them, so program
//! extensions pi would choke on live there on a `~/.pi/agent` shared with pi. `--no-extensions` keeps only the `-e` paths. In a folder,
//! each executable file is an extension, and so is each subfolder holding an executable
//! named `extension` or `index` (also with a suffix, like `index.py`); a folder that itself
//! holds such an entry is one extension. pi's own modules are found as pi finds them:
//! `*.ts` and plain `*.js` files (no `#!` line), folders with `index.ts` / `index.js`, and
//! folders whose `package.json` has a `pi.extensions` manifest; they run in the node host
//! (`crate::extensions::node`).
//!
//! Extensions of pi packages (`core::packages`) come after all of these; `-e npm:…` /
//! `-e git:…` arrive as the package's files among the `-e` paths.
//!
//! Finding them follows the settings and folders the way skills and prompt templates are
//! found ([`crate::core::resource_paths`]); how a found file is started is
//! [`crate::extensions::launch_for`].

use std::path::{Path, PathBuf};

use crate::core::resource_paths::{
    AutoDir, DiagnosticKind, FoundResource, IgnoreRules, ResolveInput, ResourceDiagnostic,
    ResourceOptions, ResourceScope, canonical, read_dir_sorted, resolve, resolve_all, resolve_from,
    visible_entries,
};
use crate::extensions::{ExtensionSource, is_node_module, launch_for};

/// The result of [`discover_extensions`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveredExtensions {
    pub extensions: Vec<ExtensionSource>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

fn is_extension_file(path: &Path) -> bool {
    launch_for(path).is_ok()
}

/// The extensions a `package.json` with a `pi` manifest declares (`pi.extensions`,
/// relative to the folder; entries that do not exist are left out, as in pi).
fn manifest_entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
        return Vec::new();
    };
    let Ok(package) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    package
        .get("pi")
        .and_then(|pi| pi.get("extensions"))
        .and_then(serde_json::Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(serde_json::Value::as_str)
                .map(|entry| {
                    let clean: PathBuf = Path::new(entry)
                        .components()
                        .filter(|c| !matches!(c, std::path::Component::CurDir))
                        .collect();
                    dir.join(clean)
                })
                .filter(|path| path.exists())
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of an extension folder: what its `package.json` `pi` manifest declares;
/// else `index.ts` or `index.js` (pi's module entries); else an executable named
/// `extension` or `index`, or one whose name without suffix is one of those.
fn folder_entries(dir: &Path) -> Vec<PathBuf> {
    let declared = manifest_entries(dir);
    if !declared.is_empty() {
        return declared;
    }
    for name in ["index.ts", "index.js"] {
        let path = dir.join(name);
        if path.is_file() && is_extension_file(&path) {
            return vec![path];
        }
    }
    let entries = read_dir_sorted(dir);
    let candidates = |exact: bool| {
        entries.iter().filter(move |e| {
            let stem = if exact {
                e.name.as_str()
            } else {
                e.name.split_once('.').map_or(e.name.as_str(), |(s, _)| s)
            };
            e.is_file && (stem == "extension" || stem == "index")
        })
    };
    candidates(true)
        .chain(candidates(false))
        .find(|e| is_extension_file(&e.path))
        .map(|e| vec![e.path.clone()])
        .unwrap_or_default()
}

/// The extensions in a folder (see the module documentation).
pub fn scan_extensions_dir(dir: &Path) -> Vec<PathBuf> {
    let entries = folder_entries(dir);
    if !entries.is_empty() {
        return entries;
    }
    let rules = IgnoreRules::default().enter(dir);
    let mut out = Vec::new();
    for e in visible_entries(dir, &rules) {
        if e.is_file && is_extension_file(&e.path) {
            out.push(e.path);
        } else if e.is_dir {
            out.extend(folder_entries(&e.path));
        }
    }
    out
}

/// The pi-rs-only extension folder next to pi's `extensions/` (in `<cwd>/.pi/` and the
/// agent directory): pi never looks there, so programs that pi cannot load belong there
/// on a `~/.pi/agent` shared with pi.
pub const RS_EXTENSIONS_DIR: &str = "rs-extensions";

/// Program extensions in pi's `extensions/` folder that pi would try to load as modules
/// (a `*.js` file with a `#!` line, or a subfolder whose `index.js` is one) and fail on,
/// refusing to start: each gets a warning to move it to `rs_dir`. They still load here.
fn programs_pi_would_load(dir: &Path, rs_dir: &Path) -> Vec<ResourceDiagnostic> {
    let rules = IgnoreRules::default().enter(dir);
    let mut out = Vec::new();
    for e in visible_entries(dir, &rules) {
        let program = if e.is_file && e.name.ends_with(".js") {
            Some(e.path.clone())
        } else if e.is_dir
            && manifest_entries(&e.path).is_empty()
            && !e.path.join("index.ts").is_file()
        {
            Some(e.path.join("index.js"))
        } else {
            None
        };
        if let Some(path) = program.filter(|p| p.is_file() && !is_node_module(p)) {
            out.push(ResourceDiagnostic {
                kind: DiagnosticKind::Warning,
                message: format!(
                    "pi loads this program as a TypeScript/JavaScript module and fails to start; move it to {} (pi-rs only)",
                    rs_dir.display()
                ),
                path,
            });
        }
    }
    out
}

/// pi's `extensions/` folder and pi-rs's own `rs-extensions/` next to it under `base`.
fn auto_dirs(base: &Path) -> Vec<AutoDir> {
    ["extensions", RS_EXTENSIONS_DIR]
        .map(|name| AutoDir {
            dir: base.join(name),
            scan: scan_extensions_dir,
        })
        .into_iter()
        .collect()
}

/// Where extensions are looked for (settings entries, `extensions/` and `rs-extensions/`
/// folders).
fn extension_resolve_input<'a>(
    options: &'a ResourceOptions,
    project_base: &'a Path,
) -> ResolveInput<'a> {
    ResolveInput {
        project_entries: &options.project_entries,
        project_base,
        user_entries: &options.user_entries,
        user_base: &options.agent_dir,
        scan_entry_dir: scan_extensions_dir,
        project_auto: auto_dirs(project_base),
        user_auto: auto_dirs(&options.agent_dir),
        project_trusted: options.project_trusted,
    }
}

/// Every extension file of the settings and folders, enabled or not (for `pi config`).
pub fn all_extension_files(options: &ResourceOptions) -> Vec<FoundResource> {
    resolve_all(&extension_resolve_input(options, &options.project_base()))
}

/// Finds the extensions to load, in load order.
pub fn discover_extensions(options: &ResourceOptions) -> DiscoveredExtensions {
    let mut found = DiscoveredExtensions::default();
    let mut candidates: Vec<(PathBuf, ResourceScope)> = Vec::new();
    for raw in &options.cli_paths {
        let path = resolve_from(&options.cwd, raw);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => candidates.extend(
                scan_extensions_dir(&path)
                    .into_iter()
                    .map(|p| (p, ResourceScope::Cli)),
            ),
            Ok(_) => candidates.push((path, ResourceScope::Cli)),
            Err(_) => found.diagnostics.push(ResourceDiagnostic {
                kind: DiagnosticKind::Error,
                message: format!("Extension path does not exist: {raw}"),
                path,
            }),
        }
    }
    if options.discover {
        let project_base = options.project_base();
        let project_dir = project_base.join("extensions");
        let user_dir = options.agent_dir.join("extensions");
        for (dir, base) in [
            (&project_dir, &project_base),
            (&user_dir, &options.agent_dir),
        ] {
            if dir == &project_dir && !options.project_trusted {
                continue;
            }
            found
                .diagnostics
                .extend(programs_pi_would_load(dir, &base.join(RS_EXTENSIONS_DIR)));
        }
        let resolved = resolve(&extension_resolve_input(options, &project_base));
        candidates.extend(resolved.into_iter().map(|r| (r.path, r.scope)));
        // pi packages of the settings come last; a package folder without resources
        // of its own is scanned like an extension folder.
        for r in &options.packages {
            if r.path.is_dir() {
                candidates.extend(
                    scan_extensions_dir(&r.path)
                        .into_iter()
                        .map(|p| (p, r.scope)),
                );
            } else {
                candidates.push((r.path.clone(), r.scope));
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (path, scope) in candidates {
        if !seen.insert(canonical(&path)) {
            continue;
        }
        match launch_for(&path) {
            Ok(launch) => found.extensions.push(ExtensionSource {
                path,
                launch,
                scope,
            }),
            Err(message) => found.diagnostics.push(ResourceDiagnostic {
                kind: DiagnosticKind::Error,
                message,
                path,
            }),
        }
    }
    found
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, text: &str, executable: bool) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn finds_executables_folders_and_shebang_files_in_pi_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let cwd = root.join("proj");
        let agent = root.join("agent");
        write(&cwd.join(".pi/extensions/gate"), "#!/bin/sh\n", true);
        write(&cwd.join(".pi/extensions/notes.txt"), "not one", false);
        write(
            &cwd.join(".pi/extensions/tool/index.py"),
            "#!/usr/bin/env python3\n",
            false,
        );
        write(
            &cwd.join(".pi/extensions/tool/helper.py"),
            "#!/usr/bin/env python3\n",
            false,
        );
        write(
            &cwd.join(".pi/extensions/old.ts"),
            "export default () => {}",
            false,
        );
        write(&agent.join("extensions/greet.sh"), "#!/bin/sh -e\n", false);
        write(&agent.join("extensions/gate-link"), "#!/bin/sh\n", true);
        write(&root.join("cli/ext"), "#!/bin/sh\n", true);

        let mut options = ResourceOptions::new(&cwd, &agent);
        options.cli_paths = vec!["../cli/ext".into(), "../missing".into()];
        let found = discover_extensions(&options);
        let rel = |p: &Path| p.strip_prefix(root).unwrap().display().to_string();
        let root_text = root.display().to_string();
        let list: Vec<String> = found
            .extensions
            .iter()
            .map(|e| {
                let launch = std::iter::once(e.launch.program.display().to_string())
                    .chain(e.launch.args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
                    .replace(&root_text, "<root>");
                format!("{} ({:?}): {launch}", rel(&e.path), e.scope)
            })
            .collect();
        insta::assert_snapshot!(list.join("\n"), @r"
        cli/ext (Cli): <root>/cli/ext
        proj/.pi/extensions/gate (Project): <root>/proj/.pi/extensions/gate
        proj/.pi/extensions/old.ts (Project): node <root>/proj/.pi/extensions/old.ts
        proj/.pi/extensions/tool/index.py (Project): /usr/bin/env python3 <root>/proj/.pi/extensions/tool/index.py
        agent/extensions/gate-link (User): <root>/agent/extensions/gate-link
        agent/extensions/greet.sh (User): /bin/sh -e <root>/agent/extensions/greet.sh
        ");
        let diags: Vec<String> = found
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", rel(&d.path), d.message))
            .collect();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].starts_with("missing: Extension path does not exist: ../missing"));

        options.discover = false;
        let only_cli = discover_extensions(&options);
        assert_eq!(only_cli.extensions.len(), 1);
    }

    #[test]
    fn pi_modules_are_found_as_pi_finds_them_and_programs_pi_would_load_are_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("proj");
        let agent = dir.path().join("agent");
        let ext = agent.join("extensions");
        write(&ext.join("a.ts"), "export default () => {}", false);
        write(&ext.join("types.d.ts"), "export {}", false);
        write(&ext.join("both/index.ts"), "export default () => {}", false);
        write(&ext.join("both/index.js"), "export default () => {}", false);
        write(
            &ext.join("pkg/package.json"),
            r#"{"pi": {"extensions": ["./src/one.ts", "./gone.ts", "two.js"]}}"#,
            false,
        );
        write(
            &ext.join("pkg/src/one.ts"),
            "export default () => {}",
            false,
        );
        write(&ext.join("pkg/two.js"), "export default () => {}", false);
        write(&ext.join("prog/index.js"), "#!/usr/bin/env node\n", true);
        write(
            &agent.join("rs-extensions/tool.js"),
            "#!/usr/bin/env node\n",
            true,
        );
        let found = discover_extensions(&ResourceOptions::new(&cwd, &agent));
        let rel = |p: &Path| p.strip_prefix(&agent).unwrap().display().to_string();
        let list: Vec<String> = found
            .extensions
            .iter()
            .map(|e| format!("{} node={}", rel(&e.path), e.launch.node_module))
            .collect();
        assert_eq!(
            list,
            [
                "extensions/a.ts node=true",
                "extensions/both/index.ts node=true",
                "extensions/pkg/src/one.ts node=true",
                "extensions/pkg/two.js node=true",
                "extensions/prog/index.js node=false",
                "rs-extensions/tool.js node=false",
            ]
        );
        let diags: Vec<String> = found
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", rel(&d.path), d.message))
            .collect();
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(
            diags[0].starts_with("extensions/prog/index.js: pi loads this program")
                && diags[0].ends_with("agent/rs-extensions (pi-rs only)"),
            "{diags:?}"
        );
    }

    #[test]
    fn a_folder_with_an_entry_is_one_extension_and_duplicates_load_once() {
        let dir = tempfile::tempdir().unwrap();
        let ext = dir.path().join("myext");
        write(&ext.join("extension"), "#!/bin/sh\n", true);
        write(&ext.join("other"), "#!/bin/sh\n", true);
        let mut options = ResourceOptions::new(dir.path(), &dir.path().join("agent"));
        options.cli_paths = vec!["myext".into(), "myext/extension".into()];
        options.project_entries = vec!["../myext".into()];
        let found = discover_extensions(&options);
        assert_eq!(found.extensions.len(), 1);
        assert_eq!(found.extensions[0].path, ext.join("extension"));
        assert!(found.diagnostics.is_empty());
    }

    #[test]
    fn package_extensions_come_last_and_pi_modules_load_in_the_node_host() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        write(&pkg.join("bin/tool"), "#!/bin/sh\n", true);
        write(
            &pkg.join("extensions/mod.ts"),
            "export default () => {}",
            false,
        );
        write(&dir.path().join(".pi/extensions/mine"), "#!/bin/sh\n", true);
        let mut options = ResourceOptions::new(dir.path(), &dir.path().join("agent"));
        options.packages = [pkg.join("bin/tool"), pkg.join("extensions/mod.ts")]
            .into_iter()
            .map(|path| crate::core::resource_paths::ResolvedPath {
                path,
                scope: ResourceScope::User,
            })
            .collect();
        let found = discover_extensions(&options);
        let paths: Vec<&Path> = found.extensions.iter().map(|e| e.path.as_path()).collect();
        assert_eq!(
            paths,
            [
                dir.path().join(".pi/extensions/mine").as_path(),
                &pkg.join("bin/tool"),
                &pkg.join("extensions/mod.ts")
            ]
        );
        assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
        options.discover = false;
        assert!(discover_extensions(&options).extensions.is_empty());
    }
}
