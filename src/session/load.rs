//! Opening a session file: read it, find the header, decide what the file is (current,
//! older and in need of migration, newer and read-only, or not a session at all), and
//! build the tree index.
//!
//! The rules are pi's (`loadEntriesFromFile`, `setSessionFile`), with one difference that
//! matters: pi truncates a file that has no valid header and starts over in it; we move
//! the old content aside to a backup first, so nothing a user had is ever destroyed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ai::message::Extra;
use crate::session::entry::{CURRENT_SESSION_VERSION, SessionHeader};
use crate::session::error::{IoOp, LoadWarning, ReadOnlyReason, Result, SessionError};
use crate::session::ids::IdSource;
use crate::session::migrate::migrate_to_current;
use crate::session::scan::{LineScan, scan_line};
use crate::session::store::{
    LineReader, LineStore, read_file, rewrite_atomically, split_lines, unused_path, with_suffix,
};
use crate::session::tree::{BuildReport, Index, IndexBuilder};

/// What to do with a file that needs changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadMode {
    /// Opening a session to work in: migrate on disk, move an invalid file aside.
    Open,
    /// Reading another session (to fork or list it): never change the file.
    ReadOnly,
}

/// A session file read into memory and indexed.
#[derive(Debug)]
pub(crate) struct Loaded {
    pub store: LineStore,
    pub header: SessionHeader,
    pub index: Index,
    pub warnings: Vec<LoadWarning>,
    pub read_only: Option<ReadOnlyReason>,
}

#[derive(Debug)]
pub(crate) enum Opened {
    Loaded(Box<Loaded>),
    /// No file at that path.
    Missing,
    /// Empty, or no valid header. In `Open` mode a non-empty file was moved to `backup`.
    Invalid {
        backup: Option<PathBuf>,
    },
}

/// Where the header is in a buffer.
struct HeaderAt {
    value: serde_json::Map<String, Value>,
    /// Byte offset just after the header line.
    body_start: usize,
    /// 1-based line number of the first line after the header.
    body_line: usize,
}

/// What one line means while looking for the header.
enum HeaderLine {
    /// Blank or not JSON: pi skips it.
    Skip,
    /// JSON but not a session header: the file has no valid header.
    Invalid,
    Header(serde_json::Map<String, Value>),
}

/// pi takes the first line that is valid JSON as the header; it must be an object with
/// `type: "session"` and a string `id`.
fn header_line(bytes: &[u8]) -> HeaderLine {
    match scan_line(bytes) {
        LineScan::Blank | LineScan::Malformed => HeaderLine::Skip,
        LineScan::NotObject => HeaderLine::Invalid,
        LineScan::Object(head) => {
            if head.kind.as_deref() != Some("session") || head.id.is_none() {
                return HeaderLine::Invalid;
            }
            let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            let value = serde_json::from_slice::<Value>(text)
                .or_else(|_| serde_json::from_str(&String::from_utf8_lossy(text)));
            match value {
                Ok(Value::Object(value)) => HeaderLine::Header(value),
                _ => HeaderLine::Invalid,
            }
        }
    }
}

/// The header of a buffer and where it is.
fn find_header(buf: &[u8]) -> Option<HeaderAt> {
    for line in split_lines(buf) {
        match header_line(&buf[line.start..line.end]) {
            HeaderLine::Skip => continue,
            HeaderLine::Invalid => return None,
            HeaderLine::Header(value) => {
                return Some(HeaderAt {
                    value,
                    body_start: (line.end + 1).min(buf.len()),
                    body_line: line.number + 2,
                });
            }
        }
    }
    None
}

/// The header's format version: missing or null means 1 (pi's `version ?? 1`).
fn header_version(header: &serde_json::Map<String, Value>) -> std::result::Result<u64, String> {
    match header.get("version") {
        None | Some(Value::Null) => Ok(1),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) => Ok(v.max(1)),
            None => Err(n.to_string()),
        },
        Some(other) => Err(other.to_string()),
    }
}

/// A typed header from whatever the header object holds (only `type` and a string `id`
/// are required, as in pi).
pub(crate) fn header_from_map(map: &serde_json::Map<String, Value>) -> SessionHeader {
    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_string);
    let mut extra = Extra::new();
    for (key, value) in map {
        if !matches!(
            key.as_str(),
            "type" | "version" | "id" | "timestamp" | "cwd" | "parentSession"
        ) {
            extra.insert(key.clone(), value.clone());
        }
    }
    SessionHeader {
        kind: "session".into(),
        version: map
            .get("version")
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok()),
        id: text("id").unwrap_or_default(),
        timestamp: text("timestamp").unwrap_or_default(),
        cwd: text("cwd").unwrap_or_default(),
        parent_session: text("parentSession"),
        extra,
    }
}

