//! What the session picker's search box matches: pi's query language (space-separated
//! fuzzy tokens, `"exact phrases"`, `re:<regex>`) over a session's id, name, message text
//! and working directory.
//!
//! Search runs on every keystroke over the text of every listed session, which on a big
//! store is tens of megabytes, so the text is prepared once when it arrives: lowercased,
//! whitespace runs collapsed to one space ([`normalize`]). Fuzzy matching is then pi's
//! greedy left-to-right subsequence scoring, done with `memchr` jumps over the bytes
//! instead of a character-by-character walk, and phrases are a `memmem` search. Scores
//! use byte offsets where pi uses UTF-16 offsets; for ASCII text they are the same.
//! Regexes run case-insensitively on the prepared text, so they see single spaces where
//! the messages had line breaks. This module does not know about rows or rendering.

use memchr::memmem;
use regex::{Regex, RegexBuilder};

use crate::session::listing::SessionInfo;

/// At most this much message text per session is kept for searching (the start of the
/// conversation). Keeps memory bounded on stores with huge sessions.
pub const MAX_SEARCH_TEXT_BYTES: usize = 2 << 20;

/// Regexes larger than this (compiled) are refused instead of eating memory.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// `text` lowercased with every whitespace run turned into one space, trimmed, and cut
/// to at most `cap` bytes (at a character boundary).
pub fn normalize(text: &str, cap: usize) -> String {
    let mut out = String::with_capacity(text.len().min(cap));
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            if out.len() + 1 > cap {
                break;
            }
            out.push(' ');
            pending_space = false;
        }
        if c.is_ascii() {
            if out.len() + 1 > cap {
                break;
            }
            out.push(c.to_ascii_lowercase());
        } else {
            let before = out.len();
            out.extend(c.to_lowercase());
            if out.len() > cap {
                out.truncate(before);
                break;
            }
        }
    }
    out
}

/// The searchable text of one session: `id name body cwd`, normalized. The body is the
/// first user message until the full message text has been loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDoc {
    text: String,
    /// Length of the `id name ` part, replaced when the session is renamed.
    head_len: usize,
    full: bool,
}

impl SearchDoc {
    /// The document before the full text is known (first message only).
    pub fn preview(info: &SessionInfo) -> SearchDoc {
        let body = normalize(&info.first_message, MAX_SEARCH_TEXT_BYTES);
        SearchDoc::build(info, &body, false)
    }

    /// The document with the session's full message text, already [`normalize`]d.
    pub fn full(info: &SessionInfo, normalized_body: &str) -> SearchDoc {
        SearchDoc::build(info, normalized_body, true)
    }

    fn build(info: &SessionInfo, body: &str, full: bool) -> SearchDoc {
        let head = head_text(info);
        let cwd = normalize(&info.cwd, usize::MAX);
        let mut text = String::with_capacity(head.len() + body.len() + cwd.len() + 1);
        text.push_str(&head);
        text.push_str(body);
        text.push(' ');
        text.push_str(&cwd);
        SearchDoc {
            head_len: head.len(),
            text,
            full,
        }
    }

    /// Whether the full message text is in (not just the first message).
    pub fn is_full(&self) -> bool {
        self.full
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Rebuilds the `id name` part after a rename, keeping the rest.
    pub fn renamed(&mut self, info: &SessionInfo) {
        let head = head_text(info);
        self.text.replace_range(..self.head_len, &head);
        self.head_len = head.len();
    }
}

fn head_text(info: &SessionInfo) -> String {
    let mut head = normalize(info.id.as_str(), usize::MAX);
    head.push(' ');
    if let Some(name) = info.name.as_deref() {
        let name = normalize(name, usize::MAX);
        if !name.is_empty() {
            head.push_str(&name);
            head.push(' ');
        }
    }
    head
}

/// One part of a token query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// Characters that must appear in order (normalized).
    Fuzzy(String),
    /// Text that must appear as is, whitespace-insensitively (normalized).
    Phrase(String),
}

