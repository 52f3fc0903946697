//! Finding sessions: the list behind `--resume` / `/resume` (one project directory or all
//! of them) and the text a picker searches.
//!
//! Listing must stay fast on stores with hundreds of long sessions, so a file is never
//! fully deserialized here: every line goes through the cheap scanner (role, timestamps,
//! session name), and only the first user message is parsed for its text. Files are read
//! on all cores. The full searchable text is a separate call, [`load_search_text`], so a
//! picker can fill it in lazily. Field meanings are pi's `SessionInfo`.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::session::clock::iso_ms;
use crate::session::error::{IoOp, Result, SessionError};
use crate::session::ids::SessionId;
use crate::session::load::header_from_map;
use crate::session::scan::{Head, LineScan, scan_line};
use crate::session::store::{LineReader, split_lines};
use crate::session::tree::normalize_name;

/// One session as a picker shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: SessionId,
    pub cwd: String,
    /// From the latest `session_info` entry.
    pub name: Option<String>,
    /// The header's `parentSession` (forks are shown under their parent).
    pub parent_session_path: Option<String>,
    /// The header timestamp.
    pub created: DateTime<Utc>,
    /// The newest user/assistant message time; else the header time; else the file's mtime.
    pub modified: DateTime<Utc>,
    /// Number of `message` entries (every role, every branch).
    pub message_count: usize,
    /// Text of the first user message, or `(no messages)`.
    pub first_message: String,
}

/// Sessions in one session directory, most recently modified first. A missing directory
/// has no sessions; unreadable or non-session files are left out.
pub fn list(session_dir: &Path) -> Result<Vec<SessionInfo>> {
    let files = jsonl_files(session_dir)?;
    Ok(sorted(infos(&files)))
}

/// The session file in `session_dir` whose header has exactly `id` (pi's `findById`,
/// reading only the headers). With `cwd`, only a session of that working directory
/// counts (a shared session directory holds several projects' sessions).
pub fn find_by_id(session_dir: &Path, id: &str, cwd: Option<&Path>) -> Option<std::path::PathBuf> {
    jsonl_files(session_dir).ok()?.into_iter().find(|path| {
        crate::session::load::first_line_header(path)
            .is_some_and(|h| h.id == id && cwd.is_none_or(|cwd| Path::new(&h.cwd) == cwd))
    })
}

/// Sessions of every project under `sessions_root` (each project is a subdirectory),
/// most recently modified first.
pub fn list_all(sessions_root: &Path) -> Result<Vec<SessionInfo>> {
    let dirs = match fs::read_dir(sessions_root) {
        Ok(dirs) => dirs,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SessionError::io(IoOp::ReadDir, sessions_root, e)),
    };
    let mut files = Vec::new();
    for dir in dirs.filter_map(|d| d.ok()) {
        if dir.file_type().is_ok_and(|t| t.is_dir()) {
            files.extend(jsonl_files(&dir.path()).unwrap_or_default());
        }
    }
    Ok(sorted(infos(&files)))
}

fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SessionError::io(IoOp::ReadDir, dir, e)),
    };
    Ok(entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect())
}

fn sorted(mut infos: Vec<SessionInfo>) -> Vec<SessionInfo> {
    infos.sort_by_key(|info| std::cmp::Reverse(info.modified));
    infos
}

