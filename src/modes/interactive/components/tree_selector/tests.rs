//! The selector against pi's own screens (the corpus session before and after its
//! branch), and against a generated tree with branches, labels, folds and every kind of
//! entry. Snapshots are plain text: colours are pi's theme tokens and checked in a few
//! places only.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::Line;
use serde_json::json;

use super::*;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserBlock, UserContent, UserMessage,
};
use crate::messages::{AgentMessage, BashExecutionMessage};
use crate::modes::interactive::components::Ui;
use crate::modes::interactive::test_support::{plain, styled, theme};
use crate::modes::interactive::theme::Theme;
use crate::session::SessionManager;

const CORPUS: &str = "tests/fixtures/corpus/tree-branch-summary/2026-11-22T03-39-48-634Z_01a20156-b21a-742a-b0a5-c040b17d3b47.jsonl";

/// The corpus session cut after `lines` lines (13: before the branch; 18: all of it).
fn corpus_session(lines: usize) -> (tempfile::TempDir, SessionManager) {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS))
            .unwrap();
    let kept: String = text.lines().take(lines).map(|l| format!("{l}\n")).collect();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, kept).unwrap();
    let session = SessionManager::open(&path, Some(dir.path())).unwrap();
    (dir, session)
}

struct Screen {
    theme: Theme,
    keys: Keybindings,
}

impl Screen {
    fn new() -> Self {
        Screen {
            theme: theme(),
            keys: Keybindings::defaults(),
        }
    }

    fn ui(&self) -> Ui<'_> {
        Ui::new(&self.theme, &self.keys).with_home(Some("/home/user"))
    }

    fn render(&self, sel: &TreeSelector, width: usize) -> String {
        plain(&sel.render(width, &self.ui()), width)
    }

    /// Only the list and its position line.
    fn list(&self, sel: &TreeSelector, width: usize) -> String {
        plain(&sel.list(width, &self.ui()), width)
    }

    fn press(&self, sel: &mut TreeSelector, key: KeyEvent) -> TreeOutcome {
        sel.handle_key(&key, &self.keys)
    }

    fn type_text(&self, sel: &mut TreeSelector, text: &str) {
        for c in text.chars() {
            assert_eq!(self.press(sel, ch(c)), TreeOutcome::None);
        }
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    let mods = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), mods)
}

fn ctrl(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::CONTROL)
}

fn selector(session: &SessionManager, rows: usize) -> TreeSelector {
    TreeSelector::new(
        TreeSnapshot::from_session(session),
        TreeSelectorOptions {
            visible_rows: rows,
            ..TreeSelectorOptions::default()
        },
    )
}

#[test]
fn corpus_tree_before_the_branch_looks_like_pi() {
    let (_dir, session) = corpus_session(13);
    let screen = Screen::new();
    let mut sel = selector(&session, TreeSelector::rows_for_terminal(40));
    // pi's tree-view-initial.txt: the cursor on the current leaf.
    insta::assert_snapshot!(screen.render(&sel, 120), @r"

        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
           Session Tree
          ↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. shift+l: label. ctrl+d/ctrl+t/ctrl+u/ctrl+l/ctrl+a: filter...
          Type to search:
        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────

          • user: Turn one: read notes.txt
          • assistant: Reading notes.txt.
          • [read: notes.txt]
          • assistant: notes.txt has two lines: 'note one' and 'note two'.
          • user: Turn two: append a line to notes.txt
          • assistant: Appending a line.
          • [edit: notes.txt]
          • assistant: Added 'note three'.
          • user: Turn three: what should we do next?
        › • assistant: Next we could sort the notes.
          (10/10)

        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
    ");
    for _ in 0..9 {
        screen.press(&mut sel, key(KeyCode::Up));
    }
    // pi's tree-view.txt: nine rows up, on the first user message.
    insta::assert_snapshot!(screen.list(&sel, 120), @r"
        › • user: Turn one: read notes.txt
          • assistant: Reading notes.txt.
          • [read: notes.txt]
          • assistant: notes.txt has two lines: 'note one' and 'note two'.
          • user: Turn two: append a line to notes.txt
          • assistant: Appending a line.
          • [edit: notes.txt]
          • assistant: Added 'note three'.
          • user: Turn three: what should we do next?
          • assistant: Next we could sort the notes.
          (1/10)
    ");
    assert_eq!(
        screen.press(&mut sel, key(KeyCode::Enter)),
        TreeOutcome::Selected(EntryId::from("1a73f3c8"))
    );
}

#[test]
fn corpus_tree_after_the_branch_looks_like_pi() {
    let (_dir, session) = corpus_session(18);
    let screen = Screen::new();
    let mut sel = selector(&session, TreeSelector::rows_for_terminal(40));
    // pi's tree-view-after.txt: the new branch (holding the leaf) listed first.
    insta::assert_snapshot!(screen.render(&sel, 120), @r"

        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
           Session Tree
          ↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. shift+l: label. ctrl+d/ctrl+t/ctrl+u/ctrl+l/ctrl+a: filter...
          Type to search:
        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────

          • [branch summary]: The user explored a different conversation branch before returning here. Summary of that explor...
             • user: Alternative: count the words in notes.txt
             • assistant: Alternative branch: I'll count the words in notes.txt instead.
             • [bash: wc -w notes.txt]
        ›    • assistant: notes.txt has the word count shown above.
          user: Turn one: read notes.txt
             assistant: Reading notes.txt.
             [read: notes.txt]
             assistant: notes.txt has two lines: 'note one' and 'note two'.
             user: Turn two: append a line to notes.txt
             assistant: Appending a line.
             [edit: notes.txt]
             assistant: Added 'note three'.
             user: Turn three: what should we do next?
             assistant: Next we could sort the notes.
          (5/15)

        ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
    ");
    assert_eq!(
        screen.press(&mut sel, key(KeyCode::Enter)),
        TreeOutcome::AlreadyAtLeaf
    );
}

#[test]
fn the_selected_row_is_highlighted_and_bold_and_the_active_path_marked() {
    let (_dir, session) = corpus_session(13);
    let screen = Screen::new();
    let sel = selector(&session, 20);
    let lines = sel.list(80, &screen.ui());
    insta::assert_snapshot!(styled(&lines[0]), @"  • ⟨fg=#5FD7AF⟩user: ⟨fg=#5FD7AF⟩Turn one: read notes.txt");
    insta::assert_snapshot!(styled(&lines[9]), @"› ⟨fg=#5FD7AF bg=#33384A⟩• ⟨fg=#5FD7AF bg=#33384A⟩assistant: ⟨fg=#9ECE6A bg=#33384A BOLD⟩Next we could sort the notes.⟨bg=#33384A BOLD⟩");
}

fn assistant(text: &str, calls: Vec<ToolCall>, stop: StopReason) -> AgentMessage {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(AssistantBlock::Text(TextContent::new(text)));
    }
    content.extend(calls.into_iter().map(AssistantBlock::ToolCall));
    AgentMessage::Assistant(AssistantMessage {
        content,
        error_message: (stop == StopReason::Error).then(|| "429 rate limited:\nslow down".into()),
        stop_reason: stop,
        ..AssistantMessage::default()
    })
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
        ..ToolCall::default()
    }
}

fn result(id: &str, name: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![UserBlock::text(text)],
        ..ToolResultMessage::default()
    })
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text, 0))
}

