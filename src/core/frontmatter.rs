//! YAML frontmatter of markdown files (skills, prompt templates): the block between a
//! leading `---` line and the next `---` line, parsed into JSON values.
//!
//! This is a small parser for the part of YAML that frontmatter uses in practice: block
//! mappings and sequences (nested by indentation), plain, single- and double-quoted
//! scalars, literal (`|`) and folded (`>`) block scalars with chomping indicators, flow
//! sequences and mappings (`[a, b]`, `{a: 1}`), comments, and the YAML 1.2 core schema
//! for `true`/`false`/`null`/numbers. Anchors, aliases, tags and multi-document streams
//! are not supported and are reported as errors rather than misread. Like pi, a file whose
//! frontmatter does not parse is an error for the caller to report; the body is still
//! available.
//!
//! Not for: general YAML documents or writing YAML.

use serde_json::{Map, Value};

mod error;
mod scalar;

pub use error::FrontmatterError;
use error::err;
use scalar::{FLOW_UNCLOSED, UNCLOSED, flow, quoted, scalar};

/// A markdown file split into its frontmatter and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    /// The parsed mapping (empty when the file has no frontmatter).
    pub fields: Map<String, Value>,
    /// Everything after the closing `---`, trimmed (the whole text when there is no
    /// frontmatter, with line endings normalized to `\n`).
    pub body: String,
}

impl Frontmatter {
    /// A string field (`None` when absent or not a string).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// Splits `content` like pi does: the text must start with `---`; the frontmatter ends at
/// the next line that starts with `---`. Without both, the whole text is the body.
fn split(content: &str) -> (Option<String>, String) {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return (None, normalized);
    }
    let Some(end) = normalized[3..].find("\n---").map(|i| i + 3) else {
        return (None, normalized);
    };
    let yaml = normalized.get(4..end).unwrap_or("").to_string();
    let body = normalized[end + 4..].trim().to_string();
    (Some(yaml), body)
}

/// Parses the frontmatter of a markdown file.
pub fn parse(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let (yaml, body) = split(content);
    let fields = match yaml {
        None => Map::new(),
        Some(yaml) => match parse_yaml(&yaml)? {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => {
                return Err(FrontmatterError {
                    line: 2,
                    message: "expected a mapping of keys to values".into(),
                });
            }
        },
    };
    Ok(Frontmatter { fields, body })
}

/// The body of a markdown file without its frontmatter (the whole text, trimmed only when
/// there is a frontmatter block).
pub fn strip(content: &str) -> String {
    split(content).1
}

/// One meaningful source line.
#[derive(Debug, Clone)]
struct Line<'a> {
    /// 1-based line number in the file (the frontmatter starts on line 2).
    number: usize,
    indent: usize,
    /// The text after the indentation (comments not yet removed).
    text: &'a str,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

/// Parses a YAML document made of the supported subset.
pub fn parse_yaml(yaml: &str) -> Result<Value, FrontmatterError> {
    let mut lines = Vec::new();
    for (i, raw) in yaml.split('\n').enumerate() {
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let text = &raw[indent..];
        if text.starts_with('\t') {
            return err(i + 2, "tabs are not allowed for indentation");
        }
        lines.push(Line {
            number: i + 2,
            indent,
            text: text.trim_end(),
        });
    }
    let mut parser = Parser { lines, pos: 0 };
    parser.skip_blank();
    if parser.pos >= parser.lines.len() {
        return Ok(Value::Null);
    }
    let indent = parser.lines[parser.pos].indent;
    let value = parser.block(indent)?;
    parser.skip_blank();
    if let Some(line) = parser.lines.get(parser.pos) {
        return err(line.number, "unexpected content after the document");
    }
    Ok(value)
}

fn is_blank_or_comment(text: &str) -> bool {
    text.is_empty() || text.starts_with('#')
}

/// Removes a trailing ` # comment` that is outside quotes.
fn strip_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'#' && (i == 0 || bytes[i - 1] == b' ') => return text[..i].trim_end(),
            None => {}
        }
    }
    text
}

