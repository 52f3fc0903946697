//! Bytes on disk and in memory: the line buffer a session is read into, appending new
//! lines to the file, and replacing a file without ever leaving a half-written one.
//!
//! Appends follow pi's file format and improve on its safety: each batch of lines goes out
//! in one `write(2)` on an `O_APPEND` descriptor, so two processes appending to the same
//! file never interleave partial lines, and a file whose last line was cut off gets a
//! newline first so the next entry is not glued to the broken one. Appends are not
//! fsynced (neither are pi's): a process crash loses nothing, a power loss may lose the
//! last lines. Whole-file rewrites (format migration) keep a backup, write a temporary
//! file, fsync it, rename it over the original and fsync the directory.
//!
//! This module knows nothing about entries or trees; see `tree` and `manager`.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::session::error::{IoOp, Result, SessionError};

/// Reads a whole file into memory. A large buffer is backed by transparent huge pages where
/// the kernel offers them: a 40 MB session then costs a few dozen page faults instead of
/// ten thousand, which is a good part of the time it takes to open it.
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = File::open(path)?;
    let len = file.metadata().map_or(0, |m| m.len() as usize);
    let mut buf = Vec::with_capacity(len + 1);
    advise_huge_pages(&mut buf);
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(buf: &mut Vec<u8>) {
    const HUGE_PAGE: usize = 2 << 20;
    const PAGE: usize = 4096;
    if buf.capacity() < 2 * HUGE_PAGE {
        return;
    }
    let start = (buf.as_mut_ptr() as usize).div_ceil(PAGE) * PAGE;
    let end = (buf.as_mut_ptr() as usize + buf.capacity()) / PAGE * PAGE;
    // SAFETY: the range lies inside this Vec's own allocation and is page aligned;
    // MADV_HUGEPAGE only changes how the kernel backs those pages, never their contents.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_buf: &mut Vec<u8>) {}

/// One line of a buffer, without its newline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine {
    /// 0-based line number within the buffer.
    pub number: usize,
    pub start: usize,
    pub end: usize,
    /// Whether a `\n` follows (a final line without one may have been cut off).
    pub terminated: bool,
}

/// Splits a buffer into lines (`\n` separated; a `\r` before it stays, it is whitespace).
pub(crate) fn split_lines(buf: &[u8]) -> impl Iterator<Item = RawLine> + '_ {
    let mut start = 0;
    let mut number = 0;
    std::iter::from_fn(move || {
        if start >= buf.len() {
            return None;
        }
        let line = match memchr::memchr(b'\n', &buf[start..]) {
            Some(off) => RawLine {
                number,
                start,
                end: start + off,
                terminated: true,
            },
            None => RawLine {
                number,
                start,
                end: buf.len(),
                terminated: false,
            },
        };
        start = line.end + 1;
        number += 1;
        Some(line)
    })
}

/// Where an entry's line is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRef {
    /// A byte range of the base text: the file it was opened from, or a buffer built in
    /// memory.
    Base { start: usize, len: usize },
    /// A line appended in this process.
    Appended(usize),
}

/// The text a session was opened from.
#[derive(Debug)]
enum Base {
    /// Built in memory (a new session's header, a fork, a migrated file).
    Memory(Vec<u8>),
    /// A session file, read a line at a time when an entry is needed. The file is only
    /// ever appended to, so byte ranges found when it was opened stay valid.
    File {
        file: File,
        /// The file's length when it was indexed.
        len: u64,
        /// Whether that text ended with a newline (or was empty).
        ends_with_newline: bool,
    },
}

impl Default for Base {
    fn default() -> Self {
        Base::Memory(Vec::new())
    }
}

/// The text of a session: its base text plus the lines appended since. A base that is a
/// file is never held in memory whole: a line is read (`pread`) when an entry is parsed,
/// and [`LineStore::visit`] reads many lines in one forward pass.
#[derive(Debug, Default)]
pub(crate) struct LineStore {
    base: Base,
    appended: Vec<Box<str>>,
}

/// How much a forward pass over the file reads at a time.
const WINDOW: usize = 1 << 20;

impl LineStore {
    /// A store whose base text is `base`, held in memory.
    pub fn new(base: Vec<u8>) -> Self {
        LineStore {
            base: Base::Memory(base),
            appended: Vec::new(),
        }
    }

    /// A store whose base text is the first `len` bytes of `file`.
    pub fn from_file(file: File, len: u64, ends_with_newline: bool) -> Self {
        LineStore {
            base: Base::File {
                file,
                len,
                ends_with_newline,
            },
            appended: Vec::new(),
        }
    }

