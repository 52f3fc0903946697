//! The two rules, checked over the references of a scanned crate:
//!
//! 1. Layers point down. Each file belongs to the unit named by the longest matching
//!    module prefix in the layer table; a file may use its own unit and units on lower
//!    layers, never a unit on its own layer (peers stay independent) or above it.
//! 2. No import circles. Files are the nodes; a reference is an edge, except a parent's
//!    `pub use` of its own children's items that it does not use itself (that offers
//!    names, it does not depend on them). Any strongly connected component with more than
//!    one file is a circle.

use std::collections::BTreeMap;

use crate::model::{Crate, RefKind, Reference};

/// The layers, bottom first; each is a list of units (module paths joined with `::`).
pub type Layers = &'static [&'static [&'static str]];

/// pi-rs's layers (see `docs/architecture.md`).
pub const LAYERS: Layers = &[
    &["ai"],
    &["messages"],
    &["session", "tools"],
    &["agent"],
    &["compaction", "export"],
    &["extensions"],
    &["core"],
    // `modes/mod.rs` and what the front ends share (`modes::theme`).
    &["modes"],
    &["modes::interactive", "modes::print", "modes::rpc"],
    &["cli"],
];

/// The unit a module path belongs to, and its layer (`None` for `lib.rs`, which only
/// declares the top-level modules, and for modules the table does not place).
pub fn unit_of(layers: Layers, module_path: &str) -> Option<(&'static str, usize)> {
    let mut best: Option<(&'static str, usize)> = None;
    for (level, units) in layers.iter().enumerate() {
        for &unit in units.iter() {
            let matches = module_path == unit || module_path.starts_with(&format!("{unit}::"));
            if matches && best.is_none_or(|(b, _)| unit.len() > b.len()) {
                best = Some((unit, level));
            }
        }
    }
    best
}

/// Files that no unit of the table covers (besides `lib.rs`).
pub fn unplaced(krate: &Crate, layers: Layers) -> Vec<String> {
    (0..krate.files.len())
        .filter(|&f| {
            let path = krate.module_path(f);
            !path.is_empty() && unit_of(layers, &path).is_none()
        })
        .map(|f| krate.files[f].rel.clone())
        .collect()
}

/// Every reference that points up or sideways, as `file:line: …` messages.
pub fn layer_violations(krate: &Crate, layers: Layers, refs: &[Reference]) -> Vec<String> {
    let mut out = Vec::new();
    for r in refs {
        if r.kind == RefKind::Facade {
            continue;
        }
        let (Some((from_unit, from_level)), Some((to_unit, to_level))) = (
            unit_of(layers, &krate.module_path(r.from)),
            unit_of(layers, &krate.module_path(r.to)),
        ) else {
            continue;
        };
        if from_unit == to_unit || to_level < from_level {
            continue;
        }
        let why = if to_level == from_level {
            format!("`{from_unit}` and `{to_unit}` are peers on one layer and stay independent")
        } else {
            format!(
                "`{from_unit}` (layer {}) may not use `{to_unit}` (layer {}) above it",
                from_level + 1,
                to_level + 1
            )
        };
        let test = if r.test { " (test code)" } else { "" };
        out.push(format!(
            "{}:{}: `{}` ({}){test} — {why}",
            krate.files[r.from].rel, r.line, r.written, krate.files[r.to].rel
        ));
    }
    out
}

/// The file graph: for each file, the files it references, with the first reference.
pub fn file_graph(refs: &[Reference]) -> BTreeMap<usize, BTreeMap<usize, Reference>> {
    let mut graph: BTreeMap<usize, BTreeMap<usize, Reference>> = BTreeMap::new();
    for r in refs.iter().filter(|r| r.kind != RefKind::Facade) {
        graph
            .entry(r.from)
            .or_default()
            .entry(r.to)
            .or_insert_with(|| r.clone());
    }
    graph
}

/// Strongly connected components with more than one file (Tarjan's algorithm), each
/// sorted, in order of their smallest file index.
pub fn cycles(
    nodes: usize,
    graph: &BTreeMap<usize, BTreeMap<usize, Reference>>,
) -> Vec<Vec<usize>> {
    struct State<'g> {
        graph: &'g BTreeMap<usize, BTreeMap<usize, Reference>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let targets: Vec<usize> = s
            .graph
            .get(&v)
            .map(|t| t.keys().copied().collect())
            .unwrap_or_default();
        for w in targets {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(wi) if s.on_stack[w] => s.low[v] = s.low[v].min(wi),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: vec![None; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..nodes {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// A circle as text: its files, and for each file one reference that keeps it in.
pub fn describe_cycle(
    krate: &Crate,
    component: &[usize],
    graph: &BTreeMap<usize, BTreeMap<usize, Reference>>,
) -> String {
    let names: Vec<&str> = component
        .iter()
        .map(|&f| krate.files[f].rel.as_str())
        .collect();
    let mut text = format!("circle between {}:", names.join(", "));
    for &f in component {
        for (to, r) in graph.get(&f).into_iter().flatten() {
            if component.contains(to) {
                text.push_str(&format!(
                    "\n    {}:{} uses `{}` ({})",
                    krate.files[f].rel, r.line, r.written, krate.files[*to].rel
                ));
            }
        }
    }
    text
}