/// Finds the `: ` (or trailing `:`) separating a mapping key from its value, outside
/// quotes and flow brackets.
fn find_key_separator(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut quote: Option<u8> = None;
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' if i == 0 => quote = Some(b),
                b'[' | b'{' => depth += 1,
                b']' | b'}' => depth -= 1,
                b'#' if i > 0 && bytes[i - 1] == b' ' => return None,
                b':' if depth == 0 && (i + 1 == bytes.len() || bytes[i + 1] == b' ') => {
                    return Some(i);
                }
                _ => {}
            },
        }
    }
    None
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self
            .lines
            .get(self.pos)
            .is_some_and(|l| is_blank_or_comment(l.text))
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<Line<'a>> {
        self.skip_blank();
        self.lines.get(self.pos).cloned()
    }

    /// A block node whose lines are indented by exactly `indent`.
    fn block(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let Some(first) = self.peek() else {
            return Ok(Value::Null);
        };
        if first.text == "-" || first.text.starts_with("- ") {
            self.sequence(indent)
        } else if find_key_separator(first.text).is_some() {
            self.mapping(indent)
        } else {
            // A bare scalar document (possibly spanning several lines).
            self.pos += 1;
            let text = strip_comment(first.text);
            let mut value = text.to_string();
            while let Some(next) = self.peek() {
                if next.indent < indent {
                    break;
                }
                value.push(' ');
                value.push_str(strip_comment(next.text));
                self.pos += 1;
            }
            scalar(&value, first.number)
        }
    }

    fn mapping(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut map = Map::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return err(line.number, "unexpected indentation");
            }
            let Some(sep) = find_key_separator(line.text) else {
                return err(
                    line.number,
                    format!("expected `key: value`, got `{}`", line.text),
                );
            };
            let key = match scalar(line.text[..sep].trim(), line.number)? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            if map.contains_key(&key) {
                return err(line.number, format!("duplicate key `{key}`"));
            }
            let rest = line.text[sep + 1..].trim_start();
            self.pos += 1;
            let value = self.value_after_indicator(rest, indent, line.number, true)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        while let Some(line) = self.peek() {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return err(line.number, "unexpected indentation");
            }
            let rest = if line.text == "-" {
                ""
            } else if let Some(rest) = line.text.strip_prefix("- ") {
                rest
            } else {
                break;
            };
            self.pos += 1;
            let rest_trimmed = rest.trim_start();
            if !rest_trimmed.is_empty() && find_key_separator(rest_trimmed).is_some() {
                // `- key: value` starts a mapping nested in the item; its further keys are
                // indented to where `key` starts.
                let item_indent = indent + 2 + (rest.len() - rest_trimmed.len());
                self.pos -= 1;
                let original = self.lines[self.pos].clone();
                self.lines[self.pos] = Line {
                    number: original.number,
                    indent: item_indent,
                    text: rest_trimmed,
                };
                items.push(self.mapping(item_indent)?);
                continue;
            }
            items.push(self.value_after_indicator(rest_trimmed, indent, line.number, false)?);
        }
        Ok(Value::Array(items))
    }

    /// The value following `key:` or `- `: inline, a block scalar, or a nested block.
    fn value_after_indicator(
        &mut self,
        rest: &str,
        parent_indent: usize,
        number: usize,
        in_mapping: bool,
    ) -> Result<Value, FrontmatterError> {
        let rest = strip_comment(rest);
        if rest.is_empty() {
            let Some(next) = self.peek() else {
                return Ok(Value::Null);
            };
            // A sequence may sit at the same indentation as its mapping key.
            let same_level_sequence = in_mapping
                && next.indent == parent_indent
                && (next.text == "-" || next.text.starts_with("- "));
            if next.indent > parent_indent || same_level_sequence {
                return self.block(next.indent);
            }
            return Ok(Value::Null);
        }
        if let Some(header) = rest.strip_prefix('|').or_else(|| rest.strip_prefix('>')) {
            let folded = rest.starts_with('>');
            return self.block_scalar(header, folded, parent_indent, number);
        }
        if rest.starts_with('&') || rest.starts_with('*') || rest.starts_with('!') {
            return err(number, "anchors, aliases and tags are not supported");
        }
        if rest.starts_with('[') || rest.starts_with('{') {
            // Flow collections may continue on following, more indented lines.
            let mut text = rest.to_string();
            loop {
                match flow(&text, number) {
                    Ok(value) => return Ok(value),
                    Err(e) if e.message == UNCLOSED => match self.lines.get(self.pos) {
                        Some(next) if next.indent > parent_indent => {
                            text.push(' ');
                            text.push_str(strip_comment(next.text));
                            self.pos += 1;
                        }
                        _ => return err(number, FLOW_UNCLOSED),
                    },
                    Err(e) => return Err(e),
                }
            }
        }
        if rest.starts_with('"') || rest.starts_with('\'') {
            return self.quoted_multiline(rest, parent_indent, number);
        }
        // A plain scalar may continue on more indented lines (folded with spaces).
        let mut value = rest.to_string();
        while let Some(next) = self.lines.get(self.pos) {
            if is_blank_or_comment(next.text) || next.indent <= parent_indent {
                break;
            }
            if in_mapping && find_key_separator(next.text).is_some() {
                return err(next.number, "unexpected indentation");
            }
            value.push(' ');
            value.push_str(strip_comment(next.text));
            self.pos += 1;
        }
        scalar(&value, number)
    }

    fn quoted_multiline(
        &mut self,
        first: &str,
        parent_indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        let mut text = first.to_string();
        loop {
            match quoted(&text, number) {
                Ok((value, rest)) => {
                    if !strip_comment(rest.trim()).is_empty() {
                        return err(number, "unexpected text after a quoted string");
                    }
                    return Ok(Value::String(value));
                }
                Err(e) if e.message == UNCLOSED => match self.lines.get(self.pos) {
                    Some(next) if next.indent > parent_indent || next.text.is_empty() => {
                        text.push(' ');
                        text.push_str(next.text);
                        self.pos += 1;
                    }
                    _ => return err(number, "unterminated quoted string"),
                },
                Err(e) => return Err(e),
            }
        }
    }

    /// `|` / `>` block scalars with an optional chomping indicator (`-`, `+`) and an
    /// optional explicit indentation digit.
    fn block_scalar(
        &mut self,
        header: &str,
        folded: bool,
        parent_indent: usize,
        number: usize,
    ) -> Result<Value, FrontmatterError> {
        let header = strip_comment(header).trim();
        let mut chomp = ' ';
        let mut explicit: Option<usize> = None;
        for c in header.chars() {
            match c {
                '-' | '+' => chomp = c,
                '1'..='9' => explicit = Some(c as usize - '0' as usize),
                _ => return err(number, format!("invalid block scalar header `{header}`")),
            }
        }
        let start = self.pos;
        let mut end = start;
        while let Some(line) = self.lines.get(end) {
            if !line.text.is_empty() && line.indent <= parent_indent {
                break;
            }
            end += 1;
        }
        let block = &self.lines[start..end];
        let indent = explicit.map(|e| parent_indent + e).unwrap_or_else(|| {
            block
                .iter()
                .find(|l| !l.text.is_empty())
                .map_or(parent_indent + 1, |l| l.indent)
        });
        let mut content: Vec<String> = Vec::new();
        for line in block {
            if line.text.is_empty() {
                content.push(String::new());
            } else if line.indent < indent {
                return err(
                    line.number,
                    "block scalar line is less indented than the block",
                );
            } else {
                content.push(format!("{}{}", " ".repeat(line.indent - indent), line.text));
            }
        }
        self.pos = end;
        let trailing_blank = content.iter().rev().take_while(|l| l.is_empty()).count();
        let body_lines = &content[..content.len() - trailing_blank];
        let mut text = if folded {
            fold(body_lines)
        } else {
            body_lines.join("\n")
        };
        match chomp {
            '-' => {}
            '+' => {
                if !body_lines.is_empty() {
                    text.push('\n');
                }
                text.push_str(&"\n".repeat(trailing_blank));
            }
            _ => {
                if !body_lines.is_empty() {
                    text.push('\n');
                }
            }
        }
        Ok(Value::String(text))
    }
}

