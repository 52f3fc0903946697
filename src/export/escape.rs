//! The two gates every session-derived string passes on its way into the page: HTML
//! escaping (text and attribute values) and the link-target check for markdown links.
//!
//! The exporter never writes a string that came from a session file without going
//! through [`escape_html`] (or a renderer built on it, such as pulldown-cmark's own
//! escaping). Markup the exporter itself generates is written as literals.

use std::fmt::Write as _;

/// Appends `text` to `out` with `& < > " '` replaced by entities: safe as element text and
/// as a double- or single-quoted attribute value.
pub fn push_escaped(out: &mut String, text: &str) {
    let mut last = 0;
    for (i, byte) in text.bytes().enumerate() {
        let entity = match byte {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&text[last..i]);
        out.push_str(entity);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

/// `text` escaped for HTML (see [`push_escaped`]).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_escaped(&mut out, text);
    out
}

/// Whether a markdown link target may become a clickable link: `http:`, `https:` and
/// `mailto:` URLs and relative references (paths, `#fragments`, `?queries`). Anything else
/// with a scheme (`javascript:`, `data:`, `vbscript:`, `file:` …) is refused, and so are
/// network-path references (`//host/…`).
///
/// Browsers ignore ASCII tabs and newlines inside URLs and trim leading control
/// characters and spaces (`java\tscript:` is `javascript:`), so the scheme is read after
/// removing those, exactly as a browser would see it.
pub fn is_safe_link_target(target: &str) -> bool {
    let cleaned: String = target
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme_end = cleaned.find([':', '/', '?', '#']);
    match scheme_end {
        Some(i) if cleaned[i..].starts_with(':') => {
            let scheme = cleaned[..i].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        // No scheme: a relative reference, but not a network-path one (`//host/x`,
        // `\\host\x`): opened from disk that would reach out to another machine (on
        // Windows, over SMB).
        _ => {
            let network_path =
                cleaned.starts_with(['/', '\\']) && cleaned[1..].starts_with(['/', '\\']);
            let control = cleaned.chars().any(|c| c.is_control());
            !network_path && !control
        }
    }
}

/// Percent-encodes what may not stand in a URL fragment value (used for `#entry=<id>`
/// links); the result is still HTML-escaped where it is written.
pub fn fragment_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_character_that_can_open_markup_or_close_an_attribute() {
        assert_eq!(
            escape_html(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(escape_html("plain ü text"), "plain ü text");
    }

    #[test]
    fn only_web_and_mail_links_and_relative_references_are_allowed() {
        for ok in [
            "https://example.com/a?b#c",
            "HTTP://EXAMPLE.COM",
            "mailto:a@b.c",
            "docs/readme.md",
            "../x",
            "#section",
            "?q=1",
            "/abs/path:with-colon",
        ] {
            assert!(is_safe_link_target(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            " JavaScript:alert(1)",
            "java\tscript:alert(1)",
            "java\nscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "data:text/html,<script>",
            "vbscript:msgbox",
            "file:///etc/passwd",
            "//attacker.example/share",
            "\\\\attacker\\share",
            "/\\attacker/share",
            "weird\u{7f}",
        ] {
            assert!(!is_safe_link_target(bad), "{bad:?}");
        }
    }

    #[test]
    fn fragment_values_are_percent_encoded() {
        assert_eq!(fragment_value("a1b2c3d4"), "a1b2c3d4");
        assert_eq!(fragment_value("a&b=\"c\""), "a%26b%3D%22c%22");
    }
}
