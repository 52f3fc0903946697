//! The footer under the editor (pi's three lines): where you are (cwd with `~`, git
//! branch, session name), what it cost (tokens ↑↓ R W, dollars, context use with
//! warning colours) with the model right-aligned, and extension statuses. Every line is
//! cut to the width, never wrapped.

use std::collections::BTreeMap;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{Component, Ui};
use crate::ai::js::js_to_fixed;
use crate::ai::message::AssistantMessage;
use crate::ai::model::ThinkingLevel;
use crate::modes::interactive::text::{align_left_right, sanitize_single_line, truncate_line};
use crate::modes::interactive::theme::ThemeToken;

/// Token and cost totals over every assistant message of the session file (all
/// branches, also compacted ones: pi's footer counts what was spent, not what is in
/// context).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
}

impl UsageTotals {
    pub fn add(&mut self, message: &AssistantMessage) {
        let u = &message.usage;
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.cost += u.cost.total;
    }

    pub fn from_messages<'a>(messages: impl IntoIterator<Item = &'a AssistantMessage>) -> Self {
        let mut totals = UsageTotals::default();
        for m in messages {
            totals.add(m);
        }
        totals
    }
}

/// The model shown on the right.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FooterModel {
    pub id: String,
    pub provider: String,
    /// Reasoning models also show the thinking level.
    pub reasoning: bool,
}

/// Everything the footer shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FooterData {
    pub cwd: String,
    pub git_branch: Option<String>,
    pub session_name: Option<String>,
    pub usage: UsageTotals,
    /// OAuth subscription: cost gets a ` (sub)` note.
    pub using_subscription: bool,
    /// Context used, in percent; `None` right after a compaction (shown as `?`).
    pub context_percent: Option<f64>,
    pub context_window: u64,
    pub auto_compact: bool,
    pub model: Option<FooterModel>,
    pub thinking_level: ThinkingLevel,
    /// With more than one provider configured the provider is shown too.
    pub provider_count: usize,
    /// Extension statuses by key (`ctx.ui.setStatus`).
    pub extension_statuses: BTreeMap<String, String>,
}

/// pi's compact token counts: 999, 1.2k, 12k, 1.2M, 12M.
pub fn format_tokens(count: u64) -> String {
    if count < 1_000 {
        count.to_string()
    } else if count < 10_000 {
        format!("{}k", js_to_fixed(count as f64 / 1_000.0, 1))
    } else if count < 1_000_000 {
        format!("{}k", (count as f64 / 1_000.0).round())
    } else if count < 10_000_000 {
        format!("{}M", js_to_fixed(count as f64 / 1_000_000.0, 1))
    } else {
        format!("{}M", (count as f64 / 1_000_000.0).round())
    }
}

impl FooterData {
    fn location(&self, ui: &Ui<'_>) -> String {
        let mut text = ui.short_path(&sanitize_single_line(&self.cwd));
        if let Some(branch) = self.git_branch.as_deref().filter(|b| !b.is_empty()) {
            text.push_str(&format!(" ({})", sanitize_single_line(branch)));
        }
        if let Some(name) = self.session_name.as_deref().filter(|n| !n.is_empty()) {
            text.push_str(&format!(" • {}", sanitize_single_line(name)));
        }
        text
    }

    fn stats(&self, ui: &Ui<'_>) -> Line<'static> {
        let dim = ui.fg(ThemeToken::Dim);
        let u = &self.usage;
        let mut parts: Vec<String> = Vec::new();
        for (value, mark) in [
            (u.input, "↑"),
            (u.output, "↓"),
            (u.cache_read, "R"),
            (u.cache_write, "W"),
        ] {
            if value > 0 {
                parts.push(format!("{mark}{}", format_tokens(value)));
            }
        }
        if u.cost != 0.0 || self.using_subscription {
            let sub = if self.using_subscription {
                " (sub)"
            } else {
                ""
            };
            parts.push(format!("${}{sub}", js_to_fixed(u.cost, 3)));
        }
        let auto = if self.auto_compact { " (auto)" } else { "" };
        let window = format_tokens(self.context_window);
        let (context, context_style) = match self.context_percent {
            Some(p) => {
                let style = if p > 90.0 {
                    ui.fg(ThemeToken::Error)
                } else if p > 70.0 {
                    ui.fg(ThemeToken::Warning)
                } else {
                    dim
                };
                (format!("{}%/{window}{auto}", js_to_fixed(p, 1)), style)
            }
            None => (format!("?/{window}{auto}"), dim),
        };
        let mut spans = Vec::new();
        if !parts.is_empty() {
            spans.push(Span::styled(format!("{} ", parts.join(" ")), dim));
        }
        spans.push(Span::styled(context, context_style));
        Line::from(spans)
    }

    fn model_text(&self, with_provider: bool) -> String {
        let Some(model) = &self.model else {
            return "no-model".to_string();
        };
        let mut text = sanitize_single_line(&model.id);
        if model.reasoning {
            match self.thinking_level {
                ThinkingLevel::Off => text.push_str(" • thinking off"),
                level => text.push_str(&format!(" • {}", level.as_str())),
            }
        }
        if with_provider {
            text = format!("({}) {text}", sanitize_single_line(&model.provider));
        }
        text
    }
}

const MIN_GAP: usize = 2;

impl Component for FooterData {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let dim = ui.fg(ThemeToken::Dim);
        let ellipsis = Span::styled("...", dim);
        let location = truncate_line(
            Line::from(Span::styled(self.location(ui), dim)),
            width,
            ellipsis.clone(),
        );

