//! The content git already keeps for a project's tracked files, so the first scan of a
//! run need not read, hash and store them: a tracked file whose `lstat` equals its entry
//! in `.git/index` (size, mtime and ctime to the nanosecond, inode, device, owner; the
//! entry not racily clean) has that entry's blob as its content, the check `git status`
//! itself relies on. Such a file is named in the scan index by its blob id
//! (`git:<hex>`), and only when a tool call changes or deletes it is the blob read from
//! git's object store and put into the checkpoint store ([`GitRepo::materialize`]), so
//! checkpoints, restores and the session format stay as they were.
//!
//! Whenever git could hand back other bytes than the file holds, the shortcut is off and
//! files are read as before: a tracked `.gitattributes`, `info/attributes` or a user-wide
//! attributes file (filters such as Git LFS, line-ending conversion), `core.autocrlf` or
//! an `[include]` in a git config file that is read, entries that are skipped, assumed
//! unchanged, only intended to be added, in conflict, or not regular files. A blob whose
//! size is not the file's size when it is read is reported, not stored.
//!
//! Why `gix-index` and `gix-odb` (gitoxide): they read every index version and extension
//! git writes (split and sparse indexes included) and loose and packed objects, in
//! process (no `git` binary, no process start per checkpoint), and they are maintained
//! with git's format changes. The top-level `gix` crate would add reference, config and
//! transport crates this needs none of (64 crates against these 45, most of them small).
//! Repository discovery is the few lines below: a wrong guess can only cost the shortcut,
//! since a blob is used only for a file whose inode, device and times equal its entry's.

use std::path::{Path, PathBuf};

use gix_index::hash::{Kind as HashKind, ObjectId};

/// Prefix of a content named by its git blob id in the scan index.
pub const GIT_PREFIX: &str = "git:";

/// The name of a blob in the scan index.
pub fn blob_name(id: &ObjectId) -> String {
    format!("{GIT_PREFIX}{id}")
}

/// A repository's index and object store, for the project at some directory of its work
/// tree.
pub struct GitRepo {
    tracked: Tracked,
    index_file: PathBuf,
    /// The index file's metadata when it was read: reread when it changes.
    index_key: Option<(u64, i128, u64)>,
    objects: PathBuf,
}

/// The tracked files (the index), shared by the threads of a walk.
pub struct Tracked {
    index: gix_index::File,
    /// The project's path inside the work tree, `/`-terminated (`""`: the top).
    prefix: String,
}

/// The user-wide git files that can change how files are checked out: config files and
/// the default attributes file (`$XDG_CONFIG_HOME/git/…`, `~/.gitconfig`,
/// `/etc/gitconfig`).
pub fn user_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".config")));
    if let Some(xdg) = &xdg {
        files.push(xdg.join("git/config"));
        files.push(xdg.join("git/attributes"));
    }
    if let Some(home) = dirs::home_dir() {
        files.push(home.join(".gitconfig"));
    }
    files.push(PathBuf::from("/etc/gitconfig"));
    files
}

/// `.git` of the work tree containing `root`: (work tree top, git dir, common dir).
fn discover(root: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    // The environment may point git elsewhere: no guessing then.
    if std::env::var_os("GIT_DIR").is_some() || std::env::var_os("GIT_WORK_TREE").is_some() {
        return None;
    }
    let root = std::fs::canonicalize(root).ok()?;
    for dir in root.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            // A linked work tree or submodule: `gitdir: <path>`.
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            dir.join(target)
        };
        let common = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => git_dir.join(text.trim()),
            Err(_) => git_dir.clone(),
        };
        return Some((dir.to_path_buf(), git_dir, common));
    }
    None
}

/// Whether git's configuration or attributes may make a checked-out file differ from its
/// blob (see the module documentation). `user` are the user-wide files ([`user_files`]).
fn may_convert(git_dir: &Path, common: &Path, user: &[PathBuf]) -> bool {
    let attributes = [
        common.join("info/attributes"),
        git_dir.join("info/attributes"),
    ];
    if attributes
        .iter()
        .chain(user.iter().filter(|f| f.ends_with("attributes")))
        .any(|f| f.exists())
    {
        return true;
    }
    let mut configs = vec![common.join("config"), git_dir.join("config.worktree")];
    configs.extend(user.iter().filter(|f| !f.ends_with("attributes")).cloned());
    configs.iter().any(|file| {
        let Ok(text) = std::fs::read_to_string(file) else {
            return false;
        };
        text.lines().any(|line| {
            let line = line.trim().to_ascii_lowercase();
            line.starts_with("[include")
                || line.starts_with("attributesfile")
                || (line.starts_with("autocrlf") && !line.ends_with("false"))
        })
    })
}

