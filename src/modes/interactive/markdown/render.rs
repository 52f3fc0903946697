//! Turns the pulldown-cmark events of one top-level markdown block into wrapped,
//! styled lines. Nesting (quotes, list items) is a stack of containers, each adding a
//! prefix to the lines inside it: `│ ` for quotes, the bullet on an item's first line
//! and matching indentation on the first line of each further block of the item. As in
//! pi, a line that continues an item's text (wrapped, or after a single newline) starts
//! at the margin.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::table::{Cell, Table};
use crate::modes::interactive::highlight;
use crate::modes::interactive::text::{WrapOptions, str_width, wrap_spans};
use crate::modes::interactive::theme::{Theme, ThemeToken};

enum Container {
    Quote,
    List {
        next_number: Option<u64>,
        tight: bool,
        items_seen: usize,
    },
    Item {
        bullet: String,
        bullet_pending: bool,
    },
}

struct LinkState {
    url: String,
    first_span: usize,
}

/// Renders one top-level block. `tight_lists[i]` says whether the i-th list start in
/// `events` is a tight list (no blank lines between items).
pub(super) struct BlockRenderer<'a> {
    theme: &'a Theme,
    source: &'a str,
    /// Start offset of the paragraph that was the last block to end, if it was one.
    last_paragraph: Option<usize>,
    /// Start offset of the open paragraph.
    paragraph_start: usize,
    width: usize,
    base: Style,
    code_indent: &'static str,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// Inline content being collected: one entry per hard line break.
    inline: Vec<Vec<Span<'static>>>,
    styles: Vec<Style>,
    links: Vec<LinkState>,
    pending_blank: bool,
    code: Option<(String, String)>,
    html: Option<String>,
    table: Option<Table>,
    row: Vec<Cell>,
    heading: Option<HeadingLevel>,
    tight_lists: Vec<bool>,
    lists_started: usize,
}

impl<'a> BlockRenderer<'a> {
    pub(super) fn new(
        theme: &'a Theme,
        source: &'a str,
        width: usize,
        base: Style,
        code_indent: &'static str,
    ) -> Self {
        BlockRenderer {
            theme,
            source,
            last_paragraph: None,
            paragraph_start: 0,
            width: width.max(1),
            base,
            code_indent,
            out: Vec::new(),
            containers: Vec::new(),
            inline: vec![Vec::new()],
            styles: Vec::new(),
            links: Vec::new(),
            pending_blank: false,
            code: None,
            html: None,
            table: None,
            row: Vec::new(),
            heading: None,
            tight_lists: Vec::new(),
            lists_started: 0,
        }
    }

    pub(super) fn render(mut self, events: &[(Event<'_>, Range<usize>)]) -> Vec<Line<'static>> {
        self.tight_lists = tight_lists(events.iter().map(|(e, _)| e));
        for (event, range) in events {
            match event {
                Event::Start(Tag::Paragraph) => self.paragraph_start = range.start,
                Event::Start(Tag::List(_)) => {
                    // A list right under a paragraph (no empty line in the source) stays
                    // attached to it, as at the top level.
                    if let Some(para) = self.last_paragraph
                        && !blank_line_between(self.source, para, range.start)
                    {
                        self.pending_blank = false;
                        self.flush_inline();
                    }
                }
                _ => {}
            }
            self.event(event);
            match event {
                Event::End(TagEnd::Paragraph) => self.last_paragraph = Some(self.paragraph_start),
                Event::End(_) | Event::Rule => self.last_paragraph = None,
                _ => {}
            }
        }
        self.flush_inline();
        self.out
    }

    fn inline_style(&self) -> Style {
        self.styles.iter().fold(self.base, |acc, s| acc.patch(*s))
    }

    fn push_text(&mut self, text: &str, style: Style) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        if let Some(html) = &mut self.html {
            html.push_str(text);
            return;
        }
        let mut parts = text.split('\n');
        if let Some(first) = parts.next()
            && !first.is_empty()
        {
            self.current_line()
                .push(Span::styled(first.to_string(), style));
        }
        for part in parts {
            self.inline.push(Vec::new());
            if !part.is_empty() {
                self.current_line()
                    .push(Span::styled(part.to_string(), style));
            }
        }
    }

    fn current_line(&mut self) -> &mut Vec<Span<'static>> {
        if self.inline.is_empty() {
            self.inline.push(Vec::new());
        }
        let last = self.inline.len() - 1;
        &mut self.inline[last]
    }

    fn inline_is_empty(&self) -> bool {
        self.inline.iter().all(Vec::is_empty)
    }

    fn event(&mut self, event: &Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(*tag),
            Event::Text(t) => {
                let style = self.inline_style();
                self.push_text(t, style);
            }
            Event::Code(t) => {
                let style = self.inline_style().patch(self.theme.fg(ThemeToken::MdCode));
                self.push_text(t, style);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let style = self.inline_style();
                self.push_text(t, style);
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let style = self.inline_style();
                self.push_text(t, style);
            }
            Event::FootnoteReference(label) => {
                let style = self.inline_style();
                self.push_text(&format!("[^{label}]"), style);
            }
            // pi keeps a single newline in a paragraph as a line break (its renderer
            // splits the text on newlines); CommonMark would join the lines.
            Event::SoftBreak | Event::HardBreak => self.inline.push(Vec::new()),
            Event::Rule => {
                self.start_block();
                let avail = self.width.saturating_sub(self.prefix_width()).clamp(1, 80);
                let rule = Span::styled("─".repeat(avail), self.theme.fg(ThemeToken::MdHr));
                self.emit(vec![rule]);
                self.pending_blank = true;
            }
            Event::TaskListMarker(checked) => {
                let mark = if *checked { "[x] " } else { "[ ] " };
                let style = self.theme.fg(ThemeToken::MdListBullet);
                self.current_line().push(Span::styled(mark, style));
            }
        }
    }

