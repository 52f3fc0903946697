use super::*;
use pretty_assertions::assert_eq;

fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c), KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    key(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn spec(s: &str) -> KeySpec {
    s.parse().unwrap()
}

#[test]
fn default_bindings_match_pi() {
    let kb = Keybindings::defaults();
    let table: Vec<String> = Action::ALL
        .iter()
        .filter(|a| {
            a.id().starts_with("tui.editor")
                || a.id().starts_with("app.")
                    && !a.id().starts_with("app.tree")
                    && !a.id().starts_with("app.models")
        })
        .map(|a| {
            format!("{:<32} {}", a.id(), kb.key_text(*a))
                .trim_end()
                .to_string()
        })
        .collect();
    insta::assert_snapshot!(table.join("\n"), @r"
        tui.editor.cursorUp              up
        tui.editor.cursorDown            down
        tui.editor.historyPrevious
        tui.editor.historyNext
        tui.editor.cursorLeft            left/ctrl+b
        tui.editor.cursorRight           right/ctrl+f
        tui.editor.cursorWordLeft        alt+left/ctrl+left/alt+b
        tui.editor.cursorWordRight       alt+right/ctrl+right/alt+f
        tui.editor.cursorLineStart       home/ctrl+a
        tui.editor.cursorLineEnd         end/ctrl+e
        tui.editor.jumpForward           ctrl+]
        tui.editor.jumpBackward          ctrl+alt+]
        tui.editor.pageUp                pageUp/ctrl+pageUp
        tui.editor.pageDown              pageDown/ctrl+pageDown
        tui.editor.deleteCharBackward    backspace
        tui.editor.deleteCharForward     delete/ctrl+d
        tui.editor.deleteWordBackward    ctrl+w/alt+backspace
        tui.editor.deleteWordForward     alt+d/alt+delete
        tui.editor.deleteToLineStart     ctrl+u
        tui.editor.deleteToLineEnd       ctrl+k
        tui.editor.yank                  ctrl+y
        tui.editor.yankPop               alt+y
        tui.editor.undo                  ctrl+-
        app.interrupt                    escape
        app.clear                        ctrl+c
        app.exit                         ctrl+d
        app.suspend                      ctrl+z
        app.thinking.cycle               shift+tab
        app.thinking.save                ctrl+s
        app.model.cycleForward           ctrl+p
        app.model.cycleBackward          shift+ctrl+p
        app.model.select                 ctrl+l
        app.tools.expand                 ctrl+o
        app.thinking.toggle              ctrl+t
        app.session.toggleNamedFilter    ctrl+n
        app.editor.external              ctrl+g
        app.message.copy                 ctrl+x
        app.message.followUp             alt+enter
        app.message.dequeue              alt+up
        app.clipboard.pasteImage         ctrl+v
        app.session.new
        app.session.tree
        app.session.fork
        app.session.resume
        app.session.togglePath           ctrl+p
        app.session.toggleSort           ctrl+s
        app.session.rename               ctrl+r
        app.session.delete               ctrl+d
        app.session.deleteNoninvasive    ctrl+backspace
        ");
}

