//! The `grep` tool: searches file contents with ripgrep's own libraries, in-process (pi
//! downloads and runs the `rg` binary). Same parameters, same ignore rules as
//! `rg --hidden`, same output: `path:LINE: text` for matches, `path-LINE- text` for
//! context lines, lines cut at 500 characters, at most `limit` matches (100) and 50 KB,
//! with pi's notices. Matches are listed in path order, so a limited search returns the
//! same first matches every time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;
use ignore::overrides::OverrideBuilder;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::args::string_arg;
use super::config::ToolConfig;
use super::js::{js_number_to_string, number_value};
use super::path::resolve_to_cwd;
use super::truncate::{
    DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, Limits, format_size, truncate_head, truncate_line,
};
use super::walk::{FirstInPathOrder, IgnoreRules, walker};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "Search the contents of files for a regular expression (or a literal string). Returns the matching lines with their file paths and line numbers, honoring .gitignore. At most 100 matches or 50KB of output are returned (whichever comes first), and lines longer than 500 characters are shortened.";

const DEFAULT_LIMIT: f64 = 100.0;

pub struct GrepTool {
    config: ToolConfig,
}

impl GrepTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

/// Validated arguments.
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: usize,
    /// pi compares a match count against this number, fractions included.
    limit: f64,
}

impl GrepArgs {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
        let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
        let context = args
            .get("context")
            .and_then(Value::as_f64)
            .filter(|c| *c > 0.0)
            .map_or(0, |c| c.trunc() as usize);
        let limit = args
            .get("limit")
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_LIMIT)
            .max(1.0);
        Ok(Self {
            pattern: string_arg(args, "pattern")?,
            path: text("path").filter(|p| !p.is_empty()),
            glob: text("glob").filter(|g| !g.is_empty()),
            ignore_case: flag("ignoreCase"),
            literal: flag("literal"),
            context,
            limit,
        })
    }

    /// The number of matches after which the search stops.
    fn max_matches(&self) -> usize {
        self.limit.ceil() as usize
    }
}

#[async_trait]
impl Tool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }

    fn label(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for (or a literal string with literal=true)"},
                "path": {"type": "string", "description": "Directory or file to search in (defaults to the working directory)"},
                "glob": {"type": "string", "description": "Only search files matching this glob, for example '*.ts' or '**/*.spec.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Match regardless of letter case (default false)"},
                "literal": {"type": "boolean", "description": "Search for the pattern as plain text rather than a regular expression (default false)"},
                "context": {"type": "number", "description": "Lines of context to include before and after each match (default 0)"},
                "limit": {"type": "number", "description": "Stop after this many matches (default 100)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search file contents for a pattern (honors .gitignore)")
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let args = GrepArgs::parse(&call.args)?;
        if call.cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        let search_path = resolve_to_cwd(args.path.as_deref().unwrap_or("."), &self.config.cwd);
        let cancel = call.cancel.clone();
        let cwd = self.config.cwd.clone();
        let work =
            tokio::task::spawn_blocking(move || run_grep(&args, &search_path, &cwd, &cancel));
        tokio::select! {
            joined = work => joined.map_err(|e| ToolError::new(format!("grep failed: {e}")))?,
            () = call.cancel.cancelled() => Err(ToolError::new("Operation aborted")),
        }
    }
}

/// One matching line.
struct LineMatch {
    line_number: u64,
    text: String,
}

fn build_matcher(args: &GrepArgs) -> Result<RegexMatcher, ToolError> {
    let pattern = if args.literal {
        regex::escape(&args.pattern)
    } else {
        args.pattern.clone()
    };
    // Checked with the plain regex crate first: its error shows the pattern as written
    // (grep-regex reports its own wrapped form), which is what ripgrep prints.
    regex::RegexBuilder::new(&pattern)
        .case_insensitive(args.ignore_case)
        .build()
        .map_err(|e| ToolError::new(e.to_string()))?;
    RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case)
        .line_terminator(Some(b'\n'))
        .build(&pattern)
        .map_err(|e| ToolError::new(e.to_string()))
}

