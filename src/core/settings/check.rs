//! Checking a settings file's values against pi 1.6's shapes ([`super::keys`]). A value of
//! the wrong shape is taken out of the in-memory settings (its default applies) with one
//! warning naming the file, the key path and what was expected; its neighbours stay. An
//! entry of a list or a map that is wrong is dropped alone. The file itself is never
//! changed by this: a later write rewrites only the key it changes.

use std::path::Path;

use serde_json::{Map, Value};

use super::keys::{KEYS, Shape};
use super::problem::SettingsProblem;

/// Which settings file a map came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// `<agent dir>/settings.json`.
    User,
    /// `<project>/.pi/settings.json`.
    Project,
}

/// Largest integer pi accepts for token counts (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Checks `map` in place; returns a problem for each value taken out.
pub fn check(map: &mut Map<String, Value>, file: &Path, layer: Layer) -> Vec<SettingsProblem> {
    let mut problems = Vec::new();
    for info in KEYS {
        if lookup(map, info.path).is_none() {
            continue;
        }
        if layer == Layer::Project && info.global_only {
            remove(map, info.path);
            problems.push(SettingsProblem::GlobalOnly {
                path: file.to_path_buf(),
                key: info.path.to_string(),
            });
            continue;
        }
        let mut report = |key: String, expected: String, got: &Value| {
            problems.push(SettingsProblem::BadValue {
                path: file.to_path_buf(),
                key,
                expected,
                got: shown(got),
            });
        };
        let ok = match lookup_mut(map, info.path) {
            Some(value) => {
                let ok = fix(value, &info.shape, info.path, &mut report);
                if !ok {
                    report(info.path.to_string(), info.shape.expected(), value);
                }
                ok
            }
            None => true,
        };
        if !ok {
            remove(map, info.path);
        }
    }
    problems
}

/// A value as a warning shows it: compact JSON, cut at 60 characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    }
}

fn lookup_mut<'a>(map: &'a mut Map<String, Value>, path: &str) -> Option<&'a mut Value> {
    let mut parts = path.split('.');
    let mut current = map.get_mut(parts.next()?)?;
    for part in parts {
        current = current.as_object_mut()?.get_mut(part)?;
    }
    Some(current)
}

fn remove(map: &mut Map<String, Value>, path: &str) {
    match path.rsplit_once('.') {
        None => {
            map.remove(path);
        }
        Some((parent, last)) => {
            if let Some(Value::Object(parent)) = lookup_mut(map, parent) {
                parent.remove(last);
            }
        }
    }
}

fn is_number(value: &Value) -> bool {
    value.as_f64().is_some_and(f64::is_finite)
}

fn is_non_negative(value: &Value) -> bool {
    value.as_f64().is_some_and(|n| n.is_finite() && n >= 0.0)
}

fn is_count(value: &Value) -> bool {
    value
        .as_f64()
        .is_some_and(|n| (0.0..=MAX_SAFE_INTEGER).contains(&n) && n.fract() == 0.0)
}

fn is_word(value: &Value, words: &[&str]) -> bool {
    value.as_str().is_some_and(|s| words.contains(&s))
}

/// Whether `value` has `shape`. Lists and maps drop their wrong entries (reporting each
/// with `report`) and count as right; anything else wrong is for the caller to drop.
fn fix(
    value: &mut Value,
    shape: &Shape,
    path: &str,
    report: &mut impl FnMut(String, String, &Value),
) -> bool {
    match shape {
        Shape::Bool => value.is_boolean(),
        Shape::Number => is_number(value),
        Shape::NonNegative => is_non_negative(value),
        Shape::Count => is_count(value),
        Shape::Str => value.is_string(),
        Shape::OneOf(words) => is_word(value, words),
        Shape::BoolOr(words) => value.is_boolean() || is_word(value, words),
        Shape::NumberOr {
            non_negative,
            words,
        } => {
            let number = if *non_negative {
                is_non_negative(value)
            } else {
                is_number(value)
            };
            number || is_word(value, words)
        }
        Shape::Integers(allowed) => value.as_i64().is_some_and(|n| allowed.contains(&n)),
        Shape::FalseOr(words) => value == &Value::Bool(false) || is_word(value, words),
        Shape::Object => value.is_object(),
        Shape::Strings | Shape::NonEmptyStrings => {
            let Value::Array(items) = value else {
                return false;
            };
            keep_entries(
                items,
                path,
                report,
                |item, _, _| item.is_string(),
                "a string",
            );
            *shape == Shape::Strings || !items.is_empty()
        }
        Shape::MapOf(inner) => {
            let Value::Object(entries) = value else {
                return false;
            };
            entries.retain(|name, entry| {
                let entry_path = format!("{path}[{}]", Value::from(name.as_str()));
                let ok = fix(entry, inner, &entry_path, report);
                if !ok {
                    report(entry_path, inner.expected(), entry);
                }
                ok
            });
            true
        }
        Shape::TokenOverrides => {
            let Value::Object(entries) = value else {
                return false;
            };
            entries.retain(|model, entry| {
                let entry_path = format!("{path}[{}]", Value::from(model.as_str()));
                let Value::Object(fields) = entry else {
                    report(entry_path, "an object".into(), entry);
                    return false;
                };
                fields.retain(|field, v| {
                    let known = field == "reserveTokens" || field == "keepRecentTokens";
                    if known && !is_count(v) {
                        report(format!("{entry_path}.{field}"), Shape::Count.expected(), v);
                        return false;
                    }
                    true
                });
                true
            });
            true
        }
        Shape::Packages => {
            let Value::Array(items) = value else {
                return false;
            };
            keep_entries(
                items,
                path,
                report,
                package_ok,
                "a source string or an object with a \"source\" string",
            );
            true
        }
    }
}

