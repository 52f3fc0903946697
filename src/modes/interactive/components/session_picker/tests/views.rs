//! What the picker shows: pi's captures, every order, scope and filter, search, scrolling
//! and text that is wide, narrow or hostile.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn rows_order_and_hints_match_pis_captures_key_by_key() {
    let store = Store::new();
    store.copy("resume-listing", "--tmp-proj-resume--");
    let mut picker = store.picker(SessionPicker::new());
    assert_eq!(view(&picker, &store, 120), pi_capture("pi-resume-view.txt"));
    assert_eq!(cursor(&picker), Some((2, 7)), "in the search box, for IMEs");
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
