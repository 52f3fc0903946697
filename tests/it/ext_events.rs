//! The extension events around provider requests, resources and the user's `!` commands
//! (`before_provider_request`, `after_provider_response`, `resources_discover`,
//! `user_bash`), with pi's examples from the reference install and small TypeScript
//! extensions, through the binary against the loopback model server (which logs every
//! request body, so a replaced payload is visible) and through the session factory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // Tests: a panic is a failure.

use std::sync::Arc;

use crate::support::pi_project::{Project, conversation, system_prompt};
use crate::ts_extensions::examples_dir;
use pi::core::factory::{ExtensionHosting, SessionConfig, SessionFactory, SessionSource};
use pi::core::paths::AgentPaths;
use pi::extensions::HostMode;
use pi::messages::AgentMessage;
use serde_json::json;

/// The path of one of pi's examples; skips the test (saying why) when they are not
/// installed and cannot be (no node/npm).
macro_rules! pi_example {
    ($name:expr) => {
        match examples_dir() {
            Ok(dir) => dir.join($name),
            Err(why) => {
                eprintln!("skipped: pi's example extensions are not available: {why}");
                return;
            }
        }
    };
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn provider_payload_logs_each_request_and_response_and_handlers_chain_replacements() {
    let logger = pi_example!("provider-payload.ts");
    let p = Project::new(json!({"sequence": [{"text": "Logged."}]}));
    // Loaded in name order: the first replaces the payload, the second sees the
    // replacement and changes it in place (pi hands handlers the payload object itself).
    p.write(
        ".pi/extensions/a-temperature.ts",
        r#"export default function (pi: any) {
    pi.on("before_provider_request", (event: any) => ({ ...event.payload, temperature: 0.25 }));
}
"#,
    );
    p.write(
        ".pi/extensions/b-mark.ts",
        r#"export default function (pi: any) {
    pi.on("before_provider_request", (event: any) => {
        event.payload.metadata = { seen_temperature: String(event.payload.temperature) };
    });
    pi.on("before_provider_request", () => undefined);
}
"#,
    );
    let out = p
        .pi()
        .arg("-e")
        .arg(&logger)
        .args(["-p", "log this payload"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("unknown event"), "{}", stderr(&out));

    let requests = p.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0];
    assert_eq!(body["temperature"], 0.25, "{body}");
    assert_eq!(body["metadata"]["seen_temperature"], "0.25", "{body}");
    assert!(conversation(body).contains("log this payload"));

    let log = std::fs::read_to_string(p.cwd().join(".pi/provider-payload.log")).unwrap();
    assert!(log.contains("\"log this payload\""), "{log}");
    assert!(log.contains("[200] {"), "{log}");
    assert!(log.contains("content-type"), "{log}");
}

