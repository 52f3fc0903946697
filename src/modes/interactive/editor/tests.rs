use super::*;
use crate::modes::interactive::autocomplete::{CombinedProvider, CommandSpec, ProjectFile};
use crate::modes::interactive::test_support::{plain, theme};
use crate::modes::interactive::text::line_width;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn editor() -> Editor {
    Editor::new(Arc::new(Keybindings::defaults()))
}

fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn press(e: &mut Editor, code: KeyCode) -> EditorAction {
    e.handle_key(&key(code, KeyModifiers::NONE))
}

fn ctrl(e: &mut Editor, c: char) -> EditorAction {
    e.handle_key(&key(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn alt(e: &mut Editor, c: char) -> EditorAction {
    e.handle_key(&key(KeyCode::Char(c), KeyModifiers::ALT))
}

fn typ(e: &mut Editor, text: &str) {
    for c in text.chars() {
        if c == '\n' {
            e.handle_key(&key(KeyCode::Enter, KeyModifiers::SHIFT));
        } else {
            e.handle_key(&key(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }
}

/// The editor as text, with `▏` where the cursor is.
fn view(e: &mut Editor, width: usize) -> String {
    let out = e.render(width, &theme());
    let mut rows: Vec<String> = plain(&out.lines, width)
        .split('\n')
        .map(str::to_string)
        .collect();
    if let Some((x, y)) = out.cursor {
        let row = &mut rows[y as usize];
        let mut col = 0;
        let mut byte = row.len();
        for (i, g) in
            unicode_segmentation::UnicodeSegmentation::grapheme_indices(row.as_str(), true)
        {
            if col >= x as usize {
                byte = i;
                break;
            }
            col += crate::modes::interactive::text::str_width(g);
        }
        while col < x as usize {
            row.push(' ');
            col += 1;
            byte = row.len();
        }
        row.insert(byte, '▏');
    }
    rows.join("\n")
}

#[test]
fn typing_and_moving_by_grapheme() {
    let mut e = editor();
    typ(&mut e, "a👨‍👩‍👧b中");
    press(&mut e, KeyCode::Left);
    press(&mut e, KeyCode::Left);
    press(&mut e, KeyCode::Left);
    assert_eq!(e.cursor(), (0, 1));
    press(&mut e, KeyCode::Backspace);
    assert_eq!(e.text(), "👨‍👩‍👧b中");
    press(&mut e, KeyCode::Delete);
    assert_eq!(e.text(), "b中");
    insta::assert_snapshot!(view(&mut e, 12), @r"
    ────────────
    ▏b中
    ────────────
    ");
}

#[test]
fn long_text_wraps_and_scrolls_with_indicators() {
    let mut e = editor();
    e.set_max_rows(3);
    typ(
        &mut e,
        "one two three four five six seven eight nine ten eleven twelve",
    );
    insta::assert_snapshot!(view(&mut e, 16), @r"
    ─── ↑ 2 more ───
    seven eight
    nine ten
    eleven twelve▏
    ────────────────
    ");
    e.handle_key(&key(KeyCode::Home, KeyModifiers::NONE));
    for _ in 0..3 {
        press(&mut e, KeyCode::Up);
    }
    insta::assert_snapshot!(view(&mut e, 16), @r"
    ────────────────
    ▏one two three
    four five six
    seven eight
    ─── ↓ 2 more ───
    ");
}

#[test]
fn history_steps_back_and_forward_skipping_repeats() {
    let mut e = editor();
    for prompt in ["first", "second", "second", "  third  "] {
        e.add_to_history(prompt);
    }
    press(&mut e, KeyCode::Up);
    assert_eq!(e.text(), "third");
    press(&mut e, KeyCode::Up);
    assert_eq!(e.text(), "second");
    press(&mut e, KeyCode::Up);
    assert_eq!(e.text(), "first");
    press(&mut e, KeyCode::Up);
    assert_eq!(e.text(), "first");
    press(&mut e, KeyCode::Down);
    press(&mut e, KeyCode::Down);
    assert_eq!(e.text(), "third");
    press(&mut e, KeyCode::Down);
    assert_eq!(e.text(), "");
    for i in 0..150 {
        e.add_to_history(&format!("p{i}"));
    }
    assert_eq!(e.history.len(), memory::MAX_HISTORY);
}

#[test]
fn up_on_a_non_empty_editor_moves_the_cursor_not_the_history() {
    let mut e = editor();
    e.add_to_history("old");
    typ(&mut e, "line one\nline two");
    press(&mut e, KeyCode::Up);
    assert_eq!(
        (e.text().as_str(), e.cursor()),
        ("line one\nline two", (0, 8))
    );
    press(&mut e, KeyCode::Up);
    assert_eq!(e.cursor(), (0, 0));
}

#[test]
fn vertical_moves_keep_a_sticky_column() {
    let mut e = editor();
    typ(&mut e, "long line here\nab\nanother long line");
    e.handle_key(&key(KeyCode::Up, KeyModifiers::NONE));
    e.handle_key(&key(KeyCode::Up, KeyModifiers::NONE));
    assert_eq!(e.cursor(), (0, 14));
    e.set_text("long line here\nab\nanother long line");
    e.cursor_line = 0;
    e.cursor_col = 10;
    press(&mut e, KeyCode::Down);
    assert_eq!(e.cursor(), (1, 2));
    press(&mut e, KeyCode::Down);
    assert_eq!(e.cursor(), (2, 10));
}

#[test]
fn undo_reverts_a_word_at_a_time() {
    let mut e = editor();
    typ(&mut e, "hello big world");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "hello big");
    ctrl(&mut e, '7');
    assert_eq!(e.text(), "hello");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "");
}

#[test]
fn kill_ring_accumulates_kills_and_cycles_with_yank_pop() {
    let mut e = editor();
    typ(&mut e, "alpha beta gamma");
    ctrl(&mut e, 'w');
    ctrl(&mut e, 'w');
    assert_eq!(e.text(), "alpha ");
    ctrl(&mut e, 'y');
    assert_eq!(e.text(), "alpha beta gamma");
    e.handle_key(&key(KeyCode::Home, KeyModifiers::NONE));
    ctrl(&mut e, 'k');
    assert_eq!(e.text(), "");
    ctrl(&mut e, 'y');
    assert_eq!(e.text(), "alpha beta gamma");
    alt(&mut e, 'y');
    assert_eq!(e.text(), "beta gamma");
    alt(&mut e, 'y');
    assert_eq!(e.text(), "alpha beta gamma");
}

#[test]
fn line_kills_and_word_motions() {
    let mut e = editor();
    typ(&mut e, "foo.bar(baz) qux");
    alt(&mut e, 'b');
    assert_eq!(e.cursor(), (0, 13));
    alt(&mut e, 'b');
    assert_eq!(e.cursor(), (0, 11));
    e.handle_key(&key(KeyCode::Left, KeyModifiers::CONTROL));
    assert_eq!(e.cursor(), (0, 8));
    alt(&mut e, 'f');
    assert_eq!(e.cursor(), (0, 11));
    ctrl(&mut e, 'u');
    assert_eq!(e.text(), ") qux");
    alt(&mut e, 'd');
    assert_eq!(e.text(), " qux");
    ctrl(&mut e, 'e');
    assert_eq!(e.cursor(), (0, 4));
    ctrl(&mut e, 'a');
    assert_eq!(e.cursor(), (0, 0));
}

#[test]
fn large_pastes_become_atomic_markers_expanded_on_submit() {
    let mut e = editor();
    typ(&mut e, "see ");
    let big: String = (1..=12).map(|i| format!("line {i}\r\n")).collect();
    e.handle_paste(&big);
    typ(&mut e, " end");
    assert_eq!(e.text(), "see [paste #1 +13 lines] end");
    insta::assert_snapshot!(view(&mut e, 20), @r"
    ────────────────────
    see
    [paste #1 +13
    lines] end▏
    ────────────────────
    ");
    for _ in 0..4 {
        press(&mut e, KeyCode::Left);
    }
    press(&mut e, KeyCode::Left);
    assert_eq!(e.cursor(), (0, 4), "the marker is skipped in one step");
    press(&mut e, KeyCode::Right);
    press(&mut e, KeyCode::Backspace);
    assert_eq!(e.text(), "see  end");
    ctrl(&mut e, '-');
    let chars = "x".repeat(1200);
    e.handle_paste(&chars);
    assert_eq!(
        e.text(),
        "see [paste #1 +13 lines][paste #2 1200 chars] end"
    );
    let sent = press(&mut e, KeyCode::Enter);
    let expected = format!("see {}{chars} end", big.replace("\r\n", "\n"));
    assert_eq!(sent, EditorAction::Submit(expected.trim().to_string()));
    assert!(e.is_empty());
}

#[test]
fn small_pastes_are_normalised_inline() {
    let mut e = editor();
    e.handle_paste("a\tb\r\nc\u{7}d");
    assert_eq!(e.text(), "a    b\ncd");
    e.set_text("");
    typ(&mut e, "open");
    e.handle_paste("/tmp/x.png");
    assert_eq!(e.text(), "open /tmp/x.png");
    ctrl(&mut e, '-');
    assert_eq!(e.text(), "open");
}

#[test]
fn newlines_and_submission() {
    let mut e = editor();
    typ(&mut e, "one");
    e.handle_key(&key(KeyCode::Enter, KeyModifiers::SHIFT));
    typ(&mut e, "two\\");
    press(&mut e, KeyCode::Enter);
    ctrl(&mut e, 'j');
    typ(&mut e, "three  ");
    assert_eq!(e.text(), "one\ntwo\n\nthree  ");
    assert_eq!(
        press(&mut e, KeyCode::Enter),
        EditorAction::Submit("one\ntwo\n\nthree".into())
    );
    typ(&mut e, "   ");
    assert_eq!(press(&mut e, KeyCode::Enter), EditorAction::Handled);
    assert!(e.is_empty());
}

#[test]
fn app_keys_are_left_to_the_app() {
    let mut e = editor();
    typ(&mut e, "x");
    assert_eq!(press(&mut e, KeyCode::Esc), EditorAction::Ignored);
    assert_eq!(ctrl(&mut e, 'c'), EditorAction::Ignored);
    assert_eq!(ctrl(&mut e, 'o'), EditorAction::Ignored);
    assert_eq!(
        e.handle_key(&key(KeyCode::Enter, KeyModifiers::ALT)),
        EditorAction::Ignored
    );
    assert_eq!(e.text(), "x");
}

#[test]
fn jump_to_character() {
    let mut e = editor();
    typ(&mut e, "abc abc\nxbz");
    ctrl(&mut e, 'a');
    e.cursor_line = 0;
    ctrl(&mut e, '5');
    typ(&mut e, "b");
    assert_eq!(e.cursor(), (0, 1));
    ctrl(&mut e, ']');
    typ(&mut e, "b");
    assert_eq!(e.cursor(), (0, 5));
    ctrl(&mut e, ']');
    typ(&mut e, "z");
    assert_eq!(e.cursor(), (1, 2));
    e.handle_key(&key(
        KeyCode::Char('5'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ));
    typ(&mut e, "a");
    assert_eq!(e.cursor(), (0, 4));
}

#[test]
fn bash_mode_sets_the_border() {
    let mut e = editor();
    assert_eq!(e.bash_mode(), None);
    typ(&mut e, "!!ls");
    assert_eq!(e.bash_mode(), Some(BashMode::BashExcludedFromContext));
    e.set_text(" !ls");
    assert_eq!(e.bash_mode(), Some(BashMode::Bash));
    let t = theme();
    assert_eq!(
        border_style(&t, ThinkingLevel::High, e.bash_mode()),
        t.fg(ThemeToken::BashMode)
    );
    assert_eq!(
        border_style(&t, ThinkingLevel::High, None),
        t.fg(ThemeToken::ThinkingHigh)
    );
}

fn with_completion() -> Editor {
    let mut e = editor();
    let files = Arc::new(vec![
        ProjectFile {
            path: "src".into(),
            is_dir: true,
        },
        ProjectFile {
            path: "src/main.rs".into(),
            is_dir: false,
        },
        ProjectFile {
            path: "README.md".into(),
            is_dir: false,
        },
    ]);
    let provider = CombinedProvider::new(
        vec![
            CommandSpec::new("model", "Select a model"),
            CommandSpec::new("compact", "Compact the conversation"),
            CommandSpec::new("quit", "Quit"),
        ],
        std::path::PathBuf::from("/nonexistent"),
        None,
    )
    .with_files(files);
    e.set_autocomplete_provider(Arc::new(provider));
    e
}

#[test]
fn slash_command_popup_completes_and_submits() {
    let mut e = with_completion();
    typ(&mut e, "/co");
    assert!(e.is_showing_autocomplete());
    insta::assert_snapshot!(view(&mut e, 50), @r"
    ──────────────────────────────────────────────────
    /co
    ──────────────────────────────────────────────────
    → compact     Compact the conversation
    ");
    press(&mut e, KeyCode::Tab);
    assert_eq!(e.text(), "/compact ");
    assert!(!e.is_showing_autocomplete());
    e.set_text("");
    typ(&mut e, "/qu");
    assert_eq!(
        press(&mut e, KeyCode::Enter),
        EditorAction::Submit("/quit".into())
    );
}

#[test]
fn at_popup_lists_files_and_escape_closes_it() {
    let mut e = with_completion();
    typ(&mut e, "read @ma");
    insta::assert_snapshot!(view(&mut e, 50), @r"
    ──────────────────────────────────────────────────
    read @ma
    ──────────────────────────────────────────────────
    → main.rs                         src/main.rs
    ");
    assert_eq!(press(&mut e, KeyCode::Esc), EditorAction::Handled);
    assert!(!e.is_showing_autocomplete());
    typ(&mut e, "i");
    assert!(e.is_showing_autocomplete());
    press(&mut e, KeyCode::Enter);
    assert_eq!(e.text(), "read @src/main.rs ");
}

#[test]
fn tab_with_a_single_path_match_completes_directly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    let mut e = editor();
    e.set_autocomplete_provider(Arc::new(CombinedProvider::new(
        vec![],
        dir.path().to_path_buf(),
        None,
    )));
    typ(&mut e, "cat do");
    press(&mut e, KeyCode::Tab);
    assert_eq!(e.text(), "cat docs/");
    assert!(!e.is_showing_autocomplete());
}

#[test]
fn narrow_editor_with_wide_text_and_padding() {
    let mut e = editor();
    e.set_padding_x(1);
    typ(&mut e, "日本語のテキストと🇯🇵");
    insta::assert_snapshot!(view(&mut e, 8), @r"
    ────────
     日本語
     のテキ
     ストと
     🇯🇵▏
    ────────
    ");
}

#[derive(Debug, Clone)]
enum Op {
    Type(String),
    Key(KeyCode, KeyModifiers),
    Paste(String),
}

fn op() -> impl Strategy<Value = Op> {
    let keys = prop_oneof![
        Just((KeyCode::Left, KeyModifiers::NONE)),
        Just((KeyCode::Right, KeyModifiers::NONE)),
        Just((KeyCode::Up, KeyModifiers::NONE)),
        Just((KeyCode::Down, KeyModifiers::NONE)),
        Just((KeyCode::Backspace, KeyModifiers::NONE)),
        Just((KeyCode::Delete, KeyModifiers::NONE)),
        Just((KeyCode::Enter, KeyModifiers::SHIFT)),
        Just((KeyCode::Char('w'), KeyModifiers::CONTROL)),
        Just((KeyCode::Char('k'), KeyModifiers::CONTROL)),
        Just((KeyCode::Char('y'), KeyModifiers::CONTROL)),
        Just((KeyCode::Char('y'), KeyModifiers::ALT)),
        Just((KeyCode::Char('-'), KeyModifiers::CONTROL)),
        Just((KeyCode::Char('b'), KeyModifiers::ALT)),
        Just((KeyCode::PageUp, KeyModifiers::NONE)),
    ];
    prop_oneof![
        "[a-z 中🇺👍\u{301}]{1,6}".prop_map(Op::Type),
        keys.prop_map(|(c, m)| Op::Key(c, m)),
        prop::collection::vec("[a-z ]{0,30}", 1..15).prop_map(|v| Op::Paste(v.join("\n"))),
    ]
}

proptest! {
    #[test]
    fn editing_never_breaks_the_cursor_or_the_width(ops in prop::collection::vec(op(), 0..40), width in 1usize..40) {
        let mut e = editor();
        e.set_max_rows(4);
        for op in ops {
            match op {
                Op::Type(s) => {
                    for c in s.chars() {
                        e.handle_key(&key(KeyCode::Char(c), KeyModifiers::NONE));
                    }
                }
                Op::Key(c, m) => {
                    e.handle_key(&key(c, m));
                }
                Op::Paste(s) => e.handle_paste(&s),
            }
            prop_assert!(e.cursor_line < e.lines.len());
            prop_assert!(e.lines[e.cursor_line].is_char_boundary(e.cursor_col));
            let out = e.render(width, &theme());
            for line in &out.lines {
                prop_assert!(line_width(line) <= width, "{:?}", e.lines);
            }
        }
    }
}