    /// The base text when it is held in memory (`None` when it is read from its file).
    pub fn memory_base(&self) -> Option<&[u8]> {
        match &self.base {
            Base::Memory(buf) => Some(buf),
            Base::File { .. } => None,
        }
    }

    /// Length of the base text in bytes.
    pub fn base_len(&self) -> usize {
        match &self.base {
            Base::Memory(buf) => buf.len(),
            Base::File { len, .. } => usize::try_from(*len).unwrap_or(usize::MAX),
        }
    }

    /// Whether the base text is empty or ends with a newline.
    pub fn base_ends_with_newline(&self) -> bool {
        match &self.base {
            Base::Memory(buf) => buf.last().is_none_or(|&b| b == b'\n'),
            Base::File {
                ends_with_newline, ..
            } => *ends_with_newline,
        }
    }

    /// The text of one line (empty when the file can no longer be read there).
    pub fn line(&self, line: LineRef) -> Cow<'_, [u8]> {
        match (line, &self.base) {
            (LineRef::Base { start, len }, Base::Memory(buf)) => {
                Cow::Borrowed(buf.get(start..start + len).unwrap_or_default())
            }
            (LineRef::Base { start, len }, Base::File { file, .. }) => {
                let mut out = vec![0; len];
                match read_at(file, &mut out, start as u64) {
                    Ok(()) => Cow::Owned(out),
                    Err(_) => Cow::Borrowed(&[]),
                }
            }
            (LineRef::Appended(i), _) => {
                Cow::Borrowed(self.appended.get(i).map_or(&[][..], |l| l.as_bytes()))
            }
        }
    }

    /// Calls `f` with the text of each line of `lines`. Lines of a file base that come in
    /// file order are read in one forward pass through a 1 MB window, not one read each.
    pub fn visit(&self, lines: impl IntoIterator<Item = LineRef>, mut f: impl FnMut(&[u8])) {
        let Base::File { file, len, .. } = &self.base else {
            for line in lines {
                f(&self.line(line));
            }
            return;
        };
        let mut window: Vec<u8> = Vec::new();
        let mut window_start = 0usize;
        for line in lines {
            let LineRef::Base { start, len: n } = line else {
                f(&self.line(line));
                continue;
            };
            let inside = start >= window_start && start + n <= window_start + window.len();
            if !inside {
                let want = WINDOW
                    .max(n)
                    .min(
                        usize::try_from(*len)
                            .unwrap_or(usize::MAX)
                            .saturating_sub(start),
                    )
                    .max(n);
                window.resize(want, 0);
                if read_at(file, &mut window, start as u64).is_err() {
                    window.clear();
                    f(&[]);
                    continue;
                }
                window_start = start;
            }
            let from = start - window_start;
            f(&window[from..from + n]);
        }
    }

    pub fn push(&mut self, line: String) -> LineRef {
        self.appended.push(line.into_boxed_str());
        LineRef::Appended(self.appended.len() - 1)
    }
}

/// Reads exactly `buf.len()` bytes at `offset`.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

/// Reads exactly `buf.len()` bytes at `offset`.
#[cfg(windows)]
fn read_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Lines of a file read front to back through a reusable buffer, each with its byte
/// offset: the whole file is never in memory at once (a line longer than the buffer
/// grows it to that line's length).
pub(crate) struct LineReader<R> {
    source: R,
    buf: Vec<u8>,
    /// Unconsumed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    number: usize,
    eof: bool,
}

/// One line from a [`LineReader`], without its newline.
pub(crate) struct ReadLine<'a> {
    /// 0-based line number.
    pub number: usize,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    pub bytes: &'a [u8],
    /// Whether a `\n` follows.
    pub terminated: bool,
}

impl<R: std::io::Read> LineReader<R> {
    pub fn new(source: R) -> Self {
        Self::with_capacity(source, WINDOW)
    }

    /// A reader whose buffer starts at `capacity` bytes.
    pub fn with_capacity(source: R, capacity: usize) -> Self {
        LineReader {
            source,
            buf: vec![0; capacity.max(1)],
            pos: 0,
            end: 0,
            buf_offset: 0,
            number: 0,
            eof: false,
        }
    }

    /// Offset just past everything returned so far.
    pub fn offset(&self) -> u64 {
        self.buf_offset + self.pos as u64
    }

