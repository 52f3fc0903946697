use super::*;
use crate::modes::interactive::components::Component;
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::test_support::{plain, styled, theme};
use serde_json::json;

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: args,
        ..ToolCall::default()
    }
}

fn ok(text: &str) -> ToolResultView {
    ToolResultView {
        content: vec![UserBlock::text(text)],
        details: None,
        is_error: false,
    }
}

fn show(state: &ToolExecutionState, width: usize) -> String {
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys).with_home(Some("/home/user"));
    plain(&state.render(width, &ui), width)
}

fn numbered(n: usize) -> String {
    (1..=n)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn read_shows_path_range_and_first_lines() {
    let state = ToolExecutionState::new(call(
        "read",
        json!({"path": "/home/user/proj/notes.txt", "offset": 5, "limit": 20}),
    ))
    .with_result(ok(&numbered(14)));
    insta::assert_snapshot!(show(&state, 50), @r"


    read ~/proj/notes.txt:5-24

    line 1
    line 2
    line 3
    line 4
    line 5
    line 6
    line 7
    line 8
    line 9
    line 10
    ... (4 more lines, ctrl+o to expand)
    ");
}

#[test]
fn expanded_read_shows_everything_with_truncation_note() {
    let mut result = ok(&numbered(3));
    result.details = Some(
        json!({"truncation": {"truncated": true, "truncatedBy": "lines", "outputLines": 3, "totalLines": 2500, "maxLines": 2000}}),
    );
    let mut state =
        ToolExecutionState::new(call("read", json!({"path": "a.txt"}))).with_result(result);
    state.expanded = true;
    insta::assert_snapshot!(show(&state, 60), @r"


    read a.txt

    line 1
    line 2
    line 3
    [Truncated: showing 3 of 2500 lines (2000 line limit)]
    ");
}

#[test]
fn read_of_a_rust_file_is_highlighted() {
    let state = ToolExecutionState::new(call("read", json!({"path": "src/lib.rs"})))
        .with_result(ok("pub fn f() {}"));
    let t = theme();
    let keys = Keybindings::defaults();
    let lines = state.render(40, &Ui::new(&t, &keys));
    insta::assert_snapshot!(styled(&lines[4]), @" ⟨bg=#24302A⟩pub⟨fg=#C792EA bg=#24302A⟩ ⟨bg=#24302A⟩fn⟨fg=#C792EA bg=#24302A⟩ ⟨bg=#24302A⟩f⟨fg=#82AAFF bg=#24302A⟩()⟨fg=#A6ACCD bg=#24302A⟩ ⟨bg=#24302A⟩{}⟨fg=#A6ACCD bg=#24302A⟩                          ⟨bg=#24302A⟩");
}

#[test]
fn skill_and_context_file_reads_stay_compact_until_expanded() {
    let mut skill = ToolExecutionState::new(call(
        "read",
        json!({"path": "/x/skills/pdf-tools/SKILL.md"}),
    ))
    .with_result(ok("---\nname: pdf"));
    insta::assert_snapshot!(show(&skill, 50), @r"


    [skill] pdf-tools (ctrl+o to expand)
    ");
    skill.expanded = true;
    insta::assert_snapshot!(show(&skill, 50), @r"


    read /x/skills/pdf-tools/SKILL.md

    ---
    name: pdf
    ");
    let agents = ToolExecutionState::new(call("read", json!({"path": "AGENTS.md"})))
        .with_result(ok("rules"));
    insta::assert_snapshot!(show(&agents, 50), @r"


    read resource AGENTS.md (ctrl+o to expand)
    ");
}

#[test]
fn edit_shows_the_coloured_diff() {
    let mut result = ok("Successfully replaced text in notes.txt.");
    result.details =
        Some(json!({"diff": " 1 note one\n 2 note two\n+3 note three", "firstChangedLine": 3}));
    let state = ToolExecutionState::new(call("edit", json!({"path": "notes.txt", "edits": []})))
        .with_result(result);
    insta::assert_snapshot!(show(&state, 40), @r"


    edit notes.txt

     1 note one
     2 note two
    +3 note three
    ");
}

#[test]
fn failed_edit_shows_the_error_on_a_red_panel() {
    let state = ToolExecutionState::new(call("edit", json!({"path": "a.txt"})))
        .with_result(ToolResultView::error("Could not find the exact text in a.txt. The old text must match exactly including all whitespace and newlines."));
    insta::assert_snapshot!(show(&state, 40), @r"


    edit a.txt

    Could not find the exact text in
    a.txt. The old text must match exactly
    including all whitespace and newlines.
    ");
    let t = theme();
    let keys = Keybindings::defaults();
    let lines = state.render(40, &Ui::new(&t, &keys));
    assert_eq!(lines[1].spans[0].style.bg, t.bg(ThemeToken::ToolErrorBg).bg);
}

#[test]
fn write_previews_content_while_pending() {
    let mut state = ToolExecutionState::new(call(
        "write",
        json!({"path": "out.py", "content": numbered(12)}),
    ));
    state.args_complete = false;
    insta::assert_snapshot!(show(&state, 50), @r"


    write out.py

    line 1
    line 2
    line 3
    line 4
    line 5
    line 6
    line 7
    line 8
    line 9
    line 10
    ... (2 more lines, 12 total, ctrl+o to expand)
    ");
    let t = theme();
    let keys = Keybindings::defaults();
    let lines = state.render(50, &Ui::new(&t, &keys));
    assert_eq!(
        lines[1].spans[0].style.bg,
        t.bg(ThemeToken::ToolPendingBg).bg
    );
    let bad = ToolExecutionState::new(call("write", json!({"path": "x", "content": 5})));
    insta::assert_snapshot!(show(&bad, 50), @r"


    write x

    [invalid content arg - expected string]
    ");
}

#[test]
fn bash_collapsed_shows_the_output_tail_and_timing() {
    let mut result = ok(&numbered(9));
    result.details = Some(
        json!({"fullOutputPath": "/tmp/pi-bash-1.log", "truncation": {"truncated": true, "truncatedBy": "lines", "outputLines": 9, "totalLines": 4000}}),
    );
    let mut state =
        ToolExecutionState::new(call("bash", json!({"command": "seq 4000", "timeout": 30})))
            .with_result(result);
    state.elapsed = Some(Duration::from_millis(1234));
    insta::assert_snapshot!(show(&state, 50), @r"


    $ seq 4000 (timeout 30s)

    ... (4 earlier lines, ctrl+o to expand)
    line 5
    line 6
    line 7
    line 8
    line 9

    [Full output: /tmp/pi-bash-1.log. Truncated:
    showing 9 of 4000 lines]

    Took 1.2s
    ");
    state.expanded = true;
    insta::assert_snapshot!(show(&state, 50), @r"


    $ seq 4000 (timeout 30s)

    line 1
    line 2
    line 3
    line 4
    line 5
    line 6
    line 7
    line 8
    line 9

    [Full output: /tmp/pi-bash-1.log. Truncated:
    showing 9 of 4000 lines]

    Took 1.2s
    ");
}

#[test]
fn running_bash_counts_wrapped_rows_and_says_elapsed() {
    let mut state = ToolExecutionState::new(call("bash", json!({"command": "wc -w notes.txt"})));
    state.result = Some(ok(
        "a very long output line that will wrap at narrow widths\nlast",
    ));
    state.partial = true;
    state.elapsed = Some(Duration::from_secs(3));
    insta::assert_snapshot!(show(&state, 20), @r"


    $ wc -w notes.txt

    a very long output
    line that will
    wrap at narrow
    widths
    last

    Elapsed 3.0s
    ");
}

#[test]
fn corpus_bash_call_matches_pi_layout() {
    let mut state = ToolExecutionState::new(call("bash", json!({"command": "wc -w notes.txt"})))
        .with_result(ok("6 notes.txt\n"));
    state.elapsed = Some(Duration::from_millis(20));
    insta::assert_snapshot!(show(&state, 40), @r"


    $ wc -w notes.txt

    6 notes.txt

    Took 0.0s
    ");
}

#[test]
fn ls_find_and_grep_call_lines_and_limits() {
    let mut ls_result = ok(&numbered(25));
    ls_result.details = Some(json!({"entryLimitReached": 500}));
    let ls = ToolExecutionState::new(call("ls", json!({"path": "/home/user/src", "limit": 500})))
        .with_result(ls_result);
    insta::assert_snapshot!(show(&ls, 50), @r"


    ls ~/src (limit 500)

    line 1
    line 2
    line 3
    line 4
    line 5
    line 6
    line 7
    line 8
    line 9
    line 10
    line 11
    line 12
    line 13
    line 14
    line 15
    line 16
    line 17
    line 18
    line 19
    line 20
    ... (5 more lines, ctrl+o to expand)
    [Truncated: 500 entries limit]
    ");
    let find = ToolExecutionState::new(call("find", json!({"pattern": "*.rs"})))
        .with_result(ok("src/a.rs\nsrc/b.rs"));
    insta::assert_snapshot!(show(&find, 50), @r"


    find *.rs in .

    src/a.rs
    src/b.rs
    ");
    let mut grep_result = ok(&numbered(16));
    grep_result.details =
        Some(json!({"linesTruncated": true, "truncation": {"truncated": true, "maxBytes": 51200}}));
    let grep = ToolExecutionState::new(call(
        "grep",
        json!({"pattern": "fn main", "path": "src", "glob": "*.rs", "limit": 50}),
    ))
    .with_result(grep_result);
    insta::assert_snapshot!(show(&grep, 50), @r"


    grep /fn main/ in src (*.rs) limit 50

    line 1
    line 2
    line 3
    line 4
    line 5
    line 6
    line 7
    line 8
    line 9
    line 10
    line 11
    line 12
    line 13
    line 14
    line 15
    ... (1 more lines, ctrl+o to expand)
    [Truncated: 50.0KB limit, some lines truncated]
    ");
}

#[test]
fn unknown_tools_show_json_arguments_and_output() {
    let state = ToolExecutionState::new(call("web_search", json!({"query": "rust tui", "max": 3})))
        .with_result(ok("3 results"));
    insta::assert_snapshot!(show(&state, 40), @r#"


    web_search

    {
      "query": "rust tui",
      "max": 3
    }
    3 results
    "#);
}

#[test]
fn invalid_arguments_are_marked() {
    let state = ToolExecutionState::new(call("read", json!({"path": 42})));
    insta::assert_snapshot!(show(&state, 40), @r"


    read [invalid arg]
    ");
    let pending = ToolExecutionState::new(call("bash", json!({})));
    insta::assert_snapshot!(show(&pending, 40), @r"


    $ ...
    ");
}

#[test]
fn hostile_output_is_sanitised_and_narrow_widths_hold() {
    let state = ToolExecutionState::new(call("bash", json!({"command": "cat bin\u{1b}[2J"})))
        .with_result(ok(
            "\u{1b}[31mred\u{1b}[0m\r\n\u{0}bin\u{600}ary\t中文🇺🇸 👨‍👩‍👧",
        ));
    insta::assert_snapshot!(show(&state, 20), @r"


    $ cat bin

    red
    binary   中文🇺🇸 👨‍👩‍👧
    ");
    for width in 1..30 {
        show(&state, width);
    }
}

#[test]
fn byte_limits_are_printed_with_pis_format_size() {
    // 1280 bytes is exactly 1.25KB: pi's `toFixed(1)` rounds the tie up, to 1.3KB.
    let mut result = ok("a\nb");
    result.details = Some(json!({"truncation": {"truncated": true, "maxBytes": 1280}}));
    let ls = ToolExecutionState::new(call("ls", json!({"path": "src"}))).with_result(result);
    let shown = show(&ls, 50);
    assert!(shown.contains("[Truncated: 1.3KB limit]"), "{shown}");
}

#[test]
fn an_extensions_lines_fill_pis_tool_box_with_fallbacks() {
    // The call drawn by the extension, no result yet.
    let mut state = ToolExecutionState::new(call("todo", json!({"action": "list"})));
    state.host = Some(HostToolLines {
        self_shell: false,
        call: Some(vec!["\x1b[1mtodo\x1b[22m list".into()]),
        result: None,
    });
    assert_eq!(
        show(&state, 30)
            .split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>(),
        ["", "", " todo list", ""]
    );
    // The result without a renderer: pi's fallback, the result's text.
    state = state.with_result(ok("2 todos"));
    state.host = Some(HostToolLines {
        self_shell: false,
        call: None,
        result: None,
    });
    assert_eq!(
        show(&state, 30)
            .split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>(),
        ["", "", " todo", " 2 todos", ""]
    );
    // renderShell "self": the lines without the box.
    state.host = Some(HostToolLines {
        self_shell: true,
        call: Some(vec!["● todo".into()]),
        result: Some(vec!["  └ 2 todos".into()]),
    });
    assert_eq!(
        show(&state, 30)
            .split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>(),
        ["", "● todo", "  └ 2 todos"]
    );
}

fn png_result(width: u32, height: u32) -> ToolResultView {
    use base64::Engine;
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(width.to_be_bytes());
    png.extend(height.to_be_bytes());
    png.extend([8, 2, 0, 0, 0]);
    ToolResultView {
        content: vec![
            UserBlock::text("Read image file [image/png]"),
            UserBlock::Image(crate::ai::message::ImageContent {
                data: base64::engine::general_purpose::STANDARD.encode(png),
                mime_type: "image/png".into(),
                extra: Default::default(),
            }),
        ],
        details: None,
        is_error: false,
    }
}

#[test]
fn images_in_results_are_pis_note_where_the_terminal_cannot_draw_them() {
    let state = ToolExecutionState::new(call("read", json!({"path": "/home/user/pic.png"})))
        .with_result(png_result(40, 20));
    insta::assert_snapshot!(show(&state, 50), @r"


    read ~/pic.png

    Read image file [image/png]
    [Image: [image/png] 40x20]
    ");
}

#[test]
fn images_in_results_are_drawn_below_the_box_after_an_empty_row() {
    use crate::modes::interactive::images::{ImageConfig, Protocol, row_has_image};
    let state = ToolExecutionState::new(call("read", json!({"path": "/home/user/pic.png"})))
        .with_result(png_result(40, 20));
    let t = theme();
    let keys = Keybindings::defaults();
    let ui = Ui::new(&t, &keys).with_images(Some(ImageConfig {
        protocol: Protocol::Kitty,
        width_cells: 60,
    }));
    let lines = state.render(80, &ui);
    let text = plain(&lines, 80);
    // The note is gone from the box; the image takes 15 rows (40x20 at 60 columns of
    // 9x18-pixel cells) after one empty row, as in pi.
    assert!(!text.contains("[Image:"), "{text}");
    let encoded: Vec<String> = lines
        .iter()
        .map(|l| crate::modes::interactive::ansi::encode_line(l, 80))
        .collect();
    let image_row = encoded.iter().position(|r| row_has_image(r)).unwrap();
    assert_eq!(image_row, encoded.len() - 1);
    assert!(
        lines[image_row - 15]
            .spans
            .iter()
            .all(|s| s.content.trim().is_empty())
    );
    let box_end = lines.len() - 17;
    assert!(
        text.lines()
            .nth(box_end)
            .is_some_and(|l| l.trim().is_empty())
    );
    // Narrow terminals: at most the width less 2.
    let narrow = state.render(30, &ui);
    let last = crate::modes::interactive::ansi::encode_line(&narrow[narrow.len() - 1], 30);
    let written = crate::modes::interactive::images::expand(&last).into_owned();
    assert!(
        written.starts_with("\x1b[6A\x1b_Ga=T,f=100,q=2,C=1,c=28,r=7,"),
        "{written:?}"
    );
    // Not drawn (showImages off): the note again.
    let off = Ui::new(&t, &keys);
    assert!(plain(&state.render(80, &off), 80).contains("[Image: [image/png] 40x20]"));
}
