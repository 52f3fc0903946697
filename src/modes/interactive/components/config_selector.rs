//! The `pi config` screen ("Resource Configuration", pi 0.73's config selector): the
//! resources of the configured packages and of the settings' folders and entries, grouped
//! by where they come from (packages first, user before project) and by kind, each with a
//! checkbox. Typing filters by name, kind or path; Space or Enter switches the selected
//! resource; Esc (or Ctrl+C) closes. Pure state and rendering: the caller writes the
//! settings edit for a switch (`core::packages::config::apply_toggle`) and then calls
//! [`ConfigSelector::set_enabled`].

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::Ui;
use super::line_input::LineInput;
use crate::core::packages::ResourceKind;
use crate::core::packages::config::ConfigResource;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{str_width, truncate_to_width};
use crate::modes::interactive::theme::ThemeToken;

/// Rows of the list shown at once (headings included).
const MAX_VISIBLE: usize = 15;

/// What a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOutcome {
    /// Keep the screen open (redraw).
    None,
    /// Switch the resource at this index of the list given to [`ConfigSelector::new`] to
    /// `enabled`.
    Toggle { index: usize, enabled: bool },
    /// Close the screen.
    Close,
}

/// A row of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Group(String),
    Kind(ResourceKind),
    /// An index into `resources`.
    Item(usize),
}

/// The state of the screen.
#[derive(Debug, Clone)]
pub struct ConfigSelector {
    resources: Vec<ConfigResource>,
    names: Vec<String>,
    rows: Vec<Row>,
    shown: Vec<Row>,
    selected: usize,
    search: LineInput,
}

fn kind_label(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Extensions => "Extensions",
        ResourceKind::Skills => "Skills",
        ResourceKind::Prompts => "Prompts",
        ResourceKind::Themes => "Themes",
    }
}

/// Case-insensitive name order with a stable tie-break (close to JS `localeCompare`).
fn name_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// A group's label, sort key and resource indices.
type Group = (String, (u8, u8, String), Vec<usize>);

/// The rows of all resources: groups in pi's order, kinds in pi's order, names sorted.
fn build_rows(resources: &[ConfigResource], names: &[String]) -> Vec<Row> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        let label = r.group_label();
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.2.push(i),
            None => groups.push((label, r.group_order(), vec![i])),
        }
    }
    groups.sort_by(|a, b| {
        let (ka, kb) = (&a.1, &b.1);
        (ka.0, ka.1)
            .cmp(&(kb.0, kb.1))
            .then_with(|| name_order(&ka.2, &kb.2))
    });
    let mut rows = Vec::new();
    for (label, _, items) in groups {
        rows.push(Row::Group(label));
        for kind in ResourceKind::ALL {
            let mut of_kind: Vec<usize> = items
                .iter()
                .copied()
                .filter(|&i| resources[i].kind == kind)
                .collect();
            if of_kind.is_empty() {
                continue;
            }
            of_kind.sort_by(|&a, &b| name_order(&names[a], &names[b]));
            rows.push(Row::Kind(kind));
            rows.extend(of_kind.into_iter().map(Row::Item));
        }
    }
    rows
}

impl ConfigSelector {
    pub fn new(resources: Vec<ConfigResource>) -> Self {
        let names: Vec<String> = resources.iter().map(|r| r.display_name()).collect();
        let rows = build_rows(&resources, &names);
        let mut selector = ConfigSelector {
            resources,
            names,
            shown: rows.clone(),
            rows,
            selected: 0,
            search: LineInput::new(),
        };
        selector.select_first_item();
        selector
    }

    /// The resources as given, with their current state.
    pub fn resources(&self) -> &[ConfigResource] {
        &self.resources
    }

    /// Records that the resource at `index` is now `enabled` (after the settings edit).
    pub fn set_enabled(&mut self, index: usize, enabled: bool) {
        if let Some(r) = self.resources.get_mut(index) {
            r.enabled = enabled;
        }
    }

    fn select_first_item(&mut self) {
        self.selected = self
            .shown
            .iter()
            .position(|r| matches!(r, Row::Item(_)))
            .unwrap_or(0);
    }

    /// The next item row from `from` in `step` direction, or `from` when there is none.
    fn next_item(&self, from: usize, up: bool) -> usize {
        let mut i = from;
        loop {
            let next = if up { i.checked_sub(1) } else { Some(i + 1) };
            match next {
                Some(n) if n < self.shown.len() => {
                    if matches!(self.shown[n], Row::Item(_)) {
                        return n;
                    }
                    i = n;
                }
                _ => return from,
            }
        }
    }

