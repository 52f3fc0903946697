//! Session files on disk: damaged, old, newer, concurrent and copied files, and what we
//! promise about each (load what can be loaded, tell the user, never lose a byte).
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::fs;
use std::path::Path;

use crate::support::session::*;
use pi::session::manager::SessionManager;

const HEADER: &str = r#"{"type":"session","version":3,"id":"01a20156-4849-716a-9ef4-cfcfd767c6ff","timestamp":"2026-11-22T03:39:21.546Z","cwd":"/home/user/proj"}"#;

fn entry_line(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let body = match role {
        "assistant" => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"a","provider":"mock","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":2}}"#
        ),
        _ => format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}"#
        ),
    };
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-22T03:39:2{}.000Z","message":{body}}}"#,
        id.len() % 10
    )
}

fn write(dir: &Path, name: &str, lines: &[String]) -> std::path::PathBuf {
    let path = dir.join(name);
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn warnings(s: &SessionManager, dir: &Path) -> String {
    s.load_warnings()
        .iter()
        .map(|w| w.to_string().replace(&dir.display().to_string(), "<dir>"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn truncated_last_line_is_ignored_and_next_append_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let cut = entry_line("cccc", Some("bbbb"), "user", "this line was cut");
    let text = [
        HEADER.to_string(),
        entry_line("aaaa", None, "user", "hello"),
        entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
    ]
    .join("\n")
        + "\n"
        + &cut[..cut.len() / 2];
    fs::write(&path, &text).unwrap();

    let mut s = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&s, dir.path()), @r#"<dir>/s.jsonl: line 4, the last one, is incomplete (pi was probably stopped while writing it). It was skipped and kept in the file; new entries start on a fresh line."#);
    assert_eq!(s.leaf_id().unwrap().as_str(), "bbbb");
    s.append_message(user("after the crash")).unwrap();

    let content = fs::read_to_string(&path).unwrap();
    assert!(
        content.starts_with(&text),
        "nothing that was in the file is lost"
    );
    let last: serde_json::Value = serde_json::from_str(content.lines().last().unwrap()).unwrap();
    assert_eq!(last["parentId"], "bbbb");
    let again = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&again, dir.path()), @r#"<dir>/s.jsonl: 1 line(s) are not valid JSON (first: line 4). They were skipped and are kept in the file."#);
    assert_eq!(
        render_context(&again.build_session_context()),
        render_context(&s.build_session_context())
    );
}

#[test]
fn a_valid_last_line_without_newline_is_read_and_the_next_append_gets_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(
        &path,
        format!(
            "{HEADER}\n{}\n{}",
            entry_line("aaaa", None, "user", "hello"),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi")
        ),
    )
    .unwrap();
    let mut s = SessionManager::open(&path, None).unwrap();
    assert!(s.load_warnings().is_empty());
    s.append_message(user("next")).unwrap();
    let lines = file_lines(&path);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["parentId"], "bbbb");
}

