//! `/changelog` and the "What's New" block after an update, from the CHANGELOG.md built
//! into the binary. Sections are found as pi finds them (a `## ` line whose first word is a
//! version, `## [1.2.3]` or `## 1.2.3 …`); the `## Unreleased` section is the changes of the
//! installed build, so it counts as this package's version.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, rule, styled_text};
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::theme::ThemeToken;

/// The changelog shipped with this build.
pub const CHANGELOG: &str = include_str!("../../../../CHANGELOG.md");

/// This build's version (the `## Unreleased` section belongs to it).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A version as (major, minor, patch).
pub type Version = (u64, u64, u64);

/// One `## …` section: its version and its text, heading included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogEntry {
    pub version: Version,
    pub content: String,
}

/// `1.2.3` (anything after the patch number ignored); missing parts count as 0, as in
/// pi's comparison of `lastChangelogVersion`.
pub fn parse_version(text: &str) -> Version {
    let mut parts = text
        .split('.')
        .map(|p| p.trim().parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// The version a `## ` heading names: `[1.2.3]`, `1.2.3`, or `Unreleased` (= `current`).
fn heading_version(heading: &str, current: Version) -> Option<Version> {
    let word = heading.split_whitespace().next()?;
    if word.eq_ignore_ascii_case("unreleased") || word.eq_ignore_ascii_case("[unreleased]") {
        return Some(current);
    }
    let word = word.trim_start_matches('[');
    let digits: Vec<&str> = word.splitn(3, '.').collect();
    if digits.len() < 3 {
        return None;
    }
    let number = |s: &str| {
        let n: String = s.chars().take_while(char::is_ascii_digit).collect();
        n.parse::<u64>().ok()
    };
    Some((number(digits[0])?, number(digits[1])?, number(digits[2])?))
}

/// The version sections of `text`, newest first (file order). Text before the first
/// section and sections whose heading names no version are left out.
pub fn parse_changelog(text: &str, current: Version) -> Vec<ChangelogEntry> {
    let mut entries = Vec::new();
    let mut open: Option<(Version, Vec<&str>)> = None;
    let mut close = |open: Option<(Version, Vec<&str>)>| {
        if let Some((version, lines)) = open {
            entries.push(ChangelogEntry {
                version,
                content: lines.join("\n").trim().to_string(),
            });
        }
    };
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            close(open.take());
            open = heading_version(heading, current).map(|v| (v, vec![line]));
        } else if let Some((_, lines)) = open.as_mut() {
            lines.push(line);
        }
    }
    close(open);
    entries
}

/// The built-in changelog's sections. Its list items are wrapped at about 90 columns in
/// the file; their continuation lines are joined so the terminal wraps them at its own
/// width (a single newline is a line break in the chat, as in pi).
pub fn entries() -> Vec<ChangelogEntry> {
    parse_changelog(&join_continuations(CHANGELOG), parse_version(VERSION))
}

/// Joins the indented continuation lines of list items to the item's first line.
fn join_continuations(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut in_item = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indented = line.len() > trimmed.len();
        let item_start = trimmed.starts_with("- ") || trimmed.starts_with("* ");
        match out.last_mut() {
            Some(last) if in_item && indented && !item_start && !trimmed.is_empty() => {
                last.push(' ');
                last.push_str(trimmed);
            }
            _ => {
                in_item = item_start;
                out.push(line.to_string());
            }
        }
    }
    out.join("\n")
}

/// What to show after starting, as pi decides it from `lastChangelogVersion`: nothing on
/// a first run (`last` unset; the caller records the version), the sections newer than
/// `last` otherwise. Returns the markdown to show, if any.
pub fn whats_new(entries: &[ChangelogEntry], last: Option<&str>) -> Option<String> {
    let last = parse_version(last?);
    let new: Vec<&str> = entries
        .iter()
        .filter(|e| e.version > last)
        .map(|e| e.content.as_str())
        .collect();
    (!new.is_empty()).then(|| new.join("\n\n"))
}