/// Reads many files on all cores.
fn infos(files: &[PathBuf]) -> Vec<SessionInfo> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = files.get(i) else { break };
                        if let Some(info) = session_info(file) {
                            out.push(info);
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

fn ms_to_time(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

/// How much of a session file [`session_info`] reads at a time.
const INFO_READ_BUFFER: usize = 256 << 10;

/// The picker row of one session file, or `None` if it is not a session (its first valid
/// line is not a `session` header) or cannot be read. The file is read a buffer at a time
/// (a line longer than the buffer grows it to that line), never whole: listing a folder
/// that holds a 400 MB session costs a few hundred KB of memory, not 400 MB.
pub fn session_info(path: &Path) -> Option<SessionInfo> {
    let file = fs::File::open(path).ok()?;
    let meta = file.metadata().ok();
    let mtime: DateTime<Utc> = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .unwrap_or(SystemTime::UNIX_EPOCH)
        .into();
    let len = meta.map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX));
    let mut lines = LineReader::with_capacity(file, len.saturating_add(1).min(INFO_READ_BUFFER));
    let header = loop {
        let line = lines.next_line().ok()??;
        let raw = line.bytes;
        match scan_line(raw) {
            LineScan::Blank | LineScan::Malformed => continue,
            LineScan::NotObject => return None,
            LineScan::Object(head) if head.kind.as_deref() == Some("session") => {
                let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
                match serde_json::from_slice::<Value>(raw).ok()? {
                    Value::Object(map) => break header_from_map(&map),
                    _ => return None,
                }
            }
            LineScan::Object(_) => return None,
        }
    };
    let mut name = None;
    let mut message_count = 0;
    let mut last_activity: Option<i64> = None;
    let mut first_message = String::new();
    loop {
        let raw = match lines.next_line() {
            Ok(Some(line)) => line.bytes,
            Ok(None) => break,
            Err(_) => return None,
        };
        let LineScan::Object(head) = scan_line(raw) else {
            continue;
        };
        match head.kind.as_deref() {
            Some("session_info") => name = normalize_name(head.name.as_deref()),
            Some("message") => {
                message_count += 1;
                if !is_conversation_message(&head) {
                    continue;
                }
                let time = match head.message_timestamp() {
                    Some(ms) => Some(ms as i64),
                    None => head.timestamp.as_deref().and_then(iso_ms),
                };
                if let Some(time) = time {
                    last_activity = Some(last_activity.unwrap_or(0).max(time));
                }
                if first_message.is_empty() && head.role.as_deref() == Some("user") {
                    first_message = message_text(raw).unwrap_or_default();
                }
            }
            _ => {}
        }
    }
    let header_time = iso_ms(&header.timestamp).and_then(ms_to_time);
    let modified = last_activity
        .filter(|&t| t > 0)
        .and_then(ms_to_time)
        .or(header_time)
        .unwrap_or(mtime);
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: SessionId::from(header.id),
        cwd: header.cwd,
        name,
        parent_session_path: header.parent_session,
        created: header_time.unwrap_or(mtime),
        modified,
        message_count,
        first_message: if first_message.is_empty() {
            "(no messages)".into()
        } else {
            first_message
        },
    })
}

/// pi's `isMessageWithContent` plus the user/assistant filter.
fn is_conversation_message(head: &Head<'_>) -> bool {
    head.message_has_content && matches!(head.role.as_deref(), Some("user" | "assistant"))
}

#[derive(Deserialize)]
struct LineText<'a> {
    #[serde(borrow)]
    message: MessageText<'a>,
}

#[derive(Deserialize)]
struct MessageText<'a> {
    #[serde(borrow)]
    content: ContentText<'a>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ContentText<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Blocks(#[serde(borrow)] Vec<BlockText<'a>>),
}

#[derive(Deserialize)]
struct BlockText<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// The text of a message line as pi's `extractTextContent` gives it: a string content as
/// is, or the text blocks joined with a space.
fn message_text(line: &[u8]) -> Option<String> {
    let parsed: LineText<'_> = serde_json::from_slice(line).ok()?;
    Some(match parsed.message.content {
        ContentText::Text(text) => text.into_owned(),
        ContentText::Blocks(blocks) => blocks
            .iter()
            .filter(|b| b.kind == "text")
            .filter_map(|b| b.text.as_deref())
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// [`load_search_text`] that stops reading once `max_bytes` of text are collected, and
/// reads the file line by line instead of whole, so a multi-gigabyte session costs
/// neither the time nor the memory of reading it all. The result may end past
/// `max_bytes` by at most one message.
pub fn load_search_text_capped(path: &Path, max_bytes: usize) -> Result<String> {
    use std::io::BufRead;
    let file = fs::File::open(path).map_err(|e| SessionError::io(IoOp::Read, path, e))?;
    let mut reader = io::BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut out = String::new();
    while out.len() < max_bytes {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| SessionError::io(IoOp::Read, path, e))?;
        if read == 0 {
            break;
        }
        let raw = line.strip_suffix(b"\n").unwrap_or(&line);
        let LineScan::Object(head) = scan_line(raw) else {
            continue;
        };
        if head.kind.as_deref() == Some("message")
            && is_conversation_message(&head)
            && let Some(text) = message_text(raw)
            && !text.is_empty()
        {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&text);
        }
    }
    Ok(out)
}

/// Everything a picker's search looks at: the text of every user and assistant message of
/// the session, joined with spaces (pi's `allMessagesText`).
pub fn load_search_text(path: &Path) -> Result<String> {
    let bytes = fs::read(path).map_err(|e| SessionError::io(IoOp::Read, path, e))?;
    let mut texts: Vec<String> = Vec::new();
    for line in split_lines(&bytes) {
        let raw = &bytes[line.start..line.end];
        let LineScan::Object(head) = scan_line(raw) else {
            continue;
        };
        if head.kind.as_deref() == Some("message")
            && is_conversation_message(&head)
            && let Some(text) = message_text(raw)
            && !text.is_empty()
        {
            texts.push(text);
        }
    }
    Ok(texts.join(" "))
}