#[test]
fn malformed_and_foreign_lines_are_skipped_counted_and_kept_by_a_migration() {
    let dir = tempfile::tempdir().unwrap();
    let v2_header = HEADER.replace(r#""version":3"#, r#""version":2"#);
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            v2_header,
            entry_line("aaaa", None, "user", "hello"),
            "{this is not json".into(),
            r#"{"no":"id here"}"#.into(),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
            r#"["not","an","object"]"#.into(),
        ],
    );
    let s = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&s, dir.path()), @r#"
    <dir>/s.jsonl: 1 line(s) are not valid JSON (first: line 3). They were skipped and are kept in the file.
    <dir>/s.jsonl: 2 line(s) are not session entries (no id; first: line 4). They were skipped and are kept in the file.
    "#);
    assert_eq!(s.entry_count(), 2);
    let content = fs::read_to_string(&path).unwrap();
    assert!(
        content.contains("\n{this is not json\n"),
        "the migration kept the broken line: {content}"
    );
    assert!(content.contains(r#"{"no":"id here"}"#));
    assert!(content.starts_with(r#"{"type":"session","version":3,"#));
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no backup or temp file left: {leftovers:?}"
    );
}

#[test]
fn unknown_entry_types_and_fields_survive_appends_and_copies() {
    let dir = tempfile::tempdir().unwrap();
    let future_entry = r#"{"type":"hologram","id":"hhhh","parentId":"bbbb","timestamp":"2026-11-22T03:39:30.000Z","shape":{"sides":7}}"#;
    let mut with_extra = entry_line("bbbb", Some("aaaa"), "assistant", "hi");
    with_extra.insert_str(with_extra.len() - 1, r#","futureField":[1,2,3]"#);
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            HEADER.into(),
            entry_line("aaaa", None, "user", "hello"),
            with_extra.clone(),
            future_entry.into(),
        ],
    );

    let mut s = SessionManager::open(&path, None).unwrap();
    assert_eq!(s.leaf_id().unwrap().as_str(), "hhhh");
    s.append_message(user("still here")).unwrap();
    let content = fs::read_to_string(&path).unwrap();
    assert!(content.contains(future_entry) && content.contains(&with_extra));

    let leaf = s.leaf_id().unwrap().clone();
    let copy = s.create_branched_session(&leaf).unwrap().unwrap();
    let copied = fs::read_to_string(&copy).unwrap();
    assert!(
        copied.contains(future_entry) && copied.contains(&with_extra),
        "{copied}"
    );
}

#[test]
fn a_newer_format_opens_read_only_and_is_never_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let v4 = HEADER.replace(r#""version":3"#, r#""version":4"#);
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            v4,
            entry_line("aaaa", None, "user", "hello"),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
        ],
    );
    let before = fs::read(&path).unwrap();

    let mut s = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&s, dir.path()), @r#"<dir>/s.jsonl is open read-only: it uses session format version 4, newer than the version 3 this pi understands. Nothing in it was changed. Upgrade pi, or fork it into a new session to continue."#);
    assert_eq!(
        render_context(&s.build_session_context()).lines().count(),
        3
    );
    let err = s.append_message(user("more")).unwrap_err();
    insta::assert_snapshot!(err.to_string().replace(&dir.path().display().to_string(), "<dir>"), @r#"session <dir>/s.jsonl is read-only: it uses session format version 4, newer than the version 3 this pi understands. Nothing in it was changed. Upgrade pi, or fork it into a new session to continue"#);
    s.branch(&"aaaa".into()).unwrap();
    assert!(s.branch_with_summary(None, "x", None, None).is_err());
    assert_eq!(
        s.leaf_id().unwrap().as_str(),
        "aaaa",
        "a refused append does not move the leaf"
    );
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn a_file_without_a_header_is_moved_aside_and_a_new_session_starts_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[entry_line("aaaa", None, "user", "precious words")],
    );
    let original = fs::read(&path).unwrap();

    let mut s = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&s, dir.path()), @r#"<dir>/s.jsonl does not start with a session header, so a new session was started in its place. Its previous content was moved to <dir>/s.jsonl.invalid.bak."#);
    assert_eq!(
        fs::read(dir.path().join("s.jsonl.invalid.bak")).unwrap(),
        original
    );
    assert_eq!(s.entry_count(), 0);
    // Like pi, the file holds a fresh header right away.
    let lines = file_lines(&path);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["id"], s.session_id().as_str());
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    let types: Vec<_> = file_lines(&path)
        .iter()
        .map(|l| l["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, ["session", "message", "message"], "no second header");
}

#[test]
fn an_empty_file_or_a_missing_one_becomes_a_new_session_at_that_path() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, "").unwrap();
    let s = SessionManager::open(&empty, None).unwrap();
    assert!(s.load_warnings().is_empty());
    assert_eq!(file_lines(&empty).len(), 1);

    let missing = dir.path().join("sub").join("new.jsonl");
    let mut s = SessionManager::open(&missing, None).unwrap();
    assert_eq!(s.session_file(), Some(missing.as_path()));
    s.append_model_change("mock", "mock-model").unwrap();
    assert!(
        !missing.exists(),
        "lazy: nothing before the first user message"
    );
    s.append_message(user("hello")).unwrap();
    assert_eq!(file_lines(&missing).len(), 3);
}