/// The `/changelog` block: every section, oldest first, so the newest ends up right above
/// the editor (pi's order).
pub fn full_markdown(entries: &[ChangelogEntry]) -> String {
    if entries.is_empty() {
        return "No changelog entries found.".to_string();
    }
    entries
        .iter()
        .rev()
        .map(|e| e.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// How the changelog block is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangelogView {
    /// `/changelog`: a blank row, a rule, "What's New", the markdown with a blank row
    /// above and below it, a rule.
    Full(String),
    /// After an update: a rule, "What's New", the new sections, a rule (a blank row
    /// before it when the chat is not empty).
    WhatsNew { markdown: String, spaced: bool },
    /// After an update with `collapseChangelog`: one line pointing to `/changelog`.
    Collapsed { version: String, spaced: bool },
}

impl Component for ChangelogView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let border = rule(width, ui.fg(ThemeToken::Border));
        let title = || {
            styled_text(
                "What's New",
                ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
                width,
                1,
            )
        };
        let markdown = |text: &str| {
            let inner = width.saturating_sub(2).max(1);
            render_markdown(text.trim(), inner, ui.theme, &MarkdownStyle::default())
                .into_iter()
                .map(|line| {
                    let mut spans = vec![Span::raw(" ")];
                    spans.extend(line.spans);
                    Line::from(spans)
                })
                .collect::<Vec<_>>()
        };
        let mut out = Vec::new();
        match self {
            ChangelogView::Full(text) => {
                out.push(Line::default());
                out.push(border.clone());
                out.extend(title());
                out.push(Line::default());
                out.push(Line::default());
                out.extend(markdown(text));
                out.push(Line::default());
            }
            ChangelogView::WhatsNew {
                markdown: text,
                spaced,
            } => {
                if *spaced {
                    out.push(Line::default());
                }
                out.push(border.clone());
                out.extend(title());
                out.push(Line::default());
                out.extend(markdown(text));
                out.push(Line::default());
            }
            ChangelogView::Collapsed { version, spaced } => {
                if *spaced {
                    out.push(Line::default());
                }
                out.push(border.clone());
                let text = ui.fg(ThemeToken::Text);
                out.push(Line::from(vec![
                    Span::raw(" "),
                    Span::styled(format!("Updated to v{version}. Use "), text),
                    Span::styled("/changelog", text.add_modifier(Modifier::BOLD)),
                    Span::styled(" to view full changelog.", text),
                ]));
            }
        }
        out.push(border);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    const SAMPLE: &str = "# Changelog\n\nIntro.\n\n## Unreleased\n\n### Fixed\n- newest fix\n\n## [0.2.0] - 2026-10-01\n\n- second\n\n## Notes\n\nnot a version\n\n## 0.1.5\n\n- first\n";

    #[test]
    fn sections_are_found_as_pi_finds_them_and_unreleased_is_this_version() {
        let entries = parse_changelog(SAMPLE, (0, 3, 0));
        let versions: Vec<Version> = entries.iter().map(|e| e.version).collect();
        assert_eq!(versions, vec![(0, 3, 0), (0, 2, 0), (0, 1, 5)]);
        assert_eq!(
            entries[0].content,
            "## Unreleased\n\n### Fixed\n- newest fix"
        );
        assert_eq!(entries[2].content, "## 0.1.5\n\n- first");
    }

    #[test]
    fn list_items_wrapped_in_the_file_are_one_line_each() {
        let text = "## 1.0.0\n\n- first item\n  continues here\n  and here\n- second\n    - nested\n\nA paragraph.\n";
        assert_eq!(
            join_continuations(text),
            "## 1.0.0\n\n- first item continues here and here\n- second\n    - nested\n\nA paragraph."
        );
    }

    #[test]
    fn whats_new_follows_last_changelog_version() {
        let entries = parse_changelog(SAMPLE, (0, 3, 0));
        // First run: nothing (the version is only recorded).
        assert_eq!(whats_new(&entries, None), None);
        // Up to date: nothing.
        assert_eq!(whats_new(&entries, Some("0.3.0")), None);
        // Updated from 0.1.5: the two newer sections, newest first.
        let shown = whats_new(&entries, Some("0.1.5")).unwrap();
        assert!(shown.starts_with("## Unreleased"), "{shown}");
        assert!(
            shown.contains("## [0.2.0]") && !shown.contains("first"),
            "{shown}"
        );
        // A short version string compares with the missing parts as 0.
        assert!(
            whats_new(&entries, Some("0.2"))
                .unwrap()
                .contains("newest fix")
        );
    }

    #[test]
    fn the_full_changelog_is_oldest_first_and_the_built_in_one_has_this_version() {
        let entries = parse_changelog(SAMPLE, (0, 3, 0));
        let text = full_markdown(&entries);
        assert!(text.find("first").unwrap() < text.find("newest fix").unwrap());
        assert_eq!(full_markdown(&[]), "No changelog entries found.");
        let built_in = super::entries();
        assert_eq!(built_in[0].version, parse_version(VERSION));
    }

    #[test]
    fn renders_like_pis_blocks() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let full = ChangelogView::Full("## 0.1.5\n\n- first".into());
        insta::assert_snapshot!(plain(&full.render(30, &ui), 30), @r"

        ──────────────────────────────
         What's New


         0.1.5

         - first

        ──────────────────────────────
        ");
        let collapsed = ChangelogView::Collapsed {
            version: "0.3.0".into(),
            spaced: false,
        };
        insta::assert_snapshot!(plain(&collapsed.render(60, &ui), 60), @r"
        ────────────────────────────────────────────────────────────
         Updated to v0.3.0. Use /changelog to view full changelog.
        ────────────────────────────────────────────────────────────
        ");
    }
}
