//! Exporting a session file from disk (`pi --export <file> [out]`): read the header and
//! entries, render, write `pi-session-<name>.html` (or the given path) atomically.
//!
//! Reading is deliberately small and forgiving: malformed lines are skipped (as pi does),
//! and v1/v2 files get just enough of pi's migration (ids and a linear parent chain for
//! v1, `hookMessage` → `custom` for v2) to render. The session store owns the real
//! migration; once it is merged, [`read_session_file`] should call it instead.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ExportInput, ExportTheme, export_html};
use crate::session::entry::{EntryId, SessionEntry, SessionHeader};

/// Error text for exporting a session that has no file (`--no-session`), as pi words it.
pub const IN_MEMORY_SESSION_ERROR: &str = "Cannot export in-memory session to HTML";
/// Error text for exporting before the session file exists (no assistant reply yet).
pub const NOTHING_TO_EXPORT_ERROR: &str = "Nothing to export yet - start a conversation first";

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// pi's wording for a missing input file.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    #[error("failed to read session file {}: {source}", .path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "{} is not a pi session file: its first line is not a session header (expected {{\"type\":\"session\",\"id\":…}}). Check that the path points to a .jsonl file under ~/.pi/agent/sessions/.",
        .0.display()
    )]
    NotASession(PathBuf),
    #[error("failed to write the HTML export to {}: {source}", .path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// A session file as read for export.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    pub header: SessionHeader,
    pub entries: Vec<SessionEntry>,
    /// The last entry: where pi continues when the file is opened.
    pub leaf_id: Option<EntryId>,
    /// Lines that were not valid JSON objects (a torn write, hand edits) and were skipped.
    pub skipped_lines: usize,
}

/// pi's default export name: `pi-session-<file name without .jsonl>.html`, in the
/// current directory.
pub fn default_output_name(session_path: &Path) -> PathBuf {
    let name = session_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    PathBuf::from(format!("pi-session-{stem}.html"))
}

/// Reads a session file (any version) for export.
pub fn read_session_file(path: &Path) -> Result<LoadedSession, ExportError> {
    let bytes = fs::read(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ExportError::NotFound(path.to_path_buf()),
        _ => ExportError::Read {
            path: path.to_path_buf(),
            source,
        },
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: SessionHeader = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .filter(|h: &SessionHeader| h.kind == "session")
        .ok_or_else(|| ExportError::NotASession(path.to_path_buf()))?;

    let mut skipped_lines = 0;
    let mut objects = Vec::new();
    for line in lines {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(obj)) => objects.push(obj),
            _ => skipped_lines += 1,
        }
    }
    let version = header.version();
    if version < 2 {
        link_v1_entries(&mut objects);
    }
    if version < 3 {
        rename_hook_messages(&mut objects);
    }
    let entries: Vec<SessionEntry> = objects
        .into_iter()
        .filter_map(|obj| serde_json::from_value(Value::Object(obj)).ok())
        .collect();
    let leaf_id = entries
        .iter()
        .rev()
        .map(SessionEntry::id)
        .find(|id| !id.is_empty())
        .map(EntryId::from);
    Ok(LoadedSession {
        header,
        entries,
        leaf_id,
        skipped_lines,
    })
}

/// v1 entries have no ids: number them, chain each to the one before, and turn a
/// compaction's `firstKeptEntryIndex` (an index into the file, header = 0) into an id.
fn link_v1_entries(objects: &mut [Map<String, Value>]) {
    let ids: Vec<String> = objects
        .iter()
        .enumerate()
        .map(|(i, obj)| match obj.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => format!("{:08x}", i + 1),
        })
        .collect();
    for (i, obj) in objects.iter_mut().enumerate() {
        obj.entry("id")
            .or_insert_with(|| Value::String(ids[i].clone()));
        let parent = i.checked_sub(1).map(|p| Value::String(ids[p].clone()));
        obj.entry("parentId")
            .or_insert(parent.unwrap_or(Value::Null));
        if let Some(index) = obj.get("firstKeptEntryIndex").and_then(Value::as_u64)
            && !obj.contains_key("firstKeptEntryId")
            && let Some(id) = (index as usize).checked_sub(1).and_then(|k| ids.get(k))
        {
            obj.insert("firstKeptEntryId".into(), Value::String(id.clone()));
        }
    }
}

