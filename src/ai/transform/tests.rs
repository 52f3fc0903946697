use super::*;
use crate::ai::message::{ImageContent, StopReason, ThinkingContent, ToolCall, UserMessage};
use crate::ai::model::{Api, InputKind};
use serde_json::json;

fn model(provider: &str, api: Api, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api,
        provider: provider.into(),
        base_url: String::new(),
        reasoning: true,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: Default::default(),
        context_window: 1000,
        max_tokens: 100,
        headers: Default::default(),
        compat: None,
        extras: Default::default(),
    }
}

fn assistant(from: &Model, blocks: Vec<AssistantBlock>, stop: StopReason) -> Message {
    Message::Assistant(AssistantMessage {
        content: blocks,
        api: from.api.to_string(),
        provider: from.provider.clone(),
        model: from.id.clone(),
        stop_reason: stop,
        ..AssistantMessage::default()
    })
}

fn call(id: &str) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
        thought_signature: Some("sig".into()),
        ..ToolCall::default()
    })
}

fn result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserBlock::text(text)],
        ..ToolResultMessage::default()
    })
}

fn user(text: &str) -> Message {
    Message::User(UserMessage::text(text, 0))
}

/// One line per message, readable in a snapshot.
fn render(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            Message::User(u) => {
                out.push_str(&format!("user: {}\n", u.content.text()));
            }
            Message::ToolResult(r) => out.push_str(&format!(
                "result {} error={}: {}\n",
                r.tool_call_id,
                r.is_error,
                r.text()
            )),
            Message::Assistant(a) => {
                let parts: Vec<String> = a
                    .content
                    .iter()
                    .map(|b| match b {
                        AssistantBlock::Text(t) => format!("text({})", t.text),
                        AssistantBlock::Thinking(t) => format!(
                            "thinking({}, sig={:?}, redacted={:?})",
                            t.thinking, t.thinking_signature, t.redacted
                        ),
                        AssistantBlock::ToolCall(c) => {
                            format!("call({}, sig={:?})", c.id, c.thought_signature)
                        }
                    })
                    .collect();
                out.push_str(&format!("assistant[{}]: {}\n", a.model, parts.join(" ")));
            }
        }
    }
    out
}

fn anthropic_normalizer(id: &str, _: &AssistantMessage) -> String {
    sanitize_tool_call_id(id, 64)
}

#[test]
fn foreign_thinking_and_foreign_signatures_are_dropped() {
    let openai = model("openai", Api::OpenAiResponses, "gpt-5");
    let claude = model("anthropic", Api::AnthropicMessages, "claude");
    let history = vec![
        user("hi"),
        assistant(
            &openai,
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "pondering".into(),
                    thinking_signature: Some("{\"type\":\"reasoning\"}".into()),
                    ..Default::default()
                }),
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: Some("opaque".into()),
                    redacted: Some(true),
                    ..Default::default()
                }),
                AssistantBlock::Text(TextContent {
                    text: "answer".into(),
                    text_signature: Some("msg_1".into()),
                    ..Default::default()
                }),
                call("call_1|fc_+/=abc"),
            ],
            StopReason::ToolUse,
        ),
        result("call_1|fc_+/=abc", "file"),
    ];
    let out = transform_messages(&history, &claude, &anthropic_normalizer);
    assert_eq!(
        render(&out),
        "user: hi\n\
         assistant[gpt-5]: text(answer) call(call_1_fc____abc, sig=None)\n\
         result call_1_fc____abc error=false: file\n"
    );
    let Message::Assistant(a) = &out[1] else {
        panic!("expected assistant")
    };
    assert_eq!(
        a.content[0],
        AssistantBlock::Text(TextContent::new("answer"))
    );
}

#[test]
fn same_model_keeps_thinking_signatures_and_redacted_blocks() {
    let claude = model("anthropic", Api::AnthropicMessages, "claude");
    let history = vec![
        user("hi"),
        assistant(
            &claude,
            vec![
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: String::new(),
                    thinking_signature: Some("sig".into()),
                    ..Default::default()
                }),
                AssistantBlock::Thinking(ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: Some("opaque".into()),
                    redacted: Some(true),
                    ..Default::default()
                }),
                AssistantBlock::Thinking(ThinkingContent::default()),
                call("toolu_1"),
            ],
            StopReason::ToolUse,
        ),
        result("toolu_1", "ok"),
    ];
    let out = transform_messages(&history, &claude, &anthropic_normalizer);
    assert_eq!(
        render(&out),
        "user: hi\n\
         assistant[claude]: thinking(, sig=Some(\"sig\"), redacted=None) thinking([Reasoning redacted], sig=Some(\"opaque\"), redacted=Some(true)) call(toolu_1, sig=Some(\"sig\"))\n\
         result toolu_1 error=false: ok\n"
    );
}

#[test]
fn failed_turns_are_skipped_orphan_calls_get_results_and_orphan_results_are_dropped() {
    let m = model("mock", Api::OpenAiCompletions, "m");
    let history = vec![
        user("one"),
        assistant(&m, vec![call("a"), call("b")], StopReason::ToolUse),
        result("a", "done a"),
        user("interrupt"),
        assistant(&m, vec![call("c")], StopReason::Error),
        result("c", "from failed turn"),
        assistant(
            &m,
            vec![AssistantBlock::Text(TextContent::new("x"))],
            StopReason::Aborted,
        ),
        user("two"),
        assistant(&m, vec![call("d")], StopReason::ToolUse),
    ];
    let out = transform_messages(&history, &m, &|id, _| id.to_string());
    assert_eq!(
        render(&out),
        "user: one\n\
         assistant[m]: call(a, sig=Some(\"sig\")) call(b, sig=Some(\"sig\"))\n\
         result a error=false: done a\n\
         result b error=true: No result provided\n\
         user: interrupt\n\
         user: two\n\
         assistant[m]: call(d, sig=Some(\"sig\"))\n\
         result d error=true: No result provided\n"
    );
}

#[test]
fn images_become_one_placeholder_per_run_for_text_only_models() {
    let m = model("mock", Api::OpenAiCompletions, "m");
    let img = UserBlock::Image(ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
        ..Default::default()
    });
    let history = vec![Message::User(UserMessage {
        content: UserContent::Blocks(vec![img.clone(), img, UserBlock::text("look")]),
        ..UserMessage::default()
    })];
    let out = transform_messages(&history, &m, &|id, _| id.to_string());
    assert_eq!(
        render(&out),
        format!("user: {USER_IMAGE_PLACEHOLDER}\nlook\n")
    );
}

#[test]
fn short_hash_matches_pi() {
    // Values computed with pi-ai's shortHash in node.
    assert_eq!(short_hash("fc_abc"), "1qaoofs1vxahbg");
    assert_eq!(short_hash(""), "k4n83c7h0j2b");
}
