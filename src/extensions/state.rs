//! The session state pi's synchronous getters read (`ctx.model`, `ctx.getContextUsage()`,
//! `ctx.getSystemPrompt()`, `pi.getActiveTools()`, …), pushed to the extensions as
//! `state` messages.
//!
//! Asking pi-rs on every getter would need a round trip where pi's API has none, so the
//! session hands the host a *source* that fills a [`StateBuilder`] with named parts. The
//! host calls it before each request it sends (events that wait for an answer, commands,
//! tool calls, answers to `call`) and before a few notifications; a part whose JSON
//! changed gets a new version. Only extensions that register with `"state": true` get
//! it (the node host does). Right before any line goes to an extension, the parts it
//! has not seen yet are sent first as one `{"type":"state","state":{part: value, …}}`
//! line, so the extension reads the state the message was sent in, and an unchanged
//! state costs nothing on the wire.
//!
//! Big parts that rarely change (the model list) are given with a fingerprint: they are
//! only built and serialized again when the fingerprint changes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// What the session provides: fills the builder with the current state.
pub type StateSource = Arc<dyn Fn(&mut StateBuilder) + Send + Sync>;

struct Part {
    version: u64,
    fingerprint: Option<u64>,
    json: String,
}

/// Collects the parts of one snapshot.
pub struct StateBuilder {
    fingerprints: BTreeMap<String, Option<u64>>,
    parts: Vec<(String, Option<u64>, String)>,
}

impl StateBuilder {
    /// A part that is cheap to build.
    pub fn set(&mut self, key: &str, value: Value) {
        self.parts.push((key.to_string(), None, value.to_string()));
    }

    /// A part built by `build` only when `fingerprint` differs from the last one given.
    pub fn set_lazy(&mut self, key: &str, fingerprint: u64, build: impl FnOnce() -> Value) {
        if self.fingerprints.get(key) == Some(&Some(fingerprint)) {
            return;
        }
        self.parts
            .push((key.to_string(), Some(fingerprint), build().to_string()));
    }
}

/// The versioned state shared by all connections of a host.
#[derive(Default)]
pub(crate) struct StateSync {
    source: Mutex<Option<StateSource>>,
    parts: Mutex<BTreeMap<String, Part>>,
    version: AtomicU64,
    /// Some extension registered with `"state": true` (else reading it is skipped).
    wanted: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl StateSync {
    pub(crate) fn set_source(&self, source: Option<StateSource>) {
        *lock(&self.source) = source;
    }

    /// An extension asked for `state` messages.
    pub(crate) fn want(&self) {
        self.wanted.store(true, Ordering::SeqCst);
    }

    /// Asks the source for the current state and records what changed (nothing when no
    /// extension wants it). Must not be called while the session's state lock is held
    /// (the source takes it).
    pub(crate) fn refresh(&self) {
        if !self.wanted.load(Ordering::SeqCst) {
            return;
        }
        let Some(source) = lock(&self.source).clone() else {
            return;
        };
        let fingerprints = lock(&self.parts)
            .iter()
            .map(|(k, p)| (k.clone(), p.fingerprint))
            .collect();
        let mut builder = StateBuilder {
            fingerprints,
            parts: Vec::new(),
        };
        source(&mut builder);
        let mut parts = lock(&self.parts);
        for (key, fingerprint, json) in builder.parts {
            if parts.get(&key).is_some_and(|p| p.json == json) {
                continue;
            }
            let version = self.version.fetch_add(1, Ordering::SeqCst) + 1;
            parts.insert(
                key,
                Part {
                    version,
                    fingerprint,
                    json,
                },
            );
        }
    }

    /// The `state` line with the parts newer than `seen` (which is moved to the newest
    /// version), or `None` when there are none.
    pub(crate) fn unseen(&self, seen: &AtomicU64) -> Option<String> {
        let current = self.version.load(Ordering::SeqCst);
        let last = seen.load(Ordering::SeqCst);
        if current <= last {
            return None;
        }
        let parts = lock(&self.parts);
        let newest = parts.values().map(|p| p.version).max().unwrap_or(0);
        let fields: Vec<String> = parts
            .iter()
            .filter(|(_, p)| p.version > last)
            .map(|(k, p)| format!("{}:{}", Value::from(k.as_str()), p.json))
            .collect();
        seen.store(newest.max(last), Ordering::SeqCst);
        if fields.is_empty() {
            return None;
        }
        Some(format!(
            "{{\"type\":\"state\",\"state\":{{{}}}}}\n",
            fields.join(",")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_changed_parts_are_sent_and_each_once() {
        let sync = StateSync::default();
        let counter = Arc::new(AtomicU64::new(0));
        let c = counter.clone();
        sync.set_source(Some(Arc::new(move |b: &mut StateBuilder| {
            let n = c.load(Ordering::SeqCst);
            b.set("idle", json!(n == 0));
            b.set("name", json!("s"));
            b.set_lazy("models", n / 2, || json!([n / 2]));
        })));
        let seen = AtomicU64::new(0);
        sync.refresh();
        assert_eq!(sync.unseen(&seen), None, "nobody wants it yet");
        sync.want();
        sync.refresh();
        assert_eq!(
            sync.unseen(&seen).unwrap(),
            "{\"type\":\"state\",\"state\":{\"idle\":true,\"models\":[0],\"name\":\"s\"}}\n"
        );
        assert_eq!(sync.unseen(&seen), None);
        counter.store(1, Ordering::SeqCst);
        sync.refresh();
        // `models` keeps its fingerprint (1 / 2 == 0): not rebuilt, not resent.
        assert_eq!(
            sync.unseen(&seen).unwrap(),
            "{\"type\":\"state\",\"state\":{\"idle\":false}}\n"
        );
        counter.store(2, Ordering::SeqCst);
        sync.refresh();
        assert_eq!(
            sync.unseen(&seen).unwrap(),
            "{\"type\":\"state\",\"state\":{\"models\":[1]}}\n"
        );
        // A connection that saw nothing gets everything.
        let fresh = AtomicU64::new(0);
        assert!(sync.unseen(&fresh).unwrap().contains("\"name\":\"s\""));
    }
}
