//! TypeBox's `Value.Convert` for plain JSON schemas: turn a value into the schema's type
//! where that is unambiguous (`"10"` → `10`, `1` → `true`, `5` → `"5"`, `null` → `0`,
//! an object → a one-element array), leaving everything else for the check to report.

use serde_json::{Map, Value};

use super::check::is_valid;
use crate::tools::js::{js_string_to_number, json_number_to_string, number_value};

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

pub(super) fn convert(schema: &Value, value: Value) -> Value {
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
