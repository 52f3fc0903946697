//! The `edit` tool: one or more exact-text replacements in one file (`edits: [{oldText,
//! newText}]`), each matched against the original content. Keeps the file's BOM and line
//! endings, falls back to pi's tolerant matching, and answers with pi's texts and a
//! numbered diff in `details`. Edits and writes of the same file are serialized.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::args::string_arg;
use super::config::ToolConfig;
use super::edit_diff::{
    Replacement, apply_edits, detect_line_ending, generate_diff_string, normalize_to_lf,
    restore_line_endings, strip_bom,
};
use super::fsio::{Access, check_access, errno_code, node_error, write_file_replacing};
use super::mutation_queue::lock_file;
use super::path::resolve_to_cwd;
use super::{Tool, ToolCallArgs, ToolError, ToolOutput};

const DESCRIPTION: &str = "Edit one file by replacing exact text. Each edits[].oldText must match a unique region of the file as it was before this call, and the regions must not overlap. When two changes are close together or touch the same block, combine them into a single edit; do not pad oldText with long unchanged stretches just to bridge distant changes.";

/// Lines of unchanged context around each change in the stored diff.
const DIFF_CONTEXT_LINES: usize = 4;

pub struct EditTool {
    config: ToolConfig,
}

impl EditTool {
    pub fn new(config: ToolConfig) -> Self {
        Self { config }
    }
}

#[async_trait]
impl Tool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn label(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "File to edit, relative to the working directory or absolute"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "The exact text to replace. It must occur exactly once in the original file and must not overlap the oldText of another edit in this call."},
                            "newText": {"type": "string", "description": "The text that replaces oldText."}
                        }
                    },
                    "description": "The replacements to make. All of them are matched against the original file, not one after another, so they must not overlap or nest; merge changes to the same block or neighbouring lines into one edit."
                }
            }
        })
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Replace exact text in a file, with several separate replacements per call")
    }

    fn prompt_guidelines(&self) -> &[&str] {
        &[
            "Make targeted changes with edit; every edits[].oldText must match the file exactly.",
            "For several separate changes in one file, send one edit call with several entries in edits[] rather than several calls.",
            "All edits[].oldText are matched against the file as it was before the call, not after the earlier edits; never send overlapping or nested edits, merge neighbouring changes instead.",
            "Keep each edits[].oldText as short as it can be while still occurring only once in the file; do not include long unchanged regions.",
        ]
    }

    /// Models send `edits` as a JSON string, or the older top-level `oldText`/`newText`
    /// pair; pi accepts both.
    fn prepare_arguments(&self, args: Value) -> Value {
        let Value::Object(mut map) = args else {
            return args;
        };
        if let Some(Value::String(text)) = map.get("edits")
            && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
        {
            map.insert("edits".to_string(), parsed);
        }
        let legacy = match (map.get("oldText"), map.get("newText")) {
            (Some(Value::String(old)), Some(Value::String(new))) => {
                json!({"oldText": old, "newText": new})
            }
            _ => return Value::Object(map),
        };
        let mut edits = match map.get("edits") {
            Some(Value::Array(existing)) => existing.clone(),
            _ => Vec::new(),
        };
        edits.push(legacy);
        map.remove("oldText");
        map.remove("newText");
        map.insert("edits".to_string(), Value::Array(edits));
        Value::Object(map)
    }

    async fn execute(&self, call: ToolCallArgs) -> Result<ToolOutput, ToolError> {
        let path = string_arg(&call.args, "path")?;
        let edits = parse_edits(&call.args)?;
        let absolute = resolve_to_cwd(&path, &self.config.cwd);
        let _turn = lock_file(&absolute).await;
        if call.cancel.is_cancelled() {
            return Err(ToolError::new("Operation aborted"));
        }
        tokio::task::spawn_blocking(move || edit_file(&absolute, &path, &edits))
            .await
            .map_err(|e| ToolError::new(format!("edit failed: {e}")))?
    }
}

fn parse_edits(args: &Value) -> Result<Vec<Replacement>, ToolError> {
    let invalid = || {
        ToolError::new("Edit tool input is invalid. edits must contain at least one replacement.")
    };
    let Some(Value::Array(items)) = args.get("edits") else {
        return Err(invalid());
    };
    if items.is_empty() {
        return Err(invalid());
    }
    items
        .iter()
        .map(|item| {
            Ok(Replacement {
                old_text: string_arg(item, "oldText")?,
                new_text: string_arg(item, "newText")?,
            })
        })
        .collect()
}

fn edit_file(
    absolute: &std::path::Path,
    path: &str,
    edits: &[Replacement],
) -> Result<ToolOutput, ToolError> {
    if let Err(e) = check_access(absolute, Access::ReadWrite) {
        let code = errno_code(&e).map_or_else(|| e.to_string(), |c| format!("Error code: {c}"));
        return Err(ToolError::new(format!(
            "Could not edit file: {path}. {code}."
        )));
    }
    let raw = std::fs::read(absolute).map_err(|e| ToolError::new(node_error(&e, "read", None)))?;
    let raw = String::from_utf8_lossy(&raw);
    let (bom, content) = strip_bom(&raw);
    let ending = detect_line_ending(content);
    let normalized = normalize_to_lf(content);
    let applied =
        apply_edits(&normalized, edits, path).map_err(|e| ToolError::new(e.to_string()))?;
    let final_content = format!("{bom}{}", restore_line_endings(&applied.new, ending));
    write_file_replacing(absolute, final_content.as_bytes()).map_err(ToolError::new)?;
    let (diff, first_changed_line) =
        generate_diff_string(&applied.base, &applied.new, DIFF_CONTEXT_LINES);
    let mut details = json!({ "diff": diff });
    if let Some(line) = first_changed_line {
        details["firstChangedLine"] = json!(line);
    }
    Ok(ToolOutput::text(format!(
        "Successfully replaced {} block(s) in {path}.",
        edits.len()
    ))
    .with_details(details))
}
