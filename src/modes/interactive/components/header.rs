//! The startup header: name and version, the most useful keys (all of them when
//! expanded with Ctrl+O), and the context files, skills and prompt templates that were
//! loaded. Key names follow the user's keybindings.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, text_block};
use crate::core::settings::QuietStartup;
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::text::sanitize_single_line;
use crate::modes::interactive::theme::ThemeToken;

/// Resources found at startup, as display strings (paths already shortened).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedResources {
    /// As pi lists them collapsed: relative to the working directory when inside it,
    /// else with the home directory as `~`.
    pub context_files: Vec<String>,
    /// As pi lists them expanded (Ctrl+O): every path with the home directory as `~`.
    /// Empty: the collapsed form is used.
    pub context_files_expanded: Vec<String>,
    pub skills: Vec<String>,
    /// Prompt template names without the `/`.
    pub prompts: Vec<String>,
    pub extensions: Vec<String>,
    pub themes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartupHeader {
    pub app_name: String,
    pub version: String,
    pub expanded: bool,
    /// `quietStartup` (without `--verbose`): `true` draws no header and no resource
    /// listing, `"header"` the header without the listing, as in pi.
    pub quiet: QuietStartup,
    /// An optional line under the key hints.
    pub tagline: Option<String>,
    pub resources: LoadedResources,
    /// An extension's header (`ctx.ui.setHeader`): these lines replace the logo and the
    /// key hints, as pi swaps its built-in header component.
    pub custom: Option<Vec<Line<'static>>>,
}

