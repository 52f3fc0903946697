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

use serde_json::{Map, Value};

use super::js::{
    js_number_to_string, js_string_to_number, js_trim, json_number_to_string,
    json_stringify_pretty, number_value,
};
use super::{Tool, ToolError};

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
        value = convert(schema, value);
    }
    value = coerce(schema, value);
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

/// Whether `value` satisfies `schema` (no conversions).
pub fn is_valid(schema: &Value, value: &Value) -> bool {
    let mut errors = Vec::new();
    collect_errors(schema, value, "", &mut errors);
    errors.is_empty()
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

struct SchemaError {
    /// JSON pointer of the offending value (`/edits/0`).
    instance_path: String,
    /// For `required`: the first missing property, appended to the displayed path.
    missing: Option<String>,
    message: String,
}

impl SchemaError {
    fn display_path(&self) -> String {
        let base = self
            .instance_path
            .strip_prefix('/')
            .unwrap_or(&self.instance_path)
            .replace('/', ".");
        match &self.missing {
            Some(key) if base.is_empty() => key.clone(),
            Some(key) => format!("{base}.{key}"),
            None if base.is_empty() => "root".to_string(),
            None => base,
        }
    }
}

fn push(errors: &mut Vec<SchemaError>, path: &str, message: String) {
    errors.push(SchemaError {
        instance_path: path.to_string(),
        missing: None,
        message,
    });
}

fn pointer_fragment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn schema_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_type(value: &Value, type_name: &str) -> bool {
    match type_name {
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

fn number_text(value: &Value) -> String {
    match value {
        Value::Number(n) => json_number_to_string(n),
        other => other.to_string(),
    }
}

/// Collects errors in TypeBox's order: type, then object keywords (required,
/// additionalProperties, properties), array keywords, string and number bounds, then
/// const/enum and the combinators.
fn collect_errors(schema: &Value, value: &Value, path: &str, errors: &mut Vec<SchemaError>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(errors, path, "schema is false".to_string()),
        Value::Object(map) => map,
        _ => return,
    };

    let types = schema_types(schema);
    if !types.is_empty() && !types.iter().any(|t| matches_type(value, t)) {
        let message = if types.len() == 1 {
            format!("must be {}", types[0])
        } else {
            format!("must be either {}", types.join(" or "))
        };
        push(errors, path, message);
    }

    if let Value::Object(object) = value {
        object_errors(schema, object, path, errors);
    }
    if let Value::Array(items) = value {
        array_errors(schema, items, path, errors);
    }
    if let Value::String(text) = value {
        string_errors(schema, text, path, errors);
    }
    if let Some(number) = value.as_f64() {
        number_errors(schema, number, path, errors);
    }

    if let Some(expected) = schema.get("const")
        && expected != value
    {
        push(errors, path, "must be equal to constant".to_string());
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        push(
            errors,
            path,
            "must be equal to one of the allowed values".to_string(),
        );
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            collect_errors(sub, value, path, errors);
        }
    }
    if let Some(Value::Array(any)) = schema.get("anyOf")
        && !any.iter().any(|sub| is_valid(sub, value))
    {
        push(errors, path, "must match a schema in anyOf".to_string());
    }
    if let Some(Value::Array(one)) = schema.get("oneOf")
        && one.iter().filter(|sub| is_valid(sub, value)).count() != 1
    {
        push(
            errors,
            path,
            "must match exactly one schema in oneOf".to_string(),
        );
    }
}

fn object_errors(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|key| !object.contains_key(*key))
            .collect();
        if let Some(first) = missing.first() {
            errors.push(SchemaError {
                instance_path: path.to_string(),
                missing: Some((*first).to_string()),
                message: format!("must have required properties {}", missing.join(", ")),
            });
        }
    }
    if let Some(additional) = schema.get("additionalProperties") {
        let mut rejected = false;
        for (key, item) in object {
            if properties.is_some_and(|p| p.contains_key(key)) {
                continue;
            }
            let item_path = format!("{path}/{}", pointer_fragment(key));
            let before = errors.len();
            collect_errors(additional, item, &item_path, errors);
            rejected |= errors.len() > before;
        }
        if rejected {
            push(
                errors,
                path,
                "must not have additional properties".to_string(),
            );
        }
    }
    if let Some(properties) = properties {
        for (key, sub) in properties {
            if let Some(item) = object.get(key) {
                let item_path = format!("{path}/{}", pointer_fragment(key));
                collect_errors(sub, item, &item_path, errors);
            }
        }
    }
    bound(
        schema,
        "minProperties",
        object.len(),
        path,
        errors,
        |limit| format!("must not have fewer than {limit} properties"),
    );
    bound(
        schema,
        "maxProperties",
        object.len(),
        path,
        errors,
        |limit| format!("must not have more than {limit} properties"),
    );
}