/// v2 stored extension messages with role `hookMessage`; v3 calls them `custom`.
fn rename_hook_messages(objects: &mut [Map<String, Value>]) {
    for obj in objects {
        if let Some(Value::Object(message)) = obj.get_mut("message")
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".into(), Value::String("custom".into()));
        }
    }
}

/// Writes an export page to `path` (for `/export` and RPC `export_html`, which render
/// from the live session with [`export_html`]): through a temporary file in the same
/// directory, so an existing file is replaced whole or not at all.
pub fn write_export(path: &Path, html: &str) -> Result<(), ExportError> {
    write_atomically(path, html).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn write_atomically(path: &Path, contents: &str) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Exports a session file with the built-in dark theme; see
/// [`export_session_file_with_theme`].
pub fn export_session_file(path: &Path, out: Option<&Path>) -> Result<PathBuf, ExportError> {
    export_session_file_with_theme(path, out, &ExportTheme::dark())
}

/// Exports the session file at `path` to `out` (default: [`default_output_name`]) and
/// returns the path written. A file has no system prompt or tool list to show.
pub fn export_session_file_with_theme(
    path: &Path,
    out: Option<&Path>,
    theme: &ExportTheme,
) -> Result<PathBuf, ExportError> {
    let session = read_session_file(path)?;
    let html = export_html(&ExportInput {
        header: &session.header,
        entries: &session.entries,
        leaf_id: session.leaf_id.as_ref(),
        system_prompt: None,
        tools: &[],
        theme,
    });
    let target = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| default_output_name(path));
    write_export(&target, &html)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_name_follows_pi() {
        assert_eq!(
            default_output_name(Path::new("/s/2026-11-22T03-39-48-634Z_01a2.jsonl")),
            PathBuf::from("pi-session-2026-11-22T03-39-48-634Z_01a2.html")
        );
        assert_eq!(
            default_output_name(Path::new("x.json")),
            PathBuf::from("pi-session-x.json.html")
        );
    }

    #[test]
    fn missing_file_and_non_session_files_give_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.jsonl");
        let err = export_session_file(&missing, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("File not found: {}", missing.display())
        );

        let bogus = dir.path().join("bogus.jsonl");
        fs::write(&bogus, "{\"type\":\"message\"}\n").unwrap();
        let err = export_session_file(&bogus, Some(&dir.path().join("o.html"))).unwrap_err();
        assert!(
            err.to_string().contains("is not a pi session file"),
            "{err}"
        );
        assert!(!dir.path().join("o.html").exists());
    }

    #[test]
    fn an_existing_export_is_replaced_whole_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("page.html");
        fs::write(&target, "old page").unwrap();
        write_export(&target, "<html>new</html>").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "<html>new</html>");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["page.html"]);

        let missing_dir = dir.path().join("no/such/dir/page.html");
        let err = write_export(&missing_dir, "x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("failed to write the HTML export to "),
            "{err}"
        );
    }

    #[test]
    fn v1_entries_are_chained_and_v2_hook_messages_become_custom() {
        let dir = tempfile::tempdir().unwrap();
        let v1 = dir.path().join("v1.jsonl");
        fs::write(
            &v1,
            concat!(
                "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/p\"}\n",
                "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n",
                "not json\n",
                "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02Z\",\"message\":{\"role\":\"hookMessage\",\"customType\":\"x\",\"content\":\"c\",\"display\":true,\"timestamp\":2}}\n",
                "{\"type\":\"compaction\",\"timestamp\":\"2025-01-01T00:00:03Z\",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":5}\n",
            ),
        )
        .unwrap();
        let s = read_session_file(&v1).unwrap();
        let shape: Vec<String> = s
            .entries
            .iter()
            .map(|e| {
                let role = e
                    .message()
                    .map(|m| m.role().to_string())
                    .unwrap_or_default();
                let kept = match e {
                    SessionEntry::Compaction(c) => format!(" kept={}", c.first_kept_entry_id),
                    _ => String::new(),
                };
                format!(
                    "{} <- {:?} {} {role}{kept}",
                    e.id(),
                    e.parent_id(),
                    e.type_name()
                )
            })
            .collect();
        insta::assert_snapshot!(shape.join("\n"), @r#"
        00000001 <- None message user
        00000002 <- Some("00000001") message custom
        00000003 <- Some("00000002") compaction  kept=00000002
        "#);
        assert_eq!(s.skipped_lines, 1);
        assert_eq!(s.leaf_id, Some(EntryId::from("00000003")));
    }
}
