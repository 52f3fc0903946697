//! pi 1.6's own JSON schemas (`schemas/*.schema.json` of the reference package) for
//! tests that check pi-rs against them: where the package is, and the small part of JSON
//! Schema they use (`type`, `const`, `enum`, `anyOf`, `$ref`, `minimum`/`maximum`,
//! `minItems`, `items`, `properties`, `patternProperties`, `required`,
//! `additionalProperties: false`, `pattern` on names) to tell a value valid and to make
//! valid and invalid sample values.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// The installed pi 1.6 package (`@earendil-works/pi-coding-agent`), or why not. It is
/// looked for where `tests/support/reference-pi.sh` installs the reference (its default
/// version, or the `1.6.0` folder beside it).
pub fn package() -> Result<PathBuf, String> {
    let _ = super::reference_pi::available();
    let modules = super::reference_pi::node_modules();
    let mut candidates = vec![modules.clone()];
    if let Some(base) = modules.parent().and_then(|v| v.parent()) {
        candidates.push(base.join("1.6.0/node_modules"));
    }
    candidates
        .into_iter()
        .map(|m| m.join("@earendil-works/pi-coding-agent"))
        .find(|p| p.join("schemas/settings.schema.json").is_file())
        .ok_or_else(|| "the pi 1.6 reference package is not installed".to_string())
}

/// One of the package's schemas, parsed.
pub fn load(name: &str) -> Result<Schema, String> {
    let path = package()?.join("schemas").join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let root = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(Schema { root })
}

pub struct Schema {
    pub root: Value,
}

/// A key of a schema: its dotted path, its schema, whether it is deprecated.
#[derive(Debug, Clone)]
pub struct Leaf {
    pub path: String,
    pub schema: Value,
    pub deprecated: bool,
}

impl Schema {
    /// `schema` with a `$ref` (to `#/$defs/…`) followed.
    pub fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.trim_start_matches("#/$defs/");
                &self.root["$defs"][name]
            }
            None => schema,
        }
    }

    /// Whether `value` is valid for `schema`.
    pub fn valid(&self, value: &Value, schema: &Value) -> bool {
        let schema = self.resolve(schema);
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            return branches.iter().any(|b| self.valid(value, b));
        }
        if let Some(c) = schema.get("const") {
            return value == c;
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            return options.contains(value);
        }
        let number_in_range = |n: f64| {
            schema["minimum"].as_f64().is_none_or(|min| n >= min)
                && schema["maximum"].as_f64().is_none_or(|max| n <= max)
        };
        match schema.get("type").and_then(Value::as_str) {
            Some("boolean") => value.is_boolean(),
            Some("string") => value.as_str().is_some_and(|s| {
                schema["pattern"]
                    .as_str()
                    .is_none_or(|p| p != "^[^/]+$" || !s.contains('/'))
            }),
            Some("number") => value.as_f64().is_some_and(number_in_range),
            Some("integer") => value
                .as_f64()
                .is_some_and(|n| n.fract() == 0.0 && number_in_range(n)),
            Some("array") => value.as_array().is_some_and(|items| {
                items.len() as u64 >= schema["minItems"].as_u64().unwrap_or(0)
                    && items.iter().all(|i| self.valid(i, &schema["items"]))
            }),
            Some("object") => {
                let Some(map) = value.as_object() else {
                    return false;
                };
                let properties = schema["properties"].as_object();
                let required_ok = schema["required"].as_array().is_none_or(|names| {
                    names
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| map.contains_key(n)))
                });
                let closed = schema["additionalProperties"] == json!(false);
                required_ok
                    && map
                        .iter()
                        .all(|(k, v)| match properties.and_then(|p| p.get(k)) {
                            Some(s) => self.valid(v, s),
                            None => match schema["patternProperties"].as_object() {
                                Some(patterns) => patterns.values().all(|s| self.valid(v, s)),
                                None => !closed,
                            },
                        })
            }
            _ => true,
        }
    }

    /// Values valid for `schema`: each `const`/`enum` value, both booleans, a few
    /// numbers in range, strings, lists and objects built from their parts.
    pub fn samples(&self, schema: &Value) -> Vec<Value> {
        let schema = self.resolve(schema);
        if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
            return branches.iter().flat_map(|b| self.samples(b)).collect();
        }
        if let Some(c) = schema.get("const") {
            return vec![c.clone()];
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            return options.clone();
        }
        let min = schema["minimum"].as_f64().unwrap_or(0.0);
        let max = schema["maximum"].as_f64().unwrap_or(1e6);
        match schema.get("type").and_then(Value::as_str) {
            Some("boolean") => vec![json!(true), json!(false)],
            Some("string") => vec![json!("sample-text")],
            Some("number") => [min, min + 2.5, (min + 1000.0).min(max)]
                .into_iter()
                .map(|n| json!(n))
                .collect(),
            Some("integer") => [min, (min + 7.0).min(max)]
                .into_iter()
                .map(|n| json!(n as i64))
                .collect(),
            Some("array") => {
                let items = self.samples(&schema["items"]);
                let mut out = vec![Value::Array(items)];
                if schema["minItems"].as_u64().unwrap_or(0) == 0 {
                    out.push(json!([]));
                }
                out
            }
            Some("object") => {
                let mut object = Map::new();
                if let Some(props) = schema["properties"].as_object() {
                    for (k, v) in props {
                        if let Some(first) = self.samples(v).into_iter().next() {
                            object.insert(k.clone(), first);
                        }
                    }
                }
                if let Some(patterns) = schema["patternProperties"].as_object() {
                    for v in patterns.values() {
                        for (i, sample) in self.samples(v).into_iter().enumerate() {
                            object.insert(format!("sample/key-{i}"), sample);
                        }
                    }
                }
                vec![Value::Object(object)]
            }
            _ => vec![json!(null)],
        }
    }

    /// A value that is not valid for `schema`.
    pub fn invalid(&self, schema: &Value) -> Value {
        [
            json!("§not-valid§"),
            json!(-1.5),
            json!(true),
            json!([1]),
            json!({"§": 1}),
        ]
        .into_iter()
        .find(|v| !self.valid(v, schema))
        .unwrap_or_else(|| panic!("every value is valid for {schema}"))
    }

    /// The keys of the root object: nested objects with `properties` are walked into
    /// (their own path is listed too, before their children).
    pub fn leaves(&self) -> Vec<Leaf> {
        let mut out = Vec::new();
        self.walk(&self.root, "", &mut out);
        out
    }

    fn walk(&self, schema: &Value, prefix: &str, out: &mut Vec<Leaf>) {
        let Some(props) = schema["properties"].as_object() else {
            return;
        };
        for (name, sub) in props {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let resolved = self.resolve(sub);
            out.push(Leaf {
                path: path.clone(),
                schema: resolved.clone(),
                deprecated: resolved["deprecated"] == json!(true),
            });
            if resolved["type"] == "object" && resolved["properties"].is_object() {
                self.walk(resolved, &path, out);
            }
        }
    }
}

/// Sets `value` at a dotted path of `doc`, making the objects on the way.
pub fn set_path(doc: &mut Map<String, Value>, path: &str, value: Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().unwrap();
    let mut current = doc;
    for part in parts {
        let entry = current.entry(part).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        current = entry.as_object_mut().unwrap();
    }
    current.insert(last.to_string(), value);
}