    fn start(&mut self, tag: &Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.heading = Some(*level);
                let style = self.heading_style(*level);
                self.styles.push(style);
                if *level >= HeadingLevel::H3 {
                    let hashes = "#".repeat(*level as usize);
                    let style = self.inline_style();
                    self.current_line()
                        .push(Span::styled(format!("{hashes} "), style));
                }
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
                let quote = self
                    .theme
                    .fg(ThemeToken::MdQuote)
                    .add_modifier(Modifier::ITALIC);
                self.styles.push(quote);
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => {
                self.start_block();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.start_block();
                let tight = self
                    .tight_lists
                    .get(self.lists_started)
                    .copied()
                    .unwrap_or(true);
                self.lists_started += 1;
                self.containers.push(Container::List {
                    next_number: *start,
                    tight,
                    items_seen: 0,
                });
            }
            Tag::Item => {
                self.flush_inline();
                let mut bullet = "- ".to_string();
                let mut tight = true;
                let mut first = true;
                if let Some(Container::List {
                    next_number,
                    tight: t,
                    items_seen,
                }) = self.containers.last_mut()
                {
                    if let Some(n) = next_number {
                        bullet = format!("{n}. ");
                        *n += 1;
                    }
                    tight = *t;
                    first = *items_seen == 0;
                    *items_seen += 1;
                }
                // Loose lists get a blank line between items; tight ones never do.
                self.pending_blank = !tight && !first;
                self.containers.push(Container::Item {
                    bullet,
                    bullet_pending: true,
                });
            }
            Tag::Table(alignments) => {
                self.start_block();
                self.table = Some(Table {
                    alignments: alignments.clone(),
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => self.row.clear(),
            Tag::TableCell => self.inline = vec![Vec::new()],
            Tag::Emphasis => self
                .styles
                .push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self
                .styles
                .push(Style::default().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .styles
                .push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let first_span = self.current_line().len();
                self.links.push(LinkState {
                    url: dest_url.to_string(),
                    first_span,
                });
                self.styles.push(
                    self.theme
                        .fg(ThemeToken::MdLink)
                        .add_modifier(Modifier::UNDERLINED),
                );
            }
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                let style = self.inline_style();
                self.push_text(&format!("[^{label}]: "), style);
            }
            Tag::Superscript | Tag::Subscript | Tag::DefinitionList | Tag::DefinitionListTitle => {}
            Tag::DefinitionListDefinition | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::FootnoteDefinition => self.end_block(),
            TagEnd::Heading(_) => {
                self.end_block();
                self.styles.pop();
                self.heading = None;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.styles.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.render_code(&lang, &code);
                }
                self.pending_blank = true;
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    let style = self.inline_style();
                    self.push_text(html.trim_end_matches('\n'), style);
                }
                self.end_block();
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::Item => {
                self.flush_inline();
                if let Some(Container::Item {
                    bullet_pending: true,
                    ..
                }) = self.containers.last()
                {
                    self.emit(Vec::new());
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let avail = self.width.saturating_sub(self.prefix_width()).max(1);
                    for line in table.render(avail, Style::default()) {
                        self.emit_prefixed(line.spans);
                    }
                }
                self.pending_blank = true;
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header = std::mem::take(&mut self.row);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(std::mem::take(&mut self.row));
                }
            }
            TagEnd::TableCell => {
                let cell: Cell = std::mem::take(&mut self.inline)
                    .into_iter()
                    .flatten()
                    .collect();
                self.row.push(cell);
                self.inline = vec![Vec::new()];
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some(link) = self.links.pop() {
                    self.finish_link(link);
                }
            }
            TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle => {}
            TagEnd::DefinitionListDefinition | TagEnd::MetadataBlock(_) => {}
        }
    }

    /// Appends ` (url)` after a link whose text is not the URL itself.
    fn finish_link(&mut self, link: LinkState) {
        let line = self.current_line();
        let text: String = line
            .get(link.first_span..)
            .unwrap_or_default()
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        let bare = link.url.strip_prefix("mailto:").unwrap_or(&link.url);
        if link.url.is_empty() || text == link.url || text == bare {
            return;
        }
        let style = self
            .inline_style()
            .patch(self.theme.fg(ThemeToken::MdLinkUrl));
        self.current_line()
            .push(Span::styled(format!(" ({})", link.url), style));
    }

    fn heading_style(&self, level: HeadingLevel) -> Style {
        let style = self
            .theme
            .fg(ThemeToken::MdHeading)
            .add_modifier(Modifier::BOLD);
        if level == HeadingLevel::H1 {
            style.add_modifier(Modifier::UNDERLINED)
        } else {
            style
        }
    }

    /// Before a block: flush pending inline text and put a blank line between siblings.
    fn start_block(&mut self) {
        self.flush_inline();
        if self.pending_blank && !self.out.is_empty() {
            self.emit_blank();
        }
        self.pending_blank = false;
    }

    fn end_block(&mut self) {
        self.flush_inline();
        self.pending_blank = true;
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::List { .. } => 0,
                Container::Item { bullet, .. } => str_width(bullet),
            })
            .sum()
    }

    /// (first-line, other-lines) prefixes of the current container stack.
    fn prefixes(&self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &self.containers {
            match c {
                Container::Quote => {
                    let border = Span::styled("│ ", self.theme.fg(ThemeToken::MdQuoteBorder));
                    first.push(border.clone());
                    rest.push(border);
                }
                Container::List { .. } => {}
                Container::Item {
                    bullet,
                    bullet_pending,
                } => {
                    let indent = Span::raw(" ".repeat(str_width(bullet)));
                    if *bullet_pending {
                        first.push(Span::styled(
                            bullet.clone(),
                            self.theme.fg(ThemeToken::MdListBullet),
                        ));
                    } else {
                        first.push(indent.clone());
                    }
                    rest.push(indent);
                }
            }
        }
        (first, rest)
    }

    /// The prefix of a text line that continues a list item's line, wrapped or after a
    /// single newline: pi splits and wraps an item's text after putting the bullet in
    /// front, so such lines start at the margin (only quote borders stay).
    fn continuation_prefix(&self) -> Vec<Span<'static>> {
        let border = Span::styled("│ ", self.theme.fg(ThemeToken::MdQuoteBorder));
        self.containers
            .iter()
            .filter(|c| matches!(c, Container::Quote))
            .map(|_| border.clone())
            .collect()
    }

    fn clear_bullets(&mut self) {
        for c in &mut self.containers {
            if let Container::Item { bullet_pending, .. } = c {
                *bullet_pending = false;
            }
        }
    }

    /// Wraps `spans` with the container prefixes and appends the lines.
    fn emit(&mut self, spans: Vec<Span<'static>>) {
        let (first, _) = self.prefixes();
        let opts = WrapOptions {
            first_prefix: first,
            rest_prefix: self.continuation_prefix(),
        };
        self.out.extend(wrap_spans(&spans, self.width, &opts));
        self.clear_bullets();
    }

    /// Appends one already laid-out line (a table row) behind the container prefixes.
    fn emit_prefixed(&mut self, spans: Vec<Span<'static>>) {
        let (first, _) = self.prefixes();
        let mut line = first;
        line.extend(spans);
        self.out.push(Line::from(line));
        self.clear_bullets();
    }

    fn emit_blank(&mut self) {
        let (_, rest) = self.prefixes();
        let mut spans: Vec<Span<'static>> = rest;
        while let Some(last) = spans.last_mut() {
            let trimmed = last.content.trim_end().to_string();
            if trimmed.is_empty() {
                spans.pop();
            } else {
                last.content = trimmed.into();
                break;
            }
        }
        self.out.push(Line::from(spans));
    }

    fn flush_inline(&mut self) {
        if self.inline_is_empty() {
            self.inline = vec![Vec::new()];
            return;
        }
        let lines = std::mem::replace(&mut self.inline, vec![Vec::new()]);
        for (i, spans) in lines.into_iter().enumerate() {
            if i == 0 {
                self.emit(spans);
            } else {
                // A line after a single newline continues the same text (see
                // `continuation_prefix`).
                let prefix = self.continuation_prefix();
                let opts = WrapOptions {
                    first_prefix: prefix.clone(),
                    rest_prefix: prefix,
                };
                self.out.extend(wrap_spans(&spans, self.width, &opts));
                self.clear_bullets();
            }
        }
    }

    fn render_code(&mut self, lang: &str, code: &str) {
        let border = self.theme.fg(ThemeToken::MdCodeBlockBorder);
        self.emit(vec![Span::styled(format!("```{lang}"), border)]);
        let code = code.strip_suffix('\n').unwrap_or(code);
        let fallback = self.theme.fg(ThemeToken::MdCodeBlock);
        let lang = (!lang.is_empty()).then_some(lang);
        let indent = Span::raw(self.code_indent);
        let (first, rest) = self.prefixes();
        for line in highlight::highlight(code, lang, self.theme, fallback) {
            let mut first_prefix = first.clone();
            first_prefix.push(indent.clone());
            let mut rest_prefix = rest.clone();
            rest_prefix.push(indent.clone());
            let opts = WrapOptions {
                first_prefix,
                rest_prefix,
            };
            self.out.extend(wrap_spans(&line.spans, self.width, &opts));
            self.clear_bullets();
        }
        self.emit(vec![Span::styled("```", border)]);
    }
}

