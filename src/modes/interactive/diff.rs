//! Renders the diff text the `edit` tool stores in `details.diff` (pi's format: one
//! line per row, `+N text` added, `-N text` removed, ` N text` context, ` ... ` for
//! skipped lines, numbers right-aligned) with the `toolDiff*` colours.
//!
//! When exactly one line is replaced by one line, the words that changed are shown in
//! reverse video, so a one-character fix is easy to spot. Output lines are not wrapped;
//! the caller wraps them to its width. This module does not compute diffs of files.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};

use super::text::sanitize;
use super::theme::{Theme, ThemeToken};

/// Lines longer than this are not diffed word by word (it would cost more than it helps).
const MAX_INTRALINE_LEN: usize = 2_000;

/// One parsed diff row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row<'a> {
    Added {
        num: &'a str,
        text: &'a str,
    },
    Removed {
        num: &'a str,
        text: &'a str,
    },
    Context {
        num: &'a str,
        text: &'a str,
    },
    /// Anything else (the `...` marker, free text): shown as context.
    Other(&'a str),
}

fn parse_row(line: &str) -> Row<'_> {
    let Some(prefix) = line.chars().next() else {
        return Row::Other(line);
    };
    if !matches!(prefix, '+' | '-' | ' ') {
        return Row::Other(line);
    }
    let rest = &line[1..];
    let digits_start = rest.len() - rest.trim_start_matches(' ').len();
    let after_spaces = &rest[digits_start..];
    let digits_len = after_spaces.bytes().take_while(u8::is_ascii_digit).count();
    let num = &rest[..digits_start + digits_len];
    let Some(text) = rest[digits_start + digits_len..].strip_prefix(' ') else {
        return Row::Other(line);
    };
    if digits_len == 0 && prefix != ' ' {
        return Row::Other(line);
    }
    match prefix {
        '+' => Row::Added { num, text },
        '-' => Row::Removed { num, text },
        _ if digits_len == 0 => Row::Other(line),
        _ => Row::Context { num, text },
    }
}

/// Renders pi's edit diff text as coloured lines (one per input line).
pub fn render_diff(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    let clean = sanitize(diff);
    let rows: Vec<Row<'_>> = clean.split('\n').map(parse_row).collect();
    let added = theme.fg(ThemeToken::ToolDiffAdded);
    let removed = theme.fg(ThemeToken::ToolDiffRemoved);
    let context = theme.fg(ThemeToken::ToolDiffContext);
    let mut out = Vec::with_capacity(rows.len());
    let mut i = 0;
    while i < rows.len() {
        match &rows[i] {
            Row::Removed { .. } => {
                let removed_end = i + rows[i..]
                    .iter()
                    .take_while(|r| matches!(r, Row::Removed { .. }))
                    .count();
                let added_end = removed_end
                    + rows[removed_end..]
                        .iter()
                        .take_while(|r| matches!(r, Row::Added { .. }))
                        .count();
                if removed_end - i == 1
                    && added_end - removed_end == 1
                    && let (
                        Row::Removed {
                            num: old_num,
                            text: old,
                        },
                        Row::Added {
                            num: new_num,
                            text: new,
                        },
                    ) = (&rows[i], &rows[removed_end])
                    && old.len() <= MAX_INTRALINE_LEN
                    && new.len() <= MAX_INTRALINE_LEN
                {
                    let (old_spans, new_spans) = word_diff(old, new, removed, added);
                    out.push(row_line('-', old_num, old_spans, removed));
                    out.push(row_line('+', new_num, new_spans, added));
                } else {
                    for row in &rows[i..added_end] {
                        match row {
                            Row::Removed { num, text } => {
                                out.push(row_line(
                                    '-',
                                    num,
                                    vec![Span::styled(text.to_string(), removed)],
                                    removed,
                                ));
                            }
                            Row::Added { num, text } => {
                                out.push(row_line(
                                    '+',
                                    num,
                                    vec![Span::styled(text.to_string(), added)],
                                    added,
                                ));
                            }
                            _ => {}
                        }
                    }
                }
                i = added_end;
            }
            Row::Added { num, text } => {
                out.push(row_line(
                    '+',
                    num,
                    vec![Span::styled(text.to_string(), added)],
                    added,
                ));
                i += 1;
            }
            Row::Context { num, text } => {
                out.push(row_line(
                    ' ',
                    num,
                    vec![Span::styled(text.to_string(), context)],
                    context,
                ));
                i += 1;
            }
            Row::Other(text) => {
                out.push(Line::from(Span::styled(text.to_string(), context)));
                i += 1;
            }
        }
    }
    out
}