/// Folds block-scalar lines: single line breaks between non-indented lines become spaces,
/// blank lines become line breaks, more-indented lines keep their breaks.
fn fold(lines: &[String]) -> String {
    let mut out = String::new();
    let mut prev_more_indented = false;
    let mut pending_breaks = 0usize;
    let mut first = true;
    for line in lines {
        if line.is_empty() {
            pending_breaks += 1;
            continue;
        }
        let more_indented = line.starts_with(' ');
        if !first {
            if pending_breaks > 0 {
                let extra = usize::from(more_indented || prev_more_indented);
                out.push_str(&"\n".repeat(pending_breaks + extra));
            } else if more_indented || prev_more_indented {
                out.push('\n');
            } else {
                out.push(' ');
            }
        } else if pending_breaks > 0 {
            out.push_str(&"\n".repeat(pending_breaks));
        }
        out.push_str(line);
        pending_breaks = 0;
        prev_more_indented = more_indented;
        first = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn yaml(text: &str) -> Value {
        parse_yaml(text).unwrap()
    }

    #[test]
    fn splits_frontmatter_from_trimmed_body_like_pi() {
        let fm = parse("---\r\nname: a\r\n---\r\n\r\n# Title\r\nbody\r\n\r\n").unwrap();
        assert_eq!(fm.fields, json!({"name": "a"}).as_object().unwrap().clone());
        assert_eq!(fm.body, "# Title\nbody");
        let none = parse("# Just text\n").unwrap();
        assert!(none.fields.is_empty());
        assert_eq!(none.body, "# Just text\n");
        let unclosed = parse("---\nname: a\n").unwrap();
        assert!(unclosed.fields.is_empty());
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        assert_eq!(
            yaml(
                "a: hello world\nb: 'it''s'\nc: \"tab\\tx\"\nd: true\ne: 1.0\nf: 42\ng: ~\nh: x # note\ni: a: b"
            ),
            json!({"a": "hello world", "b": "it's", "c": "tab\tx", "d": true, "e": 1.0, "f": 42, "g": null, "h": "x", "i": "a: b"})
        );
    }

    #[test]
    fn block_scalars_keep_or_fold_lines_with_chomping() {
        let v = yaml(
            "lit: |\n  one\n  two\n\n  three\nstrip: |-\n  x\n  y\nfold: >\n  a\n  b\n\n  c\nkeep: |+\n  k\n\nnext: 1",
        );
        assert_eq!(
            v,
            json!({"lit": "one\ntwo\n\nthree\n", "strip": "x\ny", "fold": "a b\nc\n", "keep": "k\n\n", "next": 1})
        );
    }

    #[test]
    fn nested_mappings_sequences_and_flow_collections() {
        let v = yaml(
            "metadata:\n  author: me\n  tags:\n    - a\n    - b: 1\n      c: 2\nallowed-tools: [Read, \"Grep\", {x: 1}]\nlist:\n- one\n- two\nplain: first\n  second",
        );
        assert_eq!(
            v,
            json!({
                "metadata": {"author": "me", "tags": ["a", {"b": 1, "c": 2}]},
                "allowed-tools": ["Read", "Grep", {"x": 1}],
                "list": ["one", "two"],
                "plain": "first second"
            })
        );
    }

    #[test]
    fn invalid_yaml_is_an_error_with_its_line() {
        let e = parse("---\nname: invalid-yaml\ndescription: [unclosed bracket\n---\nbody")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid YAML frontmatter at line 3: flow collection is not closed with `]` or `}`"
        );
        assert!(parse_yaml("a: 1\na: 2").is_err());
        assert!(parse_yaml("a: \"open").is_err());
        assert!(parse_yaml("a: *ref").is_err());
        assert!(parse_yaml("a: 1\n   b: 2").is_err());
    }

    #[test]
    fn strip_returns_the_body() {
        assert_eq!(strip("---\na: 1\n---\n\n  Body  \n"), "Body");
        assert_eq!(strip("No frontmatter"), "No frontmatter");
    }
}