        let stats = truncate_line(self.stats(ui), width, Span::styled("...", dim));
        let stats_width = crate::modes::interactive::text::line_width(&stats);
        let mut right = self.model_text(false);
        if self.provider_count > 1 && self.model.is_some() {
            let with_provider = self.model_text(true);
            if stats_width + MIN_GAP + crate::modes::interactive::text::str_width(&with_provider)
                <= width
            {
                right = with_provider;
            }
        }
        let stats_line =
            align_left_right(stats, Line::from(Span::styled(right, dim)), width, MIN_GAP);

        let mut lines = vec![location, stats_line];
        if !self.extension_statuses.is_empty() {
            let joined = self
                .extension_statuses
                .values()
                .map(|s| sanitize_single_line(s))
                .collect::<Vec<_>>()
                .join(" ");
            lines.push(truncate_line(
                Line::from(Span::styled(joined, Style::default())),
                width,
                ellipsis,
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, styled, theme};
    use pretty_assertions::assert_eq;

    fn corpus_footer() -> FooterData {
        FooterData {
            cwd: "/home/user/proj-compact".into(),
            usage: UsageTotals {
                input: 15_000,
                output: 638,
                ..UsageTotals::default()
            },
            context_percent: Some(0.9),
            context_window: 200_000,
            auto_compact: true,
            model: Some(FooterModel {
                id: "mock-model".into(),
                provider: "mock".into(),
                reasoning: false,
            }),
            provider_count: 1,
            ..FooterData::default()
        }
    }

    fn show(data: &FooterData, width: usize) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        plain(
            &data.render(width, &Ui::new(&t, &keys).with_home(Some("/home/user"))),
            width,
        )
    }

    #[test]
    fn token_counts_use_pi_units() {
        let got: Vec<String> = [
            0, 999, 1_000, 1_234, 9_999, 12_345, 999_499, 1_234_567, 12_345_678,
        ]
        .into_iter()
        .map(format_tokens)
        .collect();
        assert_eq!(
            got,
            [
                "0", "999", "1.0k", "1.2k", "10.0k", "12k", "999k", "1.2M", "12M"
            ]
        );
        // Halves round up, as JavaScript's `toFixed` (Rust's `{:.1}` gives 1.2k, 1.2M).
        let ties: Vec<String> = [1_250, 2_450, 1_250_000]
            .into_iter()
            .map(format_tokens)
            .collect();
        assert_eq!(ties, ["1.3k", "2.5k", "1.3M"]);
    }

    #[test]
    fn matches_the_corpus_capture_at_120_columns() {
        let text = show(&corpus_footer(), 120);
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], "~/proj-compact");
        assert_eq!(
            lines[1],
            format!(
                "↑15k ↓638 0.9%/200k (auto){}mock-model",
                " ".repeat(120 - 26 - 10)
            )
        );
    }

    #[test]
    fn full_footer_with_branch_name_cost_thinking_and_statuses() {
        let mut data = corpus_footer();
        data.git_branch = Some("main".into());
        data.session_name = Some("Refactor 🇯🇵 日本".into());
        data.usage.cache_read = 2_500;
        data.usage.cache_write = 12_000_000;
        data.usage.cost = 0.12345;
        data.using_subscription = true;
        data.context_percent = Some(75.25);
        data.model = Some(FooterModel {
            id: "claude-sonnet-4".into(),
            provider: "anthropic".into(),
            reasoning: true,
        });
        data.thinking_level = ThinkingLevel::High;
        data.provider_count = 2;
        data.extension_statuses
            .insert("b-lint".into(), "lint: ok\n".into());
        data.extension_statuses
            .insert("a-tests".into(), "tests:\t3 failing".into());
        insta::assert_snapshot!(show(&data, 100), @r"
        ~/proj-compact (main) • Refactor 🇯🇵 日本
        ↑15k ↓638 R2.5k W12M $0.123 (sub) 75.3%/200k (auto)               (anthropic) claude-sonnet-4 • high
        tests: 3 failing lint: ok
        ");
        insta::assert_snapshot!(show(&data, 40), @r"
        ~/proj-compact (main) • Refactor 🇯🇵 日本
        ↑15k ↓638 R2.5k W12M $0.123 (sub) 75....
        tests: 3 failing lint: ok
        ");
        insta::assert_snapshot!(show(&data, 20), @r"
        ~/proj-compact (m...
        ↑15k ↓638 R2.5k W...
        tests: 3 failing ...
        ");
    }

    #[test]
    fn context_colour_follows_thresholds() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let mut data = corpus_footer();
        for (p, token) in [
            (50.0, ThemeToken::Dim),
            (70.5, ThemeToken::Warning),
            (91.0, ThemeToken::Error),
        ] {
            data.context_percent = Some(p);
            let line = &data.render(80, &ui)[1];
            let ctx = line
                .spans
                .iter()
                .find(|s| s.content.contains("%/"))
                .unwrap();
            assert_eq!(ctx.style, t.fg(token), "{}", styled(line));
        }
        data.context_percent = None;
        assert!(show(&data, 80).contains("?/200k (auto)"));
        data.model = None;
        data.auto_compact = false;
        assert!(show(&data, 80).ends_with("no-model"));
    }

    #[test]
    fn every_width_is_respected() {
        let mut data = corpus_footer();
        data.session_name = Some("🇺🇸🇯🇵🇩🇪 flags and 中文 everywhere".into());
        data.extension_statuses
            .insert("x".into(), "👨‍👩‍👧 status".repeat(10));
        for width in 1..130 {
            show(&data, width);
        }
    }
}