fn array_errors(
    schema: &Map<String, Value>,
    items: &[Value],
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    match schema.get("items") {
        Some(Value::Array(tuple)) => {
            for (index, (sub, item)) in tuple.iter().zip(items).enumerate() {
                collect_errors(sub, item, &format!("{path}/{index}"), errors);
            }
        }
        Some(sub @ (Value::Object(_) | Value::Bool(_))) => {
            for (index, item) in items.iter().enumerate() {
                collect_errors(sub, item, &format!("{path}/{index}"), errors);
            }
        }
        _ => {}
    }
    bound(schema, "minItems", items.len(), path, errors, |limit| {
        format!("must not have fewer than {limit} items")
    });
    bound(schema, "maxItems", items.len(), path, errors, |limit| {
        format!("must not have more than {limit} items")
    });
}

fn string_errors(
    schema: &Map<String, Value>,
    text: &str,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    // JSON Schema lengths count code points.
    let length = text.chars().count();
    bound(schema, "minLength", length, path, errors, |limit| {
        format!("must not have fewer than {limit} characters")
    });
    bound(schema, "maxLength", length, path, errors, |limit| {
        format!("must not have more than {limit} characters")
    });
    if let Some(Value::String(pattern)) = schema.get("pattern")
        && let Ok(regex) = regex::Regex::new(pattern)
        && !regex.is_match(text)
    {
        push(errors, path, format!("must match pattern \"{pattern}\""));
    }
}

/// `minX`/`maxX` keywords over a count; the keyword name says which direction fails.
fn bound(
    schema: &Map<String, Value>,
    keyword: &str,
    actual: usize,
    path: &str,
    errors: &mut Vec<SchemaError>,
    message: impl Fn(String) -> String,
) {
    let Some(limit) = schema.get(keyword).and_then(Value::as_f64) else {
        return;
    };
    let actual = actual as f64;
    let fails = if keyword.starts_with("min") {
        actual < limit
    } else {
        actual > limit
    };
    if fails {
        push(errors, path, message(js_number_to_string(limit)));
    }
}

fn number_errors(
    schema: &Map<String, Value>,
    number: f64,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    type Check = (&'static str, &'static str, fn(f64, f64) -> bool);
    let checks: [Check; 4] = [
        ("exclusiveMinimum", ">", |n, l| n > l),
        ("exclusiveMaximum", "<", |n, l| n < l),
        ("minimum", ">=", |n, l| n >= l),
        ("maximum", "<=", |n, l| n <= l),
    ];
    for (keyword, comparison, ok) in checks {
        if let Some(limit) = schema.get(keyword)
            && let Some(l) = limit.as_f64()
            && !ok(number, l)
        {
            push(
                errors,
                path,
                format!("must be {comparison} {}", number_text(limit)),
            );
        }
    }
    if let Some(divisor) = schema.get("multipleOf")
        && let Some(d) = divisor.as_f64()
        && d != 0.0
        && (number / d).fract() != 0.0
    {
        push(
            errors,
            path,
            format!("must be multiple of {}", number_text(divisor)),
        );
    }
}

