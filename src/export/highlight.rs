//! Syntax highlighting for the HTML export: code becomes escaped text wrapped in a few
//! `<span class=h…>` elements, one class per colour of the theme's `syntax*` tokens
//! (`hk` keyword, `hs` string, …), so the page's CSS variables (and thus the user's
//! theme) decide the colours.
//!
//! syntect parses the code; instead of one span per TextMate scope (which would make a
//! large read result several times bigger) each token is mapped to one of nine classes,
//! neighbouring tokens of the same class share a span and whitespace joins whatever span
//! is open. Highlighting is the slowest part of an export, so it is skipped for very
//! large blocks. The classification itself is shared with the terminal UI ([`super::syntax`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use syntect::parsing::SyntaxReference;
use syntect::util::LinesWithEndings;

use super::escape::push_escaped;
use super::syntax::{LineState, SyntaxClass, find_syntax};

/// Code longer than this is shown without colours: highlighting is the slowest part of an
/// export and a huge file dump is read for its content, not its colours.
const MAX_HIGHLIGHT_BYTES: usize = 64 * 1024;

/// The opening tag of a class. Class names are short and unquoted on purpose: a
/// highlighted file is mostly these tags.
fn open_tag(class: SyntaxClass) -> &'static str {
    match class {
        SyntaxClass::Comment => "<span class=hc>",
        SyntaxClass::Keyword => "<span class=hk>",
        SyntaxClass::Function => "<span class=hf>",
        SyntaxClass::Variable => "<span class=hv>",
        SyntaxClass::String => "<span class=hs>",
        SyntaxClass::Number => "<span class=hn>",
        SyntaxClass::Type => "<span class=ht>",
        SyntaxClass::Operator => "<span class=ho>",
        SyntaxClass::Punctuation => "<span class=hp>",
    }
}

/// The highlighting language for a file path (by extension or well-known file name), if
/// the bundled grammars know it. Wider than the terminal's list (pi's): a page is read
/// later, by anyone, so any file type the grammars know is coloured.
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
    find_syntax(ext).map(|_| ext.to_string())
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
    let syntax = language
        .filter(|_| code.len() <= MAX_HIGHLIGHT_BYTES)
        .and_then(find_syntax);
    let Some(syntax) = syntax else {
        push_escaped(out, code);
        return;
    };
    if code.len() < CACHE_MIN_BYTES {
        highlight_into(out, syntax, code);
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
    highlight_into(out, syntax, code);
    let html = out[start..].to_string();
    CACHE.with(|c| {
        c.borrow_mut()
            .insert(key, (syntax.name.clone(), code.to_string(), html))
    });
}

/// Writes `code` as escaped HTML in class spans. Neighbouring runs of one class share a
/// span, and whitespace stays in whatever span is open, which keeps the page small.
fn highlight_into(out: &mut String, syntax: &SyntaxReference, code: &str) {
    let mut state = LineState::new(syntax);
    let mut open: Option<SyntaxClass> = None;
    let mut emit = |out: &mut String, class: Option<SyntaxClass>, text: &str| {
        if text.is_empty() {
            return;
        }
        let blank = text.bytes().all(|b| b.is_ascii_whitespace());
        if open != class && !blank {
            if open.is_some() {
                out.push_str("</span>");
            }
            if let Some(c) = class {
                out.push_str(open_tag(c));
            }
            open = class;
        }
        push_escaped(out, text);
    };
    let mut consumed = 0;
    for line in LinesWithEndings::from(code) {
        let fed = state.feed(line, |class, text| emit(out, class, text));
        if fed.is_err() {
            // A grammar error: the rest of the code is shown plain.
            emit(out, None, &code[consumed..]);
            break;
        }
        consumed += line.len();
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
