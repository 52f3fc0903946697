//! File system plumbing shared by the file tools: error texts in Node's wording (models
//! trained on pi have seen `ENOENT: no such file or directory, access '/x'` many times),
//! POSIX `access` checks, and replacing a file's contents without ever leaving it
//! half-written.
//!
//! Not here: path resolution (see `path`) and the per-file serialization of concurrent
//! writes (see `mutation_queue`).

use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The errno name Node reports (`ENOENT`), if the error carries a known errno.
pub fn errno_code(err: &io::Error) -> Option<&'static str> {
    let code = err.raw_os_error()?;
    Some(match code {
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EEXIST => "EEXIST",
        libc::EISDIR => "EISDIR",
        libc::ENOTDIR => "ENOTDIR",
        libc::ELOOP => "ELOOP",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EROFS => "EROFS",
        libc::ENOSPC => "ENOSPC",
        libc::EBUSY => "EBUSY",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EINVAL => "EINVAL",
        libc::EIO => "EIO",
        libc::EFBIG => "EFBIG",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::EXDEV => "EXDEV",
        libc::EAGAIN => "EAGAIN",
        _ => return None,
    })
}

/// libuv's description of an errno name, as Node prints it.
fn describe(code: &str) -> &'static str {
    match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EPERM" => "operation not permitted",
        "EEXIST" => "file already exists",
        "EISDIR" => "illegal operation on a directory",
        "ENOTDIR" => "not a directory",
        "ELOOP" => "too many symbolic links encountered",
        "ENAMETOOLONG" => "name too long",
        "EROFS" => "read-only file system",
        "ENOSPC" => "no space left on device",
        "EBUSY" => "resource busy or locked",
        "EMFILE" => "too many open files",
        "ENFILE" => "file table overflow",
        "ETXTBSY" => "text file is busy",
        "EINVAL" => "invalid argument",
        "EIO" => "i/o error",
        "EFBIG" => "file too large",
        "ENOTEMPTY" => "directory not empty",
        "EXDEV" => "cross-device link not permitted",
        "EAGAIN" => "resource temporarily unavailable",
        _ => "unknown error",
    }
}

/// Node's text for a failed file system call: `EACCES: permission denied, open '/x'`.
/// Reads of an open file carry no path in Node (`EISDIR: illegal operation on a
/// directory, read`); pass `None` for those.
pub fn node_error(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let Some(code) = errno_code(err) else {
        return match path {
            Some(p) => format!("{err}, {syscall} '{}'", p.display()),
            None => format!("{err}, {syscall}"),
        };
    };
    match path {
        Some(p) => format!("{code}: {}, {syscall} '{}'", describe(code), p.display()),
        None => format!("{code}: {}, {syscall}", describe(code)),
    }
}

/// What an `access` call checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Exists,
    Read,
    ReadWrite,
}

/// POSIX `access(2)`: whether this process may use `path` that way (following symlinks).
pub fn check_access(path: &Path, access: Access) -> io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mode = match access {
        Access::Exists => libc::F_OK,
        Access::Read => libc::R_OK,
        Access::ReadWrite => libc::R_OK | libc::W_OK,
    };
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
    let result = unsafe { libc::access(c_path.as_ptr(), mode) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Replaces the contents of `path` (creating it if needed) so that a crash or a full disk
/// never leaves it half-written: the bytes go to a temporary file in the same directory,
/// which then takes the file's place. Symlinks are followed (the link stays a link),
/// permissions and ownership are kept, and files with several hard links are written in
/// place so every link sees the new contents. Where no temporary file can be created next
/// to the target (a read-only directory holding a writable file), the file is written in
/// place, as pi does.
///
/// Errors are Node-style texts naming `open '<path>'`, like pi's `writeFile`.
pub fn write_file_replacing(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        let err = io::Error::from_raw_os_error(libc::EISDIR);
        return Err(node_error(&err, "open", Some(path)));
    }
    if existing.as_ref().is_some_and(|m| m.nlink() > 1) {
        return fs::write(&target, bytes).map_err(|e| node_error(&e, "open", Some(path)));
    }
    match write_via_temp(&target, bytes, existing.as_ref()) {
        Ok(()) => Ok(()),
        Err(TempWriteError::NoTemp) => {
            fs::write(&target, bytes).map_err(|e| node_error(&e, "open", Some(path)))
        }
        Err(TempWriteError::Io(e)) => Err(node_error(&e, "open", Some(path))),
    }
}

enum TempWriteError {
    /// The temporary file could not be created; writing in place may still work.
    NoTemp,
    Io(io::Error),
}

fn write_via_temp(
    target: &Path,
    bytes: &[u8],
    existing: Option<&fs::Metadata>,
) -> Result<(), TempWriteError> {
    let Some(dir) = target.parent() else {
        return Err(TempWriteError::NoTemp);
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = temp_sibling(dir, &name);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|_| TempWriteError::NoTemp)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(meta) = existing {
            fs::set_permissions(&temp, meta.permissions())?;
            // Only root can give a file away; for everyone else it already matches.
            let _ = std::os::unix::fs::chown(&temp, Some(meta.uid()), Some(meta.gid()));
        }
        drop(file);
        fs::rename(&temp, target)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(TempWriteError::Io(e));
    }
    Ok(())
}

fn temp_sibling(dir: &Path, name: &str) -> PathBuf {
    let suffix: u64 = rand::random();
    dir.join(format!(".{name}.pi-write-{suffix:016x}.tmp"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn node_error_texts() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            node_error(&err, "access", Some(Path::new("/tmp/x"))),
            "ENOENT: no such file or directory, access '/tmp/x'"
        );
        let err = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(
            node_error(&err, "read", None),
            "EISDIR: illegal operation on a directory, read"
        );
    }

    #[test]
    fn replacing_keeps_mode_symlink_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.sh");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o751)).unwrap();
        let link = dir.path().join("link.sh");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        write_file_replacing(&link, b"new").unwrap();

        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["link.sh", "real.sh"]);
    }

    #[test]
    fn hard_linked_files_are_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        fs::write(&a, "old").unwrap();
        fs::hard_link(&a, &b).unwrap();
        write_file_replacing(&a, b"new").unwrap();
        assert_eq!(fs::read_to_string(&b).unwrap(), "new");
    }

    #[test]
    fn writing_a_directory_fails_like_node() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_file_replacing(dir.path(), b"x").unwrap_err();
        assert_eq!(
            err,
            format!(
                "EISDIR: illegal operation on a directory, open '{}'",
                dir.path().display()
            )
        );
    }
}