/// A session with three branches from one point, a nested fork, labels, a compaction,
/// extension entries and every tool the rows know; the leaf is on the newest branch.
fn generated() -> (SessionManager, HashMap<&'static str, EntryId>) {
    let mut s = SessionManager::in_memory("/home/user/proj");
    s.use_seeded_ids(3);
    let mut ids = HashMap::new();
    fn add(
        s: &mut SessionManager,
        ids: &mut HashMap<&'static str, EntryId>,
        name: &'static str,
        m: AgentMessage,
    ) {
        ids.insert(name, s.append_message(m).unwrap());
    }
    s.append_model_change("anthropic", "claude-sonnet-4-5")
        .unwrap();
    s.append_thinking_level_change("medium").unwrap();
    add(&mut s, &mut ids, "u1", user("Plan the parser rewrite"));
    let read = call(
        "c1",
        "read",
        json!({"path": "/home/user/proj/src/parser.rs", "offset": 10, "limit": 40}),
    );
    add(
        &mut s,
        &mut ids,
        "a1",
        assistant(
            "Reading the current parser.",
            vec![read],
            StopReason::ToolUse,
        ),
    );
    add(
        &mut s,
        &mut ids,
        "r1",
        result("c1", "read", "fn parse() {}"),
    );
    let bash = call(
        "c2",
        "bash",
        json!({"command": "cargo test --all --quiet -- --test-threads 1\n--nocapture parser"}),
    );
    add(
        &mut s,
        &mut ids,
        "a2",
        assistant("", vec![bash], StopReason::ToolUse),
    );
    add(&mut s, &mut ids, "r2", result("c2", "bash", "ok"));
    add(
        &mut s,
        &mut ids,
        "a3",
        assistant("Tests pass; two ways to go.", vec![], StopReason::Stop),
    );
    let a3 = ids["a3"].clone();

    add(
        &mut s,
        &mut ids,
        "uA",
        user("Try approach A: a hand-written lexer"),
    );
    let grep = call(
        "c3",
        "grep",
        json!({"pattern": "TODO", "path": "/home/user/proj/src"}),
    );
    add(
        &mut s,
        &mut ids,
        "aA",
        assistant("Approach A done.", vec![grep], StopReason::ToolUse),
    );
    add(
        &mut s,
        &mut ids,
        "rA",
        result("c3", "grep", "src/lib.rs:1: TODO"),
    );
    let ua = ids["uA"].clone();
    s.append_label_change(&ua, Some("lexer")).unwrap();
    let ra = ids["rA"].clone();
    add(&mut s, &mut ids, "uA1", user("Polish A"));
    add(
        &mut s,
        &mut ids,
        "aA1",
        assistant("", vec![], StopReason::Aborted),
    );
    s.branch(&ra).unwrap();
    add(&mut s, &mut ids, "uA2", user("Benchmark A"));
    add(
        &mut s,
        &mut ids,
        "bash",
        AgentMessage::BashExecution(BashExecutionMessage {
            command: "cargo bench\t--bench parser".into(),
            output: "ok".into(),
            ..BashExecutionMessage::default()
        }),
    );

    s.branch(&a3).unwrap();
    add(
        &mut s,
        &mut ids,
        "uB",
        user("Try approach B: parser combinators"),
    );
    add(
        &mut s,
        &mut ids,
        "aB",
        assistant("", vec![], StopReason::Error),
    );
    s.append_custom_message_entry(
        "notes",
        UserContent::Text("Reminder: keep the old API".into()),
        true,
        None,
    )
    .unwrap();
    s.append_custom_entry("ext-state", Some(json!({"n": 1})))
        .unwrap();
    s.append_session_info("Parser rewrite").unwrap();

    ids.insert(
        "bs",
        s.branch_with_summary(
            Some(&a3),
            "The user explored approach B.\nIt failed on rate limits.",
            None,
            Some(false),
        )
        .unwrap(),
    );
    add(&mut s, &mut ids, "uC", user("Go with approach C"));
    let calls = vec![
        call("c4", "find", json!({"pattern": "*.rs"})),
        call("c5", "ls", json!({"path": "/home/user/proj"})),
        call(
            "c6",
            "write",
            json!({"path": "/home/user/proj/src/c.rs", "content": "x"}),
        ),
        call(
            "c7",
            "edit",
            json!({"file_path": "src/lib.rs", "oldText": "a", "newText": "b"}),
        ),
        call(
            "c8",
            "mcp_search",
            json!({"query": "parser combinators in rust", "limit": 5}),
        ),
    ];
    add(
        &mut s,
        &mut ids,
        "aC",
        assistant("Writing approach C.", calls, StopReason::ToolUse),
    );
    for (name, id, tool) in [
        ("rC4", "c4", "find"),
        ("rC5", "c5", "ls"),
        ("rC6", "c6", "write"),
        ("rC7", "c7", "edit"),
        ("rC8", "c8", "mcp_search"),
    ] {
        add(&mut s, &mut ids, name, result(id, tool, "done"));
    }
    let uc = ids["uC"].clone();
    ids.insert(
        "cp",
        s.append_compaction("Summary of C so far", &uc, 12_345, None, None)
            .unwrap(),
    );
    add(&mut s, &mut ids, "uD", user("Continue after compaction"));
    add(
        &mut s,
        &mut ids,
        "aD",
        assistant("Done with C.", vec![], StopReason::Stop),
    );
    let ad = ids["aD"].clone();
    s.append_label_change(&ad, Some("shipped")).unwrap();
    (s, ids)
}

