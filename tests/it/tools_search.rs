//! `grep`, `find` and `ls` over real directory trees: ignore files (inside and outside
//! git repositories), hidden files, context lines, limits and their notices, sorting.
//! Texts were checked against pi 0.73.1 running ripgrep 13 and fd 10.5 on the same trees
//! (pi's order is random; ours is path order).

// Fixture helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use crate::tools_common::Sandbox;
use serde_json::json;

/// A small project in a git repository, with ignored, hidden and binary files.
fn project() -> Sandbox {
    let sandbox = Sandbox::new();
    let status = std::process::Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(sandbox.root())
        .status()
        .unwrap();
    assert!(status.success());
    sandbox.write(".gitignore", "ignored.txt\nbuild/\n*.log\n");
    sandbox.write(
        "src/main.rs",
        "fn main() {\n    // TODO: greet\n    println!(\"hello\");\n}\n",
    );
    sandbox.write("src/lib.rs", "pub fn helper() {}\n// TODO: fix\n");
    sandbox.write("src/nested/deep.ts", "TODO deep\n");
    sandbox.write("ignored.txt", "TODO ignored\n");
    sandbox.write("build/out.js", "TODO built\n");
    sandbox.write("debug.log", "TODO log\n");
    sandbox.write(".hidden.txt", "TODO hidden\n");
    sandbox.write(".github/ci.yml", "on: push # TODO\n");
    sandbox.write("bin.dat", b"abc\x00TODO binary\n");
    sandbox
}