/// Reads and indexes the session file at `path`.
///
/// A file in the current format (or a newer one) is read once, front to back, through a
/// small buffer: only the index is kept, and entries are read back from the file when
/// they are needed. A file without a valid header or in an older format is read whole,
/// as it has to be rewritten (or set aside).
pub(crate) fn load_file(path: &Path, mode: LoadMode, ids: &mut IdSource) -> Result<Opened> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Opened::Missing),
        Err(e) => return Err(SessionError::io(IoOp::Read, path, e)),
    };
    if let Some(loaded) =
        stream_current(file, path).map_err(|e| SessionError::io(IoOp::Read, path, e))?
    {
        return Ok(Opened::Loaded(Box::new(loaded)));
    }
    load_whole(path, mode, ids)
}

/// Indexes a file whose header says it needs no migration, reading it through a
/// [`LineReader`]. `None` when the file must be read whole instead (no valid header, or
/// an older format).
fn stream_current(file: fs::File, path: &Path) -> io::Result<Option<Loaded>> {
    let mut reader = LineReader::new(&file);
    let (value, mut ends_with_newline) = loop {
        let Some(line) = reader.next_line()? else {
            return Ok(None);
        };
        match header_line(line.bytes) {
            HeaderLine::Skip => continue,
            HeaderLine::Invalid => return Ok(None),
            HeaderLine::Header(value) => break (value, line.terminated),
        }
    };
    let read_only = match header_version(&value) {
        Ok(v) if v > u64::from(CURRENT_SESSION_VERSION) => Some(ReadOnlyReason::NewerVersion(v)),
        Ok(v) if v < u64::from(CURRENT_SESSION_VERSION) => return Ok(None),
        Ok(_) => None,
        Err(text) => Some(ReadOnlyReason::UnreadableVersion(text)),
    };
    let mut builder = IndexBuilder::default();
    while let Some(line) = reader.next_line()? {
        let offset = usize::try_from(line.offset).unwrap_or(usize::MAX);
        builder.add_line(line.bytes, offset, line.number + 1, line.terminated);
        ends_with_newline = line.terminated;
    }
    let len = reader.offset();
    drop(reader);
    let (index, report) = builder.finish();
    Ok(Some(Loaded {
        warnings: warnings_of(path, &report, read_only.as_ref()),
        store: LineStore::from_file(file, len, ends_with_newline),
        header: header_from_map(&value),
        index,
        read_only,
    }))
}

/// Reads a whole file that has no valid header or needs migrating.
fn load_whole(path: &Path, mode: LoadMode, ids: &mut IdSource) -> Result<Opened> {
    let buf = match read_file(path) {
        Ok(buf) => buf,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Opened::Missing),
        Err(e) => return Err(SessionError::io(IoOp::Read, path, e)),
    };
    let Some(at) = find_header(&buf) else {
        if mode == LoadMode::ReadOnly || buf.iter().all(u8::is_ascii_whitespace) {
            return Ok(Opened::Invalid { backup: None });
        }
        let backup = unused_path(with_suffix(path, ".invalid.bak"));
        fs::rename(path, &backup).map_err(|e| SessionError::io(IoOp::Backup, &backup, e))?;
        return Ok(Opened::Invalid {
            backup: Some(backup),
        });
    };
    let mut read_only = None;
    let (buf, at) = match header_version(&at.value) {
        Ok(v) if v > u64::from(CURRENT_SESSION_VERSION) => {
            read_only = Some(ReadOnlyReason::NewerVersion(v));
            (buf, at)
        }
        Ok(v) if v < u64::from(CURRENT_SESSION_VERSION) => {
            let migrated = migrate_to_current(&buf, v, ids);
            if mode == LoadMode::Open {
                let backup = with_suffix(path, &format!(".v{v}.bak"));
                if let Err(err) = rewrite_atomically(path, &migrated, &backup) {
                    read_only = Some(ReadOnlyReason::MigrationNotSaved(err.to_string()));
                }
            }
            match find_header(&migrated) {
                Some(at) => (migrated, at),
                None => return Ok(Opened::Invalid { backup: None }),
            }
        }
        Ok(_) => (buf, at),
        Err(text) => {
            read_only = Some(ReadOnlyReason::UnreadableVersion(text));
            (buf, at)
        }
    };
    let header = header_from_map(&at.value);
    let (index, report) = Index::build(&buf, at.body_start, at.body_line);
    let warnings = warnings_of(path, &report, read_only.as_ref());
    Ok(Opened::Loaded(Box::new(Loaded {
        store: LineStore::new(buf),
        header,
        index,
        warnings,
        read_only,
    })))
}

