//! Syntax highlighting of code (markdown code blocks, `read`/`write` tool previews),
//! coloured with the theme's nine `syntax*` tokens.
//!
//! The classification (syntect's grammars, the scope → [`SyntaxClass`] table, fence
//! aliases) is shared with the HTML export: `crate::export::syntax`. This module adds what
//! the terminal needs: size caps, a cache, colours and incremental updates. Classes are
//! theme-independent, so a cached result survives a theme switch; [`to_lines`] applies
//! the colours. [`IncrementalHighlight`] keeps syntect's parser
//! state at the last complete line, so a file that streams in (a `write` tool call being
//! generated) costs only the new lines per update instead of the whole file. Input is
//! expected to be sanitised already (see [`super::text::sanitize`]). Huge inputs (over
//! [`MAX_BYTES`] or [`MAX_LINES`]) are not highlighted at all.
//!
//! syntect's pure-Rust regex engine needs roughly 50–150 µs per line, far more than the
//! rest of rendering, so results are also kept in a process-wide cache keyed by
//! (language, code): re-rendering after a resize or theme change does not parse again.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::theme::{Theme, ThemeToken};
pub use crate::export::syntax::{ClassifiedLine, SyntaxClass};
use crate::export::syntax::{LineState, find_syntax};

/// Inputs larger than this are shown without colours.
pub const MAX_BYTES: usize = 512 * 1024;
/// Inputs with more lines than this are shown without colours.
pub const MAX_LINES: usize = 10_000;

/// The theme colour of a class.
pub fn class_token(class: SyntaxClass) -> ThemeToken {
    match class {
        SyntaxClass::Comment => ThemeToken::SyntaxComment,
        SyntaxClass::Keyword => ThemeToken::SyntaxKeyword,
        SyntaxClass::Function => ThemeToken::SyntaxFunction,
        SyntaxClass::Variable => ThemeToken::SyntaxVariable,
        SyntaxClass::String => ThemeToken::SyntaxString,
        SyntaxClass::Number => ThemeToken::SyntaxNumber,
        SyntaxClass::Type => ThemeToken::SyntaxType,
        SyntaxClass::Operator => ThemeToken::SyntaxOperator,
        SyntaxClass::Punctuation => ThemeToken::SyntaxPunctuation,
    }
}

/// Language of a file from its extension (or name, for `Makefile`/`Dockerfile`), as
/// used by the `read` and `write` tool previews.
pub fn language_for_path(path: &str) -> Option<&'static str> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = file.to_ascii_lowercase();
    let ext = match lower.rsplit_once('.') {
        Some((_, ext)) => ext,
        None => lower.as_str(),
    };
    let lang = match ext {
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "py" | "pyi" => "python",
        "rb" => "ruby",
        "rs" => "rust",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "c" | "h" => "c",
        "cpp" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "php" => "php",
        "sh" | "bash" | "zsh" => "bash",
        "fish" => "fish",
        "ps1" => "powershell",
        "sql" => "sql",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "json" | "jsonc" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "xml" | "svg" => "xml",
        "md" | "markdown" => "markdown",
        "dockerfile" => "dockerfile",
        "makefile" | "mk" => "makefile",
        "cmake" => "cmake",
        "lua" => "lua",
        "pl" | "pm" => "perl",
        "r" => "r",
        "scala" => "scala",
        "clj" | "cljs" | "edn" => "clojure",
        "ex" | "exs" => "elixir",
        "erl" | "hrl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "vim" => "vim",
        "graphql" | "gql" => "graphql",
        "proto" => "protobuf",
        "tf" | "hcl" => "hcl",
        "tex" => "latex",
        "diff" | "patch" => "diff",
        "d" => "d",
        "groovy" | "gradle" => "groovy",
        "m" => "objc",
        _ => return None,
    };
    Some(lang)
}

/// Whether `lang` (a fence info string or language name) can be highlighted.
pub fn is_supported(lang: &str) -> bool {
    find_syntax(lang).is_some()
}

fn too_big(code: &str) -> bool {
    code.len() > MAX_BYTES || code.bytes().filter(|b| *b == b'\n').count() >= MAX_LINES
}

/// Lines of classified code the cache holds at most (older entries are dropped first).
const CACHE_MAX_LINES: usize = 100_000;

#[derive(Default)]
struct ClassCache {
    map: HashMap<u64, Arc<Vec<ClassifiedLine>>>,
    order: VecDeque<(u64, usize)>,
    lines: usize,
}

static CACHE: LazyLock<Mutex<ClassCache>> = LazyLock::new(|| Mutex::new(ClassCache::default()));

fn cache_key(code: &str, lang: &str) -> u64 {
    let mut h = DefaultHasher::new();
    lang.hash(&mut h);
    code.hash(&mut h);
    h.finish()
}

/// Empties the highlight cache (benchmarks use it to measure cold rendering).
pub fn clear_cache() {
    if let Ok(mut cache) = CACHE.lock() {
        *cache = ClassCache::default();
    }
}

