//! Session picker scenarios: pi's own captures replayed key by key, every sort, scope and
//! filter, search syntax, lazy loading, rename and delete, narrow and wide text.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pretty_assertions::assert_eq;

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

#[test]
fn rows_order_and_hints_match_pis_captures_key_by_key() {
    let store = Store::new();
    store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker = store.picker(SessionPicker::new());
    assert_eq!(view(&picker, &store, 120), pi_capture("pi-resume-view.txt"));
    press(&mut picker, &[ctrl('s')]);
    assert_eq!(
        view(&picker, &store, 120),
        pi_capture("pi-resume-view-sort-toggled.txt")
    );
    press(&mut picker, &[ctrl('s'), ctrl('n')]);
    assert_eq!(
        view(&picker, &store, 120),
        pi_capture("pi-resume-view-named-only.txt")
    );
    press(&mut picker, &[ctrl('n'), ctrl('p')]);
    assert_eq!(
        view(&picker, &store, 120),
        pi_capture("pi-resume-view-paths.txt")
    );
    press(&mut picker, &[ctrl('p'), key(KeyCode::Down)]);
    let outcome = press(&mut picker, &[key(KeyCode::Enter)]);
    assert_eq!(
        outcome,
        vec![PickerOutcome::Selected(
            store
                .current()
                .join("2026-11-22T03-45-25-155Z_01a2015b-d4a2-7041-a018-463393c4024d.jsonl")
        )]
    );
}
