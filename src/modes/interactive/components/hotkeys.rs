//! `/hotkeys`: pi's three tables of keys (Navigation, Editing, Other) with the keys the
//! user actually has (their `keybindings.json` applied), then the extensions' shortcuts.
//! Written as markdown and drawn by the markdown renderer, as pi does, so the chat shows
//! the same tables as pi's.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, rule, styled_text};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::theme::ThemeToken;

/// The `/hotkeys` block. It reads the bindings from the [`Ui`]; extensions' shortcuts
/// (pi's `registerShortcut`) come last, as in pi.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HotkeysView {
    /// Extension shortcuts: pi's key id and the description (the extension's path
    /// when it gave none).
    pub extensions: Vec<(String, String)>,
}

/// One table row: the actions whose keys are shown (joined by ` / `), or a literal key,
/// and what it does. Rows and wording are pi's.
enum Keys {
    Actions(&'static [&'static str]),
    Literal(&'static str),
}

type Table = (&'static str, &'static [(Keys, &'static str)]);

const TABLES: &[Table] = &[
    (
        "Navigation",
        &[
            (
                Keys::Actions(&[
                    "tui.editor.cursorUp",
                    "tui.editor.cursorDown",
                    "tui.editor.cursorLeft",
                    "tui.editor.cursorRight",
                ]),
                "Move cursor / browse history (Up when empty)",
            ),
            (
                Keys::Actions(&["tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"]),
                "Move by word",
            ),
            (
                Keys::Actions(&["tui.editor.cursorLineStart"]),
                "Start of line",
            ),
            (Keys::Actions(&["tui.editor.cursorLineEnd"]), "End of line"),
            (
                Keys::Actions(&["tui.editor.jumpForward"]),
                "Jump forward to character",
            ),
            (
                Keys::Actions(&["tui.editor.jumpBackward"]),
                "Jump backward to character",
            ),
            (
                Keys::Actions(&["tui.editor.pageUp", "tui.editor.pageDown"]),
                "Scroll by page",
            ),
        ],
    ),
    (
        "Editing",
        &[
            (Keys::Actions(&["tui.input.submit"]), "Send message"),
            (Keys::Actions(&["tui.input.newLine"]), "New line"),
            (
                Keys::Actions(&["tui.editor.deleteWordBackward"]),
                "Delete word backwards",
            ),
            (
                Keys::Actions(&["tui.editor.deleteWordForward"]),
                "Delete word forwards",
            ),
            (
                Keys::Actions(&["tui.editor.deleteToLineStart"]),
                "Delete to start of line",
            ),
            (
                Keys::Actions(&["tui.editor.deleteToLineEnd"]),
                "Delete to end of line",
            ),
            (
                Keys::Actions(&["tui.editor.yank"]),
                "Paste the most-recently-deleted text",
            ),
            (
                Keys::Actions(&["tui.editor.yankPop"]),
                "Cycle through the deleted text after pasting",
            ),
            (Keys::Actions(&["tui.editor.undo"]), "Undo"),
        ],
    ),
    (
        "Other",
        &[
            (
                Keys::Actions(&["tui.input.tab"]),
                "Path completion / accept autocomplete",
            ),
            (
                Keys::Actions(&["app.interrupt"]),
                "Cancel autocomplete / abort streaming",
            ),
            (
                Keys::Actions(&["app.clear"]),
                "Clear editor (first) / exit (second)",
            ),
            (Keys::Actions(&["app.exit"]), "Exit (when editor is empty)"),
            (Keys::Actions(&["app.suspend"]), "Suspend to background"),
            (
                Keys::Actions(&["app.thinking.cycle"]),
                "Cycle thinking level",
            ),
            (
                Keys::Actions(&["app.model.cycleForward", "app.model.cycleBackward"]),
                "Cycle models",
            ),
            (Keys::Actions(&["app.model.select"]), "Open model selector"),
            (
                Keys::Actions(&["app.tools.expand"]),
                "Toggle tool output expansion",
            ),
            (
                Keys::Actions(&["app.thinking.toggle"]),
                "Toggle thinking block visibility",
            ),
            (
                Keys::Actions(&["app.editor.external"]),
                "Edit message in external editor",
            ),
            (
                Keys::Actions(&["app.message.copy"]),
                "Copy selection or last assistant message",
            ),
            (
                Keys::Actions(&["app.message.followUp"]),
                "Queue follow-up message",
            ),
            (
                Keys::Actions(&["app.message.dequeue"]),
                "Restore queued messages",
            ),
            (
                Keys::Actions(&["app.clipboard.pasteImage"]),
                "Paste files on macOS, images, or text from clipboard",
            ),
            (Keys::Literal("/"), "Slash commands"),
            (Keys::Literal("!"), "Run bash command"),
            (
                Keys::Literal("!!"),
                "Run bash command (excluded from context)",
            ),
        ],
    ),
];

/// `ctrl+shift+p` → `Ctrl+Shift+P`: every word's first letter upper-cased, as pi writes
/// an extension's shortcut in `/hotkeys`.
pub fn display_keys(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at_word_start = true;
    for c in text.chars() {
        let word = c.is_alphanumeric() || c == '_';
        if word && at_word_start {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        at_word_start = !word;
    }
    out
}

impl HotkeysView {
    /// The tables as markdown, pi's text with the user's keys.
    pub fn markdown(&self, ui: &Ui<'_>) -> String {
        let mut md = String::new();
        for (i, (title, rows)) in TABLES.iter().enumerate() {
            if i > 0 {
                md.push('\n');
            }
            md.push_str(&format!(
                "**{title}**\n| Key | Action |\n|-----|--------|\n"
            ));
            for (keys, what) in rows.iter() {
                let keys = match keys {
                    Keys::Literal(key) => format!("`{key}`"),
                    Keys::Actions(ids) => ids
                        .iter()
                        .map(|id| {
                            let shown = Action::from_id(id)
                                .map(|a| ui.key_capitalized(a))
                                .unwrap_or_default();
                            format!("`{shown}`")
                        })
                        .collect::<Vec<_>>()
                        .join(" / "),
                };
                md.push_str(&format!("| {keys} | {what} |\n"));
            }
        }
        if !self.extensions.is_empty() {
            md.push_str("\n**Extensions**\n| Key | Action |\n|-----|--------|\n");
            for (key, description) in &self.extensions {
                md.push_str(&format!("| `{}` | {description} |\n", display_keys(key)));
            }
        }
        md
    }
}

impl Component for HotkeysView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![Line::default(), border.clone()];
        out.extend(styled_text(
            "Keyboard Shortcuts",
            ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        // pi: a spacer, then the markdown with one column and one row of padding.
        out.push(Line::default());
        out.push(Line::default());
        // Below 3 columns there is no room for the padding.
        let pad = usize::from(width > 2);
        let inner = width - 2 * pad;
        let markdown = self.markdown(ui);
        out.extend(
            render_markdown(markdown.trim(), inner, ui.theme, &MarkdownStyle::default())
                .into_iter()
                .map(|line| {
                    let mut spans = vec![Span::raw(" ".repeat(pad))];
                    spans.extend(line.spans);
                    Line::from(spans)
                }),
        );
        out.push(Line::default());
        out.push(border);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    #[test]
    fn extension_shortcuts_come_last_in_their_own_table() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let view = HotkeysView {
            extensions: vec![
                ("ctrl+shift+p".into(), "Toggle plan mode".into()),
                ("alt+q".into(), "/ext/keys.ts".into()),
            ],
        };
        let md = view.markdown(&ui);
        assert!(
            md.ends_with(
                "\n**Extensions**\n| Key | Action |\n|-----|--------|\n\
                 | `Ctrl+Shift+P` | Toggle plan mode |\n| `Alt+Q` | /ext/keys.ts |\n"
            ),
            "{md}"
        );
        let text = plain(&view.render(100, &ui), 100);
        assert!(text.contains("Extensions"), "{text}");
        assert!(!HotkeysView::default().markdown(&ui).contains("Extensions"));
    }

    #[test]
    fn pis_tables_with_the_users_own_keys() {
        let t = theme();
        let loaded = Keybindings::from_json_str(
            "keybindings.json",
            r#"{"app.tools.expand": ["ctrl+e", "f2"], "tui.editor.undo": []}"#,
        )
        .unwrap();
        let ui = Ui::new(&t, &loaded.bindings);
        let md = HotkeysView::default().markdown(&ui);
        insta::assert_snapshot!(md, @r"
            **Navigation**
            | Key | Action |
            |-----|--------|
            | `Up` / `Down` / `Left/Ctrl+B` / `Right/Ctrl+F` | Move cursor / browse history (Up when empty) |
            | `Alt+Left/Ctrl+Left/Alt+B` / `Alt+Right/Ctrl+Right/Alt+F` | Move by word |
            | `Home/Ctrl+A` | Start of line |
            | `End/Ctrl+E` | End of line |
            | `Ctrl+]` | Jump forward to character |
            | `Ctrl+Alt+]` | Jump backward to character |
            | `PageUp/Ctrl+PageUp` / `PageDown/Ctrl+PageDown` | Scroll by page |

            **Editing**
            | Key | Action |
            |-----|--------|
            | `Enter` | Send message |
            | `Shift+Enter/Ctrl+J` | New line |
            | `Ctrl+W/Alt+Backspace` | Delete word backwards |
            | `Alt+D/Alt+Delete` | Delete word forwards |
            | `Ctrl+U` | Delete to start of line |
            | `Ctrl+K` | Delete to end of line |
            | `Ctrl+Y` | Paste the most-recently-deleted text |
            | `Alt+Y` | Cycle through the deleted text after pasting |
            | `` | Undo |

            **Other**
            | Key | Action |
            |-----|--------|
            | `Tab` | Path completion / accept autocomplete |
            | `Escape` | Cancel autocomplete / abort streaming |
            | `Ctrl+C` | Clear editor (first) / exit (second) |
            | `Ctrl+D` | Exit (when editor is empty) |
            | `Ctrl+Z` | Suspend to background |
            | `Shift+Tab` | Cycle thinking level |
            | `Ctrl+P` / `Shift+Ctrl+P` | Cycle models |
            | `Ctrl+L` | Open model selector |
            | `Ctrl+E/F2` | Toggle tool output expansion |
            | `Ctrl+T` | Toggle thinking block visibility |
            | `Ctrl+G` | Edit message in external editor |
            | `Ctrl+X` | Copy selection or last assistant message |
            | `Alt+Enter` | Queue follow-up message |
            | `Alt+Up` | Restore queued messages |
            | `Ctrl+V` | Paste files on macOS, images, or text from clipboard |
            | `/` | Slash commands |
            | `!` | Run bash command |
            | `!!` | Run bash command (excluded from context) |
            ");
        for width in 1..60 {
            plain(&HotkeysView::default().render(width, &ui), width);
        }
    }

    #[test]
    fn extension_keys_are_capitalized_like_pi() {
        assert_eq!(display_keys("ctrl+shift+p"), "Ctrl+Shift+P");
        assert_eq!(display_keys("alt+q"), "Alt+Q");
        assert_eq!(display_keys("f2"), "F2");
    }
}
