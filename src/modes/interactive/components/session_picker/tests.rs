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
        vec![PickerOutcome::Selected(store.current().join(
            "2026-11-22T03-45-25-155Z_01a2015b-d4a2-7041-a018-463393c4024d.jsonl"
        ))]
    );
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

#[test]
fn threaded_order_puts_forks_under_their_parent() {
    let store = Store::new();
    store.copy("fork", "--tmp-proj-resume--");
    let dir = store.current();
    let root = write_session(
        &dir,
        &spec(
            "root",
            "2026-11-20T10:00:00Z",
            &[("Plan the parser rewrite", "ok")],
        ),
    );
    let fork = write_session(
        &dir,
        &Spec {
            parent: Some(&root),
            ..spec(
                "fork",
                "2026-11-21T10:00:00Z",
                &[("Try the table-driven parser", "ok")],
            )
        },
    );
    write_session(
        &dir,
        &Spec {
            parent: Some(&fork),
            ..spec(
                "fork-of-fork",
                "2026-11-21T12:00:00Z",
                &[("Benchmark it", "ok")],
            )
        },
    );
    write_session(
        &dir,
        &Spec {
            parent: Some(&root),
            ..spec(
                "second-fork",
                "2026-11-20T11:00:00Z",
                &[("Keep the old parser", "ok")],
            )
        },
    );
    let mut picker = store.picker(SessionPicker::new());
    insta::assert_snapshot!(shown(&picker, &store, 80), @r#"
        ────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Fold ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

        › Prompt 1: read conf.txt                                                 11 now
             └─ Prompt 1: read conf.txt                                            6 now
                └─ Prompt 1: read conf.txt                                         8 now
          Plan the parser rewrite                                                   2 1d
             ├─ Try the table-driven parser                                        2 17h
             │  └─ Benchmark it                                                    2 15h
             └─ Keep the old parser                                                 2 1d

        ────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[ctrl('s')]);
    insta::assert_snapshot!(shown(&picker, &store, 80), @r#"
        ────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder ◉ Current Folder | ○ All  Name: All  Sort: Recent
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

        › Prompt 1: read conf.txt                                                  8 now
          Prompt 1: read conf.txt                                                  6 now
          Prompt 1: read conf.txt                                                 11 now
          Benchmark it                                                             2 15h
          Try the table-driven parser                                              2 17h
          Keep the old parser                                                       2 1d
          Plan the parser rewrite                                                   2 1d

        ────────────────────────────────────────────────────────────────────────────────
        "#);
}

#[test]
fn all_scope_lists_every_folder_with_its_working_directory() {
    let store = Store::new();
    store.copy("resume-listing", "--tmp-proj-resume--");
    store.copy("fork", "--tmp-proj-fork--");
    write_session(
        &store.root().join("--home-u-elsewhere--"),
        &Spec {
            cwd: &format!("{}/elsewhere", store.home()),
            ..spec(
                "elsewhere",
                "2026-11-22T03:40:00Z",
                &[("Something in another project", "ok")],
            )
        },
    );
    let mut picker = store.picker(SessionPicker::new());
    assert_eq!(picker.visible_sessions().count(), 3);
    press(&mut picker, &[key(KeyCode::Tab)]);
    assert_eq!(picker.scope(), Scope::All);
    insta::assert_snapshot!(shown(&picker, &store, 100), @r#"
        ────────────────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (All)                             ○ Current Folder | ◉ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

        › Session gamma: third session prompt                                   /home/user/proj-resume 4 now
          Named beta session                                                    /home/user/proj-resume 2 now
          Session alpha: first session prompt                                   /home/user/proj-resume 2 now
          Prompt 1: read conf.txt                                                /home/user/proj-fork 11 now
             └─ Prompt 1: read conf.txt                                           /home/user/proj-fork 6 now
                └─ Prompt 1: read conf.txt                                        /home/user/proj-fork 8 now
          Something in another project                                                      ~/elsewhere 2 4m

        ────────────────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[key(KeyCode::Tab)]);
    assert_eq!(picker.visible_sessions().count(), 3);
}

#[test]
fn search_matches_fuzzy_tokens_phrases_and_regexes_over_all_message_text() {
    let store = Store::new();
    store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker = store.picker(SessionPicker::new());
    let names = |p: &SessionPicker| {
        p.visible_sessions()
            .map(|s| s.name.clone().unwrap_or_else(|| s.first_message.clone()))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    // Fuzzy tokens match nearly anything in a long text; the best match comes first.
    typed(&mut picker, "beta reply");
    assert!(names(&picker).starts_with("Named beta session |"));
    press(&mut picker, &[ctrl('u')]);
    // Only the assistant's reply says "beta reply".
    typed(&mut picker, r#""beta reply""#);
    assert_eq!(names(&picker), "Named beta session");
    press(&mut picker, &[ctrl('u')]);
    typed(&mut picker, r#""follow-up in the""#);
    assert_eq!(names(&picker), "Session gamma: third session prompt");
    press(&mut picker, &[ctrl('u')]);
    typed(&mut picker, r#""in the follow-up""#);
    assert_eq!(names(&picker), "");
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)        ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        > "in the follow-up"

          No sessions in current folder match the search. Press Tab to search all.

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[ctrl('u')]);
    typed(&mut picker, r"re:(alpha|gamma)\s+reply");
    assert_eq!(
        names(&picker),
        "Session gamma: third session prompt | Session alpha: first session prompt"
    );
    press(&mut picker, &[ctrl('u')]);
    typed(&mut picker, "re:(unclosed");
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)        ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        > re:(unclosed

          Invalid search: regex unclosed group

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[ctrl('u')]);
    // Ids and working directories are searched too.
    typed(&mut picker, "d4a2");
    assert_eq!(names(&picker), "Named beta session");
}

#[test]
fn relevance_ranks_the_best_match_first_and_recent_keeps_time_order() {
    let store = Store::new();
    let dir = store.current();
    write_session(
        &dir,
        &spec("a", "2026-11-22T01:00:00Z", &[("fix the parser", "done")]),
    );
    write_session(
        &dir,
        &spec(
            "b",
            "2026-11-22T02:00:00Z",
            &[("update the docs", "the parser is fine")],
        ),
    );
    write_session(
        &dir,
        &spec(
            "c",
            "2026-11-22T03:00:00Z",
            &[("nothing relevant", "really")],
        ),
    );
    let mut picker = store.picker(SessionPicker::new());
    typed(&mut picker, "parser");
    let order = |p: &SessionPicker| {
        p.visible_sessions()
            .map(|s| s.id.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(order(&picker), "a,b");
    press(&mut picker, &[ctrl('s')]);
    assert_eq!(picker.sort(), SortMode::Recent);
    assert_eq!(order(&picker), "b,a");
}

#[test]
fn rows_appear_before_the_search_text_and_results_refine_as_it_arrives() {
    let store = Store::new();
    let paths = store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker = SessionPicker::new().with_now(capture_time());
    picker.apply(LoadEvent::Progress {
        scope: Scope::Current,
        loaded: 0,
        total: 3,
    });
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)  ○ Current Folder | Loading 0/3  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

          Loading sessions...

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
    let infos: Vec<_> = paths
        .iter()
        .filter_map(|p| listing::session_info(p))
        .collect();
    picker.apply(LoadEvent::Sessions {
        sessions: infos[..2].to_vec(),
        current_folder: true,
    });
    picker.apply(LoadEvent::Progress {
        scope: Scope::Current,
        loaded: 2,
        total: 3,
    });
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)  ○ Current Folder | Loading 2/3  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

        › Named beta session                                                                 2 now
          Session alpha: first session prompt                                                2 now

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
    picker.apply(LoadEvent::Sessions {
        sessions: infos[2..].to_vec(),
        current_folder: true,
    });
    picker.apply(LoadEvent::Listed(Scope::Current));
    // The replies are not loaded yet: only first messages and names are searched.
    typed(&mut picker, "reply");
    assert_eq!(picker.visible_sessions().count(), 0);
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)        ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        > reply                                                         searching message text 0/3

          No sessions in current folder match the search. Press Tab to search all.

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
    let text = |i: usize| SessionText {
        path: paths[i].clone(),
        text: search::normalize(&listing::load_search_text(&paths[i]).unwrap(), usize::MAX),
    };
    picker.apply(LoadEvent::SearchText(vec![text(2)]));
    assert_eq!(
        picker
            .visible_sessions()
            .map(|s| s.first_message.as_str())
            .collect::<Vec<_>>(),
        ["Session gamma: third session prompt"]
    );
    picker.apply(LoadEvent::SearchText(vec![text(0), text(1)]));
    picker.apply(LoadEvent::Finished);
    assert_eq!(picker.visible_sessions().count(), 3);
    assert_eq!(picker.search_text_count(), 3);
    insta::assert_snapshot!(shown(&picker, &store, 90), @r#"
        ──────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)        ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        > reply

          Named beta session                                                                 2 now
        › Session gamma: third session prompt                                                4 now
          Session alpha: first session prompt                                                2 now

        ──────────────────────────────────────────────────────────────────────────────────────────
        "#);
}

#[test]
fn the_loader_sends_this_folder_first_then_other_folders_then_search_text() {
    let store = Store::new();
    store.copy("resume-listing", "--tmp-proj-resume--");
    store.copy("fork", "--tmp-proj-fork--");
    fs::write(store.current().join("notes.jsonl"), "not a session\n").unwrap();
    let mut loader = Loader::start(store.config());
    let mut log = Vec::new();
    while !loader.is_finished() {
        let event = loader.next_timeout(Duration::from_secs(10)).unwrap();
        log.push(match event {
            LoadEvent::Sessions {
                sessions,
                current_folder,
            } => format!(
                "{} sessions ({})",
                sessions.len(),
                if current_folder {
                    "this folder"
                } else {
                    "other folders"
                }
            ),
            LoadEvent::Progress {
                scope,
                loaded,
                total,
            } => format!("{scope:?} {loaded}/{total}"),
            LoadEvent::Listed(scope) => format!("{scope:?} listed"),
            LoadEvent::SearchText(texts) => format!("text of {} sessions", texts.len()),
            LoadEvent::Failed { scope, message } => format!("{scope:?} failed: {message}"),
            LoadEvent::Finished => "finished".into(),
        });
    }
    insta::assert_snapshot!(log.join("\n"), @r"
        Current 0/4
        3 sessions (this folder)
        Current 4/4
        Current listed
        All 4/7
        3 sessions (other folders)
        All 7/7
        All listed
        text of 3 sessions
        text of 3 sessions
        finished
        ");
}

#[test]
fn the_selection_stays_on_its_session_while_rows_arrive() {
    let store = Store::new();
    let dir = store.current();
    let old = write_session(
        &dir,
        &spec("old", "2026-11-01T00:00:00Z", &[("old one", "x")]),
    );
    let mid = write_session(
        &dir,
        &spec("mid", "2026-11-10T00:00:00Z", &[("middle one", "x")]),
    );
    let new = write_session(
        &dir,
        &spec("new", "2026-11-20T00:00:00Z", &[("new one", "x")]),
    );
    let info = |p: &PathBuf| listing::session_info(p).unwrap();
    let mut picker = SessionPicker::new().with_now(capture_time());
    picker.add_sessions(vec![info(&old), info(&mid)], true);
    press(&mut picker, &[key(KeyCode::Down)]);
    assert_eq!(picker.selected_session().unwrap().id.as_str(), "old");
    picker.add_sessions(vec![info(&new)], true);
    picker.apply(LoadEvent::Finished);
    assert_eq!(picker.selected_session().unwrap().id.as_str(), "old");
    insta::assert_snapshot!(shown(&picker, &store, 60), @r#"
        ────────────────────────────────────────────────────────────

        Resume S ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (o…

        >

          new one                                               2 2d
          middle one                                            2 1w
        › old one                                               2 3w

        ────────────────────────────────────────────────────────────
        "#);
}

#[test]
fn many_sessions_scroll_with_a_position_line_and_fit_the_height() {
    let store = Store::new();
    let mut infos = Vec::new();
    for i in 0..25 {
        let id = format!("s{i:02}");
        let start = format!("2026-11-{:02}T00:00:00Z", i + 1);
        let prompt = format!("prompt number {i}");
        let path = write_session(&store.current(), &spec(&id, &start, &[(&prompt, "x")]));
        infos.push(listing::session_info(&path).unwrap());
    }
    let mut picker = SessionPicker::new().with_now(capture_time());
    picker.add_sessions(infos, true);
    picker.apply(LoadEvent::Finished);
    press(&mut picker, &[key(KeyCode::PageDown), key(KeyCode::Down)]);
    insta::assert_snapshot!(shown(&picker, &store, 50), @r#"
        ──────────────────────────────────────────────────

        ◉ Current Folder | ○ All  Name: All  Sort: Threade
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl…

        >

          prompt number 18                            2 3d
          prompt number 17                            2 4d
          prompt number 16                            2 5d
          prompt number 15                            2 6d
          prompt number 14                            2 1w
        › prompt number 13                            2 1w
          prompt number 12                            2 1w
          prompt number 11                            2 1w
          prompt number 10                            2 1w
          prompt number 9                             2 1w
          (12/25)

        ──────────────────────────────────────────────────
        "#);
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys);
    assert_eq!(picker.render(50, 16, &ui).len(), 16);
    assert_eq!(picker.render(50, 3, &ui).len(), 13);
    press(
        &mut picker,
        &[key(KeyCode::PageDown), key(KeyCode::PageDown)],
    );
    assert_eq!(picker.selected_session().unwrap().id.as_str(), "s00");
    press(
        &mut picker,
        &[
            key(KeyCode::PageUp),
            key(KeyCode::PageUp),
            key(KeyCode::PageUp),
        ],
    );
    assert_eq!(picker.selected_session().unwrap().id.as_str(), "s24");
}

#[test]
fn named_only_filter_and_empty_scopes_say_what_to_do() {
    let store = Store::new();
    let mut picker = store.picker(SessionPicker::new());
    insta::assert_snapshot!(shown(&picker, &store, 100), @r#"
        ────────────────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)                  ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

          No sessions in current folder. Press Tab to view all.

        ────────────────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[ctrl('n')]);
    insta::assert_snapshot!(shown(&picker, &store, 100), @r#"
        ────────────────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (Current Folder)                ◉ Current Folder | ○ All  Name: Named  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

          No named sessions in current folder. Press ctrl+n to show all, or Tab to view all.

        ────────────────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[key(KeyCode::Tab)]);
    insta::assert_snapshot!(shown(&picker, &store, 100), @r#"
        ────────────────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (All)                           ○ Current Folder | ◉ All  Name: Named  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

          No named sessions found. Press ctrl+n to show all.

        ────────────────────────────────────────────────────────────────────────────────────────────────────
        "#);
    press(&mut picker, &[ctrl('n')]);
    insta::assert_snapshot!(shown(&picker, &store, 100), @r#"
        ────────────────────────────────────────────────────────────────────────────────────────────────────

        Resume Session (All)                             ○ Current Folder | ◉ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off)

        >

          No sessions found

        ────────────────────────────────────────────────────────────────────────────────────────────────────
        "#);
}

#[test]
fn rename_asks_for_the_name_inside_the_picker_and_only_in_resume() {
    let store = Store::new();
    let paths = store.copy("resume-listing", "--tmp-proj-resume--");
    let mut cli_picker = store.picker(SessionPicker::new());
    assert_eq!(
        press(&mut cli_picker, &[ctrl('r')]),
        [PickerOutcome::Ignored]
    );

    let mut picker = store.picker(SessionPicker::new().with_rename(true));
    press(&mut picker, &[key(KeyCode::Down), ctrl('r')]);
    insta::assert_snapshot!(shown(&picker, &store, 60), @r"
        ────────────────────────────────────────────────────────────

         Rename Session

        > Named beta session

         enter to save · escape/ctrl+c to cancel

        ────────────────────────────────────────────────────────────
        ");
    press(&mut picker, &[ctrl('u')]);
    assert_eq!(
        press(&mut picker, &[key(KeyCode::Enter)]),
        [PickerOutcome::Ignored]
    );
    typed(&mut picker, "  Beta, renamed  ");
    let outcome = press(&mut picker, &[key(KeyCode::Enter)]);
    let [PickerOutcome::Rename { path, name }] = outcome.as_slice() else {
        panic!("expected a rename, got {outcome:?}");
    };
    assert_eq!((path, name.as_str()), (&paths[1], "Beta, renamed"));
    rename_session_file(path, name).unwrap();
    picker.renamed(path, Ok(name.clone()));
    assert_eq!(
        listing::session_info(path).unwrap().name.as_deref(),
        Some("Beta, renamed")
    );
    insta::assert_snapshot!(shown(&picker, &store, 60), @r#"
        ────────────────────────────────────────────────────────────

        Resume S ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (o…

        >

          Session gamma: third session prompt                  4 now
        › Beta, renamed                                        2 now
          Session alpha: first session prompt                  2 now

        ────────────────────────────────────────────────────────────
        "#);
    typed(&mut picker, r#""renamed""#);
    assert_eq!(picker.visible_sessions().count(), 1);

    press(&mut picker, &[ctrl('r'), key(KeyCode::Esc)]);
    assert_eq!(picker.query(), r#""renamed""#);
    picker.renamed(path, Err("disk full".into()));
    insta::assert_snapshot!(shown(&picker, &store, 60).lines().nth(3).unwrap(), @"Failed to rename: disk full");
}

#[test]
fn delete_asks_for_confirmation_and_the_row_goes_once_the_app_deleted_it() {
    let store = Store::new();
    let paths = store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker = store.picker(SessionPicker::new());
    press(&mut picker, &[key(KeyCode::Down), ctrl('d')]);
    insta::assert_snapshot!(shown(&picker, &store, 70), @r"
        ──────────────────────────────────────────────────────────────────────

        Resume Session (Cu ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        Delete session? enter confirm · escape/ctrl+c cancel


        >

          Session gamma: third session prompt                            4 now
        › Named beta session                                             2 now
          Session alpha: first session prompt                            2 now

        ──────────────────────────────────────────────────────────────────────
        ");
    // Only Enter or Escape answer.
    assert_eq!(
        press(&mut picker, &[key(KeyCode::Char('x'))]),
        [PickerOutcome::Ignored]
    );
    press(&mut picker, &[key(KeyCode::Esc)]);
    assert_eq!(picker.query(), "");
    let outcome = press(&mut picker, &[ctrl('d'), key(KeyCode::Enter)]);
    assert_eq!(
        outcome[1],
        PickerOutcome::Delete {
            path: paths[1].clone()
        }
    );
    let method = delete_with_trash_command(&paths[1], "pi-test-no-such-trash-command").unwrap();
    assert_eq!(method, DeleteMethod::Removed);
    assert!(!paths[1].exists());
    picker.deleted(&paths[1], Ok(method));
    insta::assert_snapshot!(shown(&picker, &store, 70), @r"
        ──────────────────────────────────────────────────────────────────────

        Resume Session (Cu ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        Session deleted


        >

          Session gamma: third session prompt                            4 now
        › Session alpha: first session prompt                            2 now

        ──────────────────────────────────────────────────────────────────────
        ");
    // The message goes after two seconds.
    picker.set_now(capture_time() + chrono::Duration::seconds(3));
    assert!(!shown(&picker, &store, 70).contains("Session deleted"));
    // A late loader batch does not bring the deleted session back.
    picker.add_sessions(vec![listing::session_info(&paths[0]).unwrap()], true);
    assert_eq!(picker.visible_sessions().count(), 2);
}

#[test]
fn the_trash_command_is_preferred_when_it_works() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("fake-trash");
    let bin_dir = dir.path().join("trashed");
    fs::create_dir_all(&bin_dir).unwrap();
    fs::write(
        &bin,
        format!(
            "#!/bin/sh\n[ \"$1\" = -- ] && shift\nmv \"$1\" {}/\n",
            bin_dir.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let session = dir.path().join("s.jsonl");
    fs::write(&session, "{}\n").unwrap();
    let bin = bin.to_string_lossy();
    assert_eq!(
        delete_with_trash_command(&session, &bin),
        Ok(DeleteMethod::Trash)
    );
    assert!(bin_dir.join("s.jsonl").exists());
    // A trash command that fails falls back to removing the file.
    let failing = dir.path().join("s2.jsonl");
    fs::write(&failing, "{}\n").unwrap();
    assert_eq!(
        delete_with_trash_command(&failing, "false"),
        Ok(DeleteMethod::Removed)
    );
    assert!(!failing.exists());
    // Removing fails too: the error says why, including what trash said.
    let not_a_file = dir.path().join("dir.jsonl");
    fs::create_dir(&not_a_file).unwrap();
    let err = delete_with_trash_command(&not_a_file, "false").unwrap_err();
    assert!(err.contains("(trash: exited with"), "{err}");
}

#[test]
fn the_open_session_cannot_be_deleted_and_ctrl_backspace_only_deletes_with_an_empty_search() {
    let store = Store::new();
    let paths = store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker =
        store.picker(SessionPicker::new().with_current_session(Some(paths[2].clone())));
    press(&mut picker, &[ctrl('d')]);
    insta::assert_snapshot!(shown(&picker, &store, 70), @r"
        ──────────────────────────────────────────────────────────────────────

        Resume Session (Cu ◉ Current Folder | ○ All  Name: All  Sort: Threaded
        Cannot delete the currently active session


        >

        › Session gamma: third session prompt                            4 now
          Named beta session                                             2 now
          Session alpha: first session prompt                            2 now

        ──────────────────────────────────────────────────────────────────────
        ");
    let ctrl_backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::CONTROL);
    typed(&mut picker, "ab");
    press(&mut picker, &[ctrl_backspace]);
    assert_eq!(picker.query(), "a");
    press(
        &mut picker,
        &[key(KeyCode::Backspace), key(KeyCode::Down), ctrl_backspace],
    );
    assert!(shown(&picker, &store, 70).contains("Delete session?"));
}

#[test]
fn no_line_is_wider_than_the_screen_whatever_the_width_or_text() {
    let store = Store::new();
    let dir = store.current();
    write_session(
        &dir,
        &Spec {
            name: Some("名前付きセッション 🇯🇵🇯🇵🇯🇵"),
            ..spec(
                "wide",
                "2026-11-22T01:00:00Z",
                &[("中文提示词，很长很长很长的第一条消息", "好")],
            )
        },
    );
    write_session(
        &dir,
        &spec(
            "control",
            "2026-11-22T02:00:00Z",
            &[(
                "tab\there\u{1b}[31m red\u{7} and 👨\u{200d}👩\u{200d}👧 family",
                "x",
            )],
        ),
    );
    let mut picker = store.picker(SessionPicker::new().with_rename(true));
    insta::assert_snapshot!(shown(&picker, &store, 48), @r#"
        ────────────────────────────────────────────────

        ◉ Current Folder | ○ All  Name: All  Sort: Threa
        tab scope · re:<pattern> regex · "phrase" exact
        ctrl+s sort · ctrl+n named · ctrl+d delete · ct…

        >

        › tab here red  and 👨‍👩‍👧 family               2 1h
          名前付きセッション 🇯🇵🇯🇵🇯🇵                 2 2h

        ────────────────────────────────────────────────
        "#);
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys);
    let states: [&[KeyEvent]; 6] = [
        &[],
        &[ctrl('p')],
        &[key(KeyCode::Tab)],
        &[ctrl('d')],
        &[key(KeyCode::Esc), ctrl('r')],
        &[key(KeyCode::Esc), key(KeyCode::Char('中'))],
    ];
    for keys_pressed in states {
        press(&mut picker, keys_pressed);
        for width in 1..=130 {
            plain(&picker.render(width, 30, &ui), width);
        }
    }
}

#[test]
fn ages_read_like_pis() {
    let now = capture_time();
    let ago = |secs: i64| format_age(now, now - chrono::Duration::seconds(secs));
    assert_eq!(
        [
            ago(-30),
            ago(59),
            ago(60),
            ago(3599),
            ago(3600),
            ago(86_399),
            ago(86_400),
            ago(7 * 86_400),
            ago(30 * 86_400),
            ago(400 * 86_400)
        ],
        [
            "now", "now", "1m", "59m", "1h", "23h", "1d", "1w", "1mo", "1y"
        ]
    );
}
