//! Drawing the selector: the title, key help and search line, the visible window of rows
//! with their tree drawing, and the position line. Only the rows on screen are formatted.

use chrono::Local;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::row::{content_spans, format_label_time, with_selection};
use super::view::NONE;
use super::{CALL_SEARCH_DEPTH, TreeSelector};
use crate::modes::interactive::components::{Ui, rule, styled_text};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::{sanitize_single_line, truncate_line};
use crate::modes::interactive::theme::ThemeToken;
use crate::session::outline::{EntryOutline, MessageOutline, ToolCallOutline};

impl TreeSelector {
    /// The whole selector: title, key help, search line, the list and its position.
    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let mut out = self.header(width, ui);
        out.extend(self.list(width, ui));
        out.push(Line::default());
        out.push(rule(width, ui.fg(ThemeToken::Border)));
        out
    }

    /// The selector while the app asks for a label: the list is replaced by the prompt
    /// and `input` (the app's one-line input, rendered `width - 2` wide), as in pi.
    pub fn render_label_prompt(
        &self,
        width: usize,
        ui: &Ui<'_>,
        input: &[Line<'static>],
    ) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = self.header(width, ui);
        out.push(fit(
            vec![Span::styled("  Label (empty to remove):", muted)],
            width,
        ));
        for line in input {
            let mut spans = vec![Span::raw("  ")];
            spans.extend(line.spans.iter().cloned());
            out.push(fit(spans, width));
        }
        let mut hint = vec![Span::raw("  ")];
        hint.extend(ui.key_hint(Action::SelectConfirm, "save"));
        hint.push(Span::raw("  "));
        hint.extend(ui.key_hint(Action::SelectCancel, "cancel"));
        out.push(fit(hint, width));
        out.push(Line::default());
        out.push(rule(width, ui.fg(ThemeToken::Border)));
        out
    }

    fn header(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let border = rule(width, ui.fg(ThemeToken::Border));
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = vec![Line::default(), border.clone()];
        out.extend(styled_text(
            "  Session Tree",
            Style::default().add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        let filters = [
            Action::TreeFilterDefault,
            Action::TreeFilterNoTools,
            Action::TreeFilterUserOnly,
            Action::TreeFilterLabeledOnly,
            Action::TreeFilterAll,
        ]
        .map(|a| ui.key(a))
        .join("/");
        let help = format!(
            "  ↑/↓: move. ←/→: page. ^←/^→ or Alt+←/Alt+→: fold/branch. {}: label. {filters}: filters ({}/{} cycle). {}: label time. shift+d: files diff (shift+m: mark to compare)",
            ui.key(Action::TreeEditLabel),
            ui.key(Action::TreeFilterCycleForward),
            ui.key(Action::TreeFilterCycleBackward),
            ui.key(Action::TreeToggleLabelTimestamp),
        );
        out.push(fit(vec![Span::styled(help, muted)], width));
        let mut search = vec![Span::raw("  "), Span::styled("Type to search:", muted)];
        if !self.query.is_empty() {
            let query = sanitize_single_line(&self.query);
            search.push(Span::raw(" "));
            search.push(Span::styled(query, ui.fg(ThemeToken::Accent)));
        }
        out.push(fit(search, width));
        out.push(border);
        out.push(Line::default());
        out
    }

    fn status(&self) -> String {
        let times = if self.label_times {
            " [+label time]"
        } else {
            ""
        };
        format!("{}{times}", self.filter.status())
    }

    pub(super) fn list(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let len = self.view.len();
        if len == 0 {
            return vec![
                fit(vec![Span::styled("  No entries found", muted)], width),
                fit(
                    vec![Span::styled(format!("  (0/0){}", self.status()), muted)],
                    width,
                ),
            ];
        }
        let rows = self.visible_rows;
        let start = self
            .selected
            .saturating_sub(rows / 2)
            .min(len.saturating_sub(rows));
        let end = (start + rows).min(len);
        let mut out: Vec<Line<'static>> = (start..end).map(|r| self.row(r, width, ui)).collect();
        out.push(fit(
            vec![Span::styled(
                format!("  ({}/{len}){}", self.selected + 1, self.status()),
                muted,
            )],
            width,
        ));
        out
    }

    fn row(&self, r: usize, width: usize, ui: &Ui<'_>) -> Line<'static> {
        let i = self.view.rows[r];
        let shape = self.view.shapes[r];
        let selected = r == self.selected;
        let folded = self.folded.contains(&i);
        let accent = ui.fg(ThemeToken::Accent);
        let mut spans = vec![if selected {
            Span::styled("› ", accent)
        } else {
            Span::raw("  ")
        }];
        // Indentation, rails and the connector (with the fold marker in its middle). A
        // session with thousands of nested forks indents rows thousands of levels; only
        // the levels that can reach the screen are drawn (the rest is cut anyway).
        let display = self.view.display_indent_of(shape.indent) as usize;
        let drawn = display.min(width / 3 + 1);
        let connector = shape.show_connector && !shape.virtual_root_child;
        let rails = self.view.rails(r);
        let mut rails = rails.iter().peekable();
        let mut prefix = String::with_capacity(drawn * 3);
        for level in 0..drawn {
            while rails.next_if(|g| (g.position as usize) < level).is_some() {}
            if let Some(rail) = rails.next_if(|g| g.position as usize == level) {
                prefix.push_str(if rail.show { "│  " } else { "   " });
            } else if connector && level + 1 == display {
                prefix.push(if shape.is_last { '└' } else { '├' });
                prefix.push(if folded {
                    '⊞'
                } else if self.view.is_foldable(r as u32) {
                    '⊟'
                } else {
                    '─'
                });
                prefix.push(' ');
            } else {
                prefix.push_str("   ");
            }
        }
        if !prefix.is_empty() {
            spans.push(Span::styled(prefix, ui.fg(ThemeToken::Dim)));
        }
        if folded && !connector {
            spans.push(Span::styled("⊞ ", accent));
        }
        if self.flat.on_active_path[i as usize] {
            spans.push(Span::styled("• ", accent));
        }
        if let Some(label) = &self.labels[i as usize] {
            let text = sanitize_single_line(&label.text);
            spans.push(Span::styled(
                format!("[{text}] "),
                ui.fg(ThemeToken::Warning),
            ));
            if self.label_times
                && let Some(time) = label.timestamp.as_deref().and_then(|t| self.label_time(t))
            {
                spans.push(Span::styled(format!("{time} "), ui.fg(ThemeToken::Muted)));
            }
        }
        if self.changed_files(i) {
            spans.push(Span::styled("✎ ", ui.fg(ThemeToken::Success)));
        }
        if self.is_diff_mark(i) {
            spans.push(Span::styled("[diff from] ", accent));
        }
        let outline = &self.snap.outlines[i as usize];
        let mut content = content_spans(outline, self.answered_call(i, outline), ui);
        if selected {
            for span in &mut content {
                span.style = span.style.add_modifier(Modifier::BOLD);
            }
        }
        spans.extend(content);
        let bg = selected.then(|| ui.theme.bg(ThemeToken::SelectedBg));
        for span in &mut spans {
            span.style = with_selection(span.style, bg);
        }
        truncate_line(Line::from(spans), width, Span::raw("..."))
    }

    fn label_time(&self, timestamp: &str) -> Option<String> {
        match self.now {
            Some(now) => format_label_time(timestamp, &now),
            None => format_label_time(timestamp, &Local::now()),
        }
    }

    /// The tool call a tool result answers: the nearest assistant turn above it that
    /// made a call with its id. (pi looks ids up across the whole tree, which shows a
    /// call from another branch when a provider reuses ids.)
    fn answered_call(&self, i: u32, outline: &EntryOutline) -> Option<&ToolCallOutline> {
        let EntryOutline::Message(MessageOutline::ToolResult {
            tool_call_id: Some(id),
            ..
        }) = outline
        else {
            return None;
        };
        if id.is_empty() {
            return None;
        }
        let mut cur = self.flat.parent[i as usize];
        for _ in 0..CALL_SEARCH_DEPTH {
            if cur == NONE {
                return None;
            }
            if let EntryOutline::Message(MessageOutline::Assistant(a)) =
                &self.snap.outlines[cur as usize]
                && let Some(call) = a.tool_calls.iter().find(|c| &c.id == id)
            {
                return Some(call);
            }
            cur = self.flat.parent[cur as usize];
        }
        None
    }
}

/// One line cut to the width with pi's `...`.
fn fit(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    truncate_line(Line::from(spans), width, Span::raw("..."))
}