#[test]
fn duplicate_ids_and_parent_cycles_load_with_warnings_and_never_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            HEADER.into(),
            entry_line("aaaa", Some("cccc"), "user", "one"),
            entry_line("bbbb", Some("aaaa"), "assistant", "two"),
            entry_line("cccc", Some("bbbb"), "user", "three"),
            entry_line("dddd", Some("dddd"), "user", "self"),
            entry_line("dddd", Some("cccc"), "assistant", "dup"),
        ],
    );
    let s = SessionManager::open(&path, None).unwrap();
    insta::assert_snapshot!(warnings(&s, dir.path()), @r#"
    <dir>/s.jsonl: 1 entries reuse an id of an earlier entry (e.g. dddd). Lookups and children use the later entry.
    <dir>/s.jsonl: 1 parent cycle(s) found; the first entry of each cycle in the file (e.g. aaaa) is treated as a root.
    "#);
    insta::assert_snapshot!(s.render_tree(), @r#"
    ├─ aaaa user "one"
    │  bbbb assistant "two"
    │  cccc user "three"
    │  dddd assistant "dup"  ← leaf
    └─ dddd user "self"
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model mock/m, thinking off
    user: one
    assistant: two
    user: three
    assistant: dup
    "#);
}

#[test]
fn a_second_header_in_the_middle_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            HEADER.into(),
            entry_line("aaaa", None, "user", "hello"),
            HEADER.into(),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
        ],
    );
    let s = SessionManager::open(&path, None).unwrap();
    assert!(s.load_warnings().is_empty());
    assert_eq!(s.entry_count(), 2);
    assert_eq!(s.build_session_context().messages.len(), 2);
}

#[test]
fn crlf_line_endings_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(
        &path,
        format!(
            "{HEADER}\r\n{}\r\n",
            entry_line("aaaa", None, "user", "hello")
        ),
    )
    .unwrap();
    let s = SessionManager::open(&path, None).unwrap();
    assert!(s.load_warnings().is_empty());
    assert_eq!(s.entry_count(), 1);
}

#[test]
fn a_loaded_file_with_a_user_message_gets_only_its_new_lines_appended() {
    // pi re-writes every entry (header included) in this case; we write only what is new.
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[HEADER.into(), entry_line("aaaa", None, "user", "hello")],
    );
    let mut s = SessionManager::open(&path, None).unwrap();
    // A user message is a conversation (pi 1.6): appends go straight to the file.
    s.append_message(user("again")).unwrap();
    assert_eq!(file_lines(&path).len(), 3);
    s.append_message(assistant("hi")).unwrap();
    let ids: Vec<_> = file_lines(&path)
        .iter()
        .map(|l| l["id"].as_str().unwrap().len())
        .collect();
    assert_eq!(ids, [36, 4, 8, 8]);
}

#[test]
fn continue_recent_picks_the_newest_file_with_a_valid_header() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(
        dir.path(),
        "old.jsonl",
        &[HEADER.into(), entry_line("aaaa", None, "user", "old")],
    );
    let newer = write(
        dir.path(),
        "newer.jsonl",
        &[HEADER.into(), entry_line("bbbb", None, "user", "newer")],
    );
    let newest_invalid = write(dir.path(), "broken.jsonl", &["garbage".into()]);
    let set_mtime = |p: &Path, secs: u64| {
        let f = fs::File::options().write(true).open(p).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    };
    set_mtime(&old, 1_000);
    set_mtime(&newer, 2_000);
    set_mtime(&newest_invalid, 3_000);
    let s = SessionManager::continue_recent("/elsewhere", dir.path()).unwrap();
    assert_eq!(s.session_file(), Some(newer.as_path()));
    assert_eq!(s.cwd(), Path::new("/elsewhere"), "pi keeps the given cwd");

    let empty = tempfile::tempdir().unwrap();
    let s = SessionManager::continue_recent("/p", empty.path()).unwrap();
    assert_eq!(s.entry_count(), 0);
    assert!(!s.session_file().unwrap().exists());
}

