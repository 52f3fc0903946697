//! The diff view `/tree` opens with Shift+D on an entry (`docs/checkpoints.md#diff`): the
//! files that differ between the working tree and what the agent left at that entry,
//! then their unified diffs, coloured with the theme's `toolDiff*` colours and scrolled
//! a page at a time. Lines are cut to the width, not wrapped.

use crossterm::event::{KeyEvent, KeyEventKind};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{Ui, rule, styled_text};
use crate::core::checkpoints::{FileDiff, FileStatus};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize_single_line, truncate_line};
use crate::modes::interactive::theme::ThemeToken;

/// What a key did in the diff view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffViewOutcome {
    /// Still open (maybe scrolled).
    Keep,
    /// Escape: back to the tree.
    Close,
}

/// One body row before styling.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    /// `path (status)` heading of a file.
    File(String),
    Added(String),
    Removed(String),
    Hunk(String),
    Context(String),
}

/// A scrollable diff of checkpointed files.
pub struct CheckpointDiffView {
    title: String,
    summary: Vec<String>,
    rows: Vec<Row>,
    scroll: usize,
    visible_rows: usize,
}

fn status_letter(status: FileStatus) -> &'static str {
    match status {
        FileStatus::Added => "A",
        FileStatus::Deleted => "D",
        FileStatus::Modified => "M",
        FileStatus::Binary => "B",
    }
}

impl CheckpointDiffView {
    /// The view of `files` under `title`, showing `visible_rows` diff lines at a time.
    pub fn new(title: &str, files: &[FileDiff], visible_rows: usize) -> CheckpointDiffView {
        let mut summary = Vec::new();
        let mut rows = Vec::new();
        for f in files {
            let (mut added, mut removed) = (0usize, 0usize);
            for line in f.diff.lines() {
                if line.starts_with('+') && !line.starts_with("+++") {
                    added += 1;
                } else if line.starts_with('-') && !line.starts_with("---") {
                    removed += 1;
                }
            }
            summary.push(format!(
                "{} {} +{added} -{removed}",
                status_letter(f.status),
                f.path
            ));
            rows.push(Row::File(format!("{} {}", status_letter(f.status), f.path)));
            for line in f.diff.lines() {
                let row = if line.starts_with("+++") || line.starts_with("---") {
                    continue;
                } else if line.starts_with('+') {
                    Row::Added(line.to_string())
                } else if line.starts_with('-') {
                    Row::Removed(line.to_string())
                } else if line.starts_with("@@") {
                    Row::Hunk(line.to_string())
                } else {
                    Row::Context(line.to_string())
                };
                rows.push(row);
            }
            rows.push(Row::Context(String::new()));
        }
        CheckpointDiffView {
            title: title.to_string(),
            summary,
            rows,
            scroll: 0,
            visible_rows: visible_rows.max(3),
        }
    }

    fn max_scroll(&self) -> usize {
        self.rows.len().saturating_sub(self.visible_rows)
    }

    /// Scrolls with the selection keys; Escape closes.
    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> DiffViewOutcome {
        if key.kind == KeyEventKind::Release {
            return DiffViewOutcome::Keep;
        }
        const ACTIONS: &[Action] = &[
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectPageUp,
            Action::SelectPageDown,
            Action::CursorLeft,
            Action::CursorRight,
            Action::SelectCancel,
        ];
        let page = self.visible_rows.saturating_sub(1).max(1);
        match keys.action_for(key, ACTIONS) {
            Some(Action::SelectUp) => self.scroll = self.scroll.saturating_sub(1),
            Some(Action::SelectDown) => self.scroll = (self.scroll + 1).min(self.max_scroll()),
            Some(Action::SelectPageUp | Action::CursorLeft) => {
                self.scroll = self.scroll.saturating_sub(page);
            }
            Some(Action::SelectPageDown | Action::CursorRight) => {
                self.scroll = (self.scroll + page).min(self.max_scroll());
            }
            Some(Action::SelectCancel) => return DiffViewOutcome::Close,
            _ => {}
        }
        DiffViewOutcome::Keep
    }

