//! Directory walking for `grep` and `find`: the ignore rules of the tools pi shells out to
//! (ripgrep for grep, fd for find), applied in-process with ripgrep's own `ignore` crate,
//! and a collector that keeps the first results in path order while the walk runs on all
//! cores in arbitrary order. Results are therefore the same on every run (pi's depend on
//! thread timing), and memory stays bounded by the result limit.
//!
//! One deliberate difference: `.git` is never entered. ripgrep and fd (as pi runs them,
//! with `--hidden`) do search it, but their output order is random, so its entries rarely
//! crowd out real results; sorted, `.git/…` would come first and fill the limit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::WalkBuilder;

/// Which tool's ignore rules a walk follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoreRules {
    /// ripgrep with `--hidden`: hidden files included, `.gitignore` only inside git
    /// repositories, `.ignore` and `.rgignore` everywhere.
    Ripgrep,
    /// fd with `--hidden --no-require-git`: hidden files included, `.gitignore`, `.ignore`
    /// and `.fdignore` apply everywhere.
    Fd,
}

/// A walker over `root` with `rules`, not following symlinks.
pub fn walker(root: &Path, rules: IgnoreRules) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .follow_links(false)
        .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git");
    match rules {
        IgnoreRules::Ripgrep => {
            builder
                .require_git(true)
                .add_custom_ignore_filename(".rgignore");
        }
        IgnoreRules::Fd => {
            builder
                .require_git(false)
                .add_custom_ignore_filename(".fdignore");
            if let Some(global) = fd_global_ignore_file() {
                builder.add_ignore(global);
            }
        }
    }
    builder
}

/// fd's user-wide ignore file (`$XDG_CONFIG_HOME/fd/ignore` or `~/.config/fd/ignore`).
fn fd_global_ignore_file() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".config")))?;
    let file = config.join("fd").join("ignore");
    file.is_file().then_some(file)
}

/// Keeps the results that come first in path order (component by component, the order a
/// sorted walk visits them) until their total weight reaches `limit`.
pub struct FirstInPathOrder<T> {
    limit: usize,
    state: Mutex<Collected<T>>,
}

struct Collected<T> {
    items: BTreeMap<PathBuf, (usize, T)>,
    total: usize,
}

impl<T> FirstInPathOrder<T> {
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            state: Mutex::new(Collected {
                items: BTreeMap::new(),
                total: 0,
            }),
        }
    }

    /// Whether a result at `path` can no longer make it into the kept set (so the caller
    /// can skip the work of producing it).
    pub fn is_past_cutoff(&self, path: &Path) -> bool {
        let Ok(state) = self.state.lock() else {
            return false;
        };
        state.total >= self.limit
            && state
                .items
                .last_key_value()
                .is_some_and(|(last, _)| path > last.as_path())
    }

    /// Adds a result of the given weight (e.g. the number of matches in a file).
    pub fn insert(&self, path: PathBuf, weight: usize, value: T) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.total += weight;
        if let Some((old_weight, _)) = state.items.insert(path, (weight, value)) {
            state.total -= old_weight;
        }
        while let Some((_, (last_weight, _))) = state.items.last_key_value() {
            let last_weight = *last_weight;
            if state.total - last_weight < self.limit {
                break;
            }
            state.items.pop_last();
            state.total -= last_weight;
        }
    }

    /// Takes the kept results out, in path order.
    pub fn take_sorted(&self) -> Vec<(PathBuf, T)> {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        state.total = 0;
        std::mem::take(&mut state.items)
            .into_iter()
            .map(|(path, (_, value))| (path, value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn keeps_first_results_in_component_order_regardless_of_arrival() {
        let collected = FirstInPathOrder::new(3);
        for (path, weight) in [("b/x", 1), ("a-c", 1), ("a/z", 2), ("c", 1), ("a/y", 1)] {
            collected.insert(PathBuf::from(path), weight, path.to_string());
        }
        let kept: Vec<String> = collected
            .take_sorted()
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        // "a/…" sorts before "a-c" component-wise, as a sorted directory walk visits it.
        assert_eq!(kept, ["a/y", "a/z"]);
    }

    #[test]
    fn cutoff_only_applies_once_the_limit_is_reached() {
        let collected = FirstInPathOrder::new(2);
        collected.insert(PathBuf::from("b"), 1, ());
        assert!(!collected.is_past_cutoff(Path::new("z")));
        collected.insert(PathBuf::from("c"), 1, ());
        assert!(collected.is_past_cutoff(Path::new("d")));
        assert!(!collected.is_past_cutoff(Path::new("a")));
    }
}
