//! Reading a tool call's arguments (already checked against the tool's schema by the
//! agent loop, so a wrong type here is the model's mistake, reported as a tool error).

use serde_json::Value;

use super::ToolError;

/// The string argument `key`.
pub(crate) fn string_arg(args: &Value, key: &str) -> Result<String, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ToolError::new(format!("`{key}` must be a string")))
}
