//! A user prompt: markdown on the user-message background, one row of padding around.

use ratatui::text::Line;

use super::{Component, Ui, panel};
use crate::modes::interactive::markdown::{MarkdownStyle, render_markdown};
use crate::modes::interactive::theme::ThemeToken;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserMessageView {
    pub text: String,
    /// The first thing in an otherwise empty chat: no blank row above the panel (pi adds
    /// its spacer only after something).
    pub opens_chat: bool,
}

impl UserMessageView {
    pub fn new(text: impl Into<String>) -> Self {
        UserMessageView {
            text: text.into(),
            opens_chat: false,
        }
    }
}

impl Component for UserMessageView {
    /// A blank row (the gap after the previous item; none when it opens the chat), then
    /// the panel.
    fn render(&self, width: usize, ui: &Ui<'_>) -> Vec<Line<'static>> {
        let style = MarkdownStyle::with_base(ui.fg(ThemeToken::UserMessageText));
        let mut out = if self.opens_chat {
            Vec::new()
        } else {
            vec![Line::default()]
        };
        out.extend(panel(
            width,
            ui.output_pad,
            1,
            ui.theme.bg(ThemeToken::UserMessageBg),
            |w| render_markdown(&self.text, w, ui.theme, &style),
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::keys::Keybindings;
    use crate::modes::interactive::test_support::{buffer, plain, theme};

    #[test]
    fn user_message_sits_in_a_padded_panel() {
        let t = theme();
        let keys = Keybindings::defaults();
        let view = UserMessageView::new("Turn 5: what is in **list.txt**?");
        let lines = view.render(30, &Ui::new(&t, &keys));
        insta::assert_snapshot!(buffer(&lines, 30), @r"
        |                              |
        |                              |
        | Turn 5: what is in list.txt? |
        |                              |
        ");
        insta::assert_snapshot!(plain(&view.render(20, &Ui::new(&t, &keys)), 20), @r"


        Turn 5: what is in
        list.txt?
        ");
    }

    #[test]
    fn output_pad_0_puts_the_text_in_the_first_column() {
        let t = theme();
        let keys = Keybindings::defaults();
        let view = UserMessageView::new("edge to edge");
        let ui = Ui::new(&t, &keys).with_output_pad(0);
        insta::assert_snapshot!(buffer(&view.render(16, &ui), 16), @r"
        |                |
        |                |
        |edge to edge    |
        |                |
        ");
    }
}
