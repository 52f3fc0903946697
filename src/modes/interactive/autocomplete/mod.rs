//! Completion for the prompt editor, as in pi: `/command` names (fuzzy, with
//! descriptions), `@path` file references searched in a project file list, and Tab
//! completion of paths typed as `./`, `../`, `~/` or `/` (read from the file system;
//! directories get a trailing `/` so completion can continue).
//!
//! Providers are synchronous: the `@` list comes from a file list the app builds once
//! with [`walk_project`] (`.gitignore`-aware, hidden files included, capped) instead of
//! pi's per-keystroke `fd` run. The editor decides when to ask (see
//! [`super::editor`]); this module only computes suggestions and applies the chosen one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fuzzy::fuzzy_filter;

/// A slash command offered for completion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandSpec {
    /// Name without the leading `/`.
    pub name: String,
    pub description: Option<String>,
    /// Shown before the description, e.g. `[instructions]`.
    pub argument_hint: Option<String>,
    /// Fixed completions for the first argument (filtered by prefix).
    pub arguments: Vec<CompletionItem>,
    /// Filter `arguments` fuzzily by label and description, best match first (pi's
    /// `/model` completion: `opus anthropic` finds `anthropic/claude-opus-4-5`), instead
    /// of by prefix.
    pub fuzzy_arguments: bool,
}

impl CommandSpec {
    pub fn new(name: &str, description: &str) -> Self {
        CommandSpec {
            name: name.to_string(),
            description: Some(description.to_string()),
            ..CommandSpec::default()
        }
    }
}

/// One row of the completion list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionItem {
    /// Text inserted when chosen.
    pub value: String,
    /// Text shown in the list.
    pub label: String,
    pub description: Option<String>,
}

/// Suggestions and the text before the cursor they would replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestions {
    pub items: Vec<CompletionItem>,
    pub prefix: String,
}

/// Editor content after a completion was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub lines: Vec<String>,
    pub cursor_line: usize,
    /// Byte offset in the cursor line.
    pub cursor_col: usize,
}

/// Where suggestions come from. `col` is a byte offset into `lines[line]`.
pub trait AutocompleteProvider: Send + Sync {
    /// Suggestions for the cursor position. `force` is an explicit Tab (path completion
    /// of whatever word is before the cursor).
    fn suggestions(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        force: bool,
    ) -> Option<Suggestions>;

    /// Replaces `prefix` (which ends at the cursor) with the chosen item.
    fn apply(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &CompletionItem,
        prefix: &str,
    ) -> Completion;

    /// Whether Tab should try path completion here.
    fn should_trigger_file_completion(&self, lines: &[String], line: usize, col: usize) -> bool {
        let before = lines
            .get(line)
            .map(|l| &l[..col.min(l.len())])
            .unwrap_or("");
        let trimmed = before.trim();
        !trimmed.starts_with('/') || trimmed.contains(' ')
    }
}

/// A file or directory of the project, relative to its root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    pub path: String,
    pub is_dir: bool,
}

/// Lists a project's files and directories for `@` completion: honours `.gitignore`
/// and `.ignore` (also outside git repos), includes hidden files, skips `.git`, follows
/// symlinks, sorted by path within each directory, at most `max` entries.
pub fn walk_project(root: &Path, max: usize) -> Vec<ProjectFile> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if out.len() >= max {
            break;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let path = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push(ProjectFile { path, is_dir });
    }
    out
}

/// Characters that end a path token.
const PATH_DELIMITERS: &[char] = &[' ', '\t', '"', '\'', '='];

/// pi's combined provider: commands, `@` files and Tab paths.
#[derive(Clone)]
pub struct CombinedProvider {
    commands: Vec<CommandSpec>,
    base_dir: PathBuf,
    home: Option<PathBuf>,
    files: Arc<Vec<ProjectFile>>,
}

/// At most this many `@` suggestions are shown.
const MAX_FILE_SUGGESTIONS: usize = 20;

impl CombinedProvider {
    pub fn new(commands: Vec<CommandSpec>, base_dir: PathBuf, home: Option<PathBuf>) -> Self {
        CombinedProvider {
            commands,
            base_dir,
            home,
            files: Arc::new(Vec::new()),
        }
    }

    /// Sets the project file list used for `@` completion.
    pub fn with_files(mut self, files: Arc<Vec<ProjectFile>>) -> Self {
        self.files = files;
        self
    }

