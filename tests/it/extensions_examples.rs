//! The example extensions (`examples/extensions/`) run against the real host: handshake,
//! the permission gate with and without a UI, a custom compaction, a command that sends
//! a message, and a tool with partial updates.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::extensions::{self as ext_support, example, load, next_action, options};
use pi::ai::message::{AssistantMessage, UserContent, UserMessage};
use pi::compaction::{CompactionPreparation, CompactionSettings, FileOps, MessageRef};
use pi::extensions::{
    ActionKind, CompactDecision, DeliverAs, EventName, ToolCallDecision, UiMethod, UiResponse,
};
use pi::messages::AgentMessage;
use pi::session::entry::EntryId;
use pi::tools::{Tool, ToolCallArgs, ToolOutput};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn examples_register_their_commands_tools_and_events() {
    require!("python3");
    require!("node");
    let dir = tempfile::tempdir().unwrap();
    let paths = [
        "permission-gate",
        "custom-compaction",
        "greet",
        "word-count",
    ]
    .map(example);
    let (host, _channels) = load(&paths, options(dir.path())).await;
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());

    let mut summary = String::new();
    for ext in host.extensions() {
        let events: Vec<&str> = ext.events.iter().map(|e| e.as_str()).collect();
        summary.push_str(&format!("{} [{}]\n", ext.name, events.join(", ")));
    }
    for c in host.commands() {
        summary.push_str(&format!(
            "/{} - {}\n",
            c.invocation_name,
            c.description.unwrap_or_default()
        ));
    }
    for t in host.tools() {
        summary.push_str(&format!(
            "tool {} ({}): {} | {}\n",
            t.name(),
            t.label(),
            t.prompt_snippet().unwrap_or(""),
            t.parameters()
        ));
    }
    insta::assert_snapshot!(summary, @r#"
    permission-gate [tool_call]
    custom-compaction [session_before_compact]
    greet []
    word-count []
    /greet - Add a greeting to the session
    tool word_count (Word count): Count lines, words and characters of a text or file | {"type":"object","properties":{"text":{"type":"string","description":"The text to count"},"path":{"type":"string","description":"A file to count, relative to the working directory"}}}
    "#);
    host.shutdown(pi::extensions::ShutdownReason::Quit, None)
        .await;
    assert!(host.extensions().iter().all(|e| !e.running));
}

#[tokio::test]
async fn permission_gate_blocks_rm_rf_when_nobody_can_confirm() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = load(&[example("permission-gate")], options(dir.path())).await;
    let decide = |command: &str| {
        let host = host.clone();
        let input = json!({"command": command});
        async move { host.tool_call("call_1", "bash", &input).await }
    };
    assert_eq!(
        decide("cd build && rm -rf .").await,
        ToolCallDecision::Block {
            reason: "Dangerous command blocked (no UI to confirm it)".into()
        }
    );
    assert_eq!(
        decide("rm -r -f /tmp/x").await,
        ToolCallDecision::Block {
            reason: "Dangerous command blocked (no UI to confirm it)".into()
        }
    );
    assert_eq!(
        decide("rm notes.txt").await,
        ToolCallDecision::Allow { input: None }
    );
    assert_eq!(
        decide("ls -la").await,
        ToolCallDecision::Allow { input: None }
    );
    // Other tools are not looked at.
    let read = host
        .tool_call("call_2", "read", &json!({"path": "rm -rf"}))
        .await;
    assert_eq!(read, ToolCallDecision::Allow { input: None });
}

#[tokio::test]
async fn permission_gate_asks_through_the_ui_and_its_timeout_waits_for_the_user() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.has_ui = true;
    // Much shorter than the user takes to answer below: time in a dialog must not count.
    opts.event_timeout = Duration::from_millis(300);
    let (host, mut channels) = load(&[example("permission-gate")], opts).await;

    for (answer, expected) in [
        (
            UiResponse::Value("Block".into()),
            ToolCallDecision::Block {
                reason: "Blocked by the user".into(),
            },
        ),
        (
            UiResponse::Value("Allow".into()),
            ToolCallDecision::Allow { input: None },
        ),
        (
            UiResponse::Cancelled,
            ToolCallDecision::Block {
                reason: "Blocked by the user".into(),
            },
        ),
    ] {
        let decision = {
            let host = host.clone();
            tokio::spawn(async move {
                host.tool_call("c", "bash", &json!({"command": "sudo rm -rf /"}))
                    .await
            })
        };
        let request = tokio::time::timeout(Duration::from_secs(5), channels.ui.recv())
            .await
            .unwrap()
            .unwrap();
        let UiMethod::Select { title, options, .. } = &request.method else {
            panic!("expected a select dialog, got {:?}", request.method);
        };
        assert_eq!(title, "Dangerous command:\n\n  sudo rm -rf /\n\nRun it?");
        assert_eq!(options, &["Block", "Allow"]);
        assert_eq!(request.to_rpc_json()["method"], "select");
        tokio::time::sleep(Duration::from_millis(600)).await;
        request.reply.unwrap().send(answer);
        assert_eq!(decision.await.unwrap(), expected);
    }
    assert!(ext_support::drain(&mut channels).is_empty());
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text, 1))
}

fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![pi::ai::message::AssistantBlock::Text(
            pi::ai::message::TextContent::new(text),
        )],
        ..AssistantMessage::default()
    })
}

