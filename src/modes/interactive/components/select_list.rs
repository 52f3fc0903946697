//! A scrolling list with one highlighted row, used by the editor's completion popup and
//! by pickers: `→ ` marks the selection, an optional description column follows the
//! label, `(i/n)` shows the position when not everything fits, arrows wrap around.
//! Filtering is either pi's prefix filter (completion) or fuzzy (pickers).

use crossterm::event::KeyEvent;
use ratatui::text::{Line, Span};

use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::fuzzy::fuzzy_filter;
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::{sanitize_single_line, str_width, truncate_to_width};
use crate::modes::interactive::theme::{Theme, ThemeToken};

/// Bounds of the label column when items have descriptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectLayout {
    pub min_primary: usize,
    pub max_primary: usize,
}

impl Default for SelectLayout {
    fn default() -> Self {
        SelectLayout {
            min_primary: 32,
            max_primary: 32,
        }
    }
}

impl SelectLayout {
    /// pi's layout for slash-command completion: a label column of 12–32.
    pub const COMMANDS: SelectLayout = SelectLayout {
        min_primary: 12,
        max_primary: 32,
    };
}

/// What a key did to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectOutcome {
    /// The selection moved.
    Moved,
    /// Enter on an item.
    Confirmed(CompletionItem),
    /// Escape / Ctrl+C.
    Cancelled,
    /// Not a list key.
    Ignored,
}

const GAP: usize = 2;
const MIN_DESCRIPTION: usize = 10;

#[derive(Debug, Clone)]
pub struct SelectList {
    items: Vec<CompletionItem>,
    /// Indices into `items` that pass the filter, in display order.
    visible: Vec<usize>,
    selected: usize,
    max_visible: usize,
    layout: SelectLayout,
    empty_text: String,
    /// The item drawn with a `✓ ` before its label (the others get two spaces).
    ticked: Option<usize>,
}

impl SelectList {
    pub fn new(items: Vec<CompletionItem>, max_visible: usize) -> Self {
        let visible = (0..items.len()).collect();
        SelectList {
            items,
            visible,
            selected: 0,
            max_visible: max_visible.max(1),
            layout: SelectLayout::default(),
            empty_text: "No matching commands".to_string(),
            ticked: None,
        }
    }