/// A parsed search box.
#[derive(Debug, Clone)]
pub enum Query {
    /// Nothing typed: everything matches.
    Empty,
    /// Every token must match; scores add up.
    Tokens(Vec<Token>),
    /// `re:<pattern>`.
    Regex(Regex),
    /// `re:` with an empty or invalid pattern: nothing matches.
    Invalid(String),
}

impl Query {
    /// pi's query syntax: `re:` prefix for a regex; otherwise whitespace-separated
    /// tokens where `"…"` groups a phrase. Unbalanced quotes make every word a plain
    /// token.
    pub fn parse(input: &str) -> Query {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Query::Empty;
        }
        if let Some(pattern) = trimmed.strip_prefix("re:") {
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Query::Invalid("regex is empty".into());
            }
            return match RegexBuilder::new(pattern)
                .case_insensitive(true)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
            {
                Ok(re) => Query::Regex(re),
                Err(e) => Query::Invalid(regex_problem(&e.to_string())),
            };
        }
        if trimmed.matches('"').count() % 2 == 1 {
            return Query::Tokens(
                trimmed
                    .split_whitespace()
                    .map(|t| Token::Fuzzy(normalize(t, usize::MAX)))
                    .collect(),
            );
        }
        let mut tokens = Vec::new();
        for (i, part) in trimmed.split('"').enumerate() {
            if i % 2 == 1 {
                let phrase = normalize(part, usize::MAX);
                if !phrase.is_empty() {
                    tokens.push(Token::Phrase(phrase));
                }
            } else {
                tokens.extend(
                    part.split_whitespace()
                        .map(|t| Token::Fuzzy(normalize(t, usize::MAX))),
                );
            }
        }
        if tokens.is_empty() {
            return Query::Empty;
        }
        Query::Tokens(tokens)
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Query::Empty)
    }

    /// Why nothing can match (an unusable regex).
    pub fn error(&self) -> Option<&str> {
        match self {
            Query::Invalid(message) => Some(message),
            _ => None,
        }
    }

    /// Score of a normalized text, or `None` when it does not match. Lower is better.
    pub fn score(&self, text: &str) -> Option<f64> {
        match self {
            Query::Empty => Some(0.0),
            Query::Invalid(_) => None,
            Query::Regex(re) => re.find(text).map(|m| m.start() as f64 * 0.1),
            Query::Tokens(tokens) => {
                let mut total = 0.0;
                for token in tokens {
                    total += match token {
                        Token::Phrase(phrase) => {
                            memmem::find(text.as_bytes(), phrase.as_bytes())? as f64 * 0.1
                        }
                        Token::Fuzzy(query) => fuzzy_score(query, text)?,
                    };
                }
                Some(total)
            }
        }
    }
}

/// The regex crate's error ends with the actual problem (`error: unclosed group`) after
/// a drawing of the pattern; keep only that.
fn regex_problem(text: &str) -> String {
    let last = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("invalid regex");
    format!("regex {}", last.strip_prefix("error: ").unwrap_or(last))
}

/// pi's fuzzy score of a normalized `query` against normalized `text` (lower is better),
/// trying the letters/digits-swapped query (`gpt4` → `4gpt`) at a small penalty.
pub fn fuzzy_score(query: &str, text: &str) -> Option<f64> {
    if let Some(score) = greedy_score(query, text) {
        return Some(score);
    }
    let swapped = swap_letters_and_digits(query)?;
    greedy_score(&swapped, text).map(|s| s + 5.0)
}

fn is_boundary(byte: u8) -> bool {
    matches!(byte, b' ' | b'-' | b'_' | b'.' | b'/' | b':')
}