fn file_key(file: &Path) -> Option<(u64, i128, u64)> {
    std::fs::metadata(file)
        .ok()
        .map(|m| super::stat::stat_key(&m))
}

fn read_index(file: &Path) -> Option<gix_index::File> {
    let options = gix_index::decode::Options {
        thread_limit: Some(2),
        ..Default::default()
    };
    gix_index::File::at(file, HashKind::Sha1, true, options).ok()
}

impl GitRepo {
    /// The repository whose work tree holds `root`, when the shortcut can be used there;
    /// `user` are the user-wide git files to heed ([`user_files`]).
    pub fn open(root: &Path, user: &[PathBuf]) -> Option<GitRepo> {
        let (top, git_dir, common) = discover(root)?;
        if may_convert(&git_dir, &common, user) {
            return None;
        }
        let index_file = git_dir.join("index");
        let index_key = file_key(&index_file);
        let index = read_index(&index_file)?;
        let tracked_attributes = index.entries().iter().any(|e| {
            let path = e.path(&index);
            path == ".gitattributes" || path.ends_with(b"/.gitattributes")
        });
        if tracked_attributes {
            return None;
        }
        let canonical = std::fs::canonicalize(root).ok()?;
        let inside = canonical.strip_prefix(&top).ok()?;
        let mut prefix = inside.to_string_lossy().replace('\\', "/");
        if !prefix.is_empty() {
            prefix.push('/');
        }
        Some(GitRepo {
            tracked: Tracked { index, prefix },
            index_file,
            index_key,
            objects: common.join("objects"),
        })
    }

    /// The tracked files, for a walk.
    pub fn tracked(&self) -> &Tracked {
        &self.tracked
    }

    /// Reads the index again if git wrote it since (a command ran `git add`, `checkout`…).
    pub fn refresh(&mut self) {
        let key = file_key(&self.index_file);
        if key == self.index_key {
            return;
        }
        self.tracked.index = read_index(&self.index_file).unwrap_or_else(|| {
            gix_index::File::from_state(
                gix_index::State::new(HashKind::Sha1),
                self.index_file.clone(),
            )
        });
        self.index_key = key;
    }

    /// The object store, opened for one round of reads (its handle is not `Send`).
    pub fn objects(&self) -> Option<Objects> {
        gix_odb::at(&self.objects, HashKind::Sha1).ok().map(Objects)
    }
}

/// A repository's object store, open.
pub struct Objects(gix_odb::Handle);

impl Objects {
    /// The bytes of the blob named `git:<hex>` whose file had `size` bytes, if git has it
    /// and its size is the file's.
    pub fn read_blob(&self, name: &str, size: u64) -> Option<Vec<u8>> {
        use gix_object::Find;
        let hex = name.strip_prefix(GIT_PREFIX)?;
        let id = ObjectId::from_hex(hex.as_bytes()).ok()?;
        let odb = &self.0;
        let mut buf = Vec::new();
        let data = odb.try_find(&id, &mut buf).ok()??;
        if data.kind != gix_object::Kind::Blob || data.data.len() as u64 != size {
            return None;
        }
        Some(data.data.to_vec())
    }
}

/// The git blob id of `bytes`.
pub fn blob_id(bytes: &[u8]) -> Option<ObjectId> {
    gix_object::compute_hash(HashKind::Sha1, gix_object::Kind::Blob, bytes).ok()
}

impl Tracked {
    /// The blob `path` (relative to the project) holds, when its metadata proves the file
    /// unchanged since git recorded it.
    pub fn clean_blob(&self, path: &str, meta: &std::fs::Metadata) -> Option<ObjectId> {
        use gix_index::entry::{Flags, Mode};
        let full = format!("{}{path}", self.prefix);
        let entry = self.index.entry_by_path(full.as_bytes().into())?;
        if entry.stage_raw() != 0
            || entry
                .flags
                .intersects(Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD)
            || !(entry.mode == Mode::FILE || entry.mode == Mode::FILE_EXECUTABLE)
        {
            return None;
        }
        let timestamp = self.index.timestamp();
        let stat = &entry.stat;
        // Racily clean: changed in the same tick the index was written.
        if i64::from(stat.mtime.secs) > timestamp.unix_seconds()
            || (i64::from(stat.mtime.secs) == timestamp.unix_seconds()
                && stat.mtime.nsecs >= timestamp.nanoseconds())
        {
            return None;
        }
        (Self::stat_of(meta)? == *stat).then_some(entry.id)
    }