/// A key hint for a raw label (`/`, `!`) rather than an action.
fn raw_hint(ui: &Ui<'_>, key: &str, what: &str) -> Vec<Span<'static>> {
    vec![
        Span::styled(key.to_string(), ui.fg(ThemeToken::Dim)),
        Span::styled(format!(" {what}"), ui.fg(ThemeToken::Muted)),
    ]
}

impl StartupHeader {
    fn compact_hints(&self, ui: &Ui<'_>) -> Vec<Span<'static>> {
        let clear_exit = format!("{}/{}", ui.key(Action::Clear), ui.key(Action::Exit));
        let hints = [
            ui.key_hint(Action::Interrupt, "interrupt"),
            raw_hint(ui, &clear_exit, "clear/exit"),
            raw_hint(ui, "/", "commands"),
            raw_hint(ui, "!", "bash"),
            ui.key_hint(Action::ToolsExpand, "more"),
        ];
        let separator = Span::styled(" · ", ui.fg(ThemeToken::Muted));
        let mut spans = Vec::new();
        for (i, hint) in hints.into_iter().enumerate() {
            if i > 0 {
                spans.push(separator.clone());
            }
            spans.extend(hint);
        }
        spans
    }

    fn all_hints(&self, ui: &Ui<'_>) -> Vec<Vec<Span<'static>>> {
        let models = format!(
            "{}/{}",
            ui.key(Action::ModelCycleForward),
            ui.key(Action::ModelCycleBackward)
        );
        let twice = format!("{} twice", ui.key(Action::Clear));
        vec![
            ui.key_hint(Action::Interrupt, "to interrupt"),
            ui.key_hint(Action::Clear, "to clear"),
            raw_hint(ui, &twice, "to exit"),
            ui.key_hint(Action::Exit, "to exit (empty)"),
            ui.key_hint(Action::Suspend, "to suspend"),
            ui.key_hint(Action::DeleteToLineEnd, "to delete to end"),
            ui.key_hint(Action::ThinkingCycle, "to cycle thinking level"),
            raw_hint(ui, &models, "to cycle models"),
            ui.key_hint(Action::ModelSelect, "to select model"),
            ui.key_hint(Action::ToolsExpand, "to expand tools"),
            ui.key_hint(Action::ThinkingToggle, "to expand thinking"),
            ui.key_hint(Action::EditorExternal, "for external editor"),
            raw_hint(ui, "/", "for commands"),
            raw_hint(ui, "!", "to run bash"),
            raw_hint(ui, "!!", "to run bash (no context)"),
            ui.key_hint(Action::MessageFollowUp, "to queue follow-up"),
            ui.key_hint(Action::MessageDequeue, "to edit all queued messages"),
            ui.key_hint(Action::ClipboardPasteImage, "to paste image"),
            raw_hint(ui, "drop files", "to attach"),
        ]
    }

    fn section(
        &self,
        ui: &Ui<'_>,
        name: &str,
        items: &[String],
        sort: bool,
    ) -> Vec<Vec<Span<'static>>> {
        let mut items: Vec<String> = items
            .iter()
            .map(|i| sanitize_single_line(i))
            .filter(|i| !i.is_empty())
            .collect();
        if items.is_empty() {
            return Vec::new();
        }
        if sort {
            items.sort();
        }
        let dim = ui.fg(ThemeToken::Dim);
        let mut out = vec![vec![Span::styled(
            format!("[{name}]"),
            ui.fg(ThemeToken::MdHeading),
        )]];
        if self.expanded {
            out.extend(
                items
                    .into_iter()
                    .map(|i| vec![Span::styled(format!("  {i}"), dim)]),
            );
        } else {
            out.push(vec![Span::styled(format!("  {}", items.join(", ")), dim)]);
        }
        out.push(Vec::new());
        out
    }
}

impl Component for StartupHeader {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        if let Some(custom) = &self.custom {
            let lines = custom.iter().map(|l| {
                crate::modes::interactive::text::truncate_line(l.clone(), width, Span::raw(""))
            });
            if self.quiet == QuietStartup::All {
                return lines.collect();
            }
            let mut out = vec![Line::default()];
            out.extend(lines);
            out.push(Line::default());
            out.extend(self.resource_sections(width, ui));
            return out;
        }
        if self.quiet == QuietStartup::All {
            // Nothing at all, as pi's empty header: the chat starts on the first row.
            return Vec::new();
        }
        let mut logical: Vec<Vec<Span<'static>>> = vec![vec![
            Span::styled(
                sanitize_single_line(&self.app_name),
                ui.fg(ThemeToken::Accent).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(" v{}", sanitize_single_line(&self.version)),
                ui.fg(ThemeToken::Dim),
            ),
        ]];
        if self.expanded {
            logical.extend(self.all_hints(ui));
        } else {
            logical.push(self.compact_hints(ui));
            logical.push(vec![Span::styled(
                format!(
                    "Press {} to show full startup help and loaded resources.",
                    ui.key(Action::ToolsExpand)
                ),
                ui.fg(ThemeToken::Dim),
            )]);
        }
        if let Some(tagline) = &self.tagline {
            logical.push(Vec::new());
            logical.push(vec![Span::styled(
                sanitize_single_line(tagline),
                ui.fg(ThemeToken::Dim),
            )]);
        }
        let mut out = vec![Line::default()];
        out.extend(text_block(logical, width, 1));
        out.push(Line::default());
        out.extend(self.resource_sections(width, ui));
        out
    }
}

impl StartupHeader {
    /// Whether the header ends with the loaded-resources listing (pi draws that listing
    /// in its chat, so a first user message below it keeps its blank row).
    pub fn lists_resources(&self) -> bool {
        let r = &self.resources;
        self.quiet == QuietStartup::Off
            && [
                &r.context_files,
                &r.skills,
                &r.prompts,
                &r.extensions,
                &r.themes,
            ]
            .iter()
            .any(|items| items.iter().any(|i| !sanitize_single_line(i).is_empty()))
    }

