//! The crate's module tree, built from `src/lib.rs` by following `mod` declarations, and
//! the references between files: every `use` leaf and every other path is resolved to
//! the module that defines what it names, following re-exports (`pub use`) and glob
//! imports, so `crate::extensions::ExtensionHost` counts as a use of
//! `extensions/host.rs`, not of `extensions/mod.rs`.
//!
//! Paths whose first segment is not `crate`, `self`, `super`, a name imported into the
//! module, a child module or a local item (an external crate, `std`, a local variable)
//! are not references.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::lex::tokenize;
use crate::parse::{FileFacts, PathRef, UseLeaf, parse};

/// A module: a file, or an inline `mod x { … }` inside one.
#[derive(Debug, Clone)]
pub struct Module {
    /// Path from the crate root, e.g. `["ai", "providers", "driver"]`.
    pub path: Vec<String>,
    /// Index into [`Crate::files`].
    pub file: usize,
    pub parent: Option<usize>,
    pub children: HashMap<String, usize>,
    /// Names bound by `use` here: name → (path, is public).
    pub bindings: HashMap<String, (Vec<String>, bool)>,
    /// Modules whose names are glob-imported (`use x::*`).
    pub globs: Vec<Vec<String>>,
    pub items: HashSet<String>,
    pub test: bool,
}

/// One source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Relative to the crate directory, with `/`: `src/ai/auth.rs`.
    pub rel: String,
    /// The file's own module (index into [`Crate::modules`]).
    pub module: usize,
    pub facts: FileFacts,
    /// For each scope of `facts`, its module.
    pub scope_modules: Vec<usize>,
}

/// How a reference was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Use,
    /// A `pub use` of something in the module's own subtree that the file does not use
    /// itself: the parent offering its children's items, not a dependency.
    Facade,
    Path,
}

/// A reference from one file to another.
#[derive(Debug, Clone)]
pub struct Reference {
    pub from: usize,
    pub to: usize,
    pub line: usize,
    /// The path as written, joined with `::`.
    pub written: String,
    pub kind: RefKind,
    /// In `#[cfg(test)]` code.
    pub test: bool,
}

/// The scanned crate.
#[derive(Debug, Clone, Default)]
pub struct Crate {
    pub modules: Vec<Module>,
    pub files: Vec<SourceFile>,
    /// Declared modules whose file was not found (a scan that cannot see a file cannot
    /// vouch for it).
    pub missing: Vec<String>,
}

/// What a path resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Module(usize),
    /// An item defined in (or only known to be reachable through) this module.
    Item(usize),
}

impl Target {
    fn module(self) -> usize {
        match self {
            Target::Module(m) | Target::Item(m) => m,
        }
    }
}

/// How deep re-exports and globs are followed (they can loop: `use super::*` in a child
/// of a module that glob-re-exports the child).
const MAX_DEPTH: usize = 12;

impl Crate {
    /// Reads the crate whose root is `<dir>/src/lib.rs`.
    pub fn load(dir: &Path) -> std::io::Result<Crate> {
        let mut krate = Crate::default();
        let root = dir.join("src").join("lib.rs");
        krate.add_file(dir, &root, Vec::new(), None, false)?;
        Ok(krate)
    }