    #[cfg(unix)]
    fn stat_of(meta: &std::fs::Metadata) -> Option<gix_index::entry::Stat> {
        use gix_index::entry::stat::Time;
        use std::os::unix::fs::MetadataExt;
        // Truncated to 32 bits as git stores them.
        Some(gix_index::entry::Stat {
            mtime: Time {
                secs: meta.mtime() as u32,
                nsecs: meta.mtime_nsec() as u32,
            },
            ctime: Time {
                secs: meta.ctime() as u32,
                nsecs: meta.ctime_nsec() as u32,
            },
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.len() as u32,
        })
    }

    #[cfg(not(unix))]
    fn stat_of(_meta: &std::fs::Metadata) -> Option<gix_index::entry::Stat> {
        None
    }
}

/// Whether a scan-index name is a git blob (not yet in the checkpoint store).
pub fn is_blob_name(hash: &str) -> bool {
    hash.starts_with(GIT_PREFIX)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs git in `dir` (as a test user, ignoring a `GIT_DIR` around the tests); false
    /// when it fails.
    pub(crate) fn run_git(dir: &Path, args: &[&str]) -> bool {
        std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn git(dir: &Path, args: &[&str]) {
        assert!(run_git(dir, args), "git {args:?}");
    }

    /// A repository with `files` committed, its index written a moment after the files
    /// (so no entry is racily clean).
    pub(crate) fn repo_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        for (path, content) in files {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, content).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "init"]);
        dir
    }

    #[test]
    fn clean_tracked_files_are_known_by_their_blob_and_changed_ones_are_not() {
        let dir = repo_with(&[("a.txt", "alpha\n"), ("sub/b.txt", "beta\n")]);
        let root = dir.path();
        let repo = GitRepo::open(root, &[]).unwrap();
        let meta = std::fs::symlink_metadata(root.join("a.txt")).unwrap();
        let blob = repo.tracked().clean_blob("a.txt", &meta).unwrap();
        assert_eq!(Some(blob), blob_id(b"alpha\n"));
        let objects = repo.objects().unwrap();
        let bytes = objects.read_blob(&blob_name(&blob), 6).unwrap();
        assert_eq!(bytes, b"alpha\n");
        // The wrong size: not handed out.
        assert!(objects.read_blob(&blob_name(&blob), 7).is_none());
        std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
        let meta = std::fs::symlink_metadata(root.join("a.txt")).unwrap();
        let rewritten = repo.tracked().clean_blob("a.txt", &meta);
        assert!(rewritten.is_none(), "rewritten: mtime moved");
        // From a subdirectory the index paths carry the prefix.
        let sub = GitRepo::open(&root.join("sub"), &[]).unwrap();
        let meta = std::fs::symlink_metadata(root.join("sub/b.txt")).unwrap();
        let tracked = sub.tracked();
        assert_eq!(tracked.clean_blob("b.txt", &meta), blob_id(b"beta\n"));
        assert!(tracked.clean_blob("sub/b.txt", &meta).is_none());
    }

    #[test]
    fn attributes_turn_the_shortcut_off() {
        let dir = repo_with(&[
            ("a.txt", "alpha\n"),
            (".gitattributes", "*.bin filter=lfs\n"),
        ]);
        assert!(GitRepo::open(dir.path(), &[]).is_none());
        let dir = repo_with(&[("a.txt", "alpha\n")]);
        assert!(GitRepo::open(dir.path(), &[]).is_some());
        let config = dir.path().join(".git/config");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, format!("{text}[core]\n\tautocrlf = true\n")).unwrap();
        assert!(GitRepo::open(dir.path(), &[]).is_none());
        // A user-wide attributes file counts too.
        let user = tempfile::tempdir().unwrap();
        let attributes = user.path().join("git/attributes");
        std::fs::create_dir_all(attributes.parent().unwrap()).unwrap();
        std::fs::write(&attributes, "* text=auto\n").unwrap();
        let dir = repo_with(&[("a.txt", "alpha\n")]);
        assert!(GitRepo::open(dir.path(), &[attributes]).is_none());
    }
}
