//! Session picker scenarios over real session files in temporary stores: `views` replays
//! pi's own captures key by key and covers sorts, scopes, filters, search and narrow or
//! wide text; `flows` covers lazy loading, the loader, rename and delete.

mod flows;
mod views;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::modes::interactive::components::Ui;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::test_support::{plain, theme};
use crate::session::listing;

/// pi's captures were taken a few seconds after the last session was written.
fn capture_time() -> DateTime<Utc> {
    "2026-11-22T03:45:40Z".parse().unwrap()
}

fn fixture(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/corpus")
        .join(scenario)
}

/// A private `~/.pi/agent/sessions` with the current folder's session directory named
/// like the one pi's captures show.
struct Store {
    home: tempfile::TempDir,
}

impl Store {
    fn new() -> Store {
        let store = Store {
            home: tempfile::tempdir().unwrap(),
        };
        fs::create_dir_all(store.current()).unwrap();
        store
    }

    fn home(&self) -> String {
        self.home.path().to_string_lossy().into_owned()
    }

    fn root(&self) -> PathBuf {
        self.home.path().join(".pi/agent/sessions")
    }

    fn current(&self) -> PathBuf {
        self.root().join("--tmp-proj-resume--")
    }

    /// Copies a corpus scenario's sessions into `dir` (under the root), pointing
    /// `parentSession` headers at the copies.
    fn copy(&self, scenario: &str, dir: &str) -> Vec<PathBuf> {
        let to = self.root().join(dir);
        fs::create_dir_all(&to).unwrap();
        let mut out = Vec::new();
        for file in fs::read_dir(fixture(scenario)).unwrap() {
            let file = file.unwrap().path();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".jsonl") || name == "requests.jsonl" {
                continue;
            }
            let text = fs::read_to_string(&file).unwrap();
            let text = text.replace(
                "/home/user/corpus-home-6/.pi/agent/sessions/--tmp-proj-fork--/",
                &format!("{}/", to.display()),
            );
            fs::write(to.join(&name), text).unwrap();
            out.push(to.join(name));
        }
        out.sort();
        out
    }

    fn config(&self) -> LoaderConfig {
        LoaderConfig {
            current_dir: self.current(),
            sessions_root: Some(self.root()),
        }
    }

    /// A picker filled by a real loader, run to the end.
    fn picker(&self, picker: SessionPicker) -> SessionPicker {
        let mut picker = picker.with_now(capture_time());
        let mut loader = Loader::start(self.config());
        while !loader.is_finished() {
            let event = loader.next_timeout(Duration::from_secs(10)).unwrap();
            picker.apply(event);
        }
        picker
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn press(picker: &mut SessionPicker, keys: &[KeyEvent]) -> Vec<PickerOutcome> {
    let bindings = Keybindings::defaults();
    keys.iter()
        .map(|k| picker.handle_key(k, &bindings))
        .collect()
}

fn typed(picker: &mut SessionPicker, text: &str) {
    for c in text.chars() {
        press(picker, &[key(KeyCode::Char(c))]);
    }
}

fn view(picker: &SessionPicker, store: &Store, width: usize) -> String {
    let t = theme();
    let keys = Keybindings::defaults();
    let home = store.home();
    let ui = Ui::new(&t, &keys).with_home(Some(&home));
    plain(&picker.render(width, 40, &ui), width)
}

/// Where the terminal cursor goes (column, row), at 120×40.
fn cursor(picker: &SessionPicker) -> Option<(u16, u16)> {
    let t = theme();
    let keys = Keybindings::defaults();
    picker.render_with_cursor(120, 40, &Ui::new(&t, &keys)).1
}

/// The picker part of a pi capture: from the top through the second rule.
fn pi_capture(name: &str) -> String {
    let text = fs::read_to_string(fixture("resume-listing").join(name)).unwrap();
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let rules: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with('─'))
        .map(|(i, _)| i)
        .collect();
    lines[..=rules[1]].join("\n")
}

/// The picker without its leading blank line (inline snapshots keep no leading blanks).
fn shown(picker: &SessionPicker, store: &Store, width: usize) -> String {
    view(picker, store, width)
        .strip_prefix('\n')
        .unwrap()
        .to_string()
}

/// A small session file: header, one user message and a reply per entry of `turns`
/// (minutes after `start`), an optional name.
struct Spec<'a> {
    id: &'a str,
    cwd: &'a str,
    start: &'a str,
    parent: Option<&'a Path>,
    turns: &'a [(&'a str, &'a str)],
    name: Option<&'a str>,
}

fn write_session(dir: &Path, spec: &Spec<'_>) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let start: DateTime<Utc> = spec.start.parse().unwrap();
    let iso = |t: DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut header = serde_json::json!({
        "type": "session", "version": 3, "id": spec.id,
        "timestamp": iso(start), "cwd": spec.cwd,
    });
    if let Some(parent) = spec.parent {
        header["parentSession"] = parent.to_string_lossy().into_owned().into();
    }
    let mut lines = vec![header.to_string()];
    let mut parent_id = serde_json::Value::Null;
    for (i, (user, reply)) in spec.turns.iter().enumerate() {
        let t = start + chrono::Duration::minutes(i as i64 + 1);
        let ms = t.timestamp_millis();
        let user_id = format!("u{i:07}");
        lines.push(
            serde_json::json!({"type": "message", "id": user_id, "parentId": parent_id,
                "timestamp": iso(t),
                "message": {"role": "user", "content": [{"type": "text", "text": user}], "timestamp": ms}})
            .to_string(),
        );
        let reply_id = format!("a{i:07}");
        lines.push(
            serde_json::json!({"type": "message", "id": reply_id, "parentId": user_id,
                "timestamp": iso(t),
                "message": {"role": "assistant", "content": [{"type": "text", "text": reply}],
                    "api": "openai-completions", "provider": "mock", "model": "mock",
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": ms}})
            .to_string(),
        );
        parent_id = reply_id.into();
    }
    if let Some(name) = spec.name {
        lines.push(
            serde_json::json!({"type": "session_info", "id": "n0000000", "parentId": parent_id,
                "timestamp": iso(start), "name": name})
            .to_string(),
        );
    }
    let path = dir.join(format!("{}.jsonl", spec.id));
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn spec<'a>(id: &'a str, start: &'a str, turns: &'a [(&'a str, &'a str)]) -> Spec<'a> {
    Spec {
        id,
        cwd: "/work/proj",
        start,
        parent: None,
        turns,
        name: None,
    }
}