    /// The next line, `None` at the end of the file.
    pub fn next_line(&mut self) -> std::io::Result<Option<ReadLine<'_>>> {
        let mut searched = self.pos;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let nl = searched + i;
                return Ok(Some(self.take(nl, true)));
            }
            if self.eof {
                if self.pos == self.end {
                    return Ok(None);
                }
                let end = self.end;
                return Ok(Some(self.take(end, false)));
            }
            let old_end = self.end;
            let shift = self.fill()?;
            searched = old_end - shift;
        }
    }

    /// Moves the unconsumed bytes to the front (growing the buffer when they fill it) and
    /// reads more after them. Returns how far the bytes moved.
    fn fill(&mut self) -> std::io::Result<usize> {
        let shift = self.pos;
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= shift;
        self.pos = 0;
        self.buf_offset += shift as u64;
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(shift)
    }

    fn take(&mut self, end: usize, terminated: bool) -> ReadLine<'_> {
        let start = self.pos;
        self.pos = if terminated { end + 1 } else { end };
        let number = self.number;
        self.number += 1;
        ReadLine {
            number,
            offset: self.buf_offset + start as u64,
            bytes: &self.buf[start..end],
            terminated,
        }
    }
}
/// What of a session's text is already in its file, and the open append handle.
#[derive(Debug)]
pub(crate) struct DiskState {
    pub path: PathBuf,
    file: Option<File>,
    /// The base buffer (header and loaded lines) is in the file.
    pub base_on_disk: bool,
    /// How many appended lines are in the file.
    pub appended_on_disk: usize,
    /// The file does not end with a newline: write one before the next line.
    pub needs_newline: bool,
}

impl DiskState {
    /// State for a file that already holds the base text of `store` (as loaded).
    pub fn loaded(path: PathBuf, store: &LineStore) -> Self {
        DiskState {
            path,
            file: None,
            base_on_disk: true,
            appended_on_disk: 0,
            needs_newline: !store.base_ends_with_newline(),
        }
    }

    /// State for a session whose text is not written yet.
    pub fn pending(path: PathBuf) -> Self {
        DiskState {
            path,
            file: None,
            base_on_disk: false,
            appended_on_disk: 0,
            needs_newline: false,
        }
    }

    /// Writes everything not yet in the file, then `new_line`, in one `write`. On success
    /// the caller must push `new_line` into `store` (it is counted as written).
    pub fn write_pending(&mut self, store: &LineStore, new_line: Option<&str>) -> Result<()> {
        let mut out = Vec::new();
        if self.needs_newline && self.base_on_disk {
            out.push(b'\n');
        }
        if !self.base_on_disk
            && let Some(base) = store.memory_base()
            && !base.is_empty()
        {
            out.extend_from_slice(base);
            if base.last() != Some(&b'\n') {
                out.push(b'\n');
            }
        }
        for line in store
            .appended
            .get(self.appended_on_disk..)
            .unwrap_or_default()
        {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        if let Some(line) = new_line {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        if out.is_empty() {
            return Ok(());
        }
        match self.append_bytes(&out) {
            Ok(()) => {
                self.base_on_disk = true;
                self.needs_newline = false;
                self.appended_on_disk = store.appended.len() + usize::from(new_line.is_some());
                Ok(())
            }
            Err(err) => {
                // Part of the batch may be in the file: start the next one on a new line
                // (an empty line is harmless, a glued one is not).
                self.needs_newline = true;
                self.file = None;
                Err(err)
            }
        }
    }

    fn append_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        if self.file.is_none() {
            if let Some(dir) = self.path.parent()
                && !dir.as_os_str().is_empty()
                && !dir.exists()
            {
                fs::create_dir_all(dir).map_err(|e| SessionError::io(IoOp::CreateDir, dir, e))?;
            }
            let file = OpenOptions::new()
                .append(true)
                .create(true)
                .open(&self.path)
                .map_err(|e| SessionError::io(IoOp::Create, &self.path, e))?;
            self.file = Some(file);
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        // One write(2) for the whole batch: O_APPEND makes it land as a unit.
        file.write_all(bytes)
            .map_err(|e| SessionError::io(IoOp::Append, &self.path, e))
    }
}

/// `path` with `suffix` appended to its file name.
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// `path`, or `path.1`, `path.2`, … whichever does not exist yet.
pub(crate) fn unused_path(path: PathBuf) -> PathBuf {
    if !path.exists() {
        return path;
    }
    (1..)
        .map(|n| with_suffix(&path, &format!(".{n}")))
        .find(|p| !p.exists())
        .unwrap_or(path)
}

fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| SessionError::io(IoOp::SyncDir, dir, e))
}