fn run_grep(
    args: &GrepArgs,
    search_path: &Path,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let metadata = std::fs::metadata(search_path)
        .map_err(|_| ToolError::new(format!("Path not found: {}", search_path.display())))?;
    let is_dir = metadata.is_dir();
    let matcher = build_matcher(args)?;
    let max_matches = args.max_matches();

    let collected: Arc<FirstInPathOrder<Vec<LineMatch>>> =
        Arc::new(FirstInPathOrder::new(max_matches));
    if is_dir {
        let mut builder = walker(search_path, IgnoreRules::Ripgrep);
        if let Some(glob) = &args.glob {
            // ripgrep anchors `--glob` patterns at its working directory (the session's),
            // not at the searched path.
            let mut overrides = OverrideBuilder::new(cwd);
            overrides
                .add(glob)
                .map_err(|e| ToolError::new(format!("Invalid glob '{glob}': {e}")))?;
            builder.overrides(
                overrides
                    .build()
                    .map_err(|e| ToolError::new(format!("Invalid glob '{glob}': {e}")))?,
            );
        }
        builder.build_parallel().run(|| {
            let matcher = matcher.clone();
            let collected = collected.clone();
            let mut searcher = searcher(BinaryDetection::quit(b'\0'));
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let is_file = entry.file_type().is_some_and(|t| t.is_file());
                if !is_file || collected.is_past_cutoff(entry.path()) {
                    return WalkState::Continue;
                }
                let matches = search_file(&mut searcher, &matcher, entry.path(), max_matches);
                if !matches.is_empty() {
                    collected.insert(entry.path().to_path_buf(), matches.len(), matches);
                }
                WalkState::Continue
            })
        });
    } else {
        // A file named explicitly is searched even if it is ignored, hidden or binary.
        let mut searcher = searcher(BinaryDetection::none());
        let matches = search_file(&mut searcher, &matcher, search_path, max_matches);
        if !matches.is_empty() {
            collected.insert(search_path.to_path_buf(), matches.len(), matches);
        }
    }
    if cancel.is_cancelled() {
        return Err(ToolError::new("Operation aborted"));
    }

    let files = collected.take_sorted();
    let total: usize = files.iter().map(|(_, m)| m.len()).sum();
    if total == 0 {
        return Ok(ToolOutput::text("No matches found"));
    }
    Ok(format_results(args, search_path, is_dir, files))
}

fn searcher(binary: BinaryDetection) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(binary)
        .build()
}

/// Up to `max` matching lines of one file; unreadable files have none.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    max: usize,
) -> Vec<LineMatch> {
    let mut sink = CollectLines {
        max,
        lines: Vec::new(),
    };
    let _ = searcher.search_path(matcher, path, &mut sink);
    sink.lines
}

struct CollectLines {
    max: usize,
    lines: Vec<LineMatch>,
}

impl Sink for CollectLines {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        let raw = String::from_utf8_lossy(found.bytes());
        // pi drops carriage returns and the line terminator from ripgrep's line text.
        let text = raw.replace('\r', "");
        let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
        self.lines.push(LineMatch {
            line_number: found.line_number().unwrap_or(0),
            text,
        });
        Ok(self.lines.len() < self.max)
    }
}

/// Cuts a long line to pi's grep width, noting that something was cut.
fn cut(text: &str, lines_truncated: &mut bool) -> String {
    let (text, was_cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
    *lines_truncated |= was_cut;
    text
}

fn display_path(search_path: &Path, is_dir: bool, file: &Path) -> String {
    if is_dir
        && let Ok(relative) = file.strip_prefix(search_path)
        && !relative.as_os_str().is_empty()
    {
        return relative.to_string_lossy().replace('\\', "/");
    }
    file.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file's lines as pi splits them for context (any line break style).
fn file_lines(path: &Path) -> Vec<String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes)
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .split('\n')
            .map(str::to_string)
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn format_results(
    args: &GrepArgs,
    search_path: &Path,
    is_dir: bool,
    files: Vec<(PathBuf, Vec<LineMatch>)>,
) -> ToolOutput {
    let max_matches = args.max_matches();
    let mut output: Vec<String> = Vec::new();
    let mut lines_truncated = false;
    let mut shown = 0usize;
    'files: for (file, matches) in files {
        let shown_path = display_path(search_path, is_dir, &file);
        let lines = if args.context > 0 {
            file_lines(&file)
        } else {
            Vec::new()
        };
        for found in matches {
            if shown >= max_matches {
                break 'files;
            }
            shown += 1;
            let number = found.line_number as usize;
            if args.context == 0 {
                let text = cut(&found.text, &mut lines_truncated);
                output.push(format!("{shown_path}:{number}: {text}"));
                continue;
            }
            if lines.is_empty() {
                output.push(format!("{shown_path}:{number}: (unable to read file)"));
                continue;
            }
            let start = number.saturating_sub(args.context).max(1);
            let end = (number + args.context).min(lines.len());
            for current in start..=end {
                let line = lines.get(current - 1).map_or("", String::as_str);
                let text = cut(&line.replace('\r', ""), &mut lines_truncated);
                if current == number {
                    output.push(format!("{shown_path}:{current}: {text}"));
                } else {
                    output.push(format!("{shown_path}-{current}- {text}"));
                }
            }
        }
    }

    let truncation = truncate_head(&output.join("\n"), Limits::bytes_only());
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if shown as f64 >= args.limit {
        let limit = js_number_to_string(args.limit);
        let doubled = js_number_to_string(args.limit * 2.0);
        notices.push(format!(
            "{limit} matches limit reached. Use limit={doubled} for more, or refine pattern"
        ));
        details.insert(
            "matchLimitReached".to_string(),
            number_value(args.limit).unwrap_or(Value::Null),
        );
    }
    if truncation.truncated {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".to_string(), json!(truncation));
    }
    if lines_truncated {
        notices.push(format!(
            "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        ));
        details.insert("linesTruncated".to_string(), json!(true));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    let output = ToolOutput::text(text);
    if details.is_empty() {
        output
    } else {
        output.with_details(Value::Object(details))
    }
}
