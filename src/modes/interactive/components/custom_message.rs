//! A message injected by an extension: `[customType]` label and its text as markdown
//! on the custom-message background. Messages with `display: false` draw nothing.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Component, Ui, panel, text_block};
use crate::messages::CustomMessage;
use crate::modes::interactive::ansi::ansi_line;
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::text::sanitize_single_line;
use crate::modes::interactive::theme::ThemeToken;

#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessageView {
    pub message: CustomMessage,
    pub expanded: bool,
    /// The lines the extension's message renderer drew (pi's `registerMessageRenderer`),
    /// shown instead of the default box once they arrived.
    pub host_lines: Option<Vec<String>>,
}

impl CustomMessageView {
    pub fn new(message: CustomMessage) -> Self {
        CustomMessageView {
            message,
            expanded: false,
            host_lines: None,
        }
    }
}

impl Component for CustomMessageView {
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        if !self.message.display {
            return Vec::new();
        }
        let mut out = vec![Line::default()];
        if let Some(lines) = &self.host_lines {
            // pi: a spacer, then the renderer's component as it drew itself.
            out.extend(lines.iter().map(|l| ansi_line(l)));
            return out;
        }
        out.extend(panel(
            width,
            ui.output_pad,
            1,
            ui.theme.bg(ThemeToken::CustomMessageBg),
            |w| {
                let label = Span::styled(
                    format!("[{}]", sanitize_single_line(&self.message.custom_type)),
                    ui.fg(ThemeToken::CustomMessageLabel)
                        .add_modifier(Modifier::BOLD),
                );
                let mut lines = text_block(vec![vec![label]], w, 0);
                lines.push(Line::default());
                let style = MarkdownStyle::with_base(ui.fg(ThemeToken::CustomMessageText));
                lines.extend(render_markdown(
                    &self.message.content.text(),
                    w,
                    ui.theme,
                    &style,
                ));
                lines
            },
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::message::UserContent;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{plain, theme};

    #[test]
    fn custom_message_shows_its_type_and_text() {
        let t = theme();
        let keys = Keybindings::defaults();
        let mut msg = CustomMessage {
            custom_type: "todo-reminder".into(),
            content: UserContent::Text("Remember to run **tests**.".into()),
            display: true,
            ..CustomMessage::default()
        };
        let view = CustomMessageView::new(msg.clone());
        insta::assert_snapshot!(plain(&view.render(40, &Ui::new(&t, &keys)), 40), @r"


        [todo-reminder]

        Remember to run tests.
        ");
        // A renderer's lines: after a blank row, as they were drawn.
        let mut drawn = CustomMessageView::new(msg.clone());
        drawn.host_lines = Some(vec!["\x1b[32m[INFO]\x1b[39m all good".into()]);
        let lines = drawn.render(40, &Ui::new(&t, &keys));
        assert_eq!(
            plain(&lines, 40).split('\n').collect::<Vec<_>>(),
            ["", "[INFO] all good"]
        );
        msg.display = false;
        assert!(
            CustomMessageView::new(msg)
                .render(40, &Ui::new(&t, &keys))
                .is_empty()
        );
    }
}
