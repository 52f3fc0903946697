//! The HTML export read back as text: the tree sidebar against pi's own `/tree` view,
//! every entry of every branch present, the page opening on the leaf's path, each entry
//! kind rendered, and hostile session content escaped everywhere.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use crate::support::export_page::*;
use base64::Engine as _;
use pi::ai::message::ToolSpec;
use pi::export::{ExportInput, ExportTheme, export_html, export_session_file, read_session_file};
use pi::session::entry::{EntryId, SessionEntry, SessionHeader};
use proptest::prelude::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn export_fixture(name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.html");
    let written = export_session_file(&fixture(name), Some(&out)).unwrap();
    assert_eq!(written, out);
    std::fs::read_to_string(out).unwrap()
}

const FIXTURES: [&str; 7] = [
    "tree-branch-summary.jsonl",
    "basic-tools.jsonl",
    "compaction-manual.jsonl",
    "session-name-and-model-change.jsonl",
    "fork-bash.jsonl",
    "legacy-v1.jsonl",
    "legacy-v2.jsonl",
];

#[test]
fn sidebar_draws_the_branched_session_like_pis_tree_view() {
    let html = export_fixture("tree-branch-summary.jsonl");
    // pi 0.73.1 showed this session's /tree (default filter) as
    // (tests/fixtures/export/README.md):
    //   • [branch summary]: The user explored a different conversation branch …
    //      • user: Alternative: count the words in notes.txt
    //      • assistant: Alternative branch: I'll count the words in notes.txt instead.
    //      • [bash: wc -w notes.txt]
    //      • assistant: notes.txt has the word count shown above.
    //   user: Turn one: read notes.txt
    //      assistant: Reading notes.txt.
    //      [read: notes.txt]  …
    insta::assert_snapshot!(tree_text(&html), @r"
    •[branch summary]: The user explored a different conversation branch before returning here. Summary of that exploration...
       •user: Alternative: count the words in notes.txt
       •assistant: Alternative branch: I'll count the words in notes.txt instead.
       •[bash: wc -w notes.txt]
       •assistant: notes.txt has the word count shown above. ← leaf
     user: Turn one: read notes.txt
        assistant: Reading notes.txt.
        [read: notes.txt]
        assistant: notes.txt has two lines: 'note one' and 'note two'.
        user: Turn two: append a line to notes.txt
        assistant: Appending a line.
        [edit: notes.txt]
        assistant: Added 'note three'.
        user: Turn three: what should we do next?
        assistant: Next we could sort the notes.
    ");
    assert!(html.contains("<div id=\"tree-status\">15 / 17 entries</div>"));
}

#[test]
fn every_entry_of_every_branch_has_a_row_and_a_section_and_the_page_opens_on_the_leaf() {
    for name in FIXTURES {
        let html = export_fixture(name);
        let session = read_session_file(&fixture(name)).unwrap();
        let ids: Vec<String> = session.entries.iter().map(|e| e.id().to_string()).collect();
        let row_ids: BTreeSet<String> = rows(&html).into_iter().map(|r| r.id).collect();
        let section_ids: Vec<String> = sections(&html).into_iter().map(|s| s.id).collect();
        assert_eq!(row_ids, ids.iter().cloned().collect(), "{name}: rows");
        assert_eq!(
            section_ids.len(),
            ids.len(),
            "{name}: one section per entry"
        );
        assert_eq!(
            section_ids.iter().cloned().collect::<BTreeSet<_>>(),
            row_ids,
            "{name}: sections"
        );

        let links: Vec<(String, Option<String>)> = session
            .entries
            .iter()
            .map(|e| (e.id().to_string(), e.parent_id().map(str::to_string)))
            .collect();
        let leaf = session.leaf_id.unwrap();
        assert_eq!(
            shown_ids(&html),
            path_to(&links, leaf.as_str()),
            "{name}: leaf path"
        );
        let leaf_rows: Vec<String> = rows(&html)
            .into_iter()
            .filter(|r| r.classes.iter().any(|c| c == "leaf"))
            .map(|r| r.id)
            .collect();
        assert_eq!(leaf_rows, [leaf.to_string()], "{name}: leaf marked once");
    }
}

#[test]
fn tool_calls_edits_and_failures_render_with_their_results() {
    let html = export_fixture("basic-tools.jsonl");
    insta::assert_snapshot!(main_text(&html, 110), @r"
    note: 03:39:21 # Switched to model mock/mock-model
    note: 03:39:21 # Thinking level off
    user: 03:39:21 # Please fix the typo in a.txt
    assistant: 03:39:21 # Let me read the file first. read a.txt hello wrld second line mock/mock-model · ↑1.4k ↓11
    assistant: 03:39:21 # I'll fix the greeting. edit a.txt -1 hello wrld +1 hello world 2 second line mock/mock-model · ↑1.5
    assistant: 03:39:21 # $ cat a.txt && wc -l a.txt hello world second line 2 a.txt mock/mock-model · ↑1.5k ↓1
    assistant: 03:39:21 # Done: a.txt now says 'hello world'. mock/mock-model · ↑1.6k ↓11
    user: 03:39:22 # Now create b.txt and list the directory
    assistant: 03:39:23 # Creating b.txt and checking the directory. write b.txt second file line two Successfully wrote 21 b
    assistant: 03:39:23 # Trying an edit that will not match. edit b.txt Could not find the exact text in b.txt. The old text
    assistant: 03:39:23 # $ echo failing >&2; exit 3 failing Command exited with code 3 mock/mock-model · ↑1.9k ↓1
    assistant: 03:39:23 # b.txt written; the extra edit failed as expected and the command exited with 3. mock/mock-model · ↑
    ");
    // The edit diff is coloured line by line; the failing calls are marked as errors.
    assert!(html.contains(
        "<span class=\"d-del\">-1 hello wrld</span>\n<span class=\"d-add\">+1 hello world</span>"
    ));
    assert_eq!(html.matches("<div class=\"tool error\">").count(), 2);
}

#[test]
fn compaction_bash_runs_names_labels_and_legacy_custom_messages_render() {
    let compaction = export_fixture("compaction-manual.jsonl");
    let c = sections(&compaction)
        .into_iter()
        .find(|s| s.kind == "compaction")
        .unwrap();
    assert!(
        c.html
            .contains("<details class=\"card compaction\"><summary>[compaction] Compacted from ")
    );
    assert!(
        text_of(&c.html).contains("Goal Edit list.txt step by step."),
        "{}",
        text_of(&c.html)
    );

    let bash = export_fixture("fork-bash.jsonl");
    let b = sections(&bash)
        .into_iter()
        .find(|s| s.kind == "bash")
        .unwrap();
    insta::assert_snapshot!(text_of(&b.html), @"03:44:58 # $ ls conf.txt");

    let named = export_fixture("session-name-and-model-change.jsonl");
    insta::assert_snapshot!(header_text(&named), @r"
    Corpus naming session (renamed)
    Session: 01a2015b-9f4f-7245-b2c2-63396575e974
    Directory: /home/user/proj-names
    Created: 2026-11-22 03:45:11 UTC
    Models: mock/mock-model, mock/mock-model-2
    Messages: 3 user, 3 assistant
    Tool calls: 0
    Tokens: ↑4.3k ↓43
    Cost: $0.000
    Tree: 15 entries, 1 branch
    ");

    let v2 = export_fixture("legacy-v2.jsonl");
    insta::assert_snapshot!(tree_text(&v2), @r"
    •[start] user: v2 prompt one
    •assistant: v2 reply one.
    •[legacy-hook]: Injected by a v2-era hook.
    ├─ •[branch summary]: The user explored a different conversation branch before returning here. Summary of that exploration...
    │     •user: v2 prompt two (current branch)
    │     •assistant: v2 reply on the current branch. ← leaf
    └─  user: v2 prompt two (abandoned branch)
           assistant: v2 reply two (abandoned).
    ");
    insta::assert_snapshot!(main_text(&v2, 90), @r"
    note: 10:00:00 # Switched to model mock/mock-model
    note: 10:00:00 # Thinking level off
    user: 10:00:01 start # v2 prompt one
    assistant: 10:00:02 # v2 reply one. mock/mock-model · ↑100 ↓10
    custom: 10:00:03 # [legacy-hook] Injected by a v2-era hook.
    branch-summary: 10:00:06 # Branch summary The user explored a different conversation branch before returni
    note: 10:00:06 # Label start set on a0000003
    note: 10:00:06 # Session named Hand-made v2 session
    user: 10:00:07 # v2 prompt two (current branch)
    assistant: 10:00:08 # v2 reply on the current branch. mock/mock-model · ↑100 ↓10
    ");
}

#[test]
fn a_v1_file_renders_as_one_linear_branch() {
    let html = export_fixture("legacy-v1.jsonl");
    let rows = rows(&html);
    assert_eq!(rows.len(), 11);
    for pair in rows.windows(2) {
        assert_eq!(pair[1].parent.as_deref(), Some(pair[0].id.as_str()));
    }
    assert_eq!(shown_ids(&html).len(), 11);
    insta::assert_snapshot!(tree_text(&html), @r"
    •user: v1 prompt one: read a.txt
    •assistant: Reading.
    •[read: a.txt]
    •assistant: a.txt says hello.
    •user: v1 prompt two: anything else?
    •assistant: Nothing else.
    •[compaction: 1k tokens]
    •user: v1 prompt three after compaction
    •assistant: Still here after v1 compaction. ← leaf
    ");
}

/// Something a model could write anywhere: markup, a script, an event handler, a
/// `javascript:` link, and characters that close attributes and elements.
const EVIL: &str = r#"<script>document.title='PWNED'</script><img src=x onerror="document.title='PWNED'"> [click](javascript:document.title='PWNED') "'&</textarea></title></style><x-evil>"#;

fn line(v: Value) -> SessionEntry {
    SessionEntry::from_json_line(&v.to_string()).unwrap()
}

fn hostile_session() -> (SessionHeader, Vec<SessionEntry>) {
    let header: SessionHeader = serde_json::from_value(json!({
        "type": "session", "version": 3, "id": format!("id{EVIL}"),
        "timestamp": "2026-01-02T03:04:05.000Z", "cwd": format!("/home/u/{EVIL}"),
        "parentSession": format!("/tmp/{EVIL}.jsonl"),
    }))
    .unwrap();
    let ts = "2026-01-02T03:04:06.000Z";
    let usage = json!({"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}});
    let assistant = |id: &str, parent: &str, content: Value, stop: &str| {
        line(
            json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts,
            "message": {"role": "assistant", "content": content, "api": "x", "provider": EVIL,
                "model": EVIL, "usage": usage, "stopReason": stop, "errorMessage": EVIL, "timestamp": 1}}),
        )
    };
    let result = |id: &str, parent: &str, call: &str, tool: &str, text: &str, details: Value| {
        line(
            json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts,
            "message": {"role": "toolResult", "toolCallId": call, "toolName": tool,
                "content": [{"type": "text", "text": text}], "details": details,
                "isError": false, "timestamp": 1}}),
        )
    };
    let entries = vec![
        line(
            json!({"type": "model_change", "id": "m1", "parentId": null, "timestamp": ts,
            "provider": EVIL, "modelId": EVIL}),
        ),
        line(
            json!({"type": "thinking_level_change", "id": "t1", "parentId": "m1", "timestamp": ts,
            "thinkingLevel": EVIL}),
        ),
        line(
            json!({"type": "message", "id": "u1", "parentId": "t1", "timestamp": ts,
            "message": {"role": "user", "content": [{"type": "text", "text": EVIL},
                {"type": "image", "mimeType": format!("image/png\"{EVIL}"), "data": EVIL}], "timestamp": 1}}),
        ),
        assistant(
            "a1",
            "u1",
            json!([
                {"type": "thinking", "thinking": EVIL},
                {"type": "text", "text": format!("{EVIL}\n\n```html\n{EVIL}\n```\n\n`{EVIL}`")},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": format!("/x/{EVIL}.rs"), "offset": 1, "limit": 2}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": EVIL}},
                {"type": "toolCall", "id": "c3", "name": "edit", "arguments": {"path": EVIL}},
                {"type": "toolCall", "id": "c4", "name": "write", "arguments": {"path": format!("{EVIL}.html"), "content": EVIL}},
                {"type": "toolCall", "id": "c5", "name": EVIL, "arguments": {EVIL: EVIL}},
            ]),
            "toolUse",
        ),
        result("r1", "a1", "c1", "read", EVIL, json!({})),
        result(
            "r2",
            "r1",
            "c2",
            "bash",
            &format!("\x1b[31m{EVIL}\x1b[0m"),
            json!({}),
        ),
        result(
            "r3",
            "r2",
            "c3",
            "edit",
            EVIL,
            json!({"diff": format!("-1 {EVIL}\n+1 {EVIL}")}),
        ),
        result("r4", "r3", "c4", "write", EVIL, json!({})),
        result("r5", "r4", "c5", EVIL, EVIL, json!({})),
        result("r6", "r5", "orphan", EVIL, EVIL, json!({})),
        assistant("a2", "r6", json!([{"type": "text", "text": ""}]), "error"),
        line(
            json!({"type": "message", "id": "b1", "parentId": "a2", "timestamp": ts,
            "message": {"role": "bashExecution", "command": EVIL, "output": EVIL, "exitCode": 1,
                "cancelled": false, "truncated": true, "fullOutputPath": EVIL, "timestamp": 1}}),
        ),
        line(
            json!({"type": "custom_message", "id": "cm1", "parentId": "b1", "timestamp": ts,
            "customType": EVIL, "content": EVIL, "display": true}),
        ),
        line(
            json!({"type": "message", "id": "cm2", "parentId": "cm1", "timestamp": ts,
            "message": {"role": "custom", "customType": EVIL, "content": [{"type": "text", "text": EVIL}],
                "display": true, "timestamp": 1}}),
        ),
        line(
            json!({"type": "compaction", "id": "k1", "parentId": "cm2", "timestamp": ts,
            "summary": EVIL, "firstKeptEntryId": "u1", "tokensBefore": 5}),
        ),
        line(
            json!({"type": "branch_summary", "id": "bs1", "parentId": "k1", "timestamp": ts,
            "fromId": EVIL, "summary": EVIL}),
        ),
        line(
            json!({"type": "label", "id": "l1", "parentId": "bs1", "timestamp": ts,
            "targetId": "u1", "label": EVIL}),
        ),
        line(
            json!({"type": "session_info", "id": "s1", "parentId": "l1", "timestamp": ts, "name": EVIL}),
        ),
        line(
            json!({"type": "custom", "id": "x1", "parentId": "s1", "timestamp": ts, "customType": EVIL}),
        ),
        line(json!({"type": EVIL, "id": format!("q\"{EVIL}"), "parentId": "x1", "timestamp": ts})),
        line(
            json!({"type": "message", "id": "z1", "parentId": format!("q\"{EVIL}"), "timestamp": EVIL,
            "message": {"role": EVIL, "content": EVIL}}),
        ),
    ];
    (header, entries)
}

fn hostile_html() -> String {
    let (header, entries) = hostile_session();
    let tools = [ToolSpec {
        name: EVIL.into(),
        description: EVIL.into(),
        parameters: json!({"type": "object", "properties": {EVIL: {"type": EVIL, "description": EVIL}}, "required": [EVIL]}),
    }];
    let leaf = EntryId::from("z1");
    export_html(&ExportInput {
        header: &header,
        entries: &entries,
        leaf_id: Some(&leaf),
        system_prompt: Some(EVIL),
        tools: &tools,
        theme: &ExportTheme::dark(),
    })
}

#[test]
fn hostile_content_everywhere_stays_text() {
    let html = hostile_html();
    // The page's own elements, each exactly once; nothing the session wrote became one.
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script").count(), 1);
    assert_eq!(html.matches("</title>").count(), 1);
    assert_eq!(html.matches("</style>").count(), 1);
    assert_eq!(
        html.matches("<img").count(),
        1,
        "only the zoom view's <img>"
    );
    for forbidden in [
        "<x-evil",
        "</textarea",
        "<img src=x",
        "href=\"javascript",
        "src=\"x\"",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in page");
    }
    // Every field is present, escaped: count the escaped script tags.
    let escaped = "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;";
    assert!(
        html.matches(escaped).count() >= 40,
        "{}",
        html.matches(escaped).count()
    );
    // All entries, including the unknown one with a hostile id, are in the tree.
    assert_eq!(rows(&html).len(), 21);
    assert_eq!(shown_ids(&html).len(), 21);
}

#[test]
fn page_loads_nothing_and_allows_only_its_own_script() {
    let html = export_fixture("basic-tools.jsonl");
    let script = html
        .split("<script>")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .unwrap();
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
    let csp = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">"
    );
    assert!(html.contains(&csp), "CSP with the script's hash");
    for external in [
        "<link",
        "src=\"http",
        "url(",
        "@import",
        "@font-face",
        "<iframe",
    ] {
        assert!(!html.contains(external), "{external}");
    }
}

#[test]
fn system_prompt_and_tools_are_listed_when_given() {
    let (header, entries) = load(&fixture("basic-tools.jsonl"));
    let tools = [ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File to read"},
            "limit": {"type": "number"}}, "required": ["path"]}),
    }];
    let html = export_html(&ExportInput {
        header: &header,
        entries: &entries,
        leaf_id: None,
        system_prompt: Some("You are pi.\nBe brief."),
        tools: &tools,
        theme: &ExportTheme::dark(),
    });
    let details: Vec<String> = html
        .split("<details class=\"card ")
        .skip(1)
        .map(|d| {
            let (class, rest) = d.split_once("\">").unwrap();
            format!(
                "{class}: {}",
                text_of(rest.split("</details>").next().unwrap())
            )
        })
        .collect();
    insta::assert_snapshot!(details.join("\n"), @r"
    system-prompt: System prompt (2 lines) You are pi. Be brief.
    tools-list: Tools (1) read – Read a file path string required File to read limit number optional
    ");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn arbitrary_text_in_any_field_never_becomes_markup(
        text in "[a-z<>&\"'=/ \\n`*\\[\\]()!:#-]{0,60}",
    ) {
        let payload = format!("{text}<x-evil a=\"b\">{text}</x-evil>");
        let header: SessionHeader = serde_json::from_value(json!({
            "type": "session", "version": 3, "id": payload, "timestamp": "t", "cwd": payload})).unwrap();
        let entries = vec![
            line(json!({"type": "message", "id": "u", "parentId": null, "timestamp": "t",
                "message": {"role": "user", "content": payload, "timestamp": 0}})),
            line(json!({"type": "message", "id": "a", "parentId": "u", "timestamp": "t",
                "message": {"role": "assistant", "content": [
                    {"type": "text", "text": payload},
                    {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": payload}}],
                    "stopReason": "toolUse", "timestamp": 0}})),
            line(json!({"type": "message", "id": "r", "parentId": "a", "timestamp": "t",
                "message": {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
                    "content": [{"type": "text", "text": payload}], "isError": false, "timestamp": 0}})),
            line(json!({"type": "label", "id": "l", "parentId": "r", "timestamp": "t", "targetId": "u", "label": payload})),
        ];
        let html = export_html(&ExportInput {
            header: &header, entries: &entries, leaf_id: None, system_prompt: Some(&payload),
            tools: &[], theme: &ExportTheme::dark(),
        });
        prop_assert!(!html.contains("<x-evil"));
        prop_assert!(!html.contains("</x-evil"));
        prop_assert_eq!(html.matches("<script").count(), 1);
    }
}