    fn command_suggestions(&self, before: &str) -> Option<Suggestions> {
        let after_slash = &before[1..];
        match after_slash.find(' ') {
            None => {
                let matches = fuzzy_filter(&self.commands, after_slash, |c| c.name.as_str());
                let items: Vec<CompletionItem> = matches
                    .into_iter()
                    .map(|c| {
                        let desc = c.description.clone().unwrap_or_default();
                        let description = match &c.argument_hint {
                            Some(hint) if desc.is_empty() => Some(hint.clone()),
                            Some(hint) => Some(format!("{hint} — {desc}")),
                            None => (!desc.is_empty()).then_some(desc),
                        };
                        CompletionItem {
                            value: c.name.clone(),
                            label: c.name.clone(),
                            description,
                        }
                    })
                    .collect();
                (!items.is_empty()).then(|| Suggestions {
                    items,
                    prefix: before.to_string(),
                })
            }
            Some(space) => {
                let name = &after_slash[..space];
                let arg = &after_slash[space + 1..];
                let command = self.commands.iter().find(|c| c.name == name)?;
                let items: Vec<CompletionItem> = if command.fuzzy_arguments {
                    let keyed: Vec<(String, &CompletionItem)> = command
                        .arguments
                        .iter()
                        .map(|a| {
                            let key = match &a.description {
                                Some(d) => format!("{} {d}", a.label),
                                None => a.label.clone(),
                            };
                            (key, a)
                        })
                        .collect();
                    fuzzy_filter(&keyed, arg, |(key, _)| key.as_str())
                        .into_iter()
                        .map(|(_, a)| (*a).clone())
                        .collect()
                } else {
                    command
                        .arguments
                        .iter()
                        .filter(|a| a.value.starts_with(arg))
                        .cloned()
                        .collect()
                };
                (!items.is_empty()).then(|| Suggestions {
                    items,
                    prefix: arg.to_string(),
                })
            }
        }
    }

    fn expand_home(&self, path: &str) -> PathBuf {
        match (path.strip_prefix("~"), &self.home) {
            (Some(rest), Some(home)) => home.join(rest.trim_start_matches('/')),
            _ => PathBuf::from(path),
        }
    }

    /// `@` suggestions: project files whose name contains the query, best first.
    fn file_suggestions(&self, raw: &str, quoted: bool) -> Vec<CompletionItem> {
        let (scope, query) = match raw.rfind('/') {
            Some(i) => (&raw[..=i], &raw[i + 1..]),
            None => ("", raw),
        };
        let outside = scope.starts_with('/') || scope.starts_with('~');
        let scanned;
        let candidates: Vec<(String, bool)> = if outside {
            let dir = self.expand_home(scope);
            scanned = walk_project(&dir, 2_000);
            scanned
                .iter()
                .map(|f| (format!("{scope}{}", f.path), f.is_dir))
                .collect()
        } else {
            self.files
                .iter()
                .filter(|f| f.path.starts_with(scope))
                .map(|f| (f.path.clone(), f.is_dir))
                .collect()
        };
        let query_lower = query.to_lowercase();
        let mut scored: Vec<(u32, usize, String, bool)> = candidates
            .into_iter()
            .enumerate()
            .filter_map(|(i, (path, is_dir))| {
                let name = path.rsplit('/').next().unwrap_or(&path).to_lowercase();
                let mut score = if query.is_empty() {
                    1
                } else if name == query_lower {
                    100
                } else if name.starts_with(&query_lower) {
                    80
                } else if name.contains(&query_lower) {
                    50
                } else {
                    return None;
                };
                if is_dir && !query.is_empty() {
                    score += 10;
                }
                Some((score, i, path, is_dir))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(MAX_FILE_SUGGESTIONS)
            .map(|(_, _, path, is_dir)| {
                let name = path.rsplit('/').next().unwrap_or(&path).to_string();
                let with_slash = if is_dir {
                    format!("{path}/")
                } else {
                    path.clone()
                };
                CompletionItem {
                    value: completion_value(&with_slash, true, quoted),
                    label: if is_dir { format!("{name}/") } else { name },
                    description: Some(path),
                }
            })
            .collect()
    }

    /// Tab completion of a path prefix from the directory it names.
    fn path_suggestions(&self, prefix: &str) -> Vec<CompletionItem> {
        let (raw, at, quoted) = parse_path_prefix(prefix);
        let expanded = if raw.starts_with('~') {
            self.expand_home(raw)
        } else {
            PathBuf::from(raw)
        };
        let absolute = raw.starts_with('~') || raw.starts_with('/');
        let (dir_part, file_part) = match raw.rfind('/') {
            Some(i) => (&raw[..=i], &raw[i + 1..]),
            None if raw == "~" => ("~/", ""),
            None => ("", raw),
        };
        let search_dir = if raw == "~" {
            self.expand_home("~")
        } else if absolute {
            if raw.ends_with('/') {
                expanded
            } else {
                expanded.parent().map(Path::to_path_buf).unwrap_or_default()
            }
        } else {
            self.base_dir.join(dir_part)
        };
        let Ok(entries) = std::fs::read_dir(&search_dir) else {
            return Vec::new();
        };
        let file_lower = file_part.to_lowercase();
        let mut items: Vec<(bool, CompletionItem)> = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.to_lowercase().starts_with(&file_lower) {
                continue;
            }
            let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            let display = format!("{dir_part}{name}{}", if is_dir { "/" } else { "" });
            items.push((
                is_dir,
                CompletionItem {
                    value: completion_value(&display, at, quoted),
                    label: format!("{name}{}", if is_dir { "/" } else { "" }),
                    description: None,
                },
            ));
        }
        items.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.label.cmp(&b.1.label)));
        items.into_iter().map(|(_, i)| i).collect()
    }
}

