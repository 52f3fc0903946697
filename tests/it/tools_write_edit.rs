//! `write` and `edit` on real files: pi's result texts and diffs, line endings and BOM,
//! tolerant matching, multiple edits, every error, argument repair, and parallel edits of
//! one file not losing each other's changes. Expected texts were checked against pi
//! 0.73.1's tools on the same files.

use crate::tools_common::Sandbox;
use serde_json::json;

#[tokio::test]
async fn write_creates_parent_directories_and_counts_like_javascript() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .run(
            "write",
            json!({"path": "new/dir/c.txt", "content": "héllo 😀"}),
        )
        .await;
    // 8 UTF-16 units (the emoji counts twice), although the file has 11 bytes.
    assert_eq!(outcome.text(), "Successfully wrote to new/dir/c.txt");
    assert_eq!(sandbox.read("new/dir/c.txt"), "héllo 😀");
    assert_eq!(outcome.ok().details, None);
}

#[tokio::test]
async fn write_replaces_existing_content() {
    let sandbox = Sandbox::new();
    sandbox.write("b.txt", "old content that is longer");
    let outcome = sandbox
        .run(
            "write",
            json!({"path": "b.txt", "content": "second file\nline two\n"}),
        )
        .await;
    assert_eq!(outcome.text(), "Successfully wrote to b.txt");
    assert_eq!(sandbox.read("b.txt"), "second file\nline two\n");
}

#[tokio::test]
async fn write_errors_use_node_wording() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "x");
    std::fs::create_dir(sandbox.path("dir")).unwrap();
    let into_file = sandbox
        .run("write", json!({"path": "a.txt/x", "content": "x"}))
        .await;
    assert_eq!(
        sandbox.scrub(&into_file.error()),
        "EEXIST: file already exists, mkdir '$CWD/a.txt'"
    );
    let onto_dir = sandbox
        .run("write", json!({"path": "dir", "content": "x"}))
        .await;
    assert_eq!(
        sandbox.scrub(&onto_dir.error()),
        "EISDIR: illegal operation on a directory, open '$CWD/dir'"
    );
}

#[tokio::test]
async fn edit_reproduces_the_corpus_result_and_diff() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "hello wrld\nsecond line\n");
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "hello wrld", "newText": "hello world"}]}),
        )
        .await;
    assert_eq!(outcome.text(), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(
        outcome.details(),
        json!({"diff": "-1 hello wrld\n+1 hello world\n 2 second line", "firstChangedLine": 1})
    );
    assert_eq!(sandbox.read("a.txt"), "hello world\nsecond line\n");
}

#[tokio::test]
async fn edit_keeps_crlf_line_endings_and_the_bom() {
    let sandbox = Sandbox::new();
    sandbox.write("crlf.txt", b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n");
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "crlf.txt", "edits": [{"oldText": "two\nthree", "newText": "2\n3"}]}),
        )
        .await;
    assert_eq!(
        outcome.text(),
        "Successfully replaced 1 block(s) in crlf.txt."
    );
    assert_eq!(
        sandbox.read_bytes("crlf.txt"),
        b"\xef\xbb\xbfone\r\n2\r\n3\r\n"
    );
    assert_eq!(
        outcome.details()["diff"],
        " 1 one\n-2 two\n-3 three\n+2 2\n+3 3"
    );
}

#[tokio::test]
async fn edit_matches_despite_smart_quotes_dashes_and_trailing_spaces() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "quotes.txt",
        "say \u{201c}hello\u{201d} \u{2014} ok   \nnext\n",
    );
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "quotes.txt", "edits": [{"oldText": "say \"hello\" - ok\nnext", "newText": "bye"}]}),
        )
        .await;
    assert_eq!(
        outcome.text(),
        "Successfully replaced 1 block(s) in quotes.txt."
    );
    assert_eq!(sandbox.read("quotes.txt"), "bye\n");
}

#[tokio::test]
async fn several_edits_are_matched_against_the_original_file() {
    let sandbox = Sandbox::new();
    let original: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    sandbox.write("f.txt", &original);
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "f.txt", "edits": [
                {"oldText": "line 30\n", "newText": "line thirty\n"},
                {"oldText": "line 3\n", "newText": "line three\nline 3.5\n"}
            ]}),
        )
        .await;
    assert_eq!(outcome.text(), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(outcome.details()["firstChangedLine"], 3);
    let expected_diff = [
        "  1 line 1",
        "  2 line 2",
        "- 3 line 3",
        "+ 3 line three",
        "+ 4 line 3.5",
        "  4 line 4",
        "  5 line 5",
        "  6 line 6",
        "  7 line 7",
        "    ...",
        " 26 line 26",
        " 27 line 27",
        " 28 line 28",
        " 29 line 29",
        "-30 line 30",
        "+31 line thirty",
        " 31 line 31",
        " 32 line 32",
        " 33 line 33",
        " 34 line 34",
        "    ...",
    ]
    .join("\n");
    assert_eq!(outcome.details()["diff"], expected_diff.as_str());
    let expected = original
        .replace("line 30\n", "line thirty\n")
        .replace("line 3\n", "line three\nline 3.5\n");
    assert_eq!(sandbox.read("f.txt"), expected);
}

