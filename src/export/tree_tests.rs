//! Tree indexing and layout, drawn as text (`prefix` + entry) and snapshotted.

use super::tree::{FilterMode, SessionTree, layout};
use crate::session::entry::{EntryId, SessionEntry};

/// One entry line: `id parent kind [text]`, kind `u` (user), `a` (assistant with text),
/// `t` (assistant with only a tool call), `r` (tool result), `m` (model change), `l`
/// (label on `text`).
fn entry(spec: &str, second: u32) -> SessionEntry {
    let parts: Vec<&str> = spec.splitn(4, ' ').collect();
    let (id, parent, kind) = (parts[0], parts[1], parts[2]);
    let text = parts.get(3).copied().unwrap_or(id);
    let parent = if parent == "-" {
        "null".to_string()
    } else {
        format!("\"{parent}\"")
    };
    let ts = format!("2026-01-01T00:00:{second:02}.000Z");
    let head = format!("\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"{ts}\"");
    let line = match kind {
        "u" => format!(
            "{{\"type\":\"message\",{head},\"message\":{{\"role\":\"user\",\"content\":\"{text}\",\"timestamp\":0}}}}"
        ),
        "a" => format!(
            "{{\"type\":\"message\",{head},\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stopReason\":\"stop\",\"timestamp\":0}}}}"
        ),
        "t" => format!(
            "{{\"type\":\"message\",{head},\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c-{id}\",\"name\":\"ls\",\"arguments\":{{}}}}],\"stopReason\":\"toolUse\",\"timestamp\":0}}}}"
        ),
        "r" => format!(
            "{{\"type\":\"message\",{head},\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c-{text}\",\"toolName\":\"ls\",\"content\":[],\"isError\":false,\"timestamp\":0}}}}"
        ),
        "m" => format!("{{\"type\":\"model_change\",{head},\"provider\":\"p\",\"modelId\":\"m\"}}"),
        "l" => format!("{{\"type\":\"label\",{head},\"targetId\":\"{text}\",\"label\":\"mark\"}}"),
        other => panic!("unknown kind {other}"),
    };
    SessionEntry::from_json_line(&line).unwrap()
}

fn entries(specs: &[&str]) -> Vec<SessionEntry> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| entry(s, i as u32))
        .collect()
}

fn draw(entries: &[SessionEntry], leaf: Option<&str>, mode: FilterMode) -> String {
    let leaf = leaf.map(EntryId::from);
    let tree = SessionTree::build(entries, leaf.as_ref());
    let visible = tree.visible(mode);
    let rows = layout(&tree, &visible);
    let on_path = tree.leaf.map(|l| tree.path_to(l)).unwrap_or_default();
    rows.iter()
        .map(|row| {
            let marker = if on_path.contains(&row.node) {
                "•"
            } else {
                " "
            };
            let e = tree.entries[row.node];
            let label = tree
                .label(row.node)
                .map(|l| format!(" [{l}]"))
                .unwrap_or_default();
            let leaf = if Some(row.node) == tree.leaf {
                " ← leaf"
            } else {
                ""
            };
            format!(
                "{}{marker}{} {}{label}{leaf}",
                row.prefix,
                e.id(),
                e.type_name()
            )
            .trim_end()
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const BRANCHY: &[&str] = &[
    "m0 - m",
    "u1 m0 u",
    "a1 u1 a",
    "u2 a1 u",
    "a2 u2 a",
    "u3 a1 u",
    "a3 u3 a",
    "u4 a1 u",
    "t4 u4 t",
    "r4 t4 r t4",
    "l1 r4 l u2",
];

#[test]
fn branches_get_connectors_and_the_leaf_branch_comes_first() {
    let e = entries(BRANCHY);
    insta::assert_snapshot!(draw(&e, Some("a3"), FilterMode::All), @r"
    •m0 model_change
    •u1 message
    •a1 message
    ├─ •u3 message
    │     •a3 message ← leaf
    ├─  u2 message [mark]
    │      a2 message
    └─  u4 message
           t4 message
           r4 message
           l1 label
    ");
}

#[test]
fn default_filter_hides_bookkeeping_and_tool_only_turns_and_reattaches_children() {
    let e = entries(BRANCHY);
    insta::assert_snapshot!(draw(&e, Some("a3"), FilterMode::Default), @r"
    •u1 message
    •a1 message
    ├─ •u3 message
    │     •a3 message ← leaf
    ├─  u2 message [mark]
    │      a2 message
    └─  u4 message
           r4 message
    ");
    insta::assert_snapshot!(draw(&e, Some("a3"), FilterMode::User), @r"
    •u1 message
    ├─ •u3 message
    │     •a3 message ← leaf
    ├─  u2 message [mark]
    └─  u4 message
    ");
    insta::assert_snapshot!(draw(&e, Some("a3"), FilterMode::Labeled), @r"
    •a3 message ← leaf
     u2 message [mark]
    ");
}

#[test]
fn several_roots_are_drawn_as_children_of_an_invisible_root() {
    // x1's parent does not exist: it becomes a second root.
    let e = entries(&["u1 - u", "a1 u1 a", "x1 gone u", "x2 x1 a"]);
    insta::assert_snapshot!(draw(&e, None, FilterMode::All), @r"
    •x1 message
       •x2 message ← leaf
     u1 message
        a1 message
    ");
}

#[test]
fn parent_cycles_self_parents_and_duplicate_ids_cannot_hide_or_hang_entries() {
    // b and c point at each other; s is its own parent; the second u1 is dropped.
    let e = entries(&["u1 - u", "b c u", "c b a", "s s u", "u1 - a"]);
    let tree = SessionTree::build(&e, None);
    assert_eq!(tree.entries.len(), 4);
    assert_eq!(tree.preorder.len(), 4, "every entry is reachable");
    insta::assert_snapshot!(draw(&e, Some("c"), FilterMode::All), @r"
    •b message
       •c message ← leaf
     u1 message
     s message
    ");
}

#[test]
fn unknown_leaf_falls_back_to_the_last_entry() {
    let e = entries(&["u1 - u", "a1 u1 a", "u2 u1 u"]);
    let leaf = EntryId::from("nope");
    let tree = SessionTree::build(&e, Some(&leaf));
    assert_eq!(tree.leaf.map(|l| tree.id(l)), Some("u2"));
    let empty = SessionTree::build(&[], None);
    assert_eq!(empty.leaf, None);
    assert!(layout(&empty, &[]).is_empty());
}
