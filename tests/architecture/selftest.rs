//! The checker on tiny crates written to a temporary folder: each test is one situation
//! the rules must catch or must let pass.

use crate::check;
use crate::rules::Layers;

/// Two layers, `low` below `high`; `left` and `right` are peers on the lower one.
const TWO: Layers = &[&["low", "left", "right"], &["high"]];

/// Writes `files` (path under the crate folder, text) and checks the crate.
fn scan(files: &[(&str, &str)]) -> crate::Findings {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    check(dir.path(), TWO).1
}

fn lib(modules: &[&str]) -> (&'static str, String) {
    let text: String = modules.iter().map(|m| format!("pub mod {m};\n")).collect();
    ("src/lib.rs", text)
}

fn findings(files: &[(&str, &str)], modules: &[&str]) -> crate::Findings {
    let (path, text) = lib(modules);
    let mut all = vec![(path, text.as_str())];
    all.extend_from_slice(files);
    scan(&all)
}

#[test]
fn a_use_of_a_higher_layer_is_reported_with_file_and_line() {
    let f = findings(
        &[
            (
                "src/low.rs",
                "\nuse crate::high::Thing;\npub fn f(_: Thing) {}\n",
            ),
            ("src/high.rs", "pub struct Thing;\n"),
        ],
        &["low", "high"],
    );
    assert_eq!(f.violations.len(), 1, "{:?}", f.violations);
    let v = &f.violations[0];
    assert!(
        v.starts_with("src/low.rs:2: `crate::high::Thing` (src/high.rs)"),
        "{v}"
    );
    assert!(
        v.contains("`low` (layer 1) may not use `high` (layer 2)"),
        "{v}"
    );
}

#[test]
fn a_higher_layer_may_use_a_lower_one() {
    let f = findings(
        &[
            ("src/low.rs", "pub struct Thing;\n"),
            (
                "src/high.rs",
                "pub fn f() -> crate::low::Thing { crate::low::Thing }\n",
            ),
        ],
        &["low", "high"],
    );
    assert!(f.violations.is_empty(), "{:?}", f.violations);
    assert!(f.cycles.is_empty(), "{:?}", f.cycles);
}

#[test]
fn peers_on_one_layer_may_not_use_each_other() {
    let f = findings(
        &[
            ("src/left.rs", "pub fn f() { super::right::g() }\n"),
            ("src/right.rs", "pub fn g() {}\n"),
        ],
        &["left", "right"],
    );
    assert_eq!(f.violations.len(), 1, "{:?}", f.violations);
    assert!(
        f.violations[0].contains("are peers on one layer"),
        "{:?}",
        f.violations
    );
}

#[test]
fn a_module_the_table_does_not_place_is_reported() {
    let f = findings(&[("src/stray.rs", "")], &["stray"]);
    assert_eq!(f.unplaced, ["src/stray.rs"]);
}

#[test]
fn paths_in_comments_strings_and_attributes_are_not_references() {
    let low = r####"
//! Doc: crate::high::A
/* block /* nested crate::high::B */ still comment crate::high::C */
#[doc = "crate::high::D"]
#[allow(clippy::crate_in_macro_def)]
pub fn f<'a>(x: &'a str) -> (&'a str, char, char, &'static str) {
    let raw = r#"crate::high::E "quoted" "#;
    let bytes = b"crate::high::F";
    'outer: loop { break 'outer; }
    (x, '"', '\'', raw)
}
pub fn g() -> crate::high::Real { crate::high::Real }
"####;
    let f = findings(
        &[("src/low.rs", low), ("src/high.rs", "pub struct Real;\n")],
        &["low", "high"],
    );
    // Only the real path on the last line counts (twice, on one line).
    assert_eq!(f.violations.len(), 2, "{:?}", f.violations);
    assert!(
        f.violations.iter().all(|v| v.starts_with("src/low.rs:12:")),
        "{:?}",
        f.violations
    );
}

#[test]
fn a_reference_counts_against_the_file_that_defines_the_item() {
    // `high` re-exports `Thing` from a child; using it through the re-export is a use of
    // the child, and a use of `low` from that child is what makes `low` → `high` upward.
    let f = findings(
        &[
            ("src/high/mod.rs", "mod inner;\npub use inner::Thing;\n"),
            ("src/high/inner.rs", "pub struct Thing;\n"),
            (
                "src/low.rs",
                "use crate::high::Thing;\npub fn f(_: Thing) {}\n",
            ),
        ],
        &["low", "high"],
    );
    assert_eq!(f.violations.len(), 1, "{:?}", f.violations);
    assert!(
        f.violations[0].contains("(src/high/inner.rs)"),
        "{:?}",
        f.violations
    );
}