fn row_line(prefix: char, num: &str, mut body: Vec<Span<'static>>, style: Style) -> Line<'static> {
    let mut spans = vec![Span::styled(format!("{prefix}{num} "), style)];
    spans.append(&mut body);
    Line::from(spans)
}

/// Old and new line with the changed words in reverse video. Leading whitespace of the
/// first change is not highlighted (indentation changes would light up a whole block).
fn word_diff(
    old: &str,
    new: &str,
    old_style: Style,
    new_style: Style,
) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
    let diff = TextDiff::from_words(old, new);
    let mut old_spans = Vec::new();
    let mut new_spans = Vec::new();
    let mut first_removed = true;
    let mut first_added = true;
    for change in diff.iter_all_changes() {
        let value = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push(&mut old_spans, value, old_style);
                push(&mut new_spans, value, new_style);
            }
            ChangeTag::Delete => emphasise(&mut old_spans, value, old_style, &mut first_removed),
            ChangeTag::Insert => emphasise(&mut new_spans, value, new_style, &mut first_added),
        }
    }
    (old_spans, new_spans)
}

fn emphasise(spans: &mut Vec<Span<'static>>, value: &str, style: Style, first: &mut bool) {
    let mut value = value;
    if *first {
        let trimmed = value.trim_start();
        push(spans, &value[..value.len() - trimmed.len()], style);
        value = trimmed;
        *first = false;
    }
    push(spans, value, style.add_modifier(Modifier::REVERSED));
}

/// Appends text, merging with the previous span when the style is the same.
fn push(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => spans.push(Span::styled(text.to_string(), style)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, styled, theme};

    #[test]
    fn parses_pi_diff_rows() {
        assert_eq!(
            parse_row("+12 new"),
            Row::Added {
                num: "12",
                text: "new"
            }
        );
        assert_eq!(
            parse_row("-  3   indented"),
            Row::Removed {
                num: "  3",
                text: "  indented"
            }
        );
        assert_eq!(
            parse_row("  7 ctx"),
            Row::Context {
                num: " 7",
                text: "ctx"
            }
        );
        assert_eq!(parse_row("    ..."), Row::Other("    ..."));
        assert_eq!(parse_row("+1 "), Row::Added { num: "1", text: "" });
        assert_eq!(parse_row("plain"), Row::Other("plain"));
    }

    #[test]
    fn renders_the_corpus_edit_diff_with_word_emphasis() {
        let t = theme();
        let lines = render_diff("-1 hello wrld\n+1 hello world\n 2 second line", &t);
        insta::assert_snapshot!(plain(&lines, 40), @r"
        -1 hello wrld
        +1 hello world
         2 second line
        ");
        let dump: Vec<String> = lines.iter().map(styled).collect();
        insta::assert_snapshot!(dump.join("\n"), @r"
        -1 ⟨fg=#E06C75⟩hello ⟨fg=#E06C75⟩wrld⟨fg=#E06C75 REVERSED⟩
        +1 ⟨fg=#98C379⟩hello ⟨fg=#98C379⟩world⟨fg=#98C379 REVERSED⟩
         2 ⟨fg=#7F848E⟩second line⟨fg=#7F848E⟩
        ");
    }

    #[test]
    fn multi_line_replacements_are_listed_without_word_emphasis() {
        let t = theme();
        let diff = "   1 a\n-  2 b\n-  3 c\n+  2 B\n     ...\n+ 10 tail\n\tx";
        let lines = render_diff(diff, &t);
        insta::assert_snapshot!(plain(&lines, 40), @r"
           1 a
        -  2 b
        -  3 c
        +  2 B
             ...
        + 10 tail
           x
        ");
        assert!(lines.iter().all(|l| {
            l.spans
                .iter()
                .all(|s| !s.style.add_modifier.contains(Modifier::REVERSED))
        }));
    }

    #[test]
    fn indentation_changes_do_not_highlight_the_indent() {
        let t = theme();
        let lines = render_diff("-1 foo(x)\n+1     foo(y)", &t);
        insta::assert_snapshot!(styled(&lines[1]), @"+1 ⟨fg=#98C379⟩    ⟨fg=#98C379⟩foo(y)⟨fg=#98C379 REVERSED⟩");
    }
}
