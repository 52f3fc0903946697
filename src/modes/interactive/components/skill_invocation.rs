//! A `/skill:name` prompt as pi shows it: the skill in a box on the custom-message
//! background — one line `[skill] name (ctrl+o to expand)`, or with Ctrl+O the label, the
//! name in bold and the skill's text — and what the user typed after it as an ordinary
//! user message right below.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::user_message::UserMessageView;
use super::{Component, Ui, panel, text_block};
use crate::messages::SkillBlock;
use crate::modes::interactive::keys::Action;
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::text::sanitize_single_line;
use crate::modes::interactive::theme::ThemeToken;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInvocationView {
    pub name: String,
    /// The skill's text (between the `<skill>` tags).
    pub content: String,
    /// What the user typed after the command, shown as a user message.
    pub user_message: Option<UserMessageView>,
    /// Ctrl+O: the skill's whole text instead of one line.
    pub expanded: bool,
    /// The first thing in an otherwise empty chat: no blank row above the box.
    pub opens_chat: bool,
}

impl From<SkillBlock<'_>> for SkillInvocationView {
    fn from(block: SkillBlock<'_>) -> Self {
        SkillInvocationView {
            name: block.name.to_string(),
            content: block.content.to_string(),
            user_message: block.user_message.map(UserMessageView::new),
            expanded: false,
            opens_chat: false,
        }
    }
}

impl Component for SkillInvocationView {
    /// A blank row (none when it opens the chat), the skill's box, then the user's
    /// message box (no gap between).
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let label_style = ui
            .fg(ThemeToken::CustomMessageLabel)
            .add_modifier(Modifier::BOLD);
        let text_style = ui.fg(ThemeToken::CustomMessageText);
        let name = sanitize_single_line(&self.name);
        let mut out = if self.opens_chat {
            Vec::new()
        } else {
            vec![Line::default()]
        };
        out.extend(panel(
            width,
            ui.output_pad,
            1,
            ui.theme.bg(ThemeToken::CustomMessageBg),
            |w| {
                if self.expanded {
                    let mut lines =
                        text_block(vec![vec![Span::styled("[skill]", label_style)]], w, 0);
                    let markdown = format!("**{name}**\n\n{}", self.content);
                    let style = MarkdownStyle::with_base(text_style);
                    lines.extend(render_markdown(&markdown, w, ui.theme, &style));
                    lines
                } else {
                    let line = vec![
                        Span::styled("[skill] ", label_style),
                        Span::styled(name.clone(), text_style),
                        Span::styled(
                            format!(" ({} to expand)", ui.key(Action::ToolsExpand)),
                            ui.fg(ThemeToken::Dim),
                        ),
                    ];
                    text_block(vec![line], w, 0)
                }
            },
        ));
        if let Some(user) = &self.user_message {
            out.extend(user.render(width, ui).into_iter().skip(1));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::parse_skill_block;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    #[test]
    fn collapsed_and_expanded_like_pi() {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys);
        let text = "<skill name=\"deploy\" location=\"/s/deploy/SKILL.md\">\nRun the *deploy* script.\n</skill>\n\nto staging";
        let mut view = SkillInvocationView::from(parse_skill_block(text).unwrap());
        insta::assert_snapshot!(plain(&view.render(40, &ui), 40), @r"


        [skill] deploy (ctrl+o to expand)


        to staging
        ");
        view.expanded = true;
        insta::assert_snapshot!(plain(&view.render(40, &ui), 40), @r"


        [skill]
        deploy

        Run the deploy script.


        to staging
        ");
    }
}
