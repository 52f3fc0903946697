//! Syntax highlighting of code (markdown code blocks, `read`/`write` tool previews) with
//! syntect, coloured with the theme's nine `syntax*` tokens.
//!
//! The syntax set is loaded once, lazily, on first use. Highlighting produces
//! theme-independent [`SyntaxClass`] runs, so a cached result survives a theme switch;
//! [`to_lines`] applies the colours. [`IncrementalHighlight`] keeps syntect's parser
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
use syntect::highlighting::{
    Color as SynColor, HighlightState, Highlighter, ScopeSelectors, StyleModifier,
    Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

use super::theme::{Theme, ThemeToken};

/// Inputs larger than this are shown without colours.
pub const MAX_BYTES: usize = 512 * 1024;
/// Inputs with more lines than this are shown without colours.
pub const MAX_LINES: usize = 10_000;

/// What a piece of code is, as far as colouring goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyntaxClass {
    Comment,
    Keyword,
    Function,
    Variable,
    String,
    Number,
    Type,
    Operator,
    Punctuation,
}

impl SyntaxClass {
    const ALL: [SyntaxClass; 9] = [
        SyntaxClass::Comment,
        SyntaxClass::Keyword,
        SyntaxClass::Function,
        SyntaxClass::Variable,
        SyntaxClass::String,
        SyntaxClass::Number,
        SyntaxClass::Type,
        SyntaxClass::Operator,
        SyntaxClass::Punctuation,
    ];