/// `@"…`, `"…`, `@…` or a bare path: (path text, has `@`, is quoted).
fn parse_path_prefix(prefix: &str) -> (&str, bool, bool) {
    if let Some(rest) = prefix.strip_prefix("@\"") {
        (rest, true, true)
    } else if let Some(rest) = prefix.strip_prefix('"') {
        (rest, false, true)
    } else if let Some(rest) = prefix.strip_prefix('@') {
        (rest, true, false)
    } else {
        (prefix, false, false)
    }
}

/// The inserted text: `@` when completing a reference, quotes around paths with spaces.
fn completion_value(path: &str, at: bool, quoted: bool) -> String {
    let at = if at { "@" } else { "" };
    if quoted || path.contains(' ') {
        format!("{at}\"{path}\"")
    } else {
        format!("{at}{path}")
    }
}

fn is_token_start(text: &str, idx: usize) -> bool {
    idx == 0 || text[..idx].ends_with(PATH_DELIMITERS)
}

/// The open `"…` (or `@"…`) token before the cursor, if a quote is unclosed.
fn quoted_prefix(text: &str) -> Option<&str> {
    let mut open: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if c == '"' {
            open = if open.is_some() { None } else { Some(i) };
        }
    }
    let start = open?;
    if start > 0 && text[..start].ends_with('@') {
        let at = start - 1;
        return is_token_start(text, at).then(|| &text[at..]);
    }
    is_token_start(text, start).then(|| &text[start..])
}

fn last_token(text: &str) -> &str {
    match text.rfind(PATH_DELIMITERS) {
        Some(i) => &text[i + 1..],
        None => text,
    }
}

/// The `@…` reference being typed before the cursor.
pub fn at_prefix(before: &str) -> Option<&str> {
    if let Some(q) = quoted_prefix(before)
        && q.starts_with("@\"")
    {
        return Some(q);
    }
    let token = last_token(before);
    token.starts_with('@').then_some(token)
}

/// The path-like token before the cursor. With `force` (Tab) any token qualifies;
/// otherwise only ones that look like paths.
fn path_prefix(before: &str, force: bool) -> Option<&str> {
    if let Some(q) = quoted_prefix(before) {
        return Some(q);
    }
    let token = last_token(before);
    if force || token.contains('/') || token.starts_with('.') || token.starts_with("~/") {
        return Some(token);
    }
    (token.is_empty() && before.ends_with(' ')).then_some(token)
}

impl AutocompleteProvider for CombinedProvider {
    fn suggestions(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        let current = lines.get(line)?;
        let before = &current[..col.min(current.len())];
        if let Some(prefix) = at_prefix(before) {
            let (raw, _, quoted) = parse_path_prefix(prefix);
            let items = self.file_suggestions(raw, quoted);
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: prefix.to_string(),
            });
        }
        if !force && before.starts_with('/') {
            return self.command_suggestions(before);
        }
        let prefix = path_prefix(before, force)?;
        let items = self.path_suggestions(prefix);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: prefix.to_string(),
        })
    }

    fn apply(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        item: &CompletionItem,
        prefix: &str,
    ) -> Completion {
        let current = lines.get(line).map(String::as_str).unwrap_or("");
        let col = col.min(current.len());
        let start = col.saturating_sub(prefix.len());
        let before_prefix = &current[..start];
        let mut after = &current[col..];
        let quoted = prefix.starts_with('"') || prefix.starts_with("@\"");
        if quoted && item.value.ends_with('"') && after.starts_with('"') {
            after = &after[1..];
        }
        let is_dir = item.label.ends_with('/');
        let trailing_quote = item.value.ends_with('"');
        let (new_line, cursor) = if prefix.starts_with('/')
            && before_prefix.trim().is_empty()
            && !prefix[1..].contains('/')
        {
            // A command name: `/name ` and the cursor after the space.
            (
                format!("{before_prefix}/{} {after}", item.value),
                before_prefix.len() + item.value.len() + 2,
            )
        } else if prefix.starts_with('@') {
            // Files get a space after them; directories do not, so typing continues.
            let suffix = if is_dir { "" } else { " " };
            let offset = if is_dir && trailing_quote {
                item.value.len() - 1
            } else {
                item.value.len()
            };
            (
                format!("{before_prefix}{}{suffix}{after}", item.value),
                before_prefix.len() + offset + suffix.len(),
            )
        } else {
            let offset = if is_dir && trailing_quote {
                item.value.len() - 1
            } else {
                item.value.len()
            };
            (
                format!("{before_prefix}{}{after}", item.value),
                before_prefix.len() + offset,
            )
        };
        let mut new_lines = lines.to_vec();
        if let Some(slot) = new_lines.get_mut(line) {
            *slot = new_line;
        }
        Completion {
            lines: new_lines,
            cursor_line: line,
            cursor_col: cursor,
        }
    }
}

#[cfg(test)]
mod tests;
