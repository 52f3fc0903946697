//! Syntax highlighting for the HTML export: code becomes escaped text wrapped in a few
//! `<span class=h…>` elements, one class per colour of the theme's `syntax*` tokens
//! (`hk` keyword, `hs` string, …), so the page's CSS variables (and thus the user's
//! theme) decide the colours.
//!
//! syntect parses the code; instead of one span per TextMate scope (which would make a
//! large read result several times bigger) each token is mapped to one of nine classes,
//! neighbouring tokens of the same class share a span and whitespace joins whatever span
//! is open. Highlighting is the slowest part of an export, so it is skipped for very
//! large blocks. Not for the terminal: the TUI has its own highlighter.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::OnceLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use super::escape::push_escaped;

/// Code longer than this is shown without colours: highlighting is the slowest part of an
/// export and a huge file dump is read for its content, not its colours.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

/// The colour classes, each tied to one `syntax*` theme token in the stylesheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
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

impl Class {
    /// The opening tag. Class names are short and unquoted on purpose: a highlighted
    /// file is mostly these tags.
    fn open_tag(self) -> &'static str {
        match self {
            Class::Comment => "<span class=hc>",
            Class::Keyword => "<span class=hk>",
            Class::Function => "<span class=hf>",
            Class::Variable => "<span class=hv>",
            Class::String => "<span class=hs>",
            Class::Number => "<span class=hn>",
            Class::Type => "<span class=ht>",
            Class::Operator => "<span class=ho>",
            Class::Punctuation => "<span class=hp>",
        }
    }
}

struct Highlighter {
    syntaxes: SyntaxSet,
    /// Scope prefixes in priority order: the first rule matching the innermost scope wins,
    /// so the specific rules (`punctuation.definition.string`) precede the general ones.
    rules: Vec<(Scope, Class)>,
}

fn highlighter() -> &'static Highlighter {
    static HIGHLIGHTER: OnceLock<Highlighter> = OnceLock::new();
    HIGHLIGHTER.get_or_init(|| {
        let table: &[(&str, Class)] = &[
            ("comment", Class::Comment),
            ("punctuation.definition.comment", Class::Comment),
            ("punctuation.definition.string", Class::String),
            ("string", Class::String),
            ("constant.character.escape", Class::String),
            ("constant.numeric", Class::Number),
            ("constant.language", Class::Number),
            ("keyword.operator", Class::Operator),
            ("keyword", Class::Keyword),
            ("storage.type", Class::Keyword),
            ("storage.modifier", Class::Keyword),
            ("entity.name.tag", Class::Keyword),
            ("entity.name.function", Class::Function),
            ("support.function", Class::Function),
            ("variable.function", Class::Function),
            ("meta.function-call", Class::Function),
            ("entity.name.type", Class::Type),
            ("entity.name.class", Class::Type),
            ("entity.name.struct", Class::Type),
            ("entity.name.enum", Class::Type),
            ("entity.name.trait", Class::Type),
            ("entity.other.inherited-class", Class::Type),
            ("support.type", Class::Type),
            ("support.class", Class::Type),
            ("entity.other.attribute-name", Class::Variable),
            ("variable", Class::Variable),
            ("markup.heading", Class::Keyword),
            ("markup.inserted", Class::String),
            ("markup.deleted", Class::Number),
            ("punctuation", Class::Punctuation),
        ];
        let rules = table
            .iter()
            .filter_map(|(name, class)| Scope::new(name).ok().map(|s| (s, *class)))
            .collect();
        Highlighter {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            rules,
        }
    })
}

impl Highlighter {
    fn classify(&self, stack: &ScopeStack) -> Option<Class> {
        for scope in stack.as_slice().iter().rev() {
            if let Some((_, class)) = self.rules.iter().find(|(p, _)| p.is_prefix_of(*scope)) {
                return Some(*class);
            }
        }
        None
    }

    fn syntax_for(&self, language: &str) -> Option<&SyntaxReference> {
        let token = language.trim().to_ascii_lowercase();
        // The bundled grammars have no TypeScript; JavaScript's colours suit it well.
        let token = match token.as_str() {
            "ts" | "tsx" | "typescript" | "mts" | "cts" => "js",
            "jsx" | "mjs" | "cjs" | "javascript" => "js",
            "shell" | "console" | "zsh" | "sh" => "bash",
            "dockerfile" | "makefile" | "mk" => "make",
            "yml" => "yaml",
            "py" => "python",
            other => other,
        };
        if token.is_empty() || token == "text" || token == "txt" || token == "plain" {
            return None;
        }
        self.syntaxes.find_syntax_by_token(token)
    }
}

/// The highlighting language for a file path (by extension or well-known file name), if
/// the bundled grammars know it.
pub fn language_for_path(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    if lower == "makefile" || lower == "gnumakefile" {
        return Some("make".into());
    }
    if lower == "dockerfile" {
        return Some("bash".into());
    }
    let (_, ext) = lower.rsplit_once('.')?;
    highlighter().syntax_for(ext).map(|_| ext.to_string())
}