    /// Keeps the rows whose resource matches the filter, and their headings.
    fn filter(&mut self) {
        let query = self.search.value().trim().to_lowercase();
        if query.is_empty() {
            self.shown = self.rows.clone();
            self.select_first_item();
            return;
        }
        let matches = |i: usize| {
            let r = &self.resources[i];
            self.names[i].to_lowercase().contains(&query)
                || r.kind.key().contains(&query)
                || r.path.to_string_lossy().to_lowercase().contains(&query)
        };
        let mut shown = Vec::new();
        let mut group: Option<&Row> = None;
        let mut kind: Option<&Row> = None;
        for row in &self.rows {
            match row {
                Row::Group(_) => {
                    group = Some(row);
                    kind = None;
                }
                Row::Kind(_) => kind = Some(row),
                Row::Item(i) if matches(*i) => {
                    if let Some(g) = group.take() {
                        shown.push(g.clone());
                    }
                    if let Some(k) = kind.take() {
                        shown.push(k.clone());
                    }
                    shown.push(row.clone());
                }
                Row::Item(_) => {}
            }
        }
        self.shown = shown;
        self.select_first_item();
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> ConfigOutcome {
        if key.kind == KeyEventKind::Release {
            return ConfigOutcome::None;
        }
        let actions = [
            Action::SelectUp,
            Action::SelectDown,
            Action::SelectPageUp,
            Action::SelectPageDown,
            Action::SelectCancel,
            Action::SelectConfirm,
        ];
        let space =
            key.code == KeyCode::Char(' ') && (key.modifiers - KeyModifiers::SHIFT).is_empty();
        match keys.action_for(key, &actions) {
            Some(Action::SelectUp) => self.selected = self.next_item(self.selected, true),
            Some(Action::SelectDown) => self.selected = self.next_item(self.selected, false),
            Some(Action::SelectPageUp) => {
                let target = (self.selected.saturating_sub(MAX_VISIBLE)..self.shown.len())
                    .find(|&i| matches!(self.shown[i], Row::Item(_)));
                if let Some(t) = target {
                    self.selected = t;
                }
            }
            Some(Action::SelectPageDown) => {
                let last = (self.selected + MAX_VISIBLE).min(self.shown.len().saturating_sub(1));
                let target = (0..=last)
                    .rev()
                    .find(|&i| matches!(self.shown.get(i), Some(Row::Item(_))));
                if let Some(t) = target {
                    self.selected = t;
                }
            }
            Some(Action::SelectCancel) => return ConfigOutcome::Close,
            Some(Action::SelectConfirm) => return self.toggle(),
            _ if space => return self.toggle(),
            _ => {
                self.search.handle_key(key, keys);
                self.filter();
            }
        }
        ConfigOutcome::None
    }

    /// Pasted text goes into the filter.
    pub fn paste(&mut self, text: &str) {
        self.search.insert_str(text);
        self.filter();
    }

    fn toggle(&self) -> ConfigOutcome {
        match self.shown.get(self.selected) {
            Some(Row::Item(i)) => ConfigOutcome::Toggle {
                index: *i,
                enabled: !self.resources[*i].enabled,
            },
            _ => ConfigOutcome::None,
        }
    }

    pub fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let border = Line::from(Span::styled(
            "─".repeat(width.max(1)),
            ui.fg(ThemeToken::Border),
        ));
        let mut out = vec![Line::default(), border.clone(), Line::default()];
        out.extend(self.header(width, ui));
        out.push(Line::default());
        out.extend(self.list(width, ui));
        out.push(Line::default());
        out.push(border);
        out
    }

    fn header(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let muted = ui.fg(ThemeToken::Muted);
        let dim = ui.fg(ThemeToken::Dim);
        let title = "Resource Configuration";
        let hint = [
            Span::styled("space", dim),
            Span::styled(" toggle", muted),
            Span::styled(" · ", muted),
            Span::styled("esc", dim),
            Span::styled(" close", muted),
        ];
        let hint_width: usize = hint.iter().map(|s| str_width(&s.content)).sum();
        let spacing = width.saturating_sub(str_width(title) + hint_width).max(1);
        let mut first = vec![
            Span::styled(title, Style::default().add_modifier(Modifier::BOLD)),
            Span::raw(" ".repeat(spacing)),
        ];
        first.extend(hint);
        vec![
            fit_spans(first, width, ""),
            Line::from(Span::styled("Type to filter resources", muted)),
        ]
    }

