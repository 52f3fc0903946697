//! The `ls` tool: one directory's entries, dotfiles included, directories marked with `/`,
//! sorted case-insensitively the way pi's `localeCompare` sorts them, at most `limit`
//! (500) entries and 50 KB.

use std::cmp::Ordering;
use std::path::Path;

use async_trait::async_trait;
use icu_normalizer::DecomposingNormalizerBorrowed;
use serde_json::{Map, Value, json};

use super::config::ToolConfig;
use super::js::{js_number_to_string, number_value};
use super::path::resolve_to_cwd;
use super::truncate::{DEFAULT_MAX_BYTES, Limits, format_size, truncate_head};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "List the entries of a directory in alphabetical order, dotfiles included; directory names end with '/'. At most 500 entries or 50KB of output are returned (whichever comes first).";

const DEFAULT_LIMIT: f64 = 500.0;

pub struct LsTool {
    config: ToolConfig,
}

impl LsTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl Tool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn label(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list (defaults to the working directory)"},
                "limit": {"type": "number", "description": "Stop after this many entries (default 500)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("List the entries of a directory")
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let path = call
            .args
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let limit = call
            .args
            .get("limit")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_LIMIT);
        if call.cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        let dir = resolve_to_cwd(path, &self.config.cwd);
        let work = tokio::task::spawn_blocking(move || list(&dir, limit));
        tokio::select! {
            joined = work => joined.map_err(|e| ToolError::new(format!("ls failed: {e}")))?,
            () = call.cancel.cancelled() => Err(ToolError::new("Operation aborted")),
        }
    }
}

fn list(dir: &Path, limit: f64) -> Result<ToolOutput, ToolError> {
    if !dir.exists() {
        return Err(ToolError::new(format!("Path not found: {}", dir.display())));
    }
    if !dir.is_dir() {
        return Err(ToolError::new(format!(
            "Not a directory: {}",
            dir.display()
        )));
    }
    let reader = std::fs::read_dir(dir)
        .map_err(|e| ToolError::new(format!("Cannot read directory: {e}")))?;
    let mut names: Vec<String> = reader
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort_by_cached_key(|name| CollationKey::new(name));

    let mut entries = Vec::new();
    let mut limit_reached = false;
    for name in names {
        if entries.len() as f64 >= limit {
            limit_reached = true;
            break;
        }
        // Entries that cannot be examined (dangling symlinks) are left out, as in pi.
        let Ok(metadata) = std::fs::metadata(dir.join(&name)) else {
            continue;
        };
        let suffix = if metadata.is_dir() { "/" } else { "" };
        entries.push(format!("{name}{suffix}"));
    }
    if entries.is_empty() {
        return Ok(ToolOutput::text("(empty directory)"));
    }

    let truncation = truncate_head(&entries.join("\n"), Limits::bytes_only());
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{} entries limit reached. Use limit={} for more",
            js_number_to_string(limit),
            js_number_to_string(limit * 2.0)
        ));
        details.insert(
            "entryLimitReached".to_string(),
            number_value(limit).unwrap_or(Value::Null),
        );
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".to_string(), json!(truncation));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let output = ToolOutput::text(text);
    Ok(if details.is_empty() {
        output
    } else {
        output.with_details(Value::Object(details))
    })
}

/// ASCII characters in the order of Unicode's root collation (what JavaScript's
/// `localeCompare` uses by default): spaces and punctuation, symbols, digits, letters.
const ASCII_COLLATION_ORDER: &str =
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";

/// A sort key approximating `a.toLowerCase().localeCompare(b.toLowerCase())`: letters
/// compare by their base letter first (`é` next to `e`), accents only break ties, and
/// punctuation sorts before digits and letters. Characters outside ASCII without an ASCII
/// base letter sort after all ASCII, by code point.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CollationKey {
    primary: Vec<u32>,
    secondary: Vec<u32>,
    name: String,
}

impl CollationKey {
    fn new(name: &str) -> Self {
        let lower = name.to_lowercase();
        let decomposed = DecomposingNormalizerBorrowed::new_nfd().normalize(&lower);
        let mut primary = Vec::with_capacity(decomposed.len());
        let mut secondary = Vec::with_capacity(decomposed.len());
        for c in decomposed.chars() {
            if is_combining_mark(c) {
                if let Some(last) = secondary.last_mut() {
                    *last = *last * 0x1_0000 + u32::from(c);
                }
                continue;
            }
            primary.push(primary_weight(c));
            secondary.push(0);
        }
        Self {
            primary,
            secondary,
            name: name.to_string(),
        }
    }
}

impl Ord for CollationKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.primary
            .cmp(&other.primary)
            .then_with(|| self.secondary.cmp(&other.secondary))
            .then_with(|| self.name.cmp(&other.name))
    }
}

impl PartialOrd for CollationKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn primary_weight(c: char) -> u32 {
    match ASCII_COLLATION_ORDER.find(c) {
        Some(rank) if c.is_ascii() => rank as u32,
        _ => 0x100 + u32::from(c),
    }
}

/// Combining diacritical marks (the accents NFD splits off Latin letters).
fn is_combining_mark(c: char) -> bool {
    matches!(u32::from(c), 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_sort_like_locale_compare_on_lowercase() {
        let mut names = vec![
            "a", "a.txt", "a_b", "a-b", "a1", "ab", "é", "e", "f", "_x", "-x", ".x", "~x", "10",
            "9", "a b", "Z", "ä", "b", "aa", "a.b", "a!",
        ];
        names.sort_by_cached_key(|n| CollationKey::new(n));
        // Order produced by Node 20 (ICU, en-US) for the same names.
        assert_eq!(
            names,
            [
                "_x", "-x", ".x", "~x", "10", "9", "a", "ä", "a b", "a_b", "a-b", "a!", "a.b",
                "a.txt", "a1", "aa", "ab", "b", "e", "é", "f", "Z"
            ]
        );
    }
}
