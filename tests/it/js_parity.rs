//! The JavaScript number texts pi prints, checked against JavaScript itself: our
//! `String(n)`, `n.toFixed(d)` and `n.toLocaleString()` against node's on a few thousand
//! values (edge cases, exact ties, random doubles of every magnitude), and the tools'
//! `format_size` against the reference pi's own `formatSize`. Skipped, with the reason
//! printed, where node (or the reference pi) is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::support::reference_pi;
use pi::ai::js::{js_locale_string, js_number_to_string, js_to_fixed};
use pi::export::entries::compact_tokens;
use pi::modes::interactive::components::footer::format_tokens;
use pi::tools::truncate::format_size;
use serde_json::{Value, json};

fn node_available() -> bool {
    Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `script` in node with `input` (JSON) on stdin and returns what it printed as JSON.
fn node_json(script: &str, input: &Value) -> Value {
    let mut node = Command::new("node");
    node.arg("--input-type=module").arg("-e").arg(script);
    let out = reference_pi::run(node, &input.to_string(), Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("node failed: {e}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("node printed no JSON ({e}): {out}"))
}

/// Deterministic doubles of every magnitude, with the edge cases and exact ties that
/// tell `toFixed`-style rounding apart.
fn sample_doubles() -> Vec<f64> {
    let mut values = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.5,
        1.25,
        1.005,
        2.5,
        -2.5,
        0.125,
        9.995,
        1e21,
        -1e21,
        2e21,
        1e-6,
        1e-7,
        9.99e-7,
        123e-20,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        9_007_199_254_740_993.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    // Quarters, eighths and sixteenths: exact binary ties for one to four decimals.
    values.extend((0..400).map(|n| f64::from(n) / 16.0 + 0.5 / 16.0));
    values.extend((0..200).map(|n| f64::from(n) * 1.25));
    // Random doubles from 1e-12 to 1e24 (a fixed linear congruential sequence).
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..2000 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let mantissa = (state >> 11) as f64 / (1u64 << 53) as f64;
        let exponent = (i % 37) - 12;
        let sign = if state & 1 == 0 { 1.0 } else { -1.0 };
        values.push(sign * mantissa * 10f64.powi(exponent));
    }
    values
}

#[test]
fn number_texts_match_javascript() {
    if !node_available() {
        eprintln!("skipped: node is not on PATH");
        return;
    }
    let values = sample_doubles();
    // Bit patterns, so NaN, infinities and -0 reach node unchanged.
    let bits: Vec<String> = values
        .iter()
        .map(|v| format!("{:016x}", v.to_bits()))
        .collect();
    let script = r#"
        const fs = await import("node:fs");
        const input = JSON.parse(fs.readFileSync(0, "utf8"));
        const view = new DataView(new ArrayBuffer(8));
        const out = input.map((hex) => {
            view.setBigUint64(0, BigInt("0x" + hex));
            const x = view.getFloat64(0);
            return [String(x), ...[0, 1, 2, 3].map((d) => x.toFixed(d))];
        });
        console.log(JSON.stringify(out));
    "#;
    let expected = node_json(script, &json!(bits));
    let mut mismatches = Vec::new();
    for (value, want) in values.iter().zip(expected.as_array().unwrap()) {
        let ours: Vec<String> = std::iter::once(js_number_to_string(*value))
            .chain((0..4).map(|d| js_to_fixed(*value, d)))
            .collect();
        let want: Vec<String> = serde_json::from_value(want.clone()).unwrap();
        if ours != want {
            mismatches.push(format!("{value:e}: ours {ours:?}, JavaScript {want:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} values differ:\n{}",
        mismatches.len(),
        values.len(),
        mismatches.join("\n")
    );
}

#[test]
fn grouped_thousands_match_to_locale_string() {
    if !node_available() {
        eprintln!("skipped: node is not on PATH");
        return;
    }
    let mut values: Vec<u64> = vec![0, 7, 999, 1_000, 9_999, 12_345, 999_999, 1_000_000];
    values.extend((0..60).map(|i| 3u64.pow(i % 33) + u64::from(i)));
    values.push(9_007_199_254_740_991);
    let script = r#"
        const fs = await import("node:fs");
        const input = JSON.parse(fs.readFileSync(0, "utf8"));
        console.log(JSON.stringify(input.map((n) => n.toLocaleString("en-US"))));
    "#;
    let expected: Vec<String> = serde_json::from_value(node_json(script, &json!(values))).unwrap();
    let ours: Vec<String> = values.iter().map(|n| js_locale_string(*n)).collect();
    assert_eq!(ours, expected);
}

/// Where the reference pi's package is installed (as `tests/support/reference-pi.sh`
/// installs it).
fn reference_package() -> PathBuf {
    let base = match std::env::var_os("PI_REFERENCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = Command::new("sh")
                .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|h| !h.is_empty())
                .or_else(|| std::env::var("HOME").ok())
                .unwrap();
            PathBuf::from(home).join(".cache/pi-reference")
        }
    };
    let version = std::env::var("PI_REFERENCE_VERSION").unwrap_or_else(|_| "0.73.1".into());
    base.join(version)
        .join("node_modules/@mariozechner/pi-coding-agent")
}

#[test]
fn format_size_matches_the_reference_pi() {
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let truncate_module = reference_package().join("dist/core/tools/truncate.js");
    assert!(truncate_module.is_file(), "{}", truncate_module.display());
    // Every size up to 4 KB (each tenth of a KB is crossed, ties included), then sizes
    // around each tenth of a MB and a spread of larger ones.
    let mut sizes: Vec<u64> = (0..=4096).collect();
    for tenth in 0..=40u64 {
        let at = tenth * 1024 * 1024 / 10 + 1024 * 1024;
        sizes.extend(at.saturating_sub(3)..=at + 3);
    }
    sizes.extend((0..200).map(|i| 1u64 << (i % 40) | i));
    let script = format!(
        r#"
        const fs = await import("node:fs");
        const {{ formatSize }} = await import({module});
        const input = JSON.parse(fs.readFileSync(0, "utf8"));
        console.log(JSON.stringify(input.map((n) => formatSize(n))));
        "#,
        module = json!(format!("file://{}", truncate_module.display()))
    );
    let expected: Vec<String> = serde_json::from_value(node_json(&script, &json!(sizes))).unwrap();
    let ours: Vec<String> = sizes.iter().map(|n| format_size(*n as usize)).collect();
    let mismatches: Vec<String> = sizes
        .iter()
        .zip(ours.iter().zip(&expected))
        .filter(|(_, (a, b))| a != b)
        .map(|(n, (a, b))| format!("{n}: ours {a}, pi {b}"))
        .collect();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Token counts that cross every rounding step of the compact forms, exact ties included
/// (1250 is "1.3k" in JavaScript, where Rust's `{:.1}` says "1.2k").
fn sample_token_counts() -> Vec<u64> {
    let mut counts: Vec<u64> = (0..=12_000).step_by(50).collect();
    counts.extend([
        999, 1_050, 1_150, 1_250, 2_450, 9_950, 9_999, 10_500, 999_499, 999_500,
    ]);
    counts.extend((0..=200).map(|i| 1_000_000 + i * 50_000));
    counts.extend([1_250_000, 1_350_000, 9_950_000, 10_500_000, 123_456_789]);
    counts
}

/// Loads one plain function out of a file of the reference pi (by its source text, since
/// these are not exported) and prints what it returns for each count on stdin.
fn reference_function_outputs(file: &str, function: &str, counts: &[u64]) -> Vec<String> {
    let path = reference_package().join(file);
    assert!(path.is_file(), "{}", path.display());
    let script = format!(
        r#"
        const fs = await import("node:fs");
        const source = fs.readFileSync({path}, "utf8");
        const match = source.match(/function {function}\([^)]*\) \{{[\s\S]*?\n\s*\}}\n/);
        if (!match) throw new Error("{function} not found");
        const f = new Function("return (" + match[0] + ")")();
        const input = JSON.parse(fs.readFileSync(0, "utf8"));
        console.log(JSON.stringify(input.map((n) => f(n))));
        "#,
        path = json!(path.display().to_string()),
    );
    serde_json::from_value(node_json(&script, &json!(counts))).unwrap()
}

fn assert_same_texts(counts: &[u64], ours: &[String], pi: &[String]) {
    let mismatches: Vec<String> = counts
        .iter()
        .zip(ours.iter().zip(pi))
        .filter(|(_, (a, b))| a != b)
        .map(|(n, (a, b))| format!("{n}: ours {a}, pi {b}"))
        .collect();
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn footer_token_counts_match_the_reference_pi() {
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let counts = sample_token_counts();
    let pi = reference_function_outputs(
        "dist/modes/interactive/components/footer.js",
        "formatTokens",
        &counts,
    );
    let ours: Vec<String> = counts.iter().map(|n| format_tokens(*n)).collect();
    assert_same_texts(&counts, &ours, &pi);
}

#[test]
fn html_export_token_counts_match_the_reference_pi() {
    if let Err(why) = reference_pi::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let counts = sample_token_counts();
    let pi =
        reference_function_outputs("dist/core/export-html/template.js", "formatTokens", &counts);
    let ours: Vec<String> = counts.iter().map(|n| compact_tokens(*n)).collect();
    assert_same_texts(&counts, &ours, &pi);
}