#[tokio::test]
async fn edit_errors_match_pi_and_leave_the_file_untouched() {
    let sandbox = Sandbox::new();
    sandbox.write("f.txt", "alpha beta\nalpha gamma\n");
    let cases = [
        json!({"path": "f.txt", "edits": [{"oldText": "does not exist", "newText": "x"}]}),
        json!({"path": "f.txt", "edits": [{"oldText": "alpha", "newText": "x"}]}),
        json!({"path": "f.txt", "edits": [{"oldText": "beta", "newText": "beta"}]}),
        json!({"path": "f.txt", "edits": [{"oldText": "alpha beta", "newText": "x"}, {"oldText": "beta\nalpha", "newText": "y"}]}),
        json!({"path": "f.txt", "edits": [{"oldText": "", "newText": "x"}]}),
        json!({"path": "f.txt", "edits": []}),
        json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    ];
    let mut texts = Vec::new();
    for args in cases {
        texts.push(sandbox.run("edit", args).await.error());
    }
    insta::assert_snapshot!(texts.join("\n"), @r"
    Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines.
    Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique.
    No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.
    edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions.
    oldText must not be empty in f.txt.
    Edit tool input is invalid. edits must contain at least one replacement.
    Could not edit file: missing.txt. Error code: ENOENT.
    ");
    assert_eq!(sandbox.read("f.txt"), "alpha beta\nalpha gamma\n");
}

#[tokio::test]
async fn legacy_and_stringified_edit_arguments_are_repaired() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "one two three\n");
    let legacy = sandbox
        .run(
            "edit",
            json!({"path": "a.txt", "oldText": "one", "newText": "1"}),
        )
        .await;
    assert_eq!(legacy.text(), "Successfully replaced 1 block(s) in a.txt.");
    let stringified = sandbox
        .run(
            "edit",
            json!({"path": "a.txt", "edits": "[{\"oldText\":\"two\",\"newText\":\"2\"}]"}),
        )
        .await;
    assert_eq!(
        stringified.text(),
        "Successfully replaced 1 block(s) in a.txt."
    );
    assert_eq!(sandbox.read("a.txt"), "1 2 three\n");
}

#[tokio::test]
async fn unknown_edit_fields_are_accepted_as_pi_16_accepts_them() {
    // pi 1.6's edit schema has no `additionalProperties: false`.
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "x\n");
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "x", "newText": "y", "replaceAll": true}]}),
        )
        .await;
    assert!(outcome.result.is_ok(), "{}", outcome.text());
    assert_eq!(sandbox.read("a.txt"), "y\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_edits_of_one_file_all_land() {
    let sandbox = std::sync::Arc::new(Sandbox::new());
    let original: String = (0..24).map(|i| format!("value {i} = old\n")).collect();
    sandbox.write("shared.txt", &original);
    let mut tasks = Vec::new();
    for i in 0..24 {
        let sandbox = sandbox.clone();
        tasks.push(tokio::spawn(async move {
            sandbox
                .run(
                    "edit",
                    json!({"path": "shared.txt", "edits": [{"oldText": format!("value {i} = old\n"), "newText": format!("value {i} = new\n")}]}),
                )
                .await
                .text()
        }));
    }
    for task in tasks {
        assert_eq!(
            task.await.unwrap(),
            "Successfully replaced 1 block(s) in shared.txt."
        );
    }
    let expected: String = (0..24).map(|i| format!("value {i} = new\n")).collect();
    assert_eq!(sandbox.read("shared.txt"), expected);
}

#[tokio::test]
async fn write_and_edit_follow_symlinks_and_keep_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    sandbox.write("real.sh", "echo old\n");
    std::fs::set_permissions(
        sandbox.path("real.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink(sandbox.path("real.sh"), sandbox.path("link.sh")).unwrap();
    let outcome = sandbox
        .run(
            "edit",
            json!({"path": "link.sh", "edits": [{"oldText": "old", "newText": "new"}]}),
        )
        .await;
    assert_eq!(
        outcome.text(),
        "Successfully replaced 1 block(s) in link.sh."
    );
    assert_eq!(sandbox.read("real.sh"), "echo new\n");
    let meta = std::fs::symlink_metadata(sandbox.path("link.sh")).unwrap();
    assert!(meta.file_type().is_symlink());
    let mode = std::fs::metadata(sandbox.path("real.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}
