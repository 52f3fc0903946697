//! Embeds the node host's provided modules (`src/extensions/node/modules/*.mjs`, one file
//! per module pi gives its extensions) into the binary: writes a list of
//! `(file name, include_str!(…))` pairs to `$OUT_DIR/node_modules.rs`, which
//! `src/extensions/node.rs` includes. Whatever files the folder holds are embedded.

use std::path::Path;

fn main() {
    let dir = Path::new("src/extensions/node/modules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".mjs") || n.ends_with(".js") || n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let mut out = String::from("&[\n");
    for name in names {
        let full = Path::new(&root).join(dir).join(&name);
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            full.display().to_string()
        ));
    }
    out.push(']');
    let target = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("node_modules.rs");
    if let Err(e) = std::fs::write(&target, out) {
        panic!("cannot write {}: {e}", target.display());
    }
}
