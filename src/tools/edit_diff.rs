//! The text side of the `edit` tool: line-ending and BOM handling, pi's tolerant matching,
//! applying several replacements against the original text, and the numbered diff pi
//! stores in `details.diff`. Pure functions over strings; the tool itself (file access,
//! serialization of concurrent edits) lives in `edit`.
//!
//! Matching: every `oldText` is looked up in the original content, exactly first. When an
//! edit only matches after normalization (NFKC, trailing whitespace removed per line, curly
//! quotes, Unicode dashes and spaces made ASCII), all edits are applied to the normalized
//! content, as pi does: the file is written back normalized. Uniqueness is always counted
//! on normalized text.

use std::borrow::Cow;
use std::cell::OnceCell;

use icu_normalizer::ComposingNormalizerBorrowed;

use super::js::{js_number_to_string, js_trim_end};
use super::line_diff::{LineRun, LineTag, diff_lines};
use crate::ai::js::utf16_len;

/// One requested replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

/// The line ending a file mostly uses, judged by its first line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
}

pub fn detect_line_ending(content: &str) -> LineEnding {
    match (content.find("\r\n"), content.find('\n')) {
        (Some(crlf), Some(lf)) if crlf < lf => LineEnding::CrLf,
        _ => LineEnding::Lf,
    }
}

/// `\r\n` and lone `\r` become `\n`.
pub fn normalize_to_lf(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

pub fn restore_line_endings(text: &str, ending: LineEnding) -> Cow<'_, str> {
    match ending {
        LineEnding::Lf => Cow::Borrowed(text),
        LineEnding::CrLf => Cow::Owned(text.replace('\n', "\r\n")),
    }
}

/// Splits off a UTF-8 byte order mark: `(bom, rest)`.
pub fn strip_bom(content: &str) -> (&str, &str) {
    match content.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", content),
    }
}

/// pi's tolerant form of a text: NFKC, no trailing whitespace on any line, ASCII quotes,
/// dashes and spaces.
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let nfkc = ComposingNormalizerBorrowed::new_nfkc().normalize(text);
    let mut out = String::with_capacity(nfkc.len());
    for (i, line) in nfkc.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for c in js_trim_end(line).chars() {
            out.push(match c {
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
                '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
                '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
                other => other,
            });
        }
    }
    out
}

/// Why a set of replacements cannot be applied; `Display` is pi's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("{}", empty_message(.path, *.index, *.total))]
    EmptyOldText {
        path: String,
        index: usize,
        total: usize,
    },
    #[error("{}", not_found_message(.path, *.index, *.total))]
    NotFound {
        path: String,
        index: usize,
        total: usize,
    },
    #[error("{}", duplicate_message(.path, *.index, *.total, *.occurrences))]
    NotUnique {
        path: String,
        index: usize,
        total: usize,
        occurrences: i64,
    },
    #[error(
        "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
    )]
    Overlap {
        path: String,
        first: usize,
        second: usize,
    },
    #[error("{}", no_change_message(.path, *.total))]
    NoChange { path: String, total: usize },
}

fn empty_message(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!("oldText must not be empty in {path}.")
    } else {
        format!("edits[{index}].oldText must not be empty in {path}.")
    }
}

fn not_found_message(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        )
    }
}

fn duplicate_message(path: &str, index: usize, total: usize, occurrences: i64) -> String {
    let n = js_number_to_string(occurrences as f64);
    if total == 1 {
        format!(
            "Found {n} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {n} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        )
    }
}

fn no_change_message(path: &str, total: usize) -> String {
    if total == 1 {
        format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        )
    } else {
        format!("No changes made to {path}. The replacements produced identical content.")
    }
}

/// The original text the edits were matched against (normalized if any edit needed the
/// tolerant match) and the text after all replacements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedEdits {
    pub base: String,
    pub new: String,
}

/// Text searched for matches, with its normalized form computed at most once.
struct Haystack<'a> {
    text: &'a str,
    normalized: OnceCell<String>,
}