    pub fn with_layout(mut self, layout: SelectLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Ticks item `index` (pi's `✓ ` for the current choice); every label is then
    /// indented by the tick's width.
    pub fn with_tick(mut self, index: Option<usize>) -> Self {
        self.ticked = index;
        self
    }

    /// Text shown when nothing passes the filter.
    pub fn with_empty_text(mut self, text: &str) -> Self {
        self.empty_text = text.to_string();
        self
    }

    /// Keeps items whose value starts with `prefix` (case-insensitive); resets the
    /// selection.
    pub fn set_prefix_filter(&mut self, prefix: &str) {
        let prefix = prefix.to_lowercase();
        self.visible = (0..self.items.len())
            .filter(|i| self.items[*i].value.to_lowercase().starts_with(&prefix))
            .collect();
        self.selected = 0;
    }

    /// Keeps items whose label fuzzily matches `query`, best first; resets the selection.
    pub fn set_fuzzy_filter(&mut self, query: &str) {
        let indices: Vec<usize> = (0..self.items.len()).collect();
        self.visible = fuzzy_filter(&indices, query, |i| display(&self.items[*i]))
            .into_iter()
            .copied()
            .collect();
        self.selected = 0;
    }

    pub fn len(&self) -> usize {
        self.visible.len()
    }

    pub fn is_empty(&self) -> bool {
        self.visible.is_empty()
    }

    pub fn selected_index(&self) -> usize {
        self.selected
    }

    pub fn set_selected(&mut self, index: usize) {
        self.selected = index.min(self.visible.len().saturating_sub(1));
    }

    /// The items that pass the filter, in display order.
    pub fn visible_items(&self) -> impl Iterator<Item = &CompletionItem> {
        self.visible.iter().map(|i| &self.items[*i])
    }

    pub fn selected_item(&self) -> Option<&CompletionItem> {
        self.visible.get(self.selected).map(|i| &self.items[*i])
    }

    /// Moves up, wrapping from the first row to the last.
    pub fn select_previous(&mut self) {
        if !self.visible.is_empty() {
            self.selected = self
                .selected
                .checked_sub(1)
                .unwrap_or(self.visible.len() - 1);
        }
    }

    /// Moves down, wrapping from the last row to the first.
    pub fn select_next(&mut self) {
        if !self.visible.is_empty() {
            self.selected = (self.selected + 1) % self.visible.len();
        }
    }

    pub fn page_up(&mut self) {
        self.selected = self.selected.saturating_sub(self.max_visible);
    }

    pub fn page_down(&mut self) {
        self.set_selected(self.selected + self.max_visible);
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> SelectOutcome {
        let action = keys.action_for(
            key,
            &[
                Action::SelectUp,
                Action::SelectDown,
                Action::SelectPageUp,
                Action::SelectPageDown,
                Action::SelectConfirm,
                Action::SelectCancel,
            ],
        );
        match action {
            Some(Action::SelectUp) => self.select_previous(),
            Some(Action::SelectDown) => self.select_next(),
            Some(Action::SelectPageUp) => self.page_up(),
            Some(Action::SelectPageDown) => self.page_down(),
            Some(Action::SelectConfirm) => {
                return match self.selected_item() {
                    Some(item) => SelectOutcome::Confirmed(item.clone()),
                    None => SelectOutcome::Ignored,
                };
            }
            Some(Action::SelectCancel) => return SelectOutcome::Cancelled,
            _ => return SelectOutcome::Ignored,
        }
        SelectOutcome::Moved
    }

    fn primary_width(&self) -> usize {
        let widest = self
            .visible
            .iter()
            .map(|i| {
                str_width(display(&self.items[*i])) + GAP + 2 * usize::from(self.ticked.is_some())
            })
            .max()
            .unwrap_or(0);
        let min = self.layout.min_primary.min(self.layout.max_primary).max(1);
        let max = self.layout.max_primary.max(self.layout.min_primary).max(1);
        widest.clamp(min, max)
    }

    /// The visible rows (at most `max_visible`, plus a position line when scrolled).
    pub fn render(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let muted = theme.fg(ThemeToken::Muted);
        if self.visible.is_empty() {
            let text = truncate_to_width(&format!("  {}", self.empty_text), width, "").into_owned();
            return vec![Line::from(Span::styled(text, muted))];
        }
        let n = self.visible.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(n);
        let primary = self.primary_width();
        let mut out: Vec<Line<'static>> = (start..end)
            .map(|row| {
                self.render_row(
                    self.visible[row],
                    row == self.selected,
                    width,
                    primary,
                    theme,
                )
            })
            .collect();
        if start > 0 || end < n {
            let info = format!("  ({}/{})", self.selected + 1, n);
            let text = truncate_to_width(&info, width.saturating_sub(2), "").into_owned();
            out.push(Line::from(Span::styled(text, muted)));
        }
        out
    }

    fn render_row(
        &self,
        index: usize,
        selected: bool,
        width: usize,
        primary: usize,
        theme: &Theme,
    ) -> Line<'static> {
        let item = &self.items[index];
        let accent = theme.fg(ThemeToken::Accent);
        let prefix = if selected { "→ " } else { "  " };
        let tick = match self.ticked {
            None => "",
            Some(i) if i == index => "✓ ",
            Some(_) => "  ",
        };
        let label = format!("{tick}{}", sanitize_single_line(display(item)));
        let description = item.description.as_deref().map(sanitize_single_line);
        if let Some(desc) = description.filter(|d| !d.is_empty() && width > 40) {
            let column = primary.min(width.saturating_sub(2 + 4)).max(1);
            let value =
                truncate_to_width(&label, column.saturating_sub(GAP).max(1), "").into_owned();
            let spacing = " ".repeat(column.saturating_sub(str_width(&value)).max(1));
            let desc_start = 2 + str_width(&value) + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION {
                let desc = truncate_to_width(&desc, remaining, "").into_owned();
                if selected {
                    return Line::from(Span::styled(
                        format!("{prefix}{value}{spacing}{desc}"),
                        accent,
                    ));
                }
                return Line::from(vec![
                    Span::raw(prefix),
                    Span::raw(value),
                    Span::styled(format!("{spacing}{desc}"), theme.fg(ThemeToken::Muted)),
                ]);
            }
        }
        let value = truncate_to_width(&label, width.saturating_sub(4).max(1), "").into_owned();
        let text = truncate_to_width(&format!("{prefix}{value}"), width, "").into_owned();
        if selected {
            Line::from(Span::styled(text, accent))
        } else {
            Line::from(text)
        }
    }
}

fn display(item: &CompletionItem) -> &str {
    if item.label.is_empty() {
        &item.value
    } else {
        &item.label
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::test_support::{plain, theme};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn items(n: usize) -> Vec<CompletionItem> {
        (0..n)
            .map(|i| CompletionItem {
                value: format!("item-{i}"),
                label: format!("item-{i}"),
                description: (i % 2 == 0).then(|| format!("description of item number {i}")),
            })
            .collect()
    }

    #[test]
    fn renders_labels_descriptions_and_scroll_position() {
        let mut list = SelectList::new(items(8), 4).with_layout(SelectLayout::COMMANDS);
        list.set_selected(5);
        insta::assert_snapshot!(plain(&list.render(60, &theme()), 60), @r"
          item-3
          item-4      description of item number 4
        → item-5
          item-6      description of item number 6
          (6/8)
        ");
    }

    #[test]
    fn narrow_widths_drop_descriptions_and_never_overflow() {
        let list = SelectList::new(items(3), 5);
        insta::assert_snapshot!(plain(&list.render(20, &theme()), 20), @r"
        → item-0
          item-1
          item-2
        ");
        for width in 1..12 {
            plain(&list.render(width, &theme()), width);
        }
    }

    #[test]
    fn arrows_wrap_and_enter_confirms() {
        let keys = Keybindings::defaults();
        let mut list = SelectList::new(items(3), 5);
        let up = KeyEvent::new(KeyCode::Up, KeyModifiers::NONE);
        assert_eq!(list.handle_key(&up, &keys), SelectOutcome::Moved);
        assert_eq!(
            list.selected_item().map(|i| i.value.as_str()),
            Some("item-2")
        );
        let down = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
        list.handle_key(&down, &keys);
        assert_eq!(list.selected_index(), 0);
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        assert!(
            matches!(list.handle_key(&enter, &keys), SelectOutcome::Confirmed(i) if i.value == "item-0")
        );
        let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(list.handle_key(&esc, &keys), SelectOutcome::Cancelled);
    }

    #[test]
    fn filters_by_prefix_or_fuzzily() {
        let mut list = SelectList::new(items(12), 5);
        list.set_prefix_filter("ITEM-1");
        assert_eq!(list.len(), 3);
        list.set_fuzzy_filter("i11");
        assert_eq!(
            list.selected_item().map(|i| i.value.as_str()),
            Some("item-11")
        );
        list.set_prefix_filter("zzz");
        insta::assert_snapshot!(plain(&list.render(40, &theme()), 40), @"  No matching commands");
    }
}