#[tokio::test]
async fn grep_honors_gitignore_includes_hidden_files_and_skips_binary_and_git() {
    let sandbox = project();
    let outcome = sandbox.run("grep", json!({"pattern": "TODO"})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    .github/ci.yml:1: on: push # TODO
    .hidden.txt:1: TODO hidden
    src/lib.rs:2: // TODO: fix
    src/main.rs:2:     // TODO: greet
    src/nested/deep.ts:1: TODO deep
    ");
    assert_eq!(outcome.ok().details, None);
}

#[tokio::test]
async fn grep_outside_a_git_repository_ignores_gitignore_like_ripgrep() {
    let sandbox = Sandbox::new();
    sandbox.write(".gitignore", "skip/\n");
    sandbox.write(".ignore", "x.tmp\n");
    sandbox.write("skip/three.txt", "needle\n");
    sandbox.write("x.tmp", "needle\n");
    sandbox.write("y.txt", "needle\n");
    let outcome = sandbox.run("grep", json!({"pattern": "needle"})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    skip/three.txt:1: needle
    y.txt:1: needle
    ");
}

#[tokio::test]
async fn grep_options_filter_and_shape_the_output() {
    let sandbox = project();
    let ignore_case = sandbox
        .run("grep", json!({"pattern": "todo: F", "ignoreCase": true}))
        .await;
    assert_eq!(ignore_case.text(), "src/lib.rs:2: // TODO: fix");

    let glob = sandbox
        .run("grep", json!({"pattern": "TODO", "glob": "*.ts"}))
        .await;
    assert_eq!(glob.text(), "src/nested/deep.ts:1: TODO deep");

    let literal = sandbox
        .run("grep", json!({"pattern": "println!(", "literal": true}))
        .await;
    assert_eq!(literal.text(), "src/main.rs:3:     println!(\"hello\");");

    let in_dir = sandbox
        .run("grep", json!({"pattern": "TODO", "path": "src/nested"}))
        .await;
    assert_eq!(in_dir.text(), "deep.ts:1: TODO deep");

    let one_file = sandbox
        .run("grep", json!({"pattern": "TODO", "path": "ignored.txt"}))
        .await;
    assert_eq!(one_file.text(), "ignored.txt:1: TODO ignored");
}

#[tokio::test]
async fn grep_context_lines_use_dashes() {
    let sandbox = Sandbox::new();
    sandbox.write("ctx.txt", "one\ntwo TODO\nthree\nfour\nfive TODO\nsix\n");
    let outcome = sandbox
        .run(
            "grep",
            json!({"pattern": "TODO", "path": "ctx.txt", "context": 1}),
        )
        .await;
    insta::assert_snapshot!(outcome.text(), @r"
    ctx.txt-1- one
    ctx.txt:2: two TODO
    ctx.txt-3- three
    ctx.txt-4- four
    ctx.txt:5: five TODO
    ctx.txt-6- six
    ");
}

#[tokio::test]
async fn grep_match_limit_and_long_lines_get_notices() {
    let sandbox = Sandbox::new();
    let many: String = (0..300).map(|i| format!("match {i}\n")).collect();
    sandbox.write("many.txt", many);
    sandbox.write("long.txt", format!("TODO {}\n", "z".repeat(700)));
    let limited = sandbox
        .run(
            "grep",
            json!({"pattern": "match", "path": "many.txt", "limit": 3}),
        )
        .await;
    insta::assert_snapshot!(limited.text(), @r"
    many.txt:1: match 0
    many.txt:2: match 1
    many.txt:3: match 2

    [3 matches limit reached. Use limit=6 for more, or refine pattern]
    ");
    assert_eq!(limited.details(), json!({"matchLimitReached": 3}));

    let long = sandbox.run("grep", json!({"pattern": "TODO"})).await;
    let text = long.text();
    assert!(text.starts_with(&format!(
        "long.txt:1: TODO {}... [truncated]",
        "z".repeat(495)
    )));
    assert!(
        text.ends_with("\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]")
    );
    assert_eq!(long.details(), json!({"linesTruncated": true}));
}

#[tokio::test]
async fn grep_limit_keeps_the_first_matches_in_path_order() {
    let sandbox = Sandbox::new();
    for name in ["d", "b", "a/z", "a/y", "c"] {
        sandbox.write(&format!("{name}.txt"), "hit\nhit\n");
    }
    let outcome = sandbox
        .run("grep", json!({"pattern": "hit", "limit": 5}))
        .await;
    insta::assert_snapshot!(outcome.text(), @r"
    a/y.txt:1: hit
    a/y.txt:2: hit
    a/z.txt:1: hit
    a/z.txt:2: hit
    b.txt:1: hit

    [5 matches limit reached. Use limit=10 for more, or refine pattern]
    ");
}

#[tokio::test]
async fn grep_byte_limit_cuts_output_at_50kb() {
    let sandbox = Sandbox::new();
    let lines: String = (0..150)
        .map(|i| format!("{} {i}\n", "m".repeat(400)))
        .collect();
    sandbox.write("huge.txt", lines);
    let outcome = sandbox
        .run(
            "grep",
            json!({"pattern": "m", "path": "huge.txt", "limit": 150}),
        )
        .await;
    let text = outcome.text();
    assert!(text.ends_with("\n\n[150 matches limit reached. Use limit=300 for more, or refine pattern. 50.0KB limit reached]"));
    let details = outcome.details();
    assert_eq!(details["matchLimitReached"], 150);
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["maxLines"], 9_007_199_254_740_991_u64);
}

#[tokio::test]
async fn grep_errors_and_empty_results() {
    let sandbox = project();
    assert_eq!(
        sandbox
            .run("grep", json!({"pattern": "zzz_nothing"}))
            .await
            .text(),
        "No matches found"
    );
    assert_eq!(
        sandbox.scrub(
            &sandbox
                .run("grep", json!({"pattern": "x", "path": "nope"}))
                .await
                .error()
        ),
        "Path not found: $CWD/nope"
    );
    insta::assert_snapshot!(sandbox.run("grep", json!({"pattern": "(unclosed"})).await.error(), @r"
    regex parse error:
        (unclosed
        ^
    error: unclosed group
    ");
}

#[tokio::test]
async fn find_lists_files_and_directories_relative_and_sorted() {
    let sandbox = project();
    let all = sandbox.run("find", json!({"pattern": "*"})).await;
    insta::assert_snapshot!(all.text(), @r"
    .github/
    .github/ci.yml
    .gitignore
    .hidden.txt
    bin.dat
    src/
    src/lib.rs
    src/main.rs
    src/nested/
    src/nested/deep.ts
    ");
    let rust = sandbox.run("find", json!({"pattern": "*.rs"})).await;
    assert_eq!(rust.text(), "src/lib.rs\nsrc/main.rs");
    let in_src = sandbox
        .run("find", json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(in_src.text(), "lib.rs\nmain.rs");
}

#[tokio::test]
async fn find_paths_with_slashes_match_the_full_path_and_case_is_smart() {
    let sandbox = project();
    sandbox.write("UPPER.TS", "x");
    let nested = sandbox.run("find", json!({"pattern": "src/**/*.ts"})).await;
    assert_eq!(nested.text(), "src/nested/deep.ts");
    let lower = sandbox.run("find", json!({"pattern": "*.ts"})).await;
    assert_eq!(lower.text(), "UPPER.TS\nsrc/nested/deep.ts");
    let upper = sandbox.run("find", json!({"pattern": "*.TS"})).await;
    assert_eq!(upper.text(), "UPPER.TS");
}

#[tokio::test]
async fn find_honors_gitignore_even_outside_git_repositories() {
    let sandbox = Sandbox::new();
    sandbox.write(".gitignore", "skip/\n*.tmp\n");
    sandbox.write(".fdignore", "secret.txt\n");
    sandbox.write("skip/a.txt", "");
    sandbox.write("b.tmp", "");
    sandbox.write("secret.txt", "");
    sandbox.write("keep.txt", "");
    let outcome = sandbox.run("find", json!({"pattern": "*.txt"})).await;
    assert_eq!(outcome.text(), "keep.txt");
}

#[tokio::test]
async fn find_limit_notice_and_errors() {
    let sandbox = project();
    let limited = sandbox
        .run("find", json!({"pattern": "*", "limit": 3}))
        .await;
    insta::assert_snapshot!(limited.text(), @r"
    .github/
    .github/ci.yml
    .gitignore

    [3 results limit reached. Use limit=6 for more, or refine pattern]
    ");
    assert_eq!(limited.details(), json!({"resultLimitReached": 3}));
    assert_eq!(
        sandbox
            .run("find", json!({"pattern": "*.zip"}))
            .await
            .text(),
        "No files found matching pattern"
    );
    assert_eq!(
        sandbox.scrub(
            &sandbox
                .run("find", json!({"pattern": "*", "path": "nope"}))
                .await
                .error()
        ),
        "[fd error]: Search path '$CWD/nope' is not a directory.\n[fd error]: No valid search paths given."
    );
    assert_eq!(
        sandbox
            .run("find", json!({"pattern": "[oops"}))
            .await
            .error(),
        "[fd error]: error parsing glob '[oops': unclosed character class; missing ']'"
    );
}

#[tokio::test]
async fn ls_sorts_like_pi_marks_directories_and_shows_dotfiles() {
    let sandbox = Sandbox::new();
    for name in ["B.txt", "a.txt", "_u.txt", "10", "9", ".hidden"] {
        sandbox.write(name, "");
    }
    std::fs::create_dir(sandbox.path("dir")).unwrap();
    std::os::unix::fs::symlink("nowhere", sandbox.path("broken")).unwrap();
    let outcome = sandbox.run("ls", json!({})).await;
    insta::assert_snapshot!(outcome.text(), @r"
    _u.txt
    .hidden
    10
    9
    a.txt
    B.txt
    dir/
    ");
    let limited = sandbox.run("ls", json!({"limit": 2})).await;
    insta::assert_snapshot!(limited.text(), @r"
    _u.txt
    .hidden

    [2 entries limit reached. Use limit=4 for more]
    ");
    assert_eq!(limited.details(), json!({"entryLimitReached": 2}));
}

#[tokio::test]
async fn ls_empty_missing_and_file_paths() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.path("empty")).unwrap();
    sandbox.write("file.txt", "");
    assert_eq!(
        sandbox.run("ls", json!({"path": "empty"})).await.text(),
        "(empty directory)"
    );
    assert_eq!(
        sandbox.scrub(&sandbox.run("ls", json!({"path": "nope"})).await.error()),
        "Path not found: $CWD/nope"
    );
    assert_eq!(
        sandbox.scrub(&sandbox.run("ls", json!({"path": "file.txt"})).await.error()),
        "Not a directory: $CWD/file.txt"
    );
}