fn open_generated(
    rows: usize,
    filter: FilterMode,
) -> (TreeSelector, HashMap<&'static str, EntryId>) {
    let (session, ids) = generated();
    let sel = TreeSelector::new(
        TreeSnapshot::from_session(&session),
        TreeSelectorOptions {
            visible_rows: rows,
            filter,
            initial_selection: None,
        },
    );
    (sel, ids)
}

#[test]
fn a_tree_with_branches_shows_connectors_rails_labels_and_the_active_branch_first() {
    let screen = Screen::new();
    let (sel, _) = open_generated(40, FilterMode::Default);
    insta::assert_snapshot!(screen.list(&sel, 100), @r#"
          • user: Plan the parser rewrite
          • assistant: Reading the current parser.
          • [read: ~/proj/src/parser.rs:10-49]
          • [bash: cargo test --all --quiet -- --test-threads 1 --noc...]
          • assistant: Tests pass; two ways to go.
          ├⊟ • [branch summary]: The user explored approach B. It failed on rate limits.
          │     • user: Go with approach C
          │     • assistant: Writing approach C.
          │     • [find: *.rs in .]
          │     • [ls: ~/proj]
          │     • [write: ~/proj/src/c.rs]
          │     • [edit: src/lib.rs]
          │     • [mcp_search: {"query":"parser combinators in rust","l...]
          │     • [compaction: 12k tokens]
          │     • user: Continue after compaction
        › │     • [shipped] assistant: Done with C.
          ├⊟ [lexer] user: Try approach A: a hand-written lexer
          │     assistant: Approach A done.
          │     [grep: /TODO/ in ~/proj/src]
          │     ├⊟ user: Polish A
          │     │     assistant: (aborted)
          │     └⊟ user: Benchmark A
          │           [bash]: cargo bench --bench parser
          └⊟ user: Try approach B: parser combinators
                assistant: 429 rate limited: slow down
                [notes]: Reminder: keep the old API
          (16/26)
    "#);
}

#[test]
fn every_filter_mode_shows_its_entries() {
    let screen = Screen::new();
    let mut out = String::new();
    for mode in FilterMode::CYCLE {
        let (sel, _) = open_generated(40, mode);
        out.push_str(&format!(
            "--- {}\n{}\n",
            mode.setting(),
            screen.list(&sel, 90)
        ));
    }
    insta::assert_snapshot!(out, @r#"
        --- default
          • user: Plan the parser rewrite
          • assistant: Reading the current parser.
          • [read: ~/proj/src/parser.rs:10-49]
          • [bash: cargo test --all --quiet -- --test-threads 1 --noc...]
          • assistant: Tests pass; two ways to go.
          ├⊟ • [branch summary]: The user explored approach B. It failed on rate limits.
          │     • user: Go with approach C
          │     • assistant: Writing approach C.
          │     • [find: *.rs in .]
          │     • [ls: ~/proj]
          │     • [write: ~/proj/src/c.rs]
          │     • [edit: src/lib.rs]
          │     • [mcp_search: {"query":"parser combinators in rust","l...]
          │     • [compaction: 12k tokens]
          │     • user: Continue after compaction
        › │     • [shipped] assistant: Done with C.
          ├⊟ [lexer] user: Try approach A: a hand-written lexer
          │     assistant: Approach A done.
          │     [grep: /TODO/ in ~/proj/src]
          │     ├⊟ user: Polish A
          │     │     assistant: (aborted)
          │     └⊟ user: Benchmark A
          │           [bash]: cargo bench --bench parser
          └⊟ user: Try approach B: parser combinators
                assistant: 429 rate limited: slow down
                [notes]: Reminder: keep the old API
          (16/26)
        --- no-tools
          • user: Plan the parser rewrite
          • assistant: Reading the current parser.
          • assistant: Tests pass; two ways to go.
          ├⊟ • [branch summary]: The user explored approach B. It failed on rate limits.
          │     • user: Go with approach C
          │     • assistant: Writing approach C.
          │     • [compaction: 12k tokens]
          │     • user: Continue after compaction
        › │     • [shipped] assistant: Done with C.
          ├⊟ [lexer] user: Try approach A: a hand-written lexer
          │     assistant: Approach A done.
          │     ├⊟ user: Polish A
          │     │     assistant: (aborted)
          │     └⊟ user: Benchmark A
          │           [bash]: cargo bench --bench parser
          └⊟ user: Try approach B: parser combinators
                assistant: 429 rate limited: slow down
                [notes]: Reminder: keep the old API
          (9/18) [no-tools]
        --- user-only
          • user: Plan the parser rewrite
          ├⊟ • user: Go with approach C
        › │     • user: Continue after compaction
          ├⊟ [lexer] user: Try approach A: a hand-written lexer
          │  ├─ user: Polish A
          │  └─ user: Benchmark A
          └─ user: Try approach B: parser combinators
          (3/7) [user]
        --- labeled-only
        › • [shipped] assistant: Done with C.
          [lexer] user: Try approach A: a hand-written lexer
          (1/2) [labeled]
        --- all
          • [model: claude-sonnet-4-5]
          • [thinking: medium]
          • user: Plan the parser rewrite
          • assistant: Reading the current parser.
          • [read: ~/proj/src/parser.rs:10-49]
          • [bash: cargo test --all --quiet -- --test-threads 1 --noc...]
          • assistant: Tests pass; two ways to go.
          ├⊟ • [branch summary]: The user explored approach B. It failed on rate limits.
          │     • user: Go with approach C
          │     • assistant: Writing approach C.
          │     • [find: *.rs in .]
          │     • [ls: ~/proj]
          │     • [write: ~/proj/src/c.rs]
          │     • [edit: src/lib.rs]
          │     • [mcp_search: {"query":"parser combinators in rust","l...]
          │     • [compaction: 12k tokens]
          │     • user: Continue after compaction
          │     • [shipped] assistant: Done with C.
        › │     • [label: shipped]
          ├⊟ [lexer] user: Try approach A: a hand-written lexer
          │     assistant: Approach A done.
          │     [grep: /TODO/ in ~/proj/src]
          │     ├⊟ [label: lexer]
          │     │     user: Polish A
          │     │     assistant: (aborted)
          │     └⊟ user: Benchmark A
          │           [bash]: cargo bench --bench parser
          └⊟ user: Try approach B: parser combinators
                assistant: 429 rate limited: slow down
                [notes]: Reminder: keep the old API
                [custom: ext-state]
                [title: Parser rewrite]
          (19/32) [all]
    "#);
}

#[test]
fn filter_keys_toggle_and_cycle_like_pi() {
    let screen = Screen::new();
    let (mut sel, _) = open_generated(40, FilterMode::from_setting("user-only"));
    let mut seen = vec![sel.filter_mode().setting()];
    let steps = [
        ctrl(KeyCode::Char('u')),
        ctrl(KeyCode::Char('t')),
        ctrl(KeyCode::Char('t')),
        ctrl(KeyCode::Char('l')),
        ctrl(KeyCode::Char('a')),
        ctrl(KeyCode::Char('d')),
        ctrl(KeyCode::Char('o')),
        ctrl(KeyCode::Char('o')),
        KeyEvent::new(
            KeyCode::Char('o'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        ),
        KeyEvent::new(
            KeyCode::Char('O'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        ),
        KeyEvent::new(
            KeyCode::Char('o'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        ),
    ];
    for step in steps {
        assert_eq!(screen.press(&mut sel, step), TreeOutcome::None);
        seen.push(sel.filter_mode().setting());
    }
    assert_eq!(
        seen.join(" → "),
        "user-only → default → no-tools → default → labeled-only → all → default → no-tools → user-only → no-tools → default → all"
    );
    assert_eq!(FilterMode::from_setting("bogus"), FilterMode::Default);
}

#[test]
fn the_status_line_names_the_filter_and_label_times() {
    let screen = Screen::new();
    let (mut sel, _) = open_generated(3, FilterMode::NoTools);
    screen.press(&mut sel, ch('T'));
    insta::assert_snapshot!(screen.list(&sel, 60).lines().last().unwrap(), @"  (9/18) [no-tools] [+label time]");
}

#[test]
fn pure_tool_call_turns_are_hidden_unless_they_are_the_leaf() {
    let mut s = SessionManager::in_memory("/p");
    s.use_seeded_ids(1);
    s.append_message(user("run it")).unwrap();
    let bash = call("c1", "bash", json!({"command": "ls"}));
    s.append_message(assistant("", vec![bash], StopReason::ToolUse))
        .unwrap();
    s.append_message(result("c1", "bash", "a b")).unwrap();
    let bash = call("c2", "bash", json!({"command": "ls -l"}));
    s.append_message(assistant("", vec![bash], StopReason::ToolUse))
        .unwrap();
    let screen = Screen::new();
    insta::assert_snapshot!(screen.list(&selector(&s, 10), 60), @r"
          • user: run it
          • [bash: ls]
        › • assistant: (no content)
          (3/3)
    ");
}

#[test]
fn folding_hides_a_branch_and_segment_keys_jump_between_branch_starts() {
    let screen = Screen::new();
    let (mut sel, ids) = open_generated(40, FilterMode::UserOnly);
    let ctrl_left = ctrl(KeyCode::Left);
    let ctrl_right = ctrl(KeyCode::Right);
    let alt_left = KeyEvent::new(KeyCode::Left, KeyModifiers::ALT);
    let mut trail = Vec::new();
    let mut note = |sel: &TreeSelector, what: &str| {
        let id = sel.selected_id().unwrap();
        let name = ids.iter().find(|(_, v)| *v == id).map_or("?", |(k, _)| *k);
        trail.push(format!("{what}: {name}"));
    };
    note(&sel, "open");
    screen.press(&mut sel, ctrl_left);
    note(&sel, "ctrl+left");
    screen.press(&mut sel, alt_left);
    note(&sel, "alt+left");
    screen.press(&mut sel, ctrl_right);
    note(&sel, "ctrl+right");
    screen.press(&mut sel, ctrl_right);
    note(&sel, "ctrl+right");
    screen.press(&mut sel, key(KeyCode::Down));
    screen.press(&mut sel, key(KeyCode::Down));
    note(&sel, "down down");
    insta::assert_snapshot!(trail.join("\n"), @r"
        open: uD
        ctrl+left: uC
        alt+left: uC
        ctrl+right: uC
        ctrl+right: uD
        down down: uA1
    ");

    // From inside a branch, the first press goes to the branch start, the second folds it.
    screen.press(&mut sel, ctrl_left);
    assert_eq!(sel.selected_id(), Some(&ids["uA"]));
    screen.press(&mut sel, ctrl_left);
    insta::assert_snapshot!(screen.list(&sel, 70), @r"
          • user: Plan the parser rewrite
          ├⊟ • user: Go with approach C
          │     • user: Continue after compaction
        › ├⊞ [lexer] user: Try approach A: a hand-written lexer
          └─ user: Try approach B: parser combinators
          (4/5) [user]
    ");
    screen.press(&mut sel, ctrl_right);
    assert!(!screen.list(&sel, 70).contains('⊞'));
}

#[test]
fn search_matches_every_word_in_text_or_label_case_insensitively() {
    let screen = Screen::new();
    let (mut sel, _) = open_generated(40, FilterMode::Default);
    screen.type_text(&mut sel, "APPROACH a");
    insta::assert_snapshot!(screen.render(&sel, 70), @r"

        ──────────────────────────────────────────────────────────────────────
           Session Tree
          ↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. shift+l:...
          Type to search: APPROACH a
        ──────────────────────────────────────────────────────────────────────

          • [branch summary]: The user explored approach B. It failed on ra...
             • user: Go with approach C
        ›    • assistant: Writing approach C.
          [lexer] user: Try approach A: a hand-written lexer
             assistant: Approach A done.
          user: Try approach B: parser combinators
          (3/6)

        ──────────────────────────────────────────────────────────────────────
    ");
    // A label is searchable too.
    for _ in 0.."APPROACH a".len() {
        screen.press(&mut sel, key(KeyCode::Backspace));
    }
    screen.type_text(&mut sel, "lexer");
    insta::assert_snapshot!(screen.list(&sel, 70), @r"
        › [lexer] user: Try approach A: a hand-written lexer
          (1/1)
    ");
    // The first Escape clears the search, the second one closes the selector.
    assert_eq!(screen.press(&mut sel, key(KeyCode::Esc)), TreeOutcome::None);
    assert_eq!(sel.query(), "");
    assert_eq!(
        screen.press(&mut sel, key(KeyCode::Esc)),
        TreeOutcome::Cancelled
    );
}

#[test]
fn the_selection_survives_a_search_that_matches_nothing() {
    let screen = Screen::new();
    let (mut sel, ids) = open_generated(40, FilterMode::Default);
    screen.press(&mut sel, key(KeyCode::Up));
    let before = sel.selected_id().cloned();
    screen.type_text(&mut sel, "zzz");
    insta::assert_snapshot!(screen.list(&sel, 60), @r"
        No entries found
        (0/0)
    ");
    assert_eq!(
        screen.press(&mut sel, key(KeyCode::Enter)),
        TreeOutcome::None
    );
    for _ in 0..3 {
        screen.press(&mut sel, key(KeyCode::Backspace));
    }
    assert_eq!(sel.selected_id().cloned(), before);
    assert_ne!(before.as_ref(), Some(&ids["aD"]));
}

#[test]
fn labels_are_asked_for_and_updated_in_place() {
    let screen = Screen::new();
    let (mut sel, ids) = open_generated(40, FilterMode::LabeledOnly);
    // Leaf first: its label is offered for editing.
    assert_eq!(
        screen.press(&mut sel, ch('L')),
        TreeOutcome::EditLabel(ids["aD"].clone(), Some("shipped".into()))
    );
    sel.set_label(
        &ids["uD"],
        Some("resume here"),
        Some("2026-03-07T14:05:00Z"),
    );
    sel.set_label(&ids["aD"], None, None);
    sel.set_label(&ids["uA"], Some("lexer"), Some("2024-06-30T10:00:00Z"));
    sel.set_now(DateTime::parse_from_rfc3339("2026-03-07T18:00:00+01:00").unwrap());
    screen.press(&mut sel, ch('T'));
    insta::assert_snapshot!(screen.list(&sel, 60), @r"
        › • [resume here] 15:05 user: Continue after compaction
          [lexer] 24/6/30 11:00 user: Try approach A: a hand-writ...
          (1/2) [labeled] [+label time]
    ");
    let input = [Line::from("resume here")];
    insta::assert_snapshot!(plain(&sel.render_label_prompt(60, &screen.ui(), &input), 60), @r"

        ────────────────────────────────────────────────────────────
           Session Tree
          ↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch...
          Type to search:
        ────────────────────────────────────────────────────────────

          Label (empty to remove):
          resume here
          enter save  escape/ctrl+c cancel

        ────────────────────────────────────────────────────────────
    ");
}

#[test]
fn keys_follow_the_users_keybindings() {
    let loaded = Keybindings::from_json_str(
        "keybindings.json",
        r#"{"app.tree.editLabel": "ctrl+e", "tui.select.up": ["up", "ctrl+k"], "app.tree.filter.userOnly": "alt+u"}"#,
    )
    .unwrap();
    let keys = loaded.bindings;
    let (mut sel, ids) = open_generated(40, FilterMode::Default);
    assert_eq!(
        sel.handle_key(&ctrl(KeyCode::Char('e')), &keys),
        TreeOutcome::EditLabel(ids["aD"].clone(), Some("shipped".into()))
    );
    sel.handle_key(&ctrl(KeyCode::Char('k')), &keys);
    assert_eq!(sel.selected_id(), Some(&ids["uD"]));
    // Shift+L is no longer bound: it types into the search.
    sel.handle_key(&ch('L'), &keys);
    assert_eq!(sel.query(), "L");
    sel.handle_key(&key(KeyCode::Esc), &keys);
    sel.handle_key(&KeyEvent::new(KeyCode::Char('u'), KeyModifiers::ALT), &keys);
    assert_eq!(sel.filter_mode(), FilterMode::UserOnly);
    let t = theme();
    let ui = Ui::new(&t, &keys);
    let header = plain(&sel.render(400, &ui), 400);
    assert!(
        header.contains("ctrl+e: label. ctrl+d/ctrl+t/alt+u/ctrl+l/ctrl+a: filters"),
        "{header}"
    );
}

#[test]
fn paging_moves_a_screen_at_a_time_and_stays_in_bounds() {
    let screen = Screen::new();
    let (mut sel, _) = open_generated(5, FilterMode::All);
    let mut positions = vec![screen.list(&sel, 30).lines().last().unwrap().to_string()];
    for k in [
        key(KeyCode::PageUp),
        key(KeyCode::Left),
        key(KeyCode::Left),
        key(KeyCode::Left),
        key(KeyCode::Left),
        key(KeyCode::Left),
        key(KeyCode::Left),
        key(KeyCode::Right),
        key(KeyCode::PageDown),
        key(KeyCode::Up),
    ] {
        screen.press(&mut sel, k);
        positions.push(screen.list(&sel, 30).lines().last().unwrap().to_string());
    }
    insta::assert_snapshot!(positions.join(" "), @"  (19/32) [all]   (14/32) [all]   (9/32) [all]   (4/32) [all]   (1/32) [all]   (1/32) [all]   (1/32) [all]   (1/32) [all]   (6/32) [all]   (11/32) [all]   (10/32) [all]");
    insta::assert_snapshot!(screen.render(&sel, 30), @r"

        ──────────────────────────────
           Session Tree
          ↑/↓: move. ←/→: page. ^←/...
          Type to search:
        ──────────────────────────────

          ├⊟ • [branch summary]: Th...
          │     • user: Go with app...
        › │     • assistant: Writin...
          │     • [find: *.rs in .]
          │     • [ls: ~/proj]
          (10/32) [all]

        ──────────────────────────────
    ");
    insta::assert_snapshot!(screen.list(&sel, 12), @r"
          ├⊟ • [b...
          │     •...
        › │     •...
          │     •...
          │     •...
          (10/32)...
    ");
}

#[test]
fn wide_characters_are_cut_at_the_width() {
    let mut s = SessionManager::in_memory("/p");
    s.use_seeded_ids(5);
    s.append_message(user("解析器を書き直してください 🇯🇵👨‍👩‍👧 please"))
        .unwrap();
    s.append_message(assistant(
        "了解しました。まず字句解析器から。",
        vec![],
        StopReason::Stop,
    ))
    .unwrap();
    let screen = Screen::new();
    let sel = selector(&s, 10);
    let mut out = String::new();
    for width in [40, 25, 17, 9] {
        out.push_str(&format!("--- {width}\n{}\n", screen.list(&sel, width)));
    }
    insta::assert_snapshot!(out, @r"
        --- 40
          • user: 解析器を書き直してください ...
        › • assistant: 了解しました。まず字句...
          (2/2)
        --- 25
          • user: 解析器を書き...
        › • assistant: 了解し...
          (2/2)
        --- 17
          • user: 解析...
        › • assistant:...
          (2/2)
        --- 9
          • us...
        › • as...
          (2/2)
    ");
}

#[test]
fn deeply_nested_forks_are_cut_at_the_right_edge() {
    // Forty forks, each inside the previous one's second branch.
    let mut s = SessionManager::in_memory("/p");
    s.use_seeded_ids(11);
    let mut at = s.append_message(user("start")).unwrap();
    for k in 0..40 {
        s.append_message(user(&format!("left {k}"))).unwrap();
        s.branch(&at).unwrap();
        at = s.append_message(user(&format!("right {k}"))).unwrap();
    }
    let screen = Screen::new();
    let sel = selector(&s, 4);
    insta::assert_snapshot!(screen.list(&sel, 40), @r"
          │  │  │  │  │  │  │  │  │  │  │  │ ...
          │  │  │  │  │  │  │  │  │  │  │  │ ...
        › │  │  │  │  │  │  │  │  │  │  │  │ ...
          │  │  │  │  │  │  │  │  │  │  │  │ ...
          (41/81)
    ");
    let wide = screen.list(&sel, 400);
    assert!(wide.contains("├─ • user: right 39"), "{wide}");
    assert!(wide.contains("└─ user: left 39"), "{wide}");
}

#[test]
fn an_empty_session_has_nothing_to_show() {
    let s = SessionManager::in_memory("/p");
    let screen = Screen::new();
    let mut sel = selector(&s, 10);
    assert!(sel.is_empty());
    insta::assert_snapshot!(screen.list(&sel, 40), @r"
        No entries found
        (0/0)
    ");
    assert_eq!(
        screen.press(&mut sel, key(KeyCode::Enter)),
        TreeOutcome::None
    );
    assert_eq!(screen.press(&mut sel, key(KeyCode::Up)), TreeOutcome::None);
    assert_eq!(
        screen.press(&mut sel, ctrl(KeyCode::Left)),
        TreeOutcome::None
    );
    assert_eq!(screen.press(&mut sel, ch('L')), TreeOutcome::None);
}

#[test]
fn refreshing_after_a_change_keeps_filter_search_and_selection() {
    let screen = Screen::new();
    let (mut session, ids) = generated();
    let mut sel = TreeSelector::new(
        TreeSnapshot::from_session(&session),
        TreeSelectorOptions {
            visible_rows: 40,
            filter: FilterMode::UserOnly,
            initial_selection: Some(ids["uA"].clone()),
        },
    );
    screen.type_text(&mut sel, "approach");
    session
        .append_label_change(&ids["uB"], Some("combinators"))
        .unwrap();
    sel.refresh(TreeSnapshot::from_session(&session));
    assert_eq!(sel.selected_id(), Some(&ids["uA"]));
    assert_eq!(
        (sel.query(), sel.filter_mode()),
        ("approach", FilterMode::UserOnly)
    );
    insta::assert_snapshot!(screen.list(&sel, 70), @r"
          • user: Go with approach C
        › [lexer] user: Try approach A: a hand-written lexer
          [combinators] user: Try approach B: parser combinators
          (2/3) [user]
    ");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn unicode_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z ]{1,12}",
            Just("中文字符".to_string()),
            Just("🇺🇸🇯🇵".to_string()),
            Just("👨\u{200d}👩\u{200d}👧".to_string()),
            Just("\u{1b}[31m".to_string()),
            Just("\t\n\r".to_string()),
            Just("\u{7}\u{600}".to_string()),
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Narrowing a search step by step gives what typing the final query at once
        /// gives, whatever was typed and deleted on the way.
        #[test]
        fn incremental_search_agrees_with_a_fresh_search(
            steps in prop::collection::vec(prop_oneof![
                Just(None),
                prop::sample::select(vec!['a', 'p', 'r', 'o', 'c', 'h', ' ', 'e', 'x', 'A', 'b', 'u', 's']).prop_map(Some),
            ], 0..14),
            width in 1usize..120,
        ) {
            let screen = Screen::new();
            let (mut typed, _) = open_generated(8, FilterMode::All);
            for step in &steps {
                match step {
                    Some(c) => screen.press(&mut typed, ch(*c)),
                    None => screen.press(&mut typed, key(KeyCode::Backspace)),
                };
            }
            let (mut fresh, _) = open_generated(8, FilterMode::All);
            fresh.query = typed.query().to_string();
            fresh.apply_filter();
            prop_assert_eq!(&typed.view.rows, &fresh.view.rows);
            // Never wider than the screen.
            plain(&typed.render(width, &screen.ui()), width);
        }

        /// Whatever the text (wide characters, emoji, escape sequences, control
        /// characters) and the tree shape, no row is wider than the screen and no escape
        /// or control character reaches it.
        #[test]
        fn rows_never_overflow_or_carry_control_characters(
            texts in prop::collection::vec(unicode_text(), 1..12),
            forks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
            width in 1usize..100,
            rows in 1usize..12,
        ) {
            let mut s = SessionManager::in_memory("/home/user/p");
            s.use_seeded_ids(9);
            let mut ids = Vec::new();
            for (n, text) in texts.iter().enumerate() {
                if let Some(fork) = forks.get(n)
                    && !ids.is_empty()
                {
                    s.branch(&ids[fork.index(ids.len())]).unwrap();
                }
                let message = match n % 4 {
                    0 => user(text),
                    1 => assistant(text, vec![call(&format!("c{n}"), "bash", json!({"command": text}))], StopReason::ToolUse),
                    2 => result(&format!("c{}", n - 1), "bash", text),
                    _ => assistant("", vec![], StopReason::Error),
                };
                ids.push(s.append_message(message).unwrap());
                if n % 3 == 0 {
                    s.append_label_change(ids.last().unwrap(), Some(text)).unwrap();
                }
            }
            let screen = Screen::new();
            let mut sel = selector(&s, rows);
            for mode in FilterMode::CYCLE {
                sel.set_filter(mode);
                let lines = sel.render(width, &screen.ui());
                plain(&lines, width);
                for line in &lines {
                    for span in &line.spans {
                        prop_assert!(
                            !span.content.chars().any(|c| c.is_control()),
                            "{:?}",
                            span.content
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn usage_entries_are_never_listed_and_context_edits_show_in_the_all_view() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"01a233a4-63fb-75ba-93e4-232775086e0f","timestamp":"2026-12-01T22:05:41.245Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"aa000001","parentId":null,"timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"user","content":"first","timestamp":1}}"#,
        r#"{"type":"usage","id":"aa000002","parentId":"aa000001","timestamp":"2026-12-01T22:05:41.381Z","kind":"cache_warm","provider":"p","model":"m","usage":{"input":1}}"#,
        r#"{"type":"context_edit","id":"aa000003","parentId":"aa000002","timestamp":"2026-12-01T22:05:41.381Z","targetId":"aa000001","replacement":null}"#,
        r#"{"type":"context_edit","id":"aa000004","parentId":"aa000003","timestamp":"2026-12-01T22:05:41.381Z","targetId":"aa000001","replacement":{"content":"x"}}"#,
        r#"{"type":"message","id":"aa000005","parentId":"aa000004","timestamp":"2026-12-01T22:05:41.381Z","message":{"role":"user","content":"second","timestamp":2}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = SessionManager::open(&path, Some(dir.path())).unwrap();
    let screen = Screen::new();
    let mut sel = selector(&session, 10);
    insta::assert_snapshot!(screen.list(&sel, 60), @r"
      • user: first
    › • user: second
      (2/2)
    ");
    screen.press(&mut sel, ctrl(KeyCode::Char('a')));
    insta::assert_snapshot!(screen.list(&sel, 60), @r"
      • user: first
      • [context omit: aa000001]
      • [context replace: aa000001]
    › • user: second
      (4/4) [all]
    ");
}
