//! Compaction and branch summaries: a labelled panel that says what happened
//! (`Compacted from 2,404 tokens`) and shows the summary itself when expanded.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, panel, text_block};
use crate::ai::js::js_locale_string;
use crate::messages::{BranchSummaryMessage, CompactionSummaryMessage};
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::theme::ThemeToken;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionSummaryView {
    pub tokens_before: u64,
    pub summary: String,
    pub expanded: bool,
}

impl From<&CompactionSummaryMessage> for CompactionSummaryView {
    fn from(m: &CompactionSummaryMessage) -> Self {
        CompactionSummaryView {
            tokens_before: m.tokens_before,
            summary: m.summary.clone(),
            expanded: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSummaryView {
    pub summary: String,
    pub expanded: bool,
}

impl From<&BranchSummaryMessage> for BranchSummaryView {
    fn from(m: &BranchSummaryMessage) -> Self {
        BranchSummaryView {
            summary: m.summary.clone(),
            expanded: false,
        }
    }
}

/// The shared layout: blank row, then `[label]`, a blank row and the body on the
/// custom-message background.
fn summary_panel(
    ui: &Ui<'_>,
    width: usize,
    label: &str,
    body: impl FnOnce(usize) -> Vec<Line<'static>>,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::default()];
    out.extend(panel(
        width,
        ui.output_pad,
        1,
        ui.theme.bg(ThemeToken::CustomMessageBg),
        |w| {
            let label_style = ui
                .fg(ThemeToken::CustomMessageLabel)
                .add_modifier(Modifier::BOLD);
            let mut lines = text_block(
                vec![vec![Span::styled(format!("[{label}]"), label_style)]],
                w,
                0,
            );
            lines.push(Line::default());
            lines.extend(body(w));
            lines
        },
    ));
    out
}

/// `<lead> (ctrl+o to expand)` in the custom-message colours.
fn collapsed(ui: &Ui<'_>, lead: String, width: usize) -> Vec<Line<'static>> {
    let text = ui.fg(ThemeToken::CustomMessageText);
    let spans = vec![
        Span::styled(format!("{lead} ("), text),
        Span::styled(ui.key(Action::ToolsExpand), ui.fg(ThemeToken::Dim)),
        Span::styled(" to expand)", text),
    ];
    text_block(vec![spans], width, 0)
}

fn expanded(ui: &Ui<'_>, markdown: &str, width: usize) -> Vec<Line<'static>> {
    let style = MarkdownStyle::with_base(ui.fg(ThemeToken::CustomMessageText));
    render_markdown(markdown, width, ui.theme, &style)
}

impl Component for CompactionSummaryView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let tokens = js_locale_string(self.tokens_before);
        summary_panel(ui, width, "compaction", |w| {
            if self.expanded {
                expanded(
                    ui,
                    &format!("**Compacted from {tokens} tokens**\n\n{}", self.summary),
                    w,
                )
            } else {
                collapsed(ui, format!("Compacted from {tokens} tokens"), w)
            }
        })
    }
}

impl Component for BranchSummaryView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        summary_panel(ui, width, "branch", |w| {
            if self.expanded {
                expanded(ui, &format!("**Branch Summary**\n\n{}", self.summary), w)
            } else {
                collapsed(ui, "Branch summary".to_string(), w)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    fn show(c: &dyn Component, width: usize) -> String {
        let t = theme();
        let keys = Keybindings::defaults();
        plain(&c.render(width, &Ui::new(&t, &keys)), width)
    }

    #[test]
    fn compaction_collapsed_matches_pi_and_expands_to_the_summary() {
        let mut view = CompactionSummaryView {
            tokens_before: 2404,
            summary:
                "## Goal\nCount lines in list.txt.\n\n<modified-files>\nlist.txt\n</modified-files>"
                    .into(),
            expanded: false,
        };
        insta::assert_snapshot!(show(&view, 60), @r"


        [compaction]

        Compacted from 2,404 tokens (ctrl+o to expand)
        ");
        view.expanded = true;
        insta::assert_snapshot!(show(&view, 60), @r"


        [compaction]

        Compacted from 2,404 tokens

        Goal

        Count lines in list.txt.

        <modified-files>
        list.txt
        </modified-files>
        ");
    }

    #[test]
    fn branch_summary_collapsed_and_narrow() {
        let view = BranchSummaryView {
            summary: "The user explored reading notes.txt.".into(),
            expanded: false,
        };
        insta::assert_snapshot!(show(&view, 60), @r"


        [branch]

        Branch summary (ctrl+o to expand)
        ");
        insta::assert_snapshot!(show(&view, 20), @r"


        [branch]

        Branch summary
        (ctrl+o to expand)
        ");
    }
}