#[tokio::test]
async fn custom_compaction_supplies_the_summary_and_keeps_the_cut() {
    require!("python3");
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.has_ui = true;
    let (host, mut channels) = load(&[example("custom-compaction")], opts).await;
    let history = [
        user("Add a --verbose flag to the CLI\nIt should print timings."),
        assistant("Done."),
        user("Now write tests for it"),
        assistant("Added tests."),
    ];
    let preparation = CompactionPreparation {
        first_kept_entry_id: EntryId("e5".into()),
        messages_to_summarize: history.iter().map(MessageRef::Borrowed).collect(),
        turn_prefix_messages: Vec::new(),
        is_split_turn: false,
        tokens_before: 51234,
        previous_summary: Some("We set up the project.".into()),
        file_ops: FileOps {
            read: HashSet::from(["src/cli.rs".to_string()]),
            written: HashSet::from(["tests/cli.rs".to_string()]),
            edited: HashSet::from(["src/cli.rs".to_string()]),
        },
        settings: CompactionSettings::default(),
    };
    let decision = host
        .session_before_compact(&preparation, &[], None, &CancellationToken::new())
        .await;
    let CompactDecision::Custom(compaction) = decision else {
        panic!("expected a custom compaction, got {decision:?}");
    };
    assert_eq!(compaction.first_kept_entry_id, EntryId("e5".into()));
    assert_eq!(compaction.tokens_before, 51234);
    assert_eq!(
        compaction.details,
        Some(json!({"writtenBy": "custom-compaction example", "requests": 2}))
    );
    insta::assert_snapshot!(compaction.summary, @r"
    ## Summary of the earlier conversation

    Earlier summary:

    We set up the project.

    The user asked (2 requests):
    - Add a --verbose flag to the CLI
    - Now write tests for it

    Files read: src/cli.rs
    Files changed: src/cli.rs, tests/cli.rs
    ");
    let notice = tokio::time::timeout(Duration::from_secs(5), channels.ui.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(notice.reply.is_none());
    assert!(
        matches!(notice.method, UiMethod::Notify { ref message, .. } if message == "Compacted without a model call")
    );
}

#[tokio::test]
async fn greet_command_sends_a_custom_message() {
    let dir = tempfile::tempdir().unwrap();
    let (host, mut channels) = load(&[example("greet")], options(dir.path())).await;
    assert!(host.has_command("greet"));
    host.run_command("greet", "Ada \"the\" Countess")
        .await
        .unwrap();
    let action = next_action(&mut channels).await;
    assert_eq!(action.extension_path, example("greet").join("extension.sh"));
    let ActionKind::SendMessage {
        message,
        trigger_turn,
        deliver_as,
    } = action.kind
    else {
        panic!("expected send_message, got {:?}", action.kind);
    };
    assert_eq!(
        (
            message.custom_type.as_str(),
            &message.content,
            message.display
        ),
        (
            "greet",
            &UserContent::Text("Hello, Ada \"the\" Countess!".into()),
            true
        )
    );
    assert_eq!(
        message.details,
        Some(json!({"greeted": "Ada \"the\" Countess"}))
    );
    assert!(!trigger_turn);
    assert_eq!(deliver_as, DeliverAs::Steer);
    assert_eq!(
        host.run_command("nope", "").await.unwrap_err().to_string(),
        "Unknown command: /nope"
    );
}

#[tokio::test]
async fn word_count_tool_streams_progress_and_returns_details() {
    require!("node");
    let dir = tempfile::tempdir().unwrap();
    let (host, _channels) = load(&[example("word-count")], options(dir.path())).await;
    let tool = host.agent_tools().pop().unwrap();
    let updates: Arc<Mutex<Vec<ToolOutput>>> = Arc::default();
    let sink_updates = updates.clone();
    let text = (1..=2500)
        .map(|i| format!("line {i} has five words"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut call = ToolCallArgs::new("call_7", json!({"text": text}));
    call.on_update = Some(Arc::new(move |o| sink_updates.lock().unwrap().push(o)));
    let output = tool.execute(call).await.unwrap();
    assert_eq!(
        output,
        ToolOutput::text("2500 lines, 12500 words, 61392 characters")
            .with_details(json!({"lines": 2500, "words": 12500, "characters": 61392}))
    );
    let progress: Vec<String> = updates
        .lock()
        .unwrap()
        .iter()
        .map(|u| pi::ai::message::join_text_blocks(&u.content))
        .collect();
    assert_eq!(
        progress,
        [
            "Counted 1000 of 2500 lines...",
            "Counted 2000 of 2500 lines...",
            "Counted 2500 of 2500 lines..."
        ]
    );

    std::fs::write(dir.path().join("notes.txt"), "one two\nthree").unwrap();
    let from_file = tool
        .execute(ToolCallArgs::new("call_8", json!({"path": "notes.txt"})))
        .await
        .unwrap();
    assert_eq!(
        from_file.content,
        ToolOutput::text("2 lines, 3 words, 13 characters").content
    );
    let missing = tool
        .execute(ToolCallArgs::new("call_9", json!({})))
        .await
        .unwrap_err();
    assert_eq!(missing.message, "Give either \"text\" or \"path\".");
    assert!(!host.has_subscribers(EventName::ToolCall));
}
