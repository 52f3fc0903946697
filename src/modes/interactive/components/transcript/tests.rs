use super::*;
use crate::ai::message::{
    AssistantBlock, AssistantMessage, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    UserMessage,
};
use crate::messages::{BranchSummaryMessage, CompactionSummaryMessage};
use crate::modes::interactive::keys::Keybindings;
use crate::modes::interactive::test_support::{plain, theme};
use pretty_assertions::assert_eq;
use serde_json::json;

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text, 0))
}

fn assistant(blocks: Vec<AssistantBlock>, stop: StopReason) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: blocks,
        stop_reason: stop,
        ..AssistantMessage::default()
    })
}

fn text(s: &str) -> AssistantBlock {
    AssistantBlock::Text(TextContent::new(s))
}

fn tool(id: &str, name: &str, args: serde_json::Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
        ..ToolCall::default()
    })
}

fn result(id: &str, name: &str, text: &str, details: Option<serde_json::Value>) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![UserBlock::text(text)],
        details,
        ..ToolResultMessage::default()
    })
}

/// The tree-branch-summary corpus conversation.
fn corpus_conversation() -> Vec<AgentMessage> {
    vec![
        user("Turn one: read notes.txt"),
        assistant(
            vec![
                text("Reading notes.txt."),
                tool("c1", "read", json!({"path": "notes.txt"})),
            ],
            StopReason::ToolUse,
        ),
        result("c1", "read", "note one\nnote two\n", None),
        assistant(
            vec![text("notes.txt has two lines: 'note one' and 'note two'.")],
            StopReason::Stop,
        ),
        user("Turn two: append a line to notes.txt"),
        assistant(
            vec![
                text("Appending a line."),
                tool(
                    "c2",
                    "edit",
                    json!({"path": "notes.txt", "edits": [{"oldText": "note two", "newText": "note two\nnote three"}]}),
                ),
            ],
            StopReason::ToolUse,
        ),
        result(
            "c2",
            "edit",
            "Successfully replaced 1 block(s) in notes.txt.",
            Some(json!({"diff": " 1 note one\n 2 note two\n+3 note three", "firstChangedLine": 3})),
        ),
        assistant(vec![text("Added 'note three'.")], StopReason::Stop),
    ]
}

fn ui_parts() -> (crate::modes::interactive::theme::Theme, Keybindings) {
    (theme(), Keybindings::defaults())
}

#[test]
fn corpus_conversation_renders_like_pi() {
    let (t, keys) = ui_parts();
    let ui = Ui::new(&t, &keys);
    let transcript = Transcript::from_messages(&corpus_conversation(), false, false);
    assert_eq!(transcript.len(), 8);
    insta::assert_snapshot!(plain(&transcript.render_all(60, &ui), 60), @r"


    Turn one: read notes.txt


    Reading notes.txt.


    read notes.txt

    note one
    note two


    notes.txt has two lines: 'note one' and 'note two'.


    Turn two: append a line to notes.txt


    Appending a line.


    edit notes.txt

     1 note one
     2 note two
    +3 note three


    Added 'note three'.
    ");
}

#[test]
fn summaries_bash_and_failed_turns() {
    let (t, keys) = ui_parts();
    let ui = Ui::new(&t, &keys);
    let messages = vec![
        AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: "Earlier work.".into(),
            tokens_before: 2404,
            timestamp: 0,
        }),
        AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: "Side quest.".into(),
            from_id: "root".into(),
            timestamp: 0,
        }),
        AgentMessage::BashExecution(crate::messages::BashExecutionMessage {
            command: "ls".into(),
            output: "a\nb".into(),
            exit_code: Some(0),
            ..Default::default()
        }),
        assistant(
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    ..Default::default()
                }),
                tool("c9", "bash", json!({"command": "sleep 100"})),
            ],
            StopReason::Aborted,
        ),
        result("unknown-id", "bash", "ignored", None),
    ];
    let mut transcript = Transcript::from_messages(&messages, false, true);
    insta::assert_snapshot!(plain(&transcript.render_all(50, &ui), 50), @r"


     [compaction]

     Compacted from 2,404 tokens (ctrl+o to expand)



     [branch]

     Branch summary (ctrl+o to expand)


    ──────────────────────────────────────────────────
     $ ls

     a
     b
    ──────────────────────────────────────────────────

     Thinking...


     $ sleep 100

     Operation aborted
    ");
    transcript.set_expanded(true);
    transcript.set_hide_thinking(false);
    insta::assert_snapshot!(plain(&transcript.render_all(50, &ui), 50), @r"


     [compaction]

     Compacted from 2,404 tokens

     Earlier work.



     [branch]

     Branch Summary

     Side quest.


    ──────────────────────────────────────────────────
     $ ls

     a
     b
    ──────────────────────────────────────────────────

     hmm


     $ sleep 100

     Operation aborted
    ");
}

#[test]
fn the_hidden_thinking_label_applies_to_old_and_new_messages() {
    let (t, keys) = ui_parts();
    let ui = Ui::new(&t, &keys);
    let thinking = || {
        assistant(
            vec![AssistantBlock::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                ..Default::default()
            })],
            StopReason::Stop,
        )
    };
    let mut transcript = Transcript::from_messages(&[thinking()], false, true);
    let before = transcript.version_at(0).unwrap();
    transcript.set_hidden_thinking_label("Pondering...");
    assert!(transcript.version_at(0).unwrap() > before);
    let AgentMessage::Assistant(m) = thinking() else {
        unreachable!()
    };
    transcript.push(ChatItem::Assistant(AssistantMessageView::new(m)));
    let text = plain(&transcript.render_all(40, &ui), 40);
    assert_eq!(text.matches("Pondering...").count(), 2, "{text}");
    assert!(!text.contains("Thinking..."), "{text}");
    // Lines drawn by an extension change the picture, not the version.
    let version = transcript.version_at(1).unwrap();
    transcript.update_drawing_at(1, |_| {});
    assert_eq!(transcript.version_at(1), Some(version));
}

#[test]
fn tail_rendering_matches_the_end_of_the_full_render() {
    let (t, keys) = ui_parts();
    let ui = Ui::new(&t, &keys);
    let mut messages = Vec::new();
    for _ in 0..20 {
        messages.extend(corpus_conversation());
    }
    let transcript = Transcript::from_messages(&messages, false, false);
    let all = transcript.render_all(80, &ui);
    for rows in [0, 1, 7, 40, all.len(), all.len() + 10] {
        let tail = transcript.render_tail(80, &ui, rows);
        assert_eq!(
            tail[..],
            all[all.len().saturating_sub(rows)..],
            "rows {rows}"
        );
    }
}

#[test]
fn streaming_updates_only_redraw_the_last_item() {
    let (t, keys) = ui_parts();
    let ui = Ui::new(&t, &keys);
    let mut transcript = Transcript::from_messages(&corpus_conversation(), false, false);
    transcript.push(ChatItem::Assistant(AssistantMessageView::new(
        AssistantMessage::default(),
    )));
    transcript.render_all(60, &ui);
    transcript.update_last(|item| {
        if let ChatItem::Assistant(a) = item {
            a.message.content = vec![text("Streaming **now**")];
        }
    });
    let lines = transcript.render_tail(60, &ui, 2);
    assert_eq!(plain(&lines, 60), "\n Streaming now");
}
