//! The settings edits of `pi config` (pi 0.73's config selector): switching one resource
//! on or off adds a `+path` / `-path` entry for it, replacing any earlier entry naming the
//! same path (`!`, `+`, `-` or plain).
//!
//! - a resource of the settings' folders or entries (`extensions`, `skills`, `prompts`,
//!   `themes` of the same settings file) gets the entry in that list, relative to the
//!   settings' base (`<cwd>/.pi` or the agent directory);
//! - a package resource gets it in the filter of its `packages` entry (a plain string
//!   entry becomes the object form), relative to the package's root.

use std::path::Path;

use serde_json::{Map, Value};

use super::ResourceKind;

/// `path` relative to `base` with `/` separators (pi's `relative`).
pub fn pattern_for(base: &Path, path: &Path) -> String {
    crate::core::resource_paths::relative(base, path)
}

/// `entries` (a settings list of `kind`) with the entry for `pattern` replaced by `+pattern`
/// (`enabled`) or `-pattern`.
pub fn toggle_entries(entries: Option<&Value>, pattern: &str, enabled: bool) -> Vec<Value> {
    let mut out: Vec<Value> = entries
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter(|v| {
                    v.as_str()
                        .is_none_or(|p| p.strip_prefix(['!', '+', '-']).unwrap_or(p) != pattern)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let sign = if enabled { '+' } else { '-' };
    out.push(Value::String(format!("{sign}{pattern}")));
    out
}

/// The `packages` list with the filter of the entry whose source is `source` switched for
/// `pattern`; `None` when no entry has that source (nothing to write, as in pi).
pub fn toggle_package(
    packages: Option<&Value>,
    source: &str,
    kind: ResourceKind,
    pattern: &str,
    enabled: bool,
) -> Option<Vec<Value>> {
    let mut list: Vec<Value> = packages.and_then(Value::as_array).cloned()?;
    let index = list.iter().position(|entry| {
        let s = match entry {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("source").and_then(Value::as_str),
            _ => None,
        };
        s == Some(source)
    })?;
    let mut object = match &list[index] {
        Value::Object(o) => o.clone(),
        _ => {
            let mut o = Map::new();
            o.insert("source".into(), Value::String(source.to_string()));
            o
        }
    };
    let updated = toggle_entries(object.get(kind.key()), pattern, enabled);
    object.insert(kind.key().into(), Value::Array(updated));
    list[index] = Value::Object(object);
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_replace_earlier_ones_for_the_same_path() {
        let current = json!(["!skills/a/SKILL.md", "other", "+skills/a/SKILL.md"]);
        assert_eq!(
            toggle_entries(Some(&current), "skills/a/SKILL.md", false),
            [json!("other"), json!("-skills/a/SKILL.md")]
        );
        assert_eq!(toggle_entries(None, "x.md", true), [json!("+x.md")]);
    }

    #[test]
    fn package_entries_take_the_object_form() {
        let packages = json!(["npm:a", {"source": "npm:b", "prompts": ["-p.md"]}]);
        let out =
            toggle_package(Some(&packages), "npm:a", ResourceKind::Themes, "themes/t.json", false)
                .unwrap();
        assert_eq!(
            out,
            [
                json!({"source": "npm:a", "themes": ["-themes/t.json"]}),
                json!({"source": "npm:b", "prompts": ["-p.md"]}),
            ]
        );
        let out =
            toggle_package(Some(&packages), "npm:b", ResourceKind::Prompts, "p.md", true).unwrap();
        assert_eq!(out[1], json!({"source": "npm:b", "prompts": ["+p.md"]}));
        assert!(toggle_package(Some(&packages), "npm:c", ResourceKind::Prompts, "p", true).is_none());
    }
}