#[test]
fn siblings_that_import_each_other_are_a_circle() {
    let f = findings(
        &[
            ("src/low/mod.rs", "mod a;\nmod b;\n"),
            (
                "src/low/a.rs",
                "use super::b::B;\npub struct A(pub Option<B>);\n",
            ),
            (
                "src/low/b.rs",
                "pub struct B;\npub fn f(_: super::a::A) {}\n",
            ),
        ],
        &["low"],
    );
    assert_eq!(f.cycles.len(), 1, "{:?}", f.cycles);
    let c = &f.cycles[0];
    assert!(
        c.starts_with("circle between src/low/a.rs, src/low/b.rs:"),
        "{c}"
    );
    assert!(c.contains("src/low/a.rs:1 uses `super::b::B`"), "{c}");
    assert!(c.contains("src/low/b.rs:2 uses `super::a::A`"), "{c}");
}

#[test]
fn a_parent_offering_its_childrens_items_is_not_a_circle() {
    let f = findings(
        &[
            (
                "src/low/mod.rs",
                "mod a;\npub use a::A;\npub struct Base;\n",
            ),
            (
                "src/low/a.rs",
                "use super::Base;\npub struct A(pub Base);\n",
            ),
        ],
        &["low"],
    );
    assert!(f.cycles.is_empty(), "{:?}", f.cycles);
}

#[test]
fn a_parent_using_a_child_that_uses_the_parent_is_a_circle() {
    let f = findings(
        &[
            (
                "src/low/mod.rs",
                "mod a;\npub struct Base;\npub fn run() { a::go(Base) }\n",
            ),
            ("src/low/a.rs", "use super::Base;\npub fn go(_: Base) {}\n"),
        ],
        &["low"],
    );
    assert_eq!(f.cycles.len(), 1, "{:?}", f.cycles);
    // A re-exported name the parent uses itself is a use too.
    let f = findings(
        &[
            (
                "src/low/mod.rs",
                "mod a;\npub use a::go;\npub struct Base;\npub fn run() { go(Base) }\n",
            ),
            ("src/low/a.rs", "use super::Base;\npub fn go(_: Base) {}\n"),
        ],
        &["low"],
    );
    assert_eq!(f.cycles.len(), 1, "{:?}", f.cycles);
}

#[test]
fn super_in_an_inline_module_is_the_file_around_it() {
    // `super::*` in `a.rs`'s inline test module means `a`, not `low`: no circle.
    let f = findings(
        &[
            ("src/low/mod.rs", "mod a;\npub fn run() { a::go() }\n"),
            (
                "src/low/a.rs",
                "pub fn go() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() { go() }\n}\n",
            ),
        ],
        &["low"],
    );
    assert!(f.cycles.is_empty(), "{:?}", f.cycles);
}

#[test]
fn names_brought_in_by_a_glob_are_followed() {
    // `b.rs` reaches `high` only through the names `use super::*` brings from `low`.
    let f = findings(
        &[
            ("src/low/mod.rs", "mod b;\nuse crate::high;\n"),
            ("src/low/b.rs", "use super::*;\npub fn f() { high::g() }\n"),
            ("src/high.rs", "pub fn g() {}\n"),
        ],
        &["low", "high"],
    );
    let from_b: Vec<&String> = f
        .violations
        .iter()
        .filter(|v| v.starts_with("src/low/b.rs:2: `high::g`"))
        .collect();
    assert_eq!(from_b.len(), 1, "{:?}", f.violations);
}

#[test]
fn child_files_of_a_plain_file_are_found_in_its_folder() {
    // `a.rs` declares `mod c;`, found at `a/c.rs`.
    let f = findings(
        &[
            ("src/low/mod.rs", "pub mod a;\n"),
            ("src/low/a.rs", "pub mod c;\n"),
            ("src/low/a/c.rs", "pub fn f() { crate::high::g() }\n"),
            ("src/high.rs", "pub fn g() {}\n"),
        ],
        &["low", "high"],
    );
    assert_eq!(f.violations.len(), 1, "{:?}", f.violations);
    assert!(
        f.violations[0].starts_with("src/low/a/c.rs:1:"),
        "{:?}",
        f.violations
    );
}
