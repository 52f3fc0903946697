use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines.iter().map(line_text).collect()
}

#[test]
fn widths_of_wide_and_combined_graphemes() {
    let cases = [
        ("abc", 3),
        ("中文", 4),
        ("🇺🇸", 2),
        ("🇺", 2),
        ("👨\u{200d}👩\u{200d}👧", 2),
        ("❤\u{fe0f}", 2),
        ("e\u{301}", 1),
        ("a\tb", 2 + TAB_WIDTH),
        ("\u{1b}", 0),
        ("👍🏽", 2),
    ];
    let got: Vec<(&str, usize)> = cases.iter().map(|(s, _)| (*s, str_width(s))).collect();
    assert_eq!(got, cases.to_vec());
}

#[test]
fn sanitize_strips_escapes_controls_and_format_chars_but_keeps_emoji_joiners() {
    let input = "\u{1b}[31mred\u{1b}[0m \u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{1b}\\ a\u{0}b\r\nc\rd\t|\u{600}\u{202e}x 👨\u{200d}👩";
    assert_eq!(sanitize(input), "red link ab\ncd   |x 👨\u{200d}👩");
}

#[test]
fn sanitize_borrows_clean_text() {
    assert!(matches!(sanitize("plain ✓ text\nnext"), Cow::Borrowed(_)));
}

#[test]
fn single_line_sanitising_collapses_breaks() {
    assert_eq!(sanitize_single_line("  a\n\tb   c \r\n"), "a b c");
}

#[test]
fn truncation_respects_wide_characters() {
    assert_eq!(truncate_to_width("hello world", 8, "..."), "hello...");
    assert_eq!(truncate_to_width("中文中文中文", 7, "…"), "中文中…");
    assert_eq!(truncate_to_width("short", 8, "..."), "short");
    assert_eq!(truncate_to_width("abcdef", 2, "..."), "..");
}

#[test]
fn wrapping_breaks_at_spaces_and_drops_them() {
    let lines = wrap_text("the quick brown fox jumps", 10, Style::default());
    assert_eq!(texts(&lines), ["the quick", "brown fox", "jumps"]);
}

#[test]
fn wrapping_splits_words_longer_than_a_line() {
    let lines = wrap_text("abcdefghijkl mn", 5, Style::default());
    assert_eq!(texts(&lines), ["abcde", "fghij", "kl mn"]);
}

#[test]
fn wrapping_keeps_indentation_and_styles_across_breaks() {
    let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
    let spans = [Span::raw("  lead "), Span::styled("bold words here", bold)];
    let lines = wrap_spans(&spans, 12, &WrapOptions::default());
    assert_eq!(texts(&lines), ["  lead bold", "words here"]);
    assert_eq!(lines[1].spans[0].style, bold);
}

#[test]
fn wrapping_uses_hanging_prefixes() {
    let opts = WrapOptions {
        first_prefix: vec![Span::raw("- ")],
        rest_prefix: vec![Span::raw("  ")],
    };
    let lines = wrap_spans(&[Span::raw("one two three four")], 9, &opts);
    assert_eq!(texts(&lines), ["- one two", "  three", "  four"]);
}

#[test]
fn wide_characters_wrap_without_overflow() {
    let lines = wrap_text("中文字符测试", 5, Style::default());
    assert_eq!(texts(&lines), ["中文", "字符", "测试"]);
    let narrow = wrap_text("中a", 1, Style::default());
    assert_eq!(texts(&narrow), ["?", "a"]);
}

#[test]
fn empty_input_gives_one_empty_line() {
    assert_eq!(texts(&wrap_text("", 10, Style::default())), [""]);
}

#[test]
fn left_right_alignment_cuts_the_right_side_first() {
    let line = align_left_right(Line::from("left"), Line::from("right"), 12, 2);
    assert_eq!(line_text(&line), "left   right");
    let cut = align_left_right(Line::from("left"), Line::from("model-name"), 10, 2);
    assert_eq!(line_text(&cut), "left  mode");
    let gone = align_left_right(Line::from("leftleft"), Line::from("x"), 9, 2);
    assert_eq!(line_text(&gone), "leftleft");
}

fn unicode_text() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        "[a-z]{1,8}",
        Just(" ".to_string()),
        Just("  ".to_string()),
        Just("\t".to_string()),
        Just("中文".to_string()),
        Just("🇺🇸".to_string()),
        Just("🇺".to_string()),
        Just("👨\u{200d}👩\u{200d}👧".to_string()),
        Just("e\u{301}".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\u{600}".to_string()),
        Just("\u{a0}".to_string()),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn wrapped_lines_never_exceed_the_width(text in unicode_text(), width in 1usize..200) {
        let clean = sanitize(&text);
        for line in wrap_text(&clean, width, Style::default()) {
            prop_assert!(line_width(&line) <= width, "{:?} at {}", line_text(&line), width);
        }
    }

    #[test]
    fn prefixed_wrapping_never_exceeds_the_width(text in unicode_text(), width in 1usize..60) {
        let clean = sanitize(&text);
        let opts = WrapOptions { first_prefix: vec![Span::raw("│ 12. ")], rest_prefix: vec![Span::raw("│     ")] };
        for line in wrap_spans(&[Span::raw(clean.as_ref())], width, &opts) {
            prop_assert!(line_width(&line) <= width);
        }
    }

    #[test]
    fn wrapping_loses_no_visible_text(text in "[a-z ]{0,60}", width in 1usize..30) {
        let lines = wrap_text(&text, width, Style::default());
        let joined: String = lines.iter().map(line_text).collect::<Vec<_>>().join("");
        let squash = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
        prop_assert_eq!(squash(&joined), squash(&text));
    }

    #[test]
    fn truncation_never_exceeds_the_width(text in unicode_text(), width in 0usize..50) {
        let clean = sanitize(&text);
        prop_assert!(str_width(&truncate_to_width(&clean, width, "...")) <= width);
    }
}