/// Blocks at least this long are remembered, so a file read (or written) several times
/// in a session is highlighted once.
const CACHE_MIN_BYTES: usize = 512;

/// One cached block: its language, code and HTML (the key is a hash of the first two).
type CacheSlot = (String, String, String);

thread_local! {
    static CACHE: RefCell<HashMap<u64, CacheSlot>> = RefCell::new(HashMap::new());
}

/// Forgets the blocks highlighted on this thread (called when an export is done).
pub fn clear_cache() {
    CACHE.with(|c| c.borrow_mut().clear());
}

/// Appends `code` to `out` as escaped HTML, coloured when `language` names a known
/// grammar and the code is not too large. Never fails: a grammar error leaves the rest
/// of the code plain.
pub fn push_highlighted(out: &mut String, code: &str, language: Option<&str>) {
    let hl = if code.len() <= MAX_HIGHLIGHT_BYTES {
        language.and_then(|l| highlighter().syntax_for(l).map(|s| (highlighter(), s)))
    } else {
        None
    };
    let Some((hl, syntax)) = hl else {
        push_escaped(out, code);
        return;
    };
    if code.len() < CACHE_MIN_BYTES {
        highlight_into(out, hl, syntax, code);
        return;
    }
    let mut hasher = DefaultHasher::new();
    (&syntax.name, code).hash(&mut hasher);
    let key = hasher.finish();
    let hit = CACHE.with(|c| {
        c.borrow().get(&key).and_then(|(lang, cached_code, html)| {
            (lang == &syntax.name && cached_code == code).then(|| out.push_str(html))
        })
    });
    if hit.is_some() {
        return;
    }
    let start = out.len();
    highlight_into(out, hl, syntax, code);
    let html = out[start..].to_string();
    CACHE.with(|c| {
        c.borrow_mut()
            .insert(key, (syntax.name.clone(), code.to_string(), html))
    });
}

fn highlight_into(out: &mut String, hl: &Highlighter, syntax: &SyntaxReference, code: &str) {
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut open: Option<Class> = None;
    let mut emit = |out: &mut String, text: &str, class: Option<Class>| {
        if text.is_empty() {
            return;
        }
        // Whitespace has no colour: it stays in whatever span is open.
        let blank = text.bytes().all(|b| b.is_ascii_whitespace());
        if open != class && !blank {
            if open.is_some() {
                out.push_str("</span>");
            }
            if let Some(c) = class {
                out.push_str(c.open_tag());
            }
            open = class;
        }
        push_escaped(out, text);
    };
    let mut rest_plain: Option<&str> = None;
    let mut consumed = 0;
    for line in LinesWithEndings::from(code) {
        let Ok(ops) = state.parse_line(line, &hl.syntaxes) else {
            rest_plain = Some(&code[consumed..]);
            break;
        };
        let mut last = 0;
        for (pos, op) in ops {
            let pos = pos.min(line.len());
            if pos > last && line.is_char_boundary(pos) && line.is_char_boundary(last) {
                emit(out, &line[last..pos], hl.classify(&stack));
                last = pos;
            }
            if stack.apply(&op).is_err() {
                stack = ScopeStack::new();
            }
        }
        emit(out, &line[last..], hl.classify(&stack));
        consumed += line.len();
    }
    if let Some(rest) = rest_plain {
        emit(out, rest, None);
    }
    if open.is_some() {
        out.push_str("</span>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn highlight(code: &str, lang: Option<&str>) -> String {
        let mut out = String::new();
        push_highlighted(&mut out, code, lang);
        out
    }

    #[test]
    fn rust_code_gets_theme_classes_and_stays_escaped() {
        let html = highlight("fn main() { let s = \"<b>\"; } // done", Some("rust"));
        insta::assert_snapshot!(html, @"<span class=hk>fn </span><span class=hf>main</span><span class=hp>() { </span><span class=hk>let</span> s <span class=ho>= </span><span class=hs>&quot;&lt;b&gt;&quot;</span><span class=hp>; } </span><span class=hc>// done</span>");
    }

    #[test]
    fn unknown_or_missing_language_is_plain_escaped_text() {
        assert_eq!(highlight("<a> & b", None), "&lt;a&gt; &amp; b");
        assert_eq!(
            highlight("<a> & b", Some("no-such-lang")),
            "&lt;a&gt; &amp; b"
        );
    }

    #[test]
    fn languages_come_from_extensions_and_file_names() {
        assert_eq!(language_for_path("/x/src/main.rs").as_deref(), Some("rs"));
        assert_eq!(language_for_path("app.tsx").as_deref(), Some("tsx"));
        assert_eq!(language_for_path("Makefile").as_deref(), Some("make"));
        assert_eq!(language_for_path("notes.txt"), None);
        assert_eq!(language_for_path("README"), None);
    }
}
