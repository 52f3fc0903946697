//! Misbehaving extensions must not take the session down: a crash mid-event, a hang, bad
//! output, a missing registration and a process that ignores shutdown all end with the
//! host still working, the failure reported once, and the process gone.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use std::time::{Duration, Instant};

use crate::support::extensions::{drain, errors, load, options, script};
use pi::extensions::{ShutdownReason, ToolCallDecision};
use pi::messages::AgentMessage;
use pi::tools::ToolCallArgs;
use serde_json::json;

/// Answers every event with an id with an empty result (a well-behaved neighbour).
const POLITE: &str = r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","name":"polite","events":["context","tool_call"],"commands":[{"name":"ping"}]}'
while IFS= read -r line; do
    case "$line" in
    '{"type":"event","id":'*|'{"type":"command","id":'*)
        id=${line#*\"id\":}; id=${id%%,*}
        echo "{\"type\":\"response\",\"id\":$id}" ;;
    esac
done
"#;

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(pi::ai::message::UserMessage::text(text, 1))
}

#[tokio::test]
async fn crash_mid_event_blocks_that_call_is_reported_once_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let crasher = script(
        dir.path(),
        "crasher",
        r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","events":["tool_call","context"]}'
IFS= read -r event
exit 3
"#,
    );
    let polite = script(dir.path(), "polite", POLITE);
    let (host, mut channels) = load(&[crasher.clone(), polite], options(dir.path())).await;

    let decision = host
        .tool_call("c1", "bash", &json!({"command": "ls"}))
        .await;
    assert_eq!(
        decision,
        ToolCallDecision::Block {
            reason: format!(
                "Extension {} failed, blocking execution: the extension exited (exit code 3)",
                crasher.display()
            )
        }
    );
    // The crashed extension gets no more events; the others still answer.
    assert_eq!(
        host.tool_call("c2", "bash", &json!({"command": "ls"}))
            .await,
        ToolCallDecision::Allow { input: None }
    );
    let messages = vec![user("hi")];
    assert_eq!(host.context(messages.clone()).await, messages);
    host.run_command("ping", "").await.unwrap();
    assert!(!host.is_running(&crasher));

    let actions = drain(&mut channels);
    assert_eq!(
        errors(&actions),
        ["tool_call: the extension exited (exit code 3)"]
    );
    assert_eq!(actions[0].extension_path, crasher);
}

#[tokio::test]
async fn a_hanging_extension_times_out_as_no_change_and_is_killed_at_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let hanger = script(
        dir.path(),
        "hanger",
        r#"#!/bin/sh
trap '' TERM
IFS= read -r hello
echo '{"type":"register","events":["context","session_shutdown"],"timeoutMs":250}'
# Never answers, and does not stop when stdin closes.
while :; do sleep 1; done
"#,
    );
    let polite = script(dir.path(), "polite", POLITE);
    let (host, mut channels) = load(&[hanger.clone(), polite], options(dir.path())).await;

    for _ in 0..2 {
        let started = Instant::now();
        let messages = vec![user("hello")];
        assert_eq!(host.context(messages.clone()).await, messages);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
    }
    host.run_command("ping", "").await.unwrap();
    assert!(host.is_running(&hanger));
    assert_eq!(
        errors(&drain(&mut channels)),
        [
            "context: no answer within 250 ms; treated as no change",
            "context: no answer within 250 ms; treated as no change"
        ]
    );

    let started = Instant::now();
    host.shutdown(ShutdownReason::Quit, None).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(!host.is_running(&hanger));
    // The shutdown event timed out too; that is reported like any other timeout.
    assert_eq!(
        errors(&drain(&mut channels)),
        ["session_shutdown: no answer within 250 ms; treated as no change"]
    );
    let log = std::fs::read_to_string(dir.path().join("agent/extensions.log")).unwrap();
    assert!(
        log.contains("[hanger] did not exit in time; killed"),
        "{log}"
    );
}

#[tokio::test]
async fn malformed_output_disables_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let noisy = script(
        dir.path(),
        "noisy",
        r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","events":["context"]}'
IFS= read -r event
echo 'Thinking about it...'
sleep 5
"#,
    );
    let (host, mut channels) = load(std::slice::from_ref(&noisy), options(dir.path())).await;
    let messages = vec![user("x")];
    let started = Instant::now();
    assert_eq!(host.context(messages.clone()).await, messages);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!host.is_running(&noisy));
    let errs = errors(&drain(&mut channels));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].starts_with("context: protocol violation: malformed JSON on stdout"),
        "{errs:?}"
    );
    assert!(errs[0].ends_with(": Thinking about it..."), "{errs:?}");
}