    /// The loaded resources (context files, skills, prompts, extensions, themes) under
    /// the header.
    fn resource_sections(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        if self.quiet != QuietStartup::Off {
            return out;
        }
        let r = &self.resources;
        let mut sections = Vec::new();
        let context = if self.expanded && !r.context_files_expanded.is_empty() {
            &r.context_files_expanded
        } else {
            &r.context_files
        };
        sections.extend(self.section(ui, "Context", context, false));
        sections.extend(self.section(ui, "Skills", &r.skills, true));
        let prompts: Vec<String> = r.prompts.iter().map(|p| format!("/{p}")).collect();
        sections.extend(self.section(ui, "Prompts", &prompts, true));
        sections.extend(self.section(ui, "Extensions", &r.extensions, true));
        sections.extend(self.section(ui, "Themes", &r.themes, true));
        if !sections.is_empty() {
            out.push(Line::default());
            out.extend(text_block(sections, width, 0));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    fn header() -> StartupHeader {
        StartupHeader {
            app_name: "pi".into(),
            version: "0.73.1".into(),
            ..StartupHeader::default()
        }
    }

    fn show(h: &StartupHeader, width: usize, keys: &Keybindings) -> String {
        let t = theme();
        plain(&h.render(width, &Ui::new(&t, keys)), width)
    }

    #[test]
    fn a_quiet_startup_draws_no_header() {
        let keys = Keybindings::default();
        let mut h = header();
        h.quiet = QuietStartup::All;
        h.resources.extensions = vec!["gate".into()];
        // Not even a blank row (pi's empty `Text`).
        let t = theme();
        assert!(h.render(60, &Ui::new(&t, &keys)).is_empty());
    }

    #[test]
    fn a_header_only_quiet_startup_keeps_the_header_and_drops_the_resources() {
        let keys = Keybindings::default();
        let mut h = header();
        h.resources.extensions = vec!["gate".into()];
        h.quiet = QuietStartup::Header;
        let text = show(&h, 80, &keys);
        assert!(text.contains("pi v0.73.1"), "{text}");
        assert!(!text.contains("[Extensions]"), "{text}");
        assert!(!h.lists_resources());
        h.quiet = QuietStartup::Off;
        assert!(show(&h, 80, &keys).contains("[Extensions]"));
    }

    #[test]
    fn compact_header_matches_the_corpus_capture() {
        let text = show(&header(), 120, &Keybindings::defaults());
        insta::assert_snapshot!(text, @r"

        pi v0.73.1
        escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more
        Press ctrl+o to show full startup help and loaded resources.
        ");
    }

    #[test]
    fn expanded_header_lists_every_hint_and_resources() {
        let mut h = header();
        h.expanded = true;
        h.resources = LoadedResources {
            context_files: vec!["~/.pi/agent/AGENTS.md".into(), "AGENTS.md".into()],
            skills: vec!["pdf".into(), "brave-search".into()],
            prompts: vec!["review".into()],
            ..LoadedResources::default()
        };
        insta::assert_snapshot!(show(&h, 60, &Keybindings::defaults()), @r"

         pi v0.73.1
         escape to interrupt
         ctrl+c to clear
         ctrl+c twice to exit
         ctrl+d to exit (empty)
         ctrl+z to suspend
         ctrl+k to delete to end
         shift+tab to cycle thinking level
         ctrl+p/shift+ctrl+p to cycle models
         ctrl+l to select model
         ctrl+o to expand tools
         ctrl+t to expand thinking
         ctrl+g for external editor
         / for commands
         ! to run bash
         !! to run bash (no context)
         alt+enter to queue follow-up
         alt+up to edit all queued messages
         ctrl+v to paste image
         drop files to attach


        [Context]
          ~/.pi/agent/AGENTS.md
          AGENTS.md

        [Skills]
          brave-search
          pdf

        [Prompts]
          /review
        ");
        h.expanded = false;
        insta::assert_snapshot!(show(&h, 30, &Keybindings::defaults()), @r"

         pi v0.73.1
         escape interrupt ·
         ctrl+c/ctrl+d clear/exit · /
         commands · ! bash · ctrl+o
         more
         Press ctrl+o to show full
         startup help and loaded
         resources.


        [Context]
          ~/.pi/agent/AGENTS.md,
        AGENTS.md

        [Skills]
          brave-search, pdf

        [Prompts]
          /review
        ");
    }

    #[test]
    fn hints_follow_the_users_keys() {
        let loaded = Keybindings::from_json_str(
            "k",
            r#"{"app.tools.expand": "ctrl+x", "app.interrupt": "ctrl+g"}"#,
        )
        .unwrap();
        let text = show(&header(), 120, &loaded.bindings);
        assert!(
            text.contains("ctrl+g interrupt") && text.contains("Press ctrl+x to show"),
            "{text}"
        );
    }
}
