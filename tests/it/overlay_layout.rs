//! pi-rs's overlay placement (`modes::interactive::overlays::resolve_layout`) against
//! pi-tui's own `TUI.resolveOverlayLayout` from the reference install, run by node: every
//! combination of a table of overlay options, overlay heights and terminal sizes must give
//! the same width, row, column and maximum height. Skipped, with the reason printed, where
//! node or the reference pi is missing.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pi::modes::interactive::overlays::{OverlayOptions, resolve_layout};
use serde_json::{Value, json};

use crate::support::reference_pi;

fn option_table() -> Vec<Value> {
    let mut table = vec![json!({})];
    for anchor in [
        "center",
        "top-left",
        "top-right",
        "bottom-left",
        "bottom-right",
        "top-center",
        "bottom-center",
        "left-center",
        "right-center",
    ] {
        table.push(json!({"anchor": anchor}));
        table.push(json!({"anchor": anchor, "width": 40, "margin": 2}));
        table.push(json!({"anchor": anchor, "width": "50%", "maxHeight": "50%", "offsetX": 3, "offsetY": -2}));
        table.push(json!({"anchor": anchor, "width": 30, "margin": {"top": 1, "right": 4, "bottom": 3, "left": 0}}));
    }
    table.extend([
        json!({"width": 10, "minWidth": 30}),
        json!({"width": 500}),
        json!({"width": "100%", "maxHeight": 5}),
        json!({"width": "33.3%", "maxHeight": "25%"}),
        json!({"row": 3, "col": 7, "width": 20}),
        json!({"row": 500, "col": 500, "width": 20}),
        json!({"row": "0%", "col": "100%", "width": 20}),
        json!({"row": "50%", "col": "25%", "width": 20, "margin": 1}),
        json!({"row": "100%", "col": "0%", "width": "40%", "maxHeight": 8}),
        json!({"row": "bad", "col": "7x", "width": 20}),
        json!({"width": "wide"}),
        json!({"offsetX": -500, "offsetY": 500}),
        json!({"anchor": "bottom-center", "width": 55, "margin": {"bottom": 1}}),
        json!({"anchor": "right-center", "width": 40, "margin": {"right": 0}}),
        json!({"margin": 100}),
        json!({"margin": -3, "width": 20}),
        json!({"anchor": "top-left", "width": 20, "col": 5, "offsetX": 2}),
    ]);
    table
}

#[test]
fn overlay_placement_matches_pi_tui() {
    // Pinned to pi 0.73.1: pi-tui of pi 1.6 (overlays included) belongs to issue 28.
    if let Err(why) = reference_pi::available_073() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut cases = Vec::new();
    for options in option_table() {
        for height in [0usize, 1, 7, 30] {
            for (width, rows) in [(80usize, 24usize), (120, 40), (30, 10), (200, 60), (1, 1)] {
                cases.push((options.clone(), height, width, rows));
            }
        }
    }
    let input: String = cases
        .iter()
        .map(|(o, h, w, r)| {
            format!(
                "{}\n",
                json!({"options": o, "height": h, "width": w, "rows": r})
            )
        })
        .collect();
    let mut node = Command::new("node");
    node.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/overlay_layout.mjs"))
        .env(
            "PI_REFERENCE_NODE_MODULES",
            reference_pi::node_modules_of(reference_pi::OLD_VERSION),
        );
    let out = reference_pi::run(node, &input, Duration::from_secs(120)).expect("node runs");
    let theirs: Vec<Value> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(theirs.len(), cases.len(), "one answer per case");
    let mut differences = Vec::new();
    for ((options, height, width, rows), pi) in cases.iter().zip(&theirs) {
        let parsed = OverlayOptions::from_json(Some(options)).expect("options parse");
        let ours = resolve_layout(&parsed, *height, *width, *rows);
        let ours = json!({
            "width": ours.width, "row": ours.row, "col": ours.col, "maxHeight": ours.max_height,
        });
        if &ours != pi {
            differences.push(format!(
                "{options} height {height} on {width}x{rows}: pi-tui {pi}, pi-rs {ours}"
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} placements differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n")
    );
    println!("{} placements match pi-tui", cases.len());
}