/// What a user should hear about a file that was indexed.
fn warnings_of(
    path: &Path,
    report: &BuildReport,
    read_only: Option<&ReadOnlyReason>,
) -> Vec<LoadWarning> {
    let mut warnings = Vec::new();
    let path_buf = path.to_path_buf();
    if let Some(line) = report.truncated_last_line {
        warnings.push(LoadWarning::TruncatedLastLine {
            path: path_buf.clone(),
            line,
        });
    }
    if report.malformed > 0 {
        warnings.push(LoadWarning::MalformedLines {
            path: path_buf.clone(),
            count: report.malformed,
            first_line: report.first_malformed_line,
        });
    }
    if report.not_entries > 0 {
        warnings.push(LoadWarning::NotEntries {
            path: path_buf.clone(),
            count: report.not_entries,
            first_line: report.first_not_entry_line,
        });
    }
    if let Some(example) = report.duplicate_example.clone() {
        warnings.push(LoadWarning::DuplicateIds {
            path: path_buf.clone(),
            count: report.duplicate_ids,
            example,
        });
    }
    if let Some(example) = report.cycle_example.clone() {
        warnings.push(LoadWarning::ParentCycles {
            path: path_buf.clone(),
            count: report.cycles,
            example,
        });
    }
    if report.unknown > 0 {
        warnings.push(LoadWarning::UnknownEntries {
            path: path_buf.clone(),
            count: report.unknown,
            first_line: report.first_unknown_line,
            names: report.unknown_names.clone(),
        });
    }
    if report.bad_system > 0 {
        warnings.push(LoadWarning::MalformedSystemMessages {
            path: path_buf.clone(),
            count: report.bad_system,
            first_line: report.first_bad_system_line,
        });
    }
    if let Some(reason) = read_only {
        warnings.push(LoadWarning::ReadOnly {
            path: path_buf,
            reason: reason.clone(),
        });
    }
    warnings
}

/// The first line of a file, read without loading the rest (a header is a few hundred
/// bytes; 64 KiB is plenty even for a very long cwd).
fn first_line(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = fs::File::open(path).ok()?;
    let mut first = Vec::new();
    file.take(64 * 1024).read_to_end(&mut first).ok()?;
    let end = memchr::memchr(b'\n', &first).unwrap_or(first.len());
    first.truncate(end);
    Some(first)
}

/// Whether the first line of a file is a session header (pi's `isValidSessionFile`, used
/// to pick the most recent session; reads only the start of the file).
pub(crate) fn has_valid_header(path: &Path) -> bool {
    let Some(first) = first_line(path) else {
        return false;
    };
    match scan_line(&first) {
        LineScan::Object(head) => head.kind.as_deref() == Some("session") && head.id.is_some(),
        _ => false,
    }
}

/// The header on the first line of a file, read without loading or changing the file
/// (for checks made before a session is opened).
pub(crate) fn first_line_header(path: &Path) -> Option<SessionHeader> {
    let first = first_line(path)?;
    let at = find_header(&first)?;
    Some(header_from_map(&at.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (id, parent, kind, time, line) of every node.
    fn nodes(index: &Index) -> Vec<String> {
        index
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "{} {} {:?} {} {:?}",
                    index.id_of(i as u32),
                    n.parent,
                    n.kind,
                    n.ts_ms,
                    n.line()
                )
            })
            .collect()
    }

    #[test]
    fn streaming_a_file_indexes_it_exactly_as_reading_it_whole() {
        let text = concat!(
            "\n",
            "not json\n",
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            "\n\n",
            "{\"type\":\"message\",\"id\":\"broken\"\n",
            "[1,2]\n",
            r#"{"type":"label","id":"l","parentId":"a","targetId":"a","label":"here","timestamp":"t"}"#,
            "\r\n",
            r#"{"type":"session_info","id":"n","parentId":"l","name":" Named "}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":"n","message":{"role":"assistant","content":[]}}"#,
            "\n",
            "{\"type\":\"message\",\"id\":\"cut"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(&path, text).unwrap();
        let mut ids = IdSource::Random;
        let Opened::Loaded(streamed) = load_file(&path, LoadMode::ReadOnly, &mut ids).unwrap()
        else {
            panic!("not loaded");
        };
        let Opened::Loaded(whole) = load_whole(&path, LoadMode::ReadOnly, &mut ids).unwrap() else {
            panic!("not loaded");
        };
        assert!(
            streamed.store.memory_base().is_none(),
            "the file is not kept"
        );
        assert!(whole.store.memory_base().is_some());
        assert_eq!(nodes(&streamed.index), nodes(&whole.index));
        assert_eq!(nodes(&streamed.index).len(), 4);
        assert_eq!(
            format!("{:?}", streamed.warnings),
            format!("{:?}", whole.warnings)
        );
        // Truncated, malformed, not an entry, duplicate id, and the cycle the duplicate makes.
        assert_eq!(streamed.warnings.len(), 5, "{:?}", streamed.warnings);
        assert_eq!(streamed.index.session_name.as_deref(), Some("Named"));
        assert_eq!(
            streamed.index.label("a").map(|l| l.label.as_str()),
            Some("here")
        );
        assert_eq!(streamed.header.id, "s1");
        assert!(!streamed.store.base_ends_with_newline());
        for node in &streamed.index.nodes {
            assert_eq!(
                streamed.store.line(node.line()),
                whole.store.line(node.line())
            );
        }
    }

    #[test]
    fn an_older_file_is_read_whole_and_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        fs::write(
            &path,
            concat!(
                r#"{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
                "\n",
                r#"{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
                "\n"
            ),
        )
        .unwrap();
        let mut ids = IdSource::Seeded(1);
        let Opened::Loaded(loaded) = load_file(&path, LoadMode::ReadOnly, &mut ids).unwrap() else {
            panic!("not loaded");
        };
        assert!(loaded.store.memory_base().is_some(), "migrated in memory");
        assert_eq!(loaded.index.nodes.len(), 1);
    }
}
