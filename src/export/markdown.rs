//! Markdown to safe HTML for message text, summaries and custom messages.
//!
//! pulldown-cmark parses; its own writer produces the HTML, after the event stream has
//! been made safe: raw HTML in the markdown (block or inline) becomes literal text, links
//! survive only with an allowed target ([`is_safe_link_target`]), images never load
//! anything (they become links, so the page makes no network request), soft line breaks
//! become `<br>` (pi shows a model's line breaks as written), and fenced code is
//! highlighted by [`super::highlight`]. The only `Html` events reaching the writer are
//! the ones built here from escaped parts.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

use super::escape::{escape_html, is_safe_link_target, push_escaped};
use super::highlight::push_highlighted;

fn options() -> Options {
    // No footnotes or heading attributes: both would put ids and classes taken from the
    // session into the page, where they could collide with the page's own.
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

fn link_open(dest: &str, title: &str, link_type: LinkType) -> Option<String> {
    let href = if link_type == LinkType::Email && !dest.contains(':') {
        format!("mailto:{dest}")
    } else {
        dest.to_string()
    };
    if !is_safe_link_target(&href) {
        return None;
    }
    let mut html = String::from("<a href=\"");
    push_escaped(&mut html, &href);
    html.push('"');
    if !title.is_empty() {
        html.push_str(" title=\"");
        push_escaped(&mut html, title);
        html.push('"');
    }
    let lower = href.trim_start().to_ascii_lowercase();
    if lower.starts_with("http:") || lower.starts_with("https:") {
        html.push_str(" target=\"_blank\" rel=\"noopener noreferrer\"");
    }
    html.push('>');
    Some(html)
}

/// Appends the HTML of the markdown `text` to `out`.
pub fn push_markdown(out: &mut String, text: &str) {
    let mut events: Vec<Event<'_>> = Vec::new();
    // Language and collected text of the fenced/indented code block being read.
    let mut code: Option<(Option<String>, String)> = None;
    // For each open link or image: whether an `<a>` was written for it.
    let mut anchors: Vec<bool> = Vec::new();

    for event in Parser::new_ext(text, options()) {
        if let Some((_, buf)) = code.as_mut() {
            match event {
                Event::Text(t) => {
                    buf.push_str(&t);
                    continue;
                }
                Event::End(TagEnd::CodeBlock) => {}
                _ => continue,
            }
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                code = Some((lang, String::new()));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, buf)) = code.take() {
                    let mut html = String::from("<pre class=\"code\"><code>");
                    push_highlighted(&mut html, &buf, lang.as_deref());
                    html.push_str("</code></pre>\n");
                    events.push(Event::Html(CowStr::from(html)));
                }
            }
            Event::Start(Tag::HtmlBlock) => {
                events.push(Event::Html(CowStr::Borrowed("<div class=\"md-raw\">")));
            }
            Event::End(TagEnd::HtmlBlock) => {
                events.push(Event::Html(CowStr::Borrowed("</div>\n")));
            }
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::SoftBreak => events.push(Event::HardBreak),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            }) => match link_open(&dest_url, &title, link_type) {
                Some(open) => {
                    events.push(Event::Html(CowStr::from(open)));
                    anchors.push(true);
                }
                None => anchors.push(false),
            },
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                ..
            }) => {
                // Shown as a link to the picture, never loaded: an export must not make
                // requests (a remote image is a tracking pixel).
                let open = link_open(&dest_url, &title, link_type);
                anchors.push(open.is_some());
                let mut html = open.unwrap_or_default();
                html.push_str("<span class=\"md-image\">image: </span>");
                events.push(Event::Html(CowStr::from(html)));
            }
            Event::End(TagEnd::Link) | Event::End(TagEnd::Image) => {
                if anchors.pop() == Some(true) {
                    events.push(Event::Html(CowStr::Borrowed("</a>")));
                }
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => events.push(Event::Code(m)),
            other => events.push(other),
        }
    }
    pulldown_cmark::html::push_html(out, events.into_iter());
}

/// The HTML of the markdown `text`.
pub fn markdown_to_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    push_markdown(&mut out, text);
    out
}

/// Plain text as a `<pre>`-like block (for content that is not markdown).
pub fn plain_block(text: &str) -> String {
    format!("<div class=\"plain\">{}</div>", escape_html(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_markdown_renders_with_line_breaks_kept() {
        let html = markdown_to_html(
            "# Title\n\nSome **bold** and `code`\nnext line\n\n- [x] done\n- item",
        );
        insta::assert_snapshot!(html, @r#"
        <h1>Title</h1>
        <p>Some <strong>bold</strong> and <code>code</code><br />
        next line</p>
        <ul>
        <li><input disabled="" type="checkbox" checked=""/>
        done</li>
        <li>item</li>
        </ul>
        "#);
    }

    #[test]
    fn raw_html_is_shown_as_text_never_as_markup() {
        let html = markdown_to_html(
            "<script>alert(1)</script>\n\ninline <img src=x onerror=alert(1)> and </script>",
        );
        insta::assert_snapshot!(html, @r#"
        <div class="md-raw">&lt;script&gt;alert(1)&lt;/script&gt;
        </div>
        <p>inline &lt;img src=x onerror=alert(1)&gt; and &lt;/script&gt;</p>
        "#);
    }

    #[test]
    fn dangerous_links_lose_their_target_and_safe_ones_open_in_a_new_tab() {
        let html = markdown_to_html(
            "[a](javascript:alert(1)) [b](https://x.org/?q=\"1\") [c](docs/x.md) <mailto:m@x.org> <javascript:alert(2)> [d](&#106;avascript:alert(3))",
        );
        insta::assert_snapshot!(html, @r#"<p>a <a href="https://x.org/?q=&quot;1&quot;" target="_blank" rel="noopener noreferrer">b</a> <a href="docs/x.md">c</a> <a href="mailto:m@x.org">mailto:m@x.org</a> javascript:alert(2) d</p>"#);
    }

    #[test]
    fn images_become_links_and_never_load() {
        let html = markdown_to_html("![logo](https://x.org/p.png) ![bad](javascript:x)");
        insta::assert_snapshot!(html, @r#"<p><a href="https://x.org/p.png" target="_blank" rel="noopener noreferrer"><span class="md-image">image: </span>logo</a> <span class="md-image">image: </span>bad</p>"#);
    }

    #[test]
    fn fenced_code_is_highlighted_and_escaped() {
        let html = markdown_to_html("```rust\nlet x = \"</code>\";\n```\n\n```\n<plain>\n```");
        insta::assert_snapshot!(html, @r#"
        <pre class="code"><code><span class=hk>let</span> x <span class=ho>= </span><span class=hs>&quot;&lt;/code&gt;&quot;</span><span class=hp>;
        </span></code></pre>
        <pre class="code"><code>&lt;plain&gt;
        </code></pre>
        "#);
    }
}
