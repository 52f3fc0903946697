use super::*;
use crate::modes::interactive::test_support::{plain, styled, theme};
use crate::modes::interactive::text::line_width;
use proptest::prelude::*;

fn md(text: &str, width: usize) -> String {
    plain(
        &render_markdown(text, width, &theme(), &MarkdownStyle::default()),
        width,
    )
}

#[test]
fn headings_paragraphs_and_rules() {
    let text = "# Title\n\nSome *emphasis* and **strong** and ~~gone~~ text that wraps around.\n\n### Third level\n---\nAfter the rule.";
    insta::assert_snapshot!(md(text, 30), @r"
    Title

    Some emphasis and strong and
    gone text that wraps around.

    ### Third level

    ──────────────────────────────

    After the rule.
    ");
}

#[test]
fn heading_and_inline_styles_use_theme_tokens() {
    let t = theme();
    let lines = render_markdown(
        "## Hi `code` [site](https://x.dev)",
        80,
        &t,
        &MarkdownStyle::default(),
    );
    insta::assert_snapshot!(styled(&lines[0]), @"Hi ⟨fg=#E5C07B BOLD⟩code⟨fg=#5FD7AF BOLD⟩ ⟨fg=#E5C07B BOLD⟩site⟨fg=#7AA2F7 BOLD | UNDERLINED⟩ (https://x.dev)⟨fg=#6B7079 BOLD⟩");
}

#[test]
fn links_show_their_url_unless_the_text_is_the_url() {
    let text = "[docs](https://pi.dev/docs), <https://pi.dev>, [me](mailto:me@x.org), <me@x.org>";
    insta::assert_snapshot!(md(text, 100), @"docs (https://pi.dev/docs), https://pi.dev, me (mailto:me@x.org), me@x.org");
}

#[test]
fn nested_lists_indent_each_level() {
    let text = "- first item that is long enough to wrap\n- second\n  - nested one\n  - nested two\n    1. deep\n    2. deeper\n- [ ] open task\n- [x] done task\n\n3. three\n4. four";
    insta::assert_snapshot!(md(text, 24), @r"
    - first item that is
    long enough to wrap
    - second
      - nested one
      - nested two
        1. deep
        2. deeper
    - [ ] open task
    - [x] done task

    3. three
    4. four
    ");
}

#[test]
fn loose_lists_keep_blank_lines_between_items() {
    let text = "1. one\n\n   more of one\n2. two";
    insta::assert_snapshot!(md(text, 40), @r"
    1. one

       more of one

    2. two
    ");
}

#[test]
fn paragraph_followed_by_list_without_blank_line_stays_tight() {
    insta::assert_snapshot!(md("Steps:\n- a\n- b\n\nDone.", 40), @r"
    Steps:
    - a
    - b

    Done.
    ");
}

#[test]
fn block_quotes_prefix_every_line() {
    let text = "> quoted text that is long enough to wrap\n>\n> second paragraph\n> - a list";
    insta::assert_snapshot!(md(text, 20), @r"
    │ quoted text that
    │ is long enough to
    │ wrap
    │
    │ second paragraph
    │ - a list
    ");
}

#[test]
fn code_blocks_are_fenced_indented_and_highlighted() {
    let text = "```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n```\nplain\n```";
    let t = theme();
    let lines = render_markdown(text, 40, &t, &MarkdownStyle::default());
    insta::assert_snapshot!(plain(&lines, 40), @r#"
    ```rust
      fn main() {
          println!("hi");
      }
    ```

    ```
      plain
    ```
    "#);
    insta::assert_snapshot!(styled(&lines[1]), @"  fn⟨fg=#C792EA⟩ main⟨fg=#82AAFF⟩()⟨fg=#A6ACCD⟩ {⟨fg=#A6ACCD⟩");
}

#[test]
fn long_code_lines_wrap_inside_the_indent() {
    insta::assert_snapshot!(md("```\nabcdefghijklmnop\n```", 10), @r"
    ```
      abcdefgh
      ijklmnop
    ```
    ");
}

#[test]
fn tables_fit_the_width_and_wrap_cells() {
    let text = "| Name | Description |\n|:-----|------------:|\n| pi | a coding agent written in TypeScript |\n| pi-rs | the same in Rust |";
    insta::assert_snapshot!(md(text, 60), @r"
    ┌───────┬──────────────────────────────────────┐
    │ Name  │                          Description │
    ├───────┼──────────────────────────────────────┤
    │ pi    │ a coding agent written in TypeScript │
    ├───────┼──────────────────────────────────────┤
    │ pi-rs │                     the same in Rust │
    └───────┴──────────────────────────────────────┘
    ");
    insta::assert_snapshot!(md(text, 30), @r"
    ┌───────┬────────────────────┐
    │ Name  │        Description │
    ├───────┼────────────────────┤
    │ pi    │     a coding agent │
    │       │         written in │
    │       │         TypeScript │
    ├───────┼────────────────────┤
    │ pi-rs │   the same in Rust │
    └───────┴────────────────────┘
    ");
}

#[test]
fn cjk_and_emoji_tables_never_overflow_narrow_widths() {
    let text = "| 名前 | 説明 |\n|---|---|\n| 🇯🇵 日本 | 東京は首都です 👨‍👩‍👧 |";
    insta::assert_snapshot!(md(text, 20), @r"
    ┌──────┬───────────┐
    │ 名前 │ 説明      │
    ├──────┼───────────┤
    │ 🇯🇵   │ 東京は首  │
    │ 日本 │ 都です 👨‍👩‍👧 │
    └──────┴───────────┘
    ");
    insta::assert_snapshot!(md(text, 9), @r"
    名前 |
    説明
    🇯🇵 日本 |
    東京は首
    都です 👨‍👩‍👧
    ");
}

#[test]
fn raw_html_and_escapes_render_as_text() {
    insta::assert_snapshot!(md("<div>\nhi\n</div>\n\na <b>bold</b> \u{1b}[31mred", 40), @r"
    <div>
    hi
    </div>

    a <b>bold</b> red
    ");
}

#[test]
fn whitespace_only_text_renders_nothing() {
    assert!(render_markdown("  \n\n ", 40, &theme(), &MarkdownStyle::default()).is_empty());
}

#[test]
fn base_style_applies_under_everything() {
    let t = theme();
    let base = t
        .fg(crate::modes::interactive::theme::ThemeToken::ThinkingText)
        .add_modifier(ratatui::style::Modifier::ITALIC);
    let lines = render_markdown("thinking **hard**", 80, &t, &MarkdownStyle::with_base(base));
    insta::assert_snapshot!(styled(&lines[0]), @"thinking ⟨fg=#8A8F98 ITALIC⟩hard⟨fg=#8A8F98 BOLD | ITALIC⟩");
}

#[test]
fn streaming_rerenders_only_the_growing_block() {
    let t = theme();
    let style = MarkdownStyle::default();
    let mut cache = MarkdownCache::default();
    let head = "# Title\n\nFirst paragraph.\n\n```rust\nlet x = 1;\n```\n\n";
    let first = cache.render(&format!("{head}Grow"), 40, &t, &style);
    assert_eq!(cache.cached_blocks(), 4);
    let keys_before: Vec<u64> = cache.blocks.keys().copied().collect();
    let second = cache.render(&format!("{head}Growing text"), 40, &t, &style);
    let reused = keys_before
        .iter()
        .filter(|k| cache.blocks.contains_key(k))
        .count();
    assert_eq!(
        reused, 3,
        "title, paragraph and code block come from the cache"
    );
    assert_eq!(first[..first.len() - 1], second[..second.len() - 1]);
    assert_eq!(
        second,
        render_markdown(&format!("{head}Growing text"), 40, &t, &style)
    );
}

fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,12}",
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("# ".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("> ".to_string()),
        Just("**".to_string()),
        Just("`".to_string()),
        Just("\n```py\n".to_string()),
        Just("\n| a | 中文 |\n|---|---|\n| 🇺🇸 | b |\n".to_string()),
        Just("[l](http://x)".to_string()),
        Just("👨‍👩‍👧".to_string()),
        Just("\t".to_string()),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn rendered_markdown_never_exceeds_the_width(text in markdownish(), width in 1usize..200) {
        let t = theme();
        for line in render_markdown(&text, width, &t, &MarkdownStyle::default()) {
            prop_assert!(line_width(&line) <= width);
        }
    }
}

#[test]
fn cjk_table_fills_a_terminal_buffer_exactly() {
    let text = "| 名前 | 説明 |\n|---|---|\n| 🇯🇵 日本 | 東京は首都です |";
    let lines = render_markdown(text, 20, &theme(), &MarkdownStyle::default());
    insta::assert_snapshot!(crate::modes::interactive::test_support::buffer(&lines, 20), @r"
    |┌──────┬───────────┐|
    |│ 名前 │ 説明      │|
    |├──────┼───────────┤|
    |│ 🇯🇵   │ 東京は首  │|
    |│ 日本 │ 都です    │|
    |└──────┴───────────┘|
    ");
}

proptest! {
    #[test]
    fn streaming_in_pieces_renders_like_one_pass(text in markdownish(), cuts in prop::collection::vec(0usize..400, 0..6), width in 10usize..100) {
        let t = theme();
        let style = MarkdownStyle::default();
        let mut cache = MarkdownCache::default();
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).filter(|c| text.is_char_boundary(*c)).collect();
        points.sort();
        for p in points {
            cache.render(&text[..p], width, &t, &style);
        }
        prop_assert_eq!(cache.render(&text, width, &t, &style), render_markdown(&text, width, &t, &style));
    }
}

#[test]
fn single_newlines_in_a_paragraph_stay_line_breaks_as_in_pi() {
    let text = "First line\nsecond line, long enough to wrap here\n- item one\n  continued\n\n> quoted\n> again";
    let out = md(text, 30);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "First line");
    assert!(lines[1].starts_with("second line"), "{out}");
    assert!(out.contains("continued"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start_matches(['│', ' ']).starts_with("again")),
        "{out}"
    );
}

#[test]
fn list_item_text_goes_on_at_the_margin_as_in_pi() {
    // pi puts the bullet in front of the item's text and then splits it at newlines and
    // wraps it: what follows the first line starts at the margin (quote borders stay).
    let text =
        "- first line\nsecond line\n1. one\n   two, long enough to wrap here\n\n> - q1\n>   q2";
    insta::assert_snapshot!(md(text, 24), @r"
    - first line
    second line
    1. one
    two, long enough to wrap
    here

    │ - q1
    │ q2
    ");
}
