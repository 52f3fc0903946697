//! Checks a tool call's arguments against the tool's JSON schema before the tool runs,
//! with pi's lenient conversions first and pi's error text when something is still wrong.
//!
//! pi (via TypeBox) converts what it reasonably can before checking: `"10"` becomes `10`
//! for a number, `1`/`"true"` become `true` for a boolean, a number becomes a string for a
//! string, a single object becomes a one-element array, `null` becomes `0` / `false` /
//! `"null"`. Built-in tool schemas get TypeBox's conversions followed by pi-ai's own
//! JSON-schema coercion ([`Coercion::TypeBox`]); tools with plain JSON schemas only get the
//! latter ([`Coercion::JsonSchema`]). Whatever still does not match is reported as
//!
//! ```text
//! Validation failed for tool "read":
//!   - path: must have required properties path
//!
//! Received arguments:
//! {}
//! ```
//!
//! Only the schema keywords tool schemas use are understood: `type`, `properties`,
//! `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`/`oneOf`/`allOf`,
//! numeric and length bounds and `pattern`. Unknown keywords are ignored.

mod check;
mod coerce;
mod convert;

use serde_json::Value;

use super::js::json_stringify_pretty;
use super::{Tool, ToolError};
use check::collect_errors;
pub use check::is_valid;

/// Which conversions run before the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coercion {
    /// TypeBox's `Value.Convert`, then pi-ai's JSON-schema coercion (built-in tools).
    #[default]
    TypeBox,
    /// pi-ai's JSON-schema coercion only (tools declared with a plain JSON schema).
    JsonSchema,
}

/// Prepares (the tool's own argument fix-ups), converts and checks the arguments of a call
/// to `tool`. On success returns the arguments the tool should run with; on failure the
/// error the model reads.
pub fn prepare_and_validate(tool: &dyn Tool, args: Value) -> Result<Value, ToolError> {
    let prepared = tool.prepare_arguments(args);
    validate_arguments(
        tool.name(),
        &tool.parameters(),
        &prepared,
        Coercion::TypeBox,
    )
    .map_err(ToolError::new)
}

/// The error text when the model calls a tool that does not exist.
pub fn tool_not_found_message(name: &str) -> String {
    format!("Tool {name} not found")
}

/// Converts and checks `args` against `schema`. The error text lists every problem and
/// echoes the arguments as received.
pub fn validate_arguments(
    tool_name: &str,
    schema: &Value,
    args: &Value,
    coercion: Coercion,
) -> Result<Value, String> {
    let mut value = args.clone();
    if coercion == Coercion::TypeBox && value.is_object() {
        // TypeBox converts in place and pi ignores its return value, so only an object at
        // the root (which it mutates) is affected.
        value = convert::convert(schema, value);
    }
    value = coerce::coerce(schema, value);
    let mut errors = Vec::new();
    collect_errors(schema, &value, "", &mut errors);
    if errors.is_empty() {
        return Ok(value);
    }
    let listed: Vec<String> = errors
        .iter()
        .map(|e| format!("  - {}: {}", e.display_path(), e.message))
        .collect();
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{}",
        listed.join("\n"),
        json_stringify_pretty(args)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn read_schema() -> Value {
        json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}}})
    }

    fn edit_schema() -> Value {
        json!({"type": "object", "required": ["path", "edits"], "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "additionalProperties": false}}},
            "additionalProperties": false})
    }

    fn check(schema: &Value, args: Value) -> Result<Value, String> {
        validate_arguments("t", schema, &args, Coercion::TypeBox)
    }

    #[test]
    fn lenient_conversions_match_pi() {
        let schema = read_schema();
        assert_eq!(check(&schema, json!({"path": 5})), Ok(json!({"path": "5"})));
        assert_eq!(
            check(&schema, json!({"path": "a", "offset": "10"})),
            Ok(json!({"path": "a", "offset": 10}))
        );
        assert_eq!(
            check(&schema, json!({"path": null})),
            Ok(json!({"path": "null"}))
        );
        assert_eq!(
            check(&schema, json!({"path": "a", "offset": null})),
            Ok(json!({"path": "a", "offset": 0}))
        );
        assert_eq!(
            check(&schema, json!({"path": "a", "limit": " 0x10 "})),
            Ok(json!({"path": "a", "limit": 16}))
        );
        assert_eq!(
            check(
                &edit_schema(),
                json!({"path": "a", "edits": {"oldText": "x", "newText": 2}})
            ),
            Ok(json!({"path": "a", "edits": [{"oldText": "x", "newText": "2"}]}))
        );
        let flags = json!({"type": "object", "properties": {"b": {"type": "boolean"}}});
        assert_eq!(check(&flags, json!({"b": "TRUE"})), Ok(json!({"b": true})));
        assert_eq!(check(&flags, json!({"b": 1})), Ok(json!({"b": true})));
    }

    #[test]
    fn missing_required_lists_all_and_points_at_first() {
        let schema = json!({"type": "object", "required": ["path", "content"], "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}}});
        insta::assert_snapshot!(check(&schema, json!({})).unwrap_err(), @r#"
        Validation failed for tool "t":
          - path: must have required properties path, content

        Received arguments:
        {}
        "#);
    }

    #[test]
    fn wrong_types_and_extra_properties_are_all_listed() {
        let err = check(
            &edit_schema(),
            json!({"path": "a", "foo": 1, "edits": [{"oldText": "x", "newText": "y", "z": 1}, 5, {"oldText": []}]}),
        )
        .unwrap_err();
        insta::assert_snapshot!(err, @r#"
        Validation failed for tool "t":
          - foo: schema is false
          - root: must not have additional properties
          - edits.0.z: schema is false
          - edits.0: must not have additional properties
          - edits.1: must be object
          - edits.2.newText: must have required properties newText
          - edits.2.oldText: must be string

        Received arguments:
        {
          "path": "a",
          "foo": 1,
          "edits": [
            {
              "oldText": "x",
              "newText": "y",
              "z": 1
            },
            5,
            {
              "oldText": []
            }
          ]
        }
        "#);
    }

    #[test]
    fn unconvertible_values_keep_their_error() {
        let err = check(&read_schema(), json!({"path": "a", "offset": "abc"})).unwrap_err();
        assert!(err.contains("  - offset: must be number\n"), "{err}");
        let err = check(&read_schema(), json!("str")).unwrap_err();
        assert!(err.contains("  - root: must be object\n"), "{err}");
    }

    #[test]
    fn plain_json_schema_tools_get_only_pi_ai_coercion() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "string"}, "n": {"type": "number"}, "e": {"type": "string", "enum": ["a", "b"]}}});
        let coerced = validate_arguments(
            "t",
            &schema,
            &json!({"s": null, "n": "7"}),
            Coercion::JsonSchema,
        );
        assert_eq!(coerced, Ok(json!({"s": "", "n": 7})));
        let err =
            validate_arguments("t", &schema, &json!({"e": "c"}), Coercion::JsonSchema).unwrap_err();
        assert!(
            err.contains("  - e: must be equal to one of the allowed values"),
            "{err}"
        );
    }

    #[test]
    fn bounds_and_unions_are_reported() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1},
            "u": {"anyOf": [{"type": "string"}, {"type": "boolean"}]}}});
        let err = validate_arguments(
            "t",
            &schema,
            &json!({"n": 0, "u": []}),
            Coercion::JsonSchema,
        )
        .unwrap_err();
        assert!(
            err.contains("  - n: must be >= 1\n  - u: must match a schema in anyOf"),
            "{err}"
        );
    }
}
