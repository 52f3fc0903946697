//! Upgrading session files written by older pi versions to format v3, exactly as pi
//! 0.73.1 does it (`migrateV1ToV2`, `migrateV2ToV3`):
//!
//! - v1 → v2: every entry gets a fresh 8-hex `id` and `parentId` = the previous entry's id
//!   (a linear chain); a compaction's `firstKeptEntryIndex` (an index into the file's
//!   parsed lines, the header being 0) becomes `firstKeptEntryId`. Old header fields
//!   (`provider`, `modelId`, `thinkingLevel`, `branchedFrom`) are kept.
//! - v2 → v3: message role `hookMessage` becomes `custom`.
//!
//! Work is done on `serde_json::Value`s with key order preserved, so new keys land at the
//! end of each object like pi's (`"version":3` last in the header) and unknown fields are
//! never dropped. Lines a migration does not touch are copied byte for byte; lines that
//! are not valid JSON are kept where they were (pi would drop them); blank lines go.
//! Writing the result back to disk is the caller's job (see `load`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::session::entry::CURRENT_SESSION_VERSION;
use crate::session::ids::IdSource;
use crate::session::store::split_lines;

enum Item<'a> {
    Parsed {
        value: Value,
        raw: &'a [u8],
        changed: bool,
    },
    Raw(&'a [u8]),
}

/// Migrates a whole file from `from_version` (1 or 2) to v3 and returns the new bytes.
pub(crate) fn migrate_to_current(buf: &[u8], from_version: u64, ids: &mut IdSource) -> Vec<u8> {
    let mut items: Vec<Item<'_>> = Vec::new();
    for line in split_lines(buf) {
        let raw = &buf[line.start..line.end];
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
        let parsed = serde_json::from_slice::<Value>(text)
            .or_else(|_| serde_json::from_str::<Value>(&String::from_utf8_lossy(text)));
        items.push(match parsed {
            Ok(value) => Item::Parsed {
                value,
                raw,
                changed: false,
            },
            Err(_) => Item::Raw(raw),
        });
    }
    if from_version < 2 {
        v1_to_v2(&mut items, ids);
    }
    if from_version < 3 {
        v2_to_v3(&mut items);
    }
    let mut out = Vec::with_capacity(buf.len() + buf.len() / 8);
    for item in &items {
        match item {
            Item::Parsed {
                value,
                changed: true,
                ..
            } => out.extend_from_slice(serde_json::to_string(value).unwrap_or_default().as_bytes()),
            Item::Parsed { raw, .. } | Item::Raw(raw) => out.extend_from_slice(raw),
        }
        out.push(b'\n');
    }
    out
}

fn is_type(map: &Map<String, Value>, kind: &str) -> bool {
    map.get("type").and_then(Value::as_str) == Some(kind)
}

fn v1_to_v2(items: &mut [Item<'_>], ids: &mut IdSource) {
    let mut taken: HashSet<String> = HashSet::new();
    // pi indexes `firstKeptEntryIndex` into the list of parsed lines: ids by that index.
    let mut assigned: Vec<Option<String>> = Vec::new();
    let mut prev: Option<String> = None;
    for item in items.iter_mut() {
        let Item::Parsed { value, changed, .. } = item else {
            continue;
        };
        let Value::Object(map) = value else {
            assigned.push(None);
            continue;
        };
        if is_type(map, "session") {
            map.insert("version".into(), Value::from(2));
            *changed = true;
            assigned.push(None);
            continue;
        }
        let id = ids.entry_id(|c| taken.contains(c)).0;
        taken.insert(id.clone());
        map.insert("id".into(), Value::from(id.clone()));
        map.insert(
            "parentId".into(),
            prev.clone().map_or(Value::Null, Value::from),
        );
        *changed = true;
        let own_position = assigned.len();
        assigned.push(Some(id.clone()));
        if is_type(map, "compaction")
            && let Some(index) = map.get("firstKeptEntryIndex").and_then(Value::as_f64)
        {
            let target = (index >= 0.0 && index.fract() == 0.0)
                .then_some(index as usize)
                .filter(|&i| i <= own_position)
                .and_then(|i| assigned.get(i).cloned().flatten());
            map.shift_remove("firstKeptEntryIndex");
            if let Some(target) = target {
                map.insert("firstKeptEntryId".into(), Value::from(target));
            }
        }
        prev = Some(id);
    }
}

fn v2_to_v3(items: &mut [Item<'_>]) {
    for item in items.iter_mut() {
        let Item::Parsed {
            value: Value::Object(map),
            changed,
            ..
        } = item
        else {
            continue;
        };
        if is_type(map, "session") {
            map.insert("version".into(), Value::from(CURRENT_SESSION_VERSION));
            *changed = true;
        } else if is_type(map, "message")
            && let Some(Value::Object(message)) = map.get_mut("message")
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".into(), Value::from("custom"));
            *changed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn migrate(text: &str, from: u64) -> Vec<Value> {
        let out = migrate_to_current(text.as_bytes(), from, &mut IdSource::Seeded(1));
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or(Value::String(format!("RAW {l}"))))
            .collect()
    }

    #[test]
    fn v1_gets_a_linear_chain_and_first_kept_index_becomes_an_id() {
        let lines = migrate(
            concat!(
                r#"{"type":"session","id":"s","timestamp":"t","cwd":"/p","provider":"mock"}"#,
                "\n",
                r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}"#,
                "\n",
                r#"{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
                "\n",
                "\n",
                r#"{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}"#,
                "\n",
            ),
            1,
        );
        let id = |i: usize| lines[i]["id"].as_str().unwrap().to_string();
        assert_eq!(lines[0]["version"], 3);
        assert_eq!(lines[0]["provider"], "mock");
        assert_eq!(lines[1]["parentId"], Value::Null);
        assert_eq!(lines[2]["parentId"], id(1));
        assert_eq!(lines[3]["parentId"], id(2));
        assert_eq!(lines[3]["firstKeptEntryId"], id(2));
        assert!(lines[3].get("firstKeptEntryIndex").is_none());
        let keys: Vec<_> = lines[3].as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "type",
                "timestamp",
                "summary",
                "tokensBefore",
                "id",
                "parentId",
                "firstKeptEntryId"
            ]
        );
    }

    #[test]
    fn malformed_lines_stay_in_place_and_untouched_lines_are_byte_identical() {
        let input = concat!(
            r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/p"}"#,
            "\n",
            r#"{ "type" : "model_change", "id":"a","parentId":null,"provider":"p","modelId":"m"}"#,
            "\n",
            "{not json\n",
            r#"{"type":"message","id":"b","parentId":"a","message":{"role":"hookMessage","customType":"x","content":"c","display":true}}"#,
            "\n",
        );
        let out = String::from_utf8(migrate_to_current(
            input.as_bytes(),
            2,
            &mut IdSource::Seeded(1),
        ))
        .unwrap();
        let lines: Vec<_> = out.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/p"}"#
        );
        assert_eq!(
            lines[1],
            r#"{ "type" : "model_change", "id":"a","parentId":null,"provider":"p","modelId":"m"}"#
        );
        assert_eq!(lines[2], "{not json");
        assert!(lines[3].contains(r#""role":"custom""#));
    }
}