    fn list(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let mut out = vec![self.search.render(width, true), Line::default()];
        if self.shown.is_empty() {
            out.push(Line::from(Span::styled(
                "  No resources found",
                ui.fg(ThemeToken::Muted),
            )));
            return out;
        }
        let n = self.shown.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        for (i, row) in self.shown.iter().enumerate().take(end).skip(start) {
            let line = match row {
                Row::Group(label) => fit_spans(
                    vec![
                        Span::raw("  "),
                        Span::styled(label.clone(), ui.fg(ThemeToken::Accent).patch(bold)),
                    ],
                    width,
                    "",
                ),
                Row::Kind(kind) => fit_spans(
                    vec![
                        Span::raw("    "),
                        Span::styled(kind_label(*kind), ui.fg(ThemeToken::Muted)),
                    ],
                    width,
                    "",
                ),
                Row::Item(index) => {
                    let selected = i == self.selected;
                    let checkbox = if self.resources[*index].enabled {
                        Span::styled("[x]", ui.fg(ThemeToken::Success))
                    } else {
                        Span::styled("[ ]", ui.fg(ThemeToken::Dim))
                    };
                    let name = self.names[*index].clone();
                    fit_spans(
                        vec![
                            Span::raw(if selected { ">     " } else { "      " }),
                            checkbox,
                            Span::raw(" "),
                            if selected {
                                Span::styled(name, bold)
                            } else {
                                Span::raw(name)
                            },
                        ],
                        width,
                        "...",
                    )
                }
            };
            out.push(line);
        }
        if start > 0 || end < n {
            let items = self
                .shown
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count();
            let current = self.shown[..self.selected]
                .iter()
                .filter(|r| matches!(r, Row::Item(_)))
                .count()
                + 1;
            out.push(Line::from(Span::styled(
                format!("  ({current}/{items})"),
                ui.fg(ThemeToken::Dim),
            )));
        }
        out
    }
}

/// `spans` cut to `width` columns, ending in `ellipsis` when cut.
fn fit_spans(spans: Vec<Span<'static>>, width: usize, ellipsis: &str) -> Line<'static> {
    let total: usize = spans.iter().map(|s| str_width(&s.content)).sum();
    if total <= width {
        return Line::from(spans);
    }
    let room = width.saturating_sub(str_width(ellipsis));
    let mut used = 0;
    let mut out = Vec::new();
    for span in spans {
        let w = str_width(&span.content);
        if used + w <= room {
            used += w;
            out.push(span);
            continue;
        }
        let cut = truncate_to_width(&span.content, room - used, "").into_owned();
        out.push(Span::styled(cut, span.style));
        break;
    }
    if !ellipsis.is_empty() {
        out.push(Span::raw(ellipsis.to_string()));
    }
    Line::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::packages::config::Origin;
    use crate::modes::interactive::theme::{ColorMode, Theme};
    use crossterm::event::KeyEvent;
    use std::path::PathBuf;

    fn resource(kind: ResourceKind, path: &str, origin: Origin, project: bool) -> ConfigResource {
        ConfigResource {
            kind,
            path: PathBuf::from(path),
            enabled: true,
            project,
            origin,
        }
    }

    fn text(lines: &[Line<'static>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn groups_kinds_names_and_toggles() {
        let pkg = Origin::Package {
            source: "npm:pack".into(),
            base_dir: PathBuf::from("/n/pack"),
        };
        let resources = vec![
            resource(
                ResourceKind::Prompts,
                "/p/.pi/prompts/zeta.md",
                Origin::Folder,
                true,
            ),
            resource(
                ResourceKind::Skills,
                "/h/.pi/agent/skills/hello/SKILL.md",
                Origin::Folder,
                false,
            ),
            resource(
                ResourceKind::Themes,
                "/n/pack/themes/ocean.json",
                pkg.clone(),
                false,
            ),
            resource(
                ResourceKind::Extensions,
                "/n/pack/tools/index.ts",
                pkg,
                false,
            ),
            resource(
                ResourceKind::Prompts,
                "/p/.pi/prompts/Alpha.md",
                Origin::Folder,
                true,
            ),
        ];
        let mut selector = ConfigSelector::new(resources);
        let theme = Theme::dark(ColorMode::TrueColor);
        let keys = Keybindings::defaults();
        let ui = Ui::new(&theme, &keys);
        let lines = text(&selector.render(60, &ui));
        assert_eq!(
            lines[8..],
            [
                "  npm:pack (user)",
                "    Extensions",
                ">     [x] tools/index.ts",
                "    Themes",
                "      [x] ocean.json",
                "  User (~/.pi/agent/)",
                "    Skills",
                "      [x] hello",
                "  Project (.pi/)",
                "    Prompts",
                "      [x] Alpha.md",
                "      [x] zeta.md",
                "",
                &"─".repeat(60),
            ]
        );
        assert!(lines[3].starts_with("Resource Configuration"));
        assert!(lines[3].ends_with("space toggle · esc close"));
        // Down skips headings; Space asks for the switch.
        selector.handle_key(&key(KeyCode::Down), &keys);
        assert_eq!(
            selector.handle_key(&key(KeyCode::Char(' ')), &keys),
            ConfigOutcome::Toggle {
                index: 2,
                enabled: false
            }
        );
        selector.set_enabled(2, false);
        let lines = text(&selector.render(60, &ui));
        assert!(lines.contains(&">     [ ] ocean.json".to_string()));
        // Typing filters by name, kind or path, keeping the headings.
        for c in "zet".chars() {
            selector.handle_key(&key(KeyCode::Char(c)), &keys);
        }
        let lines = text(&selector.render(60, &ui));
        assert_eq!(
            lines[8..11],
            ["  Project (.pi/)", "    Prompts", ">     [x] zeta.md"]
        );
        assert_eq!(
            selector.handle_key(&key(KeyCode::Esc), &keys),
            ConfigOutcome::Close
        );
    }
}