#[test]
fn legacy_terminal_encodings_match_their_keys() {
    let kb = Keybindings::defaults();
    // Ctrl+- arrives as the 0x1f byte, which crossterm reports as Ctrl+7.
    assert!(kb.matches(&ctrl('7'), Action::Undo));
    assert!(kb.matches(&ctrl('-'), Action::Undo));
    assert!(kb.matches(&ctrl('5'), Action::JumpForward));
    assert!(kb.matches(
        &key(
            KeyCode::Char('5'),
            KeyModifiers::CONTROL | KeyModifiers::ALT
        ),
        Action::JumpBackward
    ));
    assert!(kb.matches(
        &key(KeyCode::BackTab, KeyModifiers::SHIFT),
        Action::ThinkingCycle
    ));
    assert!(kb.matches(
        &key(KeyCode::Enter, KeyModifiers::ALT),
        Action::MessageFollowUp
    ));
    assert!(kb.matches(&key(KeyCode::Enter, KeyModifiers::SHIFT), Action::NewLine));
    assert!(!kb.matches(&key(KeyCode::Enter, KeyModifiers::SHIFT), Action::Submit));
    assert!(kb.matches(
        &key(KeyCode::Backspace, KeyModifiers::ALT),
        Action::DeleteWordBackward
    ));
    assert!(kb.matches(&ctrl('h'), Action::DeleteCharBackward));
    assert!(kb.matches(
        &key(KeyCode::Char('b'), KeyModifiers::ALT),
        Action::CursorWordLeft
    ));
    assert!(kb.matches(
        &key(
            KeyCode::Char('P'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT
        ),
        Action::ModelCycleBackward
    ));
    assert!(!kb.matches(&ctrl('p'), Action::ModelCycleBackward));
}

#[test]
fn shifted_letters_and_symbols() {
    assert!(spec("shift+l").matches(&ch('L')));
    assert!(spec("shift+l").matches(&key(KeyCode::Char('L'), KeyModifiers::SHIFT)));
    assert!(!spec("l").matches(&ch('L')));
    assert!(!spec("shift+l").matches(&ch('l')));
    assert!(spec("!").matches(&ch('!')));
    assert!(spec("!").matches(&key(KeyCode::Char('!'), KeyModifiers::SHIFT)));
    assert!(spec("space").matches(&ch(' ')));
    assert!(spec("ctrl+space").matches(&ctrl(' ')));
}

#[test]
fn release_events_never_match() {
    let mut ev = ctrl('o');
    ev.kind = KeyEventKind::Release;
    assert!(!Keybindings::defaults().matches(&ev, Action::ToolsExpand));
}

#[test]
fn key_spec_errors_explain_the_format() {
    let errors: Vec<String> = ["ctrl+", "hyper+x", "ctrl+frob", "f13", "ctrl+é"]
        .iter()
        .map(|s| s.parse::<KeySpec>().unwrap_err().to_string())
        .collect();
    insta::assert_snapshot!(errors.join("\n"), @r#"
    "ctrl+" is not a key: it has no key after the last '+'
    "hyper+x" is not a key: unknown modifier "hyper" (use ctrl, shift, alt or super)
    "ctrl+frob" is not a key: unknown key name (see docs/keybindings.md for the list)
    "f13" is not a key: function keys go from f1 to f12
    "ctrl+é" is not a key: use a letter, digit, symbol or a key name like enter or pageUp
    "#);
    assert_eq!(spec("Shift+Ctrl+P"), spec("shift+ctrl+p"));
    assert_eq!(spec("pageUp").key, KeyName::PageUp);
    assert_eq!(spec("esc").key, KeyName::Escape);
    assert_eq!(spec("f12").key, KeyName::F(12));
}

#[test]
fn user_file_overrides_defaults_and_reports_bad_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keybindings.json");
    std::fs::write(
        &path,
        r#"{
          "tui.editor.cursorUp": ["up", "ctrl+p"],
          "expandTools": "ctrl+x",
          "cursorDown": "ctrl+j",
          "tui.editor.cursorDown": "ctrl+n",
          "app.model.cycleForward": [],
          "app.no.such": "ctrl+q",
          "tui.editor.undo": 5,
          "tui.editor.yank": ["ctrl+y", "ctrl+wat"],
          "tui.input.newLine": ["shift+enter", "ctrl+x"]
        }"#,
    )
    .unwrap();
    let loaded = Keybindings::load(&path).unwrap();
    let kb = &loaded.bindings;
    assert_eq!(kb.key_text(Action::CursorUp), "up/ctrl+p");
    assert_eq!(kb.key_text(Action::ToolsExpand), "ctrl+x");
    assert_eq!(kb.key_text(Action::CursorDown), "ctrl+n");
    assert_eq!(kb.key_text(Action::ModelCycleForward), "");
    assert_eq!(kb.key_text(Action::Undo), "ctrl+-");
    assert_eq!(kb.key_text(Action::Yank), "ctrl+y");
    let issues: Vec<String> = loaded.issues.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!(issues.join("\n"), @r#"
    "app.no.such": unknown action id (see docs/keybindings.md for the list)
    "tui.editor.undo": expected a key string or a list of key strings, got 5
    "tui.editor.yank": "ctrl+wat" is not a key: unknown key name (see docs/keybindings.md for the list)
    "#);
    let conflicts: Vec<(String, Vec<&str>)> = kb
        .conflicts()
        .into_iter()
        .map(|c| (c.key, c.actions.iter().map(|a| a.id()).collect()))
        .collect();
    assert_eq!(
        conflicts,
        vec![(
            "ctrl+x".to_string(),
            vec!["tui.input.newLine", "app.tools.expand"]
        )]
    );
}

#[test]
fn missing_file_means_defaults_and_broken_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let loaded = Keybindings::load(&dir.path().join("keybindings.json")).unwrap();
    assert!(loaded.issues.is_empty());
    assert_eq!(loaded.bindings.key_text(Action::ToolsExpand), "ctrl+o");

    let path = dir.path().join("bad.json");
    std::fs::write(&path, "{ \"a\": ").unwrap();
    let err = Keybindings::load(&path).unwrap_err().to_string();
    insta::assert_snapshot!(err.replace(&dir.path().display().to_string(), "<dir>"), @"failed to parse <dir>/bad.json: EOF while parsing a value at line 1 column 7 (fix the JSON or delete the file to use the defaults)");
    std::fs::write(&path, "[\"ctrl+x\"]").unwrap();
    let err = Keybindings::load(&path).unwrap_err().to_string();
    insta::assert_snapshot!(err.replace(&dir.path().display().to_string(), "<dir>"), @"<dir>/bad.json must be a JSON object mapping action ids to a key or a list of keys");
}

