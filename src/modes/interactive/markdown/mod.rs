//! Markdown (CommonMark + GFM tables, strikethrough, task lists) rendered to styled,
//! wrapped lines for a given width with the theme's `md*` tokens.
//!
//! Headings, emphasis, inline code, links (`text (url)`), block quotes (`│ `), nested
//! ordered/unordered/task lists with hanging indents, rules, tables that fit the width,
//! and fenced code blocks highlighted by [`super::highlight`]. Input is sanitised first,
//! so model output cannot smuggle escape sequences to the terminal.
//!
//! A document is rendered one top-level block at a time. [`MarkdownCache`] keeps each
//! block's lines keyed by (block source, width, theme, style), so re-rendering a message
//! that is still streaming only redoes the block that grew; everything before it is a
//! cache hit.

mod render;
mod table;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use pulldown_cmark::{Event, Options, Parser, Tag};
use ratatui::style::Style;
use ratatui::text::Line;

use super::text::sanitize;
use super::theme::Theme;

/// How a markdown text is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MarkdownStyle {
    /// Style under all text (e.g. italic grey for thinking blocks).
    pub base: Style,
    /// What code block lines start with (pi's `markdown.codeBlockIndent`).
    pub code_indent: &'static str,
}

impl Default for MarkdownStyle {
    /// The plain style with the code indent the settings give
    /// ([`set_code_block_indent`]).
    fn default() -> Self {
        MarkdownStyle {
            base: Style::default(),
            code_indent: code_block_indent(),
        }
    }
}

/// The `markdown.codeBlockIndent` in use (two spaces until the app sets it).
static CODE_BLOCK_INDENT: std::sync::RwLock<&'static str> = std::sync::RwLock::new("  ");

/// The code block prefix markdown is drawn with.
pub fn code_block_indent() -> &'static str {
    CODE_BLOCK_INDENT.read().map_or("  ", |indent| *indent)
}

/// Sets the code block prefix from the settings (at startup and `/reload`). Each
/// distinct prefix is kept for the life of the process (styles hold it by reference, and
/// the settings name only a few).
pub fn set_code_block_indent(indent: &str) {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    // Tabs as four spaces; control characters (escape sequences) left out.
    let clean: String = indent
        .replace('\t', "    ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let Ok(mut seen) = SEEN.lock() else {
        return;
    };
    let interned = match seen.iter().find(|s| **s == clean) {
        Some(s) => *s,
        None => {
            let leaked: &'static str = Box::leak(clean.into_boxed_str());
            seen.push(leaked);
            leaked
        }
    };
    if let Ok(mut current) = CODE_BLOCK_INDENT.write() {
        *current = interned;
    }
}

impl MarkdownStyle {
    pub fn with_base(base: Style) -> Self {
        MarkdownStyle {
            base,
            ..MarkdownStyle::default()
        }
    }
}

/// Kind of a top-level block, for the spacing between blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Paragraph,
    List,
    Other,
}

struct Block<'a> {
    kind: BlockKind,
    range: Range<usize>,
    events: Vec<(Event<'a>, Range<usize>)>,
}

fn parser_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Splits a document into its top-level blocks.
fn split_blocks(text: &str) -> Vec<Block<'_>> {
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, parser_options()).into_offset_iter() {
        if depth == 0 {
            let kind = match &event {
                Event::Start(Tag::Paragraph) => BlockKind::Paragraph,
                Event::Start(Tag::List(_)) => BlockKind::List,
                _ => BlockKind::Other,
            };
            blocks.push(Block {
                kind,
                range: range.clone(),
                events: Vec::new(),
            });
        }
        match &event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if let Some(block) = blocks.last_mut() {
            block.range.end = block.range.end.max(range.end);
            block.events.push((event, range));
        }
    }
    blocks
}

/// Whether pi puts an empty line between two top-level blocks: always after headings,
/// code, quotes, tables and rules; between a paragraph and a following list only when
/// the source had one; after a list only when the source had one.
fn spaced(text: &str, prev: &Block<'_>, next: &Block<'_>) -> bool {
    match (prev.kind, next.kind) {
        (BlockKind::Paragraph, BlockKind::List) | (BlockKind::List, _) => {
            render::blank_line_between(text, prev.range.start, next.range.start)
        }
        _ => true,
    }
}