/// For each list start in `events` (in order), whether it is tight: pulldown-cmark wraps
/// item content in paragraphs only in loose lists.
fn tight_lists<'e>(events: impl Iterator<Item = &'e Event<'e>>) -> Vec<bool> {
    let mut result = Vec::new();
    // Stack of open tags; for lists, the index into `result`.
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut kinds: Vec<u8> = Vec::new();
    for event in events {
        match event {
            Event::Start(tag) => {
                let kind = match tag {
                    Tag::List(_) => 1,
                    Tag::Item => 2,
                    Tag::Paragraph => 3,
                    _ => 0,
                };
                if kind == 1 {
                    result.push(true);
                    stack.push(Some(result.len() - 1));
                } else {
                    stack.push(None);
                }
                if kind == 3 && kinds.last() == Some(&2) {
                    // A paragraph directly inside an item: its list is loose.
                    if let Some(list_idx) = stack.iter().rev().skip(2).find_map(|s| *s) {
                        result[list_idx] = false;
                    }
                }
                kinds.push(kind);
            }
            Event::End(_) => {
                stack.pop();
                kinds.pop();
            }
            _ => {}
        }
    }
    result
}

/// Whether the source has an empty line between a block that started at `prev_start`
/// and one that starts at `next_start`.
pub(super) fn blank_line_between(text: &str, prev_start: usize, next_start: usize) -> bool {
    let next_start = next_start.min(text.len());
    let gap_start = text
        .get(..next_start)
        .unwrap_or(text)
        .trim_end()
        .len()
        .max(prev_start);
    text.get(gap_start..next_start)
        .is_some_and(|gap| gap.matches('\n').count() >= 2)
}