#[tokio::test]
async fn unknown_message_types_and_a_second_register_are_violations() {
    let dir = tempfile::tempdir().unwrap();
    let odd = script(
        dir.path(),
        "odd",
        r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","events":["context"]}'
IFS= read -r event
echo '{"type":"teleport","where":"mars"}'
sleep 5
"#,
    );
    let twice = script(
        dir.path(),
        "twice",
        r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","events":["context"]}'
IFS= read -r event
echo '{"type":"register","events":["context"]}'
sleep 5
"#,
    );
    let (host, mut channels) = load(&[odd, twice], options(dir.path())).await;
    host.context(vec![user("x")]).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(host.extensions().iter().all(|e| !e.running));
    let mut errs = errors(&drain(&mut channels));
    errs.sort();
    assert_eq!(
        errs,
        [
            "context: protocol violation: \"register\" was sent twice",
            "context: protocol violation: invalid \"teleport\" message: unknown variant `teleport`, expected one of `register`, `response`, `tool_update`, `ui`, `exec`, `send_message`, `send_user_message`, `append_entry`, `set_label`, `set_session_name`, `set_thinking_level`, `set_model`, `shutdown`, `abort`, `compact`, `run_tool`, `call`, `register_tool`, `register_message_renderer`, `emit`, `stream_event`, `cancel_call`"
        ]
    );
}

#[tokio::test]
async fn extensions_that_never_register_are_load_errors_not_failures() {
    let dir = tempfile::tempdir().unwrap();
    let silent = script(dir.path(), "silent", "#!/bin/sh\nsleep 5\n");
    let chatty = script(
        dir.path(),
        "chatty",
        "#!/bin/sh\necho '{\"type\":\"set_session_name\",\"name\":\"x\"}'\nsleep 5\n",
    );
    let quitter = script(dir.path(), "quitter", "#!/bin/sh\nexit 7\n");
    let future = script(
        dir.path(),
        "future",
        "#!/bin/sh\necho '{\"type\":\"register\",\"protocolVersion\":9}'\nsleep 5\n",
    );
    let polite = script(dir.path(), "polite", POLITE);
    let mut opts = options(dir.path());
    opts.handshake_timeout = Duration::from_millis(400);
    let started = Instant::now();
    let (host, mut channels) = load(&[silent, chatty, quitter, future, polite.clone()], opts).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    let load_errors: Vec<String> = host
        .load_errors()
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e.path.file_name().unwrap().to_string_lossy(),
                e.error
            )
        })
        .collect();
    insta::assert_snapshot!(load_errors.join("\n"), @r#"
    silent: Failed to load extension: no "register" message within 400 ms
    chatty: Failed to load extension: protocol violation: the first message must be "register", got "set_session_name"
    quitter: Failed to load extension: the extension exited (exit code 7)
    future: Failed to load extension: the extension needs protocol version 9; this pi-rs speaks version 1
    "#);
    assert_eq!(host.extensions().len(), 1);
    assert_eq!(host.extensions()[0].path, polite);
    assert!(drain(&mut channels).is_empty());
}

#[tokio::test]
async fn a_tool_whose_extension_dies_fails_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let dying = script(
        dir.path(),
        "dying",
        r#"#!/bin/sh
IFS= read -r hello
echo '{"type":"register","tools":[{"name":"fragile","description":"Dies"}]}'
IFS= read -r call
echo 'goodbye' >&2
kill -9 $$
"#,
    );
    let (host, mut channels) = load(&[dying], options(dir.path())).await;
    let tool = host.agent_tools().pop().unwrap();
    let err = tool
        .execute(ToolCallArgs::new("c", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "The extension providing fragile stopped: the extension was killed by signal 9"
    );
    let again = tool
        .execute(ToolCallArgs::new("c2", json!({})))
        .await
        .unwrap_err();
    assert!(
        again
            .message
            .starts_with("The extension providing fragile is not running")
    );
    assert_eq!(
        errors(&drain(&mut channels)),
        ["fragile: the extension was killed by signal 9"]
    );
    host.shutdown(ShutdownReason::Quit, None).await;
    let log = std::fs::read_to_string(dir.path().join("agent/extensions.log")).unwrap();
    assert!(log.contains("[dying] goodbye"), "{log}");
}
