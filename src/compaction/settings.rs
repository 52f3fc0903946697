//! The `compaction` and `branchSummary` objects of `settings.json`, with pi's defaults.
//!
//! Only the data model lives here; finding and merging settings files is the settings
//! layer's job. Unknown keys are kept so that rewriting a settings file written by a newer
//! pi does not drop them.

use serde::{Deserialize, Serialize};

use crate::ai::message::Extra;

/// `settings.json` → `compaction`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionSettings {
    /// Automatic compaction (threshold and overflow). `/compact` works either way.
    pub enabled: bool,
    /// Tokens left free for the model's answer; also sizes the summary requests.
    pub reserve_tokens: u64,
    /// Roughly how many tokens of recent conversation survive a compaction verbatim.
    pub keep_recent_tokens: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
            extra: Extra::new(),
        }
    }
}

/// `settings.json` → `branchSummary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BranchSummarySettings {
    /// Subtracted from the model's context window to get the summarizer's input budget.
    pub reserve_tokens: u64,
    /// Navigate with `/tree` without asking whether to summarize the branch left behind.
    pub skip_prompt: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for BranchSummarySettings {
    fn default() -> Self {
        Self {
            reserve_tokens: 16384,
            skip_prompt: false,
            extra: Extra::new(),
        }
    }
}

/// Context window pi assumes for branch summaries when a model does not declare one.
pub const DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW: u64 = 128_000;

impl BranchSummarySettings {
    /// How many estimated tokens of the abandoned branch the summarizer may read:
    /// `contextWindow (128000 when unknown) - reserveTokens`. `0` means "no limit", which is
    /// also what pi does when the difference is not positive.
    pub fn token_budget(&self, context_window: u64) -> u64 {
        let window = if context_window == 0 {
            DEFAULT_BRANCH_SUMMARY_CONTEXT_WINDOW
        } else {
            context_window
        };
        window.saturating_sub(self.reserve_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_keys_take_pi_defaults_and_unknown_keys_survive() {
        let s: CompactionSettings =
            serde_json::from_str(r#"{"keepRecentTokens":100,"future":1}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"enabled":true,"reserveTokens":16384,"keepRecentTokens":100,"future":1}"#
        );
        let b: BranchSummarySettings = serde_json::from_str("{}").unwrap();
        assert_eq!(b, BranchSummarySettings::default());
        assert_eq!(
            serde_json::to_string(&b).unwrap(),
            r#"{"reserveTokens":16384,"skipPrompt":false}"#
        );
    }

    #[test]
    fn branch_budget_is_window_minus_reserve_with_pi_fallbacks() {
        let b = BranchSummarySettings::default();
        assert_eq!(b.token_budget(200_000), 200_000 - 16384);
        assert_eq!(b.token_budget(0), 128_000 - 16384);
        assert_eq!(b.token_budget(1000), 0, "not positive means unlimited");
    }
}
