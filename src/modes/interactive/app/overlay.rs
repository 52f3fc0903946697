//! Dialogs shown in place of the editor: a list to choose from, a one-line text input,
//! or an informational view. Each dialog carries what it is for (`purpose`), so the app
//! knows what to do with the answer.

use std::sync::Arc;

use crossterm::event::KeyEvent;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::modes::interactive::autocomplete::CompletionItem;
use crate::modes::interactive::components::select_list::{SelectList, SelectOutcome};
use crate::modes::interactive::components::{Ui, rule, styled_text};
use crate::modes::interactive::editor::{Editor, EditorAction};
use crate::modes::interactive::keys::{Action, Keybindings};
use crate::modes::interactive::text::truncate_line;
use crate::modes::interactive::theme::ThemeToken;

/// What a list dialog chooses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectPurpose {
    /// "Summarize branch?" before navigating to `target`.
    SummarizeBranch {
        target: String,
    },
    Thinking,
    Model,
    ForkMessage,
    ResumeSession,
}

/// What a text input asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputPurpose {
    SessionName,
    Label { target: String },
    CustomSummary { target: String },
    ApiKey { provider: String },
}

pub enum Overlay {
    Select {
        title: String,
        list: SelectList,
        purpose: SelectPurpose,
    },
    Input {
        title: String,
        editor: Box<Editor>,
        purpose: InputPurpose,
    },
    Info {
        title: String,
        lines: Vec<String>,
    },
}

/// What a key did to a dialog.
pub enum OverlayOutcome {
    Keep,
    Cancelled,
    Selected(SelectPurpose, CompletionItem),
    Entered(InputPurpose, String),
}

impl Overlay {
    pub fn select(title: &str, items: Vec<CompletionItem>, purpose: SelectPurpose) -> Overlay {
        let max = items.len().clamp(1, 12);
        Overlay::Select {
            title: title.to_string(),
            list: SelectList::new(items, max),
            purpose,
        }
    }

    pub fn input(
        title: &str,
        initial: &str,
        keys: Arc<Keybindings>,
        purpose: InputPurpose,
    ) -> Overlay {
        let mut editor = Editor::new(keys);
        editor.set_max_rows(3);
        editor.set_text(initial);
        Overlay::Input {
            title: title.to_string(),
            editor: Box::new(editor),
            purpose,
        }
    }

    pub fn info(title: &str, lines: Vec<String>) -> Overlay {
        Overlay::Info {
            title: title.to_string(),
            lines,
        }
    }

    pub fn handle_key(&mut self, key: &KeyEvent, keys: &Keybindings) -> OverlayOutcome {
        match self {
            Overlay::Select { list, purpose, .. } => match list.handle_key(key, keys) {
                SelectOutcome::Confirmed(item) => OverlayOutcome::Selected(purpose.clone(), item),
                SelectOutcome::Cancelled => OverlayOutcome::Cancelled,
                SelectOutcome::Moved | SelectOutcome::Ignored => OverlayOutcome::Keep,
            },
            Overlay::Input {
                editor, purpose, ..
            } => {
                if keys.matches(key, Action::SelectCancel) && !editor.is_showing_autocomplete() {
                    return OverlayOutcome::Cancelled;
                }
                match editor.handle_key(key) {
                    EditorAction::Submit(text) => OverlayOutcome::Entered(purpose.clone(), text),
                    EditorAction::Handled | EditorAction::Ignored => OverlayOutcome::Keep,
                }
            }
            Overlay::Info { .. } => OverlayOutcome::Cancelled,
        }
    }

    pub fn handle_paste(&mut self, text: &str) {
        if let Overlay::Input { editor, .. } = self {
            editor.handle_paste(text);
        }
    }

    /// The dialog's lines and, for inputs, the cursor (row, column) within them.
    pub fn render(
        &mut self,
        width: usize,
        ui: &Ui<'_>,
    ) -> (Vec<Line<'static>>, Option<(usize, usize)>) {
        let accent = ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD);
        let border = ui.fg(ThemeToken::Border);
        let muted = ui.fg(ThemeToken::Muted);
        let mut out = vec![rule(width, border)];
        let title = match self {
            Overlay::Select { title, .. }
            | Overlay::Input { title, .. }
            | Overlay::Info { title, .. } => title.clone(),
        };
        out.extend(styled_text(&title, accent, width, 1));
        let mut cursor = None;
        match self {
            Overlay::Select { list, .. } => {
                out.extend(list.render(width, ui.theme));
                out.push(truncate_line(
                    Line::from(Span::styled(
                        format!(
                            "  {} select · {} cancel",
                            ui.key(Action::SelectConfirm),
                            ui.key(Action::SelectCancel)
                        ),
                        muted,
                    )),
                    width,
                    Span::raw("…"),
                ));
            }
            Overlay::Input { editor, .. } => {
                let rendered = editor.render(width, ui.theme);
                let base = out.len();
                cursor = rendered
                    .cursor
                    .map(|(col, row)| (base + row as usize, col as usize));
                out.extend(rendered.lines);
                out.push(truncate_line(
                    Line::from(Span::styled(
                        format!(
                            "  {} confirm · {} cancel",
                            ui.key(Action::Submit),
                            ui.key(Action::SelectCancel)
                        ),
                        muted,
                    )),
                    width,
                    Span::raw("…"),
                ));
            }
            Overlay::Info { lines, .. } => {
                for line in lines {
                    out.extend(styled_text(line, ui.fg(ThemeToken::Text), width, 1));
                }
                out.push(truncate_line(
                    Line::from(Span::styled("  any key to close", muted)),
                    width,
                    Span::raw("…"),
                ));
            }
        }
        out.push(rule(width, border));
        (out, cursor)
    }
}