fn greedy_score(query: &str, text: &str) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut score = 0.0;
    let mut last_end: Option<usize> = None;
    let mut run = 0u32;
    let mut buf = [0u8; 4];
    for c in query.chars() {
        let needle = c.encode_utf8(&mut buf).as_bytes();
        let found = if let [b] = needle {
            memchr::memchr(*b, &bytes[pos..])
        } else {
            memmem::find(&bytes[pos..], needle)
        };
        let i = pos + found?;
        match last_end {
            Some(end) if end == i => {
                run += 1;
                score -= f64::from(run) * 5.0;
            }
            Some(end) => {
                run = 0;
                score += (i - end) as f64 * 2.0;
            }
            None => run = 0,
        }
        if i == 0 || is_boundary(bytes[i - 1]) {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        pos = i + needle.len();
        last_end = Some(pos);
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// `abc12` → `12abc`, `12abc` → `abc12`; anything else has no swapped form.
fn swap_letters_and_digits(query: &str) -> Option<String> {
    let split = |pred: fn(&u8) -> bool| query.bytes().position(|b| !pred(&b));
    let letters_then_digits = split(u8::is_ascii_lowercase)
        .filter(|&at| at > 0 && query.as_bytes()[at..].iter().all(u8::is_ascii_digit));
    if let Some(at) = letters_then_digits {
        return Some(format!("{}{}", &query[at..], &query[..at]));
    }
    let digits_then_letters = split(u8::is_ascii_digit)
        .filter(|&at| at > 0 && query.as_bytes()[at..].iter().all(u8::is_ascii_lowercase));
    digits_then_letters.map(|at| format!("{}{}", &query[at..], &query[..at]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::fuzzy;

    #[test]
    fn normalizing_lowercases_and_collapses_whitespace_within_the_cap() {
        assert_eq!(normalize("  Hello\n\n  World\t", 100), "hello world");
        assert_eq!(normalize("ÄÖÜ straße", 100), "äöü straße");
        assert_eq!(normalize("abc def", 5), "abc d");
        assert_eq!(normalize("abc ÄÖ", 5), "abc ");
    }

    #[test]
    fn fuzzy_scores_agree_with_the_shared_matcher_on_ascii() {
        let texts = [
            "session gamma: third session prompt",
            "named beta session",
            "fix the parser bug in src/lib.rs",
            "gpt-4o",
        ];
        for query in [
            "ses",
            "sgp",
            "parser",
            "p/l",
            "gpt4",
            "4gpt",
            "zzz",
            "named beta session",
        ] {
            for text in texts {
                assert_eq!(
                    fuzzy_score(query, text),
                    fuzzy::fuzzy_score(query, text),
                    "{query} in {text}"
                );
            }
        }
    }

    #[test]
    fn queries_parse_into_tokens_phrases_and_regexes() {
        let tokens = |q: &str| match Query::parse(q) {
            Query::Tokens(t) => format!("{t:?}"),
            other => format!("{other:?}"),
        };
        assert_eq!(
            tokens(r#"foo "Node  CVE" bar"#),
            r#"[Fuzzy("foo"), Phrase("node cve"), Fuzzy("bar")]"#
        );
        assert_eq!(
            tokens(r#"foo "unclosed bar"#),
            r#"[Fuzzy("foo"), Fuzzy("\"unclosed"), Fuzzy("bar")]"#
        );
        assert!(Query::parse("   ").is_empty());
        assert_eq!(Query::parse("re:").error(), Some("regex is empty"));
        assert_eq!(
            Query::parse("re:(unclosed").error(),
            Some("regex unclosed group")
        );
        assert!(Query::parse("re:^abc").error().is_none());
    }

    #[test]
    fn phrases_must_appear_verbatim_and_regexes_ignore_case() {
        let text = normalize("The quick brown\nfox jumps", 1000);
        assert!(Query::parse(r#""brown fox""#).score(&text).is_some());
        assert!(Query::parse(r#""fox brown""#).score(&text).is_none());
        assert!(Query::parse("qck fx").score(&text).is_some());
        assert!(Query::parse("re:QUICK\\s+brown").score(&text).is_some());
        assert!(Query::parse("re:^fox").score(&text).is_none());
        assert!(Query::parse("re:(").score(&text).is_none());
    }
}
