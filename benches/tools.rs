//! Tool speed on realistic inputs: grep and find over a generated tree of 10,000 files,
//! reading a large file, and editing one (matching, diff and the atomic write).
//!
//! Run with `cargo bench --bench tools`; figures are recorded in docs/performance.md.

// Benchmark fixtures fail loudly.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use pi::tools::edit_diff::{Replacement, apply_edits, generate_diff_string};
use pi::tools::{Tool, ToolCallArgs, ToolConfig, create_tool};
use serde_json::{Value, json};

/// 10,000 source-like files in 100 directories; one file in 100 mentions `needle_<n>`.
fn generate_tree(root: &Path) {
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    for d in 0..100 {
        let dir = root.join(format!("module_{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let n = d * 100 + f;
            let mut body = String::with_capacity(2048);
            for line in 0..40 {
                body.push_str(&format!(
                    "    let value_{line} = compute({n}, {line}); // item {n}\n"
                ));
            }
            if n % 100 == 7 {
                body.push_str(&format!("    // needle_{n} lives here\n"));
            }
            let ext = if f % 2 == 0 { "rs" } else { "ts" };
            std::fs::write(dir.join(format!("file_{f:03}.{ext}")), body).unwrap();
        }
    }
}

fn run(rt: &tokio::runtime::Runtime, tool: &Arc<dyn Tool>, args: Value) -> usize {
    let output = rt
        .block_on(tool.execute(ToolCallArgs::new("bench", args)))
        .unwrap_or_default();
    output.content.len()
}

fn search(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    generate_tree(dir.path());
    let config = ToolConfig::new(dir.path());
    let grep = create_tool("grep", &config).unwrap();
    let find = create_tool("find", &config).unwrap();

    let mut group = c.benchmark_group("search_10k_files");
    group.sample_size(20);
    group.bench_function("grep_rare_pattern", |b| {
        b.iter(|| run(&rt, &grep, json!({"pattern": "needle_\\d+"})))
    });
    group.bench_function("grep_no_match", |b| {
        b.iter(|| run(&rt, &grep, json!({"pattern": "definitely_absent"})))
    });
    group.bench_function("grep_common_pattern_limit_100", |b| {
        b.iter(|| run(&rt, &grep, json!({"pattern": "compute"})))
    });
    group.bench_function("find_glob", |b| {
        b.iter(|| run(&rt, &find, json!({"pattern": "*.rs"})))
    });
    group.bench_function("find_path_glob", |b| {
        b.iter(|| run(&rt, &find, json!({"pattern": "module_05*/**/file_00*.ts"})))
    });
    group.finish();
}

fn read_and_edit(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = ToolConfig::new(dir.path());

    // 10 MB, 200,000 lines.
    let big: String = (0..200_000)
        .map(|i| format!("line {i:06} of a large file with some padding text\n"))
        .collect();
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let read = create_tool("read", &config).unwrap();

    let mut group = c.benchmark_group("read_10mb");
    group.sample_size(20);
    group.bench_function("first_page", |b| {
        b.iter(|| run(&rt, &read, json!({"path": "big.txt"})))
    });
    group.bench_function("page_near_end", |b| {
        b.iter(|| {
            run(
                &rt,
                &read,
                json!({"path": "big.txt", "offset": 199_000, "limit": 500}),
            )
        })
    });
    group.finish();

    // 1 MB source file, one edit in the middle.
    let source: String = (0..20_000)
        .map(|i| format!("    let value_{i} = compute({i}); // {}\n", i % 7))
        .collect();
    let edit = create_tool("edit", &config).unwrap();
    let path = dir.path().join("source.rs");
    let mut group = c.benchmark_group("edit_1mb");
    group.sample_size(20);
    group.bench_function("match_and_diff", |b| {
        let edits = [Replacement {
            old_text: "    let value_10000 = compute(10000);".to_string(),
            new_text: "    let value_10000 = compute(10000) * 2;".to_string(),
        }];
        b.iter(|| {
            let applied = apply_edits(&source, &edits, "source.rs").unwrap();
            generate_diff_string(&applied.base, &applied.new, 4).0.len()
        })
    });
    group.bench_function("tool_with_write", |b| {
        b.iter_batched(
            || std::fs::write(&path, &source).unwrap(),
            |()| {
                run(
                    &rt,
                    &edit,
                    json!({"path": "source.rs", "edits": [{"oldText": "    let value_10000 = compute(10000);", "newText": "    let value_10000 = compute(10000) * 2;"}]}),
                )
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.bench_function("tolerant_match_and_diff", |b| {
        // Curly quotes in the file force the normalized (NFKC) path over the whole file.
        let curly = source.replacen("compute(10000)", "compute(\u{201c}10000\u{201d})", 1);
        let edits = [Replacement {
            old_text: "    let value_10000 = compute(\"10000\");".to_string(),
            new_text: "    let value_10000 = 0;".to_string(),
        }];
        b.iter(|| {
            let applied = apply_edits(&curly, &edits, "source.rs").unwrap();
            generate_diff_string(&applied.base, &applied.new, 4).0.len()
        })
    });
    group.finish();
}

criterion_group!(benches, search, read_and_edit);
criterion_main!(benches);
