//! The `render` request to pi's TypeScript extensions (node host): message renderers and
//! tool `renderCall` / `renderResult` answer with their components' lines, keep pi's
//! per-call state, and fail (error or timeout) without hanging the caller.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::extensions::{have, load, options};

const RENDERERS: &str = r#"
import { Text } from "@mariozechner/pi-tui";

export default function (pi) {
  pi.registerMessageRenderer("note", (message, { expanded }, theme) =>
    new Text(`note: ${message.content}${expanded ? " (expanded)" : ""} role=${message.role} level=${message.details?.level}`, 0, 0));
  pi.registerMessageRenderer("nothing", () => undefined);
  pi.registerMessageRenderer("broken", () => { throw new Error("renderer exploded"); });
  pi.registerMessageRenderer("slow", () => {
    const end = Date.now() + 2500;
    while (Date.now() < end) {}
    return undefined;
  });
  pi.registerTool({
    name: "shout",
    label: "Shout",
    description: "Shouts a word",
    parameters: { type: "object", properties: { word: { type: "string" } } },
    async execute(_id, params) {
      return { content: [{ type: "text", text: params.word.toUpperCase() }], details: { n: 1 } };
    },
    renderCall(args, _theme, context) {
      return new Text(`shout ${args.word} started=${context.executionStarted} complete=${context.argsComplete}`, 0, 0);
    },
    renderResult(result, { expanded, isPartial }, _theme, context) {
      context.state.renders = (context.state.renders ?? 0) + 1;
      return new Text(`${result.content[0].text} partial=${isPartial} expanded=${expanded} renders=${context.state.renders} error=${context.isError} last=${context.lastComponent !== undefined}`, 0, 0);
    },
  });
  pi.registerTool({
    name: "selfish",
    label: "Selfish",
    description: "Draws itself",
    parameters: { type: "object", properties: {} },
    renderShell: "self",
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
    renderCall() { throw new Error("call renderer broke"); },
  });
  pi.registerTool({
    name: "plain",
    label: "Plain",
    description: "No renderers",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}
"#;

fn trimmed(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not lines: {value}"))
        .iter()
        .map(|l| l.as_str().unwrap().trim_end().to_string())
        .collect()
}

#[tokio::test]
async fn renderers_answer_render_requests_with_their_lines() {
    if !have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // JavaScript: the test binary cannot transpile TypeScript for the host (pi-rs does).
    let file = dir.path().join("renderers.js");
    std::fs::write(&file, RENDERERS).unwrap();
    let (host, _channels) = load(&[file], options(dir.path())).await;
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    let timeout = Duration::from_secs(5);

    // Message renderers: the registered types only, pi's message object, `expanded`.
    assert!(host.message_renderer("other").is_none());
    let note = host.message_renderer("note").expect("note renderer");
    let message = json!({"role": "custom", "customType": "note", "content": "hi", "display": true, "details": {"level": "warn"}, "timestamp": 1});
    let answer = note
        .render(
            &json!({"kind": "message", "width": 60, "expanded": true, "message": message}),
            timeout,
        )
        .await
        .unwrap();
    assert_eq!(
        trimmed(&answer["lines"]),
        ["note: hi (expanded) role=custom level=warn"]
    );
    // Rendered at the width asked for (pi's Text fills its lines to the width).
    assert_eq!(answer["lines"][0].as_str().unwrap().chars().count(), 60);
    // A renderer that returns nothing: no lines (pi's default rendering).
    let nothing = host.message_renderer("nothing").unwrap();
    let mut message_nothing = message.clone();
    message_nothing["customType"] = json!("nothing");
    let answer = nothing
        .render(
            &json!({"kind": "message", "width": 60, "message": message_nothing}),
            timeout,
        )
        .await
        .unwrap();
    assert_eq!(answer["lines"], Value::Null);
    // A renderer that throws: an error answer.
    let broken = host.message_renderer("broken").unwrap();
    let mut message_broken = message.clone();
    message_broken["customType"] = json!("broken");
    let error = broken
        .render(
            &json!({"kind": "message", "width": 60, "message": message_broken}),
            timeout,
        )
        .await
        .unwrap_err();
    assert!(error.contains("renderer exploded"), "{error}");

    // Tools: which parts the extension draws.
    assert!(host.tool_renderer("plain").is_none());
    let shout = host.tool_renderer("shout").expect("shout renderer");
    assert!(shout.tool.call && shout.tool.result && !shout.tool.self_shell);
    let call = |result: Option<Value>, partial: bool| {
        let mut fields = json!({
            "kind": "tool", "width": 80, "expanded": false, "toolName": "shout",
            "toolCallId": "c1", "args": {"word": "hey"}, "argsComplete": true,
            "executionStarted": result.is_some(), "isPartial": partial, "isError": false,
        });
        if let Some(result) = result {
            fields["result"] = result;
        }
        fields
    };
    let answer = shout.render(&call(None, true), timeout).await.unwrap();
    assert_eq!(answer["shell"], "default");
    assert_eq!(
        trimmed(&answer["call"]),
        ["shout hey started=false complete=true"]
    );
    // Inside pi's box: two columns less.
    assert_eq!(answer["call"][0].as_str().unwrap().chars().count(), 78);
    assert_eq!(answer["result"], Value::Null);
    let result = json!({"content": [{"type": "text", "text": "HEY"}], "details": {"n": 1}});
    let answer = shout
        .render(&call(Some(result.clone()), true), timeout)
        .await
        .unwrap();
    assert_eq!(
        trimmed(&answer["result"]),
        ["HEY partial=true expanded=false renders=1 error=false last=false"]
    );
    // pi's per-call state and last component carry over to the next render.
    let answer = shout
        .render(&call(Some(result), false), timeout)
        .await
        .unwrap();
    assert_eq!(
        trimmed(&answer["result"]),
        ["HEY partial=false expanded=false renders=2 error=false last=true"]
    );

    // renderShell "self", and a renderCall that throws: the reason, no lines.
    let selfish = host.tool_renderer("selfish").unwrap();
    assert!(selfish.tool.self_shell && selfish.tool.call && !selfish.tool.result);
    let answer = selfish
        .render(
            &json!({"kind": "tool", "width": 50, "toolName": "selfish", "toolCallId": "c2", "args": {}}),
            timeout,
        )
        .await
        .unwrap();
    assert_eq!(answer["shell"], "self");
    assert_eq!(answer["call"], Value::Null);
    assert!(
        answer["callError"]
            .as_str()
            .is_some_and(|e| e.contains("call renderer broke")),
        "{answer}"
    );

    // A renderer that takes too long: the caller stops waiting at the bound.
    let slow = host.message_renderer("slow").unwrap();
    let mut message_slow = message;
    message_slow["customType"] = json!("slow");
    let started = Instant::now();
    let error = slow
        .render(
            &json!({"kind": "message", "width": 60, "message": message_slow}),
            Duration::from_millis(300),
        )
        .await
        .unwrap_err();
    assert!(error.contains("no answer within 300 ms"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // The late answer is dropped; the extension answers the next request.
    let answer = note
        .render(
            &json!({"kind": "message", "width": 20, "message": {"customType": "note", "content": "again"}}),
            timeout,
        )
        .await
        .unwrap();
    assert!(
        trimmed(&answer["lines"])[0].starts_with("note: again"),
        "{answer}"
    );
    host.shutdown(pi::extensions::ShutdownReason::Quit, None)
        .await;
}
