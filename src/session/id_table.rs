//! Entry ids as the tree index keeps them, and the table that finds an entry by its id.
//!
//! pi writes entry ids of 8 lowercase hex digits, so almost every id fits in 32 bits: the
//! index stores that number in the entry's node and never keeps the text. Anything else —
//! a full UUID (pi's fallback after 100 collisions), ids of old or hand-written files —
//! is kept as text in a side table and the node holds its position there. Both kinds
//! give back the exact text they were read from.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::session::entry::EntryId;
use crate::session::ids::IdHash;

/// An entry id in the index: the value of an 8-lowercase-hex-digit id, or the position
/// of any other id in [`IdTable`]'s text table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IdKey {
    Hex(u32),
    Other(u32),
}

/// The value of an id of exactly 8 lowercase hex digits (pi's shape); `None` for any
/// other text, which must keep its exact spelling.
pub(crate) fn hex_value(id: &str) -> Option<u32> {
    let bytes = id.as_bytes();
    if bytes.len() != 8 {
        return None;
    }
    bytes.iter().try_fold(0u32, |acc, &b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        Some((acc << 4) | u32::from(digit))
    })
}

/// The text of a hex id value: 8 lowercase hex digits.
pub(crate) fn hex_text(value: u32) -> String {
    format!("{value:08x}")
}

/// Finds nodes by id and keeps the text of ids that are not pi-shaped.
#[derive(Debug, Default)]
pub(crate) struct IdTable {
    /// The node of each hex id (with duplicates, the last one added).
    hex: HashMap<u32, u32, IdHash>,
    /// The node of each other id.
    other: HashMap<Box<str>, u32, IdHash>,
    /// The text of `IdKey::Other(n)`.
    other_text: Vec<Box<str>>,
}

impl IdTable {
    /// The same table with room for `nodes` hex ids (reserved once the count is known:
    /// growing it line by line costs several rehashes).
    pub fn with_hex_capacity(mut self, nodes: usize) -> Self {
        self.hex.reserve(nodes.saturating_sub(self.hex.len()));
        self
    }

    /// The key `id` is stored under (a non-hex id's text is kept from now on).
    pub fn key_for(&mut self, id: &str) -> IdKey {
        match hex_value(id) {
            Some(value) => IdKey::Hex(value),
            None => {
                self.other_text.push(Box::from(id));
                IdKey::Other(self.other_text.len() as u32 - 1)
            }
        }
    }

    /// Points `key` at `node`; returns the node it pointed at before.
    pub fn insert(&mut self, key: IdKey, node: u32) -> Option<u32> {
        match key {
            IdKey::Hex(value) => self.hex.insert(value, node),
            IdKey::Other(n) => {
                let text = self.other_text.get(n as usize).cloned().unwrap_or_default();
                self.other.insert(text, node)
            }
        }
    }

    /// The node an id points at.
    pub fn lookup(&self, id: &str) -> Option<u32> {
        match hex_value(id) {
            Some(value) => self.hex.get(&value).copied(),
            None => self.other.get(id).copied(),
        }
    }

    /// The node a key points at.
    pub fn lookup_key(&self, key: IdKey) -> Option<u32> {
        match key {
            IdKey::Hex(value) => self.hex.get(&value).copied(),
            IdKey::Other(n) => self.other.get(self.other_text.get(n as usize)?).copied(),
        }
    }

    /// The text of a key.
    pub fn text(&self, key: IdKey) -> Cow<'_, str> {
        match key {
            IdKey::Hex(value) => Cow::Owned(hex_text(value)),
            IdKey::Other(n) => Cow::Borrowed(self.other_text.get(n as usize).map_or("", |t| t)),
        }
    }

    /// The id of a key.
    pub fn entry_id(&self, key: IdKey) -> EntryId {
        EntryId(self.text(key).into_owned())
    }

    /// Whether `key` is the id `id`, without building its text.
    pub fn is(&self, key: IdKey, id: &str) -> bool {
        match key {
            IdKey::Hex(value) => hex_value(id) == Some(value),
            IdKey::Other(n) => self.other_text.get(n as usize).is_some_and(|t| &**t == id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_eight_lowercase_hex_digits_are_stored_as_numbers() {
        assert_eq!(hex_value("0000002a"), Some(42));
        assert_eq!(hex_value("ffffffff"), Some(u32::MAX));
        for other in [
            "FFFFFFFF",
            "0000002A",
            "abc",
            "0000002a0",
            "g0000000",
            "",
            "+000002a",
        ] {
            assert_eq!(hex_value(other), None, "{other}");
        }
        assert_eq!(hex_text(42), "0000002a");
    }

    #[test]
    fn every_id_reads_back_exactly_and_is_found_again() {
        let mut table = IdTable::default();
        let ids = [
            "00ab12ef",
            "AB12EF00",
            "a1b2c3d4-0000-4000-8000-000000000000",
            "1",
            "",
        ];
        let keys: Vec<IdKey> = ids.iter().map(|id| table.key_for(id)).collect();
        assert_eq!(keys[0], IdKey::Hex(0x00ab_12ef));
        assert!(matches!(keys[1], IdKey::Other(_)));
        for (node, (&id, &key)) in ids.iter().zip(&keys).enumerate() {
            assert_eq!(table.insert(key, node as u32), None);
            assert_eq!(table.text(key), id);
            assert!(table.is(key, id));
        }
        for (node, id) in ids.iter().enumerate() {
            assert_eq!(table.lookup(id), Some(node as u32), "{id}");
        }
        assert!(!table.is(keys[0], "00AB12EF"));
        assert_eq!(table.lookup("00AB12EF"), None);
        // A duplicate points the id at the later node and reports the earlier one.
        let again = table.key_for("00ab12ef");
        assert_eq!(table.insert(again, 9), Some(0));
        assert_eq!(table.lookup("00ab12ef"), Some(9));
    }
}
