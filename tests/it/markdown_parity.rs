//! Markdown in the chat next to pi's own `Markdown` component (pi-tui, run in node with
//! pi's dark theme): list items whose text goes on after a single newline or wraps at
//! the width, in and out of quotes, numbered and loose. Compared as text, row by row.
//! Skipped, with the reason printed, where the reference pi is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::process::Command;
use std::time::Duration;

use crate::support::reference_pi;
use pi::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use pi::modes::interactive::text::line_text;
use pi::modes::theme::{ColorMode, Theme};
use serde_json::json;

/// The rows pi's `Markdown` (no padding) renders for each text at `width`, without colours
/// and trailing spaces.
fn pi_rows(texts: &[&str], width: usize) -> Vec<Vec<String>> {
    let modules = reference_pi::node_modules_of(reference_pi::OLD_VERSION).join("@mariozechner");
    let tui = modules.join("pi-tui/dist/index.js");
    let theme = modules.join("pi-coding-agent/dist/modes/interactive/theme/theme.js");
    let script = format!(
        r#"
        const fs = await import("node:fs");
        const {{ Markdown }} = await import({tui});
        const {{ initTheme, getMarkdownTheme }} = await import({theme});
        initTheme("dark");
        const input = JSON.parse(fs.readFileSync(0, "utf8"));
        const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
        const out = input.texts.map((t) =>
            new Markdown(t, 0, 0, getMarkdownTheme()).render(input.width).map(strip));
        console.log(JSON.stringify(out));
        "#,
        tui = json!(format!("file://{}", tui.display())),
        theme = json!(format!("file://{}", theme.display())),
    );
    let mut node = Command::new("node");
    node.arg("--input-type=module").arg("-e").arg(script);
    node.env("FORCE_COLOR", "3");
    let input = json!({"texts": texts, "width": width});
    let out = reference_pi::run(node, &input.to_string(), Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("node failed: {e}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("node printed no JSON ({e}): {out}"))
}

fn our_rows(text: &str, width: usize) -> Vec<String> {
    let theme = Theme::dark(ColorMode::TrueColor);
    render_markdown(text, width, &theme, &MarkdownStyle::default())
        .iter()
        .map(|line| line_text(line).trim_end().to_string())
        .collect()
}

#[test]
fn list_item_continuations_start_at_the_margin_as_in_pi() {
    // Pinned to pi 0.73.1: pi-tui 1.6's Markdown (it indents a lazy list-item
    // continuation under the item) is issue 28.
    if let Err(why) = reference_pi::available_073() {
        eprintln!("skipped: {why}");
        return;
    }
    let texts = [
        "- first line\nsecond line\n- next",
        "- first line\n  indented second line\n- next",
        "1. one\n   two\n2. three",
        "- item one that is quite long and wraps around the width limit\n- short",
        "10. a numbered item long enough to wrap at the width\n11. b",
        "- one\n  still one, and long enough to wrap at the width\n- c",
        "- a\n  b\n- c\n  d\n\nAfter the list.",
        "> - quoted item\n>   continued here and long enough to wrap",
        "Intro line\n- a\n  b\n\nAfter.",
    ];
    let width = 30;
    let pi = pi_rows(&texts, width);
    let mut differences = Vec::new();
    for (text, pi) in texts.iter().zip(&pi) {
        let ours = our_rows(text, width);
        if &ours != pi {
            differences.push(format!("{text:?}\n  ours {ours:#?}\n  pi   {pi:#?}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
