//! Property test: every chat component renders lines no wider than asked, for any text
//! (wide characters, emoji sequences, tabs, newlines) and any width.

use super::assistant_message::AssistantMessageView;
use super::bash_execution::BashExecutionView;
use super::footer::{FooterData, FooterModel};
use super::header::StartupHeader;
use super::status::{PendingMessages, StatusLine};
use super::summaries::CompactionSummaryView;
use super::tool_execution::{ToolExecutionState, ToolResultView};
use super::user_message::UserMessageView;
use super::*;
use crate::ai::message::{AssistantBlock, AssistantMessage, TextContent, ToolCall, UserBlock};
use crate::modes::interactive::test_support::theme;
use crate::modes::interactive::text::line_width;
use proptest::prelude::*;
use serde_json::json;

fn unicode() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,10}",
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\t".to_string()),
        Just("中文字符".to_string()),
        Just("🇺🇸🇯🇵".to_string()),
        Just("👨\u{200d}👩\u{200d}👧".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\r".to_string()),
        Just("\u{600}".to_string()),
        Just("**".to_string()),
        Just("| a | b |\n|---|---|\n| 中 | 🇺🇸 |\n".to_string()),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn no_component_draws_past_the_width(text in unicode(), width in 1usize..200) {
        let t = theme();
        let keys = Keybindings::defaults();
        let ui = Ui::new(&t, &keys).with_home(Some("/home/u"));
        let assistant = AssistantMessageView::new(AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(text.clone()))],
            ..AssistantMessage::default()
        });
        let tool = ToolExecutionState::new(ToolCall {
            id: "1".into(),
            name: "bash".into(),
            arguments: json!({"command": text}),
            ..ToolCall::default()
        })
        .with_result(ToolResultView { content: vec![UserBlock::text(text.clone())], details: None, is_error: false });
        let read = ToolExecutionState::new(ToolCall {
            id: "2".into(),
            name: "read".into(),
            arguments: json!({"path": text}),
            ..ToolCall::default()
        })
        .with_result(ToolResultView { content: vec![UserBlock::text(text.clone())], details: None, is_error: false });
        let mut bash = BashExecutionView::running(&text, false);
        bash.append_output(&text);
        let footer = FooterData {
            cwd: text.clone(),
            session_name: Some(text.clone()),
            model: Some(FooterModel { id: text.clone(), provider: "p".into(), reasoning: true }),
            provider_count: 2,
            context_percent: Some(12.0),
            context_window: 200_000,
            extension_statuses: [("k".to_string(), text.clone())].into_iter().collect(),
            ..FooterData::default()
        };
        let header = StartupHeader { app_name: "pi".into(), version: text.clone(), ..StartupHeader::default() };
        let components: Vec<Box<dyn Component>> = vec![
            Box::new(UserMessageView::new(text.clone())),
            Box::new(assistant),
            Box::new(tool),
            Box::new(read),
            Box::new(bash),
            Box::new(footer),
            Box::new(header),
            Box::new(StatusLine::message(0, &text)),
            Box::new(PendingMessages { steering: vec![text.clone()], follow_up: vec![] }),
            Box::new(CompactionSummaryView { tokens_before: 5, summary: text.clone(), expanded: true }),
        ];
        for c in &components {
            for line in c.render(width, &ui) {
                prop_assert!(line_width(&line) <= width, "{:?} at {}", crate::modes::interactive::text::line_text(&line), width);
            }
        }
    }
}