#[test]
fn a_failing_payload_handler_keeps_the_payload_and_the_request_goes_out() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"sequence": [{"text": "Still answered."}]}));
    p.write(
        ".pi/extensions/broken.ts",
        r#"export default function (pi: any) {
    pi.on("before_provider_request", () => { throw new Error("payload hook broke"); });
}
"#,
    );
    let out = p.pi().args(["-p", "go on"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Still answered."),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let requests = p.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].get("temperature").is_none(), "{}", requests[0]);
    assert!(
        stderr(&out).contains("payload hook broke"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dynamic_resources_adds_its_skill_and_prompt_template() {
    let dynamic = pi_example!("dynamic-resources/index.ts");
    let p = Project::new(json!({"sequence": [{"text": "Summarized."}, {"text": "Again."}]}));
    let out = p
        .pi()
        .arg("-e")
        .arg(&dynamic)
        .args(["-p", "/dynamic"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("unknown event"), "{}", stderr(&out));
    let requests = p.requests();
    let seen = conversation(&requests[0]);
    assert!(
        seen.contains("Summarize the current repository structure"),
        "the template was not expanded: {seen}"
    );
    let prompt = system_prompt(&requests[0]);
    assert!(
        prompt.contains("<name>dynamic-resources</name>"),
        "{prompt}"
    );
    assert!(
        prompt.contains("Example skill loaded from resources_discover"),
        "{prompt}"
    );

    // Without the extension neither exists.
    let out = p.pi().args(["-p", "/dynamic"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = p.requests();
    assert!(conversation(&requests[1]).contains("/dynamic"));
    assert!(!system_prompt(&requests[1]).contains("dynamic-resources"));
}

/// A session of the project built by the factory the interactive UI uses.
async fn interactive_session(p: &Project) -> pi::core::agent_session::AgentSession {
    let config = SessionConfig {
        provider: Some("mock".into()),
        model: Some("mock-model".into()),
        ..SessionConfig::default()
    };
    let hosting = ExtensionHosting {
        mode: HostMode::Interactive,
        has_ui: true,
    };
    let factory = Arc::new(SessionFactory::new(
        config,
        p.cwd(),
        AgentPaths::new(p.agent_dir()),
        hosting,
    ));
    factory.load(SessionSource::Create).await.unwrap().session
}

/// The `bashExecution` messages of a session, as (command, output, exit code).
fn bash_records(
    session: &pi::core::agent_session::AgentSession,
) -> Vec<(String, String, Option<i32>)> {
    session
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::BashExecution(b) => Some((
                b.command.clone(),
                b.output.trim_end().to_string(),
                b.exit_code,
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_bash_results_and_operations_replace_running_the_command() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    // The first extension answers `remote …` itself and lets everything else through;
    // the second runs `ops …` with its own BashOperations. (JavaScript: in-process, the
    // TypeScript compiler would be the test binary.)
    p.write(
        ".pi/extensions/a-remote.js",
        r#"export default function (pi) {
    pi.on("user_bash", (event) => {
        if (!event.command.startsWith("remote ")) return;
        return { result: { output: `ran ${event.command} in ${event.cwd === process.cwd()}`, exitCode: 7, cancelled: false, truncated: false } };
    });
}
"#,
    );
    p.write(
        ".pi/extensions/b-ops.js",
        r#"export default function (pi) {
    pi.on("user_bash", (event) => {
        if (!event.command.startsWith("ops ") && !event.command.startsWith("remote ")) return;
        return { operations: { exec: async (command, _cwd, options) => {
            options.onData(Buffer.from(`ops saw: ${command}\n`));
            return { exitCode: 3 };
        } } };
    });
}
"#,
    );
    let session = interactive_session(&p).await;
    let remote = session.user_bash("remote ls", false, |_| {}).await.unwrap();
    assert_eq!(remote.output, "ran remote ls in true");
    assert_eq!(remote.exit_code, Some(7));
    let ops = session.user_bash("ops uname", true, |_| {}).await.unwrap();
    assert_eq!(ops.output, "ops saw: ops uname\n");
    assert_eq!(ops.exit_code, Some(3));
    let local = session
        .user_bash("echo local", false, |_| {})
        .await
        .unwrap();
    assert_eq!(local.output.trim(), "local");
    assert_eq!(local.exit_code, Some(0));
    // RPC's `bash` (execute_bash) is not offered to extensions, as in pi.
    let direct = session
        .execute_bash("echo remote", false, |_| {})
        .await
        .unwrap();
    assert_eq!(direct.output.trim(), "remote");

    assert_eq!(
        bash_records(&session),
        [
            ("remote ls".into(), "ran remote ls in true".into(), Some(7)),
            ("ops uname".into(), "ops saw: ops uname".into(), Some(3)),
            ("echo local".into(), "local".into(), Some(0)),
            ("echo remote".into(), "remote".into(), Some(0)),
        ]
    );
    let excluded: Vec<bool> = session
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::BashExecution(b) => Some(b.exclude_from_context == Some(true)),
            _ => None,
        })
        .collect();
    assert_eq!(excluded, [false, true, false, false]);
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_in_the_tui_goes_through_user_bash() {
    if !crate::support::extensions::have("node") {
        eprintln!("skipped: node is not installed");
        return;
    }
    let p = Project::new(json!({"sequence": []}));
    p.write(
        ".pi/extensions/remote.js",
        r#"export default function (pi) {
    pi.on("user_bash", (event) => ({
        result: { output: `intercepted: ${event.command} excluded=${event.excludeFromContext}`, exitCode: 0, cancelled: false, truncated: false },
    }));
}
"#,
    );
    let session = interactive_session(&p).await;
    let mut ui = pi::modes::interactive::app::Headless::new(session, 100, 30);
    ui.type_text("!!touch should-not-exist");
    ui.keys(&["Enter"]);
    let screen = ui
        .wait_for(
            "intercepted: touch should-not-exist excluded=true",
            std::time::Duration::from_secs(15),
        )
        .await;
    assert!(!p.cwd().join("should-not-exist").exists(), "{screen}");
    ui.app.session.shutdown().await;
}