impl<'a> Haystack<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            normalized: OnceCell::new(),
        }
    }

    fn normalized(&self) -> &str {
        self.normalized
            .get_or_init(|| normalize_for_fuzzy_match(self.text))
    }

    /// Exact match first, then in normalized space: `(index, length, used_fuzzy)`.
    fn find(&self, needle: &str) -> Option<(usize, usize, bool)> {
        if let Some(index) = self.text.find(needle) {
            return Some((index, needle.len(), false));
        }
        let fuzzy_needle = normalize_for_fuzzy_match(needle);
        self.normalized()
            .find(&fuzzy_needle)
            .map(|index| (index, fuzzy_needle.len(), true))
    }

    /// Occurrences of the needle, counted in normalized space like JavaScript's
    /// `split(needle).length - 1` (an empty needle splits between UTF-16 units).
    fn count(&self, needle: &str) -> i64 {
        let fuzzy_needle = normalize_for_fuzzy_match(needle);
        let haystack = self.normalized();
        if fuzzy_needle.is_empty() {
            return utf16_len(haystack) as i64 - 1;
        }
        haystack.matches(fuzzy_needle.as_str()).count() as i64
    }
}

/// Applies all replacements to `content` (already LF-normalized, BOM removed). Every
/// `old_text` is matched against the original, must be unique and must not overlap
/// another; `path` is only used in error messages.
pub fn apply_edits(
    content: &str,
    edits: &[Replacement],
    path: &str,
) -> Result<AppliedEdits, EditError> {
    let total = edits.len();
    let edits: Vec<(String, String)> = edits
        .iter()
        .map(|e| {
            (
                normalize_to_lf(&e.old_text).into_owned(),
                normalize_to_lf(&e.new_text).into_owned(),
            )
        })
        .collect();
    if let Some(index) = edits.iter().position(|(old, _)| old.is_empty()) {
        return Err(EditError::EmptyOldText {
            path: path.to_string(),
            index,
            total,
        });
    }

    let original = Haystack::new(content);
    let any_fuzzy = edits
        .iter()
        .any(|(old, _)| matches!(original.find(old), Some((_, _, true))));
    let base = if any_fuzzy {
        original.normalized().to_string()
    } else {
        content.to_string()
    };

    let haystack = Haystack::new(&base);
    let mut matched: Vec<(usize, usize, usize)> = Vec::with_capacity(total);
    for (index, (old, _)) in edits.iter().enumerate() {
        let Some((at, length, _)) = haystack.find(old) else {
            return Err(EditError::NotFound {
                path: path.to_string(),
                index,
                total,
            });
        };
        let occurrences = haystack.count(old);
        if occurrences > 1 {
            return Err(EditError::NotUnique {
                path: path.to_string(),
                index,
                total,
                occurrences,
            });
        }
        matched.push((at, length, index));
    }
    matched.sort_by_key(|&(at, _, _)| at);
    for pair in matched.windows(2) {
        let (prev_at, prev_len, prev_index) = pair[0];
        let (at, _, index) = pair[1];
        if prev_at + prev_len > at {
            return Err(EditError::Overlap {
                path: path.to_string(),
                first: prev_index,
                second: index,
            });
        }
    }

    let mut new = String::with_capacity(base.len());
    let mut cursor = 0;
    for &(at, length, index) in &matched {
        // A normalized match points into the normalized base, which is `base` itself
        // whenever normalization was needed; `get` guards the impossible rest.
        let (Some(before), Some(_)) = (base.get(cursor..at), base.get(at..at + length)) else {
            return Err(EditError::NotFound {
                path: path.to_string(),
                index,
                total,
            });
        };
        new.push_str(before);
        new.push_str(&edits[index].1);
        cursor = at + length;
    }
    new.push_str(&base[cursor..]);
    if new == base {
        return Err(EditError::NoChange {
            path: path.to_string(),
            total,
        });
    }
    Ok(AppliedEdits { base, new })
}

