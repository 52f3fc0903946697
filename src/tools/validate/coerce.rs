//! pi-ai's own coercion of tool arguments against a JSON schema, applied after TypeBox's
//! conversion for built-in tools and alone for tools with plain JSON schemas.

use serde_json::Value;

use super::check::{is_valid, matches_type, schema_types};
use crate::tools::js::{js_string_to_number, js_trim, json_number_to_string, number_value};

// ---------------------------------------------------------------------------------------

pub(super) fn coerce(schema: &Value, value: Value) -> Value {
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
