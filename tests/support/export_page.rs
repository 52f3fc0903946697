//! Reads an exported page back (as written by the exporter or as dumped by Chromium after
//! its script ran): the sidebar rows, the entry sections, and readable text renderings of
//! both for snapshots. Also builds session entries from JSON for tests.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pi::session::entry::{SessionEntry, SessionHeader};
use regex::Regex;
use serde_json::Value;

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/export")
        .join(name)
}

/// Header and entries of a v3 fixture file (malformed lines would fail the test).
pub fn load(path: &Path) -> (SessionHeader, Vec<SessionEntry>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = serde_json::from_str(lines.next().unwrap()).unwrap();
    let entries = lines
        .map(|l| SessionEntry::from_json_line(l).unwrap())
        .collect();
    (header, entries)
}

/// `(id, parentId)` of every entry of a session file, read straight from the JSON.
pub fn ids_and_parents(path: &Path) -> Vec<(String, Option<String>)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["parentId"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// Ids from the root down to `id`, following `parentId` in the file.
pub fn path_to(links: &[(String, Option<String>)], id: &str) -> Vec<String> {
    let parents: HashMap<&str, Option<&str>> = links
        .iter()
        .map(|(i, p)| (i.as_str(), p.as_deref()))
        .collect();
    let mut path = vec![id.to_string()];
    let mut cur = parents[id];
    while let Some(p) = cur {
        path.push(p.to_string());
        cur = parents[p];
    }
    path.reverse();
    path
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap())
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let pattern = format!(r#"\s{name}="([^"]*)""#);
    Regex::new(&pattern)
        .unwrap()
        .captures(tag)
        .map(|c| unescape(&c[1]))
}

fn has_attr(tag: &str, name: &str) -> bool {
    Regex::new(&format!(r#"\s{name}(=|\s|>|$)"#))
        .unwrap()
        .is_match(tag)
}

pub fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// Text content of an HTML fragment, whitespace collapsed.
pub fn text_of(html: &str) -> String {
    static TAG: OnceLock<Regex> = OnceLock::new();
    let stripped = re(&TAG, r"<[^>]*>").replace_all(html, " ");
    unescape(&stripped)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub parent: Option<String>,
    pub classes: Vec<String>,
    pub hidden: bool,
    pub prefix: String,
    pub marker: String,
    pub text: String,
}

/// The sidebar rows, in page order.
pub fn rows(html: &str) -> Vec<Row> {
    static ROW: OnceLock<Regex> = OnceLock::new();
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    static MARKER: OnceLock<Regex> = OnceLock::new();
    static TEXT: OnceLock<Regex> = OnceLock::new();
    let row_re = re(&ROW, r#"(?s)(<a class="node[^"]*"[^>]*>)(.*?)</a>\n"#);
    row_re
        .captures_iter(html)
        .map(|c| {
            let tag = &c[1];
            let inner = &c[2];
            let prefix = re(&PREFIX, r#"<span class="prefix">([^<]*)</span>"#)
                .captures(inner)
                .map(|m| unescape(&m[1]))
                .unwrap_or_default();
            let marker = re(&MARKER, r#"<span class="marker">([^<]*)</span>"#)
                .captures(inner)
                .map(|m| unescape(&m[1]))
                .unwrap_or_default();
            let text = re(&TEXT, r#"(?s)<span class="row-text">(.*)</span>$"#)
                .captures(inner)
                .map(|m| text_of(&m[1]))
                .unwrap_or_default();
            Row {
                id: attr(tag, "data-id").unwrap(),
                parent: attr(tag, "data-parent"),
                classes: attr(tag, "class")
                    .unwrap()
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
                hidden: has_attr(tag, "hidden"),
                prefix,
                marker,
                text,
            }
        })
        .collect()
}

/// The visible rows drawn like the sidebar: `prefix marker text`.
pub fn tree_text(html: &str) -> String {
    rows(html)
        .iter()
        .filter(|r| !r.hidden)
        .map(|r| {
            format!("{}{}{}", r.prefix, r.marker, r.text)
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone)]
pub struct Section {
    pub id: String,
    pub kind: String,
    pub hidden: bool,
    pub html: String,
}

/// The entry sections of the main pane, in page order.
pub fn sections(html: &str) -> Vec<Section> {
    static SECTION: OnceLock<Regex> = OnceLock::new();
    re(
        &SECTION,
        r#"(?s)(<section class="entry k-([a-z-]+)[^"]*"[^>]*>)(.*?)</section>"#,
    )
    .captures_iter(html)
    .map(|c| Section {
        id: attr(&c[1], "data-id").unwrap(),
        kind: c[2].to_string(),
        hidden: has_attr(&c[1], "hidden"),
        html: c[3].to_string(),
    })
    .collect()
}

/// Ids of the sections a reader sees.
pub fn shown_ids(html: &str) -> Vec<String> {
    sections(html)
        .into_iter()
        .filter(|s| !s.hidden)
        .map(|s| s.id)
        .collect()
}

/// The shown sections as `kind: text` lines (text cut to `width` characters).
pub fn main_text(html: &str, width: usize) -> String {
    sections(html)
        .iter()
        .filter(|s| !s.hidden && !text_of(&s.html).is_empty())
        .map(|s| {
            let text = text_of(&s.html);
            let text: String = text.chars().take(width).collect();
            format!("{}: {}", s.kind, text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The page header as `label: value` lines.
pub fn header_text(html: &str) -> String {
    static HEADER: OnceLock<Regex> = OnceLock::new();
    static ROW: OnceLock<Regex> = OnceLock::new();
    let header = re(
        &HEADER,
        r#"(?s)<header class="session-header">(.*?)</header>"#,
    )
    .captures(html)
    .map(|c| c[1].to_string())
    .unwrap_or_default();
    let mut lines = vec![text_of(header.split("<dl").next().unwrap_or(""))];
    for c in re(&ROW, r"(?s)<dt>(.*?)</dt><dd>(.*?)</dd>").captures_iter(&header) {
        lines.push(format!("{}: {}", text_of(&c[1]), text_of(&c[2])));
    }
    lines.join("\n")
}