/// Renders markdown without caching.
pub fn render_markdown(
    text: &str,
    width: usize,
    theme: &Theme,
    style: &MarkdownStyle,
) -> Vec<Line<'static>> {
    MarkdownCache::default().render(text, width, theme, style)
}

/// What the previous render produced.
struct LastRender {
    params: (usize, u64, MarkdownStyle),
    /// Per top-level block: its start offset, its cache key, and where its lines
    /// (including the blank line before it) begin in `out`.
    blocks: Vec<(usize, u64, usize)>,
    out: Vec<Line<'static>>,
}

/// Render cache for one markdown text that may change (grow) over time: lines per
/// top-level block, plus the previous output. The whole text is parsed each time (so
/// a change anywhere is seen exactly), but blocks whose source is unchanged are not
/// rendered again, and the output up to the first changed block is kept as it is.
/// For a streaming reply that means only the last block is redone.
#[derive(Default)]
pub struct MarkdownCache {
    blocks: HashMap<u64, Arc<Vec<Line<'static>>>>,
    last: Option<LastRender>,
}

impl MarkdownCache {
    /// Renders `text`, reusing the lines of every top-level block that has not changed
    /// since the previous call. Entries not used by this call are dropped.
    pub fn render(
        &mut self,
        text: &str,
        width: usize,
        theme: &Theme,
        style: &MarkdownStyle,
    ) -> Vec<Line<'static>> {
        let clean = sanitize(text);
        let text = clean.as_ref();
        if text.trim().is_empty() {
            self.blocks.clear();
            self.last = None;
            return Vec::new();
        }
        let params = (width, theme.generation(), *style);
        let blocks = split_blocks(text);
        let keys: Vec<(usize, u64)> = blocks
            .iter()
            .map(|b| {
                (
                    b.range.start,
                    block_key(&text[b.range.clone()], width, theme, style),
                )
            })
            .collect();
        // Keep the previous output up to the first block that changed.
        let mut last = match self.last.take() {
            Some(last) if last.params == params => last,
            _ => LastRender {
                params,
                blocks: Vec::new(),
                out: Vec::new(),
            },
        };
        let same = last
            .blocks
            .iter()
            .zip(&keys)
            .take_while(|((start, key, _), (new_start, new_key))| {
                start == new_start && key == new_key
            })
            .count();
        let keep_lines = last
            .blocks
            .get(same)
            .map_or(last.out.len(), |(_, _, out_start)| *out_start);
        last.out.truncate(keep_lines);
        last.blocks.truncate(same);

        let mut used: HashMap<u64, Arc<Vec<Line<'static>>>> = HashMap::with_capacity(blocks.len());
        for (_, key) in &keys[..same] {
            if let Some(lines) = self.blocks.get(key) {
                used.insert(*key, Arc::clone(lines));
            }
        }
        for (i, block) in blocks.iter().enumerate().skip(same) {
            let (start, key) = keys[i];
            last.blocks.push((start, key, last.out.len()));
            if i > 0 && spaced(text, &blocks[i - 1], block) {
                last.out.push(Line::default());
            }
            let lines = match self.blocks.get(&key).or_else(|| used.get(&key)) {
                Some(lines) => Arc::clone(lines),
                None => Arc::new(
                    render::BlockRenderer::new(theme, text, width, style.base, style.code_indent)
                        .render(&block.events),
                ),
            };
            last.out.extend(lines.iter().cloned());
            used.insert(key, lines);
        }
        self.blocks = used;
        let out = last.out.clone();
        self.last = Some(last);
        out
    }

    /// Number of cached blocks (for tests and diagnostics).
    pub fn cached_blocks(&self) -> usize {
        self.blocks.len()
    }
}

fn block_key(source: &str, width: usize, theme: &Theme, style: &MarkdownStyle) -> u64 {
    let mut h = DefaultHasher::new();
    source.hash(&mut h);
    width.hash(&mut h);
    theme.generation().hash(&mut h);
    style.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests;
