//! Checking a value against a schema and describing each problem the way TypeBox does
//! (`must be number`, `must have required properties path`), in TypeBox's order.

use serde_json::{Map, Value};

use crate::tools::js::{js_number_to_string, json_number_to_string};

/// Whether `value` satisfies `schema` (no conversions).
pub fn is_valid(schema: &Value, value: &Value) -> bool {
    let mut errors = Vec::new();
    collect_errors(schema, value, "", &mut errors);
    errors.is_empty()
}

// ---------------------------------------------------------------------------------------

pub(super) struct SchemaError {
    /// JSON pointer of the offending value (`/edits/0`).
    instance_path: String,
    /// For `required`: the first missing property, appended to the displayed path.
    missing: Option<String>,
    pub(super) message: String,
}

impl SchemaError {
    pub(super) fn display_path(&self) -> String {
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

pub(super) fn schema_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn matches_type(value: &Value, type_name: &str) -> bool {
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
pub(super) fn collect_errors(
    schema: &Value,
    value: &Value,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
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