/// Writes `bytes` to `<path>.tmp`, fsyncs it and renames it to `path`, then fsyncs the
/// directory: `path` is either absent/unchanged or complete, never half-written.
pub(crate) fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = with_suffix(path, ".tmp");
    let result = (|| {
        let mut file = File::create(&tmp).map_err(|e| SessionError::io(IoOp::Write, &tmp, e))?;
        if let Ok(meta) = fs::metadata(path) {
            // Keep the original file's permissions when replacing it.
            let _ = file.set_permissions(meta.permissions());
        }
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| SessionError::io(IoOp::Write, &tmp, e))?;
        fs::rename(&tmp, path).map_err(|e| SessionError::io(IoOp::Replace, path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(path)
}

/// Replaces an existing file with `bytes`: keeps a backup (`backup`, a hard link or a
/// copy) until the new content is safely in place, then removes it.
pub(crate) fn rewrite_atomically(path: &Path, bytes: &[u8], backup: &Path) -> Result<()> {
    let backup = unused_path(backup.to_path_buf());
    if fs::hard_link(path, &backup).is_err() {
        fs::copy(path, &backup).map_err(|e| SessionError::io(IoOp::Backup, &backup, e))?;
    }
    let result = write_file_atomically(path, bytes);
    // On failure the original is untouched, so the backup is not needed either way.
    let _ = fs::remove_file(&backup);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_flags_an_unterminated_last_line() {
        let lines: Vec<_> = split_lines(b"a\r\n\nbc")
            .map(|l| (l.number, l.start, l.end, l.terminated))
            .collect();
        assert_eq!(lines, [(0, 0, 2, true), (1, 3, 3, true), (2, 4, 6, false)]);
        assert_eq!(split_lines(b"").count(), 0);
        assert_eq!(split_lines(b"x\n").count(), 1);
    }

    fn read_all(text: &[u8], capacity: usize) -> Vec<(usize, u64, String, bool)> {
        let mut reader = LineReader::with_capacity(text, capacity);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            out.push((
                line.number,
                line.offset,
                String::from_utf8(line.bytes.to_vec()).unwrap(),
                line.terminated,
            ));
        }
        assert_eq!(reader.offset(), text.len() as u64);
        out
    }

    #[test]
    fn the_line_reader_agrees_with_split_lines_whatever_its_buffer_size() {
        let text = b"header\n\nshort\na much longer line than the buffer\r\nx\ncut-of";
        let expected: Vec<_> = split_lines(text)
            .map(|l| {
                (
                    l.number,
                    l.start as u64,
                    String::from_utf8(text[l.start..l.end].to_vec()).unwrap(),
                    l.terminated,
                )
            })
            .collect();
        for capacity in [1, 2, 3, 5, 8, 13, 64, 1 << 20] {
            assert_eq!(read_all(text, capacity), expected, "capacity {capacity}");
        }
        assert!(read_all(b"", 4).is_empty());
        assert_eq!(read_all(b"\n", 4), [(0, 0, String::new(), true)]);
    }

    #[test]
    fn a_file_base_reads_lines_on_demand_and_in_one_forward_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let long = "y".repeat(3 * WINDOW / 2);
        let text = format!("head\none\n{long}\nthree");
        fs::write(&path, &text).unwrap();
        let store = LineStore::from_file(File::open(&path).unwrap(), text.len() as u64, false);
        assert!(store.memory_base().is_none());
        assert!(!store.base_ends_with_newline());
        let refs: Vec<LineRef> = split_lines(text.as_bytes())
            .map(|l| LineRef::Base {
                start: l.start,
                len: l.end - l.start,
            })
            .collect();
        assert_eq!(&*store.line(refs[1]), b"one");
        assert_eq!(&*store.line(refs[3]), b"three");
        let mut seen = Vec::new();
        store.visit(refs.iter().copied(), |line| seen.push(line.to_vec()));
        let expected: Vec<Vec<u8>> = ["head", "one", long.as_str(), "three"]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        assert_eq!(seen, expected);
        // Out of order works too (a read per line), and a range past the end reads as
        // empty instead of failing.
        let mut backwards = Vec::new();
        store.visit(refs.iter().rev().copied(), |line| {
            backwards.push(line.len())
        });
        assert_eq!(backwards, [5, long.len(), 3, 4]);
        let past = LineRef::Base {
            start: text.len() + 10,
            len: 4,
        };
        assert!(store.line(past).is_empty());
    }

    #[test]
    fn pending_lines_are_written_in_one_batch_after_a_missing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "head\ncut-of").unwrap();
        let base = fs::read(&path).unwrap();
        let mut store = LineStore::new(base);
        let mut disk = DiskState::loaded(path.clone(), &store);
        store.push("one".into());
        disk.write_pending(&store, Some("two")).unwrap();
        store.push("two".into());
        disk.write_pending(&store, Some("three")).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "head\ncut-of\none\ntwo\nthree\n"
        );
    }

    #[test]
    fn atomic_rewrite_replaces_content_and_leaves_no_backup_or_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, "old\n").unwrap();
        rewrite_atomically(&path, b"new\n", &with_suffix(&path, ".v1.bak")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new\n");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["s.jsonl"]);
    }
}