/// Keeps the entries of a list `ok` accepts (it may fix an entry, reporting with the
/// entry's path); reports and drops the others.
fn keep_entries(
    items: &mut Vec<Value>,
    path: &str,
    report: &mut impl FnMut(String, String, &Value),
    mut ok: impl FnMut(&mut Value, &str, &mut dyn FnMut(String, String, &Value)) -> bool,
    expected: &str,
) {
    let mut index = 0;
    items.retain_mut(|item| {
        let entry_path = format!("{path}[{index}]");
        index += 1;
        let keep = ok(item, &entry_path, &mut |k, e, v| report(k, e, v));
        if !keep {
            report(entry_path, expected.to_string(), item);
        }
        keep
    });
}

/// A `packages` entry: a string, or an object with a `source` string whose filter lists
/// (`extensions`, `skills`, `prompts`, `themes`) are lists of strings and whose
/// `autoload` is a boolean; a wrong filter field is dropped alone.
fn package_ok(
    item: &mut Value,
    path: &str,
    report: &mut dyn FnMut(String, String, &Value),
) -> bool {
    let Value::Object(fields) = item else {
        return item.is_string();
    };
    if !fields.get("source").is_some_and(Value::is_string) {
        return false;
    }
    fields.retain(|field, v| {
        let shape = match field.as_str() {
            "autoload" => Shape::Bool,
            "extensions" | "skills" | "prompts" | "themes" => Shape::Strings,
            _ => return true,
        };
        let field_path = format!("{path}.{field}");
        let ok = fix(v, &shape, &field_path, &mut |k, e, got| report(k, e, got));
        if !ok {
            report(field_path, shape.expected(), v);
        }
        ok
    });
    true
}

/// The keys of `map` that pi-rs knows but does not act on, with values that ask for
/// something (dotted paths, in the table's order). `builtin:` entries of `extensions`
/// that turn a built-in extension on are named as `extensions builtin:<name>`.
pub fn unsupported(map: &Map<String, Value>) -> Vec<String> {
    let regular_tui = map.get("tuiMode").and_then(Value::as_str) == Some("regular");
    let mut named: Vec<String> = Vec::new();
    for info in KEYS {
        let Some(value) = lookup(map, info.path) else {
            continue;
        };
        // Fullscreen options do nothing in pi's regular TUI either.
        if regular_tui && info.path.starts_with("fullscreen") {
            continue;
        }
        if info.support.is_unsupported(&value.to_string()) && !named.iter().any(|n| n == info.path)
        {
            named.push(info.path.to_string());
        }
    }
    for entry in strings_of(map.get("extensions")) {
        let name = entry
            .strip_prefix("+builtin:")
            .or_else(|| entry.strip_prefix("builtin:"));
        if let Some(name) = name {
            let label = format!("extensions builtin:{name}");
            if !named.contains(&label) {
                named.push(label);
            }
        }
    }
    named
}

fn lookup<'a>(map: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut current = map.get(parts.next()?)?;
    for part in parts {
        current = current.as_object()?.get(part)?;
    }
    Some(current)
}

/// The strings of a JSON array (other values and a missing key give nothing).
pub(super) fn strings_of(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