    fn add_file(
        &mut self,
        dir: &Path,
        file: &Path,
        path: Vec<String>,
        parent: Option<usize>,
        test: bool,
    ) -> std::io::Result<usize> {
        let text = std::fs::read_to_string(file)?;
        let facts = parse(&tokenize(&text));
        let rel = file
            .strip_prefix(dir)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        let file_index = self.files.len();
        let module = self.new_module(path.clone(), file_index, parent, test);
        self.files.push(SourceFile {
            rel,
            module,
            facts: facts.clone(),
            scope_modules: Vec::new(),
        });
        // Scopes are in source order, so a parent scope always comes before its children.
        let mut scope_modules = vec![module];
        for scope in facts.scopes.iter().skip(1) {
            let parent_module = scope_modules[scope.parent.unwrap_or(0)];
            let mut child_path = self.modules[parent_module].path.clone();
            child_path.push(scope.name.clone());
            let m = self.new_module(child_path, file_index, Some(parent_module), scope.test);
            self.modules[parent_module]
                .children
                .insert(scope.name.clone(), m);
            scope_modules.push(m);
        }
        for (scope, &m) in facts.scopes.iter().zip(&scope_modules) {
            let module = &mut self.modules[m];
            module.items.extend(scope.items.iter().cloned());
            for leaf in &scope.uses {
                if leaf.glob {
                    module.globs.push(leaf.segs.clone());
                } else if let Some(name) = &leaf.binding {
                    module
                        .bindings
                        .insert(name.clone(), (leaf.segs.clone(), leaf.public));
                }
            }
        }
        self.files[file_index].scope_modules = scope_modules.clone();
        // Child files: `a/mod.rs` and `lib.rs` look in their own folder, `a.rs` in `a/`.
        let base = match file.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => file.parent().map(Path::to_path_buf),
            _ => file
                .parent()
                .map(|p| p.join(file.file_stem().unwrap_or_default())),
        }
        .unwrap_or_default();
        for (scope, &m) in facts.scopes.iter().zip(&scope_modules) {
            let mut folder = base.clone();
            for name in &self.modules[m].path[path.len()..] {
                folder.push(name);
            }
            for (name, child_test) in &scope.file_children {
                let candidates = [
                    folder.join(format!("{name}.rs")),
                    folder.join(name).join("mod.rs"),
                ];
                let Some(found) = candidates.iter().find(|c| c.is_file()).cloned() else {
                    self.missing
                        .push(format!("{}: mod {name}", folder.display()));
                    continue;
                };
                let mut child_path = self.modules[m].path.clone();
                child_path.push(name.clone());
                let child_test = *child_test || self.modules[m].test;
                let child = self.add_file(dir, &found, child_path, Some(m), child_test)?;
                let child_module = self.files[child].module;
                self.modules[m].children.insert(name.clone(), child_module);
            }
        }
        Ok(file_index)
    }

    fn new_module(
        &mut self,
        path: Vec<String>,
        file: usize,
        parent: Option<usize>,
        test: bool,
    ) -> usize {
        self.modules.push(Module {
            path,
            file,
            parent,
            children: HashMap::new(),
            bindings: HashMap::new(),
            globs: Vec::new(),
            items: HashSet::new(),
            test,
        });
        self.modules.len() - 1
    }

    /// The module `segs` leads to, written in module `from`.
    fn resolve(&self, from: usize, segs: &[String], depth: usize) -> Option<Target> {
        if depth > MAX_DEPTH || segs.is_empty() {
            return None;
        }
        let (mut current, rest) = match segs[0].as_str() {
            "crate" => (Target::Module(0), &segs[1..]),
            "self" => (Target::Module(from), &segs[1..]),
            "super" => {
                let mut m = from;
                let mut k = 0;
                while segs.get(k).is_some_and(|s| s == "super") {
                    m = self.modules[m].parent?;
                    k += 1;
                }
                (Target::Module(m), &segs[k..])
            }
            "::" => return None,
            name => (self.member(from, name, depth)?, &segs[1..]),
        };
        for seg in rest {
            let Target::Module(m) = current else {
                break; // an associated item: `Type::new`
            };
            current = self.member(m, seg, depth).unwrap_or(Target::Item(m));
        }
        Some(current)
    }

    /// What `name` means inside module `m`.
    fn member(&self, m: usize, name: &str, depth: usize) -> Option<Target> {
        let module = &self.modules[m];
        if let Some(&child) = module.children.get(name) {
            return Some(Target::Module(child));
        }
        if let Some((segs, _)) = module.bindings.get(name) {
            return self.resolve(m, segs, depth + 1);
        }
        if module.items.contains(name) {
            return Some(Target::Item(m));
        }
        for glob in &module.globs {
            if let Some(Target::Module(source)) = self.resolve(m, glob, depth + 1)
                && source != m
                && let Some(found) = self.member(source, name, depth + 1)
            {
                return Some(found);
            }
        }
        None
    }

    /// Whether module `inner` is `outer` or inside it.
    fn is_within(&self, inner: usize, outer: usize) -> bool {
        let mut m = Some(inner);
        while let Some(k) = m {
            if k == outer {
                return true;
            }
            m = self.modules[k].parent;
        }
        false
    }

    /// Every reference from one file to another, in file and line order.
    pub fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        for (f, file) in self.files.iter().enumerate() {
            for (scope, &m) in file.facts.scopes.iter().zip(&file.scope_modules) {
                let test = self.modules[m].test;
                for leaf in &scope.uses {
                    if let Some(r) = self.use_reference(f, m, leaf, test) {
                        out.push(r);
                    }
                }
                for path in &scope.paths {
                    if let Some(r) = self.path_reference(f, m, path, test) {
                        out.push(r);
                    }
                }
            }
        }
        out.sort_by_key(|r| (r.from, r.line));
        out
    }

    fn use_reference(&self, f: usize, m: usize, leaf: &UseLeaf, test: bool) -> Option<Reference> {
        let target = self.resolve(m, &leaf.segs, 0)?.module();
        let to = self.modules[target].file;
        if to == f {
            return None;
        }
        let offered_not_used = leaf.public
            && leaf
                .binding
                .as_ref()
                .is_none_or(|b| !self.files[f].facts.used_idents.contains(b));
        let kind = if offered_not_used && self.is_within(target, self.files[f].module) {
            RefKind::Facade
        } else {
            RefKind::Use
        };
        Some(Reference {
            from: f,
            to,
            line: leaf.line,
            written: leaf.segs.join("::") + if leaf.glob { "::*" } else { "" },
            kind,
            test,
        })
    }

    fn path_reference(&self, f: usize, m: usize, path: &PathRef, test: bool) -> Option<Reference> {
        let target = self.resolve(m, &path.segs, 0)?.module();
        let to = self.modules[target].file;
        (to != f).then(|| Reference {
            from: f,
            to,
            line: path.line,
            written: path.segs.join("::"),
            kind: RefKind::Path,
            test,
        })
    }

    /// The module path of a file, joined with `::` (empty for `lib.rs`).
    pub fn module_path(&self, file: usize) -> String {
        self.modules[self.files[file].module].path.join("::")
    }
}
