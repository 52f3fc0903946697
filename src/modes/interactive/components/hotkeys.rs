//! `/hotkeys`: every action pi-rs has, grouped, with the keys the user actually has
//! (their `keybindings.json` applied), plus the prompt prefixes (`/`, `!`, `!!`). A block
//! for the chat, like pi's table; long descriptions wrap under their column.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, rule, styled_text};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::{WrapOptions, str_width, truncate_to_width, wrap_spans};
use crate::modes::interactive::theme::ThemeToken;

/// The `/hotkeys` block. It reads the bindings from the [`Ui`]; extensions' shortcuts
/// (pi's `registerShortcut`) come last, as in pi.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HotkeysView {
    /// Extension shortcuts: pi's key id and the description (the extension's path
    /// when it gave none).
    pub extensions: Vec<(String, String)>,
}

/// Sections, by action id prefix, in the order they are shown.
const GROUPS: &[(&str, &[&str])] = &[
    ("Editing", &["tui.editor.", "tui.input."]),
    ("Lists and pickers", &["tui.select."]),
    ("Sessions", &["app.session."]),
    ("Session tree", &["app.tree."]),
    ("Model scope (/scoped-models)", &["app.models."]),
    ("Everything else", &["app."]),
];

/// Prompt prefixes that are not keys but belong in the list.
const PREFIXES: &[(&str, &str)] = &[
    ("/", "Slash commands"),
    (
        "!",
        "Run a shell command; its output goes to the model with your next message",
    ),
    ("!!", "Run a shell command without telling the model"),
];

/// Most columns the key column takes (longer key lists are cut with `…`).
const KEY_COLUMN_MAX: usize = 32;