#[test]
fn fork_from_copies_every_entry_into_a_new_file_that_names_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let source = write(
        dir.path(),
        "source.jsonl",
        &[
            HEADER.into(),
            entry_line("aaaa", None, "user", "hello"),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
        ],
    );
    let target_dir = dir.path().join("target");
    let s = SessionManager::fork_from(&source, "/new/cwd", &target_dir).unwrap();
    let file = s.session_file().unwrap();
    assert_eq!(file.parent().unwrap(), target_dir);
    assert_eq!(
        s.header().parent_session.as_deref(),
        Some(source.to_str().unwrap())
    );
    assert_eq!(s.header().cwd, "/new/cwd");
    assert_eq!(s.cwd(), Path::new("/new/cwd"));
    assert_ne!(
        s.session_id().as_str(),
        "01a20156-4849-716a-9ef4-cfcfd767c6ff"
    );
    assert_eq!(
        s.path_ids(None)
            .iter()
            .map(|i| i.as_str())
            .collect::<Vec<_>>(),
        ["aaaa", "bbbb"]
    );
    assert_eq!(file_lines(file).len(), 3);

    let bad = write(dir.path(), "bad.jsonl", &["nope".into()]);
    let err = SessionManager::fork_from(&bad, "/x", &target_dir).unwrap_err();
    insta::assert_snapshot!(err.to_string().replace(&dir.path().display().to_string(), "<dir>"), @r#"Cannot fork: source session file is empty or invalid: <dir>/bad.jsonl"#);
    assert_eq!(
        fs::read_to_string(&bad).unwrap(),
        "nope\n",
        "the source is never touched"
    );
}

