//! The `bash` tool and the user-command executor with real processes: pi's result texts
//! (checked against pi 0.73.1 and the corpus), streaming, timeouts, cancellation that
//! kills the whole process group, huge output saved to a file, binary output.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::tools_common::{Sandbox, text_of};
use pi::tools::bash_exec::{ShellOptions, run_shell_command};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Whether a process is gone (or a zombie waiting to be reaped by init).
fn process_is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_for_file(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn assert_dies(pid: i32) {
    let start = Instant::now();
    while !process_is_dead(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "process {pid} survived"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn corpus_commands_give_pi_texts() {
    let sandbox = Sandbox::new();
    sandbox.write("a.txt", "hello world\nsecond line\n");
    let ok = sandbox
        .run("bash", json!({"command": "cat a.txt && wc -l a.txt"}))
        .await;
    assert_eq!(ok.text(), "hello world\nsecond line\n2 a.txt\n");
    assert_eq!(ok.ok().details, None);

    let failing = sandbox
        .run("bash", json!({"command": "echo failing >&2; exit 3"}))
        .await;
    assert_eq!(failing.error(), "failing\n\n\nCommand exited with code 3");
}

#[tokio::test]
async fn silent_commands_report_no_output() {
    let sandbox = Sandbox::new();
    assert_eq!(
        sandbox.run("bash", json!({"command": "true"})).await.text(),
        "(no output)"
    );
    assert_eq!(
        sandbox
            .run("bash", json!({"command": "exit 1"}))
            .await
            .error(),
        "(no output)\n\nCommand exited with code 1"
    );
    // Killed by a signal: no exit code, so not an error (as in pi).
    assert_eq!(
        sandbox
            .run("bash", json!({"command": "kill -9 $$"}))
            .await
            .text(),
        "(no output)"
    );
}

#[tokio::test]
async fn output_streams_to_the_ui_while_the_command_runs() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .run(
            "bash",
            json!({"command": "echo first; sleep 0.5; echo second"}),
        )
        .await;
    assert_eq!(outcome.text(), "first\nsecond\n");
    let updates: Vec<String> = outcome.updates.iter().map(text_of).collect();
    assert_eq!(updates.first().map(String::as_str), Some(""), "{updates:?}");
    assert!(updates.iter().any(|u| u == "first\n"), "{updates:?}");
    assert_eq!(updates.last().map(String::as_str), Some("first\nsecond\n"));
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_keeps_its_output() {
    let sandbox = Sandbox::new();
    let start = Instant::now();
    let outcome = sandbox
        .run(
            "bash",
            json!({"command": "echo hi; sleep 30", "timeout": 0.5}),
        )
        .await;
    assert_eq!(
        outcome.error(),
        "hi\n\n\nCommand timed out after 0.5 seconds"
    );
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn cancelling_kills_the_whole_process_group() {
    let sandbox = std::sync::Arc::new(Sandbox::new());
    let cancel = CancellationToken::new();
    let command = "sleep 300 & echo $! > child.pid; \
                   bash -c 'sleep 300 & echo $! > grandchild.pid; wait' & \
                   echo started; wait";
    let task = {
        let sandbox = sandbox.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            sandbox
                .run_with("bash", json!({"command": command}), cancel)
                .await
                .error()
        })
    };
    let child: i32 = wait_for_file(&sandbox.path("child.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    let grandchild: i32 = wait_for_file(&sandbox.path("grandchild.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(!process_is_dead(child) && !process_is_dead(grandchild));
    cancel.cancel();
    assert_eq!(task.await.unwrap(), "started\n\n\nCommand aborted");
    assert_dies(child).await;
    assert_dies(grandchild).await;
}

#[tokio::test]
async fn abandoning_a_running_call_also_kills_its_processes() {
    let sandbox = std::sync::Arc::new(Sandbox::new());
    let task = {
        let sandbox = sandbox.clone();
        tokio::spawn(async move {
            sandbox
                .run(
                    "bash",
                    json!({"command": "sleep 300 & echo $! > child.pid; wait"}),
                )
                .await
        })
    };
    let child: i32 = wait_for_file(&sandbox.path("child.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    task.abort();
    assert!(task.await.is_err_and(|e| e.is_cancelled()));
    assert_dies(child).await;
}

#[tokio::test]
async fn huge_output_keeps_the_tail_and_saves_everything_to_a_log_file() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .run("bash", json!({"command": "seq 1 100000"}))
        .await;
    let text = sandbox.scrub(&outcome.text());
    let notice = text.rsplit("\n\n").next().unwrap();
    let notice = regex::Regex::new("pi-bash-[0-9a-f]{16}\\.log")
        .unwrap()
        .replace(notice, "pi-bash-<hex>.log");
    insta::assert_snapshot!(notice, @"[Showing lines 98002-100001 of 100001. Full output: $LOGS/pi-bash-<hex>.log]");
    assert!(text.starts_with("98002\n98003\n"));

    let details = outcome.details();
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 100001);
    let log = details["fullOutputPath"].as_str().unwrap();
    let expected: String = (1..=100000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(log).unwrap(), expected);
}

#[tokio::test]
async fn a_single_huge_line_shows_its_end() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .run(
            "bash",
            json!({"command": "head -c 70000 /dev/zero | tr '\\0' a"}),
        )
        .await;
    let text = sandbox.scrub(&outcome.text());
    let notice = text.rsplit("\n\n").next().unwrap();
    let notice = regex::Regex::new("pi-bash-[0-9a-f]{16}\\.log")
        .unwrap()
        .replace(notice, "pi-bash-<hex>.log");
    insta::assert_snapshot!(notice, @"[Showing last 50.0KB of line 1 (line is 68.4KB). Full output: $LOGS/pi-bash-<hex>.log]");
}

#[tokio::test]
async fn binary_output_is_decoded_lossily_like_pi() {
    let sandbox = Sandbox::new();
    let outcome = sandbox
        .run(
            "bash",
            json!({"command": "printf '\\x00\\x01\\xff\\xfe abc \\x1b[31mred\\x1b[0m\\r\\n'"}),
        )
        .await;
    assert_eq!(
        outcome.text(),
        "\u{0}\u{1}\u{fffd}\u{fffd} abc \u{1b}[31mred\u{1b}[0m\r\n"
    );
}

#[tokio::test]
async fn background_jobs_do_not_hold_the_result() {
    let sandbox = Sandbox::new();
    let start = Instant::now();
    let outcome = sandbox
        .run("bash", json!({"command": "sleep 30 & echo $!"}))
        .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    let pid: i32 = outcome.text().trim().parse().unwrap();
    // pi leaves background jobs running; clean up after ourselves.
    let _ = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status();
}

#[tokio::test]
async fn prefix_shell_and_path_settings_apply() {
    let mut sandbox = Sandbox::new();
    sandbox.config.command_prefix = Some("greet() { echo \"hi $1\"; }".to_string());
    sandbox.config.bin_dir = Some("/opt/pi-test-bin".into());
    let outcome = sandbox
        .run(
            "bash",
            json!({"command": "greet there; echo \"$PATH\" | cut -d: -f1"}),
        )
        .await;
    assert_eq!(outcome.text(), "hi there\n/opt/pi-test-bin\n");

    sandbox.config.shell_path = Some("/nonexistent/shell".into());
    let outcome = sandbox.run("bash", json!({"command": "true"})).await;
    assert_eq!(
        outcome.error(),
        "Custom shell path not found: /nonexistent/shell"
    );
}

#[tokio::test]
async fn a_missing_working_directory_is_reported() {
    let mut sandbox = Sandbox::new();
    sandbox.config.cwd = sandbox.path("gone");
    let outcome = sandbox.run("bash", json!({"command": "ls"})).await;
    assert_eq!(
        sandbox.scrub(&outcome.error()),
        "Working directory does not exist: $CWD/gone\nCannot execute bash commands."
    );
}

#[tokio::test]
async fn user_commands_stream_cleaned_output() {
    let sandbox = Sandbox::new();
    let options = ShellOptions {
        temp_dir: Some(sandbox.logs.path().to_path_buf()),
        ..ShellOptions::default()
    };
    let mut chunks = String::new();
    let run = run_shell_command(
        "printf '\\033[31mred\\033[0m\\r\\nline2\\000\\n'; exit 7",
        sandbox.root(),
        &options,
        &CancellationToken::new(),
        |chunk| chunks.push_str(chunk),
    )
    .await
    .unwrap();
    assert_eq!(run.output, "red\nline2\n");
    assert_eq!(chunks, "red\nline2\n");
    assert_eq!(
        (run.exit_code, run.cancelled, run.truncated),
        (Some(7), false, false)
    );
    assert_eq!(run.full_output_path, None);

    let message = run.to_message("the command", true, 42);
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"command": "the command", "output": "red\nline2\n", "exitCode": 7,
               "cancelled": false, "truncated": false, "timestamp": 42, "excludeFromContext": true})
    );
}

#[tokio::test]
async fn cancelled_user_commands_report_cancelled_without_exit_code() {
    let sandbox = Sandbox::new();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let run = run_shell_command(
        "echo before; sleep 30",
        sandbox.root(),
        &ShellOptions::default(),
        &cancel,
        move |chunk| {
            if chunk.contains("before") {
                trigger.cancel();
            }
        },
    )
    .await
    .unwrap();
    assert_eq!(run.output, "before\n");
    assert_eq!((run.exit_code, run.cancelled), (None, true));
}

#[tokio::test]
async fn long_user_command_output_is_truncated_and_saved() {
    let sandbox = Sandbox::new();
    let options = ShellOptions {
        temp_dir: Some(sandbox.logs.path().to_path_buf()),
        ..ShellOptions::default()
    };
    let run = run_shell_command(
        "seq 1 30000",
        sandbox.root(),
        &options,
        &CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap();
    assert!(run.truncated);
    assert!(run.output.starts_with("28002\n"));
    assert!(run.output.ends_with("30000\n"));
    let saved = std::fs::read_to_string(run.full_output_path.unwrap()).unwrap();
    let expected: String = (1..=30000).map(|i| format!("{i}\n")).collect();
    assert_eq!(saved, expected);
}