// ---------------------------------------------------------------------------------------
// TypeBox conversion (`Value.Convert`)
// ---------------------------------------------------------------------------------------

/// The TypeBox kind a plain JSON schema corresponds to.
enum Kind<'a> {
    Array(&'a Value),
    Boolean,
    Integer,
    Null,
    Number,
    Object(&'a Map<String, Value>),
    String,
    Literal(&'a Value),
    Union(&'a [Value]),
    Other,
}

fn kind(schema: &Value) -> Kind<'_> {
    let Value::Object(map) = schema else {
        return Kind::Other;
    };
    if let Some(Value::Array(members)) = map.get("anyOf") {
        return Kind::Union(members);
    }
    if let Some(constant) = map.get("const") {
        return Kind::Literal(constant);
    }
    if let Some(Value::Array(members)) = map.get("enum") {
        return Kind::Union(members);
    }
    match map.get("type").and_then(Value::as_str) {
        Some("array") => Kind::Array(map.get("items").unwrap_or(&Value::Bool(true))),
        Some("boolean") => Kind::Boolean,
        Some("integer") => Kind::Integer,
        Some("null") => Kind::Null,
        Some("number") => Kind::Number,
        Some("object") => Kind::Object(map),
        Some("string") => Kind::String,
        _ => Kind::Other,
    }
}

fn convert(schema: &Value, value: Value) -> Value {
    match kind(schema) {
        Kind::Array(items) => {
            let list = match value {
                Value::Array(list) => list,
                other => vec![other],
            };
            Value::Array(list.into_iter().map(|v| convert(items, v)).collect())
        }
        Kind::Boolean => try_boolean(&value).map_or(value, Value::Bool),
        Kind::Integer => try_number(&value)
            .and_then(|n| number_value(n.trunc()))
            .unwrap_or(value),
        Kind::Number => try_number(&value).and_then(number_value).unwrap_or(value),
        Kind::Null => {
            if try_null(&value) {
                Value::Null
            } else {
                value
            }
        }
        Kind::String => try_string(&value).map_or(value, Value::String),
        Kind::Object(map) => convert_object(map, value),
        Kind::Literal(constant) => convert_literal(constant, value),
        Kind::Union(members) => {
            if members.iter().any(|m| literal_or_schema_valid(m, &value)) {
                return value;
            }
            members
                .iter()
                .map(|m| convert(&literal_schema(m), value.clone()))
                .find(|candidate| {
                    members
                        .iter()
                        .any(|m| literal_or_schema_valid(m, candidate))
                })
                .unwrap_or(value)
        }
        Kind::Other => value,
    }
}

/// `enum` members are bare values; `anyOf` members are schemas.
fn literal_schema(member: &Value) -> Value {
    if member.is_object() {
        member.clone()
    } else {
        serde_json::json!({ "const": member })
    }
}

fn literal_or_schema_valid(member: &Value, value: &Value) -> bool {
    if member.is_object() {
        is_valid(member, value)
    } else {
        member == value
    }
}

fn convert_object(schema: &Map<String, Value>, value: Value) -> Value {
    let Value::Object(mut object) = value else {
        return value;
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties {
        for (key, sub) in properties {
            if let Some(item) = object.get_mut(key) {
                *item = convert(sub, item.take());
            }
        }
    }
    if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
        for (key, item) in object.iter_mut() {
            if properties.is_some_and(|p| p.contains_key(key)) {
                continue;
            }
            *item = convert(additional, item.take());
        }
    }
    Value::Object(object)
}

fn convert_literal(constant: &Value, value: Value) -> Value {
    if *constant == value {
        return value;
    }
    let converted = match constant {
        Value::Bool(_) => try_boolean(&value).map(Value::Bool),
        Value::Number(_) => try_number(&value).and_then(number_value),
        Value::String(_) => try_string(&value).map(Value::String),
        _ => None,
    };
    match converted {
        Some(candidate) if candidate == *constant => candidate,
        _ => value,
    }
}

fn try_boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" | "0" => Some(false),
            "true" | "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn try_number(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64(),
        Value::Null => Some(0.0),
        Value::String(s) => {
            if let Some(n) = js_string_to_number(s).filter(|n| n.is_finite()) {
                return Some(n);
            }
            match s.to_lowercase().as_str() {
                "false" => Some(0.0),
                "true" => Some(1.0),
                _ => big_int_like(s),
            }
        }
        _ => None,
    }
}

