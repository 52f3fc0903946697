//! The architecture rules of `docs/architecture.md`, checked over `src/`: each layer uses
//! only the layers below it, and no files import each other in a circle.
//!
//! The check reads the sources with a small tokenizer (no compiler, no extra
//! dependency): `use` statements and other paths are resolved through the module tree,
//! re-exports and glob imports to the file that defines what they name (`model`), and
//! the rules run over those references (`rules`). The tests in `selftest` run it on tiny
//! crates written to temporary folders, so a checker that stopped seeing violations
//! fails too.
//!
//! Run it alone with `cargo test --test architecture`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

mod lex;
mod model;
mod parse;
mod rules;
mod selftest;

use std::path::Path;

use model::{Crate, RefKind};
use rules::{LAYERS, Layers};

/// What the check finds in one crate, as messages.
pub struct Findings {
    pub unplaced: Vec<String>,
    pub violations: Vec<String>,
    pub cycles: Vec<String>,
}

/// Scans the crate in `dir` and applies both rules with `layers`.
pub fn check(dir: &Path, layers: Layers) -> (Crate, Findings) {
    let krate = Crate::load(dir).unwrap();
    assert!(
        krate.missing.is_empty(),
        "modules without a file: {:?}",
        krate.missing
    );
    let refs = krate.references();
    let violations = rules::layer_violations(&krate, layers, &refs);
    let graph = rules::file_graph(&refs);
    let cycles = rules::cycles(krate.files.len(), &graph)
        .iter()
        .map(|c| rules::describe_cycle(&krate, c, &graph))
        .collect();
    let findings = Findings {
        unplaced: rules::unplaced(&krate, layers),
        violations,
        cycles,
    };
    (krate, findings)
}

fn this_crate() -> (Crate, Findings) {
    check(Path::new(env!("CARGO_MANIFEST_DIR")), LAYERS)
}

#[test]
fn every_module_has_a_layer() {
    let (_, findings) = this_crate();
    assert!(
        findings.unplaced.is_empty(),
        "add these to the layer table in tests/architecture/rules.rs and \
         docs/architecture.md:\n{}",
        findings.unplaced.join("\n")
    );
}

#[test]
fn layers_only_use_layers_below_them() {
    let (_, findings) = this_crate();
    assert!(
        findings.violations.is_empty(),
        "{} reference(s) against the layers (docs/architecture.md):\n{}",
        findings.violations.len(),
        findings.violations.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let (_, findings) = this_crate();
    assert!(
        findings.cycles.is_empty(),
        "{} import circle(s) (docs/architecture.md):\n{}",
        findings.cycles.len(),
        findings.cycles.join("\n")
    );
}

/// Guards the two tests above against passing because the scan saw nothing: the crate
/// has hundreds of files, and some references every version of it has are found.
#[test]
fn the_scan_sees_the_whole_crate() {
    let started = std::time::Instant::now();
    let (krate, _) = this_crate();
    let refs = krate.references();
    eprintln!(
        "scanned {} files, {} references in {:?}",
        krate.files.len(),
        refs.len(),
        started.elapsed()
    );
    assert!(krate.files.len() > 200, "only {} files", krate.files.len());
    assert!(refs.len() > 2000, "only {} references", refs.len());
    let has = |from: &str, to: &str| {
        refs.iter().any(|r| {
            r.kind != RefKind::Facade
                && krate.files[r.from].rel == from
                && krate.files[r.to].rel == to
        })
    };
    // A plain `use`, a path through a re-export (`crate::agent::AgentEvent` is defined in
    // `agent/events.rs`), a `super::` path, and a bare child-module path.
    assert!(has("src/agent/run.rs", "src/ai/stream.rs"));
    assert!(has("src/core/events.rs", "src/agent/events.rs"));
    assert!(has("src/tools/bash.rs", "src/tools/config.rs"));
    assert!(has(
        "src/modes/interactive/markdown/mod.rs",
        "src/modes/interactive/markdown/render.rs"
    ));
}

/// The layer table here and the picture in the docs must not drift apart.
#[test]
fn every_unit_of_the_table_is_in_the_docs() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let missing: Vec<&str> = LAYERS
        .iter()
        .flat_map(|units| units.iter().copied())
        .filter(|unit| !docs.contains(&format!("`{unit}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not name {missing:?}"
    );
}
