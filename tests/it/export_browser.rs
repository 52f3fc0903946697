//! The exported page in a real browser (headless Chromium, plain CLI flags): the sidebar
//! lists every entry, `#entry=<id>` shows exactly the root→entry path, the script's
//! re-layout agrees with the server's, a model's `<script>`/`onerror` never runs, and a
//! screenshot can be taken. Skipped, with a printed reason, where Chromium is missing.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::support::chromium;
use crate::support::export_page::*;
use pi::export::tree::{FilterMode, SessionTree, layout};
use pi::export::{ExportInput, ExportTheme, export_html, export_session_file, read_session_file};
use pi::session::entry::{SessionEntry, SessionHeader};
use serde_json::json;

fn export_to(dir: &Path, fixture_name: &str) -> PathBuf {
    let out = dir.join(fixture_name.replace(".jsonl", ".html"));
    export_session_file(&fixture(fixture_name), Some(&out)).unwrap();
    out
}

fn attr_of_body(dom: &str, name: &str) -> Option<String> {
    let body = dom.split("<body").nth(1)?.split('>').next()?;
    let key = format!("{name}=\"");
    let start = body.find(&key)? + key.len();
    Some(body[start..].split('"').next()?.to_string())
}

#[test]
fn sidebar_lists_every_entry_and_a_fragment_shows_exactly_the_path_to_that_entry() {
    let Some(browser) = chromium::available("sidebar_lists_every_entry") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = export_to(dir.path(), "tree-branch-summary.jsonl");
    let links = ids_and_parents(&fixture("tree-branch-summary.jsonl"));
    let all_ids: BTreeSet<String> = links.iter().map(|(id, _)| id.clone()).collect();

    // An entry deep in the abandoned branch, a tool result (drawn inside its call's card)
    // and the root.
    for target in ["630f732a", "ea59b5de", "9db419c2"] {
        let dom = chromium::dump_dom(&browser, &page, &format!("entry={target}"));
        let rows = rows(&dom);
        assert_eq!(
            rows.iter().map(|r| r.id.clone()).collect::<BTreeSet<_>>(),
            all_ids,
            "every entry has a row"
        );
        let path = path_to(&links, target);
        assert_eq!(shown_ids(&dom), path, "shown sections for {target}");
        assert_eq!(attr_of_body(&dom, "data-selected").as_deref(), Some(target));
        let on_path: Vec<String> = rows
            .iter()
            .filter(|r| r.classes.iter().any(|c| c == "on-path"))
            .map(|r| r.id.clone())
            .collect();
        let mut expected = path.clone();
        expected.sort_by_key(|id| rows.iter().position(|r| &r.id == id));
        assert_eq!(on_path, expected, "rows marked on the path for {target}");
        let selected: Vec<&str> = rows
            .iter()
            .filter(|r| r.classes.iter().any(|c| c == "selected"))
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(selected, [target]);
        // A selected entry that the default filter hides gets its row shown.
        assert!(!rows.iter().find(|r| r.id == target).unwrap().hidden);
    }
}

