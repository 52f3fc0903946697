//! What the extension host is given to start: an extension's file, how to run it
//! ([`Launch`], from [`launch_for`]) and where it was found ([`ResourceScope`]). Finding
//! the files is `core::extension_discovery`'s job.

use std::path::{Path, PathBuf};

/// Whose configuration a resource comes from (pi's `scope`). Skills and prompt templates
/// carry it too (`core::resource_paths` offers it under its own name); it is defined
/// here, at the lowest layer that keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceScope {
    /// `<cwd>/.pi/settings.json` or a project folder.
    Project,
    /// The agent directory's `settings.json` or a user folder.
    User,
    /// A command-line flag (`-e`, `--skill`, `--prompt-template`).
    Cli,
}

/// How to start an extension process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: PathBuf,
    /// Arguments before nothing else (for `#!` files: the interpreter's argument, if
    /// any, then the file).
    pub args: Vec<String>,
    /// A pi module (TypeScript or JavaScript) run by the node host: `program` is `node`
    /// and `args` is the module; the host's own arguments are added when it is started
    /// (see [`super::node`]).
    pub node_module: bool,
}

/// Whether `path` names one of pi's extension modules rather than a program: a `.ts`
/// file, or a `.js` file without a `#!` line (pi loads `*.ts` and `*.js`).
pub fn is_node_module(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.ends_with(".ts") && !name.ends_with(".d.ts") {
        return true;
    }
    name.ends_with(".js") && shebang(path).is_none()
}

/// An extension to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionSource {
    /// The file the extension was found as (its identity in errors and logs).
    pub path: PathBuf,
    pub launch: Launch,
    pub scope: ResourceScope,
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

/// The `#!` line of a file, if it has one.
fn shebang(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 512];
    let n = file.read(&mut head).ok()?;
    let head = &head[..n];
    let rest = head.strip_prefix(b"#!")?;
    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    Some(String::from_utf8_lossy(&rest[..end]).trim().to_string())
}

/// How to run `path`: a pi module through the node host ([`is_node_module`]), a program
/// directly if it is executable, else through its `#!` interpreter (split like the
/// kernel does: the interpreter, then the rest as one argument).
pub fn launch_for(path: &Path) -> Result<Launch, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    if is_node_module(path) {
        return Ok(Launch {
            program: PathBuf::from("node"),
            args: vec![path.display().to_string()],
            node_module: true,
        });
    }
    if is_executable(&meta) {
        return Ok(Launch {
            program: path.to_path_buf(),
            args: Vec::new(),
            node_module: false,
        });
    }
    match shebang(path) {
        Some(line) if !line.is_empty() => {
            let (interpreter, argument) = match line.split_once([' ', '\t']) {
                Some((i, a)) => (i, Some(a.trim())),
                None => (line.as_str(), None),
            };
            let mut args: Vec<String> = argument
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .into_iter()
                .collect();
            args.push(path.display().to_string());
            Ok(Launch {
                program: PathBuf::from(interpreter),
                args,
                node_module: false,
            })
        }
        _ => Err(format!(
            "{} is neither executable nor starts with a #! line; make it executable (chmod +x) or add a #! line",
            path.display()
        )),
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_plain_file_cannot_be_launched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain");
        std::fs::write(&path, "echo hi").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = launch_for(&path).unwrap_err();
        assert!(err.ends_with("make it executable (chmod +x) or add a #! line"));
    }
}