    /// Title, key help, the file list, the visible window of diff lines, the position.
    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let border = rule(width, ui.fg(ThemeToken::Border));
        let muted = ui.fg(ThemeToken::Muted);
        let fit =
            |spans: Vec<Span<'static>>| truncate_line(Line::from(spans), width, Span::raw("..."));
        let mut out = vec![Line::default(), border.clone()];
        out.extend(styled_text(
            &format!("  {}", self.title),
            Style::default().add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        out.push(fit(vec![Span::styled(
            format!(
                "  ↑/↓: scroll. ←/→ or {}/{}: page. {}: back to the tree",
                ui.key(Action::SelectPageUp),
                ui.key(Action::SelectPageDown),
                ui.key(Action::SelectCancel)
            ),
            muted,
        )]));
        out.push(border.clone());
        if self.summary.is_empty() {
            out.push(fit(vec![Span::styled(
                "  No file differs: the files are as the agent left them here.",
                muted,
            )]));
        }
        for s in &self.summary {
            out.push(fit(vec![Span::styled(
                format!("  {}", sanitize_single_line(s)),
                ui.fg(ThemeToken::Accent),
            )]));
        }
        if !self.rows.is_empty() {
            out.push(Line::default());
        }
        let added = ui.fg(ThemeToken::ToolDiffAdded);
        let removed = ui.fg(ThemeToken::ToolDiffRemoved);
        let context = ui.fg(ThemeToken::ToolDiffContext);
        let end = (self.scroll + self.visible_rows).min(self.rows.len());
        for row in &self.rows[self.scroll.min(end)..end] {
            let span = match row {
                Row::File(t) => Span::styled(
                    sanitize_single_line(t),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Row::Added(t) => Span::styled(sanitize_single_line(t), added),
                Row::Removed(t) => Span::styled(sanitize_single_line(t), removed),
                Row::Hunk(t) => Span::styled(sanitize_single_line(t), muted),
                Row::Context(t) => Span::styled(sanitize_single_line(t), context),
            };
            out.push(fit(vec![Span::raw("  "), span]));
        }
        if self.rows.len() > self.visible_rows {
            out.push(fit(vec![Span::styled(
                format!("  ({}-{}/{})", self.scroll + 1, end, self.rows.len()),
                muted,
            )]));
        }
        out.push(Line::default());
        out.push(border);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::plain;
    use crossterm::event::{KeyCode, KeyModifiers};

    fn files() -> Vec<FileDiff> {
        let body: String = (1..=30).map(|i| format!("+line {i}\n")).collect();
        vec![
            FileDiff {
                path: "a.txt".into(),
                status: FileStatus::Modified,
                diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            },
            FileDiff {
                path: "b.txt".into(),
                status: FileStatus::Added,
                diff: format!("--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1,30 @@\n{body}"),
            },
        ]
    }

    #[test]
    fn lists_files_then_scrolls_the_hunks_and_escape_closes() {
        let theme = crate::modes::interactive::test_support::theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&theme, &keys);
        let mut view = CheckpointDiffView::new("Files: now → here", &files(), 10);
        let text = plain(&view.render(60, &ui), 60);
        assert!(text.contains("M a.txt +1 -1"), "{text}");
        assert!(text.contains("A b.txt +30 -0"), "{text}");
        assert!(text.contains("-old") && text.contains("+new"), "{text}");
        assert!(text.contains("(1-10/38)"), "{text}");
        assert!(!text.contains("+line 9"), "{text}");
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(
            view.handle_key(&key(KeyCode::PageDown), &keys),
            DiffViewOutcome::Keep
        );
        let text = plain(&view.render(60, &ui), 60);
        assert!(text.contains("+line 9") && !text.contains("-old"), "{text}");
        for _ in 0..10 {
            view.handle_key(&key(KeyCode::PageDown), &keys);
        }
        let text = plain(&view.render(60, &ui), 60);
        assert!(
            text.contains("+line 30") && text.contains("(29-38/38)"),
            "{text}"
        );
        assert_eq!(
            view.handle_key(&key(KeyCode::Esc), &keys),
            DiffViewOutcome::Close
        );
    }
}
