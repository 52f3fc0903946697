//! A small Rust tokenizer, just enough to find module paths: identifiers, `::`, and
//! punctuation, with line numbers. Comments, string, byte-string, raw-string and char
//! literals are skipped (so a path in a doc comment or a message is not an import);
//! lifetimes and numbers become opaque tokens.

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword (`r#name` is given as `name`).
    Ident(String),
    /// `::`
    PathSep,
    /// Any other single punctuation character.
    Punct(char),
    /// A literal, lifetime or label: nothing a path can be made of.
    Opaque,
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

/// The tokens of `src`.
pub fn tokenize(src: &str) -> Vec<Token> {
    Lexer {
        chars: src.chars().collect(),
        pos: 0,
        line: 1,
        out: Vec::new(),
    }
    .run()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    out: Vec<Token>,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Moves one character on, counting lines.
    fn bump(&mut self) {
        if self.peek(0) == Some('\n') {
            self.line += 1;
        }
        self.pos += 1;
    }

    fn push(&mut self, tok: Tok, line: usize) {
        self.out.push(Token { tok, line });
    }

    fn run(mut self) -> Vec<Token> {
        while let Some(c) = self.peek(0) {
            let line = self.line;
            match c {
                _ if c.is_whitespace() => self.bump(),
                '/' if self.peek(1) == Some('/') => self.line_comment(),
                '/' if self.peek(1) == Some('*') => self.block_comment(),
                '"' => {
                    self.quoted('"');
                    self.push(Tok::Opaque, line);
                }
                '\'' => self.quote_or_lifetime(),
                ':' if self.peek(1) == Some(':') => {
                    self.bump();
                    self.bump();
                    self.push(Tok::PathSep, line);
                }
                _ if c.is_ascii_digit() => self.number(),
                _ if is_ident_start(c) => self.ident_or_prefixed_literal(),
                _ => {
                    self.bump();
                    self.push(Tok::Punct(c), line);
                }
            }
        }
        self.out
    }

    fn line_comment(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    /// `/* … */`, which nests in Rust.
    fn block_comment(&mut self) {
        let mut depth = 0usize;
        while self.peek(0).is_some() {
            if self.peek(0) == Some('/') && self.peek(1) == Some('*') {
                depth += 1;
                self.bump();
                self.bump();
            } else if self.peek(0) == Some('*') && self.peek(1) == Some('/') {
                depth -= 1;
                self.bump();
                self.bump();
                if depth == 0 {
                    return;
                }
            } else {
                self.bump();
            }
        }
    }

    /// A literal delimited by `quote` with backslash escapes; starts on the opening quote.
    fn quoted(&mut self, quote: char) {
        self.bump();
        while let Some(c) = self.peek(0) {
            self.bump();
            if c == '\\' {
                self.bump();
            } else if c == quote {
                return;
            }
        }
    }

    /// A raw string: starts on the first `#` or the `"` after the `r`.
    fn raw_string(&mut self) {
        let mut hashes = 0;
        while self.peek(0) == Some('#') {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        while let Some(c) = self.peek(0) {
            self.bump();
            if c == '"' && (0..hashes).all(|k| self.peek(k) == Some('#')) {
                for _ in 0..hashes {
                    self.bump();
                }
                return;
            }
        }
    }

    /// `'a'`, `'\n'`, `'\u{1F600}'` (char literals) or `'a` / `'outer` (lifetimes, labels).
    fn quote_or_lifetime(&mut self) {
        let line = self.line;
        if self.peek(1) == Some('\\') || self.peek(2) == Some('\'') {
            self.quoted('\'');
        } else {
            self.bump();
            while self.peek(0).is_some_and(is_ident_continue) {
                self.bump();
            }
        }
        self.push(Tok::Opaque, line);
    }

    /// `42`, `0x1f_u8`, `1.5e-3`: never part of a path.
    fn number(&mut self) {
        let line = self.line;
        while let Some(c) = self.peek(0) {
            let exponent_sign = (c == '-' || c == '+')
                && matches!(self.chars.get(self.pos.wrapping_sub(1)), Some('e' | 'E'));
            let fraction = c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit());
            if is_ident_continue(c) || fraction || exponent_sign {
                self.bump();
            } else {
                break;
            }
        }
        self.push(Tok::Opaque, line);
    }

    /// An identifier, `r#ident`, or a literal with a prefix: `b"…"`, `b'x'`, `r"…"`,
    /// `r#"…"#`, `br"…"`, `c"…"`, `cr#"…"#`.
    fn ident_or_prefixed_literal(&mut self) {
        let line = self.line;
        let start = self.pos;
        while self.peek(0).is_some_and(is_ident_continue) {
            self.bump();
        }
        let word: String = self.chars[start..self.pos].iter().collect();
        let next = self.peek(0);
        let raw_capable = matches!(word.as_str(), "r" | "br" | "cr");
        match (word.as_str(), next) {
            ("b" | "c", Some('"')) => {
                self.quoted('"');
                self.push(Tok::Opaque, line);
            }
            ("b", Some('\'')) => {
                self.quoted('\'');
                self.push(Tok::Opaque, line);
            }
            (_, Some('"')) if raw_capable => {
                self.raw_string();
                self.push(Tok::Opaque, line);
            }
            (_, Some('#')) if raw_capable && matches!(self.peek(1), Some('"' | '#')) => {
                self.raw_string();
                self.push(Tok::Opaque, line);
            }
            ("r", Some('#')) if self.peek(1).is_some_and(is_ident_start) => {
                self.bump();
                let start = self.pos;
                while self.peek(0).is_some_and(is_ident_continue) {
                    self.bump();
                }
                let name: String = self.chars[start..self.pos].iter().collect();
                self.push(Tok::Ident(name), line);
            }
            _ => self.push(Tok::Ident(word), line),
        }
    }
}
