//! Syntax classification shared by the HTML export ([`super::highlight`]) and the
//! terminal UI (`modes::interactive::highlight`): syntect parses the code and every token
//! gets one of nine [`SyntaxClass`]es, one per `syntax*` colour of pi's themes. Each
//! front end turns the classes into its own output (`<span class=h…>` or coloured
//! terminal spans), so both colour the same code the same way.
//!
//! syntect's grammars and the scope → class table are loaded once per process, on first
//! use. Classes, not colours, are produced, so a result survives a theme switch. Not
//! here: size caps, caches and markup, which are each front end's business.

use std::sync::LazyLock;

use syntect::highlighting::{
    Color as SynColor, HighlightState, Highlighter, RangedHighlightIterator, ScopeSelectors,
    StyleModifier, Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ParsingError, ScopeStack, SyntaxReference, SyntaxSet};

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

/// The selector matcher over [`ENGINE`]'s theme, built once rather than per line.
static HIGHLIGHTER: LazyLock<Highlighter<'static>> =
    LazyLock::new(|| Highlighter::new(&ENGINE.theme));

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

/// The syntect syntax for a fence info string (` ```rust title=x `) or a language name,
/// if the bundled grammars have one.
pub fn find_syntax(lang: &str) -> Option<&'static SyntaxReference> {
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
    ENGINE
        .syntaxes
        .find_syntax_by_token(token)
        .filter(|s| s.name != "Plain Text")
}

/// Parser and classifier state between lines: classify a text line by line, in order.
/// Cloning it is how a caller resumes from a line it already classified.
#[derive(Clone)]
pub struct LineState {
    parse: ParseState,
    highlight: HighlightState,
}

impl LineState {
    /// The state at the start of a text in `syntax`.
    pub fn new(syntax: &SyntaxReference) -> LineState {
        LineState {
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&HIGHLIGHTER, ScopeStack::new()),
        }
    }

    /// Classifies one line, which should end with its `\n` (the grammars expect it), and
    /// advances the state past it: `run` gets each stretch of text with its class, in
    /// order, together covering the line. On a grammar error nothing is passed on.
    pub fn feed(
        &mut self,
        line: &str,
        mut run: impl FnMut(Option<SyntaxClass>, &str),
    ) -> Result<(), ParsingError> {
        let ops = self.parse.parse_line(line, &ENGINE.syntaxes)?;
        let iter = RangedHighlightIterator::new(&mut self.highlight, &ops, line, &HIGHLIGHTER);
        for (style, text, _) in iter {
            if !text.is_empty() {
                run(SyntaxClass::from_code(style.foreground.r), text);
            }
        }
        Ok(())
    }

    /// Classifies one line given without its `\n`; neighbouring runs of the same class
    /// are merged. A grammar error leaves the line plain.
    pub fn classify_line(&mut self, line: &str) -> ClassifiedLine {
        let with_newline = format!("{line}\n");
        let mut out: ClassifiedLine = Vec::new();
        let fed = self.feed(&with_newline, |class, text| {
            let text = text.strip_suffix('\n').unwrap_or(text);
            if text.is_empty() {
                return;
            }
            match out.last_mut() {
                Some((c, t)) if *c == class => t.push_str(text),
                _ => out.push((class, text.to_string())),
            }
        });
        match fed {
            Ok(()) => out,
            Err(_) => vec![(None, line.to_string())],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn classes(line: &ClassifiedLine) -> Vec<(Option<SyntaxClass>, &str)> {
        line.iter().map(|(c, t)| (*c, t.as_str())).collect()
    }

    fn classify(code: &str, lang: &str) -> Vec<ClassifiedLine> {
        let syntax = find_syntax(lang).unwrap();
        let mut state = LineState::new(syntax);
        code.split('\n').map(|l| state.classify_line(l)).collect()
    }

    #[test]
    fn rust_code_gets_keyword_function_string_and_comment_classes() {
        let lines = classify("fn main() {\n    let s = \"hi\"; // note\n}", "rust");
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
    fn fence_info_strings_and_aliases_resolve() {
        for lang in [
            "sh",
            "bash",
            "shell",
            "py",
            "python",
            "js",
            "ts",
            "rust",
            "json",
            "yaml",
            "c++",
            "go",
            "rust title=main.rs",
            "{.python,title=x}",
            "Makefile",
        ] {
            assert!(find_syntax(lang).is_some(), "{lang}");
        }
        for lang in ["no-such-language", "", "text", "txt"] {
            assert!(find_syntax(lang).is_none(), "{lang}");
        }
    }

    #[test]
    fn feed_covers_the_whole_line_including_its_newline() {
        let syntax = find_syntax("python").unwrap();
        let mut state = LineState::new(syntax);
        let mut seen = std::string::String::new();
        state
            .feed("x = \"a\"  # c\n", |_, text| seen.push_str(text))
            .unwrap();
        assert_eq!(seen, "x = \"a\"  # c\n");
    }
}
