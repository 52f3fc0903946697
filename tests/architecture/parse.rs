//! What one source file says about modules: the modules it declares (`mod x;` and inline
//! `mod x { … }`), its `use` statements (one leaf per imported name), the other paths it
//! names (`crate::a::b`, `super::x::f`, `child::f`), the items it defines (for resolving
//! glob re-exports), and every identifier outside `use` statements (to tell a re-export
//! from an import the file itself uses).
//!
//! Attributes are skipped, so `#[allow(clippy::x)]` is not a path; `#[cfg(test)]` marks
//! the module that follows as test code.

use std::collections::HashSet;

use crate::lex::{Tok, Token};

/// One imported name of a `use` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseLeaf {
    /// The full path, e.g. `["super", "output", "Output"]` (for a glob, the module).
    pub segs: Vec<String>,
    /// The name it is bound to in this module (`None` for a glob or `as _`).
    pub binding: Option<String>,
    pub glob: bool,
    /// `pub use` / `pub(crate) use`: the name is also offered to other modules.
    pub public: bool,
    pub line: usize,
}

/// A path written outside `use`: `crate::core::events::EventJsonEncoder::new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    pub segs: Vec<String>,
    pub line: usize,
}

/// A module body: the file itself or an inline `mod name { … }` in it.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Index of the enclosing scope (`None` for the file's own module).
    pub parent: Option<usize>,
    /// The inline module's name (empty for the file's own module).
    pub name: String,
    /// Under `#[cfg(test)]` (or inside such a module).
    pub test: bool,
    /// `mod name;` declarations: (name, under `#[cfg(test)]`).
    pub file_children: Vec<(String, bool)>,
    pub uses: Vec<UseLeaf>,
    pub paths: Vec<PathRef>,
    /// Names of items defined here (functions, types, constants, macros, …).
    pub items: HashSet<String>,
}

/// Everything found in one file; `scopes[0]` is the file's own module.
#[derive(Debug, Clone)]
pub struct FileFacts {
    pub scopes: Vec<Scope>,
    /// Identifiers that appear outside `use` statements.
    pub used_idents: HashSet<String>,
}

const ITEM_KEYWORDS: [&str; 8] = [
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

/// Reads the module facts out of a token stream.
pub fn parse(tokens: &[Token]) -> FileFacts {
    Parser {
        t: tokens,
        i: 0,
        facts: FileFacts {
            scopes: vec![Scope::default()],
            used_idents: HashSet::new(),
        },
        stack: vec![(0, 0)],
        depth: 0,
        pending_pub: false,
        pending_test: false,
    }
    .run()
}

struct Parser<'a> {
    t: &'a [Token],
    i: usize,
    facts: FileFacts,
    /// Open scopes: (scope index, brace depth at which it closes).
    stack: Vec<(usize, usize)>,
    depth: usize,
    pending_pub: bool,
    pending_test: bool,
}

