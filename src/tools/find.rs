//! The `find` tool: lists files and directories whose name matches a glob, in-process
//! with ripgrep's `ignore` and `globset` crates (pi downloads and runs `fd`). Follows fd's
//! rules as pi invokes it: hidden entries included, `.gitignore`/`.ignore`/`.fdignore`
//! honored even outside git repositories, case-insensitive unless the
//! pattern has an uppercase letter, and a pattern containing `/` matched against the full
//! path. Paths are relative to the search directory, directories end in `/`, results come
//! in path order, at most `limit` (1000) and 50 KB.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::args::string_arg;
use super::config::ToolConfig;
use super::js::{js_number_to_string, number_value};
use super::path::resolve_to_cwd;
use super::truncate::{DEFAULT_MAX_BYTES, Limits, format_size, truncate_head};
use super::walk::{FirstInPathOrder, IgnoreRules, walker};
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "Find files by glob pattern. Returns matching paths relative to the search directory, honoring .gitignore. At most 1000 results or 50KB of output are returned (whichever comes first).";

const DEFAULT_LIMIT: f64 = 1000.0;

pub struct FindTool {
    config: ToolConfig,
}

impl FindTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn label(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob the paths must match, for example '*.ts', '**/*.json' or 'src/**/*.spec.ts'"},
                "path": {"type": "string", "description": "Directory to search (defaults to the working directory)"},
                "limit": {"type": "number", "description": "Stop after this many results (default 1000)"}
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Find files by glob pattern (honors .gitignore)")
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let pattern = string_arg(&call.args, "pattern")?;
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
        let search_path = resolve_to_cwd(path, &self.config.cwd);
        let cancel = call.cancel.clone();
        let work =
            tokio::task::spawn_blocking(move || run_find(&pattern, &search_path, limit, &cancel));
        tokio::select! {
            joined = work => joined.map_err(|e| ToolError::new(format!("find failed: {e}")))?,
            () = call.cancel.cancelled() => Err(ToolError::new("Operation aborted")),
        }
    }
}

/// What a found path is compared against.
enum MatchTarget {
    /// An empty pattern, which fd treats as "match everything".
    Everything,
    FileName(GlobMatcher),
    FullPath(GlobMatcher),
}

impl MatchTarget {
    fn new(pattern: &str) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Ok(Self::Everything);
        }
        let full_path = pattern.contains('/');
        let effective = if full_path
            && !pattern.starts_with('/')
            && !pattern.starts_with("**/")
            && pattern != "**"
        {
            format!("**/{pattern}")
        } else {
            pattern.to_string()
        };
        // fd's smart case: an uppercase letter makes the search case-sensitive.
        let case_insensitive = !pattern.chars().any(char::is_uppercase);
        let matcher = GlobBuilder::new(&effective)
            .literal_separator(true)
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?
            .compile_matcher();
        Ok(if full_path {
            Self::FullPath(matcher)
        } else {
            Self::FileName(matcher)
        })
    }

    fn matches(&self, path: &Path) -> bool {
        match self {
            Self::Everything => true,
            Self::FullPath(m) => m.is_match(path),
            Self::FileName(m) => path.file_name().is_some_and(|name| m.is_match(name)),
        }
    }
}

fn run_find(
    pattern: &str,
    search_path: &Path,
    limit: f64,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    // fd's own words, which pi passes on.
    if !search_path.is_dir() {
        return Err(ToolError::new(format!(
            "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
            search_path.display()
        )));
    }
    let target = Arc::new(MatchTarget::new(pattern)?);
    let max_results = limit.max(1.0).ceil() as usize;
    let collected: Arc<FirstInPathOrder<bool>> = Arc::new(FirstInPathOrder::new(max_results));

    walker(search_path, IgnoreRules::Fd)
        .build_parallel()
        .run(|| {
            let target = target.clone();
            let collected = collected.clone();
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.depth() == 0 || collected.is_past_cutoff(entry.path()) {
                    return WalkState::Continue;
                }
                if target.matches(entry.path()) {
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    collected.insert(entry.path().to_path_buf(), 1, is_dir);
                }
                WalkState::Continue
            })
        });
    if cancel.is_cancelled() {
        return Err(ToolError::new("Operation aborted"));
    }

    let found = collected.take_sorted();
    if found.is_empty() {
        return Ok(ToolOutput::text("No files found matching pattern"));
    }
    Ok(format_results(search_path, &found, limit))
}

fn relative_display(search_path: &Path, path: &Path, is_dir: bool) -> String {
    let relative = path.strip_prefix(search_path).unwrap_or(path);
    let mut shown = relative.to_string_lossy().replace('\\', "/");
    if is_dir && !shown.ends_with('/') {
        shown.push('/');
    }
    shown
}

fn format_results(search_path: &Path, found: &[(PathBuf, bool)], limit: f64) -> ToolOutput {
    let lines: Vec<String> = found
        .iter()
        .map(|(path, is_dir)| relative_display(search_path, path, *is_dir))
        .collect();
    let truncation = truncate_head(&lines.join("\n"), Limits::bytes_only());
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if found.len() as f64 >= limit {
        notices.push(format!(
            "{} results limit reached. Use limit={} for more, or refine pattern",
            js_number_to_string(limit),
            js_number_to_string(limit * 2.0)
        ));
        details.insert(
            "resultLimitReached".to_string(),
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
    if details.is_empty() {
        output
    } else {
        output.with_details(Value::Object(details))
    }
}
