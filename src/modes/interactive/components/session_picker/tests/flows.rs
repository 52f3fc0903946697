//! How the picker changes over time and with the app: rows and search text arriving,
//! the loader's order of work, rename and delete round trips.

use pretty_assertions::assert_eq;

use super::*;

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
    assert_eq!(cursor(&picker), Some((20, 5)), "after the name");
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