impl Parser<'_> {
    fn tok(&self, at: usize) -> Option<&Tok> {
        self.t.get(at).map(|t| &t.tok)
    }

    fn ident(&self, at: usize) -> Option<&str> {
        match self.tok(at) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    fn is_punct(&self, at: usize, c: char) -> bool {
        self.tok(at) == Some(&Tok::Punct(c))
    }

    fn line(&self, at: usize) -> usize {
        self.t.get(at).map_or(0, |t| t.line)
    }

    fn scope(&mut self) -> &mut Scope {
        let index = self.stack.last().map_or(0, |s| s.0);
        &mut self.facts.scopes[index]
    }

    fn in_test(&self) -> bool {
        let index = self.stack.last().map_or(0, |s| s.0);
        self.facts.scopes[index].test
    }

    fn run(mut self) -> FileFacts {
        while self.i < self.t.len() {
            self.step();
        }
        self.facts
    }

    fn step(&mut self) {
        let keeps_pending =
            matches!(self.tok(self.i), Some(Tok::Punct('#'))) || self.ident(self.i) == Some("pub");
        match self.tok(self.i).cloned() {
            Some(Tok::Punct('#')) => self.attribute(),
            Some(Tok::Punct('{')) => {
                self.depth += 1;
                self.i += 1;
            }
            Some(Tok::Punct('}')) => {
                self.depth = self.depth.saturating_sub(1);
                if self.stack.len() > 1 && self.stack.last().is_some_and(|s| s.1 == self.depth) {
                    self.stack.pop();
                }
                self.i += 1;
            }
            Some(Tok::Ident(word)) => self.word(&word),
            Some(Tok::Punct('$')) if self.ident(self.i + 1) == Some("crate") => {
                self.i += 1;
            }
            _ => self.i += 1,
        }
        if !keeps_pending {
            self.pending_pub = false;
            self.pending_test = false;
        }
    }

    /// `#[…]` or `#![…]`: skipped; `#[cfg(test)]` marks what follows as test code.
    fn attribute(&mut self) {
        let mut at = self.i + 1;
        if self.is_punct(at, '!') {
            at += 1;
        }
        if !self.is_punct(at, '[') {
            self.i += 1;
            return;
        }
        let start = at;
        let mut level = 0usize;
        while at < self.t.len() {
            match self.tok(at) {
                Some(Tok::Punct('[')) => level += 1,
                Some(Tok::Punct(']')) => {
                    level -= 1;
                    if level == 0 {
                        break;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        let body: Vec<&Tok> = (start + 1..at).filter_map(|k| self.tok(k)).collect();
        let cfg_test = body.len() == 4
            && body[0] == &Tok::Ident("cfg".into())
            && body[2] == &Tok::Ident("test".into());
        if cfg_test {
            self.pending_test = true;
        }
        self.i = at + 1;
    }

    fn word(&mut self, word: &str) {
        match word {
            "pub" => {
                self.pending_pub = true;
                self.i += 1;
                if self.is_punct(self.i, '(') {
                    while self.i < self.t.len() && !self.is_punct(self.i, ')') {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                return;
            }
            "use" => return self.use_statement(),
            "mod" => {
                if let Some(name) = self.ident(self.i + 1).map(str::to_string) {
                    return self.module(name);
                }
            }
            "macro_rules" if self.is_punct(self.i + 1, '!') => {
                if let Some(name) = self.ident(self.i + 2).map(str::to_string) {
                    self.scope().items.insert(name);
                }
            }
            _ if ITEM_KEYWORDS.contains(&word) => {
                if let Some(name) = self.ident(self.i + 1).map(str::to_string)
                    && !ITEM_KEYWORDS.contains(&name.as_str())
                {
                    self.scope().items.insert(name);
                }
            }
            _ => {}
        }
        self.facts.used_idents.insert(word.to_string());
        let after_sep = self.i > 0 && self.tok(self.i - 1) == Some(&Tok::PathSep);
        if self.tok(self.i + 1) == Some(&Tok::PathSep) && !after_sep {
            self.path_expression();
        } else {
            self.i += 1;
        }
    }

    /// `a::b::c` (stops before generics, `{`, `*`).
    fn path_expression(&mut self) {
        let line = self.line(self.i);
        let mut segs = Vec::new();
        while let Some(name) = self.ident(self.i) {
            segs.push(name.to_string());
            self.facts.used_idents.insert(name.to_string());
            self.i += 1;
            if self.tok(self.i) == Some(&Tok::PathSep) && self.ident(self.i + 1).is_some() {
                self.i += 1;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            self.scope().paths.push(PathRef { segs, line });
        }
    }

    /// `mod name;` or `mod name { … }`.
    fn module(&mut self, name: String) {
        let test = self.pending_test || self.in_test();
        if self.is_punct(self.i + 2, ';') {
            self.scope().file_children.push((name, test));
            self.i += 3;
        } else if self.is_punct(self.i + 2, '{') {
            let parent = self.stack.last().map_or(0, |s| s.0);
            self.facts.scopes.push(Scope {
                parent: Some(parent),
                name,
                test,
                ..Scope::default()
            });
            let index = self.facts.scopes.len() - 1;
            self.stack.push((index, self.depth));
            self.depth += 1;
            self.i += 3;
        } else {
            self.i += 1;
        }
    }

    fn use_statement(&mut self) {
        let public = self.pending_pub;
        self.i += 1;
        let mut leaves = Vec::new();
        self.use_tree(Vec::new(), public, &mut leaves);
        while self.i < self.t.len() && !self.is_punct(self.i, ';') {
            self.i += 1;
        }
        self.i += 1;
        self.scope().uses.extend(leaves);
    }

    /// One use tree after `prefix`: `a::b`, `a::b as c`, `a::*`, `a::{…, …}`.
    fn use_tree(&mut self, prefix: Vec<String>, public: bool, out: &mut Vec<UseLeaf>) {
        let mut segs = prefix;
        if self.tok(self.i) == Some(&Tok::PathSep) {
            // `::name` is an external crate.
            segs.push("::".to_string());
            self.i += 1;
        }
        loop {
            let line = self.line(self.i);
            match self.tok(self.i).cloned() {
                Some(Tok::Punct('$')) => self.i += 1,
                Some(Tok::Ident(name)) => {
                    segs.push(name);
                    self.i += 1;
                    if self.tok(self.i) == Some(&Tok::PathSep) {
                        self.i += 1;
                        continue;
                    }
                    let mut binding = segs.last().cloned();
                    if self.ident(self.i) == Some("as") {
                        binding = self.ident(self.i + 1).map(str::to_string);
                        self.i += 2;
                    }
                    if segs.last().is_some_and(|s| s == "self") && segs.len() > 1 {
                        segs.pop();
                        if binding.as_deref() == Some("self") {
                            binding = segs.last().cloned();
                        }
                    }
                    out.push(UseLeaf {
                        segs,
                        binding: binding.filter(|b| b != "_"),
                        glob: false,
                        public,
                        line,
                    });
                    return;
                }
                Some(Tok::Punct('*')) => {
                    self.i += 1;
                    out.push(UseLeaf {
                        segs,
                        binding: None,
                        glob: true,
                        public,
                        line,
                    });
                    return;
                }
                Some(Tok::Punct('{')) => {
                    self.i += 1;
                    loop {
                        match self.tok(self.i) {
                            Some(Tok::Punct('}')) => {
                                self.i += 1;
                                return;
                            }
                            Some(Tok::Punct(',')) => self.i += 1,
                            None => return,
                            Some(_) => {
                                let before = self.i;
                                self.use_tree(segs.clone(), public, out);
                                if self.i == before {
                                    self.i += 1;
                                }
                            }
                        }
                    }
                }
                _ => return,
            }
        }
    }
}