/// Classifies every line of `code` (split on `\n`), or `None` when the language is
/// unknown or the input is over the size caps. Results are cached.
pub fn classify(code: &str, lang: &str) -> Option<Arc<Vec<ClassifiedLine>>> {
    if too_big(code) {
        return None;
    }
    let syntax = find_syntax(lang)?;
    let key = cache_key(code, lang);
    if let Some(hit) = CACHE.lock().ok().and_then(|c| c.map.get(&key).cloned()) {
        return Some(hit);
    }
    let mut state = LineState::new(syntax);
    let lines: Arc<Vec<ClassifiedLine>> = Arc::new(
        code.split('\n')
            .map(|line| state.classify_line(line))
            .collect(),
    );
    if let Ok(mut cache) = CACHE.lock() {
        let n = lines.len();
        while cache.lines + n > CACHE_MAX_LINES {
            let Some((old, old_n)) = cache.order.pop_front() else {
                break;
            };
            cache.map.remove(&old);
            cache.lines -= old_n;
        }
        if cache.map.insert(key, Arc::clone(&lines)).is_none() {
            cache.order.push_back((key, n));
            cache.lines += n;
        }
    }
    Some(lines)
}

/// Colours classified lines with a theme; plain runs get `plain`.
pub fn to_lines(classified: &[ClassifiedLine], theme: &Theme, plain: Style) -> Vec<Line<'static>> {
    classified
        .iter()
        .map(|runs| {
            Line::from(
                runs.iter()
                    .map(|(class, text)| {
                        let style = match class {
                            Some(c) => plain.patch(theme.fg(class_token(*c))),
                            None => plain,
                        };
                        Span::styled(text.clone(), style)
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

/// Highlights `code` (one output line per `\n`-separated input line). Unknown
/// languages, `None` and oversized inputs come back uncoloured in `fallback`.
pub fn highlight(
    code: &str,
    lang: Option<&str>,
    theme: &Theme,
    fallback: Style,
) -> Vec<Line<'static>> {
    match lang.and_then(|l| classify(code, l)) {
        Some(classified) => to_lines(&classified, theme, Style::default()),
        None => code
            .split('\n')
            .map(|l| Line::from(Span::styled(l.to_string(), fallback)))
            .collect(),
    }
}

/// Highlighting of text that grows at the end (a streaming `write` tool call): complete
/// lines are classified once; only the unfinished last line is redone per update.
#[derive(Clone, Default)]
pub struct IncrementalHighlight {
    lang: String,
    /// Bytes of input covered by `done` (always just after a `\n`).
    consumed: usize,
    /// Total bytes seen last time, to detect edits that are not appends.
    seen: String,
    done: Vec<ClassifiedLine>,
    state: Option<LineState>,
    disabled: bool,
}

impl IncrementalHighlight {
    /// Classified lines for the current full text, or `None` when the language is not
    /// supported or the text is over the caps.
    pub fn update(&mut self, text: &str, lang: &str) -> Option<Vec<ClassifiedLine>> {
        if self.lang != lang || !text.starts_with(&self.seen[..self.consumed]) {
            *self = IncrementalHighlight {
                lang: lang.to_string(),
                ..IncrementalHighlight::default()
            };
            self.state = find_syntax(lang).map(LineState::new);
        }
        if self.disabled || too_big(text) {
            self.disabled = true;
            return None;
        }
        let state = self.state.as_mut()?;
        let rest = &text[self.consumed..];
        if let Some(last_newline) = rest.rfind('\n') {
            for line in rest[..last_newline].split('\n') {
                self.done.push(state.classify_line(line));
            }
            self.consumed += last_newline + 1;
        }
        self.seen.clear();
        self.seen.push_str(text);
        let mut tail_state = state.clone();
        let mut lines = self.done.clone();
        lines.push(tail_state.classify_line(&text[self.consumed..]));
        Some(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::theme::ColorMode;
    use pretty_assertions::assert_eq;

    #[test]
    fn fence_languages_and_file_extensions_resolve() {
        assert!(is_supported("ts"));
        assert!(!is_supported("no-such-language"));
        assert_eq!(language_for_path("src/main.rs"), Some("rust"));
        assert_eq!(language_for_path("/x/Makefile"), Some("makefile"));
        assert_eq!(language_for_path("notes.txt"), None);
    }

    #[test]
    fn unknown_languages_fall_back_to_one_style() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let fallback = theme.fg(ThemeToken::MdCodeBlock);
        let lines = highlight("a\nb", Some("klingon"), &theme, fallback);
        assert_eq!(
            lines,
            vec![
                Line::from(Span::styled("a", fallback)),
                Line::from(Span::styled("b", fallback))
            ]
        );
    }

    #[test]
    fn oversized_input_is_not_highlighted() {
        let code = "x = 1\n".repeat(MAX_LINES + 1);
        assert!(classify(&code, "python").is_none());
    }

    #[test]
    fn incremental_highlight_matches_a_full_pass_as_text_streams_in() {
        let full = "def f(x):\n    \"\"\"doc\n    string\"\"\"\n    return x + 1\n";
        let mut inc = IncrementalHighlight::default();
        let mut last = None;
        for end in 1..=full.len() {
            if full.is_char_boundary(end) {
                last = inc.update(&full[..end], "python");
            }
        }
        assert_eq!(last, classify(full, "python").map(|c| c.to_vec()));
        // A rewrite (not an append) starts over.
        assert_eq!(
            inc.update("x = 2", "python"),
            classify("x = 2", "python").map(|c| c.to_vec())
        );
    }
}
