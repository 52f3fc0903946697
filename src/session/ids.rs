//! Identifiers a session store hands out: session ids (UUIDv7, as pi 0.73 writes them)
//! and entry ids (8 lowercase hex characters, checked against the ids already in the
//! session: 100 tries, then a full UUID, exactly like pi).
//!
//! Ids are random in real use. A seeded source exists so tests and the synthetic-session
//! generator get the same ids on every run; it is never used for files a user keeps. The
//! module also holds the hash function of the id lookup tables.

use std::fmt;

use crate::session::entry::EntryId;

/// The id of a session (the header's `id`, also the tail of the file name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for SessionId {
    fn from(s: String) -> Self {
        SessionId(s)
    }
}

impl From<&str> for SessionId {
    fn from(s: &str) -> Self {
        SessionId(s.to_string())
    }
}

/// pi's message for a `--session-id` it refuses.
pub const INVALID_SESSION_ID: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

/// Whether `id` may name a session (`--session-id`): ASCII letters, digits, `.`, `_`
/// and `-`, starting and ending with a letter or digit.
pub fn is_valid_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Where new ids come from.
#[derive(Debug, Clone)]
pub(crate) enum IdSource {
    Random,
    /// splitmix64 state: reproducible ids for tests and synthetic sessions.
    Seeded(u64),
}

impl IdSource {
    /// A new entry id that `taken` does not report as used.
    pub(crate) fn entry_id(&mut self, taken: impl Fn(&str) -> bool) -> EntryId {
        for _ in 0..100 {
            let candidate = format!("{:08x}", self.next_u32());
            if !taken(&candidate) {
                return EntryId(candidate);
            }
        }
        // pi falls back to a whole UUID when 100 short ids collide.
        EntryId(self.uuid_v4())
    }

    /// A new session id: a UUIDv7 (time-ordered), like pi 0.73.
    pub(crate) fn session_id(&mut self) -> SessionId {
        match self {
            IdSource::Random => SessionId(uuid::Uuid::now_v7().hyphenated().to_string()),
            IdSource::Seeded(_) => {
                let bits = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
                SessionId(uuid::Uuid::from_u128(bits).hyphenated().to_string())
            }
        }
    }

    fn uuid_v4(&mut self) -> String {
        match self {
            IdSource::Random => uuid::Uuid::new_v4().hyphenated().to_string(),
            IdSource::Seeded(_) => {
                let bits = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
                uuid::Uuid::from_u128(bits).hyphenated().to_string()
            }
        }
    }

    fn next_u32(&mut self) -> u32 {
        match self {
            IdSource::Random => {
                let bytes = uuid::Uuid::new_v4().into_bytes();
                u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
            }
            IdSource::Seeded(_) => (self.next_u64() >> 32) as u32,
        }
    }

    fn next_u64(&mut self) -> u64 {
        match self {
            IdSource::Random => {
                let bytes = uuid::Uuid::new_v4().into_bytes();
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[..8]);
                u64::from_le_bytes(b)
            }
            IdSource::Seeded(state) => splitmix64(state),
        }
    }
}

/// A fast hasher for entry ids (FxHash). Ids come from the user's own files, so the
/// flooding resistance of the default SipHash buys nothing and costs a noticeable part of
/// opening a large session.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHash;

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl IdHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher::default()
    }
}

/// The splitmix64 generator: tiny, fast and good enough for ids and synthetic data.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_ids_are_eight_lowercase_hex_chars_and_avoid_taken_ids() {
        let mut ids = IdSource::Random;
        for _ in 0..100 {
            let id = ids.entry_id(|_| false);
            assert_eq!(id.as_str().len(), 8);
            assert!(
                id.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            );
        }
        let mut seeded = IdSource::Seeded(7);
        let first = seeded.clone().entry_id(|_| false);
        let second = seeded.entry_id(|id| id == first.as_str());
        assert_ne!(first, second);
    }

    #[test]
    fn falls_back_to_a_full_uuid_when_every_short_id_is_taken() {
        let id = IdSource::Random.entry_id(|_| true);
        assert_eq!(id.as_str().len(), 36);
    }

    #[test]
    fn session_ids_are_uuid_v7() {
        let id = IdSource::Random.session_id();
        let parsed = uuid::Uuid::parse_str(id.as_str()).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
    }
}

#[cfg(test)]
mod session_id_tests {
    use super::is_valid_session_id;

    #[test]
    fn session_ids_follow_pi_rules() {
        for ok in ["a", "my.sess-1", "A_b.C", "7"] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".a", "a b", "a/b", "ü", "a_"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }
}
