//! Type-to-search: which entries contain every word of the query (case-insensitive, in
//! the entry's text or its label), as pi's tree search does.
//!
//! The searchable text of every entry is lower-cased once, into one buffer, the first
//! time a query is typed. Each further keystroke usually narrows the query (a word grows
//! or a word is added), so only the entries that matched before are checked again;
//! Backspace returns to a result remembered from when that query was typed.

use memchr::memmem::Finder;

use crate::ai::js::split_at_utf16;
use crate::session::outline::{EntryOutline, MESSAGE_TEXT_UNITS, MessageOutline};

/// A set of entries (by tree index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EntrySet {
    bits: Vec<u64>,
}

impl EntrySet {
    fn empty(n: usize) -> Self {
        EntrySet {
            bits: vec![0; n.div_ceil(64)],
        }
    }

    fn full(n: usize) -> Self {
        let mut set = EntrySet {
            bits: vec![u64::MAX; n.div_ceil(64)],
        };
        if !n.is_multiple_of(64)
            && let Some(last) = set.bits.last_mut()
        {
            *last = (1u64 << (n % 64)) - 1;
        }
        set
    }

    pub fn contains(&self, i: usize) -> bool {
        self.bits
            .get(i / 64)
            .is_some_and(|word| word & (1 << (i % 64)) != 0)
    }

    fn insert(&mut self, i: usize) {
        if let Some(word) = self.bits.get_mut(i / 64) {
            *word |= 1 << (i % 64);
        }
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                Some(w * 64 + bit)
            })
        })
    }
}

/// The lower-cased searchable text of every entry, without labels (labels can change
/// while the selector is open; they are checked separately).
#[derive(Debug, Clone)]
struct SearchText {
    text: String,
    /// `text[starts[i]..starts[i + 1]]` belongs to entry `i`.
    starts: Vec<u32>,
}

impl SearchText {
    fn build(outlines: &[EntryOutline]) -> Self {
        let mut text = String::with_capacity(outlines.len() * 96);
        let mut starts = Vec::with_capacity(outlines.len() + 1);
        let mut raw = String::new();
        for outline in outlines {
            starts.push(text.len() as u32);
            raw.clear();
            searchable_text(outline, &mut raw);
            if raw.is_ascii() {
                let start = text.len();
                text.push_str(&raw);
                text[start..].make_ascii_lowercase();
            } else {
                text.push_str(&raw.to_lowercase());
            }
        }
        starts.push(text.len() as u32);
        SearchText { text, starts }
    }

    fn of(&self, i: usize) -> &[u8] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.text.as_bytes()[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// The parts of pi's `getSearchableText` other than the label, space separated. Query
/// words never contain spaces, so a word is found in the joined text exactly when it is
/// found in one part.
fn searchable_text(outline: &EntryOutline, out: &mut String) {
    let mut part = |s: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(s);
    };
    match outline {
        EntryOutline::Message(m) => match m {
            MessageOutline::User { text } => {
                part("user");
                part(text);
            }
            MessageOutline::Assistant(a) => {
                part("assistant");
                part(&a.text);
            }
            MessageOutline::ToolResult { text, .. } => {
                part("toolResult");
                part(text);
            }
            MessageOutline::BashExecution { command } => {
                part("bashExecution");
                part(command);
            }
            MessageOutline::Other { role, text } => {
                part(role);
                part(text);
            }
        },
        EntryOutline::CustomMessage { custom_type, text } => {
            part(custom_type.as_deref().unwrap_or(""));
            part(split_at_utf16(text, MESSAGE_TEXT_UNITS).0);
        }
        EntryOutline::Compaction { .. } => part("compaction"),
        EntryOutline::BranchSummary { summary } => {
            part("branch summary");
            part(summary);
        }
        EntryOutline::SessionInfo { name } => {
            part("title");
            if let Some(name) = name.as_deref().filter(|n| !n.is_empty()) {
                part(name);
            }
        }
        EntryOutline::ModelChange { model_id } => {
            part("model");
            part(model_id.as_deref().unwrap_or(""));
        }
        EntryOutline::ThinkingLevelChange { level } => {
            part("thinking");
            part(level.as_deref().unwrap_or(""));
        }
        EntryOutline::Custom { custom_type } => {
            part("custom");
            part(custom_type.as_deref().unwrap_or(""));
        }
        EntryOutline::Label { label } => {
            part("label");
            part(label.as_deref().unwrap_or(""));
        }
        EntryOutline::ContextEdit { target_id, omit } => {
            part("context edit");
            part(if *omit { "omit" } else { "replace" });
            part(target_id.as_deref().unwrap_or(""));
        }
        EntryOutline::Other => {}
    }
}

/// The query split into lower-case words.
pub(super) fn query_words(query: &str) -> Vec<String> {
    query
        .to_lowercase()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Search state kept while the selector is open.
#[derive(Debug, Clone, Default)]
pub(super) struct Search {
    text: Option<SearchText>,
    /// Results of the queries typed so far (each narrower than the one before).
    history: Vec<(Vec<String>, EntrySet)>,
}

impl Search {
    /// Entries containing every word, in their text or (lower-cased) label.
    pub fn matches(
        &mut self,
        words: &[String],
        outlines: &[EntryOutline],
        label: impl Fn(usize) -> Option<String>,
    ) -> &EntrySet {
        let n = outlines.len();
        let text = self.text.get_or_insert_with(|| SearchText::build(outlines));
        if let Some(at) = self.history.iter().rposition(|(w, _)| w == words) {
            self.history.truncate(at + 1);
        } else {
            // The latest remembered result this query narrows down, if any.
            let base = self
                .history
                .iter()
                .rposition(|(old, _)| old.iter().all(|o| words.iter().any(|w| w.contains(o))));
            self.history.truncate(base.map_or(0, |b| b + 1));
            let full = EntrySet::full(n);
            let candidates = base.map_or(&full, |b| &self.history[b].1);
            let finders: Vec<Finder<'_>> = words.iter().map(Finder::new).collect();
            let mut found = EntrySet::empty(n);
            for i in candidates.iter() {
                let body = text.of(i);
                let label = label(i);
                let hit = finders.iter().zip(words).all(|(finder, word)| {
                    finder.find(body).is_some()
                        || label.as_deref().is_some_and(|l| l.contains(word.as_str()))
                });
                if hit {
                    found.insert(i);
                }
            }
            self.history.push((words.to_vec(), found));
        }
        // Never empty here: the query was either found or just pushed.
        let last = self.history.len().saturating_sub(1);
        &self.history[last].1
    }

    /// Forgets remembered results (a label changed, so they may be stale).
    pub fn forget_results(&mut self) {
        self.history.clear();
    }
}