/// The diff pi shows for an edit: changed lines as `-N old` / `+N new`, up to
/// `context_lines` unchanged lines ` N text` around them, and ` ... ` for skipped runs.
/// Numbers are padded to the widest line number. Also returns the first changed line
/// (numbered in the new text).
pub fn generate_diff_string(old: &str, new: &str, context_lines: usize) -> (String, Option<usize>) {
    let parts = line_parts(old, new);
    let width = count_split(old).max(count_split(new)).to_string().len();
    let mut out = DiffWriter {
        lines: Vec::new(),
        width,
        old_line: 1,
        new_line: 1,
    };
    let mut last_was_change = false;
    let mut first_changed_line = None;

    for (i, part) in parts.iter().enumerate() {
        let lines = &part.lines;
        match part.tag {
            LineTag::Added => {
                first_changed_line.get_or_insert(out.new_line);
                lines.iter().for_each(|line| out.added(line));
                last_was_change = true;
            }
            LineTag::Removed => {
                first_changed_line.get_or_insert(out.new_line);
                lines.iter().for_each(|line| out.removed(line));
                last_was_change = true;
            }
            LineTag::Equal => {
                let next_is_change = parts.get(i + 1).is_some_and(|p| p.tag != LineTag::Equal);
                match (last_was_change, next_is_change) {
                    (true, true) if lines.len() <= context_lines * 2 => out.context(lines),
                    (true, true) => {
                        out.context(&lines[..context_lines]);
                        out.skip(lines.len() - 2 * context_lines);
                        out.context(&lines[lines.len() - context_lines..]);
                    }
                    (true, false) => {
                        let shown = lines.len().min(context_lines);
                        out.context(&lines[..shown]);
                        out.skip(lines.len() - shown);
                    }
                    (false, true) => {
                        let skipped = lines.len().saturating_sub(context_lines);
                        out.skip(skipped);
                        out.context(&lines[skipped..]);
                    }
                    (false, false) => out.advance(lines.len()),
                }
                last_was_change = false;
            }
        }
    }
    (out.lines.join("\n"), first_changed_line)
}

/// Accumulates diff lines while tracking the current line number on both sides.
struct DiffWriter {
    lines: Vec<String>,
    width: usize,
    old_line: usize,
    new_line: usize,
}

impl DiffWriter {
    fn added(&mut self, line: &str) {
        self.lines
            .push(format!("+{:>w$} {line}", self.new_line, w = self.width));
        self.new_line += 1;
    }

    fn removed(&mut self, line: &str) {
        self.lines
            .push(format!("-{:>w$} {line}", self.old_line, w = self.width));
        self.old_line += 1;
    }

    fn context(&mut self, lines: &[&str]) {
        for line in lines {
            self.lines
                .push(format!(" {:>w$} {line}", self.old_line, w = self.width));
            self.old_line += 1;
            self.new_line += 1;
        }
    }

    /// Marks `count` unchanged lines as left out (nothing is printed for zero).
    fn skip(&mut self, count: usize) {
        if count > 0 {
            self.lines.push(format!(" {:>w$} ...", "", w = self.width));
            self.advance(count);
        }
    }

    fn advance(&mut self, count: usize) {
        self.old_line += count;
        self.new_line += count;
    }
}