#[test]
fn create_branched_session_copies_the_path_with_the_same_ids_and_recreates_labels() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let hello = s.append_message(user("hello")).unwrap();
    let hi = s.append_message(assistant("hi")).unwrap();
    s.append_label_change(&hello, Some("start")).unwrap();
    s.append_message(user("A")).unwrap();
    let a = s.append_message(assistant("A done")).unwrap();
    s.branch(&hi).unwrap();
    s.append_message(user("B")).unwrap();
    let original = s.session_file().unwrap().to_path_buf();

    let new_file = s.create_branched_session(&a).unwrap().unwrap();
    assert_eq!(s.session_file(), Some(new_file.as_path()));
    assert_eq!(
        s.header().parent_session.as_deref(),
        Some(original.to_str().unwrap())
    );
    // The entry after the dropped label is re-attached to the entry before it (pi leaves it
    // orphaned, which cuts the copied conversation short).
    insta::assert_snapshot!(s.render_tree(), @r#"
    910a2dec user "hello" [start]
    beeb8da1 assistant "hi"
    71c18690 user "A"
    71bb54d8 assistant "A done"
    491718de label 910a2dec "start"  ← leaf
    "#);
    insta::assert_snapshot!(render_context(&s.build_session_context()), @r#"
    model mock/mock-model, thinking off
    user: hello
    assistant: hi
    user: A
    assistant: A done
    "#);
    let reopened = SessionManager::open(&new_file, None).unwrap();
    assert_eq!(reopened.render_tree(), s.render_tree());
    assert_eq!(reopened.label(&hello), Some("start"));
}

#[test]
fn create_branched_session_without_a_conversation_is_written_later() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = new_session(dir.path());
    let model = s.append_model_change("mock", "mock-model").unwrap();
    s.append_message(user("hello")).unwrap();
    s.append_message(assistant("hi")).unwrap();
    let new_file = s.create_branched_session(&model).unwrap().unwrap();
    assert!(!new_file.exists());
    s.append_message(user("now")).unwrap();
    let types: Vec<_> = file_lines(&new_file)
        .iter()
        .map(|l| l["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, ["session", "model_change", "message"]);
}

#[test]
fn a_migration_that_cannot_be_saved_leaves_the_file_untouched_and_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = HEADER.replace(r#""version":3"#, r#""version":2"#);
    let path = write(
        dir.path(),
        "s.jsonl",
        &[v2, entry_line("aaaa", None, "user", "hello")],
    );
    let before = fs::read(&path).unwrap();
    // The temporary file cannot be created where a directory of that name exists.
    fs::create_dir(dir.path().join("s.jsonl.tmp")).unwrap();

    let mut s = SessionManager::open(&path, None).unwrap();
    let text = warnings(&s, dir.path());
    assert!(
        text.contains("is in an older format and could not be upgraded on disk"),
        "{text}"
    );
    assert!(s.append_message(user("more")).is_err());
    assert_eq!(
        s.build_session_context().messages.len(),
        1,
        "still readable"
    );
    assert_eq!(fs::read(&path).unwrap(), before);
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "no backup left behind: {names:?}");
}

#[cfg(unix)]
#[test]
fn an_entry_that_did_not_reach_the_disk_is_not_kept_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            HEADER.to_string(),
            entry_line("aaaa", None, "user", "hello"),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
        ],
    );
    let original = fs::read(&path).unwrap();
    let mut s = SessionManager::open(&path, None).unwrap();
    let before = render_context(&s.build_session_context());
    let entries_before = s.entries().len();

    // Every write to the session file now fails (ENOSPC), even for root.
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let err = s.append_message(user("lost")).unwrap_err();
    eprintln!("append failed as expected: {err}");
    assert_eq!(
        s.entries().len(),
        entries_before,
        "the failed entry is not kept"
    );
    assert_eq!(s.leaf_id().unwrap().as_str(), "bbbb");
    assert_eq!(render_context(&s.build_session_context()), before);

    // Once the disk works again, the next entry hangs off the last one that was written.
    fs::remove_file(&path).unwrap();
    fs::write(&path, &original).unwrap();
    s.append_message(user("kept")).unwrap();
    assert_eq!(s.entries().len(), entries_before + 1);
    let lines = file_lines(&path);
    let last = lines.last().unwrap();
    assert_eq!(last["parentId"], "bbbb", "{last}");
    assert_eq!(last["message"]["content"][0]["text"], "kept");
    assert!(!fs::read_to_string(&path).unwrap().contains("lost"));
    let again = SessionManager::open(&path, None).unwrap();
    assert_eq!(
        render_context(&again.build_session_context()),
        render_context(&s.build_session_context())
    );
}

#[cfg(unix)]
#[test]
fn a_copy_that_cannot_be_written_in_full_leaves_the_old_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "s.jsonl",
        &[
            HEADER.to_string(),
            entry_line("aaaa", None, "user", "hello"),
            entry_line("bbbb", Some("aaaa"), "assistant", "hi"),
        ],
    );
    let s = SessionManager::open(&path, None).unwrap();
    let out = dir.path().join("copy.jsonl");
    fs::write(&out, "previous copy\n").unwrap();
    // The copy is written next to its target first: make that write fail (ENOSPC).
    let tmp = dir.path().join("copy.jsonl.tmp");
    std::os::unix::fs::symlink("/dev/full", &tmp).unwrap();
    let err = s.export_path_jsonl(&out).unwrap_err();
    eprintln!("copy failed as expected: {err}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "previous copy\n");
    assert!(
        fs::symlink_metadata(&tmp).is_err(),
        "the partial copy is removed"
    );

    // With a working disk the copy replaces the old file in one step.
    s.export_path_jsonl(&out).unwrap();
    let copy = SessionManager::open(&out, None).unwrap();
    assert_eq!(
        render_context(&copy.build_session_context()),
        render_context(&s.build_session_context())
    );
}
