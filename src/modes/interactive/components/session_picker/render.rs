//! Drawing the session picker: pi's layout line for line (accent rules, a header with
//! the title on the left and scope / name filter / sort on the right, two hint lines, the
//! search box, one row per session), with every line cut to the width.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{MAX_VISIBLE, Mode, Scope, SessionPicker, format_age};
use crate::modes::interactive::components::{Ui, rule, styled_text};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::{
    line_width, sanitize, str_width, truncate_line, truncate_to_width,
};
use crate::modes::interactive::theme::ThemeToken;

/// Lines around the rows: blank, rule, blank, three header lines, blank, search box,
/// blank, then after the rows a position line, blank and rule.
const CHROME_LINES: usize = 12;

impl SessionPicker {
    /// The picker in at most `width` columns. `height` is the number of terminal rows it
    /// may use (0: no limit); fewer rows of sessions are shown to fit, never fewer than
    /// one.
    pub fn render(&self, width: usize, height: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        self.render_with_cursor(width, height, ui).0
    }

    /// [`SessionPicker::render`] plus where the terminal cursor belongs (column, row):
    /// in the search box or the rename field, for input methods.
    pub fn render_with_cursor(
        &self,
        width: usize,
        height: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Accent));
        let mut out = vec![Line::default(), border.clone(), Line::default()];
        let cursor;
        match &self.mode {
            Mode::Rename { input, .. } => {
                let bold = Style::default().add_modifier(Modifier::BOLD);
                out.extend(styled_text("Rename Session", bold, width, 1));
                out.push(Line::default());
                let (line, column) = input.render_with_cursor(width, true);
                cursor = Some((column, out.len()));
                out.push(line);
                out.push(Line::default());
                let hint = format!(
                    "{} to save · {} to cancel",
                    ui.key(Action::SelectConfirm),
                    ui.key(Action::SelectCancel)
                );
                out.extend(styled_text(&hint, ui.fg(ThemeToken::Muted), width, 1));
            }
            Mode::List | Mode::ConfirmDelete(_) => {
                out.extend(self.header_lines(width, ui));
                out.push(Line::default());
                let (line, column) = self.search_line(width, ui);
                cursor = Some((column, out.len()));
                out.push(line);
                out.push(Line::default());
                let budget = if height == 0 {
                    MAX_VISIBLE
                } else {
                    height.saturating_sub(CHROME_LINES).clamp(1, MAX_VISIBLE)
                };
                out.extend(self.row_lines(width, budget, ui));
            }
        }
        out.push(Line::default());
        out.push(border);
        let cursor = cursor.map(|(column, row)| {
            (
                u16::try_from(column).unwrap_or(u16::MAX),
                u16::try_from(row).unwrap_or(u16::MAX),
            )
        });
        (out, cursor)
    }

    fn header_lines(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let accent = ui.fg(ThemeToken::Accent);
        let title = match self.scope {
            Scope::Current => "Resume Session (Current Folder)",
            Scope::All => "Resume Session (All)",
        };
        let load = self.load(self.scope);
        let mut right: Vec<Span<'static>> = if !load.listed {
            let progress = match load.total {
                Some(total) => format!("{}/{total}", load.loaded),
                None => "...".into(),
            };
            vec![
                Span::styled("○ Current Folder | ", muted),
                Span::styled(format!("Loading {progress}"), accent),
            ]
        } else if self.scope == Scope::Current {
            vec![
                Span::styled("◉ Current Folder", accent),
                Span::styled(" | ○ All", muted),
            ]
        } else {
            vec![
                Span::styled("○ Current Folder | ", muted),
                Span::styled("◉ All", accent),
            ]
        };
        right.extend([
            Span::raw("  "),
            Span::styled("Name: ", muted),
            Span::styled(if self.named_only { "Named" } else { "All" }, accent),
            Span::raw("  "),
            Span::styled("Sort: ", muted),
            Span::styled(self.sort.label(), accent),
        ]);
        let right = truncate_line(Line::from(right), width, Span::raw(""));
        let right_width = line_width(&right);
        let available_left = width.saturating_sub(right_width + 1);
        let left = truncate_to_width(title, available_left, "").into_owned();
        let spacing = width.saturating_sub(str_width(&left) + right_width);
        let mut first = vec![
            Span::styled(left, Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(" ".repeat(spacing)),
        ];
        first.extend(right.spans);

        let ellipsis = || Span::raw("…");
        let (hint1, hint2) = if let Mode::ConfirmDelete(_) = self.mode {
            let text = format!(
                "Delete session? {} confirm · {} cancel",
                ui.key(Action::SelectConfirm),
                ui.key(Action::SelectCancel)
            );
            let error = ui.fg(ThemeToken::Error);
            (
                Line::from(Span::styled(
                    truncate_to_width(&text, width, "…").into_owned(),
                    error,
                )),
                Line::default(),
            )
        } else if let Some(status) = self.status.as_ref().filter(|s| s.until > self.now) {
            let style = ui.fg(if status.error {
                ThemeToken::Error
            } else {
                ThemeToken::Accent
            });
            (
                Line::from(Span::styled(
                    truncate_to_width(&status.text, width, "…").into_owned(),
                    style,
                )),
                Line::default(),
            )
        } else {
            let sep = || Span::styled(" · ", muted);
            let mut hint1 = ui.key_hint(Action::Tab, "scope");
            hint1.push(sep());
            hint1.push(Span::styled(
                r#"re:<pattern> regex · "phrase" exact"#,
                muted,
            ));
            let path_state = if self.show_path { "(on)" } else { "(off)" };
            let mut parts = vec![
                ui.key_hint(Action::SessionToggleSort, "sort"),
                ui.key_hint(Action::SessionToggleNamedFilter, "named"),
                ui.key_hint(Action::SessionDelete, "delete"),
                ui.key_hint(Action::SessionTogglePath, &format!("path {path_state}")),
            ];
            if self.can_rename {
                parts.push(ui.key_hint(Action::SessionRename, "rename"));
            }
            let mut hint2 = Vec::new();
            for (i, part) in parts.into_iter().enumerate() {
                if i > 0 {
                    hint2.push(sep());
                }
                hint2.extend(part);
            }
            (
                truncate_line(Line::from(hint1), width, ellipsis()),
                truncate_line(Line::from(hint2), width, ellipsis()),
            )
        };
        vec![Line::from(first), hint1, hint2]
    }

    /// The search box, with how much message text is still loading while a search runs.
    fn search_line(&self, width: usize, ui: &Ui<'_>) -> (Line<'static>, usize) {
        let pending = !self.finished && self.texts_loaded < self.entries.len();
        if pending && !self.parsed.is_empty() {
            let note = format!(
                "searching message text {}/{}",
                self.texts_loaded,
                self.entries.len()
            );
            let note_width = str_width(&note);
            if width >= note_width + 2 + 20 {
                let (input, column) = self.query.render_with_cursor(width - note_width - 2, true);
                let gap = width - line_width(&input) - note_width;
                let mut spans = input.spans;
                spans.push(Span::raw(" ".repeat(gap)));
                spans.push(Span::styled(note, ui.fg(ThemeToken::Dim)));
                return (Line::from(spans), column);
            }
        }
        self.query.render_with_cursor(width, true)
    }

    fn empty_text(&self, ui: &Ui<'_>) -> String {
        if let Some(error) = self.parsed.error() {
            return format!("  Invalid search: {error}");
        }
        if !self.load(self.scope).listed {
            return "  Loading sessions...".into();
        }
        let all = self.scope == Scope::All;
        if !self.parsed.is_empty() {
            // pi shows the "no sessions" texts here too, which reads as if the folder
            // were empty.
            return if all {
                "  No sessions match the search".into()
            } else {
                "  No sessions in current folder match the search. Press Tab to search all.".into()
            };
        }
        if self.named_only {
            let key = ui.key(Action::SessionToggleNamedFilter);
            if all {
                format!("  No named sessions found. Press {key} to show all.")
            } else {
                format!(
                    "  No named sessions in current folder. Press {key} to show all, or Tab to view all."
                )
            }
        } else if all {
            "  No sessions found".into()
        } else {
            "  No sessions in current folder. Press Tab to view all.".into()
        }
    }

    fn row_lines(&self, width: usize, max_visible: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        if self.rows.is_empty() {
            let text = truncate_to_width(&self.empty_text(ui), width, "…").into_owned();
            return vec![Line::from(Span::styled(text, ui.fg(ThemeToken::Muted)))];
        }
        let n = self.rows.len();
        let start = self
            .selected
            .saturating_sub(max_visible / 2)
            .min(n.saturating_sub(max_visible));
        let end = (start + max_visible).min(n);
        let mut out: Vec<Line<'static>> =
            (start..end).map(|i| self.row_line(i, width, ui)).collect();
        if start > 0 || end < n {
            let text = format!("  ({}/{})", self.selected + 1, n);
            out.push(Line::from(Span::styled(
                truncate_to_width(&text, width, "").into_owned(),
                ui.fg(ThemeToken::Muted),
            )));
        }
        out
    }

    fn row_line(&self, index: usize, width: usize, ui: &Ui<'_>) -> Line<'static> {
        let row = &self.rows[index];
        let info = &self.entries[row.entry].info;
        let selected = index == self.selected;
        let deleting = matches!(&self.mode, Mode::ConfirmDelete(p) if *p == info.path);
        let named = info.name.is_some();
        let text = one_line(info.name.as_deref().unwrap_or(&info.first_message));

        let mut right = format!(
            "{} {}",
            info.message_count,
            format_age(self.now, info.modified)
        );
        if self.scope == Scope::All && !info.cwd.is_empty() {
            right = format!("{} {right}", ui.short_path(&info.cwd));
        }
        if self.show_path {
            right = format!("{} {right}", ui.short_path(&info.path.to_string_lossy()));
        }
        let prefix_width = str_width(&row.prefix);
        let available = width.saturating_sub(2 + prefix_width + str_width(&right) + 2);
        let message = truncate_to_width(&text, available.max(10), "…").into_owned();

        let mut message_style = if deleting {
            ui.fg(ThemeToken::Error)
        } else if self.is_current(&info.path) {
            ui.fg(ThemeToken::Accent)
        } else if named {
            ui.fg(ThemeToken::Warning)
        } else {
            Style::default()
        };
        if selected {
            message_style = message_style.add_modifier(Modifier::BOLD);
        }
        let cursor = if selected {
            Span::styled("› ", ui.fg(ThemeToken::Accent))
        } else {
            Span::raw("  ")
        };
        let left_width = 2 + prefix_width + str_width(&message);
        let spacing = width.saturating_sub(left_width + str_width(&right)).max(1);
        let right_style = ui.fg(if deleting {
            ThemeToken::Error
        } else {
            ThemeToken::Dim
        });
        let mut spans = vec![
            cursor,
            Span::styled(row.prefix.clone(), ui.fg(ThemeToken::Dim)),
            Span::styled(message, message_style),
            Span::raw(" ".repeat(spacing)),
            Span::styled(right, right_style),
        ];
        if selected {
            let bg = ui.theme.bg(ThemeToken::SelectedBg);
            for span in &mut spans {
                span.style = bg.patch(span.style);
            }
        }
        truncate_line(Line::from(spans), width, Span::raw("..."))
    }
}

/// A name or first message on one line: control characters become spaces (pi), escape
/// sequences and invisible characters are dropped.
fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| {
            if c.is_control() && c != '\u{1b}' {
                ' '
            } else {
                c
            }
        })
        .collect();
    sanitize(&spaced).trim().to_string()
}