    pub fn token(self) -> ThemeToken {
        match self {
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

    /// Encoded in the red channel of the synthetic syntect theme (0 = unclassified).
    fn code(self) -> u8 {
        match self {
            SyntaxClass::Comment => 1,
            SyntaxClass::Keyword => 2,
            SyntaxClass::Function => 3,
            SyntaxClass::Variable => 4,
            SyntaxClass::String => 5,
            SyntaxClass::Number => 6,
            SyntaxClass::Type => 7,
            SyntaxClass::Operator => 8,
            SyntaxClass::Punctuation => 9,
        }
    }

    fn from_code(code: u8) -> Option<SyntaxClass> {
        SyntaxClass::ALL.into_iter().find(|c| c.code() == code)
    }
}

/// One highlighted line: text runs with their class (`None` = plain text).
pub type ClassifiedLine = Vec<(Option<SyntaxClass>, String)>;

/// Scope selectors → class. syntect picks the most specific matching selector, so
/// e.g. `keyword.operator` beats `keyword`.
const SCOPE_CLASSES: &[(&str, SyntaxClass)] = &[
    (
        "comment, punctuation.definition.comment",
        SyntaxClass::Comment,
    ),
    (
        "string, punctuation.definition.string, constant.character.escape",
        SyntaxClass::String,
    ),
    (
        "constant.numeric, constant.language, support.constant",
        SyntaxClass::Number,
    ),
    ("keyword, storage, entity.name.tag", SyntaxClass::Keyword),
    (
        "keyword.operator, punctuation.accessor",
        SyntaxClass::Operator,
    ),
    (
        "entity.name.function, support.function, variable.function, meta.function-call.identifier",
        SyntaxClass::Function,
    ),
    (
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, entity.name.trait, \
         entity.name.interface, support.type, support.class, entity.other.inherited-class, storage.type.class",
        SyntaxClass::Type,
    ),
    (
        "variable, variable.parameter, variable.other, entity.other.attribute-name, meta.attribute-with-value",
        SyntaxClass::Variable,
    ),
    ("punctuation", SyntaxClass::Punctuation),
];

struct Engine {
    syntaxes: SyntaxSet,
    theme: SynTheme,
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| Engine {
    syntaxes: SyntaxSet::load_defaults_newlines(),
    theme: class_theme(),
});

/// A syntect theme whose "colours" are class codes, so syntect's selector scoring does
/// the scope → class mapping for us.
fn class_theme() -> SynTheme {
    let scopes = SCOPE_CLASSES
        .iter()
        .filter_map(|(selector, class)| {
            let scope: ScopeSelectors = selector.parse().ok()?;
            Some(ThemeItem {
                scope,
                style: StyleModifier {
                    foreground: Some(SynColor {
                        r: class.code(),
                        g: 0,
                        b: 0,
                        a: 255,
                    }),
                    background: None,
                    font_style: None,
                },
            })
        })
        .collect();
    SynTheme {
        name: Some("pi-classes".into()),
        author: None,
        settings: ThemeSettings {
            foreground: Some(SynColor {
                r: 0,
                g: 0,
                b: 0,
                a: 255,
            }),
            ..ThemeSettings::default()
        },
        scopes,
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

/// The syntect syntax for a fence info string or language name, if we have one.
fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
    let first = lang.split_whitespace().next()?;
    let first = first.trim_start_matches('{').trim_start_matches('.');
    let lower = first
        .split([',', '{'])
        .next()
        .unwrap_or(first)
        .to_ascii_lowercase();
    if lower.is_empty() {
        return None;
    }
    // Aliases people write in fences, mapped to names syntect knows. TypeScript has no
    // grammar in syntect's default set; JavaScript colours it well enough.
    let token = match lower.as_str() {
        "shell" | "sh" | "zsh" | "console" | "shellscript" | "bash" => "bash",
        "py" | "python3" | "py3" => "python",
        "js" | "jsx" | "node" | "ts" | "tsx" | "typescript" | "javascript" | "mjs" | "cjs" => "js",
        "rs" => "rust",
        "golang" => "go",
        "c++" | "cpp" | "cxx" | "hpp" => "cpp",
        "c#" | "csharp" | "cs" => "cs",
        "yml" => "yaml",
        "jsonc" | "json5" => "json",
        "rb" => "ruby",
        "md" => "markdown",
        "objective-c" | "objc" => "m",
        "patch" => "diff",
        "htm" => "html",
        "kt" | "kotlin" => return None,
        other => other,
    };
    let engine = &*ENGINE;
    engine
        .syntaxes
        .find_syntax_by_token(token)
        .filter(|s| s.name != "Plain Text")
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

/// Parser and highlighter state between lines.
#[derive(Clone)]
struct LineState {
    parse: ParseState,
    highlight: HighlightState,
}

impl LineState {
    fn new(syntax: &SyntaxReference) -> LineState {
        let highlighter = Highlighter::new(&ENGINE.theme);
        LineState {
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&highlighter, ScopeStack::new()),
        }
    }

    /// Classifies one line (without its `\n`) and advances the state past it.
    fn classify_line(&mut self, line: &str) -> ClassifiedLine {
        let engine = &*ENGINE;
        let with_newline = format!("{line}\n");
        let Ok(ops) = self.parse.parse_line(&with_newline, &engine.syntaxes) else {
            return vec![(None, line.to_string())];
        };
        let highlighter = Highlighter::new(&engine.theme);
        let iter = syntect::highlighting::RangedHighlightIterator::new(
            &mut self.highlight,
            &ops,
            &with_newline,
            &highlighter,
        );
        let mut out: ClassifiedLine = Vec::new();
        for (style, text, _) in iter {
            let text = text.strip_suffix('\n').unwrap_or(text);
            if text.is_empty() {
                continue;
            }
            let class = SyntaxClass::from_code(style.foreground.r);
            match out.last_mut() {
                Some((c, t)) if *c == class => t.push_str(text),
                _ => out.push((class, text.to_string())),
            }
        }
        out
    }
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
                            Some(c) => plain.patch(theme.fg(c.token())),
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

    fn classes(line: &ClassifiedLine) -> Vec<(Option<SyntaxClass>, &str)> {
        line.iter().map(|(c, t)| (*c, t.as_str())).collect()
    }

    #[test]
    fn rust_code_gets_keyword_function_string_and_comment_classes() {
        let lines = classify("fn main() {\n    let s = \"hi\"; // note\n}", "rust").unwrap();
        let lines = lines.as_slice();
        use SyntaxClass::*;
        assert_eq!(
            classes(&lines[0]),
            vec![
                (Some(Keyword), "fn"),
                (None, " "),
                (Some(Function), "main"),
                (Some(Punctuation), "()"),
                (None, " "),
                (Some(Punctuation), "{"),
            ]
        );
        let second = classes(&lines[1]);
        assert!(second.contains(&(Some(String), "\"hi\"")), "{second:?}");
        assert!(second.contains(&(Some(Comment), "// note")), "{second:?}");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn fence_aliases_and_file_extensions_resolve() {
        for lang in [
            "sh", "bash", "shell", "py", "python", "js", "ts", "rust", "json", "yaml", "c++", "go",
        ] {
            assert!(is_supported(lang), "{lang}");
        }
        assert!(!is_supported("no-such-language"));
        assert!(!is_supported(""));
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