#[test]
fn lookup_prefers_the_first_candidate() {
    let kb = Keybindings::defaults();
    let ev = ctrl('p');
    assert_eq!(
        kb.action_for(&ev, &[Action::SessionTogglePath, Action::ModelCycleForward]),
        Some(Action::SessionTogglePath)
    );
    assert_eq!(
        kb.action_for(&ev, &[Action::ModelCycleForward]),
        Some(Action::ModelCycleForward)
    );
    assert_eq!(kb.action_for(&ev, &[Action::Submit]), None);
}

/// pi rewrites a keybindings.json with old ids at start; the expected text is what pi
/// 0.73.1 wrote for this file.
#[test]
fn old_ids_are_migrated_in_the_file_as_pi_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keybindings.json");
    std::fs::write(
        &path,
        r#"{"app.thinking.toggle": "ctrl+x", "app.tools.expand": [], "cursorLineStart": ["home", "ctrl+q"], "tui.input.newLine": ["shift+enter", "ctrl+j"], "app.model.cycleForward": "alt+p"}"#,
    )
    .unwrap();
    assert!(super::migrate_keybindings_file(&path).unwrap());
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r#"{
  "tui.editor.cursorLineStart": [
    "home",
    "ctrl+q"
  ],
  "tui.input.newLine": [
    "shift+enter",
    "ctrl+j"
  ],
  "app.model.cycleForward": "alt+p",
  "app.tools.expand": [],
  "app.thinking.toggle": "ctrl+x"
}
"#
    );
    // Already migrated: left alone.
    assert!(!super::migrate_keybindings_file(&path).unwrap());
    // The new id wins over its old name; unknown ids go last, sorted.
    std::fs::write(
        &path,
        r#"{"zzz": "ctrl+1", "expandTools": "ctrl+e", "app.tools.expand": "ctrl+k", "aaa": "ctrl+2"}"#,
    )
    .unwrap();
    assert!(super::migrate_keybindings_file(&path).unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "{\n  \"app.tools.expand\": \"ctrl+k\",\n  \"aaa\": \"ctrl+2\",\n  \"zzz\": \"ctrl+1\"\n}\n"
    );
    // Not an object, broken JSON, no file: untouched, no error.
    for content in ["[\"ctrl+x\"]", "{ \"cursorUp\": "] {
        std::fs::write(&path, content).unwrap();
        assert!(!super::migrate_keybindings_file(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
    }
    assert!(!super::migrate_keybindings_file(&dir.path().join("none.json")).unwrap());
}

#[test]
fn pi_1_6_files_load_schema_bom_and_twice_given_modifiers() {
    let text = "\u{feff}{\"$schema\": \"https://pi.dev/schemas/keybindings.schema.json\", \
        \"app.message.copy\": \"ctrl+ctrl+x\", \"app.thinking.save\": [\"alt+s\", \"shift+shift+s\"], \
        \"tui.altScreen.top\": []}";
    let loaded = Keybindings::from_json_str("k.json", text).unwrap();
    let issues: Vec<String> = loaded.issues.iter().map(ToString::to_string).collect();
    assert_eq!(
        issues,
        vec![
            "\"app.message.copy\": \"ctrl+ctrl+x\" is not a key: the modifier \"ctrl\" is given twice",
            "\"app.thinking.save\": \"shift+shift+s\" is not a key: the modifier \"shift\" is given twice",
        ]
    );
    // Nothing usable: the default stays; one usable key of two: that key.
    assert_eq!(loaded.bindings.key_text(Action::MessageCopy), "ctrl+x");
    assert_eq!(loaded.bindings.key_text(Action::ThinkingSave), "alt+s");
    assert_eq!(loaded.bindings.key_text(Action::AltTop), "");
    // pi 1.6's new defaults.
    let defaults = Keybindings::defaults();
    assert_eq!(defaults.key_text(Action::NewLine), "shift+enter/ctrl+j");
    assert_eq!(defaults.key_text(Action::HistoryPrevious), "");
    assert_eq!(
        defaults.key_text(Action::PageDown),
        "pageDown/ctrl+pageDown"
    );
}