/// `ctrl+shift+p` → `Ctrl+Shift+P`, as pi shows keys in `/hotkeys`.
pub fn display_keys(text: &str) -> String {
    text.split('/')
        .map(|key| {
            key.split('+')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(first) => first.to_uppercase().chain(chars).collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

fn group_of(action: Action) -> usize {
    GROUPS
        .iter()
        .position(|(_, prefixes)| prefixes.iter().any(|p| action.id().starts_with(p)))
        .unwrap_or(GROUPS.len() - 1)
}

impl Component for HotkeysView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let width = width.max(1);
        let bold = ratatui::style::Style::default().add_modifier(Modifier::BOLD);
        let mut rows: Vec<Vec<(String, String)>> = vec![Vec::new(); GROUPS.len()];
        for &action in Action::ALL {
            let keys = ui.key(action);
            let shown = if keys.is_empty() {
                "(unbound)".to_string()
            } else {
                display_keys(&keys)
            };
            rows[group_of(action)].push((shown, action.description().to_string()));
        }
        let last = rows.len() - 1;
        rows[last].extend(PREFIXES.iter().map(|(k, d)| (k.to_string(), d.to_string())));
        let mut titles: Vec<&str> = GROUPS.iter().map(|(title, _)| *title).collect();
        if !self.extensions.is_empty() {
            titles.push("Extensions");
            rows.push(
                self.extensions
                    .iter()
                    .map(|(key, description)| (display_keys(key), description.clone()))
                    .collect(),
            );
        }
        let key_column = rows
            .iter()
            .flatten()
            .map(|(k, _)| str_width(k))
            .max()
            .unwrap_or(0)
            .min(KEY_COLUMN_MAX)
            .min(width.saturating_sub(4) / 2);

        let border = rule(width, ui.fg(ThemeToken::Border));
        let mut out = vec![Line::default(), border.clone()];
        out.extend(styled_text(
            "Keyboard Shortcuts",
            ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
            width,
            1,
        ));
        for (title, group) in titles.iter().zip(&rows) {
            out.push(Line::default());
            out.extend(styled_text(title, bold, width, 1));
            for (keys, description) in group {
                let key = truncate_to_width(keys, key_column, "…").into_owned();
                let pad = " ".repeat(key_column - str_width(&key) + 2);
                let key_style = if keys == "(unbound)" {
                    ui.fg(ThemeToken::Dim)
                } else {
                    ui.fg(ThemeToken::Accent)
                };
                let opts = WrapOptions {
                    first_prefix: vec![
                        Span::raw("  "),
                        Span::styled(key, key_style),
                        Span::raw(pad),
                    ],
                    rest_prefix: vec![Span::raw(" ".repeat(key_column + 4))],
                };
                out.extend(wrap_spans(
                    &[Span::styled(description.clone(), ui.fg(ThemeToken::Muted))],
                    width,
                    &opts,
                ));
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

    #[test]
    fn extension_shortcuts_come_last() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let view = HotkeysView {
            extensions: vec![
                ("ctrl+shift+p".into(), "Toggle plan mode".into()),
                ("alt+q".into(), "/ext/keys.ts".into()),
            ],
        };
        let text = plain(&view.render(100, &ui), 100);
        let rows: Vec<&str> = text.lines().map(str::trim_end).collect();
        let at = rows.iter().position(|r| *r == " Extensions").unwrap();
        assert!(rows[at - 1].is_empty());
        assert!(rows[at + 1].starts_with("  Ctrl+Shift+P "), "{text}");
        assert!(rows[at + 1].ends_with(" Toggle plan mode"), "{text}");
        assert!(rows[at + 2].starts_with("  Alt+Q "), "{text}");
        assert!(rows[at + 3].starts_with("────"), "{text}");
        let without = plain(&HotkeysView::default().render(100, &ui), 100);
        assert!(!without.contains("Extensions"));
    }

    #[test]
    fn shows_every_action_with_the_users_own_keys() {
        let t = theme();
        let loaded = Keybindings::from_json_str(
            "keybindings.json",
            r#"{"app.session.resume": "ctrl+shift+r", "app.tools.expand": ["ctrl+e", "f2"], "tui.editor.undo": []}"#,
        )
        .unwrap();
        let ui = Ui::new(&t, &loaded.bindings);
        let text = plain(&HotkeysView::default().render(100, &ui), 100);
        let text = text.strip_prefix('\n').unwrap();
        for action in Action::ALL {
            assert!(text.contains(action.description()), "{action:?} missing");
        }
        insta::assert_snapshot!(text, @r"
            ────────────────────────────────────────────────────────────────────────────────────────────────────
             Keyboard Shortcuts

             Editing
              Up                              Move cursor up
              Down                            Move cursor down
              Left / Ctrl+B                   Move cursor left
              Right / Ctrl+F                  Move cursor right
              Alt+Left / Ctrl+Left / Alt+B    Move cursor word left
              Alt+Right / Ctrl+Right / Alt+F  Move cursor word right
              Home / Ctrl+A                   Move to line start
              End / Ctrl+E                    Move to line end
              Ctrl+]                          Jump forward to character
              Ctrl+Alt+]                      Jump backward to character
              PageUp                          Page up
              PageDown                        Page down
              Backspace                       Delete character backward
              Delete / Ctrl+D                 Delete character forward
              Ctrl+W / Alt+Backspace          Delete word backward
              Alt+D / Alt+Delete              Delete word forward
              Ctrl+U                          Delete to line start
              Ctrl+K                          Delete to line end
              Ctrl+Y                          Paste most recently deleted text
              Alt+Y                           Cycle through deleted text after yank
              (unbound)                       Undo last edit
              Shift+Enter                     Insert new line
              Enter                           Submit input
              Tab                             Tab / autocomplete
              Ctrl+C                          Copy selection

             Lists and pickers
              Up                              Move selection up
              Down                            Move selection down
              PageUp                          Selection page up
              PageDown                        Selection page down
              Enter                           Confirm selection
              Escape / Ctrl+C                 Cancel selection

             Sessions
              Ctrl+N                          Toggle named session filter
              (unbound)                       Start a new session
              (unbound)                       Open session tree
              (unbound)                       Fork current session
              Ctrl+Shift+R                    Resume a session
              Ctrl+P                          Toggle session path display
              Ctrl+S                          Toggle session sort mode
              Ctrl+R                          Rename session
              Ctrl+D                          Delete session
              Ctrl+Backspace                  Delete session when query is empty

             Session tree
              Ctrl+Left / Alt+Left            Fold tree branch or move up
              Ctrl+Right / Alt+Right          Unfold tree branch or move down
              Shift+L                         Edit tree label
              Shift+T                         Toggle tree label timestamps
              Ctrl+D                          Tree filter: default view
              Ctrl+T                          Tree filter: hide tool results
              Ctrl+U                          Tree filter: user messages only
              Ctrl+L                          Tree filter: labeled entries only
              Ctrl+A                          Tree filter: show all entries
              Ctrl+O                          Tree filter: cycle forward
              Shift+Ctrl+O                    Tree filter: cycle backward

             Model scope (/scoped-models)
              Ctrl+S                          Save model selection
              Ctrl+A                          Enable all models
              Ctrl+X                          Clear all models
              Ctrl+P                          Toggle all models for provider
              Alt+Up                          Move model up in order
              Alt+Down                        Move model down in order

             Everything else
              Escape                          Cancel or abort
              Ctrl+C                          Clear editor
              Ctrl+D                          Exit when editor is empty
              Ctrl+Z                          Suspend to background
              Shift+Tab                       Cycle thinking level
              Ctrl+P                          Cycle to next model
              Shift+Ctrl+P                    Cycle to previous model
              Ctrl+L                          Open model selector
              Ctrl+E / F2                     Toggle tool output
              Ctrl+T                          Toggle thinking blocks
              Ctrl+G                          Open external editor
              Alt+Enter                       Queue follow-up message
              Alt+Up                          Restore queued messages
              Ctrl+V                          Paste image from clipboard
              /                               Slash commands
              !                               Run a shell command; its output goes to the model with your next
                                              message
              !!                              Run a shell command without telling the model
            ────────────────────────────────────────────────────────────────────────────────────────────────────
            ");
    }

    #[test]
    fn narrow_screens_wrap_descriptions_under_their_column() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let text = plain(&HotkeysView::default().render(44, &ui), 44);
        insta::assert_snapshot!(text.lines().skip(2).take(12).collect::<Vec<_>>().join("\n"), @r"
            Keyboard Shortcuts

            Editing
             Up                    Move cursor up
             Down                  Move cursor down
             Left / Ctrl+B         Move cursor left
             Right / Ctrl+F        Move cursor right
             Alt+Left / Ctrl+Lef…  Move cursor word
                                   left
             Alt+Right / Ctrl+Ri…  Move cursor word
                                   right
             Home / Ctrl+A         Move to line start
            ");
        for width in 1..60 {
            plain(&HotkeysView::default().render(width, &ui), width);
        }
    }

    #[test]
    fn keys_are_capitalized_like_pi() {
        assert_eq!(display_keys("ctrl+shift+p"), "Ctrl+Shift+P");
        assert_eq!(display_keys("escape/ctrl+c"), "Escape / Ctrl+C");
        assert_eq!(display_keys("pageUp"), "PageUp");
    }
}
