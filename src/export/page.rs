//! Assembles the single HTML file: theme variables and stylesheet, sidebar, header,
//! entry sections and the page script, under a Content-Security-Policy that lets only
//! that script run (by its SHA-256 hash) and lets the page load nothing but inline
//! `data:` images. Escaping is the first line of defence; the policy is the second, so a
//! `<script>` or `onerror=` that slipped through would still not run, and nothing can
//! call out to the network.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::ExportInput;
use super::entries::push_entry;
use super::escape::push_escaped;
use super::header::{push_header, session_name};
use super::highlight;
use super::sidebar::push_sidebar;
use super::tools::{HIGHLIGHT_BUDGET_LINES, ToolIndex};
use super::tree::SessionTree;
use crate::messages::AgentMessage;

const STYLESHEET: &str = include_str!("assets/export.css");
const SCRIPT: &str = include_str!("assets/export.js");

/// The `script-src` source for [`SCRIPT`].
fn script_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let digest = Sha256::digest(SCRIPT.as_bytes());
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    })
}

/// The page's Content-Security-Policy.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        script_hash()
    )
}

/// Entries rendered per unit of work when sections are rendered in parallel.
const CHUNK: usize = 16;

/// The entry sections, in tree order. Sections do not depend on each other, and
/// highlighting long tool outputs dominates an export, so long sessions are rendered on
/// all cores; the result is the same whatever the number of threads.
fn render_sections(tree: &SessionTree<'_>, tools: &ToolIndex<'_>, on_path: &[bool]) -> String {
    let order = &tree.preorder;
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
        .min(order.len().div_ceil(CHUNK));
    if threads <= 1 {
        let mut out = String::new();
        for &node in order {
            push_entry(&mut out, tree, node, tools, on_path[node]);
        }
        highlight::clear_cache();
        return out;
    }
    let chunks: Vec<&[usize]> = order.chunks(CHUNK).collect();
    let next = AtomicUsize::new(0);
    let mut parts = vec![String::new(); chunks.len()];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(index) else {
                            break;
                        };
                        let mut html = String::new();
                        for &node in *chunk {
                            push_entry(&mut html, tree, node, tools, on_path[node]);
                        }
                        done.push((index, html));
                    }
                    done
                })
            })
            .collect();
        for worker in workers {
            match worker.join() {
                Ok(done) => {
                    for (index, html) in done {
                        parts[index] = html;
                    }
                }
                // A panic while rendering is a bug; let it surface as one.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    parts.concat()
}

/// Renders the export page.
pub fn export_html(input: &ExportInput<'_>) -> String {
    let tree = SessionTree::build(input.entries, input.leaf_id);
    let selected = tree.leaf;
    let mut on_path = vec![false; tree.entries.len()];
    let mut path = selected.map(|sel| tree.path_to(sel)).unwrap_or_default();
    for &i in &path {
        on_path[i] = true;
    }
    // Colours go first to what the page opens on (the leaf's path, newest first), then to
    // the other branches, newest entries first.
    path.reverse();
    path.extend((0..tree.entries.len()).rev().filter(|&i| !on_path[i]));
    let mut tools = ToolIndex::build(input.entries);
    let newest_first = path.iter().flat_map(|&node| {
        let calls: Vec<_> = match tree.entries[node].message() {
            Some(AgentMessage::Assistant(a)) => a.tool_calls().collect(),
            _ => Vec::new(),
        };
        calls.into_iter().rev()
    });
    tools.plan_highlighting(newest_first, HIGHLIGHT_BUDGET_LINES);

    // Messages dominate the size; a rough guess avoids most reallocations.
    let mut out = String::with_capacity(64 * 1024 + input.entries.len() * 2048);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    out.push_str(&content_security_policy());
    out.push_str("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    out.push_str("<meta name=\"generator\" content=\"pi-rs\">\n<title>");
    let title = session_name(input.entries)
        .map(str::to_string)
        .unwrap_or_else(|| format!("Session {}", input.header.id));
    push_escaped(&mut out, &format!("pi – {title}"));
    out.push_str("</title>\n<style>\n");
    out.push_str(&input.theme.css_variables());
    out.push_str(STYLESHEET);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str("<button type=\"button\" id=\"menu-button\" aria-label=\"Show the session tree\" aria-controls=\"sidebar\">☰ Tree</button>\n");
    out.push_str("<div id=\"overlay\"></div>\n<div id=\"app\">\n");
    push_sidebar(&mut out, &tree, &tools, selected);
    out.push_str("\n<main id=\"content\">\n");
    push_header(
        &mut out,
        input.header,
        input.entries,
        &tree,
        input.system_prompt,
        input.tools,
    );
    out.push_str("\n<div id=\"messages\">\n");
    if tree.entries.is_empty() {
        out.push_str("<p class=\"empty\">This session has no entries yet.</p>\n");
    }
    out.push_str(&render_sections(&tree, &tools, &on_path));
    out.push_str("</div>\n</main>\n</div>\n");
    out.push_str("<div id=\"zoom\" hidden><img alt=\"Zoomed image\"></div>\n<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}