/// `text.split("\n").length` in JavaScript.
fn count_split(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// Line runs of the diff with the newlines removed.
fn line_parts<'a>(old: &'a str, new: &'a str) -> Vec<LineRun<'a>> {
    let mut runs = diff_lines(old, new);
    for run in &mut runs {
        for line in &mut run.lines {
            *line = line.strip_suffix('\n').unwrap_or(line);
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn edit(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.to_string(),
            new_text: new.to_string(),
        }
    }

    #[test]
    fn corpus_diff_is_reproduced() {
        let applied = apply_edits(
            "hello wrld\nsecond line\n",
            &[edit("hello wrld", "hello world")],
            "a.txt",
        )
        .unwrap();
        let (diff, first) = generate_diff_string(&applied.base, &applied.new, 4);
        assert_eq!(diff, "-1 hello wrld\n+1 hello world\n 2 second line");
        assert_eq!(first, Some(1));
    }

    #[test]
    fn diff_shows_context_and_gaps_with_padded_numbers() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 25\n", "line 25\nextra\n");
        let (diff, first) = generate_diff_string(&old, &new, 4);
        assert_eq!(first, Some(3));
        // Produced by pi 0.73.1's generateDiffString for the same texts.
        let expected = [
            "  1 line 1",
            "  2 line 2",
            "- 3 line 3",
            "+ 3 line three",
            "  4 line 4",
            "  5 line 5",
            "  6 line 6",
            "  7 line 7",
            "    ...",
            " 22 line 22",
            " 23 line 23",
            " 24 line 24",
            " 25 line 25",
            "+26 extra",
            " 26 line 26",
            " 27 line 27",
            " 28 line 28",
            " 29 line 29",
            "    ...",
        ]
        .join("\n");
        assert_eq!(diff, expected);
    }

    #[test]
    fn fuzzy_match_normalizes_quotes_dashes_spaces_and_trailing_whitespace() {
        let content =
            "let s = \u{201C}hi\u{201D};   \nlet d = a \u{2014} b;\nlet n = 1\u{00A0}+\u{00A0}2;\n";
        let applied = apply_edits(
            content,
            &[edit(
                "let s = \"hi\";\nlet d = a - b;",
                "let s = \"yo\";\nlet d = a + b;",
            )],
            "f.js",
        )
        .unwrap();
        // The whole file comes back normalized, as with pi.
        assert_eq!(
            applied.new,
            "let s = \"yo\";\nlet d = a + b;\nlet n = 1 + 2;\n"
        );
    }

    #[test]
    fn multiple_edits_match_the_original_and_apply_together() {
        let applied =
            apply_edits("a\nb\nc\nd\n", &[edit("d", "D"), edit("a", "A\nA2")], "f").unwrap();
        assert_eq!(applied.new, "A\nA2\nb\nc\nD\n");
    }

    #[test]
    fn error_texts_match_pi() {
        let errors = [
            apply_edits("x", &[edit("y", "z")], "f.txt"),
            apply_edits("x", &[edit("x", "z"), edit("y", "z")], "f.txt"),
            apply_edits("aa aa", &[edit("aa", "b")], "f.txt"),
            apply_edits("aa aa x", &[edit("x", "y"), edit("aa", "b")], "f.txt"),
            apply_edits("abcdef", &[edit("abcd", "x"), edit("cde", "y")], "f.txt"),
            apply_edits("abc", &[edit("b", "b")], "f.txt"),
            apply_edits("abc", &[edit("b", "b"), edit("c", "c")], "f.txt"),
            apply_edits("abc", &[edit("", "b")], "f.txt"),
            apply_edits("abc", &[edit("a", "b"), edit("", "b")], "f.txt"),
        ];
        let text: Vec<String> = errors
            .into_iter()
            .map(|r| r.err().map(|e| e.to_string()).unwrap_or_default())
            .collect();
        insta::assert_snapshot!(text.join("\n"), @r"
        Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.
        Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines.
        Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.
        Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique.
        edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions.
        No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.
        No changes made to f.txt. The replacements produced identical content.
        oldText must not be empty in f.txt.
        edits[1].oldText must not be empty in f.txt.
        ");
    }

    #[test]
    fn line_endings_and_bom_helpers() {
        assert_eq!(detect_line_ending("a\r\nb\n"), LineEnding::CrLf);
        assert_eq!(detect_line_ending("a\nb\r\n"), LineEnding::Lf);
        assert_eq!(detect_line_ending("no newline"), LineEnding::Lf);
        assert_eq!(normalize_to_lf("a\r\nb\rc"), "a\nb\nc");
        assert_eq!(restore_line_endings("a\nb", LineEnding::CrLf), "a\r\nb");
        assert_eq!(strip_bom("\u{FEFF}x"), ("\u{FEFF}", "x"));
    }
}