#[test]
fn script_layout_of_filters_agrees_with_the_exporter() {
    let Some(browser) = chromium::available("script_layout_of_filters") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in ["tree-branch-summary.jsonl", "legacy-v2.jsonl"] {
        let page = export_to(dir.path(), name);
        let server_html = std::fs::read_to_string(&page).unwrap();
        let session = read_session_file(&fixture(name)).unwrap();
        let tree = SessionTree::build(&session.entries, session.leaf_id.as_ref());
        for mode in FilterMode::ALL {
            let dom = chromium::dump_dom(&browser, &page, &format!("filter={}", mode.name()));
            let expected: HashMap<String, String> = layout(&tree, &tree.visible(mode))
                .into_iter()
                .map(|row| (tree.id(row.node).to_string(), row.prefix))
                .collect();
            let shown: HashMap<String, String> = rows(&dom)
                .into_iter()
                .filter(|r| !r.hidden)
                .map(|r| (r.id, r.prefix))
                .collect();
            assert_eq!(shown, expected, "{name}: filter {}", mode.name());
            if mode == FilterMode::Default {
                assert_eq!(tree_text(&dom), tree_text(&server_html), "{name}");
            }
        }
    }

    // Search keeps the matching entries (and the leaf) and re-lays them out.
    let page = export_to(dir.path(), "tree-branch-summary.jsonl");
    let dom = chromium::dump_dom(&browser, &page, "q=turn%20two");
    insta::assert_snapshot!(tree_text(&dom), @r"
    •assistant: notes.txt has the word count shown above. ← leaf
     user: Turn two: append a line to notes.txt
    ");
}

/// What a model might write to take over the page: each would set the title and mark
/// the body if it ran.
const ATTACK: &str = concat!(
    "<script>document.title='PWNED';document.body.setAttribute('data-pwned','script')</script>",
    "<img src=x onerror=\"document.title='PWNED';document.body.setAttribute('data-pwned','onerror')\">",
    "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>",
    " [link](javascript:document.body.setAttribute('data-pwned','link'))",
    "</script><script>document.body.setAttribute('data-pwned','breakout')</script>",
);

fn attack_session(dir: &Path) -> PathBuf {
    let header: SessionHeader = serde_json::from_value(json!({
        "type": "session", "version": 3, "id": "attack", "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": ATTACK}))
    .unwrap();
    let ts = "2026-01-01T00:00:01.000Z";
    let lines = [
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": ts,
            "message": {"role": "user", "content": ATTACK, "timestamp": 0}}),
        json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": ts,
            "message": {"role": "assistant", "stopReason": "toolUse", "timestamp": 0, "content": [
                {"type": "thinking", "thinking": ATTACK},
                {"type": "text", "text": format!("{ATTACK}\n\n```html\n{ATTACK}\n```")},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": ATTACK}},
                {"type": "toolCall", "id": "c2", "name": "write", "arguments": {"path": "x.html", "content": ATTACK}}]}}),
        json!({"type": "message", "id": "r1", "parentId": "a1", "timestamp": ts,
            "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                "content": [{"type": "text", "text": format!("\u{1b}[32m{ATTACK}")}], "isError": false, "timestamp": 0}}),
        json!({"type": "label", "id": "l1", "parentId": "r1", "timestamp": ts, "targetId": "a1", "label": ATTACK}),
        json!({"type": "session_info", "id": "s1", "parentId": "l1", "timestamp": ts, "name": ATTACK}),
        json!({"type": "custom_message", "id": "m1", "parentId": "s1", "timestamp": ts,
            "customType": ATTACK, "content": ATTACK, "display": true}),
    ];
    let entries: Vec<SessionEntry> = lines
        .iter()
        .map(|v| SessionEntry::from_json_line(&v.to_string()).unwrap())
        .collect();
    let html = export_html(&ExportInput {
        header: &header,
        entries: &entries,
        leaf_id: None,
        system_prompt: Some(ATTACK),
        tools: &[],
        theme: &ExportTheme::dark(),
    });
    let page = dir.join("attack.html");
    std::fs::write(&page, html).unwrap();
    page
}

fn without_csp(html: &str) -> String {
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + html[start..].find('>').unwrap() + 1;
    format!("{}{}", &html[..start], &html[end..])
}

#[test]
fn scripts_and_event_handlers_written_by_the_model_do_not_run() {
    let Some(browser) = chromium::available("scripts_written_by_the_model") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = attack_session(dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    let expected_title = format!("pi – {ATTACK}");
    let title_of = |dom: &str| {
        let start = dom.find("<title>").unwrap() + "<title>".len();
        unescape(&dom[start..start + dom[start..].find("</title>").unwrap()])
    };

    // Escaping alone must hold; the Content-Security-Policy is only the second fence.
    let bare = dir.path().join("attack-no-csp.html");
    std::fs::write(&bare, without_csp(&html)).unwrap();
    for file in [&page, &bare] {
        for fragment in ["", "entry=a1"] {
            let dom = chromium::dump_dom(&browser, file, fragment);
            assert_eq!(title_of(&dom), expected_title, "the title was changed");
            assert_eq!(attr_of_body(&dom, "data-pwned"), None, "{}", file.display());
            // Our own script did run (so the check above could have failed).
            assert!(attr_of_body(&dom, "data-selected").is_some());
        }
    }

    // The check detects an injection when there is one: the same page with the model's
    // text pasted in unescaped runs it.
    let injected = dir.path().join("injected.html");
    std::fs::write(
        &injected,
        without_csp(&html).replace(
            "<div id=\"messages\">",
            &format!("<div id=\"messages\">{ATTACK}"),
        ),
    )
    .unwrap();
    let dom = chromium::dump_dom(&browser, &injected, "");
    assert!(
        attr_of_body(&dom, "data-pwned").is_some(),
        "control injection did not run"
    );
}

#[test]
fn screenshots_are_produced_at_desktop_and_phone_widths() {
    let Some(browser) = chromium::available("screenshots_are_produced") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = export_to(dir.path(), "tree-branch-summary.jsonl");
    let desktop = dir.path().join("export.png");
    chromium::screenshot(&browser, &page, "", &desktop, 1280, 900);
    assert_eq!(chromium::png_size(&desktop), (1280, 900));
    let phone = dir.path().join("phone.png");
    chromium::screenshot(&browser, &page, "", &phone, 420, 860);
    assert_eq!(chromium::png_size(&phone), (420, 860));
    // `PI_UPDATE_DOCS_SCREENSHOT=1 cargo test --test it export_browser::screenshots` refreshes
    // the picture in the docs.
    if std::env::var_os("PI_UPDATE_DOCS_SCREENSHOT").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&desktop, docs.join("export.png")).unwrap();
        std::fs::copy(&phone, docs.join("export-phone.png")).unwrap();
    }
}