/// TypeBox also reads `123n` (BigInt syntax) and keeps the integer part of a decimal.
fn big_int_like(s: &str) -> Option<f64> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    let body = s.strip_suffix('n')?;
    let digits = body.strip_prefix('-').unwrap_or(body);
    let canonical = digits == "0" || (!digits.starts_with('0') && !digits.is_empty());
    if !canonical || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    body.parse::<f64>().ok().filter(|n| n.abs() <= MAX_SAFE)
}

fn try_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => {
            let lower = s.to_lowercase();
            lower == "undefined" || lower == "null" || s.is_empty() || s == "0"
        }
        _ => false,
    }
}

fn try_string(value: &Value) -> Option<String> {
    match value {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(json_number_to_string(n)),
        Value::Null => Some("null".to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// pi-ai's JSON-schema coercion
// ---------------------------------------------------------------------------------------

fn coerce(schema: &Value, value: Value) -> Value {
    let Value::Object(schema) = schema else {
        return value;
    };
    let mut next = value;
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            next = coerce(sub, next);
        }
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = schema.get(combinator) {
            next = coerce_union(members, next);
        }
    }
    let types = schema_types(schema);
    let matches_member = types.len() > 1 && types.iter().any(|t| matches_type(&next, t));
    if !types.is_empty() && !matches_member {
        for t in &types {
            if let Some(candidate) = coerce_primitive(&next, t)
                && candidate != next
            {
                next = candidate;
                break;
            }
        }
    }
    if types.contains(&"object")
        && let Value::Object(object) = &mut next
    {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (key, sub) in properties {
                if let Some(item) = object.get_mut(key) {
                    *item = coerce(sub, item.take());
                }
            }
        }
        if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
            for (key, item) in object.iter_mut() {
                if !properties.is_some_and(|p| p.contains_key(key)) {
                    *item = coerce(additional, item.take());
                }
            }
        }
    }
    if types.contains(&"array")
        && let Value::Array(items) = &mut next
    {
        match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (item, sub) in items.iter_mut().zip(tuple) {
                    *item = coerce(sub, item.take());
                }
            }
            Some(sub @ Value::Object(_)) => {
                for item in items.iter_mut() {
                    *item = coerce(sub, item.take());
                }
            }
            _ => {}
        }
    }
    next
}

fn coerce_union(members: &[Value], value: Value) -> Value {
    for member in members {
        let candidate = coerce(member, value.clone());
        if member.is_object() && is_valid(member, &candidate) {
            return candidate;
        }
    }
    value
}

/// pi-ai's per-type primitive coercion; `None` when nothing applies.
fn coerce_primitive(value: &Value, type_name: &str) -> Option<Value> {
    match (type_name, value) {
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(i64::from(*b))),
        ("number", Value::String(s)) if !js_trim(s).is_empty() => js_string_to_number(s)
            .filter(|n| n.is_finite())
            .and_then(number_value),
        ("integer", Value::String(s)) if !js_trim(s).is_empty() => js_string_to_number(s)
            .filter(|n| n.is_finite() && n.fract() == 0.0)
            .and_then(number_value),
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("boolean", Value::String(s)) if s == "true" || s == "false" => {
            Some(Value::Bool(s == "true"))
        }
        ("boolean", Value::Number(n)) if n.as_f64() == Some(1.0) => Some(Value::Bool(true)),
        ("boolean", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Bool(false)),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("string", Value::Number(n)) => Some(Value::String(json_number_to_string(n))),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        _ => None,
    }
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
